//===- PrecisionModel.cpp - autocast classes, casts, loss-scaling ops -----===//
//
// PrecisionOpInterface's overrides, which follow PyTorch's autocast lists:
// convolution, linear and matmul compute in the low precision; softmax,
// layer norm, the losses and global average pooling (a reduction) in f32;
// batch norm runs in its input's type with f32 statistics. Every other
// forward op follows its inputs (the interface's default). Also the folds
// and verifiers of the cast and loss-scaling ops.
//
//===----------------------------------------------------------------------===//

#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/APFloat.h"

using namespace mlir;
using namespace memopt;

SmallVector<unsigned> memopt::floatOperandIndices(Operation *op) {
  SmallVector<unsigned> indices;
  for (auto [i, operand] : llvm::enumerate(op->getOperands()))
    if (auto t = dyn_cast<RankedTensorType>(operand.getType());
        t && isa<FloatType>(t.getElementType()))
      indices.push_back(static_cast<unsigned>(i));
  return indices;
}

//===----------------------------------------------------------------------===//
// Autocast classes
//===----------------------------------------------------------------------===//

#define MEMOPT_PRECISION(OP, CLASS)                                            \
  PrecisionClass OP::getPrecisionClass() { return PrecisionClass::CLASS; }     \
  SmallVector<unsigned> OP::getPrecisionOperands() {                           \
    return floatOperandIndices(*this);                                         \
  }
// Tensor-core ops: autocast's "lower precision fp" list.
MEMOPT_PRECISION(Conv2DOp, Allow)
MEMOPT_PRECISION(LinearOp, Allow)
MEMOPT_PRECISION(MatMulOp, Allow)
// Its products on tensor cores; the softmax inside runs in f32 and the
// log-sum-exp result stays f32 (AttentionOp::inferReturnTypes).
MEMOPT_PRECISION(AttentionOp, Allow)
// The same for the LM head fused with its loss: the loss stays f32.
MEMOPT_PRECISION(LinearCrossEntropyOp, Allow)
// Autocast's "fp32" list: exponentials, normalisations over many elements,
// losses, and reductions whose sums f16 would round away.
MEMOPT_PRECISION(SoftmaxOp, Deny)
MEMOPT_PRECISION(ExpOp, Deny)
MEMOPT_PRECISION(LogOp, Deny)
MEMOPT_PRECISION(LayerNormOp, Deny)
MEMOPT_PRECISION(RmsNormOp, Deny)
MEMOPT_PRECISION(CrossEntropyOp, Deny)
MEMOPT_PRECISION(MseLossOp, Deny)
MEMOPT_PRECISION(GlobalAvgPool2DOp, Deny)
#undef MEMOPT_PRECISION

// Batch norm: x (and y) follow the activations; the scale, shift and
// running statistics keep their own (f32) type, and the kernels compute the
// statistics in f32.
#define MEMOPT_BATCH_NORM_PRECISION(OP)                                        \
  PrecisionClass OP::getPrecisionClass() { return PrecisionClass::Follow; }    \
  SmallVector<unsigned> OP::getPrecisionOperands() { return {0}; }
MEMOPT_BATCH_NORM_PRECISION(BatchNormOp)
MEMOPT_BATCH_NORM_PRECISION(BatchNormInferenceOp)
MEMOPT_BATCH_NORM_PRECISION(BatchNormActOp)
#undef MEMOPT_BATCH_NORM_PRECISION

//===----------------------------------------------------------------------===//
// memopt.cast
//===----------------------------------------------------------------------===//

namespace {

/// Whether every value of float type `from` is exactly a value of `to`.
bool holdsExactly(Type from, Type to) {
  return llvm::APFloatBase::isRepresentableBy(
      cast<FloatType>(from).getFloatSemantics(),
      cast<FloatType>(to).getFloatSemantics());
}

Type elementType(Value v) {
  return cast<ShapedType>(v.getType()).getElementType();
}

/// cast(cast(x : A -> B) -> C) with B holding every value of A exactly is
/// cast(x : A -> C): the inner cast rounded nothing. (C == A is the fold.)
struct FoldExactCastChain : public OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CastOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getX().getDefiningOp<CastOp>();
    if (!inner || !holdsExactly(elementType(inner.getX()),
                                elementType(inner.getResult())))
      return failure();
    if (inner.getX().getType() == op.getType()) {
      rewriter.replaceOp(op, inner.getX());
      return success();
    }
    rewriter.replaceOpWithNewOp<CastOp>(op, op.getType(), inner.getX());
    return success();
  }
};

} // namespace

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getX().getType() == getType())
    return getX();
  if (auto inner = getX().getDefiningOp<CastOp>();
      inner && inner.getX().getType() == getType() &&
      holdsExactly(elementType(inner.getX()), elementType(inner.getResult())))
    return inner.getX();
  // A constant is converted at compile time, rounding as the kernel would.
  auto constant = dyn_cast_or_null<DenseFPElementsAttr>(adaptor.getX());
  if (!constant)
    return {};
  auto target = cast<FloatType>(getType().getElementType());
  const llvm::fltSemantics &semantics = target.getFloatSemantics();
  return constant.mapValues(target, [&](const APFloat &value) {
    APFloat converted = value;
    bool losesInfo = false;
    converted.convert(semantics, APFloat::rmNearestTiesToEven, &losesInfo);
    return converted.bitcastToAPInt();
  });
}

void CastOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                         MLIRContext *context) {
  results.add<FoldExactCastChain>(context);
}

//===----------------------------------------------------------------------===//
// Loss-scaling ops
//===----------------------------------------------------------------------===//

LogicalResult FoundInfOp::verify() {
  if (getValues().empty())
    return emitOpError("expected at least one tensor to check");
  return success();
}

LogicalResult UnscaleOp::verify() { return success(); }

SmallVector<unsigned> UnscaleOp::getInPlaceOperands() { return {0}; }

LogicalResult UpdateLossScaleOp::verify() {
  double growth = getGrowthFactor().convertToDouble();
  double backoff = getBackoffFactor().convertToDouble();
  if (!(growth > 1.0))
    return emitOpError("expected 'growth_factor' > 1, got ") << growth;
  if (!(backoff > 0.0 && backoff < 1.0))
    return emitOpError("expected 'backoff_factor' in (0, 1), got ") << backoff;
  if (getGrowthInterval() < 1)
    return emitOpError("expected 'growth_interval' >= 1, got ")
           << getGrowthInterval();
  return success();
}

LogicalResult SelectOp::verify() { return success(); }

/// Folded casts of constants become arith constants.
Operation *MemOptDialect::materializeConstant(OpBuilder &builder,
                                              Attribute value, Type type,
                                              Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return arith::ConstantOp::create(builder, loc, type, elements);
}
