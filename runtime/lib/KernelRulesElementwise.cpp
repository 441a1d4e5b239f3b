//===- KernelRulesElementwise.cpp - rules of element-wise ops -------------===//
//
// The rules of the element-wise ops: activations, broadcasting arithmetic,
// softmax and dropout, with their backward ops, and sum_to, the reduction
// that undoes a broadcast in the backward pass.
//
//===----------------------------------------------------------------------===//

#include "KernelRulesImpl.h"

#include "memopt/Contract/ElementwiseShapes.h"
#include "memopt/Contract/ExtremumShapes.h"
#include "memopt/Contract/SoftmaxShapes.h"

namespace memopt::runtime::detail {

KernelAttrs unary(Rules &r, std::optional<double> alphaDefault) {
  r.arity(1, 1, 1);
  AlphaAttrs a;
  if (alphaDefault)
    a.alpha = r.f64("alpha", *alphaDefault);
  r.done();
  r.isFloat(r.in(0), "x");
  r.output(0, r.in(0).dtype, r.in(0).shape);
  if (alphaDefault)
    return a;
  return std::monostate{};
}

KernelAttrs binary(Rules &r) {
  r.arity(2, 2, 1);
  r.done();
  const TensorInfo &x = r.in(0), &y = r.in(1);
  r.isFloat(x, "lhs");
  r.sameDType(x, "lhs", y, "rhs");
  Shape out;
  if (shapes::ShapeProblem problem = shapes::binaryShape(x.shape, y.shape, out);
      !problem.empty())
    r.error(problem);
  r.output(0, x.dtype, out);
  return std::monostate{};
}

KernelAttrs softmax(Rules &r) {
  r.arity(1, 1, 1);
  SoftmaxAttrs a;
  int64_t axis = r.i64("axis", -1);
  a.causal = r.boolean("causal", false);
  a.safe = r.boolean("safe", false);
  r.done();
  const TensorInfo &x = r.in(0);
  r.isFloat(x, "x");
  r.minRank(x, "x", 1);
  if (shapes::ShapeProblem problem =
          shapes::softmaxShape(x.shape, axis, a.causal, a.axis);
      !problem.empty())
    r.error(problem);
  r.output(0, x.dtype, x.shape);
  return a;
}

KernelAttrs dropout(Rules &r) {
  r.arity(1, 1, 1);
  DropoutAttrs a;
  a.p = r.f64("p", 0.5);
  a.seed = r.i64("seed", 0);
  r.done();
  if (!(a.p >= 0 && a.p < 1))
    r.error("expected 'p' in [0, 1), got ", a.p);
  r.isFloat(r.in(0), "x");
  r.output(0, r.in(0).dtype, r.in(0).shape);
  return a;
}

KernelAttrs sumTo(Rules &r) {
  r.arity(1, 1, 1);
  r.done();
  const TensorInfo &x = r.in(0), &y = r.out(0);
  r.isFloat(x, "x");
  if (shapes::ShapeProblem problem = shapes::sumToShape(x.shape, y.shape);
      !problem.empty())
    r.error(problem);
  r.output(0, x.dtype, y.shape);
  return std::monostate{};
}

/// relu/gelu/sigmoid/tanh/leaky_relu/elu_backward(grad, saved): every type
/// matches.
KernelAttrs activationBackward(Rules &r, std::optional<double> alphaDefault) {
  r.arity(2, 2, 1);
  ActivationBackwardAttrs a;
  if (alphaDefault) {
    a.alpha = r.f64("alpha", *alphaDefault);
    a.fromOutput = r.boolean("from_output", false);
  }
  r.done();
  const TensorInfo &g = r.in(0);
  r.isFloat(g, "grad");
  r.sameType(g, "grad", r.in(1), "saved");
  r.output(0, g.dtype, g.shape);
  if (alphaDefault)
    return a;
  return std::monostate{};
}

KernelAttrs clamp(Rules &r, bool backward) {
  r.arity(backward ? 2 : 1, backward ? 2 : 1, 1);
  ClampAttrs a;
  a.min = r.f64("min", a.min);
  a.max = r.f64("max", a.max);
  r.done();
  if (!(a.min <= a.max))
    r.error("expected 'min' <= 'max', got min = ", a.min, " and max = ", a.max);
  const TensorInfo &x = r.in(0);
  r.isFloat(x, backward ? "grad" : "x");
  if (backward)
    r.sameType(x, "grad", r.in(1), "saved");
  r.output(0, x.dtype, x.shape);
  return a;
}

KernelAttrs compare(Rules &r) {
  r.arity(1, 1, 1);
  CompareAttrs a;
  const std::string p = r.string("predicate");
  std::optional<ComparePredicate> predicate = parseComparePredicate(p);
  if (!predicate)
    r.error("expected 'predicate' one of ", kComparePredicateList, ", got '", p,
            "'");
  a.predicate = *predicate;
  a.value = r.f64("value", std::nullopt);
  r.done();
  const TensorInfo &x = r.in(0);
  if (!isFloatDType(x.dtype) && !isIndexDType(x.dtype))
    r.error("expected x of a float or index dtype");
  r.output(0, DType::F32, x.shape);
  return a;
}

KernelAttrs reduceExtremum(Rules &r) {
  r.arity(1, 1, 1);
  r.done();
  const TensorInfo &x = r.in(0);
  r.isFloat(x, "x");
  Shape out;
  if (shapes::ShapeProblem problem = shapes::reduceExtremumShape(x.shape, out);
      !problem.empty())
    r.error(problem);
  r.output(0, x.dtype, out);
  return std::monostate{};
}

/// reduce_extremum_backward(grad, x, extremum) -> dx of x's type.
KernelAttrs reduceExtremumBackward(Rules &r) {
  r.arity(3, 3, 1);
  r.done();
  const TensorInfo &g = r.in(0), &x = r.in(1), &m = r.in(2);
  r.isFloat(x, "x");
  r.sameDType(x, "x", g, "grad");
  r.sameDType(x, "x", m, "extremum");
  if (shapes::ShapeProblem problem =
          shapes::reduceExtremumBackwardShape(g.shape, x.shape, m.shape);
      !problem.empty())
    r.error(problem);
  r.output(0, x.dtype, x.shape);
  return std::monostate{};
}

KernelAttrs softmaxBackward(Rules &r) {
  r.arity(2, 2, 1);
  SoftmaxAttrs a;
  int64_t axis = r.i64("axis", -1);
  r.done();
  const TensorInfo &g = r.in(0);
  r.isFloat(g, "grad");
  r.sameType(g, "grad", r.in(1), "output");
  r.minRank(g, "grad", 1);
  if (shapes::ShapeProblem problem =
          shapes::softmaxShape(g.shape, axis, /*causal=*/false, a.axis);
      !problem.empty())
    r.error(problem);
  r.output(0, g.dtype, g.shape);
  return a;
}

} // namespace memopt::runtime::detail
