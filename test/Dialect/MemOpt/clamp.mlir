// RUN: memopt-opt %s -split-input-file | FileCheck %s
// RUN: memopt-opt %s -split-input-file --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// memopt.clamp and memopt.clamp_backward: either bound may be left out.

// CHECK-LABEL: func.func @clamp_bounds(
// CHECK-NEXT: %0 = memopt.clamp %arg0 {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : tensor<8x64xf16>{{$}}
// CHECK-NEXT: %1 = memopt.clamp %0 {min = -1.000000e+00 : f64} : tensor<8x64xf16>{{$}}
// CHECK-NEXT: %2 = memopt.clamp %1 {max = 2.500000e-01 : f64} : tensor<8x64xf16>{{$}}
// CHECK-NEXT: %3 = memopt.clamp %2 : tensor<8x64xf16>{{$}}
// CHECK-NEXT: %4 = memopt.clamp_backward %3, %0 {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : (tensor<8x64xf16>, tensor<8x64xf16>) -> tensor<8x64xf16>
// GENERIC: "memopt.clamp"(%{{.*}}) <{max = 6.000000e+00 : f64, min = 0.000000e+00 : f64}> : (tensor<8x64xf16>) -> tensor<8x64xf16>
func.func @clamp_bounds(%x: tensor<8x64xf16>) -> tensor<8x64xf16> {
  %0 = memopt.clamp %x {min = 0.0 : f64, max = 6.0 : f64} : tensor<8x64xf16>
  %1 = memopt.clamp %0 {min = -1.0 : f64} : tensor<8x64xf16>
  %2 = memopt.clamp %1 {max = 0.25 : f64} : tensor<8x64xf16>
  %3 = memopt.clamp %2 : tensor<8x64xf16>
  %4 = memopt.clamp_backward %3, %0 {min = 0.0 : f64, max = 6.0 : f64}
      : (tensor<8x64xf16>, tensor<8x64xf16>) -> tensor<8x64xf16>
  return %4 : tensor<8x64xf16>
}
