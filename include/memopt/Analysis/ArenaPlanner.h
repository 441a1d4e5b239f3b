//===- ArenaPlanner.h - static offsets for one memory arena -----*- C++ -*-===//
//
// Assigns every buffer of a training step a byte offset inside one arena,
// fixed at compile time, so that buffers alive at the same time never share
// bytes. This is the offline dynamic storage allocation problem (NP-hard in
// general), the setting of XLA's heap simulator and TFLite's arena planner:
// the planner runs several cheap greedy heuristics and keeps the smallest
// arena, `lowerBound` says how far that can be from optimal, and
// `verifyArenaPlan` re-checks any plan with code that shares nothing with the
// placement, so a planner bug cannot hide behind its own bookkeeping.
//
// Only LLVM Support/ADT: the planner is pure arithmetic on lifetimes and is
// meant to be reused by passes, tools and benchmarks alike.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_ANALYSIS_ARENAPLANNER_H
#define MEMOPT_ANALYSIS_ARENAPLANNER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace llvm {
class ThreadPoolInterface;
} // namespace llvm

namespace memopt {

/// One buffer to place. Two buffers conflict (must not share bytes) iff
/// their lifetimes [start, end] intersect; the bounds are inclusive op
/// indices, so a buffer freed by op 3 and one allocated by op 3 conflict: the
/// op reads the first while it writes the second.
struct BufferLifetime {
  /// The caller's name for the buffer, only used in diagnostics; plans are
  /// indexed by position in the input, so ids need not be unique.
  uint64_t id = 0;
  /// Bytes. Zero is tolerated (such a buffer occupies nothing) although
  /// callers normally never ask for one.
  uint64_t size = 0;
  int64_t start = 0;
  int64_t end = 0;
};

/// The greedy orders the planner knows. Each takes the buffers one at a time
/// in its order and places each against the already placed buffers it
/// conflicts with; none of them moves a buffer once placed.
enum class PlacementHeuristic {
  /// TFLite's "greedy by size": largest first, into the smallest gap that
  /// fits. Big buffers dominate the arena, so fixing them first and packing
  /// small ones into their holes is usually best.
  SizeBestFit,
  /// Linear-scan order (by lifetime start), lowest gap that fits: what a
  /// runtime caching allocator would do, and best when lifetimes are short
  /// and sizes similar.
  StartFirstFit,
  /// Largest size × lifetime length first, smallest fitting gap: a buffer
  /// that is both big and long-lived constrains the most others.
  AreaBestFit,
  /// Longest lifetime first, smallest fitting gap: long-lived buffers (e.g.
  /// forward activations kept for the backward pass) pinned first at the
  /// bottom leave the short-lived ones a stack-like region above them.
  LongestLifetimeBestFit,
};

/// A short stable name for reports and diagnostics, e.g. "size-best-fit".
llvm::StringRef stringifyPlacementHeuristic(PlacementHeuristic heuristic);

/// Every heuristic, in the order `planArena` tries them by default; on a tie
/// the earlier one wins.
llvm::ArrayRef<PlacementHeuristic> allPlacementHeuristics();

/// How a heuristic finds the gap for each buffer. Every choice gives the
/// same offsets; they differ only in speed, so this is for tests and
/// benchmarks that pin one down.
enum class GapSearch {
  /// Per buffer, the time index unless the union of the bytes it conflicts
  /// with is fragmented enough that the offset scan is cheaper.
  Adaptive,
  /// Only the time index: per buffer, the union of the bytes the buffers it
  /// conflicts with occupy, as O(log T) merged range sets of a segment tree
  /// over time, searched for gaps by leapfrogging. Fast where placed buffers
  /// pack tightly (few ranges, however many buffers).
  TimeIndex,
  /// Only the offset scan: every placed buffer in offset order, in blocks
  /// whose summaries skip those unrelated to the query. Fast where the
  /// union is fragmented into many small gaps.
  OffsetScan,
};

struct PlannerOptions {
  /// Heuristics to try, in this order; empty means all of
  /// `allPlacementHeuristics()`. Restricting it is for tests and for callers
  /// that need a specific, reproducible layout policy.
  llvm::SmallVector<PlacementHeuristic, 4> heuristics;
  /// Good enough: the first heuristic (in order) whose arena is at most
  /// `lowerBound` × (1 + tolerance) wins, even if a later one would be a
  /// little smaller, since none can be smaller by more than that fraction of
  /// the bound. Otherwise the smallest arena wins (the first on ties). With
  /// 0, the first to reach the bound. In [0, 1). The default, 1e-4, gives up
  /// at most 0.01% of the arena; on bench/compile_time.py's 100k-op GPT-2
  /// (first heuristic within 0.007% of the bound) it saves three of four
  /// near-complete attempts.
  double tolerance = 1e-4;
  /// Run every heuristic to the end (the plan is the same: see
  /// `tolerance`). By default a heuristic is abandoned as soon as it can no
  /// longer win (its arena has grown to the best one found so far, or an
  /// earlier one finished good enough), and none is tried after an earlier
  /// one finished good enough, which saves most of the work on large inputs
  /// but leaves only partial sizes in `attempts`. Reports comparing
  /// heuristics set this.
  bool exhaustive = false;
  /// If set, the heuristics run concurrently as tasks of this pool (say, the
  /// MLIRContext's), each still cutting itself short once an attempt that
  /// finished first proves it cannot win. The plan is the same as without a
  /// pool; only where abandoned attempts stopped may vary from run to run.
  llvm::ThreadPoolInterface *threadPool = nullptr;
  /// See `GapSearch`; the plan does not depend on it.
  GapSearch gapSearch = GapSearch::Adaptive;
  /// For callers that only need the arena when it is at most this many
  /// bytes (a candidate measured against the best so far): attempts stop as
  /// soon as their arena exceeds it, and when the plan the options would
  /// give without it is larger, `ArenaPlan::exceedsLimit` says so instead
  /// (no offsets). Within the limit, the plan is the one without it. A
  /// limit below the good-enough arena (see `tolerance`) is ignored: there
  /// an earlier attempt over the limit could be the one that wins.
  uint64_t arenaLimit = std::numeric_limits<uint64_t>::max();
};

/// What one heuristic achieved.
struct PlacementAttempt {
  PlacementHeuristic heuristic;
  /// The arena the heuristic's layout needs (rounded up to the alignment);
  /// if `abandoned`, what it was proved to need at least when it stopped
  /// (its partial arena, or the look-ahead bound: ArenaPlanner.cpp), which
  /// is already no smaller than the winner's, or over the limit.
  uint64_t arenaSize;
  /// Stopped early: a finished heuristic, or the limit, had already proved
  /// it could not win.
  bool abandoned;
};

struct ArenaPlan {
  /// offsets[i] is the byte offset of buffers[i] (input order).
  std::vector<uint64_t> offsets;
  /// max(offset + size) rounded up to `alignment`. Rounded because every
  /// buffer's slot effectively ends at the next aligned address (nothing else
  /// can start inside its padding), which is also what makes `lowerBound` a
  /// true lower bound; with alignment 1 this is exactly max(offset + size).
  uint64_t arenaSize = 0;
  /// The alignment every offset is a multiple of (as requested).
  uint64_t alignment = 1;
  /// `lowerBound` of the buffers: no plan's arena is smaller.
  uint64_t lowerBound = 0;
  /// The plan would exceed `PlannerOptions::arenaLimit`: no offsets, no
  /// heuristic, and `arenaSize` 0.
  bool exceedsLimit = false;
  /// The heuristic whose layout this is.
  PlacementHeuristic heuristic = PlacementHeuristic::SizeBestFit;
  /// Every heuristic tried, in order, so reports can show how much the
  /// choice mattered. Heuristics left untried because an earlier one finished
  /// good enough (see `PlannerOptions::tolerance`) are absent.
  llvm::SmallVector<PlacementAttempt, 4> attempts;
};

/// Places `buffers` with each heuristic in `options` and returns the
/// first good enough arena, else the smallest (the first tried on ties; see
/// `PlannerOptions::tolerance`, and `PlannerOptions::exhaustive` for how
/// losing heuristics are cut short). `alignment` must be a non-zero
/// power of two, every start ≤ end, and the sum of the sizes rounded up to
/// `alignment` (the worst case arena) below 2^63, which leaves the
/// placement's gap arithmetic a bit to spare. Deterministic: equal inputs
/// give equal plans (with a thread pool, abandoned attempts' sizes aside).
///
/// Each heuristic costs O(n log n) for its order and, per buffer, the
/// cheaper of two searches (see `GapSearch`): merging O(log T) unions of
/// placed bytes, in steps on the order of their ranges, or a vectorised
/// lifetime test over the blocks of placed buffers that per-block summaries
/// cannot skip (O(n) worst case). On bench/compile_time.py's largest graphs
/// (67k–135k buffers) size-best-fit takes 0.09–0.16 s where the unions stay
/// compact (ResNet, chain) and 0.6–0.9 s where they fragment (GPT-2, an
/// unrolled LSTM), where keeping both structures costs up to 1.5x the scan
/// alone.
ArenaPlan planArena(llvm::ArrayRef<BufferLifetime> buffers, uint64_t alignment,
                    const PlannerOptions &options = {});

/// The max-live lower bound on any valid plan's `arenaSize`: the largest,
/// over op indices, total of (size rounded up to `alignment`) of the buffers
/// live at that op. Any arena must hold all of them at once, and aligned
/// disjoint slots each take at least their rounded size. O(n log n).
uint64_t lowerBound(llvm::ArrayRef<BufferLifetime> buffers, uint64_t alignment);

/// Checks `plan` against `buffers` without trusting the planner: one offset
/// per buffer, `plan.alignment` a power of two and every offset a multiple of
/// it, offset + size within `plan.arenaSize` (without overflow), and no two
/// buffers with intersecting lifetimes sharing a byte. Returns the first
/// violation found, naming the buffers by index and id. Callers that do not
/// trust the plan's recorded alignment compare it with the one they asked
/// for. A sweep over lifetimes with an offset-ordered set of the live
/// buffers: O(n log n), cheap enough to run on every plan.
llvm::Error verifyArenaPlan(llvm::ArrayRef<BufferLifetime> buffers,
                            const ArenaPlan &plan);

} // namespace memopt

#endif // MEMOPT_ANALYSIS_ARENAPLANNER_H
