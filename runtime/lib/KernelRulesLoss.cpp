//===- KernelRulesLoss.cpp - rules of loss ops ----------------------------===//
//
// The rules of the losses (cross-entropy over class indices, mean squared
// error), each a 0-d result, and of their backward ops, which take the 0-d
// gradient of the loss first.
//
//===----------------------------------------------------------------------===//

#include "KernelRulesImpl.h"

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

} // namespace memopt::runtime::detail
