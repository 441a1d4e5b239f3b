//===- CheckpointSchedule.cpp - which stages to recompute, and when -------===//
//
// The square-root segments of Chen et al. and the binomial (Revolve) dynamic
// programme, as lists of stage actions; see CheckpointSchedule.h.
//
// The programme, over a chain of uniform stages:
//
// with A the cost of advancing a stage (recomputing its output cut) and R
// that of reversing it (recomputing what its backward reads besides cuts):
//
//   inner(L, s): reverse L stages from a held version of their input cut,
//                with s more cut versions allowed at once.
//     inner(1, s) = R                          recompute the stage, reverse
//     inner(L, 0) = L·R + A·L(L-1)/2           re-advance from the input
//     inner(L, s) = min(inner(L, s-1),
//                       min_m m·A + inner(L-m, s-1) + inner(m, s))
//                   advance m stages, hold the cut, reverse the right part,
//                   then the left part
//   top(L, s):   the same while the original forward pass is running, so
//                advancing is free and the last stage is stored.
//     top(1, s)  = 0
//     top(L, 0)  = inner(L-1, 0)
//     top(L, s)  = min(top(L, s-1), min_m top(L-m, s-1) + inner(m, s))
//
// This is Griewank's binomial recurrence; filling it costs O(s·L²), which
// for the thousand-stage chains of the model suite is well under a second.
//
//===----------------------------------------------------------------------===//

#include "memopt/Analysis/CheckpointSchedule.h"

#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <limits>
#include <tuple>

using namespace memopt;

std::string memopt::verifyCheckpointSchedule(const CheckpointSchedule &schedule,
                                             int64_t numStages) {
  std::vector<bool> reversed(
      static_cast<size_t>(std::max<int64_t>(numStages, 0)), false);
  for (size_t i = 0; i < schedule.actions.size(); ++i) {
    const StageAction &a = schedule.actions[i];
    std::string where = "action " + std::to_string(i) + ": ";
    if (a.stage < 0 || a.stage >= numStages)
      return where + "stage " + std::to_string(a.stage) + " out of range";
    if (!a.reverse && !a.produceCut)
      return where + "does nothing";
    if (a.produceCut && a.stage == numStages - 1)
      return where + "the last stage has no output cut";
    if (a.source >= static_cast<int64_t>(i))
      return where + "source does not precede it";
    if (a.source >= 0) {
      const StageAction &src = schedule.actions[static_cast<size_t>(a.source)];
      if (!src.produceCut || src.stage != a.stage - 1)
        return where + "source does not produce the stage's input cut";
    }
    if (a.reverse) {
      if (reversed[static_cast<size_t>(a.stage)])
        return where + "stage " + std::to_string(a.stage) + " reversed twice";
      reversed[static_cast<size_t>(a.stage)] = true;
    }
  }
  return {};
}

CheckpointSchedule memopt::sqrtSchedule(llvm::ArrayRef<int64_t> boundaries,
                                        int64_t prefix) {
  CheckpointSchedule schedule;
  schedule.name = "sqrt";
  // Segments [start, end] ending at each boundary, the latest first.
  for (size_t k = boundaries.size(); k-- > 0;) {
    int64_t end = boundaries[k];
    int64_t start = k == 0 ? 0 : boundaries[k - 1] + 1;
    if (end >= prefix)
      continue;
    int64_t previous = -1;
    for (int64_t stage = start; stage <= end; ++stage) {
      StageAction action;
      action.stage = stage;
      action.source = previous;
      action.reverse = true;
      action.produceCut = stage < end;
      previous = static_cast<int64_t>(schedule.actions.size());
      schedule.actions.push_back(action);
    }
  }
  return schedule;
}

llvm::SmallVector<int64_t>
memopt::balancedBoundaries(llvm::ArrayRef<int64_t> weights, int64_t prefix,
                           int64_t segments) {
  llvm::SmallVector<int64_t> boundaries;
  prefix = std::min<int64_t>(prefix, static_cast<int64_t>(weights.size()));
  if (segments <= 1 || prefix <= 1)
    return boundaries;
  // Weights of 0 everywhere still split by stage count.
  int64_t total = 0;
  for (int64_t j = 0; j < prefix; ++j)
    total += std::max<int64_t>(weights[static_cast<size_t>(j)], 0) + 1;
  int64_t running = 0;
  for (int64_t j = 0; j + 1 < prefix; ++j) {
    running += std::max<int64_t>(weights[static_cast<size_t>(j)], 0) + 1;
    int64_t next = static_cast<int64_t>(boundaries.size()) + 1;
    // running/total >= next/segments, in integers.
    if (static_cast<__int128>(running) * segments >=
            static_cast<__int128>(total) * next &&
        next < segments)
      boundaries.push_back(j);
  }
  return boundaries;
}

//===----------------------------------------------------------------------===//
// RevolveTable
//===----------------------------------------------------------------------===//

namespace {
constexpr int64_t kInfinite = std::numeric_limits<int64_t>::max() / 4;
} // namespace

RevolveTable::RevolveTable(int64_t stages, int64_t slots, int64_t advance,
                           int64_t reverse, bool exhaustive)
    : maxStages(std::max<int64_t>(stages, 1)), maxSlots(-1),
      advanceCost(std::max<int64_t>(advance, 0)),
      reverseCost(std::max<int64_t>(reverse, 0)), exhaustive(exhaustive) {
  for (int64_t s = 0, e = std::max<int64_t>(slots, 0); s <= e; ++s)
    addSlot();
}

void RevolveTable::addSlot() {
  // The first m in [1, l) with the least cost(m). Both recurrences split l
  // stages into m and l - m; with every stage reversed exactly once, cost(m)
  // is l × reverseCost plus advanceCost times Griewank's minimal
  // recomputation counts, which are piecewise linear in the stage count
  // with growing slopes, so cost(m) is convex in m and its first minimum is
  // the first m whose successor costs no less: a bisection instead of a
  // scan, which made the table O(slots × n^2). `exhaustive` scans, for
  // cross-checking.
  auto firstMinimum = [&](int64_t l, auto cost) {
    if (exhaustive) {
      int64_t first = 1;
      for (int64_t m = 2; m < l; ++m)
        if (cost(m) < cost(first))
          first = m;
      return first;
    }
    int64_t lo = 1, hi = l - 1;
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      if (cost(mid + 1) >= cost(mid))
        hi = mid;
      else
        lo = mid + 1;
    }
    return lo;
  };
  // The least of `fewerSlots` (choice 0: use one slot fewer) and the best
  // split's cost (choice: that split), the split winning only when strictly
  // cheaper.
  auto bestOf = [&](int64_t l, int64_t fewerSlots,
                    auto cost) -> std::pair<int64_t, int32_t> {
    int64_t m = firstMinimum(l, cost);
    int64_t split = cost(m);
    if (split < fewerSlots)
      return {split, static_cast<int32_t>(m)};
    return {fewerSlots, 0};
  };
  // Row s reads rows s and s - 1 only.
  int64_t s = ++maxSlots;
  size_t size = static_cast<size_t>((maxSlots + 1) * (maxStages + 1));
  top.resize(size, kInfinite);
  inner.resize(size, kInfinite);
  topChoice.resize(size, 0);
  innerChoice.resize(size, 0);
  innerAt(0, s) = 0;
  topAt(0, s) = 0;
  for (int64_t l = 1; l <= maxStages; ++l) {
    size_t at = static_cast<size_t>(s * (maxStages + 1) + l);
    // inner
    if (l == 1) {
      innerAt(l, s) = reverseCost;
    } else if (s == 0) {
      innerAt(l, s) = l * reverseCost + advanceCost * (l * (l - 1) / 2);
    } else {
      std::tie(innerAt(l, s), innerChoice[at]) =
          bestOf(l, innerAt(l, s - 1), [&](int64_t m) {
            return m * advanceCost + innerAt(l - m, s - 1) + innerAt(m, s);
          });
    }
    // top
    if (l == 1) {
      topAt(l, s) = 0;
    } else if (s == 0) {
      topAt(l, s) = innerAt(l - 1, 0);
    } else {
      std::tie(topAt(l, s), topChoice[at]) =
          bestOf(l, topAt(l, s - 1), [&](int64_t m) {
            return topAt(l - m, s - 1) + innerAt(m, s);
          });
    }
  }
}

int64_t &RevolveTable::topAt(int64_t stages, int64_t slots) {
  return top[static_cast<size_t>(slots * (maxStages + 1) + stages)];
}
int64_t &RevolveTable::innerAt(int64_t stages, int64_t slots) {
  return inner[static_cast<size_t>(slots * (maxStages + 1) + stages)];
}
int64_t RevolveTable::topValue(int64_t stages, int64_t slots) const {
  return top[static_cast<size_t>(slots * (maxStages + 1) + stages)];
}
int64_t RevolveTable::innerValue(int64_t stages, int64_t slots) const {
  return inner[static_cast<size_t>(slots * (maxStages + 1) + stages)];
}
int64_t RevolveTable::topSplit(int64_t stages, int64_t slots) const {
  return topChoice[static_cast<size_t>(slots * (maxStages + 1) + stages)];
}
int64_t RevolveTable::innerSplit(int64_t stages, int64_t slots) const {
  return innerChoice[static_cast<size_t>(slots * (maxStages + 1) + stages)];
}

int64_t RevolveTable::cost(int64_t stages, int64_t slots) const {
  if (stages < 0 || stages > maxStages)
    return kInfinite;
  return topValue(stages, std::clamp<int64_t>(slots, 0, maxSlots));
}

int64_t RevolveTable::minSlotsWithin(int64_t stages, int64_t limit) const {
  for (int64_t s = 0; s <= maxSlots; ++s)
    if (cost(stages, s) <= limit)
      return s;
  return -1;
}

/// Where the emitted actions go; an action's index (its number in emission
/// order) is what later actions name as their source.
struct RevolveTable::Emitter {
  llvm::function_ref<bool(const StageAction &)> visit;
  int64_t count = 0;
  bool stopped = false;
  /// Emits `action` and returns its index.
  int64_t emit(const StageAction &action) {
    if (!stopped && !visit(action))
      stopped = true;
    return count++;
  }
};

CheckpointSchedule RevolveTable::schedule(int64_t prefix, int64_t slots) const {
  CheckpointSchedule result;
  result.name = "revolve";
  forEachAction(prefix, slots, [&](const StageAction &action) {
    result.actions.push_back(action);
    return true;
  });
  return result;
}

void RevolveTable::forEachAction(
    int64_t prefix, int64_t slots,
    llvm::function_ref<bool(const StageAction &)> visit) const {
  Emitter out{visit};
  prefix = std::clamp<int64_t>(prefix, 0, maxStages);
  emitTop(0, prefix, std::clamp<int64_t>(slots, 0, maxSlots), out);
}

void RevolveTable::emitTop(int64_t first, int64_t stages, int64_t slots,
                           Emitter &out) const {
  if (stages <= 1 || out.stopped)
    return; // the stage ran last in the forward pass: stored
  if (slots == 0) {
    emitInner(first, stages - 1, 0, -1, out);
    return;
  }
  int64_t m = topSplit(stages, slots);
  if (m == 0)
    return emitTop(first, stages, slots - 1, out);
  // The original cut after stage first+m-1 is held; the right part first.
  emitTop(first + m, stages - m, slots - 1, out);
  emitInner(first, m, slots, -1, out);
}

void RevolveTable::emitInner(int64_t first, int64_t stages, int64_t slots,
                             int64_t source, Emitter &out) const {
  if (stages <= 0 || out.stopped)
    return;
  auto advance = [&](int64_t from, int64_t count, int64_t src) {
    for (int64_t k = 0; k < count && !out.stopped; ++k) {
      StageAction a;
      a.stage = from + k;
      a.source = src;
      a.produceCut = true;
      src = out.emit(a);
    }
    return src;
  };
  auto reverse = [&](int64_t stage, int64_t src) {
    StageAction a;
    a.stage = stage;
    a.source = src;
    a.reverse = true;
    out.emit(a);
  };
  if (stages == 1)
    return reverse(first, source);
  if (slots == 0) {
    for (int64_t k = stages - 1; k >= 0 && !out.stopped; --k)
      reverse(first + k, advance(first, k, source));
    return;
  }
  int64_t m = innerSplit(stages, slots);
  if (m == 0)
    return emitInner(first, stages, slots - 1, source, out);
  int64_t held = advance(first, m, source);
  emitInner(first + m, stages - m, slots - 1, held, out);
  emitInner(first, m, slots, source, out);
}
