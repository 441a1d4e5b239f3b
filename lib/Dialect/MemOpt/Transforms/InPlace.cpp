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

std::string memopt::inPlaceRefusal(Operation *op, unsigned index) {
  Value operand = op->getOperand(index);
  if (operand.getType() != op->getResult(0).getType())
    return "its type differs from the result's";
  Value root = MemoryAnalysis::bufferRoot(operand);
  if (isa<BlockArgument>(root))
    return "it is a function argument (parameters, state and inputs are "
           "never overwritten)";
  if (root.getDefiningOp()->hasTrait<mlir::OpTrait::ConstantLike>())
    return "it is a constant";
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

/// Marks every op of `func` that can safely run in place, in block order
/// (each decision sees the earlier ones); returns how many.
int64_t memopt::convertInPlace(func::FuncOp func, bool remarks) {
  int64_t converted = 0;
  for (Operation &op : func.getBody().front().without_terminator()) {
    auto inplace = dyn_cast<InPlaceOpInterface>(&op);
    if (!inplace || op.hasAttr(kInPlaceAttrName) || op.getNumResults() == 0)
      continue;
    std::string reasons;
    std::optional<unsigned> chosen;
    for (unsigned index : inplace.getInPlaceOperands()) {
      std::string why = inPlaceRefusal(&op, index);
      if (why.empty()) {
        chosen = index;
        break;
      }
      reasons += (reasons.empty() ? "" : "; ") +
                 ("operand " + std::to_string(index) + ": " + why);
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
