//===- KernelRulesLoss.cpp - rules of loss ops ----------------------------===//
//
// The rules of the losses (cross-entropy over class indices, mean squared
// error, and the chunked linear + cross-entropy), each a 0-d result, and of
// their backward ops, which take the 0-d gradient of the loss first.
//
//===----------------------------------------------------------------------===//

#include "KernelRulesImpl.h"

#include "memopt/Contract/LinearCrossEntropyShapes.h"
#include "memopt/Contract/LossShapes.h"

namespace memopt::runtime::detail {

namespace {

void scalarLossGrad(Rules &r) {
  const TensorInfo &gl = r.in(0);
  r.isFloat(gl, "grad_loss");
  if (!gl.shape.empty())
    r.error("expected a 0-d grad_loss, got shape ", formatShape(gl.shape));
}

} // namespace

KernelAttrs crossEntropy(Rules &r) {
  r.arity(2, 2, 1);
  r.done();
  const TensorInfo &logits = r.in(0), &labels = r.in(1);
  r.isFloat(logits, "logits");
  r.rank(logits, "logits", 2, "NxC");
  r.isInteger(labels, "labels");
  r.rank(labels, "labels", 1, "N");
  Shape out;
  if (shapes::ShapeProblem problem =
          shapes::crossEntropyShape(logits.shape, labels.shape, out);
      !problem.empty())
    r.error(problem);
  r.output(0, logits.dtype, out);
  return std::monostate{};
}

KernelAttrs mseLoss(Rules &r) {
  r.arity(2, 2, 1);
  r.done();
  const TensorInfo &p = r.in(0), &t = r.in(1);
  r.isFloat(p, "prediction");
  r.sameDType(p, "prediction", t, "target");
  Shape out;
  if (shapes::ShapeProblem problem =
          shapes::mseLossShape(p.shape, t.shape, out);
      !problem.empty())
    r.error(problem);
  r.output(0, p.dtype, out);
  return std::monostate{};
}

KernelAttrs crossEntropyBackward(Rules &r) {
  r.arity(3, 3, 1);
  r.done();
  scalarLossGrad(r);
  const TensorInfo &logits = r.in(1), &labels = r.in(2);
  r.isFloat(logits, "logits");
  r.rank(logits, "logits", 2, "NxC");
  r.isInteger(labels, "labels");
  r.rank(labels, "labels", 1, "N");
  Shape loss;
  if (shapes::ShapeProblem problem =
          shapes::crossEntropyShape(logits.shape, labels.shape, loss);
      !problem.empty())
    r.error(problem);
  r.output(0, logits.dtype, logits.shape);
  return std::monostate{};
}

KernelAttrs mseLossBackward(Rules &r) {
  r.arity(3, 3, 1);
  r.done();
  scalarLossGrad(r);
  const TensorInfo &p = r.in(1), &t = r.in(2);
  r.isFloat(p, "prediction");
  r.sameDType(p, "prediction", t, "target");
  Shape loss;
  if (shapes::ShapeProblem problem =
          shapes::mseLossShape(p.shape, t.shape, loss);
      !problem.empty())
    r.error(problem);
  r.output(0, p.dtype, p.shape);
  return std::monostate{};
}

namespace {

/// hidden, weight and labels (inputs `first`..`first + 2`), the optional
/// bias (input `bias`, when there are that many) and `chunk`; returns the
/// row log-sum-exps' shape and sets the loss dtype.
Shape checkLinearCrossEntropy(Rules &r, size_t first, size_t bias,
                              LinearCrossEntropyAttrs &a, DType &lossDType) {
  a.chunk = r.i64("chunk", std::nullopt);
  r.done();
  if (a.chunk < 1)
    r.error("expected 'chunk' >= 1, got ", a.chunk);
  const TensorInfo &h = r.in(first), &w = r.in(first + 1),
                   &labels = r.in(first + 2);
  r.isFloat(h, "hidden");
  r.rank(h, "hidden", 2, "NxH");
  r.sameDType(h, "hidden", w, "weight");
  r.rank(w, "weight", 2, "VxH");
  r.isInteger(labels, "labels");
  r.rank(labels, "labels", 1, "N");
  Shape lse;
  if (shapes::ShapeProblem problem =
          shapes::linearCrossEntropyShape(h.shape, w.shape, labels.shape, lse);
      !problem.empty())
    r.error(problem);
  if (r.numInputs() > bias) {
    const TensorInfo &b = r.in(bias);
    r.sameDType(w, "weight", b, "bias");
    if (b.shape != Shape{w.shape[0]})
      r.error("expected bias of shape ", w.shape[0], " (weight's rows), got ",
              formatShape(b.shape));
  }
  lossDType = h.dtype == DType::F64 ? DType::F64 : DType::F32;
  return lse;
}

/// The number of outputs: `plain`, one more (grad_bias) with a bias.
size_t withBias(const Rules &r, size_t bias, size_t plain) {
  return r.numInputs() > bias ? plain + 1 : plain;
}

} // namespace

/// linear_cross_entropy(hidden, weight, labels[, bias]) -> (loss, lse).
KernelAttrs linearCrossEntropy(Rules &r) {
  r.arity(3, 4, 2);
  LinearCrossEntropyAttrs a;
  DType dtype;
  Shape lse = checkLinearCrossEntropy(r, 0, 3, a, dtype);
  r.output(0, dtype, {});
  r.output(1, dtype, lse);
  return a;
}

/// linear_cross_entropy_with_grad(grad_loss, hidden, weight, labels[, bias])
/// -> (loss, grad_hidden, grad_weight[, grad_bias]).
KernelAttrs linearCrossEntropyWithGrad(Rules &r) {
  r.arity(4, 5, withBias(r, 4, 3));
  LinearCrossEntropyAttrs a;
  DType dtype;
  checkLinearCrossEntropy(r, 1, 4, a, dtype);
  const TensorInfo &g = r.in(0);
  if (g.dtype != dtype || !g.shape.empty())
    r.error("expected grad_loss of dtype ", dtypeName(dtype),
            " and shape scalar, got ", describe(g));
  r.output(0, dtype, {});
  r.output(1, r.in(1).dtype, r.in(1).shape);
  r.output(2, r.in(2).dtype, r.in(2).shape);
  if (r.numInputs() > 4)
    r.output(3, r.in(4).dtype, r.in(4).shape);
  return a;
}

/// linear_cross_entropy_backward(grad_loss, hidden, weight, labels, lse[,
/// bias]) -> (grad_hidden, grad_weight[, grad_bias]).
KernelAttrs linearCrossEntropyBackward(Rules &r) {
  r.arity(5, 6, withBias(r, 5, 2));
  LinearCrossEntropyAttrs a;
  DType dtype;
  Shape lse = checkLinearCrossEntropy(r, 1, 5, a, dtype);
  const TensorInfo &g = r.in(0), &l = r.in(4);
  if (g.dtype != dtype || !g.shape.empty())
    r.error("expected grad_loss of dtype ", dtypeName(dtype),
            " and shape scalar, got ", describe(g));
  if (l.dtype != dtype || l.shape != lse)
    r.error("expected lse of shape ", formatShape(lse), " and dtype ",
            dtypeName(dtype), ", got ", describe(l));
  r.output(0, r.in(1).dtype, r.in(1).shape);
  r.output(1, r.in(2).dtype, r.in(2).shape);
  if (r.numInputs() > 5)
    r.output(2, r.in(5).dtype, r.in(5).shape);
  return a;
}

} // namespace memopt::runtime::detail
