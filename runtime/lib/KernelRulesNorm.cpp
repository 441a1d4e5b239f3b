//===- KernelRulesNorm.cpp - rules of normalisation ops -------------------===//
//
// The rules of batch norm (training and inference), InPlace-ABN's fused
// batch_norm_act and layer norm, with their backward ops.
//
//===----------------------------------------------------------------------===//

#include "KernelRulesImpl.h"

#include "memopt/Contract/NormShapes.h"

namespace memopt::runtime::detail {

namespace {

/// Batch norm's operands, epsilon and momentum, and its outputs: y like x,
/// then `numOutputs - 1` per-channel outputs like gamma (running mean and
/// variance, and batch_norm_act's saved_invstd). Training mode has a
/// `momentum` and uses batch statistics; batch_norm_inference has neither.
void checkBatchNorm(Rules &r, double epsilon, std::optional<double> momentum,
                    size_t numOutputs) {
  const TensorInfo &x = r.in(0), &gamma = r.in(1);
  r.isFloat(x, "x");
  r.minRank(x, "x", 2);
  r.isFloat(gamma, "gamma");
  r.rank(gamma, "gamma", 1);
  if (shapes::ShapeProblem problem = shapes::batchNormShape(
          x.shape, gamma.shape, /*batchStatistics=*/momentum.has_value());
      !problem.empty())
    r.error(problem);
  r.sameType(gamma, "gamma", r.in(2), "beta");
  r.sameType(gamma, "gamma", r.in(3), "running_mean");
  r.sameType(gamma, "gamma", r.in(4), "running_var");
  if (!(epsilon > 0))
    r.error("expected 'epsilon' > 0, got ", epsilon);
  if (momentum && !(*momentum >= 0 && *momentum <= 1))
    r.error("expected 'momentum' in [0, 1], got ", *momentum);
  r.output(0, x.dtype, x.shape);
  for (size_t o = 1; o < numOutputs; ++o)
    r.output(o, gamma.dtype, gamma.shape);
}

/// InPlace-ABN's `activation` and `alpha` (both required): an activation
/// the backward can invert.
InvertibleActivation invertibleActivation(Rules &r, double &alpha) {
  std::string name = r.string("activation");
  alpha = r.f64("alpha", std::nullopt);
  InvertibleActivation activation = InvertibleActivation::LeakyRelu;
  if (name == "leaky_relu")
    activation = InvertibleActivation::LeakyRelu;
  else if (name == "elu")
    activation = InvertibleActivation::Elu;
  else if (name == "relu")
    r.error("activation 'relu' is not invertible (negative inputs map to 0), "
            "so the backward could not rebuild its input; expected "
            "'leaky_relu' or 'elu'");
  else
    r.error("expected 'activation' 'leaky_relu' or 'elu', got '", name, "'");
  if (!(alpha > 0))
    r.error("expected 'alpha' > 0 (an invertible activation), got ", alpha);
  return activation;
}

} // namespace

KernelAttrs batchNorm(Rules &r) {
  r.arity(5, 5, 3);
  BatchNormAttrs a;
  a.epsilon = r.f64("epsilon", 1e-5);
  a.momentum = r.f64("momentum", 0.1);
  r.done();
  checkBatchNorm(r, a.epsilon, a.momentum, 3);
  return a;
}

/// batch_norm_act(x, gamma, beta, running_mean, running_var) ->
/// (y, new_running_mean, new_running_var, saved_invstd).
KernelAttrs batchNormAct(Rules &r) {
  r.arity(5, 5, 4);
  BatchNormActAttrs a;
  a.epsilon = r.f64("epsilon", 1e-5);
  a.momentum = r.f64("momentum", 0.1);
  a.activation = invertibleActivation(r, a.alpha);
  r.done();
  checkBatchNorm(r, a.epsilon, a.momentum, 4);
  return a;
}

/// batch_norm_act_backward(grad, output, gamma, beta, saved_invstd) ->
/// (grad_x, grad_gamma, grad_beta).
KernelAttrs batchNormActBackward(Rules &r) {
  r.arity(5, 5, 3);
  BatchNormActBackwardAttrs a;
  a.activation = invertibleActivation(r, a.alpha);
  r.done();
  const TensorInfo &g = r.in(0), &y = r.in(1), &gamma = r.in(2);
  r.isFloat(g, "grad");
  r.sameType(g, "grad", y, "output");
  r.minRank(y, "output", 2);
  r.isFloat(gamma, "gamma");
  r.rank(gamma, "gamma", 1);
  if (shapes::ShapeProblem problem = shapes::batchNormShape(
          y.shape, gamma.shape, /*batchStatistics=*/false, "output");
      !problem.empty())
    r.error(problem);
  r.sameType(gamma, "gamma", r.in(3), "beta");
  r.sameType(gamma, "gamma", r.in(4), "saved_invstd");
  r.output(0, y.dtype, y.shape);
  r.output(1, gamma.dtype, gamma.shape);
  r.output(2, gamma.dtype, gamma.shape);
  return a;
}

KernelAttrs batchNormInference(Rules &r) {
  r.arity(5, 5, 1);
  BatchNormAttrs a;
  a.epsilon = r.f64("epsilon", 1e-5);
  r.done();
  checkBatchNorm(r, a.epsilon, /*momentum=*/std::nullopt, 1);
  return a;
}

KernelAttrs layerNorm(Rules &r, bool rms) {
  r.arity(rms ? 2 : 3, rms ? 2 : 3, 1);
  LayerNormAttrs a;
  a.epsilon = r.f64("epsilon", rms ? 1e-6 : 1e-5);
  r.done();
  const TensorInfo &x = r.in(0), &gamma = r.in(1);
  r.isFloat(x, "x");
  r.isFloat(gamma, "gamma");
  if (shapes::ShapeProblem problem =
          shapes::layerNormShape(x.shape, gamma.shape);
      !problem.empty())
    r.error(problem);
  if (!rms)
    r.sameType(gamma, "gamma", r.in(2), "beta");
  if (!(a.epsilon > 0))
    r.error("expected 'epsilon' > 0, got ", a.epsilon);
  r.output(0, x.dtype, x.shape);
  return a;
}

/// batch_norm_backward / layer_norm_backward(grad_output, x, gamma) ->
/// (grad_x, grad_gamma, grad_beta), rms_norm_backward the same without
/// grad_beta. gamma may have another float dtype than x, as in the forward
/// ops.
KernelAttrs normBackward(Rules &r, NormRule norm) {
  const bool isBatch = norm == NormRule::Batch, rms = norm == NormRule::Rms;
  r.arity(3, 3, rms ? 2 : 3);
  NormBackwardAttrs a;
  a.epsilon = r.f64("epsilon", rms ? 1e-6 : 1e-5);
  r.done();
  const TensorInfo &x = r.in(1), &gamma = r.in(2);
  r.isFloat(x, "x");
  r.sameType(x, "x", r.in(0), "grad_output");
  r.isFloat(gamma, "gamma");
  if (isBatch) {
    r.minRank(x, "x", 2);
    r.rank(gamma, "gamma", 1);
  }
  if (shapes::ShapeProblem problem =
          isBatch
              ? shapes::batchNormShape(x.shape, gamma.shape,
                                       /*batchStatistics=*/false, "x", "gamma")
              : shapes::layerNormShape(x.shape, gamma.shape);
      !problem.empty())
    r.error(problem);
  if (!(a.epsilon > 0))
    r.error("expected 'epsilon' > 0, got ", a.epsilon);
  r.output(0, x.dtype, x.shape);
  r.output(1, gamma.dtype, gamma.shape);
  if (!rms)
    r.output(2, gamma.dtype, gamma.shape);
  return a;
}

} // namespace memopt::runtime::detail
