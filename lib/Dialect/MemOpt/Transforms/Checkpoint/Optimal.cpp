//===- Optimal.cpp - strategy=optimal -------------------------------------===//
//
// The least memory whose recomputation stays within one forward pass. On a
// chain of ops, the binomial (Revolve) schedule with the fewest checkpoint
// slots, by dynamic programming; on other graphs the exact model competes
// with the binomial schedule and Chen's segments, each measured as it will
// run. solver=dp and solver=ilp force one side.
//
//===----------------------------------------------------------------------===//

#include "Checkpoint.h"

#include "mlir/IR/Threading.h"

#include <cmath>
#include <optional>
#include <tuple>

using namespace mlir;
using namespace memopt;
using namespace memopt::checkpoint;

/// Every cut held, every stage but the last recomputed once from its
/// input right before its backward: the slot-unlimited binomial schedule.
static CheckpointSchedule keepEveryCut(int64_t stages) {
  CheckpointSchedule schedule{"binomial", {}};
  for (int64_t j = stages - 2; j >= 0; --j)
    schedule.actions.push_back({j, -1, /*reverse=*/true,
                                /*produceCut=*/false});
  return schedule;
}

int64_t checkpoint::slotLimit(int64_t stages) {
  return std::min<int64_t>(
      stages, 4 * static_cast<int64_t>(std::ceil(std::sqrt(stages))) + 4);
}

SmallVector<int64_t> checkpoint::sqrtSegmentCounts(int64_t stages) {
  SmallVector<int64_t> counts;
  for (int64_t k = 2; k <= stages; k += (k + 3) / 4)
    counts.push_back(k);
  return counts;
}

CheckpointSchedule checkpoint::binomialSchedule(const StageChain &chain,
                                                ScheduleFlops &flops) {
  int64_t n = chain.size();
  // The fewest checkpoint slots whose binomial schedule recomputes at most
  // one forward pass of FLOPs; the table grows a slot at a time, since the
  // answer is usually far below the limit.
  RevolveTable table = chain.revolveTable(0);
  for (int64_t slots = 0, limit = slotLimit(n); slots <= limit; ++slots) {
    if (slots > table.getMaxSlots())
      table.addSlot();
    // Priced as it is emitted: with few slots the schedule is O(n^2)
    // actions, too many to build only to reject.
    if (flops.within(table, n, slots, chain.forwardFlops)) {
      CheckpointSchedule schedule = table.schedule(n, slots);
      schedule.name = "binomial";
      return schedule;
    }
  }
  // Where reversing a stage itself costs about a stage's forward (a block
  // whose backward reads its insides), one pass only allows holding every
  // cut: each stage recomputed once from its own input.
  return keepEveryCut(n);
}

FailureOr<CheckpointPlan> checkpoint::chooseOptimal(func::FuncOp func,
                                                    const StageChain &chain,
                                                    SearchOptions &options) {
  int64_t n = chain.size();
  SmallVector<CheckpointPlan> candidates;
  ScheduleFlops flops(chain);
  if (options.solver == CheckpointSolver::DP && options.slots >= 0) {
    RevolveTable table =
        chain.revolveTable(std::max<int64_t>(options.slots, 0));
    CheckpointSchedule schedule = table.schedule(n, options.slots);
    schedule.name = "binomial";
    return CheckpointPlan{std::move(schedule), std::nullopt};
  }
  if (options.solver == CheckpointSolver::DP)
    return CheckpointPlan{binomialSchedule(chain, flops), std::nullopt};
  if (options.solver == CheckpointSolver::ILP || !chain.isPlainChain()) {
    FailureOr<std::optional<CheckpointPlan>> exact =
        solveExact(func, chain, options);
    if (failed(exact))
      return failure();
    if (*exact && options.solver == CheckpointSolver::ILP)
      return std::move(**exact);
    if (*exact)
      candidates.push_back(std::move(**exact));
  }
  if (options.solver == CheckpointSolver::ILP)
    return CheckpointPlan{CheckpointSchedule{"none", {}}, std::nullopt};

  // Heuristic schedules within one forward pass: none, the binomial
  // schedule, and Chen's segments at every count the family tries.
  candidates.push_back({CheckpointSchedule{"none", {}}, std::nullopt});
  candidates.push_back({binomialSchedule(chain, flops), std::nullopt});
  // Segment counts within a factor of three of sqrt(n), balanced by saved
  // bytes and by stage count.
  double root = std::sqrt(static_cast<double>(n));
  SmallVector<int64_t> ones(n, 1);
  for (int64_t segments : sqrtSegmentCounts(n)) {
    if (segments < root / 3 || segments > root * 3)
      continue;
    for (ArrayRef<int64_t> weights :
         {ArrayRef<int64_t>(chain.weights), ArrayRef<int64_t>(ones)}) {
      CheckpointSchedule s =
          sqrtSchedule(balancedBoundaries(weights, n, segments), n);
      if (flops(s) <= chain.forwardFlops)
        candidates.push_back({std::move(s), std::nullopt});
    }
  }

  // Least measured memory; equal memory, least recompute; then the earlier.
  // Planning the arena is most of a measurement, and a candidate whose
  // step, with the least arena any plan can have, exceeds the best planned
  // step so far cannot win: the bounds first, on the context's threads, then
  // full measurements in increasing order of bound while one can still win.
  FailureOr<SmallVector<Measurement>> bounds =
      measureRange(func, chain, candidates, 0, candidates.size(), options,
                   /*lowerBound=*/true);
  if (failed(bounds))
    return failure();
  SmallVector<size_t> order(candidates.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  llvm::stable_sort(order, [&](size_t a, size_t b) {
    return (*bounds)[a].totalBytes < (*bounds)[b].totalBytes;
  });
  auto better = [](const Measurement &m, size_t i, const Measurement &b,
                   size_t j) {
    return std::make_tuple(m.totalBytes, m.recomputeFlops, i) <
           std::make_tuple(b.totalBytes, b.recomputeFlops, j);
  };
  // As many full measurements at a time as the context has threads: the
  // next candidates in order of bound that can still win when the batch
  // starts. One that the batch's earlier results would have ruled out is
  // measured for nothing but cannot change the choice (its step is at
  // least its bound, above the chosen one's), so the choice is the one
  // measuring them one at a time gives.
  MLIRContext *context = func.getContext();
  size_t width =
      context->isMultithreadingEnabled()
          ? std::max<size_t>(1, context->getThreadPool().getMaxConcurrency())
          : 1;
  std::optional<std::pair<Measurement, size_t>> chosen;
  for (size_t next = 0; next < order.size();) {
    SmallVector<size_t> batch;
    // The first alone: every later one is measured against its step (the
    // cutoff), and most candidates' bounds already exceed it.
    size_t batchWidth = chosen ? width : 1;
    for (size_t k = next; k < order.size() && batch.size() < batchWidth; ++k) {
      if (chosen && (*bounds)[order[k]].totalBytes > chosen->first.totalBytes)
        break;
      batch.push_back(order[k]);
    }
    if (batch.empty())
      break;
    SmallVector<Measurement> measured(batch.size());
    // A candidate whose step would exceed the best one's cannot win: its
    // planning stops once that is proved.
    std::optional<int64_t> cutoff;
    if (chosen)
      cutoff = chosen->first.totalBytes;
    if (failed(failableParallelForEachN(
            context, 0, batch.size(), [&](size_t j) -> LogicalResult {
              FailureOr<Measurement> m =
                  measure(func, chain, candidates[batch[j]], options,
                          /*lowerBound=*/false, cutoff);
              if (failed(m))
                return failure();
              measured[j] = *m;
              return success();
            })))
      return failure();
    for (auto [i, m] : llvm::zip_equal(batch, measured)) {
      ++options.candidatesMeasured;
      if (!chosen || better(m, i, chosen->first, chosen->second))
        chosen = {m, i};
    }
    next += batch.size();
  }
  size_t best = chosen ? chosen->second : 0;
  return std::move(candidates[best]);
}
