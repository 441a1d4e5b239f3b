//===- RecheckGradients.cpp - weight gradients computed again -------------===//
//
// Under dynamic loss scaling every optimizer update waits for
// `memopt.found_inf`, which reads every parameter gradient: each gradient
// lives from its computation to the end of the backward pass, where without
// loss scaling it dies at its update. A weight gradient computed from
// values much smaller than itself (a linear layer's dW = dYᵀ·X at a small
// batch: 8×4096 and 8×25088 values for a 4096×25088 gradient) is cheaper to
// hold as those values. Such a gradient is checked right after it is
// computed, by a `memopt.found_inf` of its own, and then freed; its op runs
// again, marked `memopt.recompute`, right before the update (the
// scheduler runs recomputation on demand). The clone reads the same values,
// so the update sees the same bits. The flags are added: the sum is
// nonzero exactly when some flag is, which is all that the updates' `skip`,
// `memopt.update_loss_scale` and `memopt.select` read.
//
//===----------------------------------------------------------------------===//

#include "memopt/Analysis/MemoryAnalysis.h"
#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"
#include "memopt/Dialect/MemOpt/Transforms/Transforms.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace memopt {

namespace {

/// A gradient worth computing twice, and what doing so costs and saves.
struct Candidate {
  Value grad;
  Operation *update;
  int64_t flops;
  /// Bytes of the gradient less the bytes its op reads.
  int64_t saved;
};

bool isOptimizerUpdate(Operation *op) {
  return isa<OptimizerUpdateOpInterface>(op);
}

/// How many times a gradient must outweigh the values its op reads.
constexpr int64_t kMinRatio = 4;

/// `grad` as a candidate: computed by a pure single-result memopt op with no
/// regions that is not in place, read only by `found` and by one optimizer
/// update (as its gradient), and at least kMinRatio times the bytes of the
/// non-argument values its op reads.
std::optional<Candidate> asCandidate(Value grad, FoundInfOp found) {
  Operation *def = grad.getDefiningOp();
  if (!def || def->getNumResults() != 1 || def->getNumRegions() != 0 ||
      !isa<MemOptDialect>(def->getDialect()) || !isMemoryEffectFree(def) ||
      def->hasAttr(kInPlaceAttrName) || isa<FoundInfOp>(def))
    return std::nullopt;
  Operation *update = nullptr;
  for (OpOperand &use : grad.getUses()) {
    Operation *user = use.getOwner();
    if (user == found.getOperation())
      continue;
    if (update || !isOptimizerUpdate(user) || use.getOperandNumber() != 1)
      return std::nullopt;
    update = user;
  }
  if (!update || llvm::count(found->getOperands(), grad) != 1)
    return std::nullopt;
  int64_t inputs = 0;
  for (Value operand : def->getOperands())
    if (!isa<BlockArgument>(operand))
      inputs += MemoryAnalysis::getValueBytes(operand);
  int64_t bytes = MemoryAnalysis::getValueBytes(grad);
  if (bytes < kMinRatio * inputs)
    return std::nullopt;
  return Candidate{grad, update, MemoryAnalysis::getFlops(def), bytes - inputs};
}

} // namespace

RecheckedGradients recheckGradients(func::FuncOp func, int64_t flopBudget,
                                    bool remarks, int64_t maxCount) {
  RecheckedGradients result;
  Block &block = func.getBody().front();
  SmallVector<FoundInfOp> checks;
  for (Operation &op : block.without_terminator())
    if (auto found = dyn_cast<FoundInfOp>(op))
      checks.push_back(found);
  // One overflow check, as --memopt-autodiff emits it.
  if (checks.size() != 1)
    return result;
  FoundInfOp found = checks.front();

  SmallVector<Candidate> candidates;
  for (Value grad : found->getOperands())
    if (std::optional<Candidate> c = asCandidate(grad, found))
      candidates.push_back(*c);
  // The most bytes saved first, within the FLOPs allowed.
  llvm::stable_sort(candidates, [](const Candidate &a, const Candidate &b) {
    return a.saved > b.saved;
  });
  SmallVector<Candidate> chosen;
  for (const Candidate &c : candidates)
    if (static_cast<int64_t>(chosen.size()) < maxCount &&
        c.flops <= flopBudget - result.flops) {
      chosen.push_back(c);
      result.flops += c.flops;
      result.bytes += c.saved;
    }
  if (chosen.empty())
    return result;

  OpBuilder b(func.getContext());
  auto flagType = RankedTensorType::get({}, b.getF32Type());
  SmallVector<Value> flags;
  llvm::SmallPtrSet<Value, 8> rechecked;
  for (const Candidate &c : chosen) {
    Operation *def = c.grad.getDefiningOp();
    b.setInsertionPointAfter(def);
    flags.push_back(
        FoundInfOp::create(b, def->getLoc(), flagType, ValueRange{c.grad}));
    b.setInsertionPoint(c.update);
    Operation *clone = b.clone(*def);
    markRecomputed(clone);
    c.update->setOperand(1, clone->getResult(0));
    rechecked.insert(c.grad);
    if (remarks)
      clone->emitRemark() << "memopt-partition: gradient checked for overflow "
                             "when computed and computed again for its update "
                          << "(" << MemoryAnalysis::getValueBytes(c.grad)
                          << " bytes not held, " << c.flops << " FLOPs)";
  }

  b.setInsertionPoint(found);
  SmallVector<Value> rest;
  for (Value v : found->getOperands())
    if (!rechecked.contains(v))
      rest.push_back(v);
  Value any =
      rest.empty()
          ? Value()
          : Value(FoundInfOp::create(b, found.getLoc(), flagType, rest));
  for (Value flag : flags)
    any = any ? Value(AddOp::create(b, found.getLoc(), any, flag)) : flag;
  found.getResult().replaceAllUsesWith(any);
  found.erase();
  result.count = static_cast<int64_t>(chosen.size());
  return result;
}

} // namespace memopt
