// RUN: memopt-opt %s --memopt-fuse-linear-cross-entropy="min-classes=100 remarks=true" -split-input-file -verify-diagnostics | FileCheck %s
// RUN: not memopt-opt %s --memopt-fuse-linear-cross-entropy=chunk=-3 -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=CHUNK
// RUN: not memopt-opt %s --memopt-fuse-linear-cross-entropy=min-classes=-1 -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=CLASSES
// CHUNK: error: memopt-fuse-linear-cross-entropy: chunk must be >= 0, got -3
// CLASSES: error: memopt-fuse-linear-cross-entropy: min-classes must be >= 0, got -1

// --memopt-fuse-linear-cross-entropy: a linear layer, with or without a
// bias (or a matmul with a transposed 2-D weight, by transpose_b or a
// transpose op, and an add of a bias or not), reshaped or not, whose only reader
// is a cross_entropy becomes memopt.linear_cross_entropy when the
// vocabulary has at least min-classes classes; other heads stay, with a
// remark saying why; a loss on anything else stays silently.

// A GPT-2 head: hidden 2x8x16, tied weight 128x16, logits reshaped to
// 16x128. hidden is reshaped to 16x16 instead; chunks of the rows whose
// f32 logits fill 16 MiB, at most all 16.
// CHECK-LABEL: func.func @lm_head(
// CHECK-NEXT: %[[H:.*]] = memopt.reshape %arg0 : tensor<2x8x16xf32> -> tensor<16x16xf32>
// CHECK-NEXT: %[[L:.*]], %{{.*}} = memopt.linear_cross_entropy %[[H]], %arg1, %arg2 {chunk = 16 : i64} : tensor<16x16xf32>, tensor<128x16xf32>, tensor<16xi64>
// CHECK-NEXT: return %[[L]]
func.func @lm_head(%h: tensor<2x8x16xf32>, %w: tensor<128x16xf32>, %labels: tensor<16xi64>) -> tensor<f32> {
  // expected-remark @+1 {{fused linear + cross-entropy: the 'tensor<16x128xf32>' logits (8192 bytes) and their gradient are never held, 16 rows at a time}}
  %l = memopt.linear %h, %w : tensor<2x8x16xf32>, tensor<128x16xf32>
  %r = memopt.reshape %l : tensor<2x8x128xf32> -> tensor<16x128xf32>
  %loss = memopt.cross_entropy %r, %labels : tensor<16x128xf32>, tensor<16xi64>
  return %loss : tensor<f32>
}

// -----

// A matmul with transpose_b on 2-D hidden states.
// CHECK-LABEL: func.func @matmul_head(
// CHECK-NEXT: %[[L:.*]], %{{.*}} = memopt.linear_cross_entropy %arg0, %arg1, %arg2 {chunk = 4 : i64} : tensor<4x16xf32>, tensor<100x16xf32>, tensor<4xi32>
func.func @matmul_head(%h: tensor<4x16xf32>, %w: tensor<100x16xf32>, %labels: tensor<4xi32>) -> tensor<f32> {
  // expected-remark @+1 {{fused linear + cross-entropy}}
  %l = memopt.matmul %h, %w {transpose_b = true} : tensor<4x16xf32>, tensor<100x16xf32>
  %loss = memopt.cross_entropy %l, %labels : tensor<4x100xf32>, tensor<4xi32>
  return %loss : tensor<f32>
}

// -----

// A biased linear layer: the bias is the fused op's last operand.
// CHECK-LABEL: func.func @bias(
// CHECK-NEXT: %[[L:.*]], %{{.*}} = memopt.linear_cross_entropy %arg0, %arg1, %arg3 bias %arg2 {chunk = 4 : i64} : tensor<4x16xf32>, tensor<100x16xf32>, tensor<4xi64>, tensor<100xf32>
// CHECK-NEXT: return %[[L]]
func.func @bias(%h: tensor<4x16xf32>, %w: tensor<100x16xf32>, %b: tensor<100xf32>, %labels: tensor<4xi64>) -> tensor<f32> {
  // expected-remark @+1 {{fused linear + cross-entropy}}
  %l = memopt.linear %h, %w, %b : tensor<4x16xf32>, tensor<100x16xf32>, tensor<100xf32>
  %loss = memopt.cross_entropy %l, %labels : tensor<4x100xf32>, tensor<4xi64>
  return %loss : tensor<f32>
}

// -----

// A linear layer as the ONNX exporters write it: Transpose of the VxH
// weight, MatMul on 3-D hidden states, Add of the bias (either side), then
// Reshape to rows. The transpose goes with the head.
// CHECK-LABEL: func.func @onnx_linear(
// CHECK-NEXT: %[[H:.*]] = memopt.reshape %arg0 : tensor<2x3x16xf32> -> tensor<6x16xf32>
// CHECK-NEXT: %[[L:.*]], %{{.*}} = memopt.linear_cross_entropy %[[H]], %arg1, %arg3 bias %arg2 {chunk = 6 : i64} : tensor<6x16xf32>, tensor<100x16xf32>, tensor<6xi64>, tensor<100xf32>
// CHECK-NEXT: return %[[L]]
func.func @onnx_linear(%h: tensor<2x3x16xf32>, %w: tensor<100x16xf32>, %b: tensor<100xf32>, %labels: tensor<6xi64>) -> tensor<f32> {
  %t = memopt.transpose %w {permutation = array<i64: 1, 0>} : tensor<100x16xf32>
  // expected-remark @+1 {{fused linear + cross-entropy}}
  %m = memopt.matmul %h, %t : tensor<2x3x16xf32>, tensor<16x100xf32>
  %a = memopt.add %b, %m : tensor<100xf32>, tensor<2x3x100xf32>
  %r = memopt.reshape %a : tensor<2x3x100xf32> -> tensor<6x100xf32>
  %loss = memopt.cross_entropy %r, %labels : tensor<6x100xf32>, tensor<6xi64>
  return %loss : tensor<f32>
}

// -----

// The transpose is kept when something else reads it.
// CHECK-LABEL: func.func @transpose_kept(
// CHECK: memopt.transpose
// CHECK: memopt.linear_cross_entropy %arg0, %arg1, %arg3 bias %arg2
func.func @transpose_kept(%h: tensor<4x16xf32>, %w: tensor<100x16xf32>, %b: tensor<100xf32>, %labels: tensor<4xi64>) -> (tensor<f32>, tensor<16x100xf32>) {
  %t = memopt.transpose %w {permutation = array<i64: 1, 0>} : tensor<100x16xf32>
  // expected-remark @+1 {{fused linear + cross-entropy}}
  %m = memopt.matmul %h, %t : tensor<4x16xf32>, tensor<16x100xf32>
  %a = memopt.add %m, %b : tensor<4x100xf32>, tensor<100xf32>
  %loss = memopt.cross_entropy %a, %labels : tensor<4x100xf32>, tensor<4xi64>
  return %loss, %t : tensor<f32>, tensor<16x100xf32>
}

// -----

// Near misses: the biased logits are also a result.
// CHECK-LABEL: func.func @biased_logits_returned(
// CHECK: memopt.cross_entropy
func.func @biased_logits_returned(%h: tensor<4x16xf32>, %w: tensor<100x16xf32>, %b: tensor<100xf32>, %labels: tensor<4xi64>) -> (tensor<f32>, tensor<4x100xf32>) {
  %m = memopt.matmul %h, %w {transpose_b = true} : tensor<4x16xf32>, tensor<100x16xf32>
  %a = memopt.add %m, %b : tensor<4x100xf32>, tensor<100xf32>
  // expected-remark @+1 {{linear + cross-entropy not fused: the biased logits are read by more than the loss}}
  %loss = memopt.cross_entropy %a, %labels : tensor<4x100xf32>, tensor<4xi64>
  return %loss, %a : tensor<f32>, tensor<4x100xf32>
}

// -----

// An add of something other than a bias over the classes is not a bias:
// the matmul's logits are read by the add, not the loss.
// CHECK-LABEL: func.func @add_not_a_bias(
// CHECK: memopt.cross_entropy
func.func @add_not_a_bias(%h: tensor<4x16xf32>, %w: tensor<100x16xf32>, %r: tensor<4x100xf32>, %labels: tensor<4xi64>) -> tensor<f32> {
  %m = memopt.matmul %h, %w {transpose_b = true} : tensor<4x16xf32>, tensor<100x16xf32>
  %a = memopt.add %m, %r : tensor<4x100xf32>, tensor<4x100xf32>
  %loss = memopt.cross_entropy %a, %labels : tensor<4x100xf32>, tensor<4xi64>
  return %loss : tensor<f32>
}

// -----

// The logits are also a result.
// CHECK-LABEL: func.func @logits_returned(
// CHECK: memopt.cross_entropy
func.func @logits_returned(%h: tensor<4x16xf32>, %w: tensor<100x16xf32>, %labels: tensor<4xi64>) -> (tensor<f32>, tensor<4x100xf32>) {
  %l = memopt.linear %h, %w : tensor<4x16xf32>, tensor<100x16xf32>
  // expected-remark @+1 {{linear + cross-entropy not fused: the logits are also read by 'func.return' at}}
  %loss = memopt.cross_entropy %l, %labels : tensor<4x100xf32>, tensor<4xi64>
  return %loss, %l : tensor<f32>, tensor<4x100xf32>
}

// -----

// A weight stored HxV.
// CHECK-LABEL: func.func @weight_h_by_v(
// CHECK: memopt.cross_entropy
func.func @weight_h_by_v(%h: tensor<4x16xf32>, %w: tensor<16x100xf32>, %labels: tensor<4xi64>) -> tensor<f32> {
  %l = memopt.matmul %h, %w : tensor<4x16xf32>, tensor<16x100xf32>
  // expected-remark @+1 {{linear + cross-entropy not fused: the weight is stored HxV (a matmul without transpose_b, not a transpose of a VxH weight); memopt.linear_cross_entropy takes VxH}}
  %loss = memopt.cross_entropy %l, %labels : tensor<4x100xf32>, tensor<4xi64>
  return %loss : tensor<f32>
}

// -----

// A vocabulary below min-classes.
// CHECK-LABEL: func.func @small_vocabulary(
// CHECK: memopt.cross_entropy
func.func @small_vocabulary(%h: tensor<4x16xf32>, %w: tensor<10x16xf32>, %labels: tensor<4xi64>) -> tensor<f32> {
  %l = memopt.linear %h, %w : tensor<4x16xf32>, tensor<10x16xf32>
  // expected-remark @+1 {{linear + cross-entropy not fused: 10 classes, below min-classes=100 (the logits are small)}}
  %loss = memopt.cross_entropy %l, %labels : tensor<4x10xf32>, tensor<4xi64>
  return %loss : tensor<f32>
}

// -----

// A loss on something else is not a language-model head: no remark.
// CHECK-LABEL: func.func @not_a_head(
// CHECK: memopt.cross_entropy
func.func @not_a_head(%x: tensor<4x100xf32>, %labels: tensor<4xi64>) -> tensor<f32> {
  %t = memopt.tanh %x : tensor<4x100xf32>
  %loss = memopt.cross_entropy %t, %labels : tensor<4x100xf32>, tensor<4xi64>
  return %loss : tensor<f32>
}
