// RUN: memopt-opt %s -split-input-file -verify-diagnostics

// Loss ops: cross_entropy, mse_loss.

func.func @cross_entropy_label_count(%l: tensor<8x10xf32>, %y: tensor<4xi64>) {
  // expected-error @+1 {{'memopt.cross_entropy' op expected 8 labels (one per row of logits), got 4}}
  %0 = memopt.cross_entropy %l, %y : tensor<8x10xf32>, tensor<4xi64>
  return
}

// -----

func.func @cross_entropy_labels_rank(%l: tensor<8x10xf32>, %y: tensor<8x1xi64>) {
  // expected-error @+1 {{'memopt.cross_entropy' op expected 1-D labels (N), got rank 2 ('tensor<8x1xi64>')}}
  %0 = memopt.cross_entropy %l, %y : tensor<8x10xf32>, tensor<8x1xi64>
  return
}

// -----

func.func @cross_entropy_logits_rank(%l: tensor<10xf32>, %y: tensor<10xi64>) {
  // expected-error @+1 {{'memopt.cross_entropy' op expected 2-D logits (NxC), got rank 1 ('tensor<10xf32>')}}
  %0 = memopt.cross_entropy %l, %y : tensor<10xf32>, tensor<10xi64>
  return
}

// -----

func.func @cross_entropy_float_labels(%l: tensor<8x10xf32>, %y: tensor<8xf32>) {
  // expected-error @+1 {{'memopt.cross_entropy' op operand #1 must be statically shaped tensor of i32 or i64}}
  %0 = memopt.cross_entropy %l, %y : tensor<8x10xf32>, tensor<8xf32>
  return
}

// -----

func.func @cross_entropy_result_rank(%l: tensor<8x10xf32>, %y: tensor<8xi64>) {
  // expected-error @+1 {{'memopt.cross_entropy' op result #0 must be 0-d tensor of f16, bf16, f32 or f64}}
  %0 = "memopt.cross_entropy"(%l, %y) : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<8xf32>
  return
}

// -----

func.func @cross_entropy_result_type(%l: tensor<8x10xf32>, %y: tensor<8xi64>) {
  // expected-error @+1 {{'memopt.cross_entropy' op expected result type 'tensor<f32>', got 'tensor<f16>'}}
  %0 = "memopt.cross_entropy"(%l, %y) : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f16>
  return
}

// -----

func.func @mse_loss_target_type(%p: tensor<8x10xf32>, %t: tensor<8x10xf16>) {
  // expected-error @+1 {{'memopt.mse_loss' op failed to verify that all of {prediction, target} have same type}}
  %0 = "memopt.mse_loss"(%p, %t) : (tensor<8x10xf32>, tensor<8x10xf16>) -> tensor<f32>
  return
}

// -----

func.func @mse_loss_target_shape(%p: tensor<8x10xf32>, %t: tensor<10x8xf32>) {
  // expected-error @+1 {{'memopt.mse_loss' op failed to verify that all of {prediction, target} have same type}}
  %0 = "memopt.mse_loss"(%p, %t) : (tensor<8x10xf32>, tensor<10x8xf32>) -> tensor<f32>
  return
}

// -----

func.func @mse_loss_result_rank(%p: tensor<8x10xf32>) {
  // expected-error @+1 {{'memopt.mse_loss' op result #0 must be 0-d tensor of f16, bf16, f32 or f64}}
  %0 = "memopt.mse_loss"(%p, %p) : (tensor<8x10xf32>, tensor<8x10xf32>) -> tensor<1xf32>
  return
}

// -----

func.func @mse_loss_result_type(%p: tensor<8x10xf32>) {
  // expected-error @+1 {{'memopt.mse_loss' op expected result type 'tensor<f32>', got 'tensor<f64>'}}
  %0 = "memopt.mse_loss"(%p, %p) : (tensor<8x10xf32>, tensor<8x10xf32>) -> tensor<f64>
  return
}

// -----

func.func @mse_loss_integer(%p: tensor<8x10xi32>) {
  // expected-error @+1 {{'memopt.mse_loss' op operand #0 must be statically shaped tensor of f16, bf16, f32 or f64}}
  %0 = memopt.mse_loss %p, %p : tensor<8x10xi32>
  return
}
