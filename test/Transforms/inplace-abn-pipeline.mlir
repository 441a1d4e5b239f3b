// RUN: memopt-opt %s --memopt-autodiff --memopt-inplace=abn=true --memopt-schedule --memopt-plan-memory | FileCheck %s
// RUN: memopt-run %s --device=cpu --steps=2 --abn | FileCheck %s --check-prefix=TRAIN

// --memopt-inplace=abn=true fuses first, then decides in place for the rest:
// the fused op writes over the linear output; the ELU's inverse needs only
// the output, so no batch-norm input is kept for the backward pass.
// CHECK-LABEL: func.func @block
// CHECK: memopt.batch_norm_act %{{.*}} {activation = "elu", alpha = 1.000000e+00 : f64, memopt.inplace = 0 : i64
// CHECK: memopt.batch_norm_act_backward
// CHECK-NOT: memopt.batch_norm_backward
// TRAIN-NOT: error
// TRAIN: step 2/2 loss
func.func @block(%w: tensor<8x8xf32> {memopt.param}, %g: tensor<8xf32> {memopt.param},
                 %b: tensor<8xf32> {memopt.param}, %rm: tensor<8xf32> {memopt.state},
                 %rv: tensor<8xf32> {memopt.state}, %x: tensor<4x8xf32>,
                 %t: tensor<4xi64>) -> (tensor<f32>, tensor<8xf32>, tensor<8xf32>) {
  %h = memopt.linear %x, %w : tensor<4x8xf32>, tensor<8x8xf32>
  %n, %m, %v = memopt.batch_norm %h, %g, %b, %rm, %rv : tensor<4x8xf32>, tensor<8xf32>
  %a = memopt.elu %n : tensor<4x8xf32>
  %loss = memopt.cross_entropy %a, %t : tensor<4x8xf32>, tensor<4xi64>
  return %loss, %m, %v : tensor<f32>, tensor<8xf32>, tensor<8xf32>
}
