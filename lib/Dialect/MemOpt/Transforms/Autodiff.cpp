//===- Autodiff.cpp - forward graph + loss -> training step ---------------===//
//
// `--memopt-autodiff`: reverse-mode differentiation over a function's single
// block, driven entirely by DifferentiableOpInterface, then the optimizer
// update. The pass also checks every rule against its declaration: a rule
// may read, of its own op's values, only those it declares saved, since the
// memory passes keep (or recompute) exactly those.
//
//===----------------------------------------------------------------------===//

#include "memopt/Contract/OptimizerShapes.h"
#include "memopt/Dialect/MemOpt/IR/MemOptDialect.h"
#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"
#include "memopt/Dialect/MemOpt/Transforms/ForeignIR.h"
#include "memopt/Dialect/MemOpt/Transforms/Passes.h"
#include "memopt/Dialect/MemOpt/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include <cmath>

#define DEBUG_TYPE "memopt-autodiff"

namespace memopt {
#define GEN_PASS_DEF_MEMOPTAUTODIFF
#include "memopt/Dialect/MemOpt/Transforms/Passes.h.inc"
} // namespace memopt

using namespace mlir;
using namespace memopt;

namespace {

/// Whether parameter `arg` is frozen (`memopt.frozen`): not trained.
bool isFrozen(func::FuncOp func, BlockArgument arg) {
  return bool(
      func.getArgAttr(arg.getArgNumber(), MemOptDialect::kFrozenAttrName));
}

bool isFloatTensor(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && isa<FloatType>(t.getElementType());
}

/// True if any op in `module` names `func` in an attribute (a call, or any
/// op's symbol reference, registered or not).
bool isReferenced(func::FuncOp func, ModuleOp module) {
  StringAttr name = func.getSymNameAttr();
  WalkResult found = module.walk([&](Operation *op) {
    bool hit = false;
    op->getAttrDictionary().walk(
        [&](SymbolRefAttr ref) { hit |= ref.getRootReference() == name; });
    if (auto props = op->getPropertiesAsAttribute())
      props.walk(
          [&](SymbolRefAttr ref) { hit |= ref.getRootReference() == name; });
    return hit ? WalkResult::interrupt() : WalkResult::advance();
  });
  return found.wasInterrupted();
}

/// A training graph: first result a 0-d float tensor computed by a memopt
/// op (a loss), not passed through or a constant.
bool isTrainingGraph(func::FuncOp func) {
  if (func.isExternal() || func.getNumResults() == 0)
    return false;
  auto loss = dyn_cast<RankedTensorType>(func.getResultTypes().front());
  if (!loss || loss.getRank() != 0 || !isa<FloatType>(loss.getElementType()))
    return false;
  Operation *def =
      func.getBody().front().getTerminator()->getOperand(0).getDefiningOp();
  return def && isa<MemOptDialect>(def->getDialect());
}

Value scalarConstant(OpBuilder &b, Location loc, Type elementType, double v) {
  auto type = RankedTensorType::get({}, elementType);
  return arith::ConstantOp::create(
      b, loc, type,
      DenseElementsAttr::get(type, b.getFloatAttr(elementType, v)));
}

/// The loss scaling a forward graph asks for (`memopt.loss_scale`, set by
/// --memopt-mixed-precision), and the values that carry it in the step.
struct LossScaling {
  bool enabled = false;
  bool dynamic = false;
  double initScale = 1.0, growthFactor = 2.0, backoffFactor = 0.5;
  int64_t growthInterval = 2000;
  /// The scale the backward pass starts from: a state argument (dynamic) or
  /// a constant (static).
  Value scale;
  /// Consecutive finite steps (dynamic only).
  Value growthTracker;
};

LossScaling readLossScaling(func::FuncOp func) {
  LossScaling scaling;
  auto dict =
      func->getAttrOfType<DictionaryAttr>(MemOptDialect::kLossScaleAttrName);
  if (!dict)
    return scaling;
  scaling.enabled = true;
  scaling.dynamic = dict.getAs<BoolAttr>("dynamic").getValue();
  scaling.initScale = dict.getAs<FloatAttr>("init_scale").getValueAsDouble();
  scaling.growthFactor =
      dict.getAs<FloatAttr>("growth_factor").getValueAsDouble();
  scaling.backoffFactor =
      dict.getAs<FloatAttr>("backoff_factor").getValueAsDouble();
  scaling.growthInterval = dict.getAs<IntegerAttr>("growth_interval").getInt();
  return scaling;
}

struct MemOptAutodiffPass
    : public memopt::impl::MemOptAutodiffBase<MemOptAutodiffPass> {
  using MemOptAutodiffBase::MemOptAutodiffBase;

  void runOnOperation() override {
    if (failed(verifyOptions()))
      return signalPassFailure();
    SmallVector<func::FuncOp> graphs;
    if (failed(collectMemOptGraphs(getOperation(), "memopt-autodiff", graphs)))
      return signalPassFailure();
    if (!function.empty()) {
      auto named = getOperation().lookupSymbol<func::FuncOp>(function);
      if (!named) {
        getOperation().emitError()
            << "memopt-autodiff: no function named '" << function << "'";
        return signalPassFailure();
      }
      if (!llvm::is_contained(graphs, named) || !isTrainingGraph(named)) {
        named.emitOpError()
            << "is not a training graph (memopt ops ending in a 0-d float "
               "loss computed by a memopt op), as function="
            << function << " requires";
        return signalPassFailure();
      }
      graphs.assign({named});
    }
    for (func::FuncOp func : graphs) {
      if (!isTrainingGraph(func))
        continue;
      // The step gains arguments and results: a caller would be left
      // calling the old signature.
      if (isReferenced(func, getOperation())) {
        func.emitOpError("is called, and --memopt-autodiff would change its "
                         "signature under its callers; differentiate a "
                         "function nothing calls");
        return signalPassFailure();
      }
      if (failed(differentiate(func)))
        return signalPassFailure();
      foldCasts(func);
    }
  }

  /// Folds the step's cast chains (the gradient of a widening cast feeding
  /// a narrowing one: cast(cast(g)) is g) now, before --memopt-inplace and
  /// --memopt-plan-memory decide buffers; the lowering folds nothing.
  void foldCasts(func::FuncOp func) {
    SmallVector<Operation *> casts;
    func.walk([&](CastOp op) { casts.push_back(op); });
    if (casts.empty())
      return;
    RewritePatternSet patterns(&getContext());
    CastOp::getCanonicalizationPatterns(patterns, &getContext());
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    (void)applyOpPatternsGreedily(casts, std::move(patterns), config);
  }

  /// Every hyperparameter in its range; a value outside it is an error,
  /// never a default in its place (an lr or weight decay not given, and only
  /// that, means the optimizer's usual value).
  LogicalResult verifyOptions() {
    auto bad = [&](StringRef name, double value, StringRef range) {
      getOperation().emitError()
          << "memopt-autodiff: " << name << " must be " << range << ", got "
          << llvm::formatv("{0}", llvm::format("%g", value)).str();
      return failure();
    };
    // The options given as text (empty: the optimizer's default): a number,
    // then in range.
    auto parse = [&](StringRef name, StringRef text, StringRef range,
                     bool (*inRange)(double),
                     std::optional<double> &out) -> LogicalResult {
      if (text.empty())
        return success();
      double value = 0;
      if (text.trim().getAsDouble(value)) {
        getOperation().emitError() << "memopt-autodiff: " << name << " must be "
                                   << range << ", got '" << text << "'";
        return failure();
      }
      if (!(std::isfinite(value) && inRange(value)))
        return bad(name, value, range);
      out = value;
      return success();
    };
    if (failed(parse(
            "lr", lr, "a finite number > 0", [](double v) { return v > 0; },
            rate)) ||
        failed(parse(
            "weight-decay", weightDecay, "a finite number >= 0",
            [](double v) { return v >= 0; }, decay)) ||
        failed(parse(
            "clip-norm", clipNorm, "a finite number > 0",
            [](double v) { return v > 0; }, maxNorm)))
      return failure();
    if (stateDtype != "param" && stateDtype != "bf16") {
      getOperation().emitError()
          << "memopt-autodiff: state-dtype must be 'param' or 'bf16', got '"
          << stateDtype << "'";
      return failure();
    }
    if (stateDtype == "bf16" && optimizer != Optimizer::Momentum &&
        optimizer != Optimizer::Adam && optimizer != Optimizer::AdamW) {
      getOperation().emitError()
          << "memopt-autodiff: state-dtype=bf16 applies to momentum, adam "
             "and adamw, not "
          << stringifyChoice(optimizer.getValue());
      return failure();
    }
    if (maxNorm && optimizer == Optimizer::None) {
      getOperation().emitError()
          << "memopt-autodiff: clip-norm clips the gradients an optimizer "
             "applies; optimizer=none applies none";
      return failure();
    }
    if (!(momentum >= 0 && momentum < 1))
      return bad("momentum", momentum, "in [0, 1)");
    if (!(dampening >= 0 && dampening <= 1))
      return bad("dampening", dampening, "in [0, 1]");
    if (!(beta1 >= 0 && beta1 < 1))
      return bad("beta1", beta1, "in [0, 1)");
    if (!(beta2 >= 0 && beta2 < 1))
      return bad("beta2", beta2, "in [0, 1)");
    if (!(std::isfinite(eps) && eps > 0))
      return bad("eps", eps, "a finite number > 0");
    if (!(std::isfinite(clipThreshold) && clipThreshold > 0))
      return bad("clip-threshold", clipThreshold, "a finite number > 0");
    if (!(std::isfinite(decayRate) && decayRate < 0))
      return bad("decay-rate", decayRate, "a finite number < 0");
    return success();
  }

  double learningRate() const {
    if (rate)
      return *rate;
    return optimizer == Optimizer::SGD || optimizer == Optimizer::Momentum
               ? 1e-2
               : 1e-3;
  }
  /// The lr option's value, once verifyOptions parsed it.
  std::optional<double> rate;
  /// The clip-norm option's value, once verifyOptions parsed it.
  std::optional<double> maxNorm;

  /// torch.optim's default weight decay: 0, and 0.01 for AdamW.
  double weightDecayValue() const {
    if (decay)
      return *decay;
    return optimizer == Optimizer::AdamW || optimizer == Optimizer::AdamW8bit
               ? 1e-2
               : 0.0;
  }
  /// The weight-decay option's value, once verifyOptions parsed it.
  std::optional<double> decay;

  LogicalResult differentiate(func::FuncOp func);
  LogicalResult checkSavedValues(DifferentiableOpInterface op,
                                 ArrayRef<Operation *> built,
                                 const llvm::DenseSet<Operation *> &forward);
  LogicalResult appendOptimizer(func::FuncOp func, func::ReturnOp ret,
                                llvm::DenseMap<Value, Value> grads,
                                const LossScaling &scaling);
};

LogicalResult MemOptAutodiffPass::differentiate(func::FuncOp func) {
  if (!func.getBody().hasOneBlock())
    return func.emitOpError("memopt-autodiff expects a single-block function");
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (func.getArgAttr(i, MemOptDialect::kOptimizerStateAttrName))
      return func.emitOpError("is already a training step (it has optimizer "
                              "state); run --memopt-autodiff on the forward "
                              "graph");
  Block &body = func.front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  Value loss = ret.getOperand(0);

  // Forward reachability from the trained parameters: which values need
  // gradients. Frozen parameters need none, and neither do the values only
  // they reach, so nothing is kept for their weight gradients.
  llvm::DenseSet<Value> needsGrad;
  bool anyParam = false;
  for (BlockArgument arg : func.getArguments())
    if (func.getArgAttr(arg.getArgNumber(), MemOptDialect::kParamAttrName)) {
      anyParam = true;
      if (!isFrozen(func, arg))
        needsGrad.insert(arg);
    }
  if (needsGrad.empty())
    return func.emitOpError(anyParam
                                ? "has every 'memopt.param' argument frozen "
                                  "('memopt.frozen'): nothing to train"
                                : "has a scalar loss but no 'memopt.param' "
                                  "arguments: nothing to train");
  SmallVector<Operation *> forward;
  for (Operation &op : body.without_terminator()) {
    forward.push_back(&op);
    if (llvm::none_of(op.getOperands(),
                      [&](Value v) { return needsGrad.contains(v); }))
      continue;
    if (!isa<DifferentiableOpInterface>(op))
      return op.emitOpError("has no gradient rule but depends on a parameter");
    for (Value r : op.getResults())
      if (isFloatTensor(r))
        needsGrad.insert(r);
  }
  if (!needsGrad.contains(loss))
    return func.emitOpError("loss does not depend on any parameter");
  llvm::DenseSet<Operation *> forwardSet(forward.begin(), forward.end());

  OpBuilder b(ret);
  llvm::DenseMap<Value, Value> grads;
  Type lossElement = cast<ShapedType>(loss.getType()).getElementType();
  LossScaling scaling = readLossScaling(func);
  if (!scaling.enabled) {
    grads[loss] = scalarConstant(b, ret.getLoc(), lossElement, 1.0);
  } else {
    // GradScaler: backward starts from d(scale·loss)/d(loss) = scale, so
    // every gradient is scaled and small ones survive f16.
    if (!lossElement.isF32())
      return func.emitOpError("loss scaling needs an f32 loss, got ")
             << loss.getType();
    MLIRContext *ctx = func.getContext();
    auto f32 = RankedTensorType::get({}, b.getF32Type());
    if (scaling.dynamic) {
      NamedAttrList scaleAttrs, trackerAttrs;
      scaleAttrs.set(MemOptDialect::kOptimizerStateAttrName,
                     UnitAttr::get(ctx));
      trackerAttrs = scaleAttrs;
      scaleAttrs.set(MemOptDialect::kInitialValueAttrName,
                     b.getF64FloatAttr(scaling.initScale));
      unsigned index = func.getNumArguments();
      auto i32 = RankedTensorType::get({}, b.getI32Type());
      // Named locations name the arguments in plans and weight files.
      auto named = [&](StringRef name) {
        return NameLoc::get(b.getStringAttr(name), func.getLoc());
      };
      if (failed(func.insertArgument(index, f32, scaleAttrs.getDictionary(ctx),
                                     named("loss_scale"))) ||
          failed(func.insertArgument(index + 1, i32,
                                     trackerAttrs.getDictionary(ctx),
                                     named("loss_scale_growth_tracker"))))
        return func.emitOpError("cannot add the loss-scale arguments");
      scaling.scale = func.getArgument(index);
      scaling.growthTracker = func.getArgument(index + 1);
    } else {
      scaling.scale =
          scalarConstant(b, ret.getLoc(), b.getF32Type(), scaling.initScale);
    }
    grads[loss] = scaling.scale;
    func->removeAttr(MemOptDialect::kLossScaleAttrName);
  }

  for (Operation *op : llvm::reverse(forward)) {
    auto diff = dyn_cast<DifferentiableOpInterface>(op);
    if (!diff)
      continue;
    SmallVector<Value> resultGrads;
    for (Value r : op->getResults())
      resultGrads.push_back(grads.lookup(r));
    if (llvm::all_of(resultGrads, [](Value g) { return !g; }))
      continue;
    SmallVector<bool> needed;
    for (Value v : op->getOperands())
      needed.push_back(needsGrad.contains(v) && isFloatTensor(v));
    if (llvm::none_of(needed, [](bool n) { return n; }))
      continue;

    // Everything the rule builds lands between `before` and the return.
    Operation *before = ret->getPrevNode();
    SmallVector<Value> operandGrads;
    if (failed(diff.buildGradients(b, resultGrads, needed, operandGrads)))
      return failure();
    SmallVector<Operation *> built;
    for (Operation *o = before ? before->getNextNode() : &body.front();
         o != ret.getOperation(); o = o->getNextNode())
      built.push_back(o);
    numBackwardOps += built.size();
    if (failed(checkSavedValues(diff, built, forwardSet)))
      return failure();

    for (auto [operand, grad] : llvm::zip(op->getOperands(), operandGrads)) {
      if (!grad)
        continue;
      Value &slot = grads[operand];
      slot = slot ? Value(AddOp::create(b, op->getLoc(), slot, grad)) : grad;
    }
  }
  return appendOptimizer(func, ret, std::move(grads), scaling);
}

LogicalResult MemOptAutodiffPass::checkSavedValues(
    DifferentiableOpInterface op, ArrayRef<Operation *> built,
    const llvm::DenseSet<Operation *> &forward) {
  llvm::SmallDenseSet<Value> saved;
  for (Value v : op.getSavedForBackward())
    saved.insert(v);
  llvm::SmallDenseSet<Value> own(op->getOperands().begin(),
                                 op->getOperands().end());
  own.insert(op->getResults().begin(), op->getResults().end());
  for (Operation *o : built)
    for (Value v : o->getOperands())
      if (own.contains(v) && !saved.contains(v))
        return op->emitOpError("gradient rule reads ")
               << v << " but does not declare it in getSavedForBackward";
  return success();
}

LogicalResult
MemOptAutodiffPass::appendOptimizer(func::FuncOp func, func::ReturnOp ret,
                                    llvm::DenseMap<Value, Value> grads,
                                    const LossScaling &scaling) {
  MLIRContext *ctx = func.getContext();
  OpBuilder b(ret);
  Location loc = func.getLoc();
  SmallVector<Value> results(ret.getOperands());
  SmallVector<std::optional<int64_t>> updates(results.size());

  // Batch-norm running statistics returned by the graph update their state
  // arguments.
  for (auto [i, v] : llvm::enumerate(results)) {
    auto result = dyn_cast<OpResult>(v);
    if (!result || i == 0)
      continue;
    Value state;
    if (auto bn = dyn_cast<BatchNormOp>(result.getOwner()))
      state = bn.getUpdatedState(result.getResultNumber());
    else if (auto bn = dyn_cast<BatchNormActOp>(result.getOwner()))
      state = bn.getUpdatedState(result.getResultNumber());
    if (auto arg = dyn_cast_or_null<BlockArgument>(state))
      if (func.getArgAttr(arg.getArgNumber(), MemOptDialect::kStateAttrName))
        updates[i] = arg.getArgNumber();
  }

  SmallVector<BlockArgument> params;
  for (BlockArgument arg : func.getArguments())
    if (func.getArgAttr(arg.getArgNumber(), MemOptDialect::kParamAttrName) &&
        !isFrozen(func, arg))
      params.push_back(arg);

  auto stateAttrs = DictionaryAttr::get(
      ctx, {NamedAttribute(
               StringAttr::get(ctx, MemOptDialect::kOptimizerStateAttrName),
               UnitAttr::get(ctx))});
  // The function's type and argument attributes learn the state arguments
  // at once, before the results are set below.
  AppendedArguments stateArgs(func);
  auto addStateArg = [&](Type type) -> BlockArgument {
    return stateArgs.append(type, stateAttrs, loc);
  };

  // Loss scaling, GradScaler's order: check the scaled gradients for
  // infinities and NaNs, unscale them, and skip every update (Adam's step
  // count included) when one was found. With optimizer=none the gradients
  // are the outputs and there is no update to skip: the check is then
  // needed only to update a dynamic scale.
  auto narrowest = [](Value g) -> Value {
    if (auto cast = g.getDefiningOp<CastOp>()) {
      auto from = dyn_cast<FloatType>(getElementTypeOrSelf(cast.getX()));
      auto to = dyn_cast<FloatType>(getElementTypeOrSelf(g));
      if (from && to && from.getWidth() < to.getWidth())
        return cast.getX();
    }
    return g;
  };
  Value found;
  if (scaling.enabled && (scaling.dynamic || optimizer != Optimizer::None)) {
    // A gradient widened from f16 or bf16 (the cast back of a weight's
    // half-precision copy) is checked before the cast: widening is exact,
    // so the flag is the same, and the f32 gradient is then needed only by
    // its update, which waits for the flag. Checked after the cast, every
    // f32 gradient had to be live at once.
    SmallVector<Value> scaled;
    for (BlockArgument p : params)
      if (Value g = grads.lookup(p))
        scaled.push_back(narrowest(g));
    found = FoundInfOp::create(
        b, loc, RankedTensorType::get({}, b.getF32Type()), scaled);
  }
  Value skip = optimizer == Optimizer::None ? Value() : found;
  // What each update reads. A gradient that is the exact widening of a
  // narrower one (the cast back of a weight's f16 or bf16 copy) is read
  // narrow: the update widens it itself, so no wide copy is ever stored.
  // Under loss scaling the update also unscales it (an f32 or f64
  // parameter's, in the parameter's type, as memopt.unscale would): each
  // weight gradient is then held once, in f16, from its computation to its
  // update. Gradients returned as they are (optimizer=none) and those of
  // f16 or bf16 parameters are unscaled by memopt.unscale.
  llvm::SmallDenseMap<Value, Value> lossScaleOf;
  llvm::SetVector<Operation *> widenings;
  for (BlockArgument p : params) {
    Value g = grads.lookup(p);
    if (!g)
      continue;
    auto paramType = cast<FloatType>(getElementTypeOrSelf(p));
    // Clipping needs the unscaled gradients themselves, as
    // clip_grad_norm_ after GradScaler.unscale_: no folding then.
    bool folds = optimizer != Optimizer::None && !maxNorm &&
                 (!scaling.enabled || paramType.isF32() || paramType.isF64());
    if (!folds) {
      if (scaling.enabled)
        grads[p] = UnscaleOp::create(b, loc, g.getType(), g, scaling.scale);
      continue;
    }
    if (Value narrow = narrowest(g);
        narrow != g &&
        llvm::APFloatBase::isRepresentableBy(
            cast<FloatType>(getElementTypeOrSelf(narrow)).getFloatSemantics(),
            paramType.getFloatSemantics())) {
      widenings.insert(g.getDefiningOp());
      grads[p] = narrow;
    }
    if (scaling.enabled)
      lossScaleOf[p] = scaling.scale;
  }

  // clip_grad_norm_: one factor from every gradient, each gradient
  // multiplied by it before its update (in place where the factor's op was
  // its only other reader). No update can run before the whole backward
  // pass: the memory report counts what that holds.
  if (maxNorm) {
    SmallVector<Value> all;
    for (BlockArgument p : params)
      if (Value g = grads.lookup(p))
        all.push_back(g);
    if (!all.empty()) {
      auto clip = ClipCoefficientOp::create(
          b, loc, RankedTensorType::get({}, b.getF32Type()), all,
          b.getF64FloatAttr(*maxNorm));
      llvm::SmallDenseMap<Type, Value> factors;
      for (BlockArgument p : params) {
        Value g = grads.lookup(p);
        if (!g)
          continue;
        auto type = cast<RankedTensorType>(g.getType());
        Value &factor = factors[type.getElementType()];
        if (!factor)
          factor = type.getElementType().isF32()
                       ? clip.getResult()
                       : Value(CastOp::create(
                             b, loc,
                             RankedTensorType::get({}, type.getElementType()),
                             clip.getResult()));
        auto scaled = MulOp::create(b, loc, g, factor);
        if (llvm::all_of(g.getUsers(), [&](Operation *user) {
              return user == clip || user == scaled;
            }))
          scaled->setAttr(MemOptDialect::kInPlaceAttrName,
                          b.getI64IntegerAttr(0));
        grads[p] = scaled;
      }
    }
  }

  double rate = learningRate();
  double weightDecay = weightDecayValue();
  // Momentum buffers and Adam's moments: the parameter's type, or its shape
  // in bf16 (state-dtype=bf16).
  auto bufferType = [&](BlockArgument p) -> Type {
    if (stateDtype != "bf16")
      return p.getType();
    return cast<RankedTensorType>(p.getType()).clone(b.getBF16Type());
  };
  // Optimizers that count their steps (bias corrections, Adafactor's
  // decay schedule) share one step count.
  bool countsSteps = optimizer != Optimizer::None &&
                     optimizer != Optimizer::SGD &&
                     optimizer != Optimizer::Momentum;
  bool decoupled =
      optimizer == Optimizer::AdamW || optimizer == Optimizer::AdamW8bit;
  SmallVector<Value> newParams, newState;
  SmallVector<int64_t> paramIndex, stateIndex;
  Value step, newStep;
  if (countsSteps) {
    auto stepType = RankedTensorType::get({}, b.getF32Type());
    step = addStateArg(stepType);
    newStep = AddOp::create(b, loc, step,
                            scalarConstant(b, loc, b.getF32Type(), 1.0));
    if (skip)
      newStep = SelectOp::create(b, loc, stepType, skip, step, newStep);
  }
  for (BlockArgument p : params) {
    Value g = grads.lookup(p);
    if (!g && optimizer != Optimizer::None)
      func.emitWarning() << "parameter #" << p.getArgNumber()
                         << " does not affect the loss; it is left unchanged";
    paramIndex.push_back(p.getArgNumber());
    if (optimizer == Optimizer::None) {
      // The gradient itself; zeros where the loss does not depend on p.
      auto type = cast<RankedTensorType>(p.getType());
      newParams.push_back(
          g ? g
            : Value(arith::ConstantOp::create(
                  b, loc, type,
                  DenseElementsAttr::get(
                      type, b.getFloatAttr(type.getElementType(), 0.0)))));
      continue;
    }
    if (optimizer == Optimizer::SGD) {
      newParams.push_back(
          g ? Value(SgdUpdateOp::create(
                  b, loc, p, g, skip, lossScaleOf.lookup(p),
                  b.getF64FloatAttr(rate), b.getF64FloatAttr(weightDecay)))
            : Value(p));
      continue;
    }
    if (optimizer == Optimizer::Momentum) {
      BlockArgument buf = addStateArg(bufferType(p));
      if (!buf)
        return func.emitOpError("cannot add optimizer state arguments");
      stateIndex.push_back(buf.getArgNumber());
      if (!g) {
        newParams.push_back(p);
        newState.push_back(buf);
        continue;
      }
      auto update = SgdMomentumUpdateOp::create(
          b, loc, p, g, buf, skip, lossScaleOf.lookup(p),
          b.getF64FloatAttr(rate), b.getF64FloatAttr(momentum),
          b.getF64FloatAttr(dampening), b.getF64FloatAttr(weightDecay),
          b.getBoolAttr(nesterov));
      newParams.push_back(update.getNewParam());
      newState.push_back(update.getNewMomentumBuffer());
      continue;
    }
    // The state arguments, in order, and what the update returns for them.
    SmallVector<BlockArgument> state;
    auto addState = [&](ArrayRef<Type> types) -> LogicalResult {
      for (Type type : types) {
        BlockArgument arg = addStateArg(type);
        if (!arg)
          return func.emitOpError("cannot add optimizer state arguments");
        state.push_back(arg);
        stateIndex.push_back(arg.getArgNumber());
      }
      return success();
    };
    auto paramType = cast<RankedTensorType>(p.getType());
    SmallVector<Value> updated;
    if (optimizer == Optimizer::Adafactor) {
      // Factored second moments in the step's compute type.
      Type element = paramType.getElementType().isF64() ? Type(b.getF64Type())
                                                        : Type(b.getF32Type());
      SmallVector<Type> types;
      for (const shapes::Dims &shape :
           shapes::adafactorStateShapes(paramType.getShape().vec()))
        types.push_back(RankedTensorType::get(shape, element));
      if (failed(addState(types)))
        return failure();
      if (g) {
        SmallVector<Value> old(state.begin(), state.end());
        auto update = AdafactorUpdateOp::create(
            b, loc, p.getType(), ValueRange(old).getTypes(), p, g, old, newStep,
            skip, lossScaleOf.lookup(p), b.getF64FloatAttr(rate),
            b.getF64FloatAttr(1e-30), b.getF64FloatAttr(1e-3),
            b.getF64FloatAttr(clipThreshold), b.getF64FloatAttr(decayRate),
            b.getF64FloatAttr(weightDecay), b.getBoolAttr(scaleParameter));
        updated.push_back(update.getNewParam());
        llvm::append_range(updated, update.getNewState());
      }
    } else if ((optimizer == Optimizer::Adam8bit ||
                optimizer == Optimizer::AdamW8bit) &&
               paramType.getNumElements() >= shapes::kMin8bitElements) {
      auto codes = RankedTensorType::get(
          paramType.getShape(),
          IntegerType::get(ctx, 8, IntegerType::Unsigned));
      auto absmax = RankedTensorType::get(
          {shapes::quantizationBlocks(paramType.getNumElements())},
          b.getF32Type());
      if (failed(addState({codes, absmax, codes, absmax})))
        return failure();
      if (g) {
        auto update = Adam8bitUpdateOp::create(
            b, loc, p, g, state[0], state[1], state[2], state[3], newStep, skip,
            lossScaleOf.lookup(p), b.getF64FloatAttr(rate),
            b.getF64FloatAttr(beta1), b.getF64FloatAttr(beta2),
            b.getF64FloatAttr(eps), b.getF64FloatAttr(weightDecay),
            b.getBoolAttr(decoupled));
        llvm::append_range(updated, update->getResults());
      }
    } else {
      // Adam and AdamW; the 8-bit ones keep a small tensor's moments in
      // its own type, as bitsandbytes' min_8bit_size.
      if (failed(addState({bufferType(p), bufferType(p)})))
        return failure();
      if (g) {
        auto update = AdamUpdateOp::create(
            b, loc, p, g, state[0], state[1], newStep, skip,
            lossScaleOf.lookup(p), b.getF64FloatAttr(rate),
            b.getF64FloatAttr(beta1), b.getF64FloatAttr(beta2),
            b.getF64FloatAttr(eps), b.getF64FloatAttr(weightDecay),
            b.getBoolAttr(decoupled));
        llvm::append_range(updated, update->getResults());
      }
    }
    if (!g) {
      newParams.push_back(p);
      newState.append(state.begin(), state.end());
      continue;
    }
    newParams.push_back(updated.front());
    newState.append(updated.begin() + 1, updated.end());
  }
  if (step) {
    newState.push_back(newStep);
    stateIndex.push_back(cast<BlockArgument>(step).getArgNumber());
  }
  if (scaling.dynamic) {
    auto update = UpdateLossScaleOp::create(
        b, loc, scaling.scale.getType(), scaling.growthTracker.getType(),
        scaling.scale, scaling.growthTracker, found,
        b.getF64FloatAttr(scaling.growthFactor),
        b.getF64FloatAttr(scaling.backoffFactor),
        b.getI64IntegerAttr(scaling.growthInterval));
    newState.append({update.getNewScale(), update.getNewGrowthTracker()});
    stateIndex.append(
        {cast<BlockArgument>(scaling.scale).getArgNumber(),
         cast<BlockArgument>(scaling.growthTracker).getArgNumber()});
  }

  for (auto [v, index] : llvm::zip(newParams, paramIndex)) {
    results.push_back(v);
    // Gradients (optimizer=none) are outputs, not next values of arguments.
    updates.push_back(optimizer == Optimizer::None
                          ? std::optional<int64_t>()
                          : std::optional<int64_t>(index));
  }
  for (auto [v, index] : llvm::zip(newState, stateIndex)) {
    results.push_back(v);
    updates.push_back(index);
  }
  // Updates write the new parameter into the parameter's own storage, as
  // PyTorch's optimizers do: the update is the parameter's last reader
  // here, and --memopt-schedule keeps it last (an anti-dependence).
  for (Value v : newParams)
    if (Operation *update = v.getDefiningOp();
        update && isa<OptimizerUpdateOpInterface>(update))
      update->setAttr(MemOptDialect::kInPlaceAttrName, b.getI64IntegerAttr(0));
  // An unscale that is the only reader of its gradient (a weight's f32
  // gradient, whose f16 original the overflow check read) unscales it in
  // place: each element is read before it is written, so the result is the
  // same, and the f32 gradient is not held twice.
  for (auto [p, g] : grads)
    if (auto unscale = g.getDefiningOp<UnscaleOp>())
      if (Value scaled = unscale.getGrad();
          scaled.hasOneUse() && scaled.getDefiningOp())
        unscale->setAttr(MemOptDialect::kInPlaceAttrName,
                         b.getI64IntegerAttr(0));
  // The widening casts the updates now read past.
  for (Operation *widening : widenings)
    if (widening->use_empty())
      widening->erase();
  func::ReturnOp::create(b, ret.getLoc(), results);
  ret.erase();

  SmallVector<Type> resultTypes;
  SmallVector<Attribute> resultAttrs;
  for (auto [v, update] : llvm::zip(results, updates)) {
    resultTypes.push_back(v.getType());
    NamedAttrList attrs;
    if (update)
      attrs.set(MemOptDialect::kUpdatesAttrName, b.getI64IntegerAttr(*update));
    resultAttrs.push_back(attrs.getDictionary(ctx));
  }
  stateArgs.commit();
  func.setType(FunctionType::get(ctx, func.getArgumentTypes(), resultTypes));
  func.setAllResultAttrs(resultAttrs);
  return success();
}

} // namespace
