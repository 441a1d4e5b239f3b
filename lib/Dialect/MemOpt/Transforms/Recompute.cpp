//===- Recompute.cpp - clones that recompute forward values ---------------===//
//
// What `--memopt-checkpoint` and `--memopt-partition` share when they clone
// forward ops into the backward pass: how a clone is marked, how the clones
// nothing reads are dropped, and the precondition that no forward value has
// been overwritten in place (a clone could not read it).
//
//===----------------------------------------------------------------------===//

#include "memopt/Analysis/MemoryAnalysis.h"
#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"
#include "memopt/Dialect/MemOpt/Transforms/Transforms.h"

#include "mlir/Analysis/TopologicalSortUtils.h"
#include "mlir/IR/Builders.h"

using namespace mlir;

void memopt::markRecomputed(Operation *clone) {
  clone->setAttr(kRecomputeAttrName, UnitAttr::get(clone->getContext()));
  clone->removeAttr(kInPlaceAttrName);
  clone->removeAttr(MemOptDialect::kOffsetsAttrName);
}

int64_t memopt::finishClones(Block &block, ArrayRef<Operation *> clones) {
  int64_t count = 0;
  for (Operation *clone : llvm::reverse(clones)) {
    if (clone->use_empty())
      clone->erase();
    else
      ++count;
  }
  sortTopologically(&block);
  return count;
}

Operation *memopt::findInPlaceOverIntermediate(Block &block) {
  for (Operation &op : block.without_terminator()) {
    // Loss scaling's unscale overwriting a value nothing else reads (a
    // parameter gradient, as --memopt-autodiff emits it): no clone of a
    // forward op reads it.
    if (isa<UnscaleOp>(op) && op.getOperand(0).hasOneUse())
      continue;
    // ZeRO's broadcast of a new parameter from its owner, over the update's
    // result (itself over the parameter argument), which nothing else reads.
    if (isa<BroadcastOp>(op) && op.getNumOperands() == 1 &&
        op.getOperand(0).hasOneUse() &&
        op.getOperand(0).getDefiningOp<OptimizerUpdateOpInterface>())
      continue;
    // An update over its parameter's rows (ZeRO, a parameter divided by
    // rows: a slice of the argument only the update reads).
    if (isa<OptimizerUpdateOpInterface>(op) && op.getNumOperands() > 0 &&
        op.getOperand(0).hasOneUse())
      if (auto rows = op.getOperand(0).getDefiningOp<SliceOp>();
          rows && isa<BlockArgument>(rows.getX()))
        continue;
    // Likewise gradient clipping's product overwriting a gradient that only
    // the clipping factor's op read before it (or, under ZeRO stage 2, the
    // rank's partial sum of squares, which the factor is computed from).
    if (isa<MulOp>(op) &&
        llvm::all_of(op.getOperand(0).getUsers(), [&](Operation *user) {
          return user == &op || isa<ClipCoefficientOp, SquareSumOp>(user);
        }))
      continue;
    auto index = op.getAttrOfType<IntegerAttr>(kInPlaceAttrName);
    if (index && index.getInt() >= 0 &&
        index.getInt() < static_cast<int64_t>(op.getNumOperands()) &&
        !isa<BlockArgument>(op.getOperand(index.getInt())))
      return &op;
  }
  return nullptr;
}
