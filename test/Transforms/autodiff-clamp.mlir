// RUN: memopt-opt %s -split-input-file --memopt-autodiff=optimizer=none | FileCheck %s

// clamp's gradient is hardtanh_backward's test. With bounds exact in the
// element type it reads the clamped output (so the input may be freed, as
// relu's); a bound the type rounds keeps the input.

// CHECK-LABEL: func.func @relu6_keeps_output(
// CHECK:         %[[Y:.*]] = memopt.clamp %{{.*}} {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : tensor<4x8xf16>
// CHECK:         memopt.clamp_backward %{{.*}}, %[[Y]] {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64}
func.func @relu6_keeps_output(%x: tensor<4x8xf16> {memopt.param},
                              %t: tensor<4x8xf16>) -> tensor<f16> {
  %y = memopt.clamp %x {min = 0.0 : f64, max = 6.0 : f64} : tensor<4x8xf16>
  %l = memopt.mse_loss %y, %t : tensor<4x8xf16>
  return %l : tensor<f16>
}

// -----

// CHECK-LABEL: func.func @inexact_bound_keeps_input(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x8xf16>
// CHECK:         memopt.clamp_backward %{{.*}}, %[[X]] {max = 1.000000e-01 : f64}
func.func @inexact_bound_keeps_input(%x: tensor<4x8xf16> {memopt.param},
                                     %t: tensor<4x8xf16>) -> tensor<f16> {
  %y = memopt.clamp %x {max = 0.1 : f64} : tensor<4x8xf16>
  %l = memopt.mse_loss %y, %t : tensor<4x8xf16>
  return %l : tensor<f16>
}
