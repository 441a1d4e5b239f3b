//===- Schedule.cpp - memory-aware op order and frees ---------------------===//
//
// `--memopt-schedule`: greedy list scheduling over a function's single block.
// Each step picks, among the ops whose operands are all computed, the one
// with the best memory effect: bytes of buffers whose last user it is, minus
// bytes of the buffers it creates; optimizer updates first, since running
// them frees a gradient and nothing waits on them. Then a `memopt.free` goes
// after the last use of every buffer that is not an argument or a result.
//
//===----------------------------------------------------------------------===//

#include "memopt/Analysis/MemoryAnalysis.h"
#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"
#include "memopt/Dialect/MemOpt/Transforms/Passes.h"
#include "memopt/Dialect/MemOpt/Transforms/Transforms.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#define DEBUG_TYPE "memopt-schedule"

namespace memopt {
#define GEN_PASS_DEF_MEMOPTSCHEDULE
#include "memopt/Dialect/MemOpt/Transforms/Passes.h.inc"
} // namespace memopt

using namespace mlir;
using namespace memopt;

namespace {

int64_t bytesOf(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t || !t.hasStaticShape())
    return 0;
  return t.getNumElements() *
         static_cast<int64_t>(llvm::divideCeil(t.getElementTypeBitWidth(), 8));
}

bool isOptimizerUpdate(Operation *op) {
  return isa<SgdUpdateOp, SgdMomentumUpdateOp, AdamUpdateOp>(op);
}

/// The value whose buffer `v` lives in, following the memory analysis's
/// alias rule (views, in-place results) to the owner.
Value bufferRoot(Value v) {
  while (Value owner = MemoryAnalysis::aliasOf(v))
    v = owner;
  return v;
}

class Scheduler {
public:
  explicit Scheduler(func::FuncOp func) : func(func) {}

  /// Reorders the block and inserts frees; returns (ops moved, frees).
  std::pair<int64_t, int64_t> run();

private:
  func::FuncOp func;
};

std::pair<int64_t, int64_t> Scheduler::run() {
  Block &body = func.front();
  Operation *terminator = body.getTerminator();
  // Frees from an earlier run are recomputed.
  for (Operation &op : llvm::make_early_inc_range(body.without_terminator()))
    if (isa<FreeOp>(op))
      op.erase();

  SmallVector<Operation *> ops;
  DenseMap<Operation *, int64_t> index;
  for (Operation &op : body.without_terminator()) {
    index[&op] = static_cast<int64_t>(ops.size());
    ops.push_back(&op);
  }

  // Buffers: root value -> number of not-yet-scheduled uses (through any
  // alias). Arguments and returned buffers are never freed.
  DenseSet<Value> persistent;
  for (BlockArgument arg : func.getArguments())
    persistent.insert(arg);
  for (Value v : terminator->getOperands())
    persistent.insert(bufferRoot(v));
  DenseMap<Value, int64_t> pendingUses;
  for (Operation *op : ops)
    for (Value operand : op->getOperands())
      ++pendingUses[bufferRoot(operand)];

  // Every op reading each buffer, for the anti-dependences of in-place ops.
  DenseMap<Value, SmallVector<Operation *>> readers;
  for (Operation *op : ops)
    for (Value operand : op->getOperands()) {
      SmallVector<Operation *> &list = readers[bufferRoot(operand)];
      if (list.empty() || list.back() != op)
        list.push_back(op);
    }

  // Dependences: an op is ready when all its operands' producers ran.
  DenseMap<Operation *, int64_t> missing;
  DenseMap<Operation *, SmallVector<Operation *>> users;
  for (Operation *op : ops) {
    llvm::SmallPtrSet<Operation *, 4> producers;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp();
          def && def->getBlock() == &body)
        producers.insert(def);
    // An op writing in place over an operand must run after every other
    // reader of that operand's buffer (an anti-dependence the SSA edges do
    // not show).
    if (auto inplace = op->getAttrOfType<IntegerAttr>("memopt.inplace"))
      for (Operation *other :
           readers.lookup(bufferRoot(op->getOperand(inplace.getInt()))))
        if (other != op)
          producers.insert(other);
    missing[op] = static_cast<int64_t>(producers.size());
    for (Operation *p : producers)
      users[p].push_back(op);
  }

  auto allocated = [&](Operation *op) {
    int64_t bytes = 0;
    for (Value r : op->getResults())
      if (bufferRoot(r) == r)
        bytes += bytesOf(r);
    return bytes;
  };
  auto freed = [&](Operation *op) {
    // Count each buffer once, however many operands read it.
    llvm::SmallDenseMap<Value, int64_t> reads;
    for (Value operand : op->getOperands())
      ++reads[bufferRoot(operand)];
    int64_t bytes = 0;
    for (auto [root, n] : reads)
      if (!persistent.contains(root) && pendingUses.lookup(root) == n)
        bytes += bytesOf(root);
    return bytes;
  };

  // Recomputation (ops marked `memopt.recompute`) is demand-driven: such an
  // op runs only when nothing else can, and then the earliest in the block,
  // since checkpointing emits recomputation in the order the backward pass
  // needs it. Running it any sooner would hold what it recomputes across
  // the very stretch checkpointing dropped it for.
  SmallVector<Operation *> ready, deferred, order;
  auto makeReady = [&](Operation *op) {
    (op->hasAttr(kRecomputeAttrName) ? deferred : ready).push_back(op);
  };
  for (Operation *op : ops)
    if (missing[op] == 0)
      makeReady(op);
  while (!ready.empty() || !deferred.empty()) {
    if (ready.empty()) {
      auto earliest =
          llvm::min_element(deferred, [&](Operation *a, Operation *b) {
            return index[a] < index[b];
          });
      ready.push_back(*earliest);
      deferred.erase(earliest);
    }
    size_t best = 0;
    int64_t bestScore = 0;
    bool bestUpdate = false;
    for (size_t i = 0; i < ready.size(); ++i) {
      Operation *op = ready[i];
      bool update = isOptimizerUpdate(op);
      int64_t score = freed(op) - allocated(op);
      bool better = i == 0 || (update && !bestUpdate) ||
                    (update == bestUpdate &&
                     (score > bestScore ||
                      (score == bestScore && index[op] < index[ready[best]])));
      if (better) {
        best = i;
        bestScore = score;
        bestUpdate = update;
      }
    }
    Operation *op = ready[best];
    ready.erase(ready.begin() + best);
    order.push_back(op);
    for (Value operand : op->getOperands())
      --pendingUses[bufferRoot(operand)];
    for (Operation *user : users[op])
      if (--missing[user] == 0)
        makeReady(user);
  }

  int64_t moved = 0;
  for (auto [i, op] : llvm::enumerate(order)) {
    moved += index[op] != static_cast<int64_t>(i);
    op->moveBefore(terminator);
  }

  // A free after the last use of every buffer (right after its definition
  // when nothing uses it).
  DenseMap<Value, Operation *> lastUse;
  for (Operation *op : order) {
    for (Value r : op->getResults())
      if (bufferRoot(r) == r && isa<RankedTensorType>(r.getType()))
        lastUse[r] = op;
    for (Value operand : op->getOperands())
      lastUse[bufferRoot(operand)] = op;
  }
  int64_t frees = 0;
  for (Operation *op : llvm::reverse(order)) {
    SmallVector<Value> dying;
    for (Value r : op->getResults())
      if (lastUse.lookup(r) == op && !persistent.contains(r))
        dying.push_back(r);
    for (Value operand : op->getOperands()) {
      Value root = bufferRoot(operand);
      if (lastUse.lookup(root) == op && !persistent.contains(root) &&
          !llvm::is_contained(dying, root))
        dying.push_back(root);
    }
    OpBuilder b(op->getContext());
    b.setInsertionPointAfter(op);
    for (Value v : llvm::reverse(dying)) {
      FreeOp::create(b, op->getLoc(), v);
      ++frees;
    }
  }
  return {moved, frees};
}

} // namespace

std::pair<int64_t, int64_t> memopt::scheduleFunction(func::FuncOp func) {
  return Scheduler(func).run();
}

namespace {

struct MemOptSchedulePass
    : public memopt::impl::MemOptScheduleBase<MemOptSchedulePass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      if (!func.getBody().hasOneBlock()) {
        func.emitOpError("memopt-schedule expects a single-block function");
        return signalPassFailure();
      }
      auto [moved, frees] = scheduleFunction(func);
      numMoved += moved;
      numFrees += frees;
    }
  }
};

} // namespace
