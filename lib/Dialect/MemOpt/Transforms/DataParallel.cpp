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
    if (zero != 0) {
      anchor->emitError()
          << kPass << ": zero=" << static_cast<int64_t>(zero)
          << " (ZeRO's sharding of optimizer state, gradients and "
             "parameters) is not built yet; zero=0 replicates them";
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
    if (auto existing = dyn_cast<AllReduceOp>(op))
      return existing.emitOpError()
             << "is already here: " << kPass
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
    Gradient gradient{g, position.lookup(g.getDefiningOp()), INT64_MAX, 0};
    auto type = cast<ShapedType>(g.getType());
    gradient.bytes =
        type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8);
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
  return success();
}

} // namespace
