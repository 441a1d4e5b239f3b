//===- GradientRules.cpp - DifferentiableOpInterface for forward ops ------===//
//
// The reverse-mode rule of every forward op, and the forward values it reads.
// Rules reuse forward ops wherever they express the gradient (a linear
// layer's gradients are matmuls, a reshape's is a reshape, dropout's is
// dropout with the same seed and so the same mask) and fall back to the
// dedicated backward ops of MemOptGradOps.td otherwise.
//
//===----------------------------------------------------------------------===//

#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

#include "memopt/Dialect/MemOpt/IR/MemOptInterfaces.cpp.inc"

using namespace mlir;
using namespace memopt;

namespace {

using Grads = SmallVectorImpl<Value>;

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

/// Sums `grad` down to `target`'s shape when broadcasting made it larger.
Value sumTo(OpBuilder &b, Location loc, Value grad, Type target) {
  if (grad.getType() == target)
    return grad;
  return SumToOp::create(b, loc, target, grad);
}

Value reshape(OpBuilder &b, Location loc, Value v, Type target) {
  if (v.getType() == target)
    return v;
  return ReshapeOp::create(b, loc, target, v);
}

/// A 0-d constant of `like`'s element type.
Value scalar(OpBuilder &b, Location loc, Type like, double value) {
  Type element = cast<ShapedType>(like).getElementType();
  auto type = RankedTensorType::get({}, element);
  return arith::ConstantOp::create(
      b, loc, type,
      DenseElementsAttr::get(type, b.getFloatAttr(element, value)));
}

/// -v, as a product with a 0-d constant -1 (exact in every float type).
Value negate(OpBuilder &b, Location loc, Value v) {
  return MulOp::create(b, loc, v, scalar(b, loc, v.getType(), -1.0));
}

/// `v` as a matrix: every dimension but the last folded into rows.
Value asMatrix(OpBuilder &b, Location loc, Value v) {
  RankedTensorType t = typeOf(v);
  int64_t cols = t.getRank() ? t.getShape().back() : 1;
  int64_t rows = t.getNumElements() / std::max<int64_t>(cols, 1);
  return reshape(b, loc, v,
                 RankedTensorType::get({rows, cols}, t.getElementType()));
}

void resizeGrads(Operation *op, Grads &grads) {
  grads.assign(op->getNumOperands(), Value());
}

} // namespace

//===----------------------------------------------------------------------===//
// Convolution, linear, matmul
//===----------------------------------------------------------------------===//

SmallVector<Value> Conv2DOp::getSavedForBackward() {
  return {getInput(), getWeight()};
}

LogicalResult Conv2DOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                       ArrayRef<bool> needed, Grads &grads) {
  resizeGrads(*this, grads);
  Location loc = getLoc();
  Value dy = dys[0];
  if (needed[0])
    grads[0] = Conv2DBackwardInputOp::create(
        b, loc, getInput().getType(), dy, getWeight(), getStridesAttr(),
        getPaddingAttr(), getDilationsAttr(), getGroupsAttr());
  if (needed[1])
    grads[1] = Conv2DBackwardWeightOp::create(
        b, loc, getWeight().getType(), dy, getInput(), getStridesAttr(),
        getPaddingAttr(), getDilationsAttr(), getGroupsAttr());
  if (getBias() && needed[2]) {
    RankedTensorType bias = typeOf(getBias());
    auto k11 = RankedTensorType::get({bias.getDimSize(0), 1, 1},
                                     bias.getElementType());
    grads[2] = reshape(b, loc, sumTo(b, loc, dy, k11), bias);
  }
  return success();
}

SmallVector<Value> LinearOp::getSavedForBackward() {
  return {getInput(), getWeight()};
}

LogicalResult LinearOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                       ArrayRef<bool> needed, Grads &grads) {
  resizeGrads(*this, grads);
  Location loc = getLoc();
  // y = x·Wᵀ on rows: dx = dy·W, dW = dyᵀ·x, db = Σ_rows dy.
  Value dy2 = asMatrix(b, loc, dys[0]);
  if (needed[0])
    grads[0] = reshape(b, loc, MatMulOp::create(b, loc, dy2, getWeight()),
                       getInput().getType());
  if (needed[1])
    grads[1] = MatMulOp::create(b, loc, dy2, asMatrix(b, loc, getInput()),
                                /*transpose_a=*/true, /*transpose_b=*/false);
  if (getBias() && needed[2])
    grads[2] = sumTo(b, loc, dys[0], getBias().getType());
  return success();
}

SmallVector<Value> MatMulOp::getSavedForBackward() { return {getA(), getB()}; }

LogicalResult MatMulOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                       ArrayRef<bool> needed, Grads &grads) {
  resizeGrads(*this, grads);
  Location loc = getLoc();
  Value dy = dys[0];
  bool ta = getTransposeA(), tb = getTransposeB();
  // C = op(A)·op(B); d op(A) = dC·op(B)ᵀ, d op(B) = op(A)ᵀ·dC, transposed
  // back where A or B entered transposed.
  if (needed[0]) {
    Value da = ta ? Value(MatMulOp::create(b, loc, getB(), dy, tb, true))
                  : Value(MatMulOp::create(b, loc, dy, getB(), false, !tb));
    grads[0] = sumTo(b, loc, da, getA().getType());
  }
  if (needed[1]) {
    Value db = tb ? Value(MatMulOp::create(b, loc, dy, getA(), true, ta))
                  : Value(MatMulOp::create(b, loc, getA(), dy, !ta, false));
    grads[1] = sumTo(b, loc, db, getB().getType());
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

#define MEMOPT_ACTIVATION_RULE(OP, BWD, SAVED, ...)                            \
  SmallVector<Value> OP::getSavedForBackward() { return {SAVED}; }             \
  LogicalResult OP::buildGradients(OpBuilder &b, ArrayRef<Value> dys,          \
                                   ArrayRef<bool> needed, Grads &grads) {      \
    resizeGrads(*this, grads);                                                 \
    if (needed[0])                                                             \
      grads[0] =                                                               \
          BWD::create(b, getLoc(), getType(), dys[0], SAVED __VA_ARGS__);      \
    return success();                                                          \
  }
MEMOPT_ACTIVATION_RULE(ReluOp, ReluBackwardOp, getResult())
MEMOPT_ACTIVATION_RULE(GeluOp, GeluBackwardOp, getX())
MEMOPT_ACTIVATION_RULE(SigmoidOp, SigmoidBackwardOp, getResult())
MEMOPT_ACTIVATION_RULE(TanhOp, TanhBackwardOp, getResult())
MEMOPT_ACTIVATION_RULE(SiluOp, SiluBackwardOp, getX())
MEMOPT_ACTIVATION_RULE(ExpOp, ExpBackwardOp, getResult())
MEMOPT_ACTIVATION_RULE(LogOp, LogBackwardOp, getX())
MEMOPT_ACTIVATION_RULE(SqrtOp, SqrtBackwardOp, getResult())
MEMOPT_ACTIVATION_RULE(AbsOp, AbsBackwardOp, getX())
MEMOPT_ACTIVATION_RULE(EluOp, EluBackwardOp, getX(), , getAlphaAttr(),
                       b.getBoolAttr(false))
#undef MEMOPT_ACTIVATION_RULE

// With a positive slope the output has the input's sign, so the backward
// reads the output (bit-identical: the derivative is 1 or alpha either way)
// and the op may overwrite its input in place. A slope of 0 or less loses
// the sign: the input is kept.
SmallVector<Value> LeakyReluOp::getSavedForBackward() {
  return {getAlpha().convertToDouble() > 0 ? getResult() : getX()};
}
LogicalResult LeakyReluOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                          ArrayRef<bool> needed, Grads &grads) {
  resizeGrads(*this, grads);
  bool fromOutput = getAlpha().convertToDouble() > 0;
  if (needed[0])
    grads[0] = LeakyReluBackwardOp::create(
        b, getLoc(), getType(), dys[0], fromOutput ? getResult() : getX(),
        getAlphaAttr(), b.getBoolAttr(fromOutput));
  return success();
}

// clamp's backward passes the gradient where min < x < max. From the output
// the test is the same when each bound is exact in the element type (clamp
// writes the bound itself for x at or beyond it), so the output is kept, as
// relu's, and the op may overwrite its input in place. A bound the type
// rounds (0.1 in f16) would move the test: the input is kept.
static bool exactIn(FloatAttr bound, Type elementType) {
  if (!bound)
    return true;
  llvm::APFloat v = bound.getValue();
  bool losesInfo = false;
  v.convert(cast<FloatType>(elementType).getFloatSemantics(),
            llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return !losesInfo;
}
static bool clampKeepsOutput(ClampOp op) {
  Type element = typeOf(op.getResult()).getElementType();
  return exactIn(op.getMinAttr(), element) && exactIn(op.getMaxAttr(), element);
}
SmallVector<Value> ClampOp::getSavedForBackward() {
  return {clampKeepsOutput(*this) ? getResult() : getX()};
}
LogicalResult ClampOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                      ArrayRef<bool> needed, Grads &grads) {
  resizeGrads(*this, grads);
  if (needed[0])
    grads[0] =
        ClampBackwardOp::create(b, getLoc(), getType(), dys[0],
                                clampKeepsOutput(*this) ? getResult() : getX(),
                                getMinAttr(), getMaxAttr());
  return success();
}

//===----------------------------------------------------------------------===//
// Broadcasting arithmetic
//===----------------------------------------------------------------------===//

SmallVector<Value> AddOp::getSavedForBackward() { return {}; }

LogicalResult AddOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                    ArrayRef<bool> needed, Grads &grads) {
  resizeGrads(*this, grads);
  if (needed[0])
    grads[0] = sumTo(b, getLoc(), dys[0], getLhs().getType());
  if (needed[1])
    grads[1] = sumTo(b, getLoc(), dys[0], getRhs().getType());
  return success();
}

SmallVector<Value> SubOp::getSavedForBackward() { return {}; }

LogicalResult SubOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                    ArrayRef<bool> needed, Grads &grads) {
  resizeGrads(*this, grads);
  Location loc = getLoc();
  if (needed[0])
    grads[0] = sumTo(b, loc, dys[0], getLhs().getType());
  // -sumTo(dy) rather than sumTo(-dy): the negation runs over rhs's shape,
  // which broadcasting may have made smaller.
  if (needed[1])
    grads[1] = negate(b, loc, sumTo(b, loc, dys[0], getRhs().getType()));
  return success();
}

SmallVector<Value> MulOp::getSavedForBackward() {
  SmallVector<Value> saved;
  // d lhs reads rhs and vice versa: only what a needed gradient reads would
  // be ideal, but the set must not depend on which operands need gradients.
  saved.push_back(getLhs());
  saved.push_back(getRhs());
  return saved;
}

LogicalResult MulOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                    ArrayRef<bool> needed, Grads &grads) {
  resizeGrads(*this, grads);
  Location loc = getLoc();
  if (needed[0])
    grads[0] = sumTo(b, loc, MulOp::create(b, loc, dys[0], getRhs()),
                     getLhs().getType());
  if (needed[1])
    grads[1] = sumTo(b, loc, MulOp::create(b, loc, dys[0], getLhs()),
                     getRhs().getType());
  return success();
}

SmallVector<Value> DivOp::getSavedForBackward() {
  // PyTorch's rule: d lhs reads rhs, d rhs reads lhs and rhs. The result
  // could stand in for lhs (d rhs = -dy * result / rhs), but keeping the
  // operands leaves the result free to die early or be overwritten in place.
  return {getLhs(), getRhs()};
}

/// PyTorch's div backward: d lhs = dy / rhs and d rhs = -dy * lhs / rhs^2,
/// computed as -(dy / rhs) * lhs / rhs, sharing dy / rhs with d lhs and never
/// forming rhs^2 (which overflows f16 from |rhs| = 256), each summed to its
/// operand's shape.
LogicalResult DivOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                    ArrayRef<bool> needed, Grads &grads) {
  resizeGrads(*this, grads);
  if (!needed[0] && !needed[1])
    return success();
  Location loc = getLoc();
  Value scaled = DivOp::create(b, loc, dys[0], getRhs());
  if (needed[0])
    grads[0] = sumTo(b, loc, scaled, getLhs().getType());
  if (needed[1]) {
    Value product = MulOp::create(b, loc, scaled, getLhs());
    Value quotient = DivOp::create(b, loc, product, getRhs());
    grads[1] = negate(b, loc, sumTo(b, loc, quotient, getRhs().getType()));
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

/// maximum and minimum: lhs takes `grad · w` and rhs `grad − grad · w`, w
/// being 1, ½ or 0 as lhs wins, ties or loses (torch.maximum's rule; for
/// minimum, lhs wins where rhs is the larger). The same weight for both
/// sides keeps their shares summing to `grad` exactly.
template <typename OpTy>
static LogicalResult
buildExtremumGradients(OpTy op, OpBuilder &b, ArrayRef<Value> dys,
                       ArrayRef<bool> needed, Grads &grads, bool minimum) {
  resizeGrads(op, grads);
  if (!needed[0] && !needed[1])
    return success();
  Location loc = op.getLoc();
  Value lhs = op.getLhs(), rhs = op.getRhs();
  Value w = MaximumWeightOp::create(b, loc, op.getType(), minimum ? rhs : lhs,
                                    minimum ? lhs : rhs);
  Value share = MulOp::create(b, loc, dys[0], w);
  if (needed[0])
    grads[0] = sumTo(b, loc, share, lhs.getType());
  if (needed[1])
    grads[1] =
        sumTo(b, loc, SubOp::create(b, loc, dys[0], share), rhs.getType());
  return success();
}

SmallVector<Value> MaximumOp::getSavedForBackward() {
  return {getLhs(), getRhs()};
}

LogicalResult MaximumOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                        ArrayRef<bool> needed, Grads &grads) {
  return buildExtremumGradients(*this, b, dys, needed, grads,
                                /*minimum=*/false);
}

SmallVector<Value> MinimumOp::getSavedForBackward() {
  return {getLhs(), getRhs()};
}

LogicalResult MinimumOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                        ArrayRef<bool> needed, Grads &grads) {
  return buildExtremumGradients(*this, b, dys, needed, grads,
                                /*minimum=*/true);
}

/// reduce_max and reduce_min: grad split evenly among the row's elements
/// equal to the result (torch.amax's and amin's rule).
template <typename OpTy>
static LogicalResult
buildReduceExtremumGradients(OpTy op, OpBuilder &b, ArrayRef<Value> dys,
                             ArrayRef<bool> needed, Grads &grads) {
  resizeGrads(op, grads);
  if (needed[0])
    grads[0] = ReduceExtremumBackwardOp::create(
        b, op.getLoc(), op.getX().getType(), dys[0], op.getX(), op.getResult());
  return success();
}

SmallVector<Value> ReduceMaxOp::getSavedForBackward() {
  return {getX(), getResult()};
}

LogicalResult ReduceMaxOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                          ArrayRef<bool> needed, Grads &grads) {
  return buildReduceExtremumGradients(*this, b, dys, needed, grads);
}

SmallVector<Value> ReduceMinOp::getSavedForBackward() {
  return {getX(), getResult()};
}

LogicalResult ReduceMinOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                          ArrayRef<bool> needed, Grads &grads) {
  return buildReduceExtremumGradients(*this, b, dys, needed, grads);
}

SmallVector<Value> BatchNormOp::getSavedForBackward() {
  return {getX(), getGamma()};
}

/// Batch and layer norm: one backward op computes the gradients of x, gamma
/// and beta from y's gradient, x and gamma. A batch norm's running
/// statistics are not differentiable (as in PyTorch): only y's gradient
/// flows back.
template <typename BackwardOp, typename NormOp>
static LogicalResult buildNormGradients(NormOp op, OpBuilder &b,
                                        ArrayRef<Value> dys,
                                        ArrayRef<bool> needed, Grads &grads) {
  resizeGrads(op, grads);
  if (!dys[0] || !(needed[0] || needed[1] || needed[2]))
    return success();
  Type gamma = op.getGamma().getType();
  auto bwd = BackwardOp::create(
      b, op.getLoc(), TypeRange{op.getX().getType(), gamma, gamma}, dys[0],
      op.getX(), op.getGamma(), op.getEpsilonAttr());
  for (int i = 0; i < 3; ++i)
    if (needed[i])
      grads[i] = bwd->getResult(i);
  return success();
}

LogicalResult BatchNormOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                          ArrayRef<bool> needed, Grads &grads) {
  return buildNormGradients<BatchNormBackwardOp>(*this, b, dys, needed, grads);
}

/// InPlace-ABN: the backward reads the output, gamma, beta and the batch's
/// inverse standard deviation, never x, so x's buffer may hold the output.
SmallVector<Value> BatchNormActOp::getSavedForBackward() {
  return {getResult(), getGamma(), getBeta(), getSavedInvstd()};
}

LogicalResult BatchNormActOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                             ArrayRef<bool> needed,
                                             Grads &grads) {
  resizeGrads(*this, grads);
  // As batch_norm: the running statistics (and saved_invstd) are not
  // differentiable; only the result's gradient flows back.
  if (!dys[0] || !(needed[0] || needed[1] || needed[2]))
    return success();
  Type gamma = getGamma().getType();
  auto bwd = BatchNormActBackwardOp::create(
      b, getLoc(), TypeRange{getX().getType(), gamma, gamma}, dys[0],
      getResult(), getGamma(), getBeta(), getSavedInvstd(), getActivationAttr(),
      getAlphaAttr());
  for (int i = 0; i < 3; ++i)
    if (needed[i])
      grads[i] = bwd->getResult(i);
  return success();
}

/// Memory-efficient attention: q, k, v, the result and the per-row
/// log-sum-exp, linear in the sequence length; the backward recomputes the
/// probabilities. The lse result has no gradient of its own.
SmallVector<Value> AttentionOp::getSavedForBackward() {
  SmallVector<Value> saved{getQ(), getK(), getV(), getResult(), getLse()};
  if (getKeyBias())
    saved.push_back(getKeyBias());
  return saved;
}

/// The key bias (operand 3) is a mask from the data: its gradient is not
/// written, and a graph that needs it is refused rather than given zero.
LogicalResult AttentionOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                          ArrayRef<bool> needed, Grads &grads) {
  resizeGrads(*this, grads);
  if (dys[0] && getKeyBias() && needed.size() > 3 && needed[3])
    return emitOpError("the gradient of key_bias is not implemented: the key "
                       "bias must not depend on a parameter (a key-padding "
                       "mask from the data needs none)");
  if (!dys[0] || !(needed[0] || needed[1] || needed[2]))
    return success();
  auto bwd = AttentionBackwardOp::create(
      b, getLoc(),
      TypeRange{getQ().getType(), getK().getType(), getV().getType()}, dys[0],
      getQ(), getK(), getV(), getResult(), getLse(), getKeyBias(),
      getCausalAttr(), getScaleAttr(), getPAttr(), getSeedAttr());
  for (int i = 0; i < 3; ++i)
    if (needed[i])
      grads[i] = bwd->getResult(i);
  return success();
}

/// Chunked linear + cross-entropy: the operands and the row log-sum-exps;
/// the backward recomputes each chunk's logits. Labels have no gradient.
SmallVector<Value> LinearCrossEntropyOp::getSavedForBackward() {
  SmallVector<Value> saved{getHidden(), getWeight(), getLabels(), getLse()};
  if (getBias())
    saved.push_back(getBias());
  return saved;
}

LogicalResult LinearCrossEntropyOp::buildGradients(OpBuilder &b,
                                                   ArrayRef<Value> dys,
                                                   ArrayRef<bool> needed,
                                                   Grads &grads) {
  resizeGrads(*this, grads);
  // Operands: hidden, weight, labels (no gradient), then the bias.
  bool biasNeeded = getBias() && needed[3];
  if (!dys[0] || !(needed[0] || needed[1] || biasNeeded))
    return success();
  SmallVector<Type, 3> types{getHidden().getType(), getWeight().getType()};
  if (getBias())
    types.push_back(getBias().getType());
  auto bwd = LinearCrossEntropyBackwardOp::create(
      b, getLoc(), types, dys[0], getHidden(), getWeight(), getLabels(),
      getLse(), getBias(), getChunkAttr());
  for (int i = 0; i < 2; ++i)
    if (needed[i])
      grads[i] = bwd->getResult(i);
  if (biasNeeded)
    grads[3] = bwd.getGradBias();
  return success();
}

SmallVector<Value> LayerNormOp::getSavedForBackward() {
  return {getX(), getGamma()};
}

LogicalResult LayerNormOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                          ArrayRef<bool> needed, Grads &grads) {
  return buildNormGradients<LayerNormBackwardOp>(*this, b, dys, needed, grads);
}

/// RMS norm keeps x and gamma; the backward recomputes each row's root
/// mean square, so nothing per row is saved.
SmallVector<Value> RmsNormOp::getSavedForBackward() {
  return {getX(), getGamma()};
}

LogicalResult RmsNormOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                        ArrayRef<bool> needed, Grads &grads) {
  resizeGrads(*this, grads);
  if (!dys[0] || !(needed[0] || needed[1]))
    return success();
  auto bwd = RmsNormBackwardOp::create(
      b, getLoc(), TypeRange{getX().getType(), getGamma().getType()}, dys[0],
      getX(), getGamma(), getEpsilonAttr());
  for (int i = 0; i < 2; ++i)
    if (needed[i])
      grads[i] = bwd->getResult(i);
  return success();
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

SmallVector<Value> MaxPool2DOp::getSavedForBackward() { return {getX()}; }

LogicalResult MaxPool2DOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                          ArrayRef<bool> needed, Grads &grads) {
  resizeGrads(*this, grads);
  if (needed[0])
    grads[0] = MaxPool2DBackwardOp::create(
        b, getLoc(), getX().getType(), dys[0], getX(), getKernelSizeAttr(),
        b.getDenseI64ArrayAttr(getEffectiveStrides()), getPaddingAttr());
  return success();
}

SmallVector<Value> AvgPool2DOp::getSavedForBackward() { return {}; }

LogicalResult AvgPool2DOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                          ArrayRef<bool> needed, Grads &grads) {
  resizeGrads(*this, grads);
  if (needed[0])
    grads[0] = AvgPool2DBackwardOp::create(
        b, getLoc(), getX().getType(), dys[0], getKernelSizeAttr(),
        b.getDenseI64ArrayAttr(getEffectiveStrides()), getPaddingAttr());
  return success();
}

SmallVector<Value> GlobalAvgPool2DOp::getSavedForBackward() { return {}; }

LogicalResult GlobalAvgPool2DOp::buildGradients(OpBuilder &b,
                                                ArrayRef<Value> dys,
                                                ArrayRef<bool> needed,
                                                Grads &grads) {
  resizeGrads(*this, grads);
  if (needed[0])
    grads[0] = GlobalAvgPool2DBackwardOp::create(b, getLoc(), getX().getType(),
                                                 dys[0]);
  return success();
}

//===----------------------------------------------------------------------===//
// Softmax, dropout
//===----------------------------------------------------------------------===//

SmallVector<Value> SoftmaxOp::getSavedForBackward() { return {getResult()}; }

LogicalResult SoftmaxOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                        ArrayRef<bool> needed, Grads &grads) {
  resizeGrads(*this, grads);
  if (needed[0])
    grads[0] = SoftmaxBackwardOp::create(b, getLoc(), getType(), dys[0],
                                         getResult(), getAxisAttr());
  return success();
}

SmallVector<Value> DropoutOp::getSavedForBackward() { return {}; }

LogicalResult DropoutOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                        ArrayRef<bool> needed, Grads &grads) {
  resizeGrads(*this, grads);
  // The mask is a function of (seed, step, index): dropout of the gradient
  // with the same seed applies the same mask and scale, nothing is stored.
  if (needed[0])
    grads[0] =
        DropoutOp::create(b, getLoc(), dys[0], getPAttr(), getSeedAttr());
  return success();
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

SmallVector<Value> ReshapeOp::getSavedForBackward() { return {}; }

LogicalResult ReshapeOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                        ArrayRef<bool> needed, Grads &grads) {
  resizeGrads(*this, grads);
  if (needed[0])
    grads[0] = reshape(b, getLoc(), dys[0], getX().getType());
  return success();
}

// The adjoint of a cast is the cast back: autocast's rule, so a layer that
// computes in f16 hands an f32 gradient to its f32 master weight.
SmallVector<Value> CastOp::getSavedForBackward() { return {}; }

LogicalResult CastOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                     ArrayRef<bool> needed, Grads &grads) {
  resizeGrads(*this, grads);
  if (needed[0])
    grads[0] = CastOp::create(b, getLoc(), getX().getType(), dys[0]);
  return success();
}

SmallVector<Value> TransposeOp::getSavedForBackward() { return {}; }

LogicalResult TransposeOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                          ArrayRef<bool> needed, Grads &grads) {
  resizeGrads(*this, grads);
  if (!needed[0])
    return success();
  ArrayRef<int64_t> perm = getPermutation();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = static_cast<int64_t>(i);
  grads[0] = TransposeOp::create(b, getLoc(), dys[0], inverse);
  return success();
}

SmallVector<Value> SliceOp::getSavedForBackward() { return {}; }

LogicalResult SliceOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                      ArrayRef<bool> needed, Grads &grads) {
  resizeGrads(*this, grads);
  if (needed[0])
    grads[0] = SliceBackwardOp::create(
        b, getLoc(), getX().getType(), dys[0], getOffsetsAttr(), getSizesAttr(),
        b.getDenseI64ArrayAttr(getEffectiveStrides()));
  return success();
}

SmallVector<Value> ConcatOp::getSavedForBackward() { return {}; }

LogicalResult ConcatOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                       ArrayRef<bool> needed, Grads &grads) {
  resizeGrads(*this, grads);
  int64_t rank = getType().getRank();
  int64_t axis = getAxisAttr().getInt();
  if (axis < 0)
    axis += rank;
  int64_t offset = 0;
  for (auto [i, input] : llvm::enumerate(getInputs())) {
    RankedTensorType t = typeOf(input);
    if (needed[i] && isa<FloatType>(t.getElementType())) {
      SmallVector<int64_t> offsets(rank, 0);
      offsets[axis] = offset;
      grads[i] = SliceOp::create(
          b, getLoc(), dys[0], offsets, t.getShape(),
          b.getDenseI64ArrayAttr(SmallVector<int64_t>(rank, 1)));
    }
    offset += t.getDimSize(axis);
  }
  return success();
}

SmallVector<Value> UpsampleNearest2DOp::getSavedForBackward() { return {}; }

LogicalResult UpsampleNearest2DOp::buildGradients(OpBuilder &b,
                                                  ArrayRef<Value> dys,
                                                  ArrayRef<bool> needed,
                                                  Grads &grads) {
  resizeGrads(*this, grads);
  if (needed[0])
    grads[0] = UpsampleNearest2DBackwardOp::create(
        b, getLoc(), getX().getType(), dys[0], getScaleAttr());
  return success();
}

/// A step function: its gradient is 0 almost everywhere, so it adds none.
SmallVector<Value> CompareOp::getSavedForBackward() { return {}; }

LogicalResult CompareOp::buildGradients(OpBuilder &, ArrayRef<Value>,
                                        ArrayRef<bool>, Grads &grads) {
  resizeGrads(*this, grads);
  return success();
}

SmallVector<Value> EmbeddingOp::getSavedForBackward() { return {getIds()}; }

LogicalResult EmbeddingOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                          ArrayRef<bool> needed, Grads &grads) {
  resizeGrads(*this, grads);
  if (needed[0])
    grads[0] =
        EmbeddingBackwardOp::create(b, getLoc(), getTable().getType(), dys[0],
                                    getIds(), getPaddingIdxAttr());
  return success();
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

SmallVector<Value> CrossEntropyOp::getSavedForBackward() {
  return {getLogits(), getLabels()};
}

LogicalResult CrossEntropyOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                             ArrayRef<bool> needed,
                                             Grads &grads) {
  resizeGrads(*this, grads);
  if (needed[0])
    grads[0] = CrossEntropyBackwardOp::create(
        b, getLoc(), getLogits().getType(), dys[0], getLogits(), getLabels());
  return success();
}

SmallVector<Value> MseLossOp::getSavedForBackward() {
  return {getPrediction(), getTarget()};
}

LogicalResult MseLossOp::buildGradients(OpBuilder &b, ArrayRef<Value> dys,
                                        ArrayRef<bool> needed, Grads &grads) {
  resizeGrads(*this, grads);
  if (!needed[0] && !needed[1])
    return success();
  Location loc = getLoc();
  Value dp = MseLossBackwardOp::create(b, loc, getPrediction().getType(),
                                       dys[0], getPrediction(), getTarget());
  if (needed[0])
    grads[0] = dp;
  if (needed[1])
    grads[1] = negate(b, loc, dp);
  return success();
}
