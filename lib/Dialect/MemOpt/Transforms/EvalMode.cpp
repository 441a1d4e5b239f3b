//===- EvalMode.cpp - training graph -> evaluation graph ------------------===//
//
// `--memopt-eval-mode`: what `model.eval()` and `torch.no_grad()` do, as a
// rewrite. Batch norm switches to its running statistics and stops updating
// them (a fused batch_norm_act becomes batch_norm_inference and its
// activation); dropout becomes the identity, and so does attention's
// (its `p` becomes 0).
//
//===----------------------------------------------------------------------===//

#include "memopt/Analysis/MemoryAnalysis.h"
#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"
#include "memopt/Dialect/MemOpt/Transforms/ForeignIR.h"
#include "memopt/Dialect/MemOpt/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"

#define DEBUG_TYPE "memopt-eval-mode"

namespace memopt {
#define GEN_PASS_DEF_MEMOPTEVALMODE
#include "memopt/Dialect/MemOpt/Transforms/Passes.h.inc"
} // namespace memopt

using namespace mlir;
using namespace memopt;

namespace {

/// The activation op batch_norm_act applies, on `z`.
Value createActivation(IRRewriter &rewriter, BatchNormActOp op, Value z) {
  if (op.getActivation() == "elu")
    return EluOp::create(rewriter, op.getLoc(), z, op.getAlphaAttr());
  return LeakyReluOp::create(rewriter, op.getLoc(), z, op.getAlphaAttr());
}

struct MemOptEvalModePass
    : public memopt::impl::MemOptEvalModeBase<MemOptEvalModePass> {
  void runOnOperation() override {
    SmallVector<func::FuncOp> graphs;
    if (failed(collectMemOptGraphs(getOperation(), "memopt-eval-mode", graphs)))
      return signalPassFailure();
    for (func::FuncOp func : graphs)
      if (failed(evaluate(func)))
        return signalPassFailure();
  }

  LogicalResult evaluate(func::FuncOp func) {
    // After --memopt-autodiff the step's backward pass reads the training
    // forward's batch statistics and dropout masks: switching the forward
    // alone would leave training-mode gradients beside evaluation-mode ops.
    MemoryAnalysis analysis(func);
    if (analysis.getFirstBackwardIndex() < analysis.getNumOps())
      return analysis.getOps()[analysis.getFirstBackwardIndex()]->emitOpError()
             << "belongs to the backward pass: --memopt-eval-mode runs on "
                "the forward graph, before --memopt-autodiff (evaluation has "
                "no backward pass)";
    IRRewriter rewriter(&getContext());
    WalkResult walk = func.walk([&](Operation *op) {
      if (auto bn = dyn_cast<BatchNormOp>(op)) {
        rewriter.setInsertionPoint(bn);
        auto eval = BatchNormInferenceOp::create(
            rewriter, bn.getLoc(), bn.getX(), bn.getGamma(), bn.getBeta(),
            bn.getRunningMean(), bn.getRunningVar(), bn.getEpsilonAttr());
        rewriter.replaceOp(bn, ValueRange{eval.getResult(), bn.getRunningMean(),
                                          bn.getRunningVar()});
        ++numBatchNorms;
      } else if (auto bn = dyn_cast<BatchNormActOp>(op)) {
        // Batch norm on the running statistics, then the activation; the
        // batch's inverse standard deviation only exists in training mode.
        if (!bn.getSavedInvstd().use_empty()) {
          bn.emitOpError("cannot switch to evaluation mode: its saved_invstd "
                         "is used, but evaluation has no batch statistics "
                         "(run --memopt-eval-mode on the forward graph)");
          return WalkResult::interrupt();
        }
        rewriter.setInsertionPoint(bn);
        auto eval = BatchNormInferenceOp::create(
            rewriter, bn.getLoc(), bn.getX(), bn.getGamma(), bn.getBeta(),
            bn.getRunningMean(), bn.getRunningVar(), bn.getEpsilonAttr());
        Value y = createActivation(rewriter, bn, eval.getResult());
        rewriter.replaceAllUsesWith(bn.getResult(), y);
        rewriter.replaceAllUsesWith(bn.getNewRunningMean(),
                                    bn.getRunningMean());
        rewriter.replaceAllUsesWith(bn.getNewRunningVar(), bn.getRunningVar());
        rewriter.eraseOp(bn);
        ++numBatchNorms;
      } else if (auto dropout = dyn_cast<DropoutOp>(op)) {
        rewriter.replaceOp(dropout, dropout.getX());
        ++numDropouts;
      } else if (auto attention = dyn_cast<AttentionOp>(op);
                 attention && attention.getP().convertToDouble() != 0) {
        rewriter.modifyOpInPlace(attention, [&] {
          attention.setPAttr(rewriter.getF64FloatAttr(0));
        });
        ++numDropouts;
      }
      return WalkResult::advance();
    });
    return failure(walk.wasInterrupted());
  }
};

} // namespace
