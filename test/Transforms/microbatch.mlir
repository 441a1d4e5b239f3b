// RUN: memopt-opt %s -split-input-file --memopt-microbatch=count=2 | FileCheck %s
// RUN: memopt-opt %s -split-input-file --memopt-microbatch=count=2 --memopt-autodiff | FileCheck %s --check-prefix=GRAD

// Two copies of the forward graph on halves of the batch; the loss is the
// mean of the two; parameters are shared.
// CHECK-LABEL: func.func @mlp
// CHECK-SAME:    (%[[W:.*]]: tensor<3x5xf32> {memopt.param}, %[[X:.*]]: tensor<8x5xf32>, %[[Y:.*]]: tensor<8xi64>)
// CHECK:         %[[X0:.*]] = memopt.slice %[[X]] {offsets = array<i64: 0, 0>, sizes = array<i64: 4, 5>} : tensor<8x5xf32>
// CHECK:         %[[Y0:.*]] = memopt.slice %[[Y]] {offsets = array<i64: 0>, sizes = array<i64: 4>} : tensor<8xi64>
// CHECK:         %[[H0:.*]] = memopt.linear %[[X0]], %[[W]] : tensor<4x5xf32>, tensor<3x5xf32>
// CHECK:         %[[L0:.*]] = memopt.cross_entropy %[[H0]], %[[Y0]] : tensor<4x3xf32>, tensor<4xi64>
// CHECK:         %[[X1:.*]] = memopt.slice %[[X]] {offsets = array<i64: 4, 0>, sizes = array<i64: 4, 5>}
// CHECK:         %[[Y1:.*]] = memopt.slice %[[Y]] {offsets = array<i64: 4>, sizes = array<i64: 4>}
// CHECK:         %[[H1:.*]] = memopt.linear %[[X1]], %[[W]]
// CHECK:         %[[L1:.*]] = memopt.cross_entropy %[[H1]], %[[Y1]]
// CHECK:         %[[S:.*]] = memopt.add %[[L0]], %[[L1]]
// CHECK:         %[[HALF:.*]] = arith.constant dense<5.000000e-01> : tensor<f32>
// CHECK:         %[[LOSS:.*]] = memopt.mul %[[S]], %[[HALF]]
// CHECK:         return %[[LOSS]] : tensor<f32>
// The weight's gradient is the sum of the micro-batch gradients (each scaled
// by 1/2 through the mean), and there is one update.
// GRAD-LABEL: func.func @mlp
// GRAD:         %[[G1:.*]] = memopt.matmul %{{.*}}, %{{.*}} {transpose_a = true} : tensor<4x3xf32>, tensor<4x5xf32>
// GRAD:         %[[G0:.*]] = memopt.matmul %{{.*}}, %{{.*}} {transpose_a = true} : tensor<4x3xf32>, tensor<4x5xf32>
// GRAD:         %[[G:.*]] = memopt.add %[[G1]], %[[G0]] : tensor<3x5xf32>, tensor<3x5xf32>
// GRAD:         memopt.sgd_update %{{.*}}, %[[G]]
// GRAD-NEXT:    return
func.func @mlp(%w: tensor<3x5xf32> {memopt.param}, %x: tensor<8x5xf32>, %y: tensor<8xi64>) -> tensor<f32> {
  %h = memopt.linear %x, %w : tensor<8x5xf32>, tensor<3x5xf32>
  %l = memopt.cross_entropy %h, %y : tensor<8x3xf32>, tensor<8xi64>
  return %l : tensor<f32>
}

// -----

// Batch-norm running statistics chain from the first micro-batch to the
// second; the step returns the second's. Reshapes keep the batch leading.
// CHECK-LABEL: func.func @bn
// CHECK:         %{{.*}}, %[[M0:.*]], %[[V0:.*]] = memopt.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %arg2, %arg3 : tensor<2x3x2x2xf32>
// CHECK:         memopt.reshape %{{.*}} : tensor<2x3x2x2xf32> -> tensor<2x12xf32>
// CHECK:         %{{.*}}, %[[M1:.*]], %[[V1:.*]] = memopt.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %[[M0]], %[[V0]] : tensor<2x3x2x2xf32>
// CHECK:         return %{{.*}}, %[[M1]], %[[V1]]
func.func @bn(%g: tensor<3xf32> {memopt.param}, %b: tensor<3xf32> {memopt.param},
              %m: tensor<3xf32> {memopt.state}, %v: tensor<3xf32> {memopt.state},
              %x: tensor<4x3x2x2xf32>, %t: tensor<4x12xf32>) -> (tensor<f32>, tensor<3xf32>, tensor<3xf32>) {
  %n, %nm, %nv = memopt.batch_norm %x, %g, %b, %m, %v : tensor<4x3x2x2xf32>, tensor<3xf32>
  %f = memopt.reshape %n : tensor<4x3x2x2xf32> -> tensor<4x12xf32>
  %l = memopt.mse_loss %f, %t : tensor<4x12xf32>
  return %l, %nm, %nv : tensor<f32>, tensor<3xf32>, tensor<3xf32>
}
