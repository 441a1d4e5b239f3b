//===- DataParallel.cpp - one rank's step of data-parallel training -------===//
//
// `--memopt-data-parallel=ranks=N` (Passes.td): every parameter gradient of
// a training step is averaged across the N ranks before anything on its
// way to the optimizer reads it, in buckets, each bucket's memopt.all_reduce
// right after its last gradient is final.
//
// The gradient of a parameter is found from its update: the update's
// gradient operand, followed back through what --memopt-autodiff puts
// between a gradient and its update (unscaling, clipping's product with
// the clip factor, the widening cast of a half-precision gradient). What is
// reached is the gradient the backward pass made; its readers among those
// ops, the update, the overflow check (found_inf) and clipping's norm
// (clip_coefficient) read the average instead. Any other reader (the
// backward pass itself, where a parameter's gradient is also an
// activation's) keeps the rank's own value.
//
//===----------------------------------------------------------------------===//

#include "memopt/Analysis/MemoryAnalysis.h"
#include "memopt/Dialect/MemOpt/IR/MemOptDialect.h"
#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"
#include "memopt/Dialect/MemOpt/Transforms/ForeignIR.h"
#include "memopt/Dialect/MemOpt/Transforms/Passes.h"
#include "memopt/Support/ByteSize.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

#define DEBUG_TYPE "memopt-data-parallel"

namespace memopt {
#define GEN_PASS_DEF_MEMOPTDATAPARALLEL
#include "memopt/Dialect/MemOpt/Transforms/Passes.h.inc"
} // namespace memopt

using namespace mlir;
using namespace memopt;

namespace {

constexpr llvm::StringLiteral kPass = "memopt-data-parallel";

/// Whether `v` is clipping's factor: clip_coefficient's result, or its
/// cast to a gradient's element type.
bool isClipFactor(Value v) {
  if (auto cast = v.getDefiningOp<CastOp>())
    v = cast.getX();
  return v.getDefiningOp<ClipCoefficientOp>() != nullptr;
}

/// Whether `cast` widens (f16 or bf16 to f32, f32 to f64): the exact cast
/// back of a half-precision gradient.
bool isWidening(CastOp cast) {
  auto from = cast.getX().getType().getElementTypeBitWidth();
  auto to = cast.getResult().getType().getElementTypeBitWidth();
  return from < to;
}

/// One parameter gradient: the value the backward pass made and its
/// position in the function's block.
struct Gradient {
  Value value;
  int64_t position;
  /// The first reader on the optimizer's side (its position).
  int64_t firstReader;
  int64_t bytes;
};

struct MemOptDataParallelPass
    : public memopt::impl::MemOptDataParallelBase<MemOptDataParallelPass> {
  using Base::Base;

  void runOnOperation() override {
    Operation *anchor = getOperation();
    if (ranks < 1) {
      anchor->emitError() << kPass << ": ranks must be at least 1, got "
                          << static_cast<int64_t>(ranks);
      return signalPassFailure();
    }
    if (zero < 0 || zero > 3) {
      anchor->emitError() << kPass << ": zero must be 0, 1, 2 or 3, got "
                          << static_cast<int64_t>(zero);
      return signalPassFailure();
    }
    if (zero > 1) {
      anchor->emitError()
          << kPass << ": zero=" << static_cast<int64_t>(zero)
          << " (ZeRO's sharding of gradients and parameters) is not built "
             "yet; zero=1 shards the optimizer state, zero=0 replicates it";
      return signalPassFailure();
    }
    if (zero == 1 && ranks > 1 && (rank < 0 || rank >= ranks)) {
      anchor->emitError() << kPass
                          << ": zero=1 builds one rank's step (the ranks own "
                          << "different parameters): rank must be in [0, "
                          << static_cast<int64_t>(ranks) << "), got "
                          << static_cast<int64_t>(rank);
      return signalPassFailure();
    }
    std::optional<int64_t> cap = parseByteSize(bucket);
    if (!cap) {
      anchor->emitError() << kPass << ": bucket must be a byte size such as "
                          << "25MiB, 1048576 or 0, got '" << bucket << "'";
      return signalPassFailure();
    }
    bucketBytes = *cap;
    SmallVector<func::FuncOp> graphs;
    if (failed(collectMemOptGraphs(anchor, kPass, graphs)))
      return signalPassFailure();
    if (ranks == 1)
      return;
    for (func::FuncOp func : graphs)
      if (failed(rewrite(func)))
        return signalPassFailure();
  }

  LogicalResult rewrite(func::FuncOp func);
  LogicalResult
  shardOptimizerState(func::FuncOp func,
                      ArrayRef<OptimizerUpdateOpInterface> updates);

  int64_t bucketBytes = 0;
};

LogicalResult MemOptDataParallelPass::rewrite(func::FuncOp func) {
  Block &body = func.front();
  bool hasParams = false;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    hasParams |= bool(func.getArgAttr(i, MemOptDialect::kParamAttrName));
  if (!hasParams)
    return success();

  llvm::DenseMap<Operation *, int64_t> position;
  SmallVector<OptimizerUpdateOpInterface> updates;
  for (auto [i, op] : llvm::enumerate(body)) {
    position[&op] = static_cast<int64_t>(i);
    if (isa<AllReduceOp, BroadcastOp>(op))
      return op.emitOpError() << "is already here: " << kPass
                              << " runs once, on a step without collectives";
    if (auto update = dyn_cast<OptimizerUpdateOpInterface>(op))
      updates.push_back(update);
  }
  if (updates.empty())
    return func.emitError()
           << kPass << ": @" << func.getSymName()
           << " has parameters but no optimizer update (a forward graph, "
              "or a step with optimizer=none): nothing to average; run it "
              "after --memopt-autodiff with an optimizer";

  // Each update's gradient, and the ops between it and the update.
  llvm::SetVector<Value> roots;
  llvm::DenseSet<Operation *> onTheWay;
  for (OptimizerUpdateOpInterface update : updates) {
    onTheWay.insert(update);
    Value g = update.getGrad();
    while (Operation *def = g.getDefiningOp()) {
      if (auto unscale = dyn_cast<UnscaleOp>(def)) {
        g = unscale.getGrad();
      } else if (auto mul = dyn_cast<MulOp>(def);
                 mul && isClipFactor(mul.getRhs())) {
        g = mul.getLhs();
      } else if (auto cast = dyn_cast<CastOp>(def); cast && isWidening(cast)) {
        g = cast.getX();
      } else {
        break;
      }
      onTheWay.insert(def);
    }
    if (isa<BlockArgument>(g))
      return update->emitOpError()
             << "reads a gradient that is an argument of @" << func.getSymName()
             << ": " << kPass << " averages gradients the step computes";
    roots.insert(g);
  }

  auto readsAverage = [&](Operation *user) {
    return onTheWay.contains(user) || isa<FoundInfOp, ClipCoefficientOp>(user);
  };
  SmallVector<Gradient> gradients;
  for (Value g : roots) {
    Gradient gradient{g, position.lookup(g.getDefiningOp()), INT64_MAX,
                      MemoryAnalysis::getValueBytes(g)};
    for (Operation *user : g.getUsers())
      if (readsAverage(user))
        gradient.firstReader =
            std::min(gradient.firstReader, position.lookup(user));
    gradients.push_back(gradient);
  }
  // In the order the backward pass makes them.
  llvm::stable_sort(gradients, [](const Gradient &a, const Gradient &b) {
    return a.position < b.position;
  });

  // Buckets per element type: a bucket closes before a gradient would take
  // it over the cap, or before a gradient made after one of its members'
  // readers (its collective must come before those).
  struct Bucket {
    SmallVector<Gradient> members;
    int64_t bytes = 0;
    int64_t firstReader = INT64_MAX;
  };
  llvm::MapVector<Type, Bucket> open;
  OpBuilder b(func.getContext());
  auto flush = [&](Bucket &bucket) {
    if (bucket.members.empty())
      return;
    SmallVector<Value> values;
    SmallVector<Type> types;
    Operation *last = nullptr;
    for (const Gradient &g : bucket.members) {
      values.push_back(g.value);
      types.push_back(g.value.getType());
      Operation *def = g.value.getDefiningOp();
      if (!last || position.lookup(def) > position.lookup(last))
        last = def;
    }
    b.setInsertionPointAfter(last);
    auto reduce = AllReduceOp::create(b, last->getLoc(), types, values,
                                      b.getI64IntegerAttr(ranks));
    for (auto [g, average] : llvm::zip(values, reduce.getResults()))
      g.replaceUsesWithIf(average, [&](OpOperand &use) {
        return use.getOwner() != reduce && readsAverage(use.getOwner());
      });
    ++numBuckets;
    numGradients += bucket.members.size();
    bucket = Bucket();
  };
  for (const Gradient &g : gradients) {
    Bucket &bucket = open[cast<ShapedType>(g.value.getType()).getElementType()];
    if (!bucket.members.empty() && (bucket.bytes + g.bytes > bucketBytes ||
                                    bucket.firstReader < g.position))
      flush(bucket);
    bucket.members.push_back(g);
    bucket.bytes += g.bytes;
    bucket.firstReader = std::min(bucket.firstReader, g.firstReader);
  }
  for (auto &[type, bucket] : open)
    flush(bucket);
  if (zero == 1)
    return shardOptimizerState(func, updates);
  return success();
}

/// ZeRO stage 1: parameters owned by ranks (largest first, each to the
/// least loaded rank, as ZeroRedundancyOptimizer), this rank's updates and
/// optimizer state only, and every new parameter broadcast from its owner.
LogicalResult MemOptDataParallelPass::shardOptimizerState(
    func::FuncOp func, ArrayRef<OptimizerUpdateOpInterface> updates) {
  auto ret = cast<func::ReturnOp>(func.front().getTerminator());
  SmallVector<std::pair<BlockArgument, OptimizerUpdateOpInterface>> params;
  for (OptimizerUpdateOpInterface update : updates) {
    auto param = dyn_cast<BlockArgument>(update.getParam());
    if (!param)
      return update->emitOpError()
             << "updates a value that is not an argument of @"
             << func.getSymName() << ": " << kPass
             << " zero=1 shards the state of parameters the step receives";
    for (Operation *user : update->getUsers())
      if (user != ret)
        return update->emitOpError()
               << "has a result read by " << user->getName() << ": " << kPass
               << " zero=1 moves updates to the rank that owns the "
                  "parameter, so only the function may return them";
    params.push_back({param, update});
  }
  // Argument order; the owners by size, largest first (ties: argument
  // order), each to the rank with the fewest bytes so far (ties: lowest).
  llvm::sort(params, [](const auto &a, const auto &b) {
    return a.first.getArgNumber() < b.first.getArgNumber();
  });
  SmallVector<size_t> bySize(params.size());
  for (size_t i = 0; i < params.size(); ++i)
    bySize[i] = i;
  auto bytesOf = [&](size_t i) {
    return MemoryAnalysis::getValueBytes(params[i].first);
  };
  llvm::stable_sort(
      bySize, [&](size_t a, size_t b) { return bytesOf(a) > bytesOf(b); });
  SmallVector<int64_t> load(ranks, 0), owner(params.size(), 0);
  for (size_t i : bySize) {
    int64_t least = 0;
    for (int64_t r = 1; r < ranks; ++r)
      if (load[r] < load[least])
        least = r;
    owner[i] = least;
    load[least] += bytesOf(i);
  }

  // Every rank broadcasts every parameter, in argument order: the owner its
  // update's result, the others over their old copy.
  llvm::BitVector eraseArgs(func.getNumArguments()),
      eraseResults(func.getNumResults());
  SmallVector<Operation *> notOurs;
  OpBuilder b(ret);
  for (auto [i, entry] : llvm::enumerate(params)) {
    auto [param, update] = entry;
    Value newParam = update->getResult(0);
    bool owned = owner[i] == rank;
    numOwned += owned;
    auto broadcast = BroadcastOp::create(
        b, update->getLoc(), param.getType(), owned ? newParam : Value(param),
        b.getI64IntegerAttr(ranks), b.getI64IntegerAttr(owner[i]));
    broadcast->setAttr(MemOptDialect::kInPlaceAttrName, b.getI64IntegerAttr(0));
    newParam.replaceUsesWithIf(broadcast.getResult(), [&](OpOperand &use) {
      return use.getOwner() == ret;
    });
    if (owned)
      continue;
    // Not this rank's: no update, no state.
    for (OpOperand &use : ret->getOpOperands())
      for (Value state : llvm::drop_begin(update->getResults()))
        if (use.get() == state)
          eraseResults.set(use.getOperandNumber());
    SmallVector<BlockArgument> states;
    for (Value operand : update->getOperands())
      if (auto arg = dyn_cast<BlockArgument>(operand);
          arg &&
          func.getArgAttr(arg.getArgNumber(),
                          MemOptDialect::kOptimizerStateAttrName) &&
          llvm::all_of(arg.getUsers(),
                       [&](Operation *user) { return user == update; }))
        states.push_back(arg);
    notOurs.push_back(update);
    for (BlockArgument arg : states)
      eraseArgs.set(arg.getArgNumber());
  }

  // The results that update arguments name them by number: renumber them
  // past the erased arguments.
  SmallVector<int64_t> newIndex(func.getNumArguments(), -1);
  for (int64_t i = 0, next = 0; i < func.getNumArguments(); ++i)
    if (!eraseArgs.test(i))
      newIndex[i] = next++;
  SmallVector<Value> kept;
  for (OpOperand &use : ret->getOpOperands())
    if (!eraseResults.test(use.getOperandNumber()))
      kept.push_back(use.get());
  SmallVector<std::optional<int64_t>> updatesOf;
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    if (eraseResults.test(i))
      continue;
    auto index = func.getResultAttrOfType<IntegerAttr>(
        i, MemOptDialect::kUpdatesAttrName);
    updatesOf.push_back(index ? std::optional<int64_t>(index.getInt())
                              : std::nullopt);
  }
  ret->setOperands(kept);
  // Their new state is no longer returned, their new parameter is the
  // broadcast's: nothing reads them.
  for (Operation *update : notOurs)
    update->erase();
  if (failed(func.eraseResults(eraseResults)) ||
      failed(func.eraseArguments(eraseArgs)))
    return func.emitError() << kPass << ": internal error: could not drop "
                            << "the optimizer state of other ranks";
  for (auto [i, index] : llvm::enumerate(updatesOf))
    if (index)
      func.setResultAttr(i, MemOptDialect::kUpdatesAttrName,
                         b.getI64IntegerAttr(newIndex[*index]));
  return success();
}

} // namespace
