// RUN: memopt-opt %s --memopt-fuse-attention=remarks=true -split-input-file -verify-diagnostics | FileCheck %s

// --memopt-fuse-attention: matmul → scale → softmax → dropout → matmul
// chains become memopt.attention, with a remark; attention-like chains
// that differ stay, with a remark saying why; other softmaxes stay silently.

// GPT-2's chain: q·kᵀ (transpose_b), times 1/√d, causal softmax, dropout,
// P·v. The scale constant dies with the chain.
// CHECK-LABEL: func.func @gpt2_chain(
// CHECK-NEXT: %[[O:.*]], %{{.*}} = memopt.attention %arg0, %arg1, %arg2 {causal = true, p = 1.000000e-01 : f64, scale = 1.250000e-01 : f64, seed = 7 : i64} : tensor<2x3x16x64xf32>, tensor<2x3x16x64xf32>, tensor<2x3x16x64xf32>
// CHECK-NEXT: return %[[O]]
func.func @gpt2_chain(%q: tensor<2x3x16x64xf32>, %k: tensor<2x3x16x64xf32>, %v: tensor<2x3x16x64xf32>)
    -> tensor<2x3x16x64xf32> {
  // expected-remark @+1 {{fused attention: the backward pass keeps the per-row log-sum-exp instead of the 'tensor<2x3x16x16xf32>' probabilities (6144 bytes, and as many for their dropout); it recomputes them}}
  %s = memopt.matmul %q, %k {transpose_b = true} : tensor<2x3x16x64xf32>, tensor<2x3x16x64xf32>
  %c = arith.constant dense<1.250000e-01> : tensor<f32>
  %t = memopt.mul %s, %c : tensor<2x3x16x16xf32>, tensor<f32>
  %p = memopt.softmax %t {axis = -1 : i64, causal = true} : tensor<2x3x16x16xf32>
  %d = memopt.dropout %p {p = 1.000000e-01 : f64, seed = 7 : i64} : tensor<2x3x16x16xf32>
  %o = memopt.matmul %d, %v : tensor<2x3x16x16xf32>, tensor<2x3x16x64xf32>
  return %o : tensor<2x3x16x64xf32>
}

// -----

// The scale on q beforehand (read only by the chain), k transposed by
// memopt.transpose, no dropout, no mask; rectangular scores.
// CHECK-LABEL: func.func @prescaled_q_transposed_k(
// CHECK-NEXT: %[[O:.*]], %{{.*}} = memopt.attention %arg0, %arg1, %arg2 {scale = 2.500000e-01 : f64} : tensor<4x8x16xf32>, tensor<4x6x16xf32>, tensor<4x6x2xf32>
// CHECK-NEXT: return %[[O]]
func.func @prescaled_q_transposed_k(%q: tensor<4x8x16xf32>, %k: tensor<4x6x16xf32>, %v: tensor<4x6x2xf32>)
    -> tensor<4x8x2xf32> {
  %c = arith.constant dense<2.500000e-01> : tensor<f32>
  %qs = memopt.mul %c, %q : tensor<f32>, tensor<4x8x16xf32>
  %kt = memopt.transpose %k {permutation = array<i64: 0, 2, 1>} : tensor<4x6x16xf32>
  // expected-remark @+1 {{fused attention}}
  %s = memopt.matmul %qs, %kt : tensor<4x8x16xf32>, tensor<4x16x6xf32>
  %p = memopt.softmax %s : tensor<4x8x6xf32>
  %o = memopt.matmul %p, %v : tensor<4x8x6xf32>, tensor<4x6x2xf32>
  return %o : tensor<4x8x2xf32>
}

// -----

// k scaled beforehand and then transposed: both fold away.
// CHECK-LABEL: func.func @prescaled_k_transposed(
// CHECK-NEXT: %[[O:.*]], %{{.*}} = memopt.attention %arg0, %arg1, %arg2 {scale = 1.250000e-01 : f64} : tensor<4x8x16xf32>, tensor<4x6x16xf32>, tensor<4x6x2xf32>
// CHECK-NEXT: return %[[O]]
func.func @prescaled_k_transposed(%q: tensor<4x8x16xf32>, %k: tensor<4x6x16xf32>, %v: tensor<4x6x2xf32>)
    -> tensor<4x8x2xf32> {
  %c = arith.constant dense<1.250000e-01> : tensor<f32>
  %ks = memopt.mul %k, %c : tensor<4x6x16xf32>, tensor<f32>
  %kt = memopt.transpose %ks {permutation = array<i64: 0, 2, 1>} : tensor<4x6x16xf32>
  // expected-remark @+1 {{fused attention}}
  %s = memopt.matmul %q, %kt : tensor<4x8x16xf32>, tensor<4x16x6xf32>
  %p = memopt.softmax %s : tensor<4x8x6xf32>
  %o = memopt.matmul %p, %v : tensor<4x8x6xf32>, tensor<4x6x2xf32>
  return %o : tensor<4x8x2xf32>
}

// -----

// Scores divided by √d: the scale is its reciprocal. A scale constant
// that something else reads stays.
// CHECK-LABEL: func.func @divided(
// CHECK: %[[C:.*]] = arith.constant dense<8.000000e+00>
// CHECK-NEXT: %[[O:.*]], %{{.*}} = memopt.attention %arg0, %arg0, %arg0 {scale = 1.250000e-01 : f64}
// CHECK-NEXT: %[[R:.*]] = memopt.mul %[[O]], %[[C]]
func.func @divided(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %c = arith.constant dense<8.000000e+00> : tensor<f32>
  // expected-remark @+1 {{fused attention}}
  %s = memopt.matmul %x, %x {transpose_b = true} : tensor<16x64xf32>, tensor<16x64xf32>
  %t = memopt.div %s, %c : tensor<16x16xf32>, tensor<f32>
  %p = memopt.softmax %t : tensor<16x16xf32>
  %o = memopt.matmul %p, %x : tensor<16x16xf32>, tensor<16x64xf32>
  %r = memopt.mul %o, %c : tensor<16x64xf32>, tensor<f32>
  return %r : tensor<16x64xf32>
}

// -----

// Near misses. The probabilities are also a result: they are kept anyway.
// CHECK-LABEL: func.func @probabilities_read_elsewhere(
// CHECK: memopt.softmax
func.func @probabilities_read_elsewhere(%x: tensor<16x8xf32>) -> (tensor<16x8xf32>, tensor<16x16xf32>) {
  %s = memopt.matmul %x, %x {transpose_b = true} : tensor<16x8xf32>, tensor<16x8xf32>
  // expected-remark @+1 {{attention not fused: the probabilities are also read by 'func.return' at}}
  %p = memopt.softmax %s : tensor<16x16xf32>
  %o = memopt.matmul %p, %x : tensor<16x16xf32>, tensor<16x8xf32>
  return %o, %p : tensor<16x8xf32>, tensor<16x16xf32>
}

// -----

// Probabilities nothing reads (a dead softmax on scores).
// CHECK-LABEL: func.func @unread_probabilities(
// CHECK: memopt.softmax
func.func @unread_probabilities(%x: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %s = memopt.matmul %x, %x {transpose_b = true} : tensor<16x8xf32>, tensor<16x8xf32>
  // expected-remark @+1 {{attention not fused: nothing reads the probabilities}}
  %p = memopt.softmax %s : tensor<16x16xf32>
  return %x : tensor<16x8xf32>
}

// -----

// An additive mask on the scores.
// CHECK-LABEL: func.func @additive_mask(
// CHECK: memopt.softmax
func.func @additive_mask(%x: tensor<16x8xf32>, %mask: tensor<16x16xf32>) -> tensor<16x8xf32> {
  %s = memopt.matmul %x, %x {transpose_b = true} : tensor<16x8xf32>, tensor<16x8xf32>
  %m = memopt.add %s, %mask : tensor<16x16xf32>, tensor<16x16xf32>
  // expected-remark @+1 {{attention not fused: the softmax reads 'memopt.add' at}}
  %p = memopt.softmax %m : tensor<16x16xf32>
  %o = memopt.matmul %p, %x : tensor<16x16xf32>, tensor<16x8xf32>
  return %o : tensor<16x8xf32>
}

// -----

// A constant causal mask added to the scaled scores (how the exporters write
// SDPA's is_causal and masked_fill(~tril, -inf)), broadcast over batch and
// heads: the attention is causal and the mask constant dies with the chain.
// CHECK-LABEL: func.func @causal_mask_constant(
// CHECK-NEXT: %[[O:.*]], %{{.*}} = memopt.attention %arg0, %arg1, %arg2 {causal = true, scale = 5.000000e-01 : f64} : tensor<2x3x3x4xf32>, tensor<2x3x3x4xf32>, tensor<2x3x3x4xf32>
// CHECK-NEXT: return %[[O]]
func.func @causal_mask_constant(%q: tensor<2x3x3x4xf32>, %k: tensor<2x3x3x4xf32>, %v: tensor<2x3x3x4xf32>)
    -> tensor<2x3x3x4xf32> {
  %c = arith.constant dense<5.000000e-01> : tensor<f32>
  %mask = arith.constant dense<[[0.0, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0]]> : tensor<3x3xf32>
  // expected-remark @+1 {{fused attention}}
  %s = memopt.matmul %q, %k {transpose_b = true} : tensor<2x3x3x4xf32>, tensor<2x3x3x4xf32>
  %t = memopt.mul %s, %c : tensor<2x3x3x3xf32>, tensor<f32>
  %m = memopt.add %t, %mask : tensor<2x3x3x3xf32>, tensor<3x3xf32>
  %p = memopt.softmax %m : tensor<2x3x3x3xf32>
  %o = memopt.matmul %p, %v : tensor<2x3x3x3xf32>, tensor<2x3x3x4xf32>
  return %o : tensor<2x3x3x4xf32>
}

// -----

// The mask first, with float32's lowest value (HF's finfo.min) instead of
// -inf, and no scale: still exactly causal.
// CHECK-LABEL: func.func @causal_mask_lowest_first(
// CHECK-NEXT: %[[O:.*]], %{{.*}} = memopt.attention %arg0, %arg0, %arg0 {causal = true, scale = 1.000000e+00 : f64} : tensor<1x2x2xf32>, tensor<1x2x2xf32>, tensor<1x2x2xf32>
func.func @causal_mask_lowest_first(%x: tensor<1x2x2xf32>) -> tensor<1x2x2xf32> {
  %mask = arith.constant dense<[[0.0, -3.40282347E+38], [0.0, 0.0]]> : tensor<2x2xf32>
  // expected-remark @+1 {{fused attention}}
  %s = memopt.matmul %x, %x {transpose_b = true} : tensor<1x2x2xf32>, tensor<1x2x2xf32>
  %m = memopt.add %mask, %s : tensor<2x2xf32>, tensor<1x2x2xf32>
  %p = memopt.softmax %m : tensor<1x2x2xf32>
  %o = memopt.matmul %p, %x : tensor<1x2x2xf32>, tensor<1x2x2xf32>
  return %o : tensor<1x2x2xf32>
}

// -----

// A mask that would broadcast the scores to a larger shape is not fused.
// CHECK-LABEL: func.func @broadcasting_mask(
// CHECK: memopt.softmax
func.func @broadcasting_mask(%x: tensor<2x2xf32>, %v: tensor<3x2x2xf32>) -> tensor<3x2x2xf32> {
  %mask = arith.constant dense<[[[0.0, 0xFF800000], [0.0, 0.0]], [[0.0, 0xFF800000], [0.0, 0.0]], [[0.0, 0xFF800000], [0.0, 0.0]]]> : tensor<3x2x2xf32>
  %s = memopt.matmul %x, %x {transpose_b = true} : tensor<2x2xf32>, tensor<2x2xf32>
  %m = memopt.add %s, %mask : tensor<2x2xf32>, tensor<3x2x2xf32>
  // expected-remark @+1 {{attention not fused: the softmax reads 'memopt.add' at}}
  %p = memopt.softmax %m : tensor<3x2x2xf32>
  %o = memopt.matmul %p, %v : tensor<3x2x2xf32>, tensor<3x2x2xf32>
  return %o : tensor<3x2x2xf32>
}

// -----

// kᵀ written as one transpose of a [B, T, H, D] projection to [B, H, D, T]
// (TorchScript's k.permute(0, 2, 3, 1)): k is that projection transposed
// to [B, H, T, D], made by the fusion.
// CHECK-LABEL: func.func @keys_permuted(
// CHECK-NEXT: %[[K:.*]] = memopt.transpose %arg1 {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x5x3x4xf32>
// CHECK-NEXT: %[[O:.*]], %{{.*}} = memopt.attention %arg0, %[[K]], %arg2 {scale = 1.000000e+00 : f64} : tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>
// CHECK-NEXT: return %[[O]]
func.func @keys_permuted(%q: tensor<2x3x5x4xf32>, %kbthd: tensor<2x5x3x4xf32>, %v: tensor<2x3x5x4xf32>)
    -> tensor<2x3x5x4xf32> {
  %kt = memopt.transpose %kbthd {permutation = array<i64: 0, 2, 3, 1>} : tensor<2x5x3x4xf32>
  // expected-remark @+1 {{fused attention}}
  %s = memopt.matmul %q, %kt : tensor<2x3x5x4xf32>, tensor<2x3x4x5xf32>
  %p = memopt.softmax %s : tensor<2x3x5x5xf32>
  %o = memopt.matmul %p, %v : tensor<2x3x5x5xf32>, tensor<2x3x5x4xf32>
  return %o : tensor<2x3x5x4xf32>
}

// -----

// Grouped-query attention as the exporters write repeat_interleave: K
// through a mul by ones, V through a concat of copies, each between
// reshapes; kᵀ as reshape, transpose, reshape, scaled by a constant. The
// attention reads the two key/value heads in place; the repeats die.
// CHECK-LABEL: func.func @grouped(
// CHECK-NEXT: %[[O:.*]], %{{.*}} = memopt.attention %arg0, %arg1, %arg2 {scale = 5.000000e-01 : f64} : tensor<2x4x3x2xf32>, tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>
// CHECK-NEXT: return %[[O]]
func.func @grouped(%q: tensor<2x4x3x2xf32>, %k: tensor<2x2x3x2xf32>, %v: tensor<2x2x3x2xf32>)
    -> tensor<2x4x3x2xf32> {
  %ku = memopt.reshape %k : tensor<2x2x3x2xf32> -> tensor<2x2x1x3x2xf32>
  %ones = arith.constant dense<1.000000e+00> : tensor<1x1x2x1x1xf32>
  %ke = memopt.mul %ones, %ku : tensor<1x1x2x1x1xf32>, tensor<2x2x1x3x2xf32>
  %kr = memopt.reshape %ke : tensor<2x2x2x3x2xf32> -> tensor<2x4x3x2xf32>
  %vu = memopt.reshape %v : tensor<2x2x3x2xf32> -> tensor<2x2x1x3x2xf32>
  %ve = memopt.concat %vu, %vu {axis = 2 : i64} : tensor<2x2x1x3x2xf32>, tensor<2x2x1x3x2xf32>
  %vr = memopt.reshape %ve : tensor<2x2x2x3x2xf32> -> tensor<2x4x3x2xf32>
  %kf = memopt.reshape %kr : tensor<2x4x3x2xf32> -> tensor<8x3x2xf32>
  %kft = memopt.transpose %kf {permutation = array<i64: 0, 2, 1>} : tensor<8x3x2xf32>
  %kt = memopt.reshape %kft : tensor<8x2x3xf32> -> tensor<2x4x2x3xf32>
  %c = arith.constant dense<5.000000e-01> : tensor<f32>
  %kts = memopt.mul %kt, %c : tensor<2x4x2x3xf32>, tensor<f32>
  // expected-remark @+1 {{fused attention}}
  %s = memopt.matmul %q, %kts : tensor<2x4x3x2xf32>, tensor<2x4x2x3xf32>
  %p = memopt.softmax %s : tensor<2x4x3x3xf32>
  %o = memopt.matmul %p, %vr : tensor<2x4x3x3xf32>, tensor<2x4x3x2xf32>
  return %o : tensor<2x4x3x2xf32>
}

// -----

// Only K repeated (V has all the heads): K stays materialised, as the
// attention needs k and v with one head count.
// CHECK-LABEL: func.func @only_keys_grouped(
// CHECK: %[[KR:.*]] = memopt.reshape %{{.*}} : tensor<2x2x2x3x2xf32> -> tensor<2x4x3x2xf32>
// CHECK: memopt.attention %arg0, %[[KR]], %arg2
func.func @only_keys_grouped(%q: tensor<2x4x3x2xf32>, %k: tensor<2x2x3x2xf32>, %v: tensor<2x4x3x2xf32>)
    -> tensor<2x4x3x2xf32> {
  %ku = memopt.reshape %k : tensor<2x2x3x2xf32> -> tensor<2x2x1x3x2xf32>
  %ke = memopt.concat %ku, %ku {axis = 2 : i64} : tensor<2x2x1x3x2xf32>, tensor<2x2x1x3x2xf32>
  %kr = memopt.reshape %ke : tensor<2x2x2x3x2xf32> -> tensor<2x4x3x2xf32>
  // expected-remark @+1 {{fused attention}}
  %s = memopt.matmul %q, %kr {transpose_b = true} : tensor<2x4x3x2xf32>, tensor<2x4x3x2xf32>
  %p = memopt.softmax %s : tensor<2x4x3x3xf32>
  %o = memopt.matmul %p, %v : tensor<2x4x3x3xf32>, tensor<2x4x3x2xf32>
  return %o : tensor<2x4x3x2xf32>
}

// -----

// SDPA's boolean attn_mask as imported: log(mask) as the key bias and the
// safe softmax (fully masked rows 0), which the attention keeps as `safe`.
// CHECK-LABEL: func.func @safe_key_padding(
// CHECK: memopt.attention %arg0, %arg0, %arg0 key_bias %{{.*}} {safe = true, scale = 5.000000e-01 : f64}
// CHECK-NOT: memopt.softmax
func.func @safe_key_padding(%x: tensor<2x4x3x2xf32>, %mask: tensor<2x3xf32>) -> tensor<2x4x3x2xf32> {
  %m = memopt.reshape %mask : tensor<2x3xf32> -> tensor<2x1x1x3xf32>
  %bias = memopt.log %m : tensor<2x1x1x3xf32>
  // expected-remark @+1 {{fused attention}}
  %s = memopt.matmul %x, %x {transpose_b = true} : tensor<2x4x3x2xf32>, tensor<2x4x3x2xf32>
  %c = arith.constant dense<2.000000e+00> : tensor<f32>
  %t = memopt.div %s, %c : tensor<2x4x3x3xf32>, tensor<f32>
  %u = memopt.add %t, %bias : tensor<2x4x3x3xf32>, tensor<2x1x1x3xf32>
  %p = memopt.softmax %u {safe = true} : tensor<2x4x3x3xf32>
  %o = memopt.matmul %p, %x : tensor<2x4x3x3xf32>, tensor<2x4x3x2xf32>
  return %o : tensor<2x4x3x2xf32>
}

// -----

// BERT's key-padding mask, (1 - mask) · finfo.min broadcast as B×1×1×Sk and
// added to the scaled scores, becomes the attention's key bias (a B×Sk view).
// CHECK-LABEL: func.func @key_padding_bias(
// CHECK: %[[B:.*]] = memopt.reshape %{{.*}} : tensor<2x1x1x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[O:.*]], %{{.*}} = memopt.attention %arg0, %arg0, %arg0 key_bias %[[B]] {scale = 5.000000e-01 : f64} : tensor<2x4x3x2xf32>, tensor<2x4x3x2xf32>, tensor<2x4x3x2xf32>, tensor<2x3xf32>
// CHECK-NEXT: return %[[O]]
func.func @key_padding_bias(%x: tensor<2x4x3x2xf32>, %mask: tensor<2x3xf32>) -> tensor<2x4x3x2xf32> {
  %m = memopt.reshape %mask : tensor<2x3xf32> -> tensor<2x1x1x3xf32>
  %one = arith.constant dense<1.000000e+00> : tensor<f32>
  %inv = memopt.sub %one, %m : tensor<f32>, tensor<2x1x1x3xf32>
  %low = arith.constant dense<-3.40282347E+38> : tensor<f32>
  %bias = memopt.mul %inv, %low : tensor<2x1x1x3xf32>, tensor<f32>
  // expected-remark @+1 {{fused attention}}
  %s = memopt.matmul %x, %x {transpose_b = true} : tensor<2x4x3x2xf32>, tensor<2x4x3x2xf32>
  %c = arith.constant dense<2.000000e+00> : tensor<f32>
  %t = memopt.div %s, %c : tensor<2x4x3x3xf32>, tensor<f32>
  %u = memopt.add %t, %bias : tensor<2x4x3x3xf32>, tensor<2x1x1x3xf32>
  %p = memopt.softmax %u : tensor<2x4x3x3xf32>
  %o = memopt.matmul %p, %x : tensor<2x4x3x3xf32>, tensor<2x4x3x2xf32>
  return %o : tensor<2x4x3x2xf32>
}

// -----

// A causal mask and a key bias together, with grouped K and V.
// CHECK-LABEL: func.func @causal_and_key_bias(
// CHECK: memopt.attention %arg0, %arg1, %arg1 key_bias %{{.*}} {causal = true, scale = 1.000000e+00 : f64} : tensor<1x2x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x2xf32>
func.func @causal_and_key_bias(%q: tensor<1x2x2x2xf32>, %k: tensor<1x1x2x2xf32>, %b: tensor<1x1x1x2xf32>) -> tensor<1x2x2x2xf32> {
  %ku = memopt.reshape %k : tensor<1x1x2x2xf32> -> tensor<1x1x1x2x2xf32>
  %ke = memopt.concat %ku, %ku {axis = 2 : i64} : tensor<1x1x1x2x2xf32>, tensor<1x1x1x2x2xf32>
  %kr = memopt.reshape %ke : tensor<1x1x2x2x2xf32> -> tensor<1x2x2x2xf32>
  %mask = arith.constant dense<[[0.0, 0xFF800000], [0.0, 0.0]]> : tensor<2x2xf32>
  // expected-remark @+1 {{fused attention}}
  %s = memopt.matmul %q, %kr {transpose_b = true} : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
  %u = memopt.add %s, %b : tensor<1x2x2x2xf32>, tensor<1x1x1x2xf32>
  %w = memopt.add %mask, %u : tensor<2x2xf32>, tensor<1x2x2x2xf32>
  %p = memopt.softmax %w : tensor<1x2x2x2xf32>
  %o = memopt.matmul %p, %kr : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
  return %o : tensor<1x2x2x2xf32>
}

// -----

// A bias computed from a parameter (a learned bias) would need a gradient
// the key bias does not take: not fused.
// CHECK-LABEL: func.func @parameter_bias(
// CHECK: memopt.softmax
func.func @parameter_bias(%x: tensor<2x4x3x2xf32>, %w: tensor<2x1x1x3xf32> {memopt.param}) -> tensor<2x4x3x2xf32> {
  %s = memopt.matmul %x, %x {transpose_b = true} : tensor<2x4x3x2xf32>, tensor<2x4x3x2xf32>
  %u = memopt.add %s, %w : tensor<2x4x3x3xf32>, tensor<2x1x1x3xf32>
  // expected-remark @+1 {{attention not fused: the softmax reads 'memopt.add' at}}
  %p = memopt.softmax %u : tensor<2x4x3x3xf32>
  %o = memopt.matmul %p, %x : tensor<2x4x3x3xf32>, tensor<2x4x3x2xf32>
  return %o : tensor<2x4x3x2xf32>
}

// -----

// A constant that hides the diagonal is not a causal mask.
// CHECK-LABEL: func.func @strict_mask(
// CHECK: memopt.softmax
func.func @strict_mask(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %mask = arith.constant dense<[[0xFF800000, 0xFF800000], [0.0, 0xFF800000]]> : tensor<2x2xf32>
  %s = memopt.matmul %x, %x {transpose_b = true} : tensor<2x2xf32>, tensor<2x2xf32>
  %m = memopt.add %s, %mask : tensor<2x2xf32>, tensor<2x2xf32>
  // expected-remark @+1 {{attention not fused: the softmax reads 'memopt.add' at}}
  %p = memopt.softmax %m : tensor<2x2xf32>
  %o = memopt.matmul %p, %x : tensor<2x2xf32>, tensor<2x2xf32>
  return %o : tensor<2x2xf32>
}

// -----

// BERT's old -10000 does not hide a key exactly (exp(-10000 + s - max) is
// not 0 for large scores), so it is not taken for a causal mask.
// CHECK-LABEL: func.func @soft_mask(
// CHECK: memopt.softmax
func.func @soft_mask(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %mask = arith.constant dense<[[0.0, -1.0E+4], [0.0, 0.0]]> : tensor<2x2xf32>
  %s = memopt.matmul %x, %x {transpose_b = true} : tensor<2x2xf32>, tensor<2x2xf32>
  %m = memopt.add %s, %mask : tensor<2x2xf32>, tensor<2x2xf32>
  // expected-remark @+1 {{which adds a constant that is not a causal mask: it holds -10000 at query 0, key 1; a causal mask holds 0 on and below the diagonal and -inf (or at most -1e30) above it}}
  %p = memopt.softmax %m : tensor<2x2xf32>
  %o = memopt.matmul %p, %x : tensor<2x2xf32>, tensor<2x2xf32>
  return %o : tensor<2x2xf32>
}

// -----

// The masked scores read elsewhere are kept anyway.
// CHECK-LABEL: func.func @masked_scores_read(
// CHECK: memopt.softmax
func.func @masked_scores_read(%x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %mask = arith.constant dense<[[0.0, 0xFF800000], [0.0, 0.0]]> : tensor<2x2xf32>
  %s = memopt.matmul %x, %x {transpose_b = true} : tensor<2x2xf32>, tensor<2x2xf32>
  %m = memopt.add %s, %mask : tensor<2x2xf32>, tensor<2x2xf32>
  // expected-remark @+1 {{attention not fused: the masked scores are also read by 'func.return' at}}
  %p = memopt.softmax %m : tensor<2x2xf32>
  %o = memopt.matmul %p, %x : tensor<2x2xf32>, tensor<2x2xf32>
  return %o, %m : tensor<2x2xf32>, tensor<2x2xf32>
}

// -----

// A scale that is not a constant.
// CHECK-LABEL: func.func @variable_scale(
// CHECK: memopt.softmax
func.func @variable_scale(%x: tensor<16x8xf32>, %c: tensor<f32>) -> tensor<16x8xf32> {
  %s = memopt.matmul %x, %x {transpose_b = true} : tensor<16x8xf32>, tensor<16x8xf32>
  %t = memopt.mul %s, %c : tensor<16x16xf32>, tensor<f32>
  // expected-remark @+1 {{attention not fused: the scores are scaled by 'memopt.mul' at}}
  %p = memopt.softmax %t : tensor<16x16xf32>
  %o = memopt.matmul %p, %x : tensor<16x16xf32>, tensor<16x8xf32>
  return %o : tensor<16x8xf32>
}

// -----

// A softmax over the queries, not the keys.
// CHECK-LABEL: func.func @wrong_axis(
// CHECK: memopt.softmax
func.func @wrong_axis(%x: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %s = memopt.matmul %x, %x {transpose_b = true} : tensor<16x8xf32>, tensor<16x8xf32>
  // expected-remark @+1 {{attention not fused: the softmax is over axis 0, not over the keys (the last axis)}}
  %p = memopt.softmax %s {axis = 0 : i64} : tensor<16x16xf32>
  %o = memopt.matmul %p, %x : tensor<16x16xf32>, tensor<16x8xf32>
  return %o : tensor<16x8xf32>
}

// -----

// Keys shared by every batch element: matmul broadcasts them, attention
// does not.
// CHECK-LABEL: func.func @broadcast_keys(
// CHECK: memopt.softmax
func.func @broadcast_keys(%q: tensor<2x16x8xf32>, %k: tensor<16x8xf32>) -> tensor<2x16x8xf32> {
  %s = memopt.matmul %q, %k {transpose_b = true} : tensor<2x16x8xf32>, tensor<16x8xf32>
  // expected-remark @+1 {{attention not fused: memopt.attention cannot take these operands: expected q, k and v of one rank, got 2x16x8, 16x8 and 16x8}}
  %p = memopt.softmax %s : tensor<2x16x16xf32>
  %o = memopt.matmul %p, %k : tensor<2x16x16xf32>, tensor<16x8xf32>
  return %o : tensor<2x16x8xf32>
}

// -----

// v transposed: P·vᵀ is not attention's product.
// CHECK-LABEL: func.func @transposed_v(
// CHECK: memopt.softmax
func.func @transposed_v(%x: tensor<16x8xf32>, %vt: tensor<8x16xf32>) -> tensor<16x8xf32> {
  %s = memopt.matmul %x, %x {transpose_b = true} : tensor<16x8xf32>, tensor<16x8xf32>
  // expected-remark @+1 {{attention not fused: P·v transposes an operand}}
  %p = memopt.softmax %s : tensor<16x16xf32>
  %o = memopt.matmul %p, %vt {transpose_b = true} : tensor<16x16xf32>, tensor<8x16xf32>
  return %o : tensor<16x8xf32>
}

// -----

// A classifier's softmax is not attention: left alone without a remark.
// CHECK-LABEL: func.func @classifier(
// CHECK: memopt.softmax
func.func @classifier(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  %p = memopt.softmax %x : tensor<4x10xf32>
  return %p : tensor<4x10xf32>
}
