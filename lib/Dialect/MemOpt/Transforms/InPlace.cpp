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
#include "memopt/Dialect/MemOpt/Transforms/Passes.h"
#include "memopt/Dialect/MemOpt/Transforms/Transforms.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

#define DEBUG_TYPE "memopt-inplace"

namespace memopt {
#define GEN_PASS_DEF_MEMOPTINPLACE
#include "memopt/Dialect/MemOpt/Transforms/Passes.h.inc"
} // namespace memopt

using namespace mlir;
using namespace memopt;

namespace {

/// The value owning `v`'s buffer, following views and in-place results.
Value bufferRoot(Value v) {
  while (Value owner = MemoryAnalysis::aliasOf(v))
    v = owner;
  return v;
}

/// How an op is named in a reason: `'memopt.relu_backward' at file:line:col`.
std::string describe(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "'" << op->getName() << "'";
  if (auto file = op->getLoc()->findInstanceOf<FileLineColLoc>())
    os << " at " << file.getFilename().getValue() << ":" << file.getLine()
       << ":" << file.getColumn();
  return text;
}

class InPlaceConverter {
public:
  InPlaceConverter(func::FuncOp func, bool remarks)
      : func(func), remarks(remarks) {}

  /// Marks every op that can safely run in place; returns how many.
  int64_t run();

private:
  /// Why operand `index` of `op` cannot be overwritten; empty when it can.
  std::string refusal(Operation *op, unsigned index);

  func::FuncOp func;
  bool remarks;
  DenseMap<Operation *, int64_t> position;
  /// Root buffer -> the values living in it (the root first).
  DenseMap<Value, SmallVector<Value>> members;
};

std::string InPlaceConverter::refusal(Operation *op, unsigned index) {
  Value operand = op->getOperand(index);
  if (operand.getType() != op->getResult(0).getType())
    return "its type differs from the result's";
  Value root = bufferRoot(operand);
  if (isa<BlockArgument>(root))
    return "it is a function argument (parameters, state and inputs are "
           "never overwritten)";
  Operation *def = root.getDefiningOp();
  if (def->hasTrait<mlir::OpTrait::ConstantLike>())
    return "it is a constant";
  int64_t here = position.lookup(op);
  auto it = members.find(root);
  ArrayRef<Value> sharing =
      it == members.end() ? ArrayRef<Value>(root) : ArrayRef(it->second);
  for (Value value : sharing)
    for (Operation *user : value.getUsers()) {
      if (user == op || isa<FreeOp>(user))
        continue;
      if (position.lookup(user) > here) {
        std::string reason = "its buffer is read later by " + describe(user);
        if (user->hasTrait<mlir::OpTrait::IsTerminator>())
          reason = "its buffer is returned by the function";
        return reason;
      }
    }
  return {};
}

int64_t InPlaceConverter::run() {
  Block &block = func.getBody().front();
  // Frees from an earlier schedule go; --memopt-schedule recomputes them.
  for (Operation &op : llvm::make_early_inc_range(block.without_terminator()))
    if (isa<FreeOp>(op))
      op.erase();
  for (auto [i, op] : llvm::enumerate(block.getOperations()))
    position[&op] = static_cast<int64_t>(i);
  // The buffers that existing in-place results and views already share.
  for (Operation &op : block)
    for (Value result : op.getResults()) {
      Value root = bufferRoot(result);
      if (root != result) {
        SmallVector<Value> &list = members[root];
        if (list.empty())
          list.push_back(root);
        list.push_back(result);
      }
    }

  int64_t converted = 0;
  for (Operation &op : block.without_terminator()) {
    auto inplace = dyn_cast<InPlaceOpInterface>(&op);
    if (!inplace || op.hasAttr(kInPlaceAttrName) || op.getNumResults() == 0)
      continue;
    std::string reasons;
    std::optional<unsigned> chosen;
    for (unsigned index : inplace.getInPlaceOperands()) {
      std::string why = refusal(&op, index);
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
    Value root = bufferRoot(op.getOperand(*chosen));
    SmallVector<Value> &list = members[root];
    if (list.empty())
      list.push_back(root);
    list.push_back(op.getResult(0));
    ++converted;
    if (remarks)
      op.emitRemark() << "in place over operand " << *chosen
                      << ": its buffer is dead afterwards";
  }
  return converted;
}

struct MemOptInPlacePass
    : public memopt::impl::MemOptInPlaceBase<MemOptInPlacePass> {
  using MemOptInPlaceBase::MemOptInPlaceBase;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      if (!func.getBody().hasOneBlock()) {
        func.emitOpError("memopt-inplace expects a single-block function");
        return signalPassFailure();
      }
      if (abn) {
        FailureOr<int64_t> fused = fuseInPlaceABN(func);
        if (failed(fused))
          return signalPassFailure();
        numFused += *fused;
      }
      numInPlace += InPlaceConverter(func, remarks).run();
    }
  }
};

} // namespace
