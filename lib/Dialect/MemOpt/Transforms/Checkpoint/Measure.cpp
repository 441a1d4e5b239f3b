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

FailureOr<Measurement>
checkpoint::measure(func::FuncOp func, const StageChain &chain,
                    const CheckpointPlan &plan, const SearchOptions &options,
                    bool lowerBound, std::optional<int64_t> cutoff) {
  int64_t alignment = options.alignment;
  IRMapping mapping;
  auto scratch = cast<func::FuncOp>(func->clone(mapping));
  llvm::scope_exit cleanup([&] { scratch->erase(); });
  applyPlan(scratch, chain.remapped(mapping), plan);
  if (options.measurePartition)
    applyPartitionEstimate(scratch, options.budgetBytes.has_value(),
                           options.stepRecompute);
  if (options.measureInPlace)
    convertInPlace(scratch, /*remarks=*/false);
  int64_t arena;
  if (lowerBound) {
    // From the scheduler's tables: the schedule is not applied, since
    // nothing else reads the order (the step's other bytes and its FLOPs
    // do not depend on it).
    FailureOr<int64_t> bound = scheduledArenaLowerBound(scratch, alignment);
    if (failed(bound))
      return failure();
    arena = *bound;
  } else {
    if (failed(scheduleFunction(scratch)))
      return failure();
    // getStepBytes(a) >= a + getStepBytes(0) (the arena comes first, then
    // the same buffers, padded no less), so an arena over `limit` makes a
    // step over the cutoff.
    uint64_t limit = std::numeric_limits<uint64_t>::max();
    if (cutoff)
      limit = static_cast<uint64_t>(std::max<int64_t>(
          0, *cutoff - MemoryAnalysis::getStepBytes(scratch, 0, alignment)));
    FailureOr<std::optional<int64_t>> planned =
        planArenaBytes(scratch, alignment, limit);
    if (failed(planned))
      return failure();
    if (!*planned) {
      Measurement m;
      m.totalBytes = *cutoff + 1;
      m.recomputeFlops = MemoryAnalysis::sumRecomputeFlops(scratch);
      return m;
    }
    arena = **planned;
  }
  Measurement m;
  m.totalBytes = MemoryAnalysis::getStepBytes(scratch, arena, alignment);
  m.recomputeFlops = MemoryAnalysis::sumRecomputeFlops(scratch);
  return m;
}

FailureOr<SmallVector<Measurement>> checkpoint::measureRange(
    func::FuncOp func, const StageChain &chain, ArrayRef<CheckpointPlan> plans,
    size_t begin, size_t end, const SearchOptions &options, bool lowerBound) {
  SmallVector<Measurement> results(end - begin);
  LogicalResult status = failableParallelForEachN(
      func.getContext(), begin, end, [&](size_t i) -> LogicalResult {
        FailureOr<Measurement> m =
            measure(func, chain, plans[i], options, lowerBound);
        if (failed(m))
          return failure();
        results[i - begin] = *m;
        return success();
      });
  if (failed(status))
    return failure();
  return results;
}
