//===- MemOptGradOps.cpp - verifiers of backward and optimizer ops --------===//
//
// Backward ops are emitted by --memopt-autodiff with explicit result types;
// each verifier checks the result against the forward computation it
// differentiates, so a wrong gradient rule fails verification at once.
//
//===----------------------------------------------------------------------===//

#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"

#include "memopt/Contract/ConvShapes.h"
#include "memopt/Contract/ElementwiseShapes.h"
#include "memopt/Contract/LossShapes.h"
#include "memopt/Contract/MovementShapes.h"
#include "memopt/Contract/NormShapes.h"
#include "memopt/Contract/OptimizerShapes.h"
#include "memopt/Contract/PoolShapes.h"
#include "memopt/Contract/SoftmaxShapes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace memopt;

namespace {

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

LogicalResult expectType(Operation *op, StringRef what, Type expected,
                         Type actual) {
  if (expected == actual)
    return success();
  auto e = dyn_cast<RankedTensorType>(expected);
  auto a = dyn_cast<RankedTensorType>(actual);
  if (e && a && e.getElementType() == a.getElementType())
    return op->emitOpError("expected ")
           << what << " shape " << formatShape(e.getShape()) << ", got "
           << formatShape(a.getShape());
  return op->emitOpError("expected ")
         << what << " type " << expected << ", got " << actual;
}

LogicalResult checkPairs(Operation *op, ArrayRef<int64_t> strides,
                         ArrayRef<int64_t> padding,
                         ArrayRef<int64_t> dilations) {
  if (strides.size() != 2 || padding.size() != 2 || dilations.size() != 2 ||
      llvm::any_of(strides, [](int64_t s) { return s < 1; }) ||
      llvm::any_of(dilations, [](int64_t s) { return s < 1; }) ||
      llvm::any_of(padding, [](int64_t s) { return s < 0; }))
    return op->emitOpError("expected two strides ≥ 1, paddings ≥ 0 and "
                           "dilations ≥ 1");
  return success();
}

/// The conv2d output type for `input` and `weight` (the contract's rule,
/// ConvShapes.h); null with the problem in `problem` when they do not form
/// a convolution.
RankedTensorType convOutput(RankedTensorType input, RankedTensorType weight,
                            ArrayRef<int64_t> strides,
                            ArrayRef<int64_t> padding,
                            ArrayRef<int64_t> dilations, int64_t groups,
                            std::string &problem) {
  if (input.getRank() != 4 || weight.getRank() != 4) {
    problem = "expected 4-D operands";
    return {};
  }
  shapes::Conv2DParams params;
  params.strides = {strides[0], strides[1]};
  params.padding = {padding[0], padding[1]};
  params.dilations = {dilations[0], dilations[1]};
  params.groups = groups;
  shapes::Dims out;
  problem = shapes::conv2dShape(input.getShape().vec(), weight.getShape().vec(),
                                std::nullopt, params, out);
  if (!problem.empty())
    return {};
  return RankedTensorType::get(out, input.getElementType());
}

/// The max_pool2d/avg_pool2d output type for `input` (the contract's rule,
/// PoolShapes.h; `inputName` names it in messages); null with the problem
/// in `problem` when the window does not fit it.
RankedTensorType poolOutput(RankedTensorType input, ArrayRef<int64_t> kernel,
                            ArrayRef<int64_t> strides,
                            ArrayRef<int64_t> padding, const char *inputName,
                            std::string &problem) {
  auto pair = [](ArrayRef<int64_t> values, int64_t min) {
    return values.size() == 2 &&
           llvm::all_of(values, [&](int64_t v) { return v >= min; });
  };
  if (input.getRank() != 4 || !pair(kernel, 1) || !pair(strides, 1) ||
      !pair(padding, 0)) {
    problem = std::string("expected a 4-D ") + inputName +
              " and two-element window attributes ('kernel_size' and "
              "'strides' ≥ 1, 'padding' ≥ 0)";
    return {};
  }
  shapes::Pool2DParams params;
  params.kernelSize = {kernel[0], kernel[1]};
  params.strides = {strides[0], strides[1]};
  params.padding = {padding[0], padding[1]};
  shapes::Dims out;
  problem = shapes::pool2dShape(input.getShape().vec(), params, out, inputName);
  if (!problem.empty())
    return {};
  return RankedTensorType::get(out, input.getElementType());
}

} // namespace

LogicalResult SumToOp::verify() {
  if (shapes::ShapeProblem problem = shapes::sumToShape(
          getX().getType().getShape().vec(), getType().getShape().vec());
      !problem.empty())
    return emitOpError(problem);
  Type from = getX().getType().getElementType();
  if (getType().getElementType() != from)
    return emitOpError("expected result element type ")
           << from << " (as x), got " << getType().getElementType();
  return success();
}

LogicalResult Conv2DBackwardInputOp::verify() {
  if (failed(checkPairs(*this, getStrides(), getPadding(), getDilations())))
    return failure();
  std::string problem;
  RankedTensorType fwd =
      convOutput(getType(), tensorType(getWeight()), getStrides(), getPadding(),
                 getDilations(), getGroups(), problem);
  if (!fwd)
    return emitOpError("result ")
           << getType() << " and weight " << getWeight().getType()
           << " do not form a convolution: " << problem;
  return expectType(*this, "grad_output", fwd, getGradOutput().getType());
}

LogicalResult Conv2DBackwardWeightOp::verify() {
  if (failed(checkPairs(*this, getStrides(), getPadding(), getDilations())))
    return failure();
  std::string problem;
  RankedTensorType fwd =
      convOutput(tensorType(getInput()), getType(), getStrides(), getPadding(),
                 getDilations(), getGroups(), problem);
  if (!fwd)
    return emitOpError("input ")
           << getInput().getType() << " and result " << getType()
           << " do not form a convolution: " << problem;
  return expectType(*this, "grad_output", fwd, getGradOutput().getType());
}

#define MEMOPT_TRIVIAL_VERIFIER(OP)                                            \
  LogicalResult OP::verify() { return success(); }
// Fully described by their type constraints (AllTypesMatch).
MEMOPT_TRIVIAL_VERIFIER(ReluBackwardOp)
MEMOPT_TRIVIAL_VERIFIER(GeluBackwardOp)
MEMOPT_TRIVIAL_VERIFIER(SigmoidBackwardOp)
MEMOPT_TRIVIAL_VERIFIER(TanhBackwardOp)
MEMOPT_TRIVIAL_VERIFIER(SiluBackwardOp)
MEMOPT_TRIVIAL_VERIFIER(ExpBackwardOp)
MEMOPT_TRIVIAL_VERIFIER(LogBackwardOp)
MEMOPT_TRIVIAL_VERIFIER(SqrtBackwardOp)
MEMOPT_TRIVIAL_VERIFIER(AbsBackwardOp)
MEMOPT_TRIVIAL_VERIFIER(LeakyReluBackwardOp)
MEMOPT_TRIVIAL_VERIFIER(EluBackwardOp)
#undef MEMOPT_TRIVIAL_VERIFIER

LogicalResult ClampBackwardOp::verify() {
  return detail::verifyClampBounds(*this, getMinAttr(), getMaxAttr());
}

/// The gradient operand of an optimizer update: the parameter's shape, an
/// element type the parameter's holds exactly (so widening it is exact),
/// and a loss scale only beside a skip flag and for an f32 or f64
/// parameter (the unscale then runs in the parameter's type, as a separate
/// memopt.unscale of the widened gradient would).
template <typename OpTy> static LogicalResult verifyUpdateGradient(OpTy op) {
  auto param = cast<RankedTensorType>(op.getParam().getType());
  auto grad = cast<RankedTensorType>(op.getGrad().getType());
  if (grad.getShape() != param.getShape())
    return op.emitOpError("expected the gradient's shape to be the "
                          "parameter's, got ")
           << grad << " for " << param;
  auto from = cast<FloatType>(grad.getElementType());
  auto to = cast<FloatType>(param.getElementType());
  if (!llvm::APFloatBase::isRepresentableBy(from.getFloatSemantics(),
                                            to.getFloatSemantics()))
    return op.emitOpError("expected a gradient whose element type ")
           << to << " holds exactly, got " << from;
  if (op.getLossScale()) {
    if (!op.getSkip())
      return op.emitOpError("expected a skip flag beside the loss scale "
                            "(loss scaling always checks for overflow)");
    if (!to.isF32() && !to.isF64())
      return op.emitOpError("expected an f32 or f64 parameter beside the "
                            "loss scale, got ")
             << to;
  }
  return success();
}

LogicalResult SgdUpdateOp::verify() { return verifyUpdateGradient(*this); }

/// An optimizer buffer: the parameter's shape, and its element type or bf16
/// (state-dtype=bf16).
static LogicalResult verifyStateBuffer(Operation *op, Value param, Value buffer,
                                       StringRef name) {
  auto p = cast<RankedTensorType>(param.getType());
  auto s = cast<RankedTensorType>(buffer.getType());
  if (s.getShape() != p.getShape() ||
      (s.getElementType() != p.getElementType() &&
       !s.getElementType().isBF16()))
    return op->emitOpError("expected ")
           << name << " of the parameter's shape in its element type or bf16, "
           << "got " << s << " for " << p;
  return success();
}

LogicalResult SgdMomentumUpdateOp::verify() {
  if (failed(verifyUpdateGradient(*this)))
    return failure();
  return verifyStateBuffer(*this, getParam(), getMomentumBuffer(),
                           "momentum_buffer");
}

/// Batch and layer norm backward: grad_x like x, parameter gradients like
/// gamma, grad_output like x.
template <typename OpTy> static LogicalResult verifyNormBackward(OpTy op) {
  if (failed(expectType(op, "grad_output", op.getX().getType(),
                        op.getGradOutput().getType())) ||
      failed(expectType(op, "grad_x", op.getX().getType(),
                        op.getGradX().getType())) ||
      failed(expectType(op, "grad_gamma", op.getGamma().getType(),
                        op.getGradGamma().getType())) ||
      failed(expectType(op, "grad_beta", op.getGamma().getType(),
                        op.getGradBeta().getType())))
    return failure();
  if (!(op.getEpsilon().convertToDouble() > 0))
    return op.emitOpError("expected 'epsilon' > 0");
  return success();
}

LogicalResult BatchNormBackwardOp::verify() {
  RankedTensorType x = getX().getType(), gamma = getGamma().getType();
  if (x.getRank() < 2 || gamma.getRank() != 1)
    return emitOpError("expected x of rank ≥ 2 and gamma of rank 1");
  if (shapes::ShapeProblem problem =
          shapes::batchNormShape(x.getShape().vec(), gamma.getShape().vec(),
                                 /*batchStatistics=*/false, "x", "gamma");
      !problem.empty())
    return emitOpError(problem);
  return verifyNormBackward(*this);
}

LogicalResult LayerNormBackwardOp::verify() {
  if (shapes::ShapeProblem problem =
          shapes::layerNormShape(getX().getType().getShape().vec(),
                                 getGamma().getType().getShape().vec());
      !problem.empty())
    return emitOpError(problem);
  return verifyNormBackward(*this);
}

LogicalResult RmsNormBackwardOp::verify() {
  if (shapes::ShapeProblem problem =
          shapes::layerNormShape(getX().getType().getShape().vec(),
                                 getGamma().getType().getShape().vec());
      !problem.empty())
    return emitOpError(problem);
  if (failed(expectType(*this, "grad_output", getX().getType(),
                        getGradOutput().getType())) ||
      failed(expectType(*this, "grad_x", getX().getType(),
                        getGradX().getType())) ||
      failed(expectType(*this, "grad_gamma", getGamma().getType(),
                        getGradGamma().getType())))
    return failure();
  if (!(getEpsilon().convertToDouble() > 0))
    return emitOpError("expected 'epsilon' > 0");
  return success();
}

LogicalResult MaxPool2DBackwardOp::verify() {
  if (failed(expectType(*this, "result", getX().getType(), getType())))
    return failure();
  std::string problem;
  RankedTensorType fwd = poolOutput(getX().getType(), getKernelSize(),
                                    getStrides(), getPadding(), "x", problem);
  if (!fwd)
    return emitOpError(problem);
  return expectType(*this, "grad_output", fwd, getGradOutput().getType());
}

LogicalResult AvgPool2DBackwardOp::verify() {
  std::string problem;
  RankedTensorType fwd = poolOutput(getType(), getKernelSize(), getStrides(),
                                    getPadding(), "result", problem);
  if (!fwd)
    return emitOpError(problem);
  return expectType(*this, "grad_output", fwd, getGradOutput().getType());
}

LogicalResult GlobalAvgPool2DBackwardOp::verify() {
  RankedTensorType result = getType();
  if (result.getRank() != 4)
    return emitOpError("expected a 4-D result, got ") << result;
  auto fwd = RankedTensorType::get(
      shapes::globalAvgPool2dShape(result.getShape().vec()),
      result.getElementType());
  return expectType(*this, "grad_output", fwd, getGradOutput().getType());
}

LogicalResult SoftmaxBackwardOp::verify() {
  int64_t axis;
  if (shapes::ShapeProblem problem =
          shapes::softmaxShape(getType().getShape().vec(),
                               getAxisAttr().getInt(), /*causal=*/false, axis);
      !problem.empty())
    return emitOpError(problem);
  return success();
}

LogicalResult SliceBackwardOp::verify() {
  RankedTensorType input = getType();
  size_t rank = input.getRank();
  ArrayRef<int64_t> offsets = getOffsets(), sizes = getSizes(),
                    strides = getStrides();
  if (offsets.size() != rank || sizes.size() != rank || strides.size() != rank)
    return emitOpError("expected offsets, sizes and strides of rank ") << rank;
  for (size_t d = 0; d < rank; ++d)
    if (offsets[d] < 0 || sizes[d] < 1 || strides[d] < 1)
      return emitOpError("expected offsets ≥ 0, sizes ≥ 1 and strides ≥ 1");
  shapes::Dims fwd;
  if (shapes::ShapeProblem problem =
          shapes::sliceShape(input.getShape().vec(), offsets.vec(), sizes.vec(),
                             strides.vec(), fwd, "the result's dimension");
      !problem.empty())
    return emitOpError(problem);
  return expectType(*this, "grad",
                    RankedTensorType::get(fwd, input.getElementType()),
                    getGrad().getType());
}

LogicalResult UpsampleNearest2DBackwardOp::verify() {
  RankedTensorType input = getType();
  if (input.getRank() != 4)
    return emitOpError("expected a 4-D result (NxCxHxW), got ") << input;
  shapes::Dims fwd;
  if (shapes::ShapeProblem problem = shapes::upsampleNearest2dShape(
          input.getShape().vec(), getScaleAttr().getInt(), fwd);
      !problem.empty())
    return emitOpError(problem);
  return expectType(*this, "grad",
                    RankedTensorType::get(fwd, input.getElementType()),
                    getGrad().getType());
}

LogicalResult EmbeddingBackwardOp::verify() {
  RankedTensorType table = getType();
  if (table.getRank() != 2)
    return emitOpError("expected a 2-D result (the table), got ") << table;
  if (failed(detail::verifyPaddingIdx(*this, getPaddingIdx(),
                                      table.getDimSize(0))))
    return failure();
  shapes::Dims fwd = shapes::embeddingShape(
      table.getShape().vec(), getIds().getType().getShape().vec());
  return expectType(*this, "grad",
                    RankedTensorType::get(fwd, table.getElementType()),
                    getGrad().getType());
}

LogicalResult CrossEntropyBackwardOp::verify() {
  RankedTensorType logits = getLogits().getType();
  if (logits.getRank() != 2 || getLabels().getType().getRank() != 1)
    return emitOpError("expected NxC logits and N labels");
  shapes::Dims loss;
  if (shapes::ShapeProblem problem = shapes::crossEntropyShape(
          logits.getShape().vec(), getLabels().getType().getShape().vec(),
          loss);
      !problem.empty())
    return emitOpError(problem);
  return expectType(*this, "result", logits, getType());
}

LogicalResult MseLossBackwardOp::verify() {
  RankedTensorType prediction = getPrediction().getType();
  RankedTensorType target = getTarget().getType();
  if (target.getElementType() != prediction.getElementType())
    return expectType(*this, "target", prediction, target);
  shapes::Dims loss;
  if (shapes::ShapeProblem problem = shapes::mseLossShape(
          prediction.getShape().vec(), target.getShape().vec(), loss);
      !problem.empty())
    return emitOpError(problem);
  return expectType(*this, "result", prediction, getType());
}

/// Adam's hyper-parameters: betas in [0, 1), eps > 0.
template <typename OpTy> static LogicalResult verifyAdamAttrs(OpTy op) {
  double b1 = op.getBeta1().convertToDouble();
  double b2 = op.getBeta2().convertToDouble();
  if (!(b1 >= 0 && b1 < 1 && b2 >= 0 && b2 < 1))
    return op.emitOpError("expected betas in [0, 1), got ") << b1 << ", " << b2;
  if (!(op.getEps().convertToDouble() > 0))
    return op.emitOpError("expected 'eps' > 0");
  return success();
}

LogicalResult AdamUpdateOp::verify() {
  if (failed(verifyUpdateGradient(*this)) ||
      failed(verifyStateBuffer(*this, getParam(), getExpAvg(), "exp_avg")))
    return failure();
  return verifyAdamAttrs(*this);
}

LogicalResult Adam8bitUpdateOp::verify() {
  if (failed(verifyUpdateGradient(*this)) || failed(verifyAdamAttrs(*this)))
    return failure();
  shapes::Dims param = getParam().getType().getShape().vec();
  for (auto [name, codes, absmax] :
       {std::tuple("exp_avg", getExpAvg(), getExpAvgAbsmax()),
        std::tuple("exp_avg_sq", getExpAvgSq(), getExpAvgSqAbsmax())})
    if (shapes::ShapeProblem problem = shapes::quantizedStateShape(
            param, codes.getType().getShape().vec(),
            absmax.getType().getShape().vec(), name);
        !problem.empty())
      return emitOpError(problem);
  return success();
}

LogicalResult ClipCoefficientOp::verify() {
  if (getGrads().empty())
    return emitOpError("expected at least one gradient");
  if (getSquareSum()) {
    auto sum = cast<ShapedType>(getGrads().front().getType());
    if (getGrads().size() != 1 || sum.getRank() != 0 ||
        !sum.getElementType().isF64())
      return emitOpError("with square_sum = true expected one operand, the "
                         "sum of squares as a 0-d f64 tensor");
  }
  if (!getMaxNorm().isFinite() || !(getMaxNorm().convertToDouble() > 0))
    return emitOpError("expected 'max_norm' to be a finite number > 0");
  return success();
}

LogicalResult AdafactorUpdateOp::verify() {
  if (failed(verifyUpdateGradient(*this)))
    return failure();
  RankedTensorType param = getParam().getType();
  // The state is kept in the type the step computes in.
  Type stateElement = param.getElementType().isF64()
                          ? Type(Float64Type::get(getContext()))
                          : Type(Float32Type::get(getContext()));
  std::vector<shapes::Dims> state;
  for (Value v : getState()) {
    auto type = cast<RankedTensorType>(v.getType());
    if (type.getElementType() != stateElement)
      return emitOpError("expected state of element type ")
             << stateElement << " (the step's compute type), got " << type;
    state.push_back(type.getShape().vec());
  }
  if (shapes::ShapeProblem problem =
          shapes::adafactorStateShape(param.getShape().vec(), state);
      !problem.empty())
    return emitOpError(problem);
  if (getNewState().size() != getState().size())
    return emitOpError("expected ")
           << getState().size() << " new state results, got "
           << getNewState().size();
  for (auto [old, updated] : llvm::zip(getState(), getNewState()))
    if (old.getType() != updated.getType())
      return emitOpError("expected new state of type ")
             << old.getType() << ", got " << updated.getType();
  auto finite = [](APFloat v) { return v.isFinite(); };
  double eps1 = getEps1().convertToDouble(), eps2 = getEps2().convertToDouble();
  if (!finite(getEps1()) || !(eps1 > 0) || !finite(getEps2()) || !(eps2 >= 0))
    return emitOpError("expected 'eps1' > 0 and 'eps2' >= 0, got ")
           << eps1 << ", " << eps2;
  if (!finite(getClipThreshold()) ||
      !(getClipThreshold().convertToDouble() > 0))
    return emitOpError("expected 'clip_threshold' > 0");
  if (!finite(getDecayRate()) || !(getDecayRate().convertToDouble() < 0))
    return emitOpError("expected 'decay_rate' < 0 (beta2 = 1 - t^decay_rate)");
  if (!finite(getWeightDecay()) || getWeightDecay().convertToDouble() < 0)
    return emitOpError("expected 'weight_decay' >= 0");
  return success();
}

LogicalResult BatchNormInferenceOp::verify() {
  RankedTensorType x = getX().getType();
  RankedTensorType gamma = getGamma().getType();
  if (x.getRank() < 2 || gamma.getRank() != 1)
    return emitOpError("expected x of rank ≥ 2 (NxCx...) and per-channel "
                       "operands of rank 1, got ")
           << x << " and " << gamma;
  if (shapes::ShapeProblem problem =
          shapes::batchNormShape(x.getShape().vec(), gamma.getShape().vec(),
                                 /*batchStatistics=*/false);
      !problem.empty())
    return emitOpError(problem);
  if (!(getEpsilon().convertToDouble() > 0))
    return emitOpError("expected 'epsilon' > 0");
  return success();
}

LogicalResult FreeOp::verify() {
  Value value = getValue();
  if (isa<BlockArgument>(value))
    return emitOpError("cannot free a function argument: it belongs to the "
                       "caller");
  Block *block = (*this)->getBlock();
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (user == getOperation() || user->getBlock() != block)
      continue;
    if (getOperation()->isBeforeInBlock(user))
      return emitOpError("frees a value that is used later, by ")
             << user->getName() << " at " << user->getLoc();
  }
  return success();
}
