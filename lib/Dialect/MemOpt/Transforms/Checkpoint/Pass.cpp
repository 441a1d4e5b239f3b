//===- Pass.cpp - --memopt-checkpoint, rematerialisation ------------------===//
//
// `--memopt-checkpoint`: drops forward values the backward pass would keep
// and recomputes them, right before the backward needs them, from a few kept
// checkpoints.
//
// 1. The forward pass (the ops the loss depends on, constants aside) is cut
//    into a chain of stages at its narrowest points: op boundaries that the
//    fewest forward values cross (one value in a chain or at a ResNet block
//    output: the articulation points of the graph; two, h and c, in an
//    unrolled LSTM, whose only single-value boundary is before its head),
//    widening the cut until it splits the chain in about sqrt(n) places.
// 2. A checkpoint schedule (CheckpointSchedule.h: Chen et al.'s square-root
//    segments, or the binomial Revolve schedule) says which stages to
//    recompute, from which version of their input cut.
// 3. Each action clones the stage's ops that its needs reach, marks them
//    `memopt.recompute`, and the backward ops of the stage read the clones;
//    the originals then die in the forward pass. Clones are exact copies
//    (dropout regenerates its mask from its seed; a batch-norm clone's
//    running statistics are never used, so the statistics update once).
//
// The scheduler runs recomputation on demand, so the pass places clones
// where the current order needs them and leaves the rest to
// `--memopt-schedule`. `strategy=budget` measures each candidate exactly as
// the pipeline will run it: on a scratch copy, checkpointed, scheduled and
// planned: arguments, constants and the planned arena.
//
// This file holds the pass: its options, the checks of the step it is
// given, and the choice of a plan by strategy; Checkpoint.h lists the rest.
//

#include "Checkpoint.h"

#include "memopt/Analysis/MemoryAnalysis.h"
#include "memopt/Dialect/MemOpt/IR/MemOptDialect.h"
#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"
#include "memopt/Dialect/MemOpt/Transforms/ForeignIR.h"
#include "memopt/Dialect/MemOpt/Transforms/Passes.h"
#include "memopt/Dialect/MemOpt/Transforms/Transforms.h"

#include <cmath>
#include <string>

#define DEBUG_TYPE "memopt-checkpoint"

namespace memopt {
#define GEN_PASS_DEF_MEMOPTCHECKPOINT
#include "memopt/Dialect/MemOpt/Transforms/Passes.h.inc"
} // namespace memopt

using namespace mlir;
using namespace memopt;
using namespace memopt::checkpoint;

namespace {

struct MemOptCheckpointPass
    : public memopt::impl::MemOptCheckpointBase<MemOptCheckpointPass> {
  using MemOptCheckpointBase::MemOptCheckpointBase;

  void runOnOperation() override {
    // The option parser admits sqrt, budget and optimal only; none is the
    // pipeline's, which then leaves this pass out.
    if (strategy == CheckpointStrategy::None) {
      getOperation()->emitError()
          << "memopt-checkpoint: strategy=none checkpoints nothing; leave the "
             "pass out";
      return signalPassFailure();
    }
    if (strategy == CheckpointStrategy::Budget) {
      if (budget.empty()) {
        getOperation()->emitError() << "memopt-checkpoint: strategy=budget "
                                       "needs budget=<bytes>, e.g. "
                                       "budget=512MiB";
        return signalPassFailure();
      }
      FailureOr<std::optional<int64_t>> parsed =
          parseBudgetOption(getOperation(), "memopt-checkpoint", budget);
      if (failed(parsed))
        return signalPassFailure();
      budgetBytes = *parsed;
    } else if (!budget.empty()) {
      getOperation()->emitError()
          << "memopt-checkpoint: budget= applies to strategy=budget only";
      return signalPassFailure();
    }
    if (failed(verifyFlopFractionOption(getOperation(), "memopt-checkpoint",
                                        "step-recompute", stepRecompute)))
      return signalPassFailure();
    if (!(timeLimit > 0)) {
      getOperation()->emitError()
          << "memopt-checkpoint: time-limit must be positive seconds";
      return signalPassFailure();
    }
    if (failed(verifyAlignmentOption(getOperation(), "memopt-checkpoint",
                                     alignment)))
      return signalPassFailure();
    if (slots < -1) {
      getOperation()->emitError()
          << "memopt-checkpoint: slots must be a count >= 0 (or -1, the "
             "default: the fewest within one forward pass), got "
          << static_cast<int64_t>(slots);
      return signalPassFailure();
    }
    if (slots >= 0 && (strategy != CheckpointStrategy::Optimal ||
                       solver != CheckpointSolver::DP)) {
      getOperation()->emitError()
          << "memopt-checkpoint: slots= applies to strategy=optimal "
             "solver=dp only";
      return signalPassFailure();
    }
    if (segments < 0) {
      getOperation()->emitError()
          << "memopt-checkpoint: segments must be positive (0: about the "
             "square root of the stage count)";
      return signalPassFailure();
    }
    if (segments > 0 && strategy != CheckpointStrategy::Sqrt) {
      getOperation()->emitError()
          << "memopt-checkpoint: segments= applies to strategy=sqrt only";
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> graphs;
    if (failed(
            collectMemOptGraphs(getOperation(), "memopt-checkpoint", graphs)))
      return signalPassFailure();
    for (func::FuncOp func : graphs)
      if (failed(checkpoint(func)))
        return signalPassFailure();
  }

  LogicalResult checkpoint(func::FuncOp func);

  SearchOptions searchOptions() const {
    SearchOptions search;
    search.solver = solver;
    search.slots = slots;
    search.timeLimit = timeLimit;
    search.alignment = alignment;
    search.measureInPlace = measureInPlace;
    search.measurePartition = measurePartition;
    search.stepRecompute = stepRecompute;
    search.budgetBytes = budgetBytes;
    return search;
  }

  std::optional<int64_t> budgetBytes;
};

LogicalResult MemOptCheckpointPass::checkpoint(func::FuncOp func) {
  if (!func.getBody().hasOneBlock())
    return func.emitOpError("memopt-checkpoint expects a single-block "
                            "function");
  Block &block = func.front();
  // A loss over parameters with no backward pass yet: nothing would be
  // checkpointed, and saying nothing would look like success.
  {
    bool hasParams = llvm::any_of(func.getArguments(), [&](BlockArgument a) {
      return bool(
          func.getArgAttr(a.getArgNumber(), MemOptDialect::kParamAttrName));
    });
    auto loss = func.getNumResults() == 0
                    ? RankedTensorType()
                    : dyn_cast<RankedTensorType>(func.getResultTypes()[0]);
    if (hasParams && loss && loss.getRank() == 0) {
      MemoryAnalysis analysis(func);
      if (analysis.getFirstBackwardIndex() >= analysis.getNumOps())
        return func.emitOpError(
            "has a loss over parameters but no backward pass: run "
            "--memopt-checkpoint after --memopt-autodiff, which builds the "
            "step it recomputes in");
    }
  }
  for (Operation &op : block)
    if (op.hasAttr(kRecomputeAttrName))
      return op.emitOpError("is already recomputed: run --memopt-checkpoint "
                            "once, on the step --memopt-autodiff built");
  // A forward value overwritten in place could not be read by a clone in the
  // backward pass.
  if (Operation *op = findInPlaceOverIntermediate(block))
    return op->emitOpError("runs in place: run --memopt-checkpoint before "
                           "--memopt-inplace, whose decisions depend on "
                           "which values the backward pass reads");
  // Frees from an earlier schedule would pin what checkpointing drops;
  // --memopt-schedule recomputes them.
  for (Operation &op : llvm::make_early_inc_range(block.without_terminator()))
    if (isa<FreeOp>(op))
      op.erase();

  StageChain chain = StageChain::build(func);
  bool hasBackward = llvm::any_of(chain.ops, [&](Operation *op) {
    return llvm::any_of(op->getUsers(), [&](Operation *user) {
      return chain.isBackwardUser(user);
    });
  });
  // An inference graph, or a step whose backward keeps nothing.
  if (chain.size() == 0 || !hasBackward)
    return success();
  numStages += chain.size();

  CheckpointPlan plan;
  if (strategy == CheckpointStrategy::Sqrt) {
    int64_t n = chain.size();
    int64_t k = segments > 0 ? static_cast<int64_t>(segments)
                             : static_cast<int64_t>(std::llround(
                                   std::sqrt(static_cast<double>(n))));
    // Segments of about equal saved bytes.
    plan.schedule = sqrtSchedule(balancedBoundaries(chain.weights, n, k), n);
  } else if (strategy == CheckpointStrategy::Optimal) {
    SearchOptions search = searchOptions();
    FailureOr<CheckpointPlan> chosen = chooseOptimal(func, chain, search);
    numCandidates += search.candidatesMeasured;
    if (failed(chosen))
      return failure();
    plan = std::move(*chosen);
  } else {
    SearchOptions search = searchOptions();
    FailureOr<CheckpointSchedule> chosen = chooseBudget(func, chain, search);
    numCandidates += search.candidatesMeasured;
    if (failed(chosen))
      return failure();
    plan.schedule = std::move(*chosen);
  }
  if (!plan.recompute)
    if (std::string error =
            verifyCheckpointSchedule(plan.schedule, chain.size());
        !error.empty())
      return func.emitOpError("internal error: invalid checkpoint schedule: ")
             << error;
  numRecomputed += applyPlan(func, chain, plan);
  return success();
}

} // namespace
