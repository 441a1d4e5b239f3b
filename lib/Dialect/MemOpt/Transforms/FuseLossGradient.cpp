//===- FuseLossGradient.cpp - the LM-head loss and its gradient in one op -===//
//
// `--memopt-fuse-loss-gradient` (Passes.td): on a training step, a
// linear_cross_entropy whose log-sum-exps only its backward op reads, on
// the same hidden, weight, labels and chunk, becomes one
// linear_cross_entropy_with_grad in the backward op's place, when nothing
// reads the loss before that place. The fused op computes each chunk's
// logits once where the pair computed them twice (forward, then again in
// the backward); its results are bit-identical to the pair's on the CPU.
//
// Taking the backward op's place keeps every tensor's lifetime: hidden,
// weight and labels were read there anyway, the gradients are born where
// they were, the 0-d loss later, and the N log-sum-exps are gone. Pairs the
// pass cannot prove that of are left alone (a remark says why).
//
// The backward op may read a recomputed copy of an operand where the
// forward op read the original: under mixed precision the partition
// recomputes the weight's f16 cast for the backward pass rather than keep
// the forward's alive. A copy counts as the same value when it is the same
// side-effect-free op, without regions, on the same operands (or copies of
// them) with the same attributes but `memopt.recompute` and the same result
// types: the same bits. The fused op reads the backward op's operands, and
// an original that nothing reads any more is erased with the forward op.
//
//===----------------------------------------------------------------------===//

#include "memopt/Dialect/MemOpt/IR/MemOptDialect.h"
#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"
#include "memopt/Dialect/MemOpt/Transforms/ForeignIR.h"
#include "memopt/Dialect/MemOpt/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define DEBUG_TYPE "memopt-fuse-loss-gradient"

namespace memopt {
#define GEN_PASS_DEF_MEMOPTFUSELOSSGRADIENT
#include "memopt/Dialect/MemOpt/Transforms/Passes.h.inc"
} // namespace memopt

using namespace mlir;
using namespace memopt;

namespace {

/// Whether `copy` is `original` or a recomputation of it (see the file
/// comment), looking through at most `depth` ops.
bool sameValue(Value original, Value copy, unsigned depth = 4) {
  if (original == copy)
    return true;
  auto a = dyn_cast<OpResult>(original), b = dyn_cast<OpResult>(copy);
  if (!a || !b || depth == 0 || a.getResultNumber() != b.getResultNumber())
    return false;
  Operation *x = a.getOwner(), *y = b.getOwner();
  if (x->getName() != y->getName() || x->getNumRegions() != 0 ||
      y->getNumRegions() != 0 || !isMemoryEffectFree(x) ||
      !isMemoryEffectFree(y) || x->getResultTypes() != y->getResultTypes() ||
      x->getNumOperands() != y->getNumOperands())
    return false;
  NamedAttrList xa(x->getAttrDictionary()), ya(y->getAttrDictionary());
  xa.erase(MemOptDialect::kRecomputeAttrName);
  ya.erase(MemOptDialect::kRecomputeAttrName);
  if (xa.getDictionary(x->getContext()) != ya.getDictionary(y->getContext()))
    return false;
  for (auto [u, v] : llvm::zip(x->getOperands(), y->getOperands()))
    if (!sameValue(u, v, depth - 1))
      return false;
  return true;
}

/// Erases `value`'s defining op, and then theirs, while nothing reads
/// them and they have no side effects.
void eraseIfDead(Value value) {
  Operation *op = value.getDefiningOp();
  if (!op || !op->use_empty() || !isMemoryEffectFree(op) ||
      op->getNumRegions() != 0)
    return;
  SmallVector<Value> operands(op->getOperands());
  op->erase();
  for (Value operand : operands)
    eraseIfDead(operand);
}

/// Why the backward op `bwd` and the forward op that made its log-sum-exps
/// cannot fuse, or an empty string when they can.
std::string whyNot(LinearCrossEntropyBackwardOp bwd, LinearCrossEntropyOp fwd) {
  if (!fwd)
    return "its log-sum-exps are not a linear_cross_entropy's";
  if (fwd->getBlock() != bwd->getBlock() || !fwd->isBeforeInBlock(bwd))
    return "the forward op is not before it in the same block";
  if (!sameValue(fwd.getHidden(), bwd.getHidden()) ||
      !sameValue(fwd.getWeight(), bwd.getWeight()) ||
      !sameValue(fwd.getLabels(), bwd.getLabels()) ||
      !fwd.getBias() != !bwd.getBias() ||
      (fwd.getBias() && !sameValue(fwd.getBias(), bwd.getBias())) ||
      fwd.getChunk() != bwd.getChunk())
    return "it does not take the forward op's hidden, weight, labels, bias "
           "and chunk";
  if (!fwd.getLse().hasOneUse())
    return "something else reads the log-sum-exps";
  for (Operation *user : fwd.getResult().getUsers())
    if (user->getBlock() != bwd->getBlock() || !bwd->isBeforeInBlock(user))
      return "the loss is read before the backward op";
  return "";
}

struct MemOptFuseLossGradientPass
    : public memopt::impl::MemOptFuseLossGradientBase<
          MemOptFuseLossGradientPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<func::FuncOp> graphs;
    if (failed(collectMemOptGraphs(getOperation(), "memopt-fuse-loss-gradient",
                                   graphs)))
      return signalPassFailure();
    bool changed = false;
    for (func::FuncOp func : graphs) {
      SmallVector<LinearCrossEntropyBackwardOp> backward(
          func.front().getOps<LinearCrossEntropyBackwardOp>());
      for (LinearCrossEntropyBackwardOp bwd : backward)
        changed |= fuseAt(bwd);
    }
    // Unchanged IR is not verified again by the pass manager.
    if (!changed)
      markAllAnalysesPreserved();
  }

  /// Whether `bwd` was fused with its forward op.
  bool fuseAt(LinearCrossEntropyBackwardOp bwd) {
    auto fwd = bwd.getLse().getDefiningOp<LinearCrossEntropyOp>();
    if (std::string why = whyNot(bwd, fwd); !why.empty()) {
      ++numNearMisses;
      if (remarks)
        bwd.emitRemark() << "linear_cross_entropy_backward not fused with "
                            "its forward op: "
                         << why;
      return false;
    }
    OpBuilder b(bwd);
    Location loc = FusedLoc::get(b.getContext(), {fwd.getLoc(), bwd.getLoc()});
    SmallVector<Type, 4> types{fwd.getResult().getType(),
                               bwd.getGradHidden().getType(),
                               bwd.getGradWeight().getType()};
    if (bwd.getGradBias())
      types.push_back(bwd.getGradBias().getType());
    auto fused = LinearCrossEntropyWithGradOp::create(
        b, loc, types, bwd.getGradLoss(), bwd.getHidden(), bwd.getWeight(),
        bwd.getLabels(), bwd.getBias(), bwd.getChunkAttr());
    // A forward op that checkpointing recomputes for the backward makes a
    // fused op whose loss nothing reads; it is not marked as recomputation
    // (most of its work is the backward's).
    fwd.getResult().replaceAllUsesWith(fused.getResult());
    bwd.getGradHidden().replaceAllUsesWith(fused.getGradHidden());
    bwd.getGradWeight().replaceAllUsesWith(fused.getGradWeight());
    if (bwd.getGradBias())
      bwd.getGradBias().replaceAllUsesWith(fused.getGradBias());
    SmallVector<Value> fwdOperands(fwd->getOperands());
    bwd->erase();
    fwd->erase();
    // Originals only the forward op read (the backward op read copies).
    for (Value operand : fwdOperands)
      eraseIfDead(operand);
    ++numFused;
    if (remarks)
      fused.emitRemark() << "fused linear_cross_entropy with its backward: "
                            "each chunk's logits computed once";
    return true;
  }
};

} // namespace
