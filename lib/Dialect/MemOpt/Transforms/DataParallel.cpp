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
// ZeRO (zero >= 1) gives every parameter an owner, whole (largest first,
// each to the least loaded rank, as ZeroRedundancyOptimizer): a rank's step
// keeps only its parameters' updates and optimizer state, and each new
// parameter is broadcast from its owner. Stage 2 also keeps only its
// parameters' averaged gradients: each bucket is a memopt.reduce_scatter,
// the overflow check and clipping's norm are the sums over the ranks of
// each rank's part (memopt.all_reduce with sum = true). Stage 3 also keeps
// only its own parameters: every reader of a parameter reads a copy
// received from its owner (memopt.broadcast) right before it, and the
// function's `memopt.sharded` names the arguments that went to others.
//
// A parameter larger than half a rank's even share cannot be given to one
// rank without leaving the ranks unbalanced (GPT-2's token embedding is a
// third of the model): it is divided among all ranks by rows (DeepSpeed's
// and FSDP's flat partitions, here along dimension 0). Every rank updates
// its rows, with its rows of the gradient and of the optimizer state; under
// stages 1 and 2 the new parameter is gathered (memopt.all_gather) over the
// old, under stage 3 every reader of the parameter reads a gathered copy.
//
//===----------------------------------------------------------------------===//

#include "memopt/Analysis/MemoryAnalysis.h"
#include "memopt/Contract/CollectiveShapes.h"
#include "memopt/Dialect/MemOpt/IR/MemOptDialect.h"
#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"
#include "memopt/Dialect/MemOpt/Transforms/ForeignIR.h"
#include "memopt/Dialect/MemOpt/Transforms/Passes.h"
#include "memopt/Support/ByteSize.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
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
  /// The rank that owns its parameter (ZeRO), else 0.
  int64_t owner;
  /// The first reader on the optimizer's side (its position).
  int64_t firstReader;
  int64_t bytes;
};

/// A parameter under ZeRO: its update and the rank that owns it (kRows:
/// every rank its rows).
struct Ownership {
  BlockArgument param;
  OptimizerUpdateOpInterface update;
  int64_t owner;
};

constexpr int64_t kRows = ReduceScatterOp::kRows;

/// Whether `update` works element by element (its state is of the
/// parameter's shape, nothing mixes elements), so that it can update the
/// rows of a parameter from the same rows of its gradient and state.
bool updatesByElement(OptimizerUpdateOpInterface update) {
  return isa<SgdUpdateOp, SgdMomentumUpdateOp, AdamUpdateOp>(update);
}

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
    if (zero >= 1 && ranks > 1 && (rank < 0 || rank >= ranks)) {
      anchor->emitError() << kPass << ": zero=" << static_cast<int64_t>(zero)
                          << " builds one rank's step (the ranks own "
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
    if (divide == "all") {
      divideFrom = 0;
    } else if (divide == "none") {
      divideFrom = INT64_MAX;
    } else if (divide != "auto") {
      std::optional<int64_t> from = parseByteSize(divide);
      if (!from) {
        anchor->emitError()
            << kPass << ": divide must be auto, all, none or "
            << "a byte size such as 64MiB, got '" << divide << "'";
        return signalPassFailure();
      }
      divideFrom = *from;
    }
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
  FailureOr<SmallVector<Ownership>>
  assignOwners(func::FuncOp func, ArrayRef<OptimizerUpdateOpInterface> updates);
  void sumOverRanks(func::FuncOp func, const llvm::DenseSet<Value> &notOurs);
  void gatherParameters(func::FuncOp func, ArrayRef<Ownership> params);
  LogicalResult divideByRows(
      func::FuncOp func, const Ownership &param,
      const llvm::DenseMap<Operation *, SmallVector<Operation *>> &between);
  LogicalResult shardOptimizerState(
      func::FuncOp func, ArrayRef<Ownership> params,
      const llvm::DenseMap<Operation *, SmallVector<Operation *>> &between);

  int64_t bucketBytes = 0;
  /// The parameters divided by rows: those of at least this many bytes;
  /// nullopt for those larger than half a rank's even share.
  std::optional<int64_t> divideFrom;
  /// Stage 3: the arguments dropped as other ranks' parameters, and their
  /// owners; the parameters held by rows.
  SmallVector<int64_t> shardedAway, shardedOwners, shardedRows;
  /// The parameters divided by rows, and their whole types.
  llvm::DenseMap<Value, Type> wholeType;
};

LogicalResult MemOptDataParallelPass::rewrite(func::FuncOp func) {
  // Each function's own (a module may hold several steps).
  shardedAway.clear();
  shardedOwners.clear();
  shardedRows.clear();
  wholeType.clear();
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
    // A partial sum of squares, or a clipping factor made from one, is
    // this pass's own (zero=2): a step that holds one was made by it.
    auto clip = dyn_cast<ClipCoefficientOp>(op);
    if (isCollective(&op) || isa<SquareSumOp>(op) ||
        (clip && clip.getSquareSum()))
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

  // Under ZeRO, the parameters' owners.
  SmallVector<Ownership> params;
  llvm::DenseMap<Operation *, int64_t> ownerOf;
  if (zero >= 1) {
    FailureOr<SmallVector<Ownership>> owners = assignOwners(func, updates);
    if (failed(owners))
      return failure();
    params = std::move(*owners);
    for (const Ownership &p : params)
      ownerOf[p.update] = p.owner;
  }

  // Each update's gradient, and the ops between it and the update (from
  // the update back).
  llvm::MapVector<Value, int64_t> roots;
  llvm::DenseSet<Operation *> onTheWay;
  llvm::DenseMap<Operation *, SmallVector<Operation *>> between;
  for (OptimizerUpdateOpInterface update : updates) {
    onTheWay.insert(update);
    SmallVector<Operation *> &chain = between[update];
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
      chain.push_back(def);
    }
    if (isa<BlockArgument>(g))
      return update->emitOpError()
             << "reads a gradient that is an argument of @" << func.getSymName()
             << ": " << kPass << " averages gradients the step computes";
    int64_t owner = ownerOf.lookup(update);
    auto [it, inserted] = roots.insert({g, owner});
    if (!inserted && it->second != owner && zero >= 2)
      return update->emitOpError()
             << "reads a gradient that also updates a parameter of rank "
             << it->second << ": " << kPass
             << " zero=" << static_cast<int64_t>(zero)
             << " keeps each averaged gradient on one rank only";
  }

  auto readsAverage = [&](Operation *user) {
    return onTheWay.contains(user) || isa<FoundInfOp, ClipCoefficientOp>(user);
  };
  SmallVector<Gradient> gradients;
  for (auto [g, owner] : roots) {
    Gradient gradient{g, position.lookup(g.getDefiningOp()), owner, INT64_MAX,
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
  llvm::DenseSet<Value> notOurs;
  OpBuilder b(func.getContext());
  auto flush = [&](Bucket &bucket) {
    if (bucket.members.empty())
      return;
    SmallVector<Value> values, averaged;
    SmallVector<Type> types;
    SmallVector<int64_t> owners;
    Operation *last = nullptr;
    for (const Gradient &g : bucket.members) {
      values.push_back(g.value);
      owners.push_back(g.owner);
      // Stages 2 and 3: only this rank's parameters' averages (its rows of
      // a parameter divided by rows).
      if (zero < 2 || g.owner == rank || g.owner == kRows) {
        averaged.push_back(g.value);
        types.push_back(zero >= 2 && g.owner == kRows
                            ? rowSliceType(g.value.getType(), ranks, rank)
                            : g.value.getType());
      } else {
        notOurs.insert(g.value);
      }
      Operation *def = g.value.getDefiningOp();
      if (!last || position.lookup(def) > position.lookup(last))
        last = def;
    }
    b.setInsertionPointAfter(last);
    Operation *reduce =
        zero >= 2 ? ReduceScatterOp::create(b, last->getLoc(), types, values,
                                            b.getI64IntegerAttr(ranks),
                                            b.getI64IntegerAttr(rank),
                                            b.getDenseI64ArrayAttr(owners))
                        .getOperation()
                  : AllReduceOp::create(b, last->getLoc(), types, values,
                                        b.getI64IntegerAttr(ranks), BoolAttr())
                        .getOperation();
    for (auto [g, average] : llvm::zip(averaged, reduce->getResults()))
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
  if (zero >= 2) {
    // What lies between another rank's gradient and its update is not this
    // rank's either (clipping reads the unscaled gradients).
    for (OptimizerUpdateOpInterface update : updates)
      if (int64_t owner = ownerOf.lookup(update);
          owner != rank && owner != kRows)
        for (Operation *op : between.lookup(update))
          notOurs.insert(op->result_begin(), op->result_end());
  }
  for (const Ownership &param : params)
    if (param.owner == kRows && failed(divideByRows(func, param, between)))
      return failure();
  if (zero >= 2)
    sumOverRanks(func, notOurs);
  if (zero == 3)
    gatherParameters(func, params);
  if (zero >= 1 && failed(shardOptimizerState(func, params, between)))
    return failure();
  // Rows of parameters and of their state in and out.
  func.setType(FunctionType::get(func.getContext(), body.getArgumentTypes(),
                                 body.getTerminator()->getOperandTypes()));
  return success();
}

/// ZeRO, a parameter divided by rows: every rank updates its rows, from its
/// rows of the gradient (stages 2 and 3: the reduce-scatter's, and the ops
/// between it and the update on them; stage 1: taken from the average) and
/// of the optimizer state (the state arguments become rows). The parameter
/// it reads is its rows (stage 3: the argument itself).
LogicalResult MemOptDataParallelPass::divideByRows(
    func::FuncOp func, const Ownership &param,
    const llvm::DenseMap<Operation *, SmallVector<Operation *>> &between) {
  auto [arg, update, owner] = param;
  auto whole = cast<RankedTensorType>(arg.getType());
  wholeType[arg] = whole;
  auto rowsOf = [&](Type type) { return rowSliceType(type, ranks, rank); };
  auto isWhole = [&](Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    return tensor && tensor.getShape() == whole.getShape();
  };
  OpBuilder b(update);
  auto takeRows = [&](Value value) -> Value {
    SmallVector<int64_t> offsets(whole.getRank(), 0), sizes(whole.getShape());
    offsets[0] = shapes::rowSliceStart(whole.getDimSize(0), ranks, rank);
    sizes[0] = shapes::rowSliceRows(whole.getDimSize(0), ranks, rank);
    return SliceOp::create(b, update.getLoc(), value, offsets, sizes,
                           DenseI64ArrayAttr());
  };
  if (zero >= 2) {
    for (Operation *op : llvm::reverse(between.lookup(update)))
      for (OpResult result : op->getResults())
        result.setType(rowsOf(result.getType()));
  } else {
    Value grad = update.getGrad();
    update->replaceUsesOfWith(grad, takeRows(grad));
  }
  if (zero == 3)
    arg.setType(rowsOf(whole));
  else
    update->replaceUsesOfWith(arg, takeRows(arg));
  // What is left of the parameter's shape is its optimizer state.
  for (OpOperand &operand : update->getOpOperands()) {
    if (!isWhole(operand.get().getType()))
      continue;
    auto state = dyn_cast<BlockArgument>(operand.get());
    if (!state ||
        !func.getArgAttr(state.getArgNumber(),
                         MemOptDialect::kOptimizerStateAttrName) ||
        !llvm::all_of(state.getUsers(),
                      [&](Operation *user) { return user == update; }))
      return update->emitOpError()
             << "reads operand " << operand.getOperandNumber()
             << " of its parameter's shape that is not optimizer state of "
                "its own: "
             << kPass << " cannot divide the parameter among the ranks by rows";
    state.setType(rowsOf(state.getType()));
  }
  for (OpResult result : update->getResults())
    if (isWhole(result.getType()))
      result.setType(rowsOf(result.getType()));
  ++numDivided;
  return success();
}

/// ZeRO stage 2: the overflow check and clipping's norm read the averaged
/// gradients, which no rank holds all of: each rank checks (sums the
/// squares of) its own, and memopt.all_reduce adds the ranks' results.
void MemOptDataParallelPass::sumOverRanks(
    func::FuncOp func, const llvm::DenseSet<Value> &notOurs) {
  OpBuilder b(func.getContext());
  auto ours = [&](ValueRange values) {
    SmallVector<Value> kept;
    for (Value v : values)
      if (!notOurs.contains(v))
        kept.push_back(v);
    return kept;
  };
  // A rank that owns no gradient adds zero.
  auto zeroOf = [&](Location loc, FloatType type) -> Value {
    auto tensor = RankedTensorType::get({}, type);
    return arith::ConstantOp::create(
        b, loc, tensor,
        DenseElementsAttr::get(tensor, b.getFloatAttr(type, 0.0)));
  };
  auto sum = [&](Location loc, Value partial) {
    return AllReduceOp::create(b, loc, TypeRange{partial.getType()},
                               ValueRange{partial}, b.getI64IntegerAttr(ranks),
                               b.getBoolAttr(true))
        .getResult(0);
  };
  for (Operation &op : llvm::make_early_inc_range(func.front())) {
    b.setInsertionPoint(&op);
    Location loc = op.getLoc();
    if (auto found = dyn_cast<FoundInfOp>(op)) {
      SmallVector<Value> kept = ours(found.getValues());
      Value flag =
          kept.empty()
              ? zeroOf(loc, b.getF32Type())
              : FoundInfOp::create(b, loc, found.getType(), kept).getResult();
      found.replaceAllUsesWith(sum(loc, flag));
      found.erase();
    } else if (auto clip = dyn_cast<ClipCoefficientOp>(op)) {
      SmallVector<Value> kept = ours(clip.getGrads());
      Value partial =
          kept.empty()
              ? zeroOf(loc, b.getF64Type())
              : SquareSumOp::create(
                    b, loc, RankedTensorType::get({}, b.getF64Type()), kept)
                    .getResult();
      auto coefficient = ClipCoefficientOp::create(
          b, loc, clip.getType(), ValueRange{sum(loc, partial)},
          clip.getMaxNormAttr(), b.getBoolAttr(true));
      clip.replaceAllUsesWith(coefficient.getResult());
      clip.erase();
    }
  }
}

/// ZeRO stage 3: only a parameter's owner holds it. Every op that reads it
/// reads a copy, received from the owner (memopt.broadcast, with no
/// operand on the other ranks; memopt.all_gather of every rank's rows of
/// one divided by rows) right before it and freed after it, in forward and
/// backward alike; the update reads the owner's own.
void MemOptDataParallelPass::gatherParameters(func::FuncOp func,
                                              ArrayRef<Ownership> params) {
  OpBuilder b(func.getContext());
  for (const Ownership &entry : params) {
    auto [param, update, owner] = entry;
    SmallVector<Operation *> readers;
    for (Operation *user : param.getUsers())
      if (user != update.getOperation() && !llvm::is_contained(readers, user))
        readers.push_back(user);
    for (Operation *reader : readers) {
      b.setInsertionPoint(reader);
      Value copy =
          owner == kRows
              ? AllGatherOp::create(b, param.getLoc(), wholeType.lookup(param),
                                    param, Value(), b.getI64IntegerAttr(ranks),
                                    b.getI64IntegerAttr(rank))
                    .getResult()
              : BroadcastOp::create(b, param.getLoc(), param.getType(),
                                    owner == rank ? Value(param) : Value(),
                                    b.getI64IntegerAttr(ranks),
                                    b.getI64IntegerAttr(owner))
                    .getResult();
      reader->replaceUsesOfWith(param, copy);
      ++numGathers;
    }
  }
}

/// ZeRO: the owner of every parameter the updates update (largest first,
/// each to the least loaded rank, as ZeroRedundancyOptimizer; kRows for one
/// larger than half a rank's share, which every rank holds rows of), in
/// argument order.
FailureOr<SmallVector<Ownership>> MemOptDataParallelPass::assignOwners(
    func::FuncOp func, ArrayRef<OptimizerUpdateOpInterface> updates) {
  auto ret = cast<func::ReturnOp>(func.front().getTerminator());
  SmallVector<Ownership> params;
  for (OptimizerUpdateOpInterface update : updates) {
    auto param = dyn_cast<BlockArgument>(update.getParam());
    if (!param)
      return update->emitOpError()
             << "updates a value that is not an argument of @"
             << func.getSymName() << ": " << kPass
             << " zero=" << static_cast<int64_t>(zero)
             << " shards the state of parameters the step receives";
    for (Operation *user : update->getUsers())
      if (user != ret)
        return update->emitOpError()
               << "has a result read by " << user->getName() << ": " << kPass
               << " zero=" << static_cast<int64_t>(zero)
               << " moves updates to the rank that owns the "
                  "parameter, so only the function may return them";
    params.push_back({param, update, 0});
  }
  // Argument order; the owners by size, largest first (ties: argument
  // order), each to the rank with the fewest bytes so far (ties: lowest).
  llvm::sort(params, [](const Ownership &a, const Ownership &b) {
    return a.param.getArgNumber() < b.param.getArgNumber();
  });
  SmallVector<size_t> bySize(params.size());
  for (size_t i = 0; i < params.size(); ++i)
    bySize[i] = i;
  auto bytesOf = [&](size_t i) {
    return MemoryAnalysis::getValueBytes(params[i].param);
  };
  llvm::stable_sort(
      bySize, [&](size_t a, size_t b) { return bytesOf(a) > bytesOf(b); });
  // A parameter larger than half a rank's even share (or `divide`'s size)
  // is divided among all ranks by rows: whole, it would leave them
  // unbalanced.
  int64_t total = 0;
  for (size_t i = 0; i < params.size(); ++i)
    total += bytesOf(i);
  SmallVector<int64_t> load(ranks, 0);
  for (size_t i : bySize) {
    auto type = cast<RankedTensorType>(params[i].param.getType());
    bool large =
        divideFrom ? bytesOf(i) >= *divideFrom : 2 * ranks * bytesOf(i) > total;
    if (large && updatesByElement(params[i].update) && type.getRank() >= 1 &&
        type.getDimSize(0) >= ranks) {
      params[i].owner = kRows;
      continue;
    }
    int64_t least = 0;
    for (int64_t r = 1; r < ranks; ++r)
      if (load[r] < load[least])
        least = r;
    params[i].owner = least;
    load[least] += bytesOf(i);
  }
  return params;
}

/// ZeRO: this rank's updates and optimizer state only (and the ops between
/// their gradients and the others' updates go too); under stages 1 and 2
/// every new parameter broadcast from its owner, under stage 3 this rank's
/// parameters only.
LogicalResult MemOptDataParallelPass::shardOptimizerState(
    func::FuncOp func, ArrayRef<Ownership> params,
    const llvm::DenseMap<Operation *, SmallVector<Operation *>> &between) {
  auto ret = cast<func::ReturnOp>(func.front().getTerminator());
  // In argument order; a broadcast sends the owner's update's result, over
  // the others' old copy.
  llvm::BitVector eraseArgs(func.getNumArguments()),
      eraseResults(func.getNumResults());
  SmallVector<Operation *> notOurs;
  OpBuilder b(ret);
  for (const Ownership &entry : params) {
    auto [param, update, owner] = entry;
    Value newParam = update->getResult(0);
    if (owner == kRows) {
      // Stages 1 and 2: every rank's new rows gathered over the old
      // parameter. Stage 3: each keeps its rows.
      if (zero < 3) {
        auto gather = AllGatherOp::create(
            b, update->getLoc(), param.getType(), newParam, param,
            b.getI64IntegerAttr(ranks), b.getI64IntegerAttr(rank));
        gather->setAttr(MemOptDialect::kInPlaceAttrName,
                        b.getI64IntegerAttr(1));
        newParam.replaceUsesWithIf(gather.getResult(), [&](OpOperand &use) {
          return use.getOwner() == ret;
        });
      } else {
        shardedRows.push_back(param.getArgNumber());
      }
      continue;
    }
    bool owned = owner == rank;
    numOwned += owned;
    // Stages 1 and 2: every rank broadcasts every new parameter. Stage 3:
    // it stays with its owner.
    if (zero < 3) {
      auto broadcast = BroadcastOp::create(
          b, update->getLoc(), param.getType(), owned ? newParam : Value(param),
          b.getI64IntegerAttr(ranks), b.getI64IntegerAttr(owner));
      broadcast->setAttr(MemOptDialect::kInPlaceAttrName,
                         b.getI64IntegerAttr(0));
      newParam.replaceUsesWithIf(broadcast.getResult(), [&](OpOperand &use) {
        return use.getOwner() == ret;
      });
    }
    if (owned)
      continue;
    // Not this rank's: no update, no state; under stage 3 not the parameter
    // either (the broadcast of stages 1 and 2 reads it, so it stays there).
    for (OpOperand &use : ret->getOpOperands())
      for (Value result : update->getResults())
        if (use.get() == result)
          eraseResults.set(use.getOperandNumber());
    for (Value operand : update->getOperands())
      if (auto arg = dyn_cast<BlockArgument>(operand);
          arg &&
          (arg == param ||
           func.getArgAttr(arg.getArgNumber(),
                           MemOptDialect::kOptimizerStateAttrName)) &&
          llvm::all_of(arg.getUsers(),
                       [&](Operation *user) { return user == update; }))
        eraseArgs.set(arg.getArgNumber());
    if (zero == 3) {
      shardedAway.push_back(param.getArgNumber());
      shardedOwners.push_back(owner);
    }
    notOurs.push_back(update);
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
  // broadcast's: nothing reads them, nor what was computed for them alone.
  llvm::SmallPtrSet<Operation *, 8> erased;
  for (Operation *update : notOurs) {
    update->erase();
    for (Operation *op : between.lookup(update))
      if (!erased.contains(op) && op->use_empty()) {
        erased.insert(op);
        op->erase();
      }
  }
  if (failed(func.eraseResults(eraseResults)) ||
      failed(func.eraseArguments(eraseArgs)))
    return func.emitError() << kPass << ": internal error: could not drop "
                            << "the optimizer state of other ranks";
  for (auto [i, index] : llvm::enumerate(updatesOf))
    if (index)
      func.setResultAttr(i, MemOptDialect::kUpdatesAttrName,
                         b.getI64IntegerAttr(newIndex[*index]));
  // Stage 3: which parameters this rank no longer receives (memopt-run
  // initialises, loads and saves every rank's parameters in one order).
  if (zero == 3) {
    SmallVector<NamedAttribute> sharded{
        b.getNamedAttr("arguments", b.getDenseI64ArrayAttr(shardedAway)),
        b.getNamedAttr("owners", b.getDenseI64ArrayAttr(shardedOwners))};
    if (!shardedRows.empty())
      sharded.push_back(
          b.getNamedAttr("rows", b.getDenseI64ArrayAttr(shardedRows)));
    func->setAttr(MemOptDialect::kShardedAttrName,
                  b.getDictionaryAttr(sharded));
  }
  return success();
}

} // namespace
