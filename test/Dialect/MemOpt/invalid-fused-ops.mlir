// RUN: memopt-opt %s -split-input-file -verify-diagnostics

// The fused ops' shape rules (batch_norm_act shares batch_norm's) and the
// activation they invert: leaky_relu or elu with alpha > 0.

func.func @batch_norm_act_gamma_size(%x: tensor<8x64x4x4xf32>, %g: tensor<32xf32>) {
  // expected-error @+1 {{'memopt.batch_norm_act' op expected per-channel operands of 64 elements (x's dimension 1), got 32}}
  %0:4 = memopt.batch_norm_act %x, %g, %g, %g, %g {activation = "elu", alpha = 1.0 : f64}
      : tensor<8x64x4x4xf32>, tensor<32xf32>
  return
}

// -----

func.func @batch_norm_act_one_value_per_channel(%x: tensor<1x64xf32>, %g: tensor<64xf32>) {
  // expected-error @+1 {{'memopt.batch_norm_act' op expected more than 1 value per channel for the batch statistics, got x of shape 1x64}}
  %0:4 = memopt.batch_norm_act %x, %g, %g, %g, %g {activation = "elu", alpha = 1.0 : f64}
      : tensor<1x64xf32>, tensor<64xf32>
  return
}

// -----

func.func @batch_norm_act_relu(%x: tensor<8x64xf32>, %g: tensor<64xf32>) {
  // expected-error @+1 {{'memopt.batch_norm_act' op cannot use activation "relu": ReLU is not invertible (every negative input maps to 0), so the backward could not rebuild its input from the output; use "leaky_relu" or "elu" with alpha > 0}}
  %0:4 = memopt.batch_norm_act %x, %g, %g, %g, %g {activation = "relu", alpha = 1.0 : f64}
      : tensor<8x64xf32>, tensor<64xf32>
  return
}

// -----

func.func @batch_norm_act_unknown_activation(%x: tensor<8x64xf32>, %g: tensor<64xf32>) {
  // expected-error @+1 {{'memopt.batch_norm_act' op expected 'activation' "leaky_relu" or "elu", got "gelu"}}
  %0:4 = memopt.batch_norm_act %x, %g, %g, %g, %g {activation = "gelu", alpha = 1.0 : f64}
      : tensor<8x64xf32>, tensor<64xf32>
  return
}

// -----

func.func @batch_norm_act_slope_zero(%x: tensor<8x64xf32>, %g: tensor<64xf32>) {
  // expected-error @+1 {{'memopt.batch_norm_act' op expected 'alpha' > 0, got 0.000000e+00: slope 0 makes leaky_relu a ReLU, which is not invertible (every negative input maps to 0), so the backward could not rebuild its input from the output}}
  %0:4 = memopt.batch_norm_act %x, %g, %g, %g, %g {activation = "leaky_relu", alpha = 0.0 : f64}
      : tensor<8x64xf32>, tensor<64xf32>
  return
}

// -----

func.func @batch_norm_act_negative_alpha(%x: tensor<8x64xf32>, %g: tensor<64xf32>) {
  // expected-error @+1 {{'memopt.batch_norm_act' op expected 'alpha' > 0, got -1.000000e-01: the backward rebuilds the activation's input from its output, which needs a finite, positive alpha}}
  %0:4 = memopt.batch_norm_act %x, %g, %g, %g, %g {activation = "elu", alpha = -0.1 : f64}
      : tensor<8x64xf32>, tensor<64xf32>
  return
}

// -----

func.func @batch_norm_act_missing_activation(%x: tensor<8x64xf32>, %g: tensor<64xf32>) {
  // expected-error @+1 {{'memopt.batch_norm_act' op requires attribute 'activation'}}
  %0:4 = memopt.batch_norm_act %x, %g, %g, %g, %g {alpha = 0.1 : f64}
      : tensor<8x64xf32>, tensor<64xf32>
  return
}

// -----

func.func @batch_norm_act_result_type(%x: tensor<8x64xf32>, %g: tensor<64xf32>) {
  // expected-error @+1 {{'memopt.batch_norm_act' op expected result #3 shape 64, got 8x64}}
  %0:4 = "memopt.batch_norm_act"(%x, %g, %g, %g, %g) <{activation = "elu", alpha = 1.0 : f64}>
      : (tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
      -> (tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<8x64xf32>)
  return
}

// -----

func.func @batch_norm_act_inplace_operand(%x: tensor<8x64xf32>, %g: tensor<64xf32>) {
  // expected-error @+1 {{'memopt.inplace' must name an operand of result 0's type, got 1 : i64}}
  %0:4 = memopt.batch_norm_act %x, %g, %g, %g, %g {activation = "elu", alpha = 1.0 : f64, memopt.inplace = 1 : i64}
      : tensor<8x64xf32>, tensor<64xf32>
  return
}

// -----

func.func @batch_norm_act_backward_channels(%dy: tensor<8x64xf32>, %g: tensor<32xf32>) {
  // expected-error @+1 {{'memopt.batch_norm_act_backward' op expected per-channel operands of 64 elements (output's dimension 1), got 32}}
  %0:3 = memopt.batch_norm_act_backward %dy, %dy, %g, %g, %g {activation = "elu", alpha = 1.0 : f64}
      : (tensor<8x64xf32>, tensor<8x64xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>)
      -> (tensor<8x64xf32>, tensor<32xf32>, tensor<32xf32>)
  return
}

// -----

func.func @batch_norm_act_backward_grad_type(%dy: tensor<8x64xf32>, %y: tensor<4x64xf32>, %g: tensor<64xf32>) {
  // expected-error @+1 {{'memopt.batch_norm_act_backward' op failed to verify that all of {grad, output, grad_x} have same type}}
  %0:3 = memopt.batch_norm_act_backward %dy, %y, %g, %g, %g {activation = "elu", alpha = 1.0 : f64}
      : (tensor<8x64xf32>, tensor<4x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
      -> (tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>)
  return
}

// -----

func.func @batch_norm_act_backward_relu(%dy: tensor<8x64xf32>, %g: tensor<64xf32>) {
  // expected-error @+1 {{'memopt.batch_norm_act_backward' op expected 'alpha' > 0, got 0.000000e+00: slope 0 makes elu a ReLU}}
  %0:3 = memopt.batch_norm_act_backward %dy, %dy, %g, %g, %g {activation = "elu", alpha = 0.0 : f64}
      : (tensor<8x64xf32>, tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
      -> (tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>)
  return
}

// -----

func.func @attention_batch_broadcast(%q: tensor<2x4x16x8xf32>, %k: tensor<1x4x16x8xf32>) {
  // expected-error @+1 {{'memopt.attention' op expected q, k and v to share their leading (batch and head) dimensions, or k and v to have a divisor of q's heads (dimension 1), got 2x4x16x8, 1x4x16x8 and 1x4x16x8}}
  %o, %l = memopt.attention %q, %k, %k {scale = 1.0 : f64} : tensor<2x4x16x8xf32>, tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>
  return
}

// -----

// Key/value groups must divide the query heads evenly.
func.func @attention_groups_uneven(%q: tensor<2x6x16x8xf32>, %k: tensor<2x4x16x8xf32>) {
  // expected-error @+1 {{'memopt.attention' op expected q, k and v to share their leading (batch and head) dimensions, or k and v to have a divisor of q's heads (dimension 1), got 2x6x16x8, 2x4x16x8 and 2x4x16x8}}
  %o, %l = memopt.attention %q, %k, %k {scale = 1.0 : f64} : tensor<2x6x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>
  return
}

// -----

// k and v must have one head count.
func.func @attention_groups_differ(%q: tensor<2x4x16x8xf32>, %k: tensor<2x2x16x8xf32>, %v: tensor<2x1x16x8xf32>) {
  // expected-error @+1 {{'memopt.attention' op expected q, k and v to share their leading (batch and head) dimensions, or k and v to have a divisor of q's heads (dimension 1), got 2x4x16x8, 2x2x16x8 and 2x1x16x8}}
  %o, %l = memopt.attention %q, %k, %v {scale = 1.0 : f64} : tensor<2x4x16x8xf32>, tensor<2x2x16x8xf32>, tensor<2x1x16x8xf32>
  return
}

// -----

// Grouped-query attention: 4 query heads over 2 key/value heads.
func.func @attention_groups(%q: tensor<2x4x16x8xf32>, %k: tensor<2x2x16x8xf32>) -> tensor<2x4x16x8xf32> {
  %o, %l = memopt.attention %q, %k, %k {causal = true, scale = 1.0 : f64} : tensor<2x4x16x8xf32>, tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32>
  return %o : tensor<2x4x16x8xf32>
}

// -----

func.func @attention_depth(%q: tensor<16x8xf32>, %k: tensor<16x4xf32>) {
  // expected-error @+1 {{'memopt.attention' op expected k's last dimension to be q's (8), got 16x4}}
  %o, %l = memopt.attention %q, %k, %k {scale = 1.0 : f64} : tensor<16x8xf32>, tensor<16x4xf32>, tensor<16x4xf32>
  return
}

// -----

func.func @attention_value_length(%q: tensor<16x8xf32>, %v: tensor<12x8xf32>) {
  // expected-error @+1 {{'memopt.attention' op expected v to have k's sequence length (16), got 12x8}}
  %o, %l = memopt.attention %q, %q, %v {scale = 1.0 : f64} : tensor<16x8xf32>, tensor<16x8xf32>, tensor<12x8xf32>
  return
}

// -----

func.func @attention_causal_rectangular(%q: tensor<8x4xf32>, %k: tensor<16x4xf32>) {
  // expected-error @+1 {{'memopt.attention' op 'causal' needs as many queries as keys, got 8 queries and 16 keys}}
  %o, %l = memopt.attention %q, %k, %k {causal = true, scale = 1.0 : f64} : tensor<8x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>
  return
}

// -----

func.func @attention_dropout_p(%q: tensor<8x4xf32>) {
  // expected-error @+1 {{'memopt.attention' op expected 'p' in [0, 1), got 1}}
  %o, %l = memopt.attention %q, %q, %q {p = 1.0 : f64, scale = 1.0 : f64} : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
  return
}

// -----

func.func @attention_element_types(%q: tensor<8x4xf32>, %k: tensor<8x4xf16>) {
  // expected-error @+1 {{'memopt.attention' op expected k element type 'f32' (as q), got 'f16'}}
  %o, %l = memopt.attention %q, %k, %k {scale = 1.0 : f64} : tensor<8x4xf32>, tensor<8x4xf16>, tensor<8x4xf16>
  return
}

// -----

func.func @attention_rank(%q: tensor<8xf32>) {
  // expected-error @+1 {{'memopt.attention' op expected q of rank ≥ 2 (...xSqxD), got 'tensor<8xf32>'}}
  %o, %l = memopt.attention %q, %q, %q {scale = 1.0 : f64} : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  return
}

// -----

func.func @attention_scale_required(%q: tensor<8x4xf32>) {
  // expected-error @+1 {{'memopt.attention' op requires attribute 'scale'}}
  %o, %l = memopt.attention %q, %q, %q : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
  return
}

// -----

func.func @attention_backward_lse(%q: tensor<8x4xf32>, %l: tensor<4xf32>) {
  // expected-error @+1 {{'memopt.attention_backward' op expected lse of type 'tensor<8xf32>', got 'tensor<4xf32>'}}
  %g:3 = memopt.attention_backward %q, %q, %q, %q, %q, %l {scale = 1.0 : f64}
      : (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<4xf32>)
      -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>)
  return
}

// -----

func.func @attention_backward_grad(%q: tensor<8x4xf32>, %v: tensor<8x2xf32>, %l: tensor<8xf32>) {
  // expected-error @+1 {{'memopt.attention_backward' op expected grad of type 'tensor<8x2xf32>' (the attention result's), got 'tensor<8x4xf32>'}}
  %g:3 = memopt.attention_backward %q, %q, %q, %v, %q, %l {scale = 1.0 : f64}
      : (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x2xf32>, tensor<8x4xf32>, tensor<8xf32>)
      -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x2xf32>)
  return
}

// -----

func.func @linear_cross_entropy_width(%h: tensor<8x4xf32>, %w: tensor<100x5xf32>, %l: tensor<8xi64>) {
  // expected-error @+1 {{'memopt.linear_cross_entropy' op expected weight of shape Vx4 (hidden's width), got 100x5}}
  %loss, %lse = memopt.linear_cross_entropy %h, %w, %l {chunk = 2 : i64} : tensor<8x4xf32>, tensor<100x5xf32>, tensor<8xi64>
  return
}

// -----

func.func @linear_cross_entropy_labels(%h: tensor<8x4xf32>, %w: tensor<100x4xf32>, %l: tensor<6xi64>) {
  // expected-error @+1 {{'memopt.linear_cross_entropy' op expected 8 labels (one per row of hidden), got 6}}
  %loss, %lse = memopt.linear_cross_entropy %h, %w, %l {chunk = 2 : i64} : tensor<8x4xf32>, tensor<100x4xf32>, tensor<6xi64>
  return
}

// -----

func.func @linear_cross_entropy_chunk(%h: tensor<8x4xf32>, %w: tensor<100x4xf32>, %l: tensor<8xi64>) {
  // expected-error @+1 {{'memopt.linear_cross_entropy' op expected 'chunk' ≥ 1 (rows at a time), got 0}}
  %loss, %lse = memopt.linear_cross_entropy %h, %w, %l {chunk = 0 : i64} : tensor<8x4xf32>, tensor<100x4xf32>, tensor<8xi64>
  return
}

// -----

func.func @linear_cross_entropy_rank(%h: tensor<2x8x4xf32>, %w: tensor<100x4xf32>, %l: tensor<16xi64>) {
  // expected-error @+1 {{'memopt.linear_cross_entropy' op expected 2-D hidden (NxH)}}
  %loss, %lse = memopt.linear_cross_entropy %h, %w, %l {chunk = 2 : i64} : tensor<2x8x4xf32>, tensor<100x4xf32>, tensor<16xi64>
  return
}

// -----

func.func @linear_cross_entropy_bias_size(%h: tensor<8x4xf32>, %w: tensor<100x4xf32>, %l: tensor<8xi64>, %b: tensor<10xf32>) {
  // expected-error @+1 {{'memopt.linear_cross_entropy' op expected bias of 100 elements (weight's rows), got 10}}
  %loss, %lse = memopt.linear_cross_entropy %h, %w, %l bias %b {chunk = 2 : i64} : tensor<8x4xf32>, tensor<100x4xf32>, tensor<8xi64>, tensor<10xf32>
  return
}

// -----

func.func @linear_cross_entropy_bias_type(%h: tensor<8x4xf32>, %w: tensor<100x4xf32>, %l: tensor<8xi64>, %b: tensor<100xf16>) {
  // expected-error @+1 {{'memopt.linear_cross_entropy' op expected}}
  %loss, %lse = memopt.linear_cross_entropy %h, %w, %l bias %b {chunk = 2 : i64} : tensor<8x4xf32>, tensor<100x4xf32>, tensor<8xi64>, tensor<100xf16>
  return
}

// -----

func.func @linear_cross_entropy_backward_no_grad_bias(%g: tensor<f32>, %h: tensor<8x4xf32>, %w: tensor<100x4xf32>, %l: tensor<8xi64>, %lse: tensor<8xf32>, %b: tensor<100xf32>) {
  // expected-error @+1 {{'memopt.linear_cross_entropy_backward' op expected a grad_bias result for the bias}}
  %dh, %dw = memopt.linear_cross_entropy_backward %g, %h, %w, %l, %lse, %b {chunk = 2 : i64}
      : (tensor<f32>, tensor<8x4xf32>, tensor<100x4xf32>, tensor<8xi64>, tensor<8xf32>, tensor<100xf32>) -> (tensor<8x4xf32>, tensor<100x4xf32>)
  return
}

// -----

func.func @linear_cross_entropy_with_grad_bias_type(%g: tensor<f32>, %h: tensor<8x4xf32>, %w: tensor<100x4xf32>, %l: tensor<8xi64>, %b: tensor<100xf32>) {
  // expected-error @+1 {{'memopt.linear_cross_entropy_with_grad' op expected grad_bias of type 'tensor<100xf32>' (the bias's), got 'tensor<10xf32>'}}
  %loss, %dh, %dw, %db = memopt.linear_cross_entropy_with_grad %g, %h, %w, %l, %b {chunk = 2 : i64}
      : (tensor<f32>, tensor<8x4xf32>, tensor<100x4xf32>, tensor<8xi64>, tensor<100xf32>) -> (tensor<f32>, tensor<8x4xf32>, tensor<100x4xf32>, tensor<10xf32>)
  return
}

// -----

func.func @linear_cross_entropy_backward_lse(%g: tensor<f32>, %h: tensor<8x4xf32>, %w: tensor<100x4xf32>, %l: tensor<8xi64>, %lse: tensor<8xf16>) {
  // expected-error @+1 {{'memopt.linear_cross_entropy_backward' op expected lse of type 'tensor<8xf32>', got 'tensor<8xf16>'}}
  %dh, %dw = memopt.linear_cross_entropy_backward %g, %h, %w, %l, %lse {chunk = 2 : i64}
      : (tensor<f32>, tensor<8x4xf32>, tensor<100x4xf32>, tensor<8xi64>, tensor<8xf16>) -> (tensor<8x4xf32>, tensor<100x4xf32>)
  return
}

// -----

func.func @linear_cross_entropy_with_grad_seed(%g: tensor<f16>, %h: tensor<8x4xf16>, %w: tensor<100x4xf16>, %l: tensor<8xi64>) {
  // expected-error @+1 {{'memopt.linear_cross_entropy_with_grad' op expected grad_loss of type 'tensor<f32>' (the loss's), got 'tensor<f16>'}}
  %loss, %dh, %dw = memopt.linear_cross_entropy_with_grad %g, %h, %w, %l {chunk = 2 : i64}
      : (tensor<f16>, tensor<8x4xf16>, tensor<100x4xf16>, tensor<8xi64>) -> (tensor<f32>, tensor<8x4xf16>, tensor<100x4xf16>)
  return
}

// -----

func.func @linear_cross_entropy_with_grad_result(%g: tensor<f32>, %h: tensor<8x4xf32>, %w: tensor<100x4xf32>, %l: tensor<8xi64>) {
  // expected-error @+1 {{'memopt.linear_cross_entropy_with_grad' op expected result of type 'tensor<f32>', got 'tensor<f64>'}}
  %loss, %dh, %dw = memopt.linear_cross_entropy_with_grad %g, %h, %w, %l {chunk = 2 : i64}
      : (tensor<f32>, tensor<8x4xf32>, tensor<100x4xf32>, tensor<8xi64>) -> (tensor<f64>, tensor<8x4xf32>, tensor<100x4xf32>)
  return
}

// -----

func.func @linear_cross_entropy_with_grad_labels(%g: tensor<f32>, %h: tensor<8x4xf32>, %w: tensor<100x4xf32>, %l: tensor<7xi64>) {
  // expected-error @+1 {{'memopt.linear_cross_entropy_with_grad' op expected 8 labels (one per row of hidden), got 7}}
  %loss, %dh, %dw = memopt.linear_cross_entropy_with_grad %g, %h, %w, %l {chunk = 2 : i64}
      : (tensor<f32>, tensor<8x4xf32>, tensor<100x4xf32>, tensor<7xi64>) -> (tensor<f32>, tensor<8x4xf32>, tensor<100x4xf32>)
  return
}

// -----

// A key bias is one row of keys per leading index before the heads.
func.func @attention_key_bias_shape(%q: tensor<2x4x16x8xf32>, %b: tensor<2x4x16xf32>) {
  // expected-error @+1 {{'memopt.attention' op expected key_bias of shape 2x16 (q's dimensions before its heads, then the keys), got 'tensor<2x4x16xf32>'}}
  %o, %l = memopt.attention %q, %q, %q key_bias %b {scale = 1.0 : f64} : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16xf32>
  return
}

// -----

func.func @attention_key_bias_rank(%q: tensor<16x8xf32>, %b: tensor<16xf32>) {
  // expected-error @+1 {{'memopt.attention' op a key bias needs q of rank >= 3 (...xHxSqxD), got 16x8}}
  %o, %l = memopt.attention %q, %q, %q key_bias %b {scale = 1.0 : f64} : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<16xf32>
  return
}

// -----

func.func @attention_key_bias_type(%q: tensor<1x2x4x8xf32>, %b: tensor<1x4xf16>) {
  // expected-error @+1 {{'memopt.attention' op}}
  %o, %l = memopt.attention %q, %q, %q key_bias %b {scale = 1.0 : f64} : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x4xf16>
  return
}
