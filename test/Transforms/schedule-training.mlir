// RUN: memopt-opt %s --memopt-autodiff --memopt-schedule | FileCheck %s

// Optimizer-in-backward: each update runs as soon as its gradient is final
// and its parameter has no other reader left (the update writes the new
// value in place, memopt.inplace = 0), and the gradient is freed right
// after, instead of all gradients living until the end of the step.
// CHECK-LABEL: func.func @mlp
// CHECK:         %[[DW2:.*]] = memopt.matmul %{{.*}}, %{{.*}} {transpose_a = true} : tensor<4x3xf32>, tensor<4x8xf32>
// CHECK-NEXT:    %[[DX:.*]] = memopt.matmul %{{.*}}, %arg1 : tensor<4x3xf32>, tensor<3x8xf32>
// CHECK-NEXT:    memopt.free
// CHECK-NEXT:    memopt.sgd_update %arg1, %[[DW2]] {lr = 1.000000e-02 : f64, memopt.inplace = 0 : i64}
// CHECK-NEXT:    memopt.free %[[DW2]]
// CHECK:         %[[DW1:.*]] = memopt.matmul %{{.*}}, %arg2 {transpose_a = true} : tensor<4x8xf32>, tensor<4x5xf32>
// CHECK-NEXT:    memopt.free
// CHECK-NEXT:    memopt.sgd_update %arg0, %[[DW1]] {lr = 1.000000e-02 : f64, memopt.inplace = 0 : i64}
// CHECK-NEXT:    memopt.free %[[DW1]]
// CHECK-NEXT:    return
func.func @mlp(%w1: tensor<8x5xf32> {memopt.param}, %w2: tensor<3x8xf32> {memopt.param},
               %x: tensor<4x5xf32>, %y: tensor<4xi64>) -> tensor<f32> {
  %h = memopt.linear %x, %w1 : tensor<4x5xf32>, tensor<8x5xf32>
  %r = memopt.relu %h : tensor<4x8xf32>
  %o = memopt.linear %r, %w2 : tensor<4x8xf32>, tensor<3x8xf32>
  %l = memopt.cross_entropy %o, %y : tensor<4x3xf32>, tensor<4xi64>
  return %l : tensor<f32>
}
