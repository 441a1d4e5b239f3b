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
