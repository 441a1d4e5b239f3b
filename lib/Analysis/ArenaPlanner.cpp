//===- ArenaPlanner.cpp - greedy arena placement and its checker ----------===//
//
// Every heuristic is the same loop with a different order: take the next
// buffer, find the gaps between the bytes of the already placed buffers whose
// lifetime intersects it, and take the first or the smallest that fits. Two
// structures answer that, and give the same offsets:
//
// - A time index: a segment tree over op ranks whose nodes keep the union of
//   the bytes of the buffers stored there, merged into ranges as buffers are
//   added. A query merges O(log T) of these unions by leapfrogging. Where
//   placed buffers pack side by side (forward activations kept for the
//   backward pass, the common case) a union is a handful of ranges however
//   many buffers it covers, and a query costs microseconds.
// - An offset scan: the placed buffers in offset order in a blocked list (a
//   B+-tree leaf chain without the tree), scanned linearly over contiguous
//   memory. Per-block summaries let a query skip a block none of whose slots
//   conflicts, or one that is a solid obstacle, without touching its slots.
//   It wins where the unions are fragmented into many small gaps (many small
//   buffers whose lifetimes nest, as an unrolled LSTM's).
//
// Each query takes whichever the cost bounds say is cheaper.
//
// The heuristics race: each one stops as soon as its arena has grown, or is
// bound to grow (where its largest buffers still to place can go no lower),
// past what a finished one achieved, and none starts or goes on after an
// earlier one has reached the max-live lower bound, so on large inputs most
// losers cost a fraction of a full run.
//
// The checker at the end is deliberately a different algorithm (a lifetime
// sweep over an ordered map of live offsets) sharing no code with the
// placement.
//
//===----------------------------------------------------------------------===//

#include "memopt/Analysis/ArenaPlanner.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Allocator.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <queue>

using namespace memopt;

namespace {

/// A buffer as the planner sees it: its size already rounded up to the
/// alignment, and its lifetime both in op indices (for the orders that
/// measure lifetimes) and in dense 32-bit ranks of those indices (for the
/// conflict test, which only compares them: 32-bit lanes let the compiler
/// test four placed buffers per SSE2 instruction, 64-bit compares would need
/// SSE4.2). Because every offset is aligned, no other buffer can start in a
/// buffer's padding, so planning with rounded sizes loses nothing and the gap
/// arithmetic never has to round.
struct Item {
  uint64_t size;
  int64_t start;
  int64_t end;
  int32_t firstRank;
  int32_t lastRank;
};

/// Placed buffers in increasing offset order, as a list of bounded blocks:
/// an insertion moves at most one block's worth of slots instead of up to n
/// (a flat sorted array made insertion, not the scan, the bottleneck), and
/// scanning walks contiguous memory (a linked list, as TFLite uses, would
/// chase a pointer per slot). Each block is a structure of arrays so the
/// lifetime test over a whole block vectorises, and offsets are only loaded
/// for the slots that pass it.
///
/// Each block also keeps a summary that lets a query skip it without looking
/// at its slots: the range of its slots' first and last ranks (none of them
/// conflicts with a lifetime that ends before the least first rank or starts
/// after the greatest last rank; all of them conflict with one that meets
/// every slot's lifetime), the highest end, the lowest begin, and the largest
/// gap between its own slots. When every slot of a block conflicts and that
/// largest gap is too small, the block is one solid obstacle for the query.
/// Blocks whose slots mix lifetimes (one offset reused over time) are still
/// scanned slot by slot; on bench/compile_time.py's largest graphs the
/// summaries skip 42% (ResNet, no checkpointing) to 89% (chain) of the blocks
/// size-best-fit's queries meet.
class OffsetOrderedSlots {
public:
  /// Small enough that a block's slots often share a fate (all or none
  /// conflicting), large enough that an insertion's memmove and a block's
  /// conflict mask stay in L1 and summaries are few next to the slots
  /// (64, 256 and 512 were each slower somewhere on bench/compile_time.py's
  /// largest graphs).
  static constexpr unsigned kBlockCapacity = 128;

  struct Block {
    unsigned count = 0;
    /// Slot j occupies bytes [begin[j], end[j]) during op ranks
    /// [first[j], last[j]]; begin is non-decreasing. Zeroed so that the scan
    /// may read a whole group of eight past `count` (it masks those out).
    int32_t first[kBlockCapacity] = {};
    int32_t last[kBlockCapacity] = {};
    uint64_t begin[kBlockCapacity] = {};
    uint64_t end[kBlockCapacity] = {};
  };

  /// Block b's summary (see the class comment), as parallel arrays so that
  /// a query's pass over them stays in cache.
  struct Summaries {
    std::vector<int32_t> minFirst, maxFirst, minLast, maxLast;
    std::vector<uint64_t> lowestBegin, highestEnd, largestGap;

    /// What block b is to a query for `size` bytes live during ranks
    /// [first, last]: no slot conflicts (Unrelated); every slot conflicts
    /// and no gap between them fits (Solid: one obstacle from its lowest
    /// begin to its highest end); else its slots must be scanned (Mixed).
    enum class Relation { Unrelated, Solid, Mixed };
    Relation relation(size_t b, uint64_t size, int32_t first,
                      int32_t last) const {
      if (minFirst[b] > last || maxLast[b] < first)
        return Relation::Unrelated;
      if (maxFirst[b] <= last && minLast[b] >= first && largestGap[b] < size)
        return Relation::Solid;
      return Relation::Mixed;
    }
  };

  llvm::ArrayRef<std::unique_ptr<Block>> blocks() const { return blockList; }
  const Summaries &summaries() const { return summary; }

  void insert(uint64_t begin, uint64_t end, int32_t first, int32_t last) {
    // The first block whose last slot starts after `begin`, else the last
    // (only the very first insertion sees an empty block).
    if (blockList.empty()) {
      blockList.push_back(std::make_unique<Block>());
      insertSummary(0);
    }
    auto blockIt = llvm::partition_point(
        blockList, [&](const std::unique_ptr<Block> &block) {
          return block->count && block->begin[block->count - 1] <= begin;
        });
    if (blockIt == blockList.end())
      blockIt = std::prev(blockList.end());
    if ((*blockIt)->count == kBlockCapacity) {
      // Move the upper half into a new block right after this one.
      auto upper = std::make_unique<Block>();
      Block &lower = **blockIt;
      unsigned half = kBlockCapacity / 2;
      upper->count = kBlockCapacity - half;
      std::copy_n(lower.first + half, upper->count, upper->first);
      std::copy_n(lower.last + half, upper->count, upper->last);
      std::copy_n(lower.begin + half, upper->count, upper->begin);
      std::copy_n(lower.end + half, upper->count, upper->end);
      lower.count = half;
      bool goesUp = lower.begin[half - 1] <= begin;
      size_t lowerIndex = blockIt - blockList.begin();
      blockIt = blockList.insert(std::next(blockIt), std::move(upper));
      insertSummary(lowerIndex + 1);
      summarize(lowerIndex);
      summarize(lowerIndex + 1);
      if (!goesUp)
        --blockIt;
    }
    Block &block = **blockIt;
    unsigned pos =
        std::upper_bound(block.begin, block.begin + block.count, begin) -
        block.begin;
    unsigned tail = block.count - pos;
    std::copy_backward(block.first + pos, block.first + pos + tail,
                       block.first + pos + tail + 1);
    std::copy_backward(block.last + pos, block.last + pos + tail,
                       block.last + pos + tail + 1);
    std::copy_backward(block.begin + pos, block.begin + pos + tail,
                       block.begin + pos + tail + 1);
    std::copy_backward(block.end + pos, block.end + pos + tail,
                       block.end + pos + tail + 1);
    block.first[pos] = first;
    block.last[pos] = last;
    block.begin[pos] = begin;
    block.end[pos] = end;
    ++block.count;
    summarize(blockIt - blockList.begin());
  }

private:
  void insertSummary(size_t b) {
    summary.minFirst.insert(summary.minFirst.begin() + b, 0);
    summary.maxFirst.insert(summary.maxFirst.begin() + b, 0);
    summary.minLast.insert(summary.minLast.begin() + b, 0);
    summary.maxLast.insert(summary.maxLast.begin() + b, 0);
    summary.lowestBegin.insert(summary.lowestBegin.begin() + b, 0);
    summary.highestEnd.insert(summary.highestEnd.begin() + b, 0);
    summary.largestGap.insert(summary.largestGap.begin() + b, 0);
  }

  /// Recomputes block b's summary from its slots (a non-empty block).
  void summarize(size_t b) {
    const Block &block = *blockList[b];
    int32_t minFirst = block.first[0], maxFirst = block.first[0];
    int32_t minLast = block.last[0], maxLast = block.last[0];
    uint64_t highestEnd = block.end[0], largestGap = 0;
    for (unsigned j = 1; j < block.count; ++j) {
      minFirst = std::min(minFirst, block.first[j]);
      maxFirst = std::max(maxFirst, block.first[j]);
      minLast = std::min(minLast, block.last[j]);
      maxLast = std::max(maxLast, block.last[j]);
      if (block.begin[j] > highestEnd)
        largestGap = std::max(largestGap, block.begin[j] - highestEnd);
      highestEnd = std::max(highestEnd, block.end[j]);
    }
    summary.minFirst[b] = minFirst;
    summary.maxFirst[b] = maxFirst;
    summary.minLast[b] = minLast;
    summary.maxLast[b] = maxLast;
    summary.lowestBegin[b] = block.begin[0];
    summary.highestEnd[b] = highestEnd;
    summary.largestGap[b] = largestGap;
  }

  /// Contains no empty block once the first slot is in.
  std::vector<std::unique_ptr<Block>> blockList;
  Summaries summary;
};

/// Larger than any gap: offsets and arena sizes stay below 2^63.
constexpr uint64_t kNoGap = uint64_t(1) << 63;

/// The offset for a buffer of `size` bytes live during op ranks [first,
/// last], given the placed slots: the lowest gap between conflicting slots
/// that fits (first fit) or the smallest one (best fit, lowest on ties), else
/// just above the highest conflicting slot.
template <bool BestFit>
uint64_t findOffset(const OffsetOrderedSlots &placed, uint64_t size,
                    int32_t first, int32_t last) {
  using Block = OffsetOrderedSlots::Block;
  // Everything below `cursor` is taken by some conflicting slot seen so far
  // (slots come in offset order, so the free space below a slot's begin and
  // above `cursor` is a gap).
  uint64_t cursor = 0;
  uint64_t bestOffset = 0;
  bool found = false;
  // A gap [cursor, begin) is taken iff it fits and beats the best so far:
  // cursor + size <= begin < cursor + bestGap, i.e. one unsigned compare,
  // begin - (cursor + size) < bestGap - size, because when begin is below
  // cursor + size the subtraction wraps to at least 2^63 (offsets and sizes
  // stay below 2^63), and `slack` never exceeds 2^63. First fit takes any gap
  // that fits: its bestGap stays "none", 2^63.
  uint64_t slack = kNoGap - size;
  // Considers the gap [cursor, begin): true when it is the answer (first
  // fit takes any gap that fits, best fit stops at an exact one), else
  // remembers it if it fits and beats the best so far. Rarely anything but
  // false, and then without a branch taken.
  auto isAnswer = [&](uint64_t begin) {
    if (LLVM_LIKELY(begin - (cursor + size) >= slack))
      return false;
    if (!BestFit || begin - cursor == size)
      return true;
    slack = begin - cursor - size;
    bestOffset = cursor;
    found = true;
    return false;
  };
  // Per slot, all ones where its lifetime intersects [first, last], else 0;
  // padded to a whole number of groups of eight.
  alignas(16) int32_t conflicts[OffsetOrderedSlots::kBlockCapacity + 8];
  const OffsetOrderedSlots::Summaries &summary = placed.summaries();
  llvm::ArrayRef<std::unique_ptr<Block>> blocks = placed.blocks();
  using Relation = OffsetOrderedSlots::Summaries::Relation;
  for (size_t b = 0, e = blocks.size(); b != e; ++b) {
    Relation relation = summary.relation(b, size, first, last);
    // No slot of the block conflicts: it neither raises the cursor nor
    // bounds a gap.
    if (relation == Relation::Unrelated)
      continue;
    // Every slot conflicts and none of the gaps between them fits (with the
    // cursor below, each is at most the block's own): only the gap below
    // its lowest slot is a candidate, and the cursor ends at its top.
    if (relation == Relation::Solid) {
      uint64_t begin = summary.lowestBegin[b];
      if (isAnswer(begin))
        return cursor;
      cursor = std::max(cursor, summary.highestEnd[b]);
      continue;
    }
    const Block &block = *blocks[b];
    unsigned count = block.count;
    // Branch-free so that it vectorises; most slots are rejected here.
    for (unsigned j = 0; j < count; ++j)
      conflicts[j] =
          -int32_t((block.last[j] >= first) & (block.first[j] <= last));
    std::fill_n(conflicts + count, 8, 0);
    for (unsigned base = 0; base < count; base += 8) {
      // Skip eight unrelated slots at once: the common case when lifetimes
      // are short.
      uint64_t words[4];
      std::memcpy(words, conflicts + base, sizeof(words));
      if (!(words[0] | words[1] | words[2] | words[3]))
        continue;
      // Otherwise branch-free over all eight: when lifetimes are long (as
      // forward activations') most slots conflict, and a branch on each
      // would mispredict constantly. Masking a slot that does not conflict
      // to [0, 0) makes it inert: it cannot raise the cursor, and its begin,
      // 0, is below cursor + size. Only a new best gap, rare, branches.
      for (unsigned j = base; j != base + 8; ++j) {
        uint64_t mask = uint64_t(int64_t(conflicts[j]));
        uint64_t begin = block.begin[j] & mask;
        uint64_t end = block.end[j] & mask;
        if (LLVM_UNLIKELY(isAnswer(begin)))
          return cursor;
        cursor = std::max(cursor, end);
      }
    }
  }
  return found ? bestOffset : cursor;
}

/// Byte ranges [begin, end) in increasing order, disjoint and not touching
/// (touching ranges are merged: a gap of zero bytes fits nothing).
///
/// The storage comes from the time index's bump allocator: a set that
/// outgrows it moves to twice the room and leaves the old storage behind
/// (at most as much again as the sets hold), and the index releases
/// everything at once. A 100k-buffer plan has hundreds of thousands of
/// sets, and allocating and freeing them one by one was a fifth of its time.
class RangeSet {
public:
  using Range = std::pair<uint64_t, uint64_t>;

  const Range *begin() const { return data; }
  const Range *end() const { return data + count; }
  size_t size() const { return count; }
  bool empty() const { return count == 0; }
  const Range &operator[](size_t i) const { return data[i]; }

  /// Adds [first, last), merging it with every range it meets.
  void add(uint64_t first, uint64_t last, llvm::BumpPtrAllocator &allocator) {
    // The first range that ends at or after `first`: ranges are disjoint,
    // so their ends are sorted too.
    Range *lo = std::lower_bound(data, data + count, first,
                                 [](const Range &range, uint64_t bound) {
                                   return range.second < bound;
                                 });
    Range *hi = lo;
    while (hi != data + count && hi->first <= last) {
      first = std::min(first, hi->first);
      last = std::max(last, hi->second);
      ++hi;
    }
    if (lo != hi) {
      *lo = {first, last};
      std::copy(hi, data + count, lo + 1);
      count -= static_cast<uint32_t>(hi - lo - 1);
      return;
    }
    size_t at = lo - data;
    if (count == capacity) {
      capacity = std::max<uint32_t>(2, 2 * capacity);
      Range *grown = allocator.Allocate<Range>(capacity);
      std::copy(data, data + count, grown);
      data = grown;
    }
    std::copy_backward(data + at, data + count, data + count + 1);
    data[at] = {first, last};
    ++count;
  }

private:
  Range *data = nullptr;
  uint32_t count = 0, capacity = 0;
};

/// The bytes the placed buffers occupy, indexed by time: a segment tree over
/// op ranks whose node for ranks [lo, hi] keeps `own`, the union of the
/// buffers whose lifetime covers [lo, hi] but not its parent's range (the
/// canonical decomposition of the lifetime), and `sub`, the union of `own`
/// over its subtree. The bytes a query lifetime conflicts with are then the
/// union of `sub` of its own canonical nodes and `own` of their ancestors:
/// O(log T) sets, each merged as buffers are added, so where placed buffers
/// pack tightly a set holds a few ranges however many buffers it covers.
class TimeOffsetIndex {
public:
  explicit TimeOffsetIndex(int32_t ranks) {
    // Ranks fit in int32 (planArena's precondition), so the last leaf does
    // too; the count itself may reach 2^31.
    while (leaves < static_cast<uint64_t>(ranks))
      leaves *= 2;
    own.resize(2 * leaves);
    sub.resize(2 * leaves);
  }

  /// Records bytes [begin, end) as taken during ranks [first, last].
  void insert(int32_t first, int32_t last, uint64_t begin, uint64_t end) {
    insertAt(1, 0, static_cast<int32_t>(leaves - 1), first, last, begin, end);
  }

  /// Appends to `sets` non-empty sets whose union is the bytes of every
  /// placed buffer whose lifetime meets [first, last].
  void collect(int32_t first, int32_t last,
               llvm::SmallVectorImpl<const RangeSet *> &sets) const {
    collectAt(1, 0, static_cast<int32_t>(leaves - 1), first, last, sets);
  }

private:
  void insertAt(size_t node, int32_t lo, int32_t hi, int32_t first,
                int32_t last, uint64_t begin, uint64_t end) {
    sub[node].add(begin, end, allocator);
    if (first <= lo && hi <= last) {
      own[node].add(begin, end, allocator);
      return;
    }
    int32_t mid = lo + (hi - lo) / 2;
    if (first <= mid)
      insertAt(2 * node, lo, mid, first, last, begin, end);
    if (last > mid)
      insertAt(2 * node + 1, mid + 1, hi, first, last, begin, end);
  }

  void collectAt(size_t node, int32_t lo, int32_t hi, int32_t first,
                 int32_t last,
                 llvm::SmallVectorImpl<const RangeSet *> &sets) const {
    if (sub[node].empty())
      return;
    if (first <= lo && hi <= last) {
      sets.push_back(&sub[node]);
      return;
    }
    if (!own[node].empty())
      sets.push_back(&own[node]);
    int32_t mid = lo + (hi - lo) / 2;
    if (first <= mid)
      collectAt(2 * node, lo, mid, first, last, sets);
    if (last > mid)
      collectAt(2 * node + 1, mid + 1, hi, first, last, sets);
  }

  uint64_t leaves = 1;
  std::vector<RangeSet> own, sub;
  /// The sets' storage.
  llvm::BumpPtrAllocator allocator;
};

/// The offset `findOffset` would return, computed from the union of `sets`
/// (see `TimeOffsetIndex::collect`) instead of from the conflicting slots.
/// The union's gaps are
/// found by leapfrogging: raise a position x past every range that covers
/// it, or that leaves too little room above x for the buffer, until no set
/// does; [x, the lowest next range) is then a gap that fits. A set's ranges
/// that end below x are skipped by galloping, so a set whose ranges lie
/// under another set's wide range costs O(log) instead of one step each.
/// Gaps too small are never gaps of the union that fit either, so the gaps
/// visited, in increasing offset order, are exactly the fitting gaps
/// between conflicting slots, and the answer is the same.
template <bool BestFit>
uint64_t leapForOffset(llvm::ArrayRef<const RangeSet *> sets, uint64_t size) {
  unsigned k = sets.size();
  // next[s]: the first range of set s that ends after x.
  llvm::SmallVector<uint32_t, 32> next(k, 0);
  uint64_t x = 0, bestOffset = 0;
  bool found = false;
  // As in findOffset: a gap [x, begin) is taken iff begin - (x + size) <
  // slack.
  uint64_t slack = kNoGap - size;
  // Moves next[s] up to the first range ending after x; then raises x to
  // that range's end if the range covers x or starts less than `size`
  // bytes above it, and says whether it did.
  auto raise = [&](unsigned s) {
    const RangeSet &set = *sets[s];
    uint32_t i = next[s], n = set.size();
    if (i < n && set[i].second <= x) {
      // Gallop to a bound, then bisect below it.
      uint32_t step = 1, lo = i + 1;
      while (lo + step < n && set[lo + step].second <= x) {
        lo += step;
        step *= 2;
      }
      uint32_t hi = std::min(n, lo + step);
      next[s] = i = std::partition_point(
                        set.begin() + lo, set.begin() + hi,
                        [&](const auto &range) { return range.second <= x; }) -
                    set.begin();
    }
    if (i == n || (set[i].first > x && set[i].first - x >= size))
      return false;
    x = set[i].second;
    return true;
  };
  while (true) {
    // Until k sets in a row leave x where it is.
    unsigned unmoved = 0;
    for (unsigned s = 0; unmoved < k; s = s + 1 == k ? 0 : s + 1) {
      if (raise(s))
        unmoved = 0;
      else
        ++unmoved;
    }
    uint64_t gapEnd = kNoGap;
    for (unsigned s = 0; s < k; ++s)
      if (next[s] < sets[s]->size())
        gapEnd = std::min(gapEnd, (*sets[s])[next[s]].first);
    // Above every set: x is the top of the union.
    if (gapEnd == kNoGap)
      return found ? bestOffset : x;
    if (gapEnd - (x + size) < slack) {
      if (!BestFit || gapEnd - x == size)
        return x;
      slack = gapEnd - x - size;
      bestOffset = x;
      found = true;
    }
    x = gapEnd;
  }
}

/// Whether `findOffset` would spend at least `steps` on [first, last]: the
/// summary pass over the blocks plus every slot of each block it would
/// scan. Stops counting once it gets there, so a query the leapfrog wins
/// does not pay for a full pass over the summaries.
bool scanCostReaches(const OffsetOrderedSlots &placed, uint64_t size,
                     int32_t first, int32_t last, uint64_t steps) {
  const OffsetOrderedSlots::Summaries &summary = placed.summaries();
  size_t blocks = placed.blocks().size();
  uint64_t cost = blocks / 8;
  for (size_t b = 0; b != blocks && cost < steps; ++b)
    if (summary.relation(b, size, first, last) ==
        OffsetOrderedSlots::Summaries::Relation::Mixed)
      cost += placed.blocks()[b]->count;
  return cost >= steps;
}

/// Places `items` one at a time in `order` into `offsets` (indexed like
/// `items`), setting `arenaEnd` to max(offset + rounded size), and returns
/// true. Returns false, with `arenaEnd` a lower bound of the final arena, as
/// soon as `hopeless(atLeast)` says a layout whose final arena is at least
/// `atLeast` can no longer win, since the rest of the work would be wasted.
/// That is asked with the partial arena whenever it grows and, because a
/// concurrent attempt finishing can also make it true, every
/// `kHopelessPeriod` buffers.
///
/// It is also asked, every `kProbePeriod` buffers, with a bound that looks
/// ahead: the lowest offset at which a buffer not yet placed fits among
/// those placed is at most where it ends up (placing more only takes room
/// away), so the final arena is at least that offset plus its size. Taken
/// over the largest buffers still to place, it proves a losing layout
/// hopeless long before its partial arena does where the small buffers go
/// first and the large ones are left to fit into what remains (an unrolled
/// LSTM's longest-lifetime order: a fifth of the way through instead of
/// three fifths). Only asked when something could make the attempt
/// hopeless: a finished attempt to lose to, or a limit.
template <bool BestFit, typename HopelessFn>
bool placeInOrder(llvm::ArrayRef<Item> items, llvm::ArrayRef<uint32_t> order,
                  GapSearch search, HopelessFn hopeless,
                  std::vector<uint64_t> &offsets, uint64_t &arenaEnd) {
  constexpr unsigned kHopelessPeriod = 64;
  constexpr unsigned kProbePeriod = 1024;
  constexpr unsigned kProbedBuffers = 64;
  // Leapfrogging takes on the order of (ranges + 1) × sets steps (each
  // range raises x at most once, and between raises each set is asked at
  // most once), and where that is this small it beats even the scan's pass over
  // its summaries.
  constexpr uint64_t kSmallLeap = 512;
  offsets.assign(items.size(), 0);
  int32_t ranks = 1;
  for (const Item &item : items)
    ranks = std::max(ranks, item.lastRank + 1);
  bool useIndex = search != GapSearch::OffsetScan;
  bool useSlots = search != GapSearch::TimeIndex;
  std::optional<TimeOffsetIndex> index;
  if (useIndex)
    index.emplace(ranks);
  OffsetOrderedSlots placed;
  llvm::SmallVector<const RangeSet *, 32> sets;
  // The offset `item` takes among the buffers placed so far: the best fit
  // when `Best`, else the lowest.
  auto gapFor = [&](const Item &item, auto best) -> uint64_t {
    constexpr bool Best = decltype(best)::value;
    if (useIndex) {
      sets.clear();
      index->collect(item.firstRank, item.lastRank, sets);
      uint64_t ranges = 0;
      for (const RangeSet *set : sets)
        ranges += set->size();
      // Per step, leapfrogging costs about what the scan spends on two
      // slots (measured on bench/compile_time.py's largest graphs), and the
      // bound is loose, so it is taken where the bound is below the scan's
      // cost: never much slower, and tens of times faster where the union
      // is a few ranges (forward activations packed side by side).
      uint64_t steps = (ranges + 1) * sets.size();
      if (!useSlots || steps <= kSmallLeap ||
          scanCostReaches(placed, item.size, item.firstRank, item.lastRank,
                          steps))
        return leapForOffset<Best>(sets, item.size);
    }
    return findOffset<Best>(placed, item.size, item.firstRank, item.lastRank);
  };
  // For the look-ahead bound, made at the first probe: the buffers by
  // decreasing size, whether each is placed (the first `marked` of `order`
  // are marked so far), and the first in size order that may not be.
  std::vector<uint32_t> bySize;
  std::vector<char> isPlaced;
  size_t marked = 0, firstUnplaced = 0;
  // Whether the look-ahead bound proves the attempt hopeless once the first
  // `placedCount` buffers of `order` are placed.
  auto lookAheadHopeless = [&](size_t placedCount) {
    if (bySize.empty()) {
      bySize.assign(order.begin(), order.end());
      llvm::sort(bySize, [&](uint32_t a, uint32_t b) {
        return items[a].size != items[b].size ? items[a].size > items[b].size
                                              : a < b;
      });
      isPlaced.assign(items.size(), 0);
    }
    for (; marked != placedCount; ++marked)
      isPlaced[order[marked]] = 1;
    while (firstUnplaced != bySize.size() && isPlaced[bySize[firstUnplaced]])
      ++firstUnplaced;
    unsigned probed = 0;
    for (size_t k = firstUnplaced;
         k != bySize.size() && probed != kProbedBuffers; ++k) {
      const Item &item = items[bySize[k]];
      if (isPlaced[bySize[k]] || item.size == 0)
        continue;
      ++probed;
      uint64_t atLeast = gapFor(item, std::false_type()) + item.size;
      if (atLeast > arenaEnd && hopeless(atLeast)) {
        // What the attempt reports: its final arena is at least this.
        arenaEnd = atLeast;
        return true;
      }
    }
    return false;
  };
  arenaEnd = 0;
  unsigned sinceAsked = 0, sinceProbed = 0;
  for (size_t placedCount = 1; placedCount <= order.size(); ++placedCount) {
    uint32_t position = order[placedCount - 1];
    const Item &item = items[position];
    // An empty buffer occupies nothing, so offset 0 is always valid and
    // recording it would only slow down later scans.
    if (item.size == 0)
      continue;
    uint64_t offset = gapFor(item, std::bool_constant<BestFit>());
    offsets[position] = offset;
    uint64_t newEnd = offset + item.size;
    if (newEnd > arenaEnd || ++sinceAsked == kHopelessPeriod) {
      arenaEnd = std::max(arenaEnd, newEnd);
      sinceAsked = 0;
      if (hopeless(arenaEnd))
        return false;
    }
    if (useIndex)
      index->insert(item.firstRank, item.lastRank, offset, newEnd);
    if (useSlots)
      placed.insert(offset, newEnd, item.firstRank, item.lastRank);
    // Whether any bound could make the attempt hopeless: the largest
    // possible one does iff anything can.
    if (++sinceProbed == kProbePeriod) {
      sinceProbed = 0;
      if (hopeless(kNoGap) && lookAheadHopeless(placedCount))
        return false;
    }
  }
  return true;
}

uint64_t lifetimeLength(const Item &item) {
  // start ≤ end is a precondition; the length of a lifetime spanning the
  // whole int64 range still fits in uint64.
  return static_cast<uint64_t>(item.end) - static_cast<uint64_t>(item.start) +
         1;
}

/// The order `heuristic` places buffers in. Every comparison ends on the
/// index so that std::sort yields the same order on every platform.
std::vector<uint32_t> placementOrder(llvm::ArrayRef<Item> items,
                                     PlacementHeuristic heuristic) {
  std::vector<uint32_t> order(items.size());
  for (uint32_t i = 0, e = items.size(); i != e; ++i)
    order[i] = i;
  auto bySizeDesc = [&](uint32_t a, uint32_t b) {
    const Item &x = items[a], &y = items[b];
    if (x.size != y.size)
      return x.size > y.size;
    if (lifetimeLength(x) != lifetimeLength(y))
      return lifetimeLength(x) > lifetimeLength(y);
    if (x.start != y.start)
      return x.start < y.start;
    return a < b;
  };
  // Each order sorted with its own comparator (through std::function,
  // the call per comparison was a twentieth of a heuristic's time).
  auto sortBy = [&](auto less) { std::sort(order.begin(), order.end(), less); };
  switch (heuristic) {
  case PlacementHeuristic::SizeBestFit:
    sortBy(bySizeDesc);
    break;
  case PlacementHeuristic::StartFirstFit:
    sortBy([&](uint32_t a, uint32_t b) {
      if (items[a].start != items[b].start)
        return items[a].start < items[b].start;
      return bySizeDesc(a, b);
    });
    break;
  case PlacementHeuristic::AreaBestFit:
    sortBy([&](uint32_t a, uint32_t b) {
      // Saturating: size × length can exceed 64 bits for absurd inputs, and
      // a saturated area still orders them sensibly among themselves by the
      // tie-break.
      uint64_t areaA =
          llvm::SaturatingMultiply(items[a].size, lifetimeLength(items[a]));
      uint64_t areaB =
          llvm::SaturatingMultiply(items[b].size, lifetimeLength(items[b]));
      if (areaA != areaB)
        return areaA > areaB;
      return bySizeDesc(a, b);
    });
    break;
  case PlacementHeuristic::LongestLifetimeBestFit:
    sortBy([&](uint32_t a, uint32_t b) {
      uint64_t lengthA = lifetimeLength(items[a]);
      uint64_t lengthB = lifetimeLength(items[b]);
      if (lengthA != lengthB)
        return lengthA > lengthB;
      return bySizeDesc(a, b);
    });
    break;
  }
  return order;
}

bool isBestFit(PlacementHeuristic heuristic) {
  return heuristic != PlacementHeuristic::StartFirstFit;
}

/// The heuristics of one `planArena` call, run one after the other or
/// concurrently. The winner is a function of the attempts' final arenas
/// alone: the first attempt (in the caller's order) whose arena is within
/// the tolerance of the lower bound ("good enough": no other heuristic can
/// save more than that fraction), else the first of the smallest. Every
/// attempt may stop as soon as it provably cannot be that winner. The rules
/// below only ever compare against attempts that have finished, so they
/// never stop the true winner, whatever the timing: an attempt is stopped
/// when an earlier one finished good enough, or no larger than its partial
/// arena, or when a later one finished strictly smaller than its partial
/// arena and that partial arena is no longer good enough.
class HeuristicRace {
public:
  HeuristicRace(llvm::ArrayRef<PlacementHeuristic> heuristics, uint64_t bound,
                uint64_t goodEnough, bool exhaustive, GapSearch search,
                uint64_t limit)
      : heuristics(heuristics), goodEnough(goodEnough), bound(bound),
        limit(limit), exhaustive(exhaustive), search(search),
        finishedSizes(heuristics.size()), attempts(heuristics.size()),
        offsets(heuristics.size()) {
    for (std::atomic<uint64_t> &size : finishedSizes)
      size.store(kUnfinished, std::memory_order_relaxed);
  }

  /// Runs attempt `i` (thread-safe for distinct `i`).
  void run(llvm::ArrayRef<Item> items, size_t i) {
    // An earlier attempt that finished good enough wins whatever this one
    // does.
    if (!exhaustive && earlierGoodEnough(i))
      return;
    PlacementHeuristic heuristic = heuristics[i];
    std::vector<uint32_t> order = placementOrder(items, heuristic);
    // The final arena is at least the partial one and at least the lower
    // bound.
    auto hopeless = [&](uint64_t partial) {
      uint64_t atLeast = std::max(partial, bound);
      return atLeast > limit || (!exhaustive && cannotWin(i, atLeast));
    };
    uint64_t arenaEnd = 0;
    bool finished = isBestFit(heuristic)
                        ? placeInOrder<true>(items, order, search, hopeless,
                                             offsets[i], arenaEnd)
                        : placeInOrder<false>(items, order, search, hopeless,
                                              offsets[i], arenaEnd);
    attempts[i] = PlacementAttempt{heuristic, arenaEnd, !finished};
    if (finished)
      finishedSizes[i].store(arenaEnd, std::memory_order_relaxed);
  }

  /// The result, once every `run` has returned.
  ArenaPlan takePlan(uint64_t alignment) {
    ArenaPlan plan;
    plan.alignment = alignment;
    std::optional<size_t> winner;
    bool decided = false;
    for (size_t i = 0, e = heuristics.size(); i != e; ++i) {
      if (!attempts[i])
        continue;
      plan.attempts.push_back(*attempts[i]);
      if (decided || attempts[i]->abandoned)
        continue;
      if (!winner || attempts[i]->arenaSize < attempts[*winner]->arenaSize)
        winner = i;
      // Attempts before this one are not good enough (or were stopped
      // because an earlier one was), so the first good enough one wins.
      if (attempts[i]->arenaSize <= goodEnough) {
        winner = i;
        decided = true;
      }
    }
    if (winner) {
      plan.heuristic = heuristics[*winner];
      plan.arenaSize = attempts[*winner]->arenaSize;
      plan.offsets = std::move(offsets[*winner]);
    } else {
      // Every attempt stopped over the limit (no finished attempt stops
      // the others without winning itself).
      plan.exceedsLimit = true;
    }
    return plan;
  }

private:
  static constexpr uint64_t kUnfinished = std::numeric_limits<uint64_t>::max();

  bool earlierGoodEnough(size_t i) const {
    for (size_t j = 0; j < i; ++j)
      if (finishedSizes[j].load(std::memory_order_relaxed) <= goodEnough)
        return true;
    return false;
  }

  /// Attempt `i`'s final arena will be at least `partial`, so it loses to
  /// any earlier finished attempt no larger (ties go to the earlier one) or
  /// good enough, and, once `partial` is no longer good enough itself, to
  /// any later one strictly smaller.
  bool cannotWin(size_t i, uint64_t partial) const {
    for (size_t j = 0, e = finishedSizes.size(); j != e; ++j) {
      uint64_t size = finishedSizes[j].load(std::memory_order_relaxed);
      if (size == kUnfinished)
        continue;
      if (j < i ? size <= partial || size <= goodEnough
                : (j > i && size < partial && partial > goodEnough))
        return true;
    }
    return false;
  }

  llvm::ArrayRef<PlacementHeuristic> heuristics;
  /// The largest arena that is good enough: `lowerBound` of the input
  /// (no attempt can end below it) plus the tolerance.
  uint64_t goodEnough;
  uint64_t bound;
  /// Attempts stop once their arena exceeds it (PlannerOptions::arenaLimit;
  /// at least `goodEnough`, so the first good enough attempt never does).
  uint64_t limit;
  bool exhaustive;
  GapSearch search;
  /// The final arena of each finished attempt, else kUnfinished: the only
  /// state shared between concurrent attempts.
  std::vector<std::atomic<uint64_t>> finishedSizes;
  std::vector<std::optional<PlacementAttempt>> attempts;
  std::vector<std::vector<uint64_t>> offsets;
};

} // namespace

llvm::StringRef memopt::stringifyPlacementHeuristic(PlacementHeuristic h) {
  switch (h) {
  case PlacementHeuristic::SizeBestFit:
    return "size-best-fit";
  case PlacementHeuristic::StartFirstFit:
    return "start-first-fit";
  case PlacementHeuristic::AreaBestFit:
    return "area-best-fit";
  case PlacementHeuristic::LongestLifetimeBestFit:
    return "longest-lifetime-best-fit";
  }
  llvm_unreachable("unknown placement heuristic");
}

llvm::ArrayRef<PlacementHeuristic> memopt::allPlacementHeuristics() {
  static const PlacementHeuristic all[] = {
      PlacementHeuristic::SizeBestFit,
      PlacementHeuristic::StartFirstFit,
      PlacementHeuristic::AreaBestFit,
      PlacementHeuristic::LongestLifetimeBestFit,
  };
  return all;
}

/// The least op index of `buffers` and how many indices past it the last
/// one lies, when that span is not many more indices than there are
/// buffers (a step's op positions): then tables over the span replace
/// sorting the lifetimes' ends. std::nullopt otherwise, or without buffers.
static std::optional<std::pair<int64_t, uint64_t>>
denseIndexSpan(llvm::ArrayRef<BufferLifetime> buffers) {
  if (buffers.empty())
    return std::nullopt;
  int64_t lo = buffers.front().start, hi = buffers.front().end;
  for (const BufferLifetime &buffer : buffers) {
    lo = std::min(lo, buffer.start);
    hi = std::max(hi, buffer.end);
  }
  uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  if (span >= 4 * buffers.size() + 1024)
    return std::nullopt;
  return std::make_pair(lo, span);
}

ArenaPlan memopt::planArena(llvm::ArrayRef<BufferLifetime> buffers,
                            uint64_t alignment, const PlannerOptions &options) {
  assert(llvm::isPowerOf2_64(alignment) && "alignment must be a power of two");
  // Two op ranks per buffer must fit in int32.
  assert(buffers.size() <= std::numeric_limits<int32_t>::max() / 2 &&
         "too many buffers for 32-bit op ranks");
  // Dense ranks of the op indices that occur, so lifetimes fit in 32 bits
  // whatever the op numbering: counted in a table over a dense span, else
  // by sorting them.
  assert(llvm::all_of(buffers,
                      [](const BufferLifetime &buffer) {
                        return buffer.start <= buffer.end;
                      }) &&
         "lifetime ends before it starts");
  std::vector<int64_t> ops;
  std::vector<int32_t> rankAt;
  int64_t lo = 0;
  if (auto dense = denseIndexSpan(buffers)) {
    lo = dense->first;
    rankAt.assign(dense->second + 1, 0);
    for (const BufferLifetime &buffer : buffers)
      rankAt[buffer.start - lo] = rankAt[buffer.end - lo] = 1;
    // Occurs (1) or not (0), then the number of occurring indices below.
    int32_t below = 0;
    for (int32_t &r : rankAt) {
      int32_t occurs = r;
      r = below;
      below += occurs;
    }
  } else {
    ops.reserve(2 * buffers.size());
    for (const BufferLifetime &buffer : buffers) {
      ops.push_back(buffer.start);
      ops.push_back(buffer.end);
    }
    llvm::sort(ops);
    ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
  }
  auto rank = [&](int64_t op) -> int32_t {
    if (!rankAt.empty())
      return rankAt[op - lo];
    return llvm::lower_bound(ops, op) - ops.begin();
  };
  std::vector<Item> items;
  items.reserve(buffers.size());
  uint64_t worstArena = 0;
  for (const BufferLifetime &buffer : buffers) {
    items.push_back({llvm::alignTo(buffer.size, alignment), buffer.start,
                     buffer.end, rank(buffer.start), rank(buffer.end)});
    worstArena = llvm::SaturatingAdd(worstArena, items.back().size);
  }
  assert(worstArena < kNoGap && "buffers too large to plan: sum of sizes "
                                "must stay below 2^63");
  (void)worstArena;

  llvm::ArrayRef<PlacementHeuristic> heuristics = options.heuristics;
  if (heuristics.empty())
    heuristics = allPlacementHeuristics();

  // Once a layout reaches the max-live bound no other can be smaller; within
  // the tolerance above it, none can be smaller by more than that.
  uint64_t bound = lowerBound(buffers, alignment);
  assert(options.tolerance >= 0 && options.tolerance < 1 &&
         "tolerance must be in [0, 1)");
  uint64_t slack =
      static_cast<uint64_t>(static_cast<double>(bound) * options.tolerance);
  uint64_t goodEnough = bound + slack;
  uint64_t limit = options.arenaLimit >= goodEnough
                       ? options.arenaLimit
                       : std::numeric_limits<uint64_t>::max();
  HeuristicRace race(heuristics, bound, goodEnough, options.exhaustive,
                     options.gapSearch, limit);
  if (options.threadPool && heuristics.size() > 1) {
    // The first heuristic alone, then the others concurrently: the first
    // usually wins, often good enough to end the race, and the others are
    // cut short by its arena from their first buffer. Racing it against the
    // second instead slowed it by half on two cores (they share caches and
    // memory bandwidth) while the second ran to the end for nothing.
    race.run(items, 0);
    llvm::ThreadPoolTaskGroup group(*options.threadPool);
    for (size_t i = 1, e = heuristics.size(); i != e; ++i)
      group.async([&race, &items, i] { race.run(items, i); });
    group.wait();
  } else {
    for (size_t i = 0, e = heuristics.size(); i != e; ++i)
      race.run(items, i);
  }
  ArenaPlan plan = race.takePlan(alignment);
  plan.lowerBound = bound;
  return plan;
}

uint64_t memopt::lowerBound(llvm::ArrayRef<BufferLifetime> buffers,
                            uint64_t alignment) {
  assert(llvm::isPowerOf2_64(alignment) && "alignment must be a power of two");
  // Lifetimes are op positions in a step, so the ops usually span not many
  // more indices than there are buffers: then the bytes that start and end
  // at each index, summed in index order, give the live bytes without the
  // sort below (which was most of a bound on a 10k-op step).
  if (auto dense = denseIndexSpan(buffers)) {
    auto [lo, span] = *dense;
    // delta[i]: bytes starting at index lo + i minus those that ended at
    // lo + i - 1 (lifetimes are inclusive). Unsigned arithmetic wraps, and
    // the running total is exact at every index.
    std::vector<uint64_t> delta(span + 2, 0);
    for (const BufferLifetime &buffer : buffers) {
      uint64_t bytes = llvm::alignTo(buffer.size, alignment);
      delta[buffer.start - lo] += bytes;
      delta[buffer.end - lo + 1] -= bytes;
    }
    uint64_t live = 0, peak = 0;
    for (uint64_t d : delta) {
      live += d;
      peak = std::max(peak, live);
    }
    return peak;
  }
  // (op, isEnd, bytes): at equal ops the starts come first, so the running
  // total after the last start at an op counts exactly the buffers live at
  // it (lifetimes are inclusive at both ends).
  struct Event {
    int64_t op;
    bool isEnd;
    uint64_t bytes;
  };
  std::vector<Event> events;
  events.reserve(2 * buffers.size());
  for (const BufferLifetime &buffer : buffers) {
    uint64_t bytes = llvm::alignTo(buffer.size, alignment);
    events.push_back({buffer.start, false, bytes});
    events.push_back({buffer.end, true, bytes});
  }
  llvm::sort(events, [](const Event &a, const Event &b) {
    if (a.op != b.op)
      return a.op < b.op;
    return a.isEnd < b.isEnd;
  });
  uint64_t live = 0, peak = 0;
  for (const Event &event : events) {
    if (event.isEnd) {
      live -= event.bytes;
      continue;
    }
    live += event.bytes;
    peak = std::max(peak, live);
  }
  return peak;
}

//===----------------------------------------------------------------------===//
// Checker
//===----------------------------------------------------------------------===//

static llvm::Error planError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static std::string describe(llvm::ArrayRef<BufferLifetime> buffers,
                            llvm::ArrayRef<uint64_t> offsets, size_t i) {
  const BufferLifetime &buffer = buffers[i];
  return llvm::formatv("buffer #{0} (id {1}, ops [{2}, {3}], bytes [{4}, {5}))",
                       i, buffer.id, buffer.start, buffer.end, offsets[i],
                       offsets[i] + buffer.size)
      .str();
}

llvm::Error memopt::verifyArenaPlan(llvm::ArrayRef<BufferLifetime> buffers,
                                    const ArenaPlan &plan) {
  llvm::ArrayRef<uint64_t> offsets = plan.offsets;
  if (offsets.size() != buffers.size())
    return planError(llvm::formatv("plan has {0} offsets for {1} buffers",
                                   offsets.size(), buffers.size()));
  if (!llvm::isPowerOf2_64(plan.alignment))
    return planError(
        llvm::formatv("alignment {0} is not a power of two", plan.alignment));

  for (size_t i = 0, e = buffers.size(); i != e; ++i) {
    const BufferLifetime &buffer = buffers[i];
    if (buffer.start > buffer.end)
      return planError(llvm::formatv(
          "buffer #{0} (id {1}) has lifetime [{2}, {3}] ending before it "
          "starts",
          i, buffer.id, buffer.start, buffer.end));
    if (offsets[i] % plan.alignment != 0)
      return planError(llvm::formatv("buffer #{0} (id {1}) at offset {2} is "
                                     "not aligned to {3}",
                                     i, buffer.id, offsets[i], plan.alignment));
    // Unsigned wrap-around: the sum is smaller than an operand iff the true
    // end lies beyond 2^64.
    uint64_t bufferEnd = offsets[i] + buffer.size;
    if (bufferEnd < offsets[i] || bufferEnd > plan.arenaSize)
      return planError(llvm::formatv(
          "buffer #{0} (id {1}) at offset {2} of {3} bytes does not fit in "
          "the arena of {4} bytes",
          i, buffer.id, offsets[i], buffer.size, plan.arenaSize));
  }

  // Sweep the buffers by start. `live` maps the offset of every non-empty
  // buffer still live at the current start to its index. As long as no
  // overlap has been found, the live buffers are disjoint byte ranges, so a
  // new buffer overlaps one of them iff it overlaps its neighbour below or
  // above in offset order.
  std::vector<size_t> byStart(buffers.size());
  for (size_t i = 0, e = buffers.size(); i != e; ++i)
    byStart[i] = i;
  llvm::stable_sort(byStart, [&](size_t a, size_t b) {
    return buffers[a].start < buffers[b].start;
  });
  std::map<uint64_t, size_t> live;
  using EndEntry = std::pair<int64_t, size_t>; // (last op, index)
  std::vector<EndEntry> endStorage;
  endStorage.reserve(buffers.size());
  std::priority_queue<EndEntry, std::vector<EndEntry>, std::greater<EndEntry>>
      ends(std::greater<EndEntry>(), std::move(endStorage));
  for (size_t i : byStart) {
    const BufferLifetime &buffer = buffers[i];
    while (!ends.empty() && ends.top().first < buffer.start) {
      live.erase(offsets[ends.top().second]);
      ends.pop();
    }
    if (buffer.size == 0)
      continue;
    uint64_t begin = offsets[i], end = begin + buffer.size;
    auto above = live.lower_bound(begin);
    std::optional<size_t> clash;
    if (above != live.end() && above->first < end)
      clash = above->second;
    if (!clash && above != live.begin()) {
      auto below = std::prev(above);
      if (below->first + buffers[below->second].size > begin)
        clash = below->second;
    }
    if (clash)
      return planError(llvm::formatv("{0} and {1} are both live at op {2} "
                                     "but overlap",
                                     describe(buffers, offsets, *clash),
                                     describe(buffers, offsets, i),
                                     buffer.start));
    live.emplace(begin, i);
    ends.push({buffer.end, i});
  }
  return llvm::Error::success();
}
