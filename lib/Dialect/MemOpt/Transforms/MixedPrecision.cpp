//===- MixedPrecision.cpp - autocast and loss scaling as a rewrite --------===//
//
// `--memopt-mixed-precision`: walks the forward graph in order and gives
// every op the operand types its autocast class asks for
// (PrecisionOpInterface), inserting one memopt.cast per value and type and
// re-inferring result types. Loss scaling is requested from
// `--memopt-autodiff` with the function attribute `memopt.loss_scale`.
//
//===----------------------------------------------------------------------===//

#include "memopt/Dialect/MemOpt/IR/MemOptDialect.h"
#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"
#include "memopt/Dialect/MemOpt/Transforms/ForeignIR.h"
#include "memopt/Dialect/MemOpt/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/DenseMap.h"

#include <cmath>
#include <limits>

#define DEBUG_TYPE "memopt-mixed-precision"

namespace memopt {
#define GEN_PASS_DEF_MEMOPTMIXEDPRECISION
#include "memopt/Dialect/MemOpt/Transforms/Passes.h.inc"
} // namespace memopt

using namespace mlir;
using namespace memopt;

namespace {

Type elementTypeOf(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor ? tensor.getElementType() : Type();
}

bool isFloatTensor(Type type) {
  return isa_and_nonnull<FloatType>(elementTypeOf(type));
}

/// A training graph: a scalar float loss first and trainable parameters.
bool isTrainingGraph(func::FuncOp func) {
  if (func.getNumResults() == 0)
    return false;
  auto loss = dyn_cast<RankedTensorType>(func.getResultTypes().front());
  if (!loss || loss.getRank() != 0 || !isa<FloatType>(loss.getElementType()))
    return false;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (func.getArgAttr(i, MemOptDialect::kParamAttrName))
      return true;
  return false;
}

class Autocast {
public:
  Autocast(func::FuncOp func, FloatType low) : func(func), low(low) {}

  /// Retypes the function body; fails with a located diagnostic.
  LogicalResult run();

  int64_t numCasts = 0;

private:
  /// `value` converted to element type `element` for `user`: one cast per
  /// value and type, placed before its first user (so a weight's f16 copy
  /// is made where the layer runs, not at the top of the function).
  Value castTo(Value value, Type element, Operation *user);
  LogicalResult retype(Operation *op);

  func::FuncOp func;
  FloatType low;
  llvm::DenseMap<std::pair<Value, Type>, Value> casts;
  SmallVector<Operation *> inserted;
};

Value Autocast::castTo(Value value, Type element, Operation *user) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getElementType() == element)
    return value;
  Value &slot = casts[{value, element}];
  if (slot)
    return slot;
  OpBuilder b(user);
  auto op = CastOp::create(b, value.getLoc(), type.clone(element), value);
  inserted.push_back(op);
  ++numCasts;
  return slot = op.getResult();
}

LogicalResult Autocast::retype(Operation *op) {
  auto precision = dyn_cast<PrecisionOpInterface>(op);
  if (!precision) {
    if (isa<MemOptDialect>(op->getDialect()))
      return op->emitOpError(
          "has no autocast class: --memopt-mixed-precision runs on the "
          "forward graph, before --memopt-autodiff");
    return op->emitOpError("is not supported by --memopt-mixed-precision");
  }
  SmallVector<unsigned> indices = precision.getPrecisionOperands();
  if (indices.empty())
    return success();
  Builder b(op->getContext());
  Type f32 = b.getF32Type();
  Type target;
  switch (precision.getPrecisionClass()) {
  case PrecisionClass::Allow:
    target = low;
    break;
  case PrecisionClass::Deny:
    target = f32;
    break;
  case PrecisionClass::Follow:
    // The widest input type; f16 and bf16 together meet in f32, as in
    // PyTorch's type promotion.
    for (unsigned i : indices) {
      Type t = elementTypeOf(op->getOperand(i).getType());
      if (!target || target == t)
        target = t;
      else
        target = f32;
    }
    break;
  }

  for (unsigned i : indices) {
    Value operand = op->getOperand(i);
    if (elementTypeOf(operand.getType()) != target)
      op->setOperand(i, castTo(operand, target, op));
  }

  SmallVector<Type> resultTypes;
  if (auto *infer =
          op->getRegisteredInfo()
              ? op->getRegisteredInfo()->getInterface<InferTypeOpInterface>()
              : nullptr) {
    if (failed(infer->inferReturnTypes(
            op->getContext(), op->getLoc(), op->getOperands(),
            op->getRawDictionaryAttrs(), op->getPropertiesStorage(),
            op->getRegions(), resultTypes)))
      return op->emitOpError("cannot be retyped to ") << target;
  } else {
    // Ops that write their result type (reshape): float results take the
    // compute type.
    for (Type t : op->getResultTypes())
      resultTypes.push_back(
          isFloatTensor(t) ? cast<RankedTensorType>(t).clone(target) : t);
  }
  for (auto [result, type] : llvm::zip(op->getResults(), resultTypes))
    result.setType(type);
  return success();
}

LogicalResult Autocast::run() {
  if (!func.getBody().hasOneBlock())
    return func.emitOpError(
        "--memopt-mixed-precision expects a single-block function");
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    if (func.getArgAttr(i, MemOptDialect::kOptimizerStateAttrName))
      return func.emitOpError(
          "is already a training step (it has optimizer state): run "
          "--memopt-mixed-precision on the forward graph, before "
          "--memopt-autodiff");
    if (elementTypeOf(func.getArgumentTypes()[i]) &&
        elementTypeOf(func.getArgumentTypes()[i]).isF64())
      return func.emitOpError("argument #")
             << i << " is f64: --memopt-mixed-precision expects an f32 graph";
  }

  Block &body = func.front();
  for (Operation &op : llvm::make_early_inc_range(body.without_terminator())) {
    if (isa<CastOp, arith::ConstantOp>(op) ||
        llvm::none_of(op.getOperandTypes(), isFloatTensor))
      continue;
    if (llvm::any_of(op.getOperandTypes(), [](Type t) {
          return elementTypeOf(t) && elementTypeOf(t).isF64();
        }))
      return op.emitOpError(
          "has an f64 operand: --memopt-mixed-precision expects an f32 graph");
    if (failed(retype(&op)))
      return failure();
  }

  // The signature stays: returned values go back to their declared types.
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  OpBuilder b(ret);
  for (auto [i, type] : llvm::enumerate(func.getResultTypes())) {
    Value v = ret.getOperand(i);
    if (v.getType() == type)
      continue;
    auto op = CastOp::create(b, ret.getLoc(), type, v);
    inserted.push_back(op);
    ++numCasts;
    ret.setOperand(i, op.getResult());
  }

  // Fold what the insertion made redundant (casts of constants, cast
  // chains), touching nothing else.
  RewritePatternSet patterns(func.getContext());
  CastOp::getCanonicalizationPatterns(patterns, func.getContext());
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
  bool changed = false;
  (void)applyOpPatternsGreedily(inserted, std::move(patterns), config,
                                &changed);
  return success();
}

struct MemOptMixedPrecisionPass
    : public memopt::impl::MemOptMixedPrecisionBase<MemOptMixedPrecisionPass> {
  using MemOptMixedPrecisionBase::MemOptMixedPrecisionBase;

  void runOnOperation() override {
    Operation *anchor = getOperation();
    MLIRContext *ctx = &getContext();
    FloatType low;
    // The option parser admits fp16 and bf16 only; fp32 is the
    // pipeline's, which then leaves this pass out.
    if (precision == Precision::FP16)
      low = Float16Type::get(ctx);
    else if (precision == Precision::BF16)
      low = BFloat16Type::get(ctx);
    else {
      anchor->emitError() << "memopt-mixed-precision: precision=fp32 casts "
                             "nothing; leave the pass out";
      return signalPassFailure();
    }

    // Loss scaling: dynamic, none, or a constant.
    std::string mode = lossScale;
    if (mode.empty())
      mode = precision == Precision::FP16 ? "dynamic" : "none";
    bool dynamic = mode == "dynamic";
    double scale = initScale;
    if (!dynamic && mode != "none") {
      char *end = nullptr;
      scale = std::strtod(mode.c_str(), &end);
      // The scale multiplies an f32 loss: beyond f32's range it is inf.
      if (mode.empty() || *end != '\0' || !std::isfinite(scale) ||
          !(scale > 0) || scale > std::numeric_limits<float>::max()) {
        anchor->emitError() << "memopt-mixed-precision: loss-scale must be "
                               "'dynamic', 'none' or a positive number within "
                               "f32's range, got '"
                            << lossScale << "'";
        return signalPassFailure();
      }
    }
    if (!(initScale > 0) || !(initScale <= std::numeric_limits<float>::max()) ||
        !(growthFactor > 1) || !std::isfinite(growthFactor) ||
        !(backoffFactor > 0 && backoffFactor < 1) || growthInterval < 1) {
      anchor->emitError() << "memopt-mixed-precision: expected init-scale > 0, "
                             "growth-factor > 1, backoff-factor in (0, 1) and "
                             "growth-interval >= 1, got "
                          << initScale << ", " << growthFactor << ", "
                          << backoffFactor << ", "
                          << static_cast<int64_t>(growthInterval);
      return signalPassFailure();
    }

    SmallVector<func::FuncOp> graphs;
    if (failed(collectMemOptGraphs(anchor, "memopt-mixed-precision", graphs)))
      return signalPassFailure();
    for (func::FuncOp func : graphs) {
      if (func->hasAttr(MemOptDialect::kLossScaleAttrName)) {
        func.emitOpError("already has mixed precision (memopt.loss_scale)");
        return signalPassFailure();
      }
      Autocast autocast(func, low);
      if (failed(autocast.run()))
        return signalPassFailure();
      numCasts += autocast.numCasts;
      if (mode == "none" || !isTrainingGraph(func))
        continue;
      Builder b(ctx);
      func->setAttr(
          MemOptDialect::kLossScaleAttrName,
          b.getDictionaryAttr({
              b.getNamedAttr("dynamic", b.getBoolAttr(dynamic)),
              b.getNamedAttr("init_scale", b.getF64FloatAttr(scale)),
              b.getNamedAttr("growth_factor", b.getF64FloatAttr(growthFactor)),
              b.getNamedAttr("backoff_factor",
                             b.getF64FloatAttr(backoffFactor)),
              b.getNamedAttr("growth_interval",
                             b.getI64IntegerAttr(growthInterval)),
          }));
    }
  }
};

} // namespace
