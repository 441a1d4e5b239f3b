// RUN: memopt-opt %s --memopt-fuse-loss-gradient=remarks=true -split-input-file -verify-diagnostics | FileCheck %s

// --memopt-fuse-loss-gradient: a linear_cross_entropy and its backward op
// on the same operands become one linear_cross_entropy_with_grad in the
// backward op's place, when nothing reads the loss before it and only the
// backward op reads the log-sum-exps; other pairs stay, with a remark.

// The training step's shape: the seed 1.0, the head's pair, the loss
// returned. The fused op sits where the backward op was (after %x, which
// the forward op preceded), and the loss comes from it.
// CHECK-LABEL: func.func @step(
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant
// CHECK-NEXT:    %[[X:.*]] = memopt.relu %arg3
// CHECK-NEXT:    %[[L:.*]], %[[DH:.*]], %[[DW:.*]] = memopt.linear_cross_entropy_with_grad %[[ONE]], %arg0, %arg1, %arg2 {chunk = 4 : i64} : (tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>, tensor<16xi64>) -> (tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>)
// CHECK-NEXT:    return %[[L]], %[[DH]], %[[DW]], %[[X]]
// CHECK-NOT:     linear_cross_entropy
func.func @step(%h: tensor<16x8xf32>, %w: tensor<100x8xf32>, %l: tensor<16xi64>, %y: tensor<4xf32>)
    -> (tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>, tensor<4xf32>) {
  %one = arith.constant dense<1.0> : tensor<f32>
  // expected-remark @+1 {{fused linear_cross_entropy with its backward: each chunk's logits computed once}}
  %loss, %lse = memopt.linear_cross_entropy %h, %w, %l {chunk = 4 : i64}
      : tensor<16x8xf32>, tensor<100x8xf32>, tensor<16xi64>
  %x = memopt.relu %y : tensor<4xf32>
  %dh, %dw = memopt.linear_cross_entropy_backward %one, %h, %w, %l, %lse {chunk = 4 : i64}
      : (tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>, tensor<16xi64>, tensor<16xf32>)
      -> (tensor<16x8xf32>, tensor<100x8xf32>)
  return %loss, %dh, %dw, %x : tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>, tensor<4xf32>
}

// -----

// With a bias: the fused op takes it last and returns grad_bias.
// CHECK-LABEL: func.func @bias(
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant
// CHECK-NEXT:    %[[L:.*]], %[[DH:.*]], %[[DW:.*]], %[[DB:.*]] = memopt.linear_cross_entropy_with_grad %[[ONE]], %arg0, %arg1, %arg2, %arg3 {chunk = 4 : i64} : (tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>, tensor<16xi64>, tensor<100xf32>) -> (tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>, tensor<100xf32>)
// CHECK-NEXT:    return %[[L]], %[[DH]], %[[DW]], %[[DB]]
func.func @bias(%h: tensor<16x8xf32>, %w: tensor<100x8xf32>, %l: tensor<16xi64>, %b: tensor<100xf32>)
    -> (tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>, tensor<100xf32>) {
  %one = arith.constant dense<1.0> : tensor<f32>
  // expected-remark @+1 {{fused linear_cross_entropy with its backward}}
  %loss, %lse = memopt.linear_cross_entropy %h, %w, %l bias %b {chunk = 4 : i64}
      : tensor<16x8xf32>, tensor<100x8xf32>, tensor<16xi64>, tensor<100xf32>
  %dh, %dw, %db = memopt.linear_cross_entropy_backward %one, %h, %w, %l, %lse, %b {chunk = 4 : i64}
      : (tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>, tensor<16xi64>, tensor<16xf32>, tensor<100xf32>)
      -> (tensor<16x8xf32>, tensor<100x8xf32>, tensor<100xf32>)
  return %loss, %dh, %dw, %db : tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>, tensor<100xf32>
}

// -----

// A backward op without the forward op's bias is not its pair.
// CHECK-LABEL: func.func @bias_dropped(
// CHECK: memopt.linear_cross_entropy_backward
func.func @bias_dropped(%h: tensor<16x8xf32>, %w: tensor<100x8xf32>, %l: tensor<16xi64>, %b: tensor<100xf32>)
    -> (tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>) {
  %one = arith.constant dense<1.0> : tensor<f32>
  %loss, %lse = memopt.linear_cross_entropy %h, %w, %l bias %b {chunk = 4 : i64}
      : tensor<16x8xf32>, tensor<100x8xf32>, tensor<16xi64>, tensor<100xf32>
  // expected-remark @+1 {{not fused with}}
  %dh, %dw = memopt.linear_cross_entropy_backward %one, %h, %w, %l, %lse {chunk = 4 : i64}
      : (tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>, tensor<16xi64>, tensor<16xf32>)
      -> (tensor<16x8xf32>, tensor<100x8xf32>)
  return %loss, %dh, %dw : tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>
}

// -----

// f64, and a loss read after the backward op (by an op, not the return).
// CHECK-LABEL: func.func @f64_loss_read_later(
// CHECK:         %[[L:.*]], %{{.*}}, %{{.*}} = memopt.linear_cross_entropy_with_grad %arg3, %arg0, %arg1, %arg2 {chunk = 16 : i64} : (tensor<f64>, tensor<16x8xf64>, tensor<100x8xf64>, tensor<16xi32>)
// CHECK-NEXT:    memopt.mul %[[L]], %arg3
func.func @f64_loss_read_later(%h: tensor<16x8xf64>, %w: tensor<100x8xf64>, %l: tensor<16xi32>, %g: tensor<f64>)
    -> (tensor<f64>, tensor<16x8xf64>, tensor<100x8xf64>) {
  // expected-remark @+1 {{fused linear_cross_entropy with its backward}}
  %loss, %lse = memopt.linear_cross_entropy %h, %w, %l {chunk = 16 : i64}
      : tensor<16x8xf64>, tensor<100x8xf64>, tensor<16xi32>
  %dh, %dw = memopt.linear_cross_entropy_backward %g, %h, %w, %l, %lse {chunk = 16 : i64}
      : (tensor<f64>, tensor<16x8xf64>, tensor<100x8xf64>, tensor<16xi32>, tensor<16xf64>)
      -> (tensor<16x8xf64>, tensor<100x8xf64>)
  %scaled = memopt.mul %loss, %g : tensor<f64>, tensor<f64>
  return %scaled, %dh, %dw : tensor<f64>, tensor<16x8xf64>, tensor<100x8xf64>
}

// -----

// The backward op's grad_loss is the loss itself: the loss is read before
// (by) the backward op, so the pair stays.
// CHECK-LABEL: func.func @loss_is_the_seed(
// CHECK:         memopt.linear_cross_entropy %
// CHECK:         memopt.linear_cross_entropy_backward
func.func @loss_is_the_seed(%h: tensor<16x8xf32>, %w: tensor<100x8xf32>, %l: tensor<16xi64>)
    -> (tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>) {
  %loss, %lse = memopt.linear_cross_entropy %h, %w, %l {chunk = 4 : i64}
      : tensor<16x8xf32>, tensor<100x8xf32>, tensor<16xi64>
  // expected-remark @+1 {{linear_cross_entropy_backward not fused with its forward op: the loss is read before the backward op}}
  %dh, %dw = memopt.linear_cross_entropy_backward %loss, %h, %w, %l, %lse {chunk = 4 : i64}
      : (tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>, tensor<16xi64>, tensor<16xf32>)
      -> (tensor<16x8xf32>, tensor<100x8xf32>)
  return %loss, %dh, %dw : tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>
}

// -----

// The loss read by a forward op between the pair: it would have to wait
// for the backward op, so the pair stays.
func.func @loss_read_between(%h: tensor<16x8xf32>, %w: tensor<100x8xf32>, %l: tensor<16xi64>, %g: tensor<f32>)
    -> (tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>) {
  %loss, %lse = memopt.linear_cross_entropy %h, %w, %l {chunk = 4 : i64}
      : tensor<16x8xf32>, tensor<100x8xf32>, tensor<16xi64>
  %twice = memopt.add %loss, %loss : tensor<f32>, tensor<f32>
  // expected-remark @+1 {{the loss is read before the backward op}}
  %dh, %dw = memopt.linear_cross_entropy_backward %g, %h, %w, %l, %lse {chunk = 4 : i64}
      : (tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>, tensor<16xi64>, tensor<16xf32>)
      -> (tensor<16x8xf32>, tensor<100x8xf32>)
  return %twice, %dh, %dw : tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>
}

// -----

// The log-sum-exps returned as well: they must stay a tensor.
func.func @lse_read_elsewhere(%h: tensor<16x8xf32>, %w: tensor<100x8xf32>, %l: tensor<16xi64>, %g: tensor<f32>)
    -> (tensor<f32>, tensor<16xf32>, tensor<16x8xf32>, tensor<100x8xf32>) {
  %loss, %lse = memopt.linear_cross_entropy %h, %w, %l {chunk = 4 : i64}
      : tensor<16x8xf32>, tensor<100x8xf32>, tensor<16xi64>
  // expected-remark @+1 {{something else reads the log-sum-exps}}
  %dh, %dw = memopt.linear_cross_entropy_backward %g, %h, %w, %l, %lse {chunk = 4 : i64}
      : (tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>, tensor<16xi64>, tensor<16xf32>)
      -> (tensor<16x8xf32>, tensor<100x8xf32>)
  return %loss, %lse, %dh, %dw : tensor<f32>, tensor<16xf32>, tensor<16x8xf32>, tensor<100x8xf32>
}

// -----

// Other operands than the forward op's (another chunk; other labels).
func.func @other_operands(%h: tensor<16x8xf32>, %w: tensor<100x8xf32>, %l: tensor<16xi64>, %l2: tensor<16xi64>, %g: tensor<f32>)
    -> (tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>, tensor<16x8xf32>, tensor<100x8xf32>) {
  %loss, %lse = memopt.linear_cross_entropy %h, %w, %l {chunk = 4 : i64}
      : tensor<16x8xf32>, tensor<100x8xf32>, tensor<16xi64>
  // expected-remark @+1 {{it does not take the forward op's hidden, weight, labels, bias and chunk}}
  %dh, %dw = memopt.linear_cross_entropy_backward %g, %h, %w, %l, %lse {chunk = 8 : i64}
      : (tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>, tensor<16xi64>, tensor<16xf32>)
      -> (tensor<16x8xf32>, tensor<100x8xf32>)
  // expected-remark @+1 {{it does not take the forward op's hidden, weight, labels, bias and chunk}}
  %dh2, %dw2 = memopt.linear_cross_entropy_backward %g, %h, %w, %l2, %lse {chunk = 4 : i64}
      : (tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>, tensor<16xi64>, tensor<16xf32>)
      -> (tensor<16x8xf32>, tensor<100x8xf32>)
  return %loss, %dh, %dw, %dh2, %dw2 : tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>, tensor<16x8xf32>, tensor<100x8xf32>
}

// -----

// Log-sum-exps from an argument (a graph that saved them elsewhere).
func.func @lse_argument(%h: tensor<16x8xf32>, %w: tensor<100x8xf32>, %l: tensor<16xi64>, %g: tensor<f32>, %lse: tensor<16xf32>)
    -> (tensor<16x8xf32>, tensor<100x8xf32>) {
  // expected-remark @+1 {{its log-sum-exps are not a linear_cross_entropy's}}
  %dh, %dw = memopt.linear_cross_entropy_backward %g, %h, %w, %l, %lse {chunk = 4 : i64}
      : (tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>, tensor<16xi64>, tensor<16xf32>)
      -> (tensor<16x8xf32>, tensor<100x8xf32>)
  return %dh, %dw : tensor<16x8xf32>, tensor<100x8xf32>
}

// -----

// Foreign IR is refused with a located error, as by every memopt pass.
func.func @foreign(%h: tensor<16x8xf32>) -> tensor<16x8xf32> {
  // expected-error @+1 {{'arith.addf' op is not supported by memopt-fuse-loss-gradient in a memopt graph}}
  %0 = arith.addf %h, %h : tensor<16x8xf32>
  %1 = memopt.relu %0 : tensor<16x8xf32>
  return %1 : tensor<16x8xf32>
}

// -----

// Mixed precision: the backward op reads the partition's recomputed f16
// cast of the weight where the forward op read the original cast. The copy
// is the same value, so the pair fuses on the copy, and the original cast,
// which nothing else reads, goes with the forward op.
// CHECK-LABEL: func.func @recomputed_weight_cast(
// CHECK-NEXT:    %[[H:.*]] = memopt.cast %arg0
// CHECK-NEXT:    %[[X:.*]] = memopt.relu %arg3
// CHECK-NEXT:    %[[W:.*]] = memopt.cast %arg1 {memopt.recompute}
// CHECK-NEXT:    %[[L:.*]], %[[DH:.*]], %[[DW:.*]] = memopt.linear_cross_entropy_with_grad %arg4, %[[H]], %[[W]], %arg2 {chunk = 4 : i64}
// CHECK-NEXT:    return %[[L]], %[[DH]], %[[DW]], %[[X]]
func.func @recomputed_weight_cast(%h: tensor<16x8xf32>, %w: tensor<100x8xf32>, %l: tensor<16xi64>, %y: tensor<4xf32>, %g: tensor<f32>)
    -> (tensor<f32>, tensor<16x8xf16>, tensor<100x8xf16>, tensor<4xf32>) {
  %hc = memopt.cast %h : tensor<16x8xf32> to tensor<16x8xf16>
  %wc = memopt.cast %w : tensor<100x8xf32> to tensor<100x8xf16>
  // expected-remark @+1 {{fused linear_cross_entropy with its backward}}
  %loss, %lse = memopt.linear_cross_entropy %hc, %wc, %l {chunk = 4 : i64}
      : tensor<16x8xf16>, tensor<100x8xf16>, tensor<16xi64>
  %x = memopt.relu %y : tensor<4xf32>
  %wr = memopt.cast %w {memopt.recompute} : tensor<100x8xf32> to tensor<100x8xf16>
  %dh, %dw = memopt.linear_cross_entropy_backward %g, %hc, %wr, %l, %lse {chunk = 4 : i64}
      : (tensor<f32>, tensor<16x8xf16>, tensor<100x8xf16>, tensor<16xi64>, tensor<16xf32>)
      -> (tensor<16x8xf16>, tensor<100x8xf16>)
  return %loss, %dh, %dw, %x : tensor<f32>, tensor<16x8xf16>, tensor<100x8xf16>, tensor<4xf32>
}

// -----

// A cast of another weight is not a copy of the forward op's: the pair
// stays, and so does the forward's cast.
// CHECK-LABEL: func.func @cast_of_another_weight(
// CHECK:         memopt.cast %arg1 :
// CHECK:         memopt.linear_cross_entropy %
// CHECK:         memopt.linear_cross_entropy_backward
func.func @cast_of_another_weight(%h: tensor<16x8xf16>, %w: tensor<100x8xf32>, %l: tensor<16xi64>, %w2: tensor<100x8xf32>, %g: tensor<f32>)
    -> (tensor<f32>, tensor<16x8xf16>, tensor<100x8xf16>) {
  %wc = memopt.cast %w : tensor<100x8xf32> to tensor<100x8xf16>
  %loss, %lse = memopt.linear_cross_entropy %h, %wc, %l {chunk = 4 : i64}
      : tensor<16x8xf16>, tensor<100x8xf16>, tensor<16xi64>
  %wr = memopt.cast %w2 {memopt.recompute} : tensor<100x8xf32> to tensor<100x8xf16>
  // expected-remark @+1 {{it does not take the forward op's hidden, weight, labels, bias and chunk}}
  %dh, %dw = memopt.linear_cross_entropy_backward %g, %h, %wr, %l, %lse {chunk = 4 : i64}
      : (tensor<f32>, tensor<16x8xf16>, tensor<100x8xf16>, tensor<16xi64>, tensor<16xf32>)
      -> (tensor<16x8xf16>, tensor<100x8xf16>)
  return %loss, %dh, %dw : tensor<f32>, tensor<16x8xf16>, tensor<100x8xf16>
}

// -----

// A copy two ops deep (the cast of a transpose, both recomputed) is the
// same value too; both originals go with the forward op.
// CHECK-LABEL: func.func @recomputed_chain(
// CHECK-NEXT:    %[[T:.*]] = memopt.transpose %arg1 {memopt.recompute, permutation = array<i64: 1, 0>}
// CHECK-NEXT:    %[[W:.*]] = memopt.cast %[[T]] {memopt.recompute}
// CHECK-NEXT:    %[[L:.*]], %[[DH:.*]], %[[DW:.*]] = memopt.linear_cross_entropy_with_grad %arg3, %arg0, %[[W]], %arg2 {chunk = 4 : i64}
// CHECK-NEXT:    return %[[L]], %[[DH]], %[[DW]]
func.func @recomputed_chain(%h: tensor<16x8xf16>, %w: tensor<8x100xf32>, %l: tensor<16xi64>, %g: tensor<f32>)
    -> (tensor<f32>, tensor<16x8xf16>, tensor<100x8xf16>) {
  %t = memopt.transpose %w {permutation = array<i64: 1, 0>} : tensor<8x100xf32>
  %wc = memopt.cast %t : tensor<100x8xf32> to tensor<100x8xf16>
  // expected-remark @+1 {{fused linear_cross_entropy with its backward}}
  %loss, %lse = memopt.linear_cross_entropy %h, %wc, %l {chunk = 4 : i64}
      : tensor<16x8xf16>, tensor<100x8xf16>, tensor<16xi64>
  %t2 = memopt.transpose %w {memopt.recompute, permutation = array<i64: 1, 0>} : tensor<8x100xf32>
  %wr = memopt.cast %t2 {memopt.recompute} : tensor<100x8xf32> to tensor<100x8xf16>
  %dh, %dw = memopt.linear_cross_entropy_backward %g, %h, %wr, %l, %lse {chunk = 4 : i64}
      : (tensor<f32>, tensor<16x8xf16>, tensor<100x8xf16>, tensor<16xi64>, tensor<16xf32>)
      -> (tensor<16x8xf16>, tensor<100x8xf16>)
  return %loss, %dh, %dw : tensor<f32>, tensor<16x8xf16>, tensor<100x8xf16>
}
