//===- Checkpoint.h - the parts of the checkpoint pass ----------*- C++ -*-===//
//
// The pieces `--memopt-checkpoint` (Pass.cpp) is built from, one file each:
// rewriting the step by a schedule or a keep set (Rewrite.cpp), the exact
// keep/recompute model (Exact.cpp), measuring a candidate on a scratch copy
// (Measure.cpp), and one file a strategy that searches (Optimal.cpp,
// Budget.cpp; sqrt is one call in Pass.cpp). Private to the pass.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_LIB_TRANSFORMS_CHECKPOINT_CHECKPOINT_H
#define MEMOPT_LIB_TRANSFORMS_CHECKPOINT_CHECKPOINT_H

#include "memopt/Analysis/CheckpointSchedule.h"
#include "memopt/Analysis/RematILP.h"
#include "memopt/Analysis/StageChain.h"
#include "memopt/Dialect/MemOpt/Transforms/PassChoices.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace memopt::checkpoint {

/// What to recompute: a stage schedule, or (from the exact model) one
/// clone of each op `recompute` marks.
struct CheckpointPlan {
  CheckpointSchedule schedule;
  std::optional<std::vector<char>> recompute;
};

/// What a candidate costs, measured as the pipeline will run it.
struct Measurement {
  /// What the executor allocates: the planned arena, the arguments and the
  /// constants, with their alignment padding (MemoryAnalysis::getStepBytes).
  /// Measured against a cutoff and proved above it, the cutoff plus one
  /// instead (its arena was not planned to the end).
  int64_t totalBytes = 0;
  int64_t recomputeFlops = 0;
};

/// The pass's options the searching strategies read, and what they count.
struct SearchOptions {
  CheckpointSolver solver = CheckpointSolver::Auto;
  /// solver=dp: exactly this many slots; -1: the fewest within one pass.
  int64_t slots = -1;
  double timeLimit = 2.0;
  int64_t alignment = 64;
  bool measureInPlace = false;
  /// Measure as --memopt-partition after checkpointing will leave the step
  /// (applyPartitionEstimate).
  bool measurePartition = false;
  /// With measurePartition: --memopt-partition's step-recompute.
  double stepRecompute = 0;
  /// strategy=budget: the whole step's bytes.
  std::optional<int64_t> budgetBytes;
  /// Candidates measured so far (the pass's `candidates` statistic).
  int64_t candidatesMeasured = 0;
};

//===----------------------------------------------------------------------===//
// Rewriting (Rewrite.cpp)
//===----------------------------------------------------------------------===//

/// Clones the stages `schedule` recomputes and points the backward pass at
/// the clones. Returns the number of ops cloned (after removing clones
/// nothing reads).
int64_t applySchedule(mlir::func::FuncOp func, const StageChain &chain,
                      const CheckpointSchedule &schedule);
/// Clones every op `recompute` marks once, in the order the backward pass
/// first needs it, and points the backward pass at the clones. Returns the
/// number of ops cloned.
int64_t applyKeepSet(mlir::func::FuncOp func, const StageChain &chain,
                     const RematProblem &problem,
                     const std::vector<char> &recompute);
/// Rewrites `func` by `plan`; returns the number of ops cloned.
int64_t applyPlan(mlir::func::FuncOp func, const StageChain &chain,
                  const CheckpointPlan &plan);

//===----------------------------------------------------------------------===//
// The exact keep/recompute model (Exact.cpp)
//===----------------------------------------------------------------------===//

/// The forward ops and the backward timeline of `func`, in the model the
/// ILP solves: sizes and FLOPs per op, when the backward reads each op's
/// results, and the other memory live at every backward op (from the memory
/// analysis of the current order).
RematProblem buildRematProblem(mlir::func::FuncOp func,
                               const StageChain &chain);
/// The exact model's plan within one forward pass of recomputation, or none
/// where it does not apply (too many ops, with a remark; nothing to
/// recompute); with solver=ilp, too many ops is an error.
mlir::FailureOr<std::optional<CheckpointPlan>>
solveExact(mlir::func::FuncOp func, const StageChain &chain,
           const SearchOptions &options);

/// Forward ops beyond which the exact model is not attempted.
constexpr int64_t kMaxIlpOps = 2000;

//===----------------------------------------------------------------------===//
// Measuring (Measure.cpp)
//===----------------------------------------------------------------------===//

/// Runs the plan (then, with `options.measurePartition`,
/// applyPartitionEstimate, and with `options.measureInPlace`,
/// `--memopt-inplace`), `--memopt-schedule` and `--memopt-plan-memory` on a
/// scratch copy of `func` and measures the step.
/// With `lowerBound`, the arena is not planned: `totalBytes` counts the
/// least arena any plan can have (getArenaLowerBound) instead, a lower
/// bound of the planned step's, at a fraction of the cost.
/// `chain` is `func`'s own (StageChain::build of it as it is).
/// With a `cutoff` (the best step so far), planning stops as soon as the
/// step is proved larger (`totalBytes` is then the cutoff plus one): such a
/// candidate cannot win, and the rest of its plan would be wasted.
mlir::FailureOr<Measurement>
measure(mlir::func::FuncOp func, const StageChain &chain,
        const CheckpointPlan &plan, const SearchOptions &options,
        bool lowerBound = false, std::optional<int64_t> cutoff = std::nullopt);
/// Measures `plans[begin, end)`, on the context's threads when it has them:
/// each works on its own scratch copy of `func`, which only reads it.
mlir::FailureOr<llvm::SmallVector<Measurement>>
measureRange(mlir::func::FuncOp func, const StageChain &chain,
             llvm::ArrayRef<CheckpointPlan> plans, size_t begin, size_t end,
             const SearchOptions &options, bool lowerBound = false);

//===----------------------------------------------------------------------===//
// The strategies that search (Optimal.cpp, Budget.cpp)
//===----------------------------------------------------------------------===//

/// The binomial schedule with the fewest slots whose recomputation stays
/// within one forward pass (every cut held when none does), priced with
/// `flops`, which the caller may go on using.
CheckpointSchedule binomialSchedule(const StageChain &chain,
                                    ScheduleFlops &flops);
/// Checkpoint slots the dynamic programme considers: enough for the
/// binomial optimum within one forward pass, with room to spare.
int64_t slotLimit(int64_t stages);
/// Segment counts the sqrt family tries: 2 to n, growing by a quarter.
llvm::SmallVector<int64_t> sqrtSegmentCounts(int64_t stages);

/// strategy=optimal: the least measured memory within one forward pass.
mlir::FailureOr<CheckpointPlan> chooseOptimal(mlir::func::FuncOp func,
                                              const StageChain &chain,
                                              SearchOptions &options);
/// strategy=budget: the least recomputation whose step fits
/// `options.budgetBytes`; an error naming the smallest budget that fits.
mlir::FailureOr<CheckpointSchedule> chooseBudget(mlir::func::FuncOp func,
                                                 const StageChain &chain,
                                                 SearchOptions &options);

} // namespace memopt::checkpoint

#endif // MEMOPT_LIB_TRANSFORMS_CHECKPOINT_CHECKPOINT_H
