//===- EvalMode.cpp - training graph -> evaluation graph ------------------===//
//
// `--memopt-eval-mode`: what `model.eval()` and `torch.no_grad()` do, as a
// rewrite. Batch norm switches to its running statistics and stops updating
// them; dropout becomes the identity.
//
//===----------------------------------------------------------------------===//

#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"
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

struct MemOptEvalModePass
    : public memopt::impl::MemOptEvalModeBase<MemOptEvalModePass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    getOperation().walk([&](Operation *op) {
      if (auto bn = dyn_cast<BatchNormOp>(op)) {
        rewriter.setInsertionPoint(bn);
        auto eval = BatchNormInferenceOp::create(
            rewriter, bn.getLoc(), bn.getX(), bn.getGamma(), bn.getBeta(),
            bn.getRunningMean(), bn.getRunningVar(), bn.getEpsilonAttr());
        rewriter.replaceOp(bn, ValueRange{eval.getResult(), bn.getRunningMean(),
                                          bn.getRunningVar()});
        ++numBatchNorms;
      } else if (auto dropout = dyn_cast<DropoutOp>(op)) {
        rewriter.replaceOp(dropout, dropout.getX());
        ++numDropouts;
      }
    });
  }
};

} // namespace
