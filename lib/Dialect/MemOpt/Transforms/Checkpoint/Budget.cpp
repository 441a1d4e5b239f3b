//===- Budget.cpp - strategy=budget ---------------------------------------===//
//
// The least recomputation that fits the whole step (arguments, constants
// and the planned arena) in a byte budget.
//
// The candidates are a fixed family of schedules, independent of the
// budget:
//
// * the binomial (Revolve) schedule of the whole chain at every slot count
//   from the floor up to holding every cut: the optimum of the stage model
//   at each memory level. The floor is the fewest slots whose schedule
//   recomputes at most kMaxStageRecomputes stages (0 slots, recomputing
//   every stage from the step's inputs, on chains of up to about 250
//   stages);
// * for a growing prefix of the chain (the rest stored), the binomial
//   schedule within one forward pass of that prefix, and sqrt segments;
// * for the whole chain, Chen's segments at counts from 2 to n;
// * nothing.
//
// The binomial schedules' measured bytes grow with their slot count, so a
// galloping search down from the most slots, then a binary search, finds
// the most slots that fit; then the other
// candidates with less recomputation are measured in order of their
// recompute FLOPs, a batch at a time on the context's threads, and the
// first that fits wins. A budget none meets is an error naming the least
// any candidate reaches: that budget is accepted, one byte less refused.
//
//===----------------------------------------------------------------------===//

#include "Checkpoint.h"

#include "memopt/Analysis/MemoryAnalysis.h"
#include "memopt/Support/ByteSize.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace memopt;
using namespace memopt::checkpoint;

namespace {

/// Stage executions a budget schedule may recompute: bounds the size of the
/// rewritten step (and so its compile time) near the memory floor.
constexpr int64_t kMaxStageRecomputes = 32768;

/// Chains longer than this get a slot table of slotLimit() slots only: with
/// a slot per stage the table's dynamic programme is O(n^2 log n), and the
/// family (one binomial candidate per slot count) grows with it.
constexpr int64_t kMaxFullTableStages = 1100;

struct Candidate {
  CheckpointSchedule schedule;
  int64_t flops = 0;
  /// The slot count of a whole-chain binomial schedule, else -1.
  int64_t slots = -1;
};

/// Measures candidates once each, a batch at a time. Planning the arena is
/// most of a measurement, and a candidate whose step exceeds the budget with
/// the least arena any plan can have does not fit whatever the plan: each
/// candidate is first measured with that lower bound, and planned only when
/// the bound fits the budget (or when the refusal needs the least step).
class Measurer {
public:
  Measurer(func::FuncOp func, const StageChain &chain,
           const std::vector<Candidate> &family, SearchOptions &options)
      : func(func), chain(chain), family(family), options(options),
        budget(*options.budgetBytes) {}

  /// `family[indices]`'s steps, in the order given: exact where they fit
  /// the budget, else a lower bound above it (so `<= budget` is exact).
  FailureOr<SmallVector<int64_t>> bytes(ArrayRef<size_t> indices) {
    SmallVector<CheckpointPlan> plans;
    SmallVector<size_t> missing;
    for (size_t i : indices)
      if (!cache.count(i)) {
        missing.push_back(i);
        plans.push_back({family[i].schedule, std::nullopt});
      }
    if (!plans.empty()) {
      FailureOr<SmallVector<Measurement>> bounds =
          measureRange(func, chain, plans, 0, plans.size(), options,
                       /*lowerBound=*/true);
      if (failed(bounds))
        return failure();
      options.candidatesMeasured += plans.size();
      SmallVector<size_t> within;
      for (auto [i, m] : llvm::zip(missing, *bounds)) {
        cache[i] = {m.totalBytes, /*exact=*/false};
        if (m.totalBytes <= budget)
          within.push_back(i);
      }
      if (failed(plan(within)))
        return failure();
    }
    SmallVector<int64_t> out;
    for (size_t i : indices)
      out.push_back(cache[i].bytes);
    return out;
  }
  FailureOr<int64_t> bytes(size_t index) {
    FailureOr<SmallVector<int64_t>> m = bytes(ArrayRef<size_t>(index));
    if (failed(m))
      return failure();
    return (*m)[0];
  }
  /// The least step of the candidates measured so far: bounds in increasing
  /// order, each planned while it is below the least planned step so far.
  FailureOr<int64_t> least() {
    SmallVector<std::pair<int64_t, size_t>> order;
    for (const auto &[i, entry] : cache)
      order.push_back({entry.bytes, i});
    llvm::sort(order);
    std::optional<int64_t> best;
    for (auto [bytes, i] : order) {
      if (best && bytes >= *best)
        break;
      if (!cache[i].exact && failed(plan(ArrayRef<size_t>(i))))
        return failure();
      best = std::min(best.value_or(cache[i].bytes), cache[i].bytes);
    }
    return best.value_or(std::numeric_limits<int64_t>::max());
  }

private:
  /// Plans `indices` (measured with bounds before), on the context's
  /// threads.
  LogicalResult plan(ArrayRef<size_t> indices) {
    if (indices.empty())
      return success();
    SmallVector<CheckpointPlan> plans;
    for (size_t i : indices)
      plans.push_back({family[i].schedule, std::nullopt});
    FailureOr<SmallVector<Measurement>> measured =
        measureRange(func, chain, plans, 0, plans.size(), options);
    if (failed(measured))
      return failure();
    for (auto [i, m] : llvm::zip(indices, *measured))
      cache[i] = {m.totalBytes, /*exact=*/true};
    return success();
  }

  struct Entry {
    int64_t bytes = 0;
    /// Planned; else a lower bound.
    bool exact = false;
  };
  func::FuncOp func;
  const StageChain &chain;
  const std::vector<Candidate> &family;
  SearchOptions &options;
  int64_t budget;
  llvm::DenseMap<size_t, Entry> cache;
};

} // namespace

FailureOr<CheckpointSchedule> checkpoint::chooseBudget(func::FuncOp func,
                                                       const StageChain &chain,
                                                       SearchOptions &options) {
  int64_t n = chain.size();
  int64_t budget = *options.budgetBytes;
  int64_t maxSlots =
      n <= kMaxFullTableStages ? std::max<int64_t>(n - 1, 0) : slotLimit(n);
  RevolveTable table = chain.revolveTable(maxSlots);

  std::vector<Candidate> family;
  ScheduleFlops flopsOf(chain);
  auto add = [&](CheckpointSchedule s, int64_t slots = -1) {
    int64_t flops = flopsOf(s);
    family.push_back({std::move(s), flops, slots});
  };
  add(CheckpointSchedule{"none", {}});
  // The whole chain's binomial schedules, from the floor up.
  for (int64_t slots = 0; slots <= maxSlots; ++slots) {
    // Counted before it is built: with few slots it is O(n^2) actions.
    int64_t actions = 0;
    table.forEachAction(n, slots, [&](const StageAction &) {
      return ++actions <= kMaxStageRecomputes;
    });
    if (actions > kMaxStageRecomputes)
      continue;
    CheckpointSchedule s = table.schedule(n, slots);
    s.name = "binomial";
    add(std::move(s), slots);
  }
  // Prefixes, the rest stored: the binomial schedule within one forward
  // pass of the prefix, and about sqrt(prefix) segments.
  auto binomialWithin = [&](int64_t prefix, int64_t limit) {
    int64_t top = std::min<int64_t>(maxSlots, slotLimit(prefix));
    for (int64_t slots = 0; slots < top; ++slots)
      if (flopsOf.within(table, prefix, slots, limit))
        return table.schedule(prefix, slots);
    return table.schedule(prefix, top);
  };
  int64_t steps = std::min<int64_t>(n, 16);
  for (int64_t k = 1; k < steps; ++k) {
    int64_t prefix = (n * k + steps - 1) / steps;
    if (prefix < 2)
      continue;
    add(binomialWithin(prefix, chain.prefixFlops(prefix)));
    int64_t segments = std::max<int64_t>(
        2, std::llround(std::sqrt(static_cast<double>(prefix))));
    add(sqrtSchedule(balancedBoundaries(chain.weights, prefix, segments),
                     prefix));
  }
  // The whole chain's segments, balanced by saved bytes and by stages.
  SmallVector<int64_t> ones(n, 1);
  for (int64_t segments : sqrtSegmentCounts(n)) {
    add(sqrtSchedule(balancedBoundaries(chain.weights, n, segments), n));
    add(sqrtSchedule(balancedBoundaries(ones, n, segments), n));
  }

  Measurer measurer(func, chain, family, options);
  // 1. Nothing recomputed.
  FailureOr<int64_t> noneBytes = measurer.bytes(0);
  if (failed(noneBytes))
    return failure();
  if (*noneBytes <= budget)
    return std::move(family[0].schedule);

  // 2. The most slots whose binomial schedule fits: galloping down from the
  // most slots (a generous budget is met after a few measurements), then a
  // binary search between the last that did not fit and the first that did.
  SmallVector<size_t> binomials;
  for (size_t i = 0; i < family.size(); ++i)
    if (family[i].slots >= 0)
      binomials.push_back(i);
  std::optional<size_t> fitting;
  if (!binomials.empty()) {
    auto fits = [&](size_t k) -> FailureOr<bool> {
      FailureOr<int64_t> m = measurer.bytes(binomials[k]);
      if (failed(m))
        return failure();
      return *m <= budget;
    };
    size_t hi = binomials.size(); // binomials[hi] does not fit
    size_t step = 1;
    std::optional<size_t> lo;
    while (!lo) {
      size_t k = hi > step ? hi - step : 0;
      FailureOr<bool> ok = fits(k);
      if (failed(ok))
        return failure();
      if (*ok)
        lo = k;
      else if (k == 0)
        break;
      else
        hi = k;
      step *= 2;
    }
    if (lo) {
      while (hi - *lo > 1) {
        size_t mid = *lo + (hi - *lo) / 2;
        FailureOr<bool> ok = fits(mid);
        if (failed(ok))
          return failure();
        (*ok ? *lo : hi) = mid;
      }
      fitting = binomials[*lo];
    }
  }

  // 3. The other candidates with less recomputation, least first; equal
  // FLOPs: fewer actions, then family order.
  int64_t ceiling =
      fitting ? family[*fitting].flops : std::numeric_limits<int64_t>::max();
  SmallVector<size_t> others;
  for (size_t i = 1; i < family.size(); ++i)
    if (family[i].slots < 0 && family[i].flops < ceiling)
      others.push_back(i);
  std::stable_sort(others.begin(), others.end(), [&](size_t a, size_t b) {
    if (family[a].flops != family[b].flops)
      return family[a].flops < family[b].flops;
    return family[a].schedule.actions.size() <
           family[b].schedule.actions.size();
  });
  size_t batch =
      std::max<size_t>(1, func.getContext()->isMultithreadingEnabled()
                              ? func.getContext()->getNumThreads()
                              : 1);
  for (size_t begin = 0; begin < others.size(); begin += batch) {
    ArrayRef<size_t> slice = ArrayRef<size_t>(others).slice(
        begin, std::min(batch, others.size() - begin));
    FailureOr<SmallVector<int64_t>> measured = measurer.bytes(slice);
    if (failed(measured))
      return failure();
    for (auto [i, bytes] : llvm::zip(slice, *measured))
      if (bytes <= budget)
        return std::move(family[i].schedule);
  }
  if (fitting)
    return std::move(family[*fitting].schedule);

  // Nothing fits: every candidate has been measured but the binomial
  // schedules above the floor, whose bytes grow with their slots.
  FailureOr<int64_t> leastOr = measurer.least();
  if (failed(leastOr))
    return failure();
  int64_t least = *leastOr;
  func.emitOpError("cannot fit the training step in a budget of ")
      << formatByteSize(budget)
      << ": the smallest any checkpoint schedule reaches is "
      << formatByteSize(least)
      << " (the planned arena, arguments and constants, each at "
      << MemoryAnalysis::getBufferAlignment(options.alignment)
      << "-byte alignment, as the runtime allocates them); use budget=" << least
      << " or more";
  return failure();
}
