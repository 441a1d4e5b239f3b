//===- KernelRulesAttention.cpp - rules of attention and its gradient -----===//
//
// attention(q, k, v[, key_bias]) -> (result, lse) and attention_backward(
// grad, q, k, v, out, lse[, key_bias]) -> (grad_q, grad_k, grad_v): the
// shared shape rule
// (memopt/Contract/AttentionShapes.h), one float dtype for q, k, v and the
// result, and the log-sum-exp in f32 (f64 for f64 attention), as the
// dialect's verifier checks.
//
//===----------------------------------------------------------------------===//

#include "KernelRulesImpl.h"

#include "memopt/Contract/AttentionShapes.h"

namespace memopt::runtime::detail {

namespace {

AttentionAttrs attentionAttrs(Rules &r, bool forward) {
  AttentionAttrs a;
  a.causal = r.boolean("causal", false);
  if (forward)
    a.safe = r.boolean("safe", false);
  a.scale = r.f64("scale", std::nullopt);
  a.p = r.f64("p", 0.0);
  a.seed = r.i64("seed", 0);
  r.done();
  if (!(a.p >= 0 && a.p < 1))
    r.error("expected 'p' in [0, 1), got ", a.p);
  return a;
}

/// Checks q, k, v (inputs `first`..`first + 2`) and returns the result and
/// log-sum-exp shapes; `lseDType` gets the log-sum-exp's dtype.
void checkQKV(Rules &r, size_t first, bool causal, Shape &result, Shape &lse,
              DType &lseDType) {
  const TensorInfo &q = r.in(first), &k = r.in(first + 1), &v = r.in(first + 2);
  r.isFloat(q, "q");
  r.sameDType(q, "q", k, "k");
  r.sameDType(q, "q", v, "v");
  r.minRank(q, "q", 2);
  if (shapes::ShapeProblem problem = shapes::attentionShape(
          q.shape, k.shape, v.shape, causal, result, lse);
      !problem.empty())
    r.error(problem);
  lseDType = q.dtype == DType::F64 ? DType::F64 : DType::F32;
}

/// The optional key bias, input `index` when the step has it.
void checkKeyBias(Rules &r, size_t first, size_t index) {
  if (r.numInputs() <= index)
    return;
  const TensorInfo &q = r.in(first), &k = r.in(first + 1), &b = r.in(index);
  r.sameDType(q, "q", b, "key_bias");
  Shape want;
  if (shapes::ShapeProblem problem =
          shapes::attentionKeyBiasShape(q.shape, k.shape, want);
      !problem.empty())
    r.error(problem);
  if (b.shape != want)
    r.error("expected key_bias of shape ", formatShape(want), ", got ",
            formatShape(b.shape));
}

} // namespace

KernelAttrs attention(Rules &r) {
  r.arity(3, 4, 2);
  AttentionAttrs a = attentionAttrs(r, /*forward=*/true);
  Shape result, lse;
  DType lseDType;
  checkQKV(r, 0, a.causal, result, lse, lseDType);
  checkKeyBias(r, 0, 3);
  r.output(0, r.in(0).dtype, result);
  r.output(1, lseDType, lse);
  return a;
}

KernelAttrs attentionBackward(Rules &r) {
  r.arity(6, 7, 3);
  AttentionAttrs a = attentionAttrs(r, /*forward=*/false);
  Shape result, lse;
  DType lseDType;
  checkQKV(r, 1, a.causal, result, lse, lseDType);
  checkKeyBias(r, 1, 6);
  const TensorInfo &g = r.in(0), &out = r.in(4), &l = r.in(5);
  r.sameDType(r.in(1), "q", g, "grad");
  if (g.shape != result)
    r.error("expected grad of shape ", formatShape(result), ", got ",
            formatShape(g.shape));
  r.sameType(g, "grad", out, "out");
  if (l.dtype != lseDType || l.shape != lse)
    r.error("expected lse of shape ", formatShape(lse), " and dtype ",
            dtypeName(lseDType), ", got ", describe(l));
  for (size_t i = 0; i < 3; ++i)
    r.output(i, r.in(1 + i).dtype, r.in(1 + i).shape);
  return a;
}

} // namespace memopt::runtime::detail
