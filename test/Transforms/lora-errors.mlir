// RUN: memopt-opt %s -split-input-file -verify-diagnostics "--memopt-lora=targets=emb|bias|both"

// Adapters go only beside weights: not an embedding table, not a bias, not
// a weight also read elsewhere.

func.func @embedding(%e: tensor<10x4xf32> {memopt.param} loc("emb"), %ids: tensor<3xi64>, %t: tensor<3x4xf32>) -> tensor<f32> {
  // expected-error @+1 {{memopt-lora: target 'emb' is read here as operand #0 of 'memopt.embedding'; adapters go only beside the weight of a linear or of a matmul (its right operand)}}
  %y = memopt.embedding %e, %ids : tensor<10x4xf32>, tensor<3xi64>
  %l = memopt.mse_loss %y, %t : tensor<3x4xf32>
  return %l : tensor<f32>
}

// -----

// expected-error @+1 {{'func.func' op argument #1: memopt-lora: target 'bias' has type 'tensor<4xf32>'; adapters need a 2-D weight}}
func.func @bias(%w: tensor<4x3xf32> {memopt.param} loc("w"), %b: tensor<4xf32> {memopt.param} loc("bias"), %x: tensor<2x3xf32>, %t: tensor<2x4xf32>) -> tensor<f32> {
  %y = memopt.linear %x, %w, %b : tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xf32>
  %l = memopt.mse_loss %y, %t : tensor<2x4xf32>
  return %l : tensor<f32>
}

// -----

func.func @both(%w: tensor<4x4xf32> {memopt.param} loc("both"), %x: tensor<2x4xf32>, %t: tensor<2x4xf32>) -> tensor<f32> {
  // expected-error @+1 {{memopt-lora: target 'both' is read both as in × out and as out × in}}
  %y = memopt.linear %x, %w : tensor<2x4xf32>, tensor<4x4xf32>
  %z = memopt.matmul %y, %w : tensor<2x4xf32>, tensor<4x4xf32>
  %l = memopt.mse_loss %z, %t : tensor<2x4xf32>
  return %l : tensor<f32>
}
