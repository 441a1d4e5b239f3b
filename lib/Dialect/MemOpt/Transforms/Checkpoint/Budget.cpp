//===- Budget.cpp - strategy=budget ---------------------------------------===//
//
// The least recomputation that fits the whole step (arguments, constants
// and the planned arena) in a byte budget. A fixed family of schedules,
// independent of the budget, is sorted by recompute FLOPs and measured in
// that order, a batch at a time on the context's threads; the first that
// fits wins, so a smaller budget never gets a larger peak. A budget none
// meets is an error naming the smallest that fits.
//
//===----------------------------------------------------------------------===//

#include "Checkpoint.h"

#include "memopt/Analysis/MemoryAnalysis.h"
#include "memopt/Support/ByteSize.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace memopt;
using namespace memopt::checkpoint;

FailureOr<CheckpointSchedule> checkpoint::chooseBudget(func::FuncOp func,
                                                       const StageChain &chain,
                                                       SearchOptions &options) {
  int64_t n = chain.size();
  int64_t maxSlots = slotLimit(n);
  RevolveTable table = chain.revolveTable(maxSlots);

  // A fixed family of schedules, independent of the budget: nothing; for a
  // growing prefix of the chain (the rest stored), the binomial schedule
  // within one forward pass of that prefix and sqrt segments; for the whole
  // chain, segment counts from 2 to n and fewer slots, up to eight forward
  // passes of recomputation.
  struct Candidate {
    CheckpointSchedule schedule;
    int64_t flops;
  };
  std::vector<Candidate> family;
  auto add = [&](CheckpointSchedule s) {
    int64_t flops = chain.flops(s);
    family.push_back({std::move(s), flops});
  };
  add(CheckpointSchedule{"none", {}});
  // The binomial schedule with the fewest slots within `limit` FLOPs over
  // stages [0, prefix).
  auto binomialWithin = [&](int64_t prefix, int64_t limit) {
    for (int64_t slots = 0; slots < maxSlots; ++slots) {
      CheckpointSchedule s = table.schedule(prefix, slots);
      if (chain.flops(s) <= limit)
        return std::make_pair(s, slots);
    }
    return std::make_pair(table.schedule(prefix, maxSlots), maxSlots);
  };
  int64_t steps = std::min<int64_t>(n, 16);
  for (int64_t k = 1; k <= steps; ++k) {
    int64_t prefix = (n * k + steps - 1) / steps;
    if (prefix < 2)
      continue;
    add(binomialWithin(prefix, chain.prefixFlops(prefix)).first);
    int64_t segments = std::max<int64_t>(
        2, std::llround(std::sqrt(static_cast<double>(prefix))));
    add(sqrtSchedule(balancedBoundaries(chain.weights, prefix, segments),
                     prefix));
  }
  // The whole chain: more or fewer segments, and fewer slots, up to eight
  // forward passes of recomputation.
  SmallVector<int64_t> ones(n, 1);
  for (int64_t segments : sqrtSegmentCounts(n)) {
    add(sqrtSchedule(balancedBoundaries(chain.weights, n, segments), n));
    add(sqrtSchedule(balancedBoundaries(ones, n, segments), n));
  }
  for (int64_t slots = binomialWithin(n, chain.forwardFlops).second;
       slots-- > 0;) {
    CheckpointSchedule s = table.schedule(n, slots);
    if (chain.flops(s) > 8 * chain.forwardFlops)
      break;
    add(std::move(s));
  }
  // Least recompute first; equal FLOPs: fewer actions, then family order.
  std::stable_sort(
      family.begin(), family.end(), [](const Candidate &a, const Candidate &b) {
        if (a.flops != b.flops)
          return a.flops < b.flops;
        return a.schedule.actions.size() < b.schedule.actions.size();
      });

  // In order, a batch at a time (one candidate per thread): the first that
  // fits wins, so the answer is the sequential one.
  SmallVector<CheckpointPlan> plans;
  for (Candidate &candidate : family)
    plans.push_back({candidate.schedule, std::nullopt});
  size_t batch =
      std::max<size_t>(1, func.getContext()->isMultithreadingEnabled()
                              ? func.getContext()->getNumThreads()
                              : 1);
  int64_t least = std::numeric_limits<int64_t>::max();
  for (size_t begin = 0; begin < plans.size(); begin += batch) {
    size_t end = std::min(plans.size(), begin + batch);
    FailureOr<SmallVector<Measurement>> measured = measureRange(
        func, plans, begin, end, options.alignment, options.measureInPlace);
    if (failed(measured))
      return failure();
    options.candidatesMeasured += end - begin;
    for (auto [i, m] : llvm::enumerate(*measured)) {
      if (m.totalBytes <= *options.budgetBytes)
        return std::move(family[begin + i].schedule);
      least = std::min(least, m.totalBytes);
    }
  }
  func.emitOpError("cannot fit the training step in a budget of ")
      << formatByteSize(*options.budgetBytes)
      << ": the smallest any checkpoint schedule reaches is "
      << formatByteSize(least)
      << " (the planned arena, arguments and constants, each at "
      << MemoryAnalysis::getBufferAlignment(options.alignment)
      << "-byte alignment, as the runtime allocates them); use budget=" << least
      << " or more";
  return failure();
}
