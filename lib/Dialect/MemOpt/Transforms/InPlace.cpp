//===- InPlace.cpp - ops that overwrite a dead operand --------------------===//
//
// `--memopt-inplace`: `ReLU(inplace=True)` decided from the whole training
// step. An op whose kernel can write result 0 over an operand
// (InPlaceOpInterface) is marked `memopt.inplace = N` when operand N's buffer
// is dead once the op has read it:
//
// * the buffer is not an argument (parameters, state and data are never
//   overwritten) and not a constant (materialised once, reused every step);
// * no other op reads the buffer — through the operand or any value sharing
//   its buffer (views, earlier in-place results) — after this op in the
//   block, backward ops and the function's return included.
//
// The second rule is conservative: a later reader that does not depend on
// the op could in principle be moved before it, but the current order is a
// witness that the scheduler's anti-dependences (every other reader runs
// before the in-place op) can be met, so no decision can make the step
// unschedulable. Decisions are made in block order and see earlier ones:
// once `relu` writes over a batch-norm output, an `add` may not write over
// the `relu` result while `relu_backward` still reads it.
//
// With `remarks=true`, every decision is a remark on its op: where it went
// in place, or why each candidate operand was refused.
//
//===----------------------------------------------------------------------===//

#include "memopt/Analysis/MemoryAnalysis.h"
#include "memopt/Dialect/MemOpt/IR/MemOptDialect.h"
#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"
#include "memopt/Dialect/MemOpt/Transforms/ForeignIR.h"
#include "memopt/Dialect/MemOpt/Transforms/Passes.h"
#include "memopt/Dialect/MemOpt/Transforms/Transforms.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "memopt-inplace"

namespace memopt {
#define GEN_PASS_DEF_MEMOPTINPLACE
#include "memopt/Dialect/MemOpt/Transforms/Passes.h.inc"
} // namespace memopt

using namespace mlir;
using namespace memopt;

std::string memopt::describeOp(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "'" << op->getName() << "'";
  if (auto file = op->getLoc()->findInstanceOf<FileLineColLoc>())
    os << " at " << file.getFilename().getValue() << ":" << file.getLine()
       << ":" << file.getColumn();
  return text;
}

/// Why `op` may not write over operand `index`, whose buffer is `root`'s,
/// whatever reads it: its type differs from the result's, or the buffer is
/// an argument's or a constant's. Null when neither holds.
static const char *refusalOfBuffer(Operation *op, unsigned index, Value root) {
  if (op->getOperand(index).getType() != op->getResult(0).getType())
    return "its type differs from the result's";
  if (isa<BlockArgument>(root))
    return "it is a function argument (parameters, state and inputs are "
           "never overwritten)";
  if (root.getDefiningOp()->hasTrait<mlir::OpTrait::ConstantLike>())
    return "it is a constant";
  return nullptr;
}

std::string memopt::inPlaceRefusal(Operation *op, unsigned index) {
  Value root = MemoryAnalysis::bufferRoot(op->getOperand(index));
  if (const char *why = refusalOfBuffer(op, index, root))
    return why;
  // Every value living in the buffer (the root, views of it, earlier
  // in-place results over it) and every reader of one of them.
  SmallVector<Value> worklist = {root};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (user == op || isa<FreeOp>(user))
        continue;
      if (user->getBlock() != op->getBlock() || !user->isBeforeInBlock(op)) {
        if (user->hasTrait<mlir::OpTrait::IsTerminator>())
          return "its buffer is returned by the function";
        return "its buffer is read later by " + describeOp(user);
      }
      for (Value result : user->getResults())
        if (MemoryAnalysis::aliasOf(result) == value)
          worklist.push_back(result);
    }
  }
  return {};
}

namespace {

/// `inPlaceRefusal`'s yes or no for the ops of one block, in block order,
/// each in constant time: the values sharing a buffer are one class of a
/// union-find (merged as ops are put in place), each class knowing the last
/// position any of its values is read at and whether one is returned or read
/// outside the block. Walking the buffer's values and their readers per
/// query instead cost n^2 on a chain of n in-place ops over one buffer (a
/// ResNet's residual stream).
class InPlaceOracle {
public:
  explicit InPlaceOracle(Block &block) {
    for (Operation &op : block)
      position[&op] = static_cast<int64_t>(position.size());
    for (BlockArgument arg : block.getArguments())
      add(arg, /*owner=*/true);
    for (Operation &op : block.without_terminator())
      for (Value result : op.getResults())
        add(result, !MemoryAnalysis::aliasOf(result));
  }

  /// Whether `op` may write over operand `index` (`inPlaceRefusal` is
  /// empty).
  bool allows(Operation *op, unsigned index) {
    auto it = ids.find(op->getOperand(index));
    if (it == ids.end())
      return false;
    const Buffer &buffer = buffers[find(it->second)];
    return !refusalOfBuffer(op, index, buffer.root) && !buffer.escapes &&
           buffer.lastRead <= position.lookup(op);
  }

  /// Records that `op`'s result 0 now lives in operand `index`'s buffer.
  void putInPlace(Operation *op, unsigned index) {
    uint32_t into = find(ids.lookup(op->getOperand(index)));
    uint32_t from = find(ids.lookup(op->getResult(0)));
    if (into == from)
      return;
    parent[from] = into;
    buffers[into].lastRead =
        std::max(buffers[into].lastRead, buffers[from].lastRead);
    buffers[into].escapes |= buffers[from].escapes;
  }

private:
  struct Buffer {
    Value root;
    /// The last position in the block that reads one of its values (frees
    /// aside), and whether one is returned or read in another block.
    int64_t lastRead = -1;
    bool escapes = false;
  };

  /// Gives `value` a buffer of its own (`owner`) or the one of the value it
  /// aliases, and records its readers there.
  void add(Value value, bool owner) {
    uint32_t id;
    if (owner || !ids.count(MemoryAnalysis::aliasOf(value))) {
      id = static_cast<uint32_t>(buffers.size());
      buffers.push_back({value});
      parent.push_back(id);
    } else {
      id = find(ids.lookup(MemoryAnalysis::aliasOf(value)));
    }
    ids[value] = id;
    Buffer &buffer = buffers[id];
    for (Operation *user : value.getUsers()) {
      if (isa<FreeOp>(user))
        continue;
      auto at = position.find(user);
      if (at == position.end() || user->hasTrait<mlir::OpTrait::IsTerminator>())
        buffer.escapes = true;
      else
        buffer.lastRead = std::max(buffer.lastRead, at->second);
    }
  }

  uint32_t find(uint32_t id) {
    while (parent[id] != id)
      id = parent[id] = parent[parent[id]];
    return id;
  }

  DenseMap<Operation *, int64_t> position;
  DenseMap<Value, uint32_t> ids;
  std::vector<Buffer> buffers;
  std::vector<uint32_t> parent;
};

} // namespace

/// Marks every op of `func` that can safely run in place, in block order
/// (each decision sees the earlier ones); returns how many.
int64_t memopt::convertInPlace(func::FuncOp func, bool remarks) {
  int64_t converted = 0;
  Block &block = func.getBody().front();
  InPlaceOracle oracle(block);
  for (Operation &op : block.without_terminator()) {
    auto inplace = dyn_cast<InPlaceOpInterface>(&op);
    if (!inplace || op.hasAttr(kInPlaceAttrName) || op.getNumResults() == 0)
      continue;
    std::string reasons;
    std::optional<unsigned> chosen;
    for (unsigned index : inplace.getInPlaceOperands()) {
      // The reason, which walks the buffer's readers, only for remarks (a
      // debug build checks the two agree).
      assert(oracle.allows(&op, index) == inPlaceRefusal(&op, index).empty() &&
             "the in-place oracle disagrees with inPlaceRefusal");
      if (oracle.allows(&op, index)) {
        chosen = index;
        break;
      }
      if (remarks)
        reasons += (reasons.empty() ? "" : "; ") +
                   ("operand " + std::to_string(index) + ": " +
                    inPlaceRefusal(&op, index));
    }
    if (!chosen) {
      if (remarks)
        op.emitRemark() << "not in place: "
                        << (reasons.empty() ? "no candidate operand" : reasons);
      continue;
    }
    op.setAttr(
        kInPlaceAttrName,
        IntegerAttr::get(IntegerType::get(op.getContext(), 64), *chosen));
    oracle.putInPlace(&op, *chosen);
    ++converted;
    if (remarks)
      op.emitRemark() << "in place over operand " << *chosen
                      << ": its buffer is dead afterwards";
  }
  return converted;
}

namespace {

struct MemOptInPlacePass
    : public memopt::impl::MemOptInPlaceBase<MemOptInPlacePass> {
  using MemOptInPlaceBase::MemOptInPlaceBase;

  void runOnOperation() override {
    SmallVector<func::FuncOp> graphs;
    if (failed(collectMemOptGraphs(getOperation(), "memopt-inplace", graphs)))
      return signalPassFailure();
    for (func::FuncOp func : graphs) {
      // Frees from an earlier schedule go; --memopt-schedule recomputes
      // them.
      for (Operation &op :
           llvm::make_early_inc_range(func.front().without_terminator()))
        if (isa<FreeOp>(op))
          op.erase();
      if (abn) {
        FailureOr<int64_t> fused = fuseInPlaceABN(func);
        if (failed(fused))
          return signalPassFailure();
        numFused += *fused;
      }
      numInPlace += convertInPlace(func, remarks);
    }
  }
};

} // namespace
