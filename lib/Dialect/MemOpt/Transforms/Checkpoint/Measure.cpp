//===- Measure.cpp - a candidate measured as it will run ------------------===//
//
// `strategy=budget` and `strategy=optimal` compare candidates by what the
// executor will allocate: each is applied to a scratch copy of the function,
// its argument copies recomputed and gradients rechecked as
// `--memopt-partition` will after it, converted in place when the pipeline
// will, scheduled and planned, and the step's bytes
// (MemoryAnalysis::getStepBytes) and recompute FLOPs read off.
//
//===----------------------------------------------------------------------===//

#include "Checkpoint.h"

#include "memopt/Analysis/MemoryAnalysis.h"
#include "memopt/Dialect/MemOpt/Transforms/Transforms.h"

#include "mlir/IR/Threading.h"
#include "llvm/ADT/ScopeExit.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace memopt;
using namespace memopt::checkpoint;

FailureOr<Measurement> checkpoint::measure(func::FuncOp func,
                                           const CheckpointPlan &plan,
                                           const SearchOptions &options,
                                           bool lowerBound) {
  int64_t alignment = options.alignment;
  auto scratch = cast<func::FuncOp>(func->clone());
  llvm::scope_exit cleanup([&] { scratch->erase(); });
  bool recheck = options.measurePartition &&
                 (options.budgetBytes || options.stepRecompute > 0);
  int64_t forwardFlops = recheck ? getForwardFlops(scratch) : 0;
  StageChain chain = StageChain::build(scratch);
  applyPlan(scratch, chain, plan);
  if (options.measurePartition)
    recomputeArgumentCopies(scratch);
  // Gradients rechecked as --memopt-partition will when the budget or
  // step-recompute asks for more (a no-op without loss scaling): under a
  // budget every one, as the smallest step is what decides whether a
  // candidate fits; else within what the step's recomputation leaves of
  // step-recompute forward passes.
  if (recheck) {
    int64_t bound = std::numeric_limits<int64_t>::max();
    if (!options.budgetBytes)
      bound = static_cast<int64_t>(std::min(
          options.stepRecompute * static_cast<double>(forwardFlops) -
              static_cast<double>(MemoryAnalysis(scratch).getRecomputeFlops()),
          9.0e18));
    if (bound > 0)
      recheckGradients(scratch, bound, /*remarks=*/false);
  }
  if (options.measureInPlace)
    convertInPlace(scratch, /*remarks=*/false);
  if (failed(scheduleFunction(scratch)))
    return failure();
  int64_t arena;
  if (lowerBound) {
    arena = getArenaLowerBound(scratch, alignment);
  } else {
    FailureOr<int64_t> planned = planFunctionMemory(scratch, alignment);
    if (failed(planned))
      return failure();
    arena = *planned;
  }
  Measurement m;
  m.totalBytes = MemoryAnalysis::getStepBytes(scratch, arena, alignment);
  m.recomputeFlops = MemoryAnalysis(scratch).getRecomputeFlops();
  return m;
}

FailureOr<SmallVector<Measurement>>
checkpoint::measureRange(func::FuncOp func, ArrayRef<CheckpointPlan> plans,
                         size_t begin, size_t end, const SearchOptions &options,
                         bool lowerBound) {
  SmallVector<Measurement> results(end - begin);
  LogicalResult status = failableParallelForEachN(
      func.getContext(), begin, end, [&](size_t i) -> LogicalResult {
        FailureOr<Measurement> m = measure(func, plans[i], options, lowerBound);
        if (failed(m))
          return failure();
        results[i - begin] = *m;
        return success();
      });
  if (failed(status))
    return failure();
  return results;
}
