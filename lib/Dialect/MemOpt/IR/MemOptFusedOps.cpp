//===- MemOptFusedOps.cpp - verifiers of the fused ops --------------------===//
//
// The fused ops (MemOptFusedOps.td). Shapes of batch_norm_act are inferred
// by batch norm's rules (MemOptNormOps.cpp); what is checked here is what
// makes InPlace-ABN valid: an activation the backward can invert. The
// attention and linear cross-entropy ops follow the shared rules of
// memopt/Contract/AttentionShapes.h and LinearCrossEntropyShapes.h.
//
//===----------------------------------------------------------------------===//

#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"

#include "memopt/Contract/AttentionShapes.h"
#include "memopt/Contract/LinearCrossEntropyShapes.h"
#include "memopt/Contract/NormShapes.h"

#include "ShapeChecker.h"

#include <cmath>

using namespace mlir;
using namespace memopt;
using memopt::detail::ShapeChecker;

/// `activation` must be leaky_relu or elu and `alpha` finite and positive:
/// the backward rebuilds the activation's input from its output.
static LogicalResult
verifyInvertibleActivation(Operation *op, StringRef activation, double alpha) {
  if (activation == "relu")
    return op->emitOpError(
        "cannot use activation \"relu\": ReLU is not invertible (every "
        "negative input maps to 0), so the backward could not rebuild its "
        "input from the output; use \"leaky_relu\" or \"elu\" with alpha > 0");
  if (activation != "leaky_relu" && activation != "elu")
    return op->emitOpError("expected 'activation' \"leaky_relu\" or \"elu\", "
                           "got \"")
           << activation << "\"";
  if (!std::isfinite(alpha) || alpha <= 0) {
    InFlightDiagnostic diag = op->emitOpError("expected 'alpha' > 0, got ")
                              << alpha;
    if (alpha == 0)
      diag << ": slope 0 makes " << activation
           << " a ReLU, which is not invertible (every negative input maps to "
              "0), so the backward could not rebuild its input from the "
              "output";
    else
      diag << ": the backward rebuilds the activation's input from its "
              "output, which needs a finite, positive alpha";
    return diag;
  }
  return success();
}

LogicalResult BatchNormActOp::verify() {
  return verifyInvertibleActivation(*this, getActivation(),
                                    getAlpha().convertToDouble());
}

LogicalResult BatchNormActBackwardOp::verify() {
  RankedTensorType y = getOutput().getType();
  RankedTensorType gamma = getGamma().getType();
  if (y.getRank() < 2 || gamma.getRank() != 1)
    return emitOpError("expected output of rank ≥ 2 (NxCx...) and "
                       "per-channel operands of rank 1, got ")
           << y << " and " << gamma;
  if (shapes::ShapeProblem problem =
          shapes::batchNormShape(y.getShape().vec(), gamma.getShape().vec(),
                                 /*batchStatistics=*/false, "output");
      !problem.empty())
    return emitOpError(problem);
  return verifyInvertibleActivation(*this, getActivation(),
                                    getAlpha().convertToDouble());
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

namespace {

/// The element type of attention's log-sum-exp: f64 for f64 attention,
/// else f32 (the kernels' softmax runs in f32 for f16 and bf16).
Type lseElementType(Type element) {
  return element.isF64() ? element : Float32Type::get(element.getContext());
}

/// Checks q, k, v, the optional key bias and the attributes shared by
/// attention and its backward op; sets the result and log-sum-exp types.
LogicalResult checkAttention(const ShapeChecker &check, Value qv, Value kv,
                             Value vv, Value biasv, bool causal, double p,
                             RankedTensorType &result, RankedTensorType &lse) {
  auto q = check.tensor(qv, "q");
  auto k = check.tensor(kv, "k");
  auto v = check.tensor(vv, "v");
  if (failed(q) || failed(k) || failed(v))
    return failure();
  if (q->getRank() < 2)
    return check.error("expected q of rank ≥ 2 (...xSqxD), got ", *q);
  if (failed(check.sameElementType(*q, "q", *k, "k")) ||
      failed(check.sameElementType(*q, "q", *v, "v")))
    return failure();
  if (!(p >= 0 && p < 1))
    return check.error("expected 'p' in [0, 1), got ", p);
  shapes::Dims resultDims, lseDims;
  if (shapes::ShapeProblem problem = shapes::attentionShape(
          q->getShape().vec(), k->getShape().vec(), v->getShape().vec(), causal,
          resultDims, lseDims);
      !problem.empty())
    return check.error(problem);
  if (biasv) {
    auto bias = check.tensor(biasv, "key_bias");
    if (failed(bias) ||
        failed(check.sameElementType(*q, "q", *bias, "key_bias")))
      return failure();
    shapes::Dims biasDims;
    if (shapes::ShapeProblem problem = shapes::attentionKeyBiasShape(
            q->getShape().vec(), k->getShape().vec(), biasDims);
        !problem.empty())
      return check.error(problem);
    if (bias->getShape() != ArrayRef<int64_t>(biasDims))
      return check.error("expected key_bias of shape ",
                         shapes::formatDims(biasDims),
                         " (q's dimensions before its heads, then the keys), "
                         "got ",
                         *bias);
  }
  Type element = q->getElementType();
  result = RankedTensorType::get(resultDims, element);
  lse = RankedTensorType::get(lseDims, lseElementType(element));
  return success();
}

} // namespace

LogicalResult AttentionOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, getOperationName());
  RankedTensorType result, lse;
  if (failed(checkAttention(check, adaptor.getQ(), adaptor.getK(),
                            adaptor.getV(), adaptor.getKeyBias(),
                            adaptor.getCausal(),
                            adaptor.getP().convertToDouble(), result, lse)))
    return failure();
  results.push_back(result);
  results.push_back(lse);
  return success();
}

LogicalResult AttentionBackwardOp::verify() {
  ShapeChecker check(getLoc(), getOperationName());
  RankedTensorType result, lse;
  if (failed(checkAttention(check, getQ(), getK(), getV(), getKeyBias(),
                            getCausal(), getP().convertToDouble(), result,
                            lse)))
    return failure();
  if (getGrad().getType() != result)
    return emitOpError("expected grad of type ")
           << result << " (the attention result's), got "
           << getGrad().getType();
  if (getOut().getType() != result)
    return emitOpError("expected out of type ")
           << result << " (the attention result's), got " << getOut().getType();
  if (getLse().getType() != lse)
    return emitOpError("expected lse of type ")
           << lse << ", got " << getLse().getType();
  return success();
}

//===----------------------------------------------------------------------===//
// Linear cross-entropy
//===----------------------------------------------------------------------===//

namespace {

/// Checks hidden, weight, labels, the optional bias and `chunk`, shared by
/// the forward and backward ops; sets the loss and log-sum-exp types.
LogicalResult checkLinearCrossEntropy(const ShapeChecker &check, Value hv,
                                      Value wv, Value lv, Value bv,
                                      int64_t chunk, RankedTensorType &loss,
                                      RankedTensorType &lse) {
  auto hidden = check.tensorOfRank(hv, "hidden", 2, "NxH");
  auto weight = check.tensorOfRank(wv, "weight", 2, "VxH");
  auto labels = check.tensorOfRank(lv, "labels", 1, "N");
  if (failed(hidden) || failed(weight) || failed(labels) ||
      failed(check.sameElementType(*hidden, "hidden", *weight, "weight")))
    return failure();
  if (bv) {
    auto bias = check.tensorOfRank(bv, "bias", 1, "V");
    if (failed(bias) ||
        failed(check.sameElementType(*weight, "weight", *bias, "bias")))
      return failure();
    if (bias->getDimSize(0) != weight->getDimSize(0))
      return check.error("expected bias of ", weight->getDimSize(0),
                         " elements (weight's rows), got ",
                         bias->getDimSize(0));
  }
  if (chunk < 1)
    return check.error("expected 'chunk' ≥ 1 (rows at a time), got ", chunk);
  shapes::Dims lseDims;
  if (shapes::ShapeProblem problem = shapes::linearCrossEntropyShape(
          hidden->getShape().vec(), weight->getShape().vec(),
          labels->getShape().vec(), lseDims);
      !problem.empty())
    return check.error(problem);
  Type element = lseElementType(hidden->getElementType());
  loss = RankedTensorType::get({}, element);
  lse = RankedTensorType::get(lseDims, element);
  return success();
}

} // namespace

LogicalResult LinearCrossEntropyOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, getOperationName());
  RankedTensorType loss, lse;
  if (failed(checkLinearCrossEntropy(
          check, adaptor.getHidden(), adaptor.getWeight(), adaptor.getLabels(),
          adaptor.getBias(), adaptor.getChunk(), loss, lse)))
    return failure();
  results.push_back(loss);
  results.push_back(lse);
  return success();
}

namespace {

/// The checks the two gradient ops share: hidden, weight, labels and chunk
/// as the forward op's, and grad_loss of the loss's type, which (with the
/// log-sum-exps' type) it returns in `loss` and `lse`.
template <typename OpT>
LogicalResult checkGradientOfLinearCrossEntropy(OpT op, RankedTensorType &loss,
                                                RankedTensorType &lse) {
  ShapeChecker check(op.getLoc(), op.getOperationName());
  if (failed(checkLinearCrossEntropy(check, op.getHidden(), op.getWeight(),
                                     op.getLabels(), op.getBias(),
                                     op.getChunk(), loss, lse)))
    return failure();
  if (op.getGradLoss().getType() != loss)
    return op.emitOpError("expected grad_loss of type ")
           << loss << " (the loss's), got " << op.getGradLoss().getType();
  // grad_bias exactly when there is a bias, of its type.
  Value bias = op.getBias(), gradBias = op.getGradBias();
  if (!bias != !gradBias)
    return op.emitOpError(bias ? "expected a grad_bias result for the bias"
                               : "expected no grad_bias result without a "
                                 "bias");
  if (bias && gradBias.getType() != bias.getType())
    return op.emitOpError("expected grad_bias of type ")
           << bias.getType() << " (the bias's), got " << gradBias.getType();
  return success();
}

} // namespace

LogicalResult LinearCrossEntropyWithGradOp::verify() {
  RankedTensorType loss, lse;
  if (failed(checkGradientOfLinearCrossEntropy(*this, loss, lse)))
    return failure();
  if (getResult().getType() != loss)
    return emitOpError("expected result of type ")
           << loss << ", got " << getResult().getType();
  return success();
}

LogicalResult LinearCrossEntropyBackwardOp::verify() {
  RankedTensorType loss, lse;
  if (failed(checkGradientOfLinearCrossEntropy(*this, loss, lse)))
    return failure();
  if (getLse().getType() != lse)
    return emitOpError("expected lse of type ")
           << lse << ", got " << getLse().getType();
  return success();
}
