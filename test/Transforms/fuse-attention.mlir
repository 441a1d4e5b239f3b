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
