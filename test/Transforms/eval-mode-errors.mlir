// RUN: memopt-opt %s --memopt-eval-mode -split-input-file -verify-diagnostics

// Evaluation has no batch statistics: a batch_norm_act whose saved_invstd
// is used (a training step's backward reads it) cannot switch.
func.func @saved_invstd_used(%x: tensor<4x3xf32>, %g: tensor<3xf32>, %dy: tensor<4x3xf32>)
    -> (tensor<4x3xf32>, tensor<3xf32>) {
  // expected-error @+1 {{'memopt.batch_norm_act' op cannot switch to evaluation mode: its saved_invstd is used, but evaluation has no batch statistics (run --memopt-eval-mode on the forward graph)}}
  %y:4 = memopt.batch_norm_act %x, %g, %g, %g, %g {activation = "elu", alpha = 1.0 : f64}
      : tensor<4x3xf32>, tensor<3xf32>
  return %y#0, %y#3 : tensor<4x3xf32>, tensor<3xf32>
}

// -----

// After --memopt-autodiff: the backward pass would keep training-mode
// gradients beside evaluation-mode ops.
// RUN: not memopt-opt %S/../../examples/cnn.mlir --memopt-autodiff --memopt-eval-mode 2>&1 | FileCheck %s --check-prefix=AFTER
// AFTER: error: 'memopt.cross_entropy_backward' op belongs to the backward pass: --memopt-eval-mode runs on the forward graph, before --memopt-autodiff
func.func @backward(%w: tensor<4x3xf32> {memopt.param}, %x: tensor<4x3xf32>, %t: tensor<4x3xf32>) -> tensor<f32> {
  %y = memopt.mul %w, %x : tensor<4x3xf32>, tensor<4x3xf32>
  %l = memopt.mse_loss %y, %t : tensor<4x3xf32>
  %one = arith.constant dense<1.0> : tensor<f32>
  // expected-error @+1 {{'memopt.mse_loss_backward' op belongs to the backward pass}}
  %g = memopt.mse_loss_backward %one, %y, %t : (tensor<f32>, tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %l : tensor<f32>
}
