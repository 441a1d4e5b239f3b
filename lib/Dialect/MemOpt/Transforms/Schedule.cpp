//===- Schedule.cpp - memory-aware op order and frees ---------------------===//
//
// `--memopt-schedule`: greedy list scheduling over a function's single block.
// Each step picks, among the ops whose operands are all computed, the one
// with the best memory effect: bytes of buffers whose last user it is, minus
// bytes of the buffers it creates; optimizer updates first, since running
// them frees a gradient and nothing waits on them. Then a `memopt.free` goes
// after the last use of every buffer that is not an argument or a result.
//
//===----------------------------------------------------------------------===//

#include "memopt/Analysis/ArenaPlanner.h"
#include "memopt/Analysis/MemoryAnalysis.h"
#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"
#include "memopt/Dialect/MemOpt/Transforms/ForeignIR.h"
#include "memopt/Dialect/MemOpt/Transforms/Passes.h"
#include "memopt/Dialect/MemOpt/Transforms/Transforms.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/ScopeExit.h"

#include <map>
#include <optional>
#include <vector>

#define DEBUG_TYPE "memopt-schedule"

namespace memopt {
#define GEN_PASS_DEF_MEMOPTSCHEDULE
#include "memopt/Dialect/MemOpt/Transforms/Passes.h.inc"
} // namespace memopt

using namespace mlir;
using namespace memopt;

namespace {

int64_t bytesOf(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t || !t.hasStaticShape())
    return 0;
  return t.getNumElements() *
         static_cast<int64_t>(llvm::divideCeil(t.getElementTypeBitWidth(), 8));
}

bool isOptimizerUpdate(Operation *op) {
  return isa<OptimizerUpdateOpInterface>(op);
}

class Scheduler {
public:
  /// Reads `func`'s block (erasing the frees of an earlier schedule): its
  /// ops, buffers and dependences, shared by every order computed from it.
  explicit Scheduler(func::FuncOp func);

  /// The greedy order, or with `programOrder` the block's own (each ready
  /// op in block order; the block order itself unless an in-place op's
  /// anti-dependence says otherwise), as positions of the ops in the block
  /// as read. Changes nothing; fails with a diagnostic when the dependences
  /// form a cycle.
  FailureOr<SmallVector<uint32_t>> order(bool programOrder);

  /// Puts the block's ops in `order` (an order from this scheduler), with a
  /// free after the last use of every buffer, replacing those of an earlier
  /// apply; returns (ops moved from their place in the block as read, frees).
  std::pair<int64_t, int64_t> apply(ArrayRef<uint32_t> order);

  /// The peak live bytes `MemoryAnalysis` would report after `apply(order)`,
  /// computed without touching the IR: arguments throughout, each other
  /// buffer from its definition to its last use through any alias (the end
  /// for a returned one), each op's workspace at the op. The frees `apply`
  /// adds only end lifetimes right after an op, where nothing is live that
  /// was not live at the op, so they never hold the peak.
  int64_t peakOf(ArrayRef<uint32_t> order) const;

  /// The arena lower bound (ArenaPlanner's `lowerBound`) of the buffers
  /// `--memopt-plan-memory` would place after `apply(order)`: every buffer
  /// that owns an arena slice (`ownsArenaSlice`), from its definition to its
  /// last use (the end for a returned one), and each op's workspace at the
  /// op. As for `peakOf`, the frees `apply` adds never hold the maximum.
  int64_t arenaLowerBoundOf(ArrayRef<uint32_t> order, int64_t alignment) const;

  /// The order `scheduleFunction` keeps: the greedy one unless program
  /// order's peak is lower; its peak in `peak`.
  FailureOr<SmallVector<uint32_t>> chooseOrder(int64_t &peak);

  /// Whether `f`'s block holds exactly the ops read, in the same order
  /// (the frees an `apply` inserted aside).
  bool readsSameBlock(func::FuncOp f) const;

private:
  func::FuncOp func;
  Block &body;
  Operation *terminator;
  /// The ops in block order (an op's position is its index here).
  SmallVector<Operation *> ops;
  /// Buffers (root values) by dense id: every root an op defines or reads.
  struct Buffer {
    Value root;
    int64_t bytes = 0;
    /// An argument or returned: never freed.
    bool persistent = false;
    /// Uses by any op (through any alias).
    int64_t uses = 0;
    /// The ops (by position) reading it, if not persistent: their score
    /// changes when its pending uses do.
    SmallVector<uint32_t> readers;
  };
  std::vector<Buffer> buffers;
  /// Per op (by position): the buffers it reads, each once with how many of
  /// its operands read it; the bytes of the buffers it creates; how many
  /// ops must run before it, and the ops waiting on it.
  struct OpInfo {
    SmallVector<std::pair<uint32_t, int64_t>, 4> reads;
    int64_t allocated = 0;
    int64_t producerCount = 0;
    SmallVector<uint32_t> users;
  };
  std::vector<OpInfo> infos;
  /// Per op (by position): an optimizer update (run first), recomputation
  /// (`memopt.recompute`, run on demand).
  std::vector<char> updates, recomputed;
  /// Whether the block has `memopt.found_inf` (dynamic loss scaling), whose
  /// readers wait (see `order`).
  bool hasFoundInf = false;

  /// Per op (by position), for placing frees and measuring an order: the
  /// buffers its results are the roots of, and the buffer of each operand,
  /// in operand order.
  struct OpBuffers {
    SmallVector<uint32_t, 2> results;
    SmallVector<uint32_t, 4> operands;
  };
  std::vector<OpBuffers> opBuffers;
  /// Per buffer, in an order of ops: the position in that order of the op
  /// defining it (-1 for an argument) and of the last op that reads it or
  /// defines it as a ranked tensor (the only results a definition alone
  /// keeps alive; -1 if none).
  struct Span {
    int64_t def = -1;
    int64_t last = -1;
  };
  std::vector<Span> spans(ArrayRef<uint32_t> order) const;
  /// Per op (by position): its workspace bytes.
  std::vector<int64_t> workspaces;
  /// Bytes of the tensor arguments, live for the whole step.
  int64_t argumentBytes = 0;
  /// The frees the last `apply` created, erased by the next one.
  SmallVector<Operation *> frees;
};

Scheduler::Scheduler(func::FuncOp func)
    : func(func), body(func.front()), terminator(body.getTerminator()) {
  // Frees from an earlier run are recomputed.
  for (Operation &op : llvm::make_early_inc_range(body.without_terminator()))
    if (isa<FreeOp>(op))
      op.erase();

  size_t numValues = body.getNumArguments();
  for (Operation &op : body.without_terminator()) {
    numValues += op.getNumResults();
    ops.push_back(&op);
  }
  infos.resize(ops.size());
  opBuffers.resize(ops.size());
  workspaces.resize(ops.size());
  updates.resize(ops.size());
  recomputed.resize(ops.size());
  buffers.reserve(numValues);

  // Every value of the block, in one table sized once (growing it rehashes
  // every entry, several times over on a 100k-op step): the buffer it lives
  // in, and the position of the op defining it (-1 for an argument). Values
  // come in definition order, so an alias finds the buffer of what it
  // aliases already there.
  struct Entry {
    uint32_t buffer;
    int32_t def;
  };
  DenseMap<Value, Entry> table;
  table.reserve(numValues);
  auto newBuffer = [&](Value root) {
    buffers.emplace_back();
    buffers.back().root = root;
    buffers.back().bytes = bytesOf(root);
    return static_cast<uint32_t>(buffers.size() - 1);
  };
  // A value not of this block (none in verified IR: the function is
  // isolated from above) is a buffer of its own, defined nowhere.
  auto entryOf = [&](Value v) {
    auto [it, inserted] = table.try_emplace(v, Entry{0, -1});
    if (inserted)
      it->second.buffer = newBuffer(MemoryAnalysis::bufferRoot(v));
    return it->second;
  };
  for (BlockArgument arg : body.getArguments()) {
    argumentBytes += bytesOf(arg);
    uint32_t id = newBuffer(arg);
    buffers[id].persistent = true;
    table.try_emplace(arg, Entry{id, -1});
  }

  // Buffers, reads and dependences: an op is ready when all its operands'
  // producers ran. Collectives also wait for the collective before them in
  // the block: every rank must issue them in the same order, and the ranks'
  // steps may differ elsewhere (ZeRO's updates of the parameters a rank
  // owns).
  std::optional<uint32_t> lastCollective;
  SmallVector<uint32_t, 8> producers;
  bool anyInPlace = false;
  for (auto [index, op] : llvm::enumerate(ops)) {
    auto position = static_cast<uint32_t>(index);
    OpInfo &info = infos[position];
    OpBuffers &entry = opBuffers[position];
    workspaces[position] = MemoryAnalysis::getWorkspaceBytes(op);
    updates[position] = isOptimizerUpdate(op);
    recomputed[position] = op->hasAttr(kRecomputeAttrName);
    hasFoundInf |= isa<FoundInfOp>(op);
    anyInPlace |= op->hasAttr(MemOptDialect::kInPlaceAttrName);
    producers.clear();
    for (Value operand : op->getOperands()) {
      Entry e = entryOf(operand);
      uint32_t id = e.buffer;
      entry.operands.push_back(id);
      Buffer &buffer = buffers[id];
      ++buffer.uses;
      if (buffer.readers.empty() || buffer.readers.back() != position)
        buffer.readers.push_back(position);
      // Count each buffer once, however many operands read it.
      auto read = llvm::find_if(
          info.reads, [&](const auto &entry) { return entry.first == id; });
      if (read == info.reads.end())
        info.reads.push_back({id, 1});
      else
        ++read->second;
      if (e.def >= 0)
        producers.push_back(static_cast<uint32_t>(e.def));
    }
    for (Value r : op->getResults()) {
      Value alias = MemoryAnalysis::aliasOf(r);
      uint32_t id;
      if (alias) {
        id = entryOf(alias).buffer;
      } else {
        id = newBuffer(r);
        entry.results.push_back(id);
        info.allocated += buffers[id].bytes;
      }
      table[r] = Entry{id, static_cast<int32_t>(position)};
    }
    if (isCollective(op)) {
      if (lastCollective)
        producers.push_back(*lastCollective);
      lastCollective = position;
    }
    llvm::sort(producers);
    producers.erase(std::unique(producers.begin(), producers.end()),
                    producers.end());
    info.producerCount = static_cast<int64_t>(producers.size());
    for (uint32_t p : producers)
      infos[p].users.push_back(position);
  }
  // Returned buffers are never freed, and their readers' scores never
  // count them.
  for (Value v : terminator->getOperands())
    buffers[entryOf(v).buffer].persistent = true;
  for (Buffer &buffer : buffers)
    if (buffer.persistent)
      buffer.readers.clear();

  if (!anyInPlace)
    return;
  // The values holding the contents an in-place op overwrites: its operand,
  // the views it is of (back to the value that is not a view), and views of
  // any of those. Readers of these must run first; readers of the op's own
  // result (the new contents) after. Contents the buffer held before an
  // earlier in-place op are not followed: that op's own anti-dependences
  // put their readers before it, and it runs before this one (its result
  // leads to this operand through views), so their edges here would change
  // no order; following them made a chain of n in-place ops over one buffer
  // (a ResNet's residual stream) cost n^2.
  auto oldContents = [](Value operand) {
    SmallVector<Value> values;
    llvm::SmallDenseSet<Value, 8> seen;
    for (Value v = operand; v && seen.insert(v).second;) {
      values.push_back(v);
      if (!v.getDefiningOp<ReshapeOp>())
        break;
      v = MemoryAnalysis::aliasOf(v);
    }
    for (size_t i = 0; i < values.size(); ++i)
      for (Operation *user : values[i].getUsers()) {
        if (user->hasAttr(MemOptDialect::kInPlaceAttrName))
          continue;
        for (Value r : user->getResults())
          if (MemoryAnalysis::aliasOf(r) == values[i] && seen.insert(r).second)
            values.push_back(r);
      }
    return values;
  };
  // An op writing in place over an operand must run after every other
  // reader of the contents it overwrites (an anti-dependence the SSA edges
  // do not show).
  DenseMap<Operation *, uint32_t> positions;
  positions.reserve(ops.size());
  for (auto [index, op] : llvm::enumerate(ops))
    positions[op] = static_cast<uint32_t>(index);
  for (auto [index, op] : llvm::enumerate(ops)) {
    auto inplace =
        op->getAttrOfType<IntegerAttr>(MemOptDialect::kInPlaceAttrName);
    if (!inplace)
      continue;
    auto position = static_cast<uint32_t>(index);
    // What already orders the op: its operands' producers.
    llvm::SmallDenseSet<uint32_t, 8> before;
    for (Value operand : op->getOperands())
      if (auto it = table.find(operand);
          it != table.end() && it->second.def >= 0)
        before.insert(static_cast<uint32_t>(it->second.def));
    for (Value old : oldContents(op->getOperand(inplace.getInt())))
      for (Operation *other : old.getUsers()) {
        if (other == op || other->getBlock() != &body ||
            other->hasTrait<mlir::OpTrait::IsTerminator>())
          continue;
        uint32_t p = positions.lookup(other);
        if (!before.insert(p).second)
          continue;
        ++infos[position].producerCount;
        infos[p].users.push_back(position);
      }
  }
}
FailureOr<SmallVector<uint32_t>> Scheduler::order(bool programOrder) {
  size_t numOps = ops.size();
  std::vector<int64_t> pendingUses(buffers.size());
  for (auto [id, buffer] : llvm::enumerate(buffers))
    pendingUses[id] = buffer.uses;
  std::vector<int64_t> missing(numOps);
  for (size_t i = 0; i < numOps; ++i)
    missing[i] = infos[i].producerCount;

  auto freed = [&](uint32_t i) {
    int64_t bytes = 0;
    for (auto [id, n] : infos[i].reads)
      if (!buffers[id].persistent && pendingUses[id] == n)
        bytes += buffers[id].bytes;
    return bytes;
  };

  // The ready ops, best first: optimizer updates, then the highest score
  // (bytes freed minus bytes allocated), then the earliest in the block; in
  // program order, the earliest. A score only changes when the pending uses
  // of a buffer the op reads do, so only those ops are re-keyed.
  struct Key {
    bool update;
    int64_t score;
    int64_t index;
    bool operator<(const Key &o) const {
      if (update != o.update)
        return update;
      if (score != o.score)
        return score > o.score;
      return index < o.index;
    }
    bool operator==(const Key &o) const {
      return update == o.update && score == o.score && index == o.index;
    }
  };
  auto keyOf = [&](uint32_t i) {
    if (programOrder)
      return Key{false, 0, static_cast<int64_t>(i)};
    return Key{static_cast<bool>(updates[i]), freed(i) - infos[i].allocated,
               static_cast<int64_t>(i)};
  };
  /// Ops ordered by their key: a binary heap where re-keying an op pushes
  /// its new key and leaves the old entry behind, skipped when it reaches
  /// the top (each op's current key is kept aside).
  struct Queue {
    std::vector<Key> heap;
    /// Per op, its key while queued here.
    std::vector<std::optional<Key>> keys;
    size_t queued = 0;
    explicit Queue(size_t n) : keys(n) {}
    /// std::push_heap keeps the greatest on top; the best key is the least.
    static bool worse(const Key &a, const Key &b) { return b < a; }
    bool empty() const { return queued == 0; }
    void push(Key key) {
      heap.push_back(key);
      std::push_heap(heap.begin(), heap.end(), worse);
    }
    void insert(uint32_t i, Key key) {
      keys[i] = key;
      ++queued;
      push(key);
    }
    uint32_t pop() {
      while (true) {
        std::pop_heap(heap.begin(), heap.end(), worse);
        Key top = heap.back();
        heap.pop_back();
        auto i = static_cast<uint32_t>(top.index);
        // A key left behind by a re-key (or an op popped already).
        if (!keys[i] || !(*keys[i] == top))
          continue;
        keys[i].reset();
        --queued;
        return i;
      }
    }
    void rekey(uint32_t i, llvm::function_ref<Key(uint32_t)> keyOf) {
      if (!keys[i])
        return;
      Key key = keyOf(i);
      if (key == *keys[i])
        return;
      keys[i] = key;
      push(key);
    }
  };
  Queue ready(numOps), lazyReady(numOps);

  // Recomputation (ops marked `memopt.recompute`) is demand-driven: such an
  // op runs only when nothing else can, and then the earliest in the block,
  // since checkpointing emits recomputation in the order the backward pass
  // needs it. Running it any sooner would hold what it recomputes across
  // the very stretch checkpointing dropped it for.
  std::map<int64_t, uint32_t> deferred;
  // Under dynamic loss scaling every update waits for `memopt.found_inf`,
  // which reads every gradient. What only feeds ops waiting for it (the
  // unscale of an f16 parameter's gradient, or of a widened gradient in
  // IR where the update does not read the f16 one itself) is lazy too: run
  // any sooner, it would hold a second copy of each gradient until the
  // flag exists.
  // Lazy ops run when nothing else can, the best score first.
  DenseSet<Operation *> gated, lazy;
  if (!programOrder && hasFoundInf) {
    for (Operation *op : ops)
      if (llvm::any_of(op->getOperands(), [&](Value v) {
            Operation *def = v.getDefiningOp();
            return def && (isa<FoundInfOp>(def) || gated.contains(def));
          }))
        gated.insert(op);
    for (size_t i = numOps; i-- > 0;) {
      Operation *op = ops[i];
      if (gated.contains(op) || isa<FoundInfOp>(op) || recomputed[i] ||
          op->use_empty())
        continue;
      if (llvm::all_of(op->getUsers(), [&](Operation *user) {
            return gated.contains(user) || lazy.contains(user);
          }))
        lazy.insert(op);
    }
  }
  SmallVector<uint32_t> order;
  order.reserve(numOps);
  auto makeReady = [&](uint32_t i) {
    if (!programOrder && recomputed[i])
      deferred.emplace(static_cast<int64_t>(i), i);
    else
      (!lazy.empty() && lazy.contains(ops[i]) ? lazyReady : ready)
          .insert(i, keyOf(i));
  };
  for (uint32_t i = 0; i < numOps; ++i)
    if (missing[i] == 0)
      makeReady(i);
  // An op's score counts a buffer it reads once the op holds every pending
  // use of it, so when an op runs, the only other score it can change, per
  // buffer it reads, is that of the one reader left, if one is: readers
  // not yet run are counted per buffer, and the last is looked for once.
  // (Re-keying every reader instead is quadratic where one buffer has
  // thousands, as loss scaling's scale has.)
  std::vector<uint32_t> pendingReaders(buffers.size());
  for (auto [id, buffer] : llvm::enumerate(buffers))
    pendingReaders[id] = static_cast<uint32_t>(buffer.readers.size());
  std::vector<char> done(numOps, 0);
  // Per op, the last step that re-keyed it: each reader once per step.
  std::vector<size_t> touchedAt(numOps, SIZE_MAX);
  SmallVector<uint32_t> touched;
  while (!ready.empty() || !deferred.empty() || !lazyReady.empty()) {
    if (ready.empty() && !deferred.empty()) {
      uint32_t earliest = deferred.begin()->second;
      deferred.erase(deferred.begin());
      ready.insert(earliest, keyOf(earliest));
    } else if (ready.empty()) {
      uint32_t best = lazyReady.pop();
      ready.insert(best, keyOf(best));
    }
    uint32_t i = ready.pop();
    size_t step = order.size();
    order.push_back(i);
    done[i] = 1;
    touched.clear();
    for (auto [id, n] : infos[i].reads) {
      pendingUses[id] -= n;
      // Persistent buffers have no readers listed (never freed, never
      // counted).
      if (programOrder || buffers[id].readers.empty() ||
          --pendingReaders[id] != 1)
        continue;
      for (uint32_t reader : buffers[id].readers) {
        if (done[reader])
          continue;
        if (touchedAt[reader] != step) {
          touchedAt[reader] = step;
          touched.push_back(reader);
        }
        break;
      }
    }
    for (uint32_t reader : touched) {
      ready.rekey(reader, keyOf);
      lazyReady.rekey(reader, keyOf);
    }
    for (uint32_t user : infos[i].users)
      if (--missing[user] == 0)
        makeReady(user);
  }

  // Every op scheduled, or the dependences (anti-dependences of in-place
  // ops included) form a cycle: a pass marked something in place that
  // cannot be ordered.
  if (order.size() != numOps) {
    for (size_t i = 0; i < numOps; ++i)
      if (missing[i] > 0 && ops[i]->hasAttr(MemOptDialect::kInPlaceAttrName)) {
        ops[i]->emitOpError("cannot be scheduled: its in-place write "
                            "conflicts with a reader of the buffer it "
                            "overwrites that depends on it");
        return failure();
      }
    func.emitOpError("cannot be scheduled: its dependences form a cycle");
    return failure();
  }

  return order;
}

std::pair<int64_t, int64_t> Scheduler::apply(ArrayRef<uint32_t> order) {
  // The constructor erased the frees the block came with; these are the
  // previous apply's.
  for (Operation *free : frees)
    free->erase();
  frees.clear();
  int64_t moved = 0;
  for (auto [i, position] : llvm::enumerate(order)) {
    moved += position != i;
    ops[position]->moveBefore(terminator);
  }

  // A free after the last use of every buffer (right after its definition
  // when nothing uses it).
  std::vector<Span> span = spans(order);
  OpBuilder b(func.getContext());
  SmallVector<uint32_t> dying;
  for (int64_t i = static_cast<int64_t>(order.size()) - 1; i >= 0; --i) {
    Operation *op = ops[order[i]];
    const OpBuffers &entry = opBuffers[order[i]];
    dying.clear();
    for (uint32_t id : entry.results)
      if (span[id].last == i && !buffers[id].persistent)
        dying.push_back(id);
    for (uint32_t id : entry.operands)
      if (span[id].last == i && !buffers[id].persistent &&
          !llvm::is_contained(dying, id))
        dying.push_back(id);
    b.setInsertionPointAfter(op);
    for (uint32_t id : llvm::reverse(dying))
      frees.push_back(FreeOp::create(b, op->getLoc(), buffers[id].root));
  }
  return std::make_pair(moved, static_cast<int64_t>(frees.size()));
}

std::vector<Scheduler::Span> Scheduler::spans(ArrayRef<uint32_t> order) const {
  std::vector<Span> span(buffers.size());
  for (auto [i, position] : llvm::enumerate(order)) {
    const OpBuffers &entry = opBuffers[position];
    int64_t p = static_cast<int64_t>(i);
    for (uint32_t id : entry.results) {
      span[id].def = p;
      if (isa<RankedTensorType>(buffers[id].root.getType()))
        span[id].last = p;
    }
    for (uint32_t id : entry.operands)
      span[id].last = p;
  }
  return span;
}

int64_t Scheduler::peakOf(ArrayRef<uint32_t> order) const {
  int64_t n = static_cast<int64_t>(order.size());
  std::vector<Span> span = spans(order);
  std::vector<int64_t> delta(n + 1, 0);
  for (auto [id, buffer] : llvm::enumerate(buffers)) {
    // Arguments count in `argumentBytes`; a buffer of no bytes (not a
    // statically shaped ranked tensor) changes nothing, and every other one
    // is live at its definition.
    if (span[id].def < 0 || buffer.bytes == 0)
      continue;
    // A returned buffer lives to the terminator, past the last op.
    int64_t end = buffer.persistent ? n - 1 : span[id].last;
    delta[span[id].def] += buffer.bytes;
    delta[end + 1] -= buffer.bytes;
  }
  int64_t running = argumentBytes, peak = argumentBytes;
  for (int64_t i = 0; i < n; ++i) {
    running += delta[i];
    peak = std::max(peak, running + workspaces[order[i]]);
  }
  return peak;
}

int64_t Scheduler::arenaLowerBoundOf(ArrayRef<uint32_t> order,
                                     int64_t alignment) const {
  // The buffers --memopt-plan-memory would collect, with lifetimes in the
  // order's positions; the bound is the planner's own.
  int64_t n = static_cast<int64_t>(order.size());
  std::vector<Span> span = spans(order);
  SmallVector<BufferLifetime> lifetimes;
  for (auto [id, buffer] : llvm::enumerate(buffers)) {
    if (span[id].def < 0 || buffer.bytes == 0 || !ownsArenaSlice(buffer.root))
      continue;
    BufferLifetime lifetime;
    lifetime.size = static_cast<uint64_t>(buffer.bytes);
    lifetime.start = span[id].def;
    lifetime.end =
        buffer.persistent ? n - 1 : std::max(span[id].def, span[id].last);
    lifetimes.push_back(lifetime);
  }
  for (auto [i, position] : llvm::enumerate(order))
    if (int64_t workspace = workspaces[position]; workspace > 0) {
      BufferLifetime lifetime;
      lifetime.size = static_cast<uint64_t>(workspace);
      lifetime.start = lifetime.end = static_cast<int64_t>(i);
      lifetimes.push_back(lifetime);
    }
  return static_cast<int64_t>(
      lowerBound(lifetimes, static_cast<uint64_t>(alignment)));
}

FailureOr<SmallVector<uint32_t>> Scheduler::chooseOrder(int64_t &peak) {
  // The greedy order is a heuristic and can lose to the order the ops came
  // in, so both are measured, and the greedy one is kept unless program
  // order's peak is lower (the greedy one wins a tie): the schedule never
  // raises the peak. Both orders and both peaks come from one reading of
  // the block (peakOf; test-memopt-schedule-peak checks it against
  // MemoryAnalysis).
  FailureOr<SmallVector<uint32_t>> greedy = order(false);
  if (failed(greedy))
    return failure();
  // The same dependences as the greedy order's, so no cycle either.
  FailureOr<SmallVector<uint32_t>> program = order(true);
  assert(succeeded(program) && "program order failed where greedy did not");
  peak = peakOf(*greedy);
  int64_t programPeak = peakOf(*program);
  if (programPeak < peak) {
    peak = programPeak;
    return program;
  }
  return greedy;
}

bool Scheduler::readsSameBlock(func::FuncOp f) const {
  if (f != func || &f.front() != &body || body.getTerminator() != terminator)
    return false;
  size_t i = 0;
  for (Operation &op : body.without_terminator())
    if (i == ops.size() || ops[i++] != &op)
      return false;
  return i == ops.size();
}

} // namespace

struct PendingSchedule::State {
  explicit State(func::FuncOp func) : func(func), scheduler(func) {}
  func::FuncOp func;
  Scheduler scheduler;
  SmallVector<uint32_t> order;
  int64_t peak = 0;
  bool applied = false;
};

PendingSchedule::PendingSchedule(std::unique_ptr<State> state)
    : state(std::move(state)) {}
PendingSchedule::PendingSchedule(PendingSchedule &&) noexcept = default;
PendingSchedule &
PendingSchedule::operator=(PendingSchedule &&) noexcept = default;
PendingSchedule::~PendingSchedule() = default;

FailureOr<PendingSchedule> PendingSchedule::compute(func::FuncOp func) {
  auto state = std::make_unique<State>(func);
  FailureOr<SmallVector<uint32_t>> order =
      state->scheduler.chooseOrder(state->peak);
  if (failed(order))
    return failure();
  state->order = std::move(*order);
  return PendingSchedule(std::move(state));
}

int64_t PendingSchedule::getPeakBytes() const { return state->peak; }

int64_t PendingSchedule::getArenaLowerBound(int64_t alignment) const {
  return state->scheduler.arenaLowerBoundOf(state->order, alignment);
}

bool PendingSchedule::readsSameBlock(func::FuncOp func) const {
  return !state->applied && state->scheduler.readsSameBlock(func);
}

std::pair<int64_t, int64_t> PendingSchedule::apply() {
  assert(!state->applied && "a pending schedule is applied once");
  state->applied = true;
  std::pair<int64_t, int64_t> result = state->scheduler.apply(state->order);
  // Debug builds check the peak against MemoryAnalysis after applying,
  // whichever pass computed the schedule.
  assert(MemoryAnalysis(state->func).getPeakBytes() == state->peak &&
         "the scheduler's peak disagrees with MemoryAnalysis");
  return result;
}

FailureOr<std::pair<int64_t, int64_t>>
memopt::scheduleFunction(func::FuncOp func, int64_t *peakBytes) {
  // Only the order kept touches the IR.
  FailureOr<PendingSchedule> schedule = PendingSchedule::compute(func);
  if (failed(schedule))
    return failure();
  std::pair<int64_t, int64_t> result = schedule->apply();
  if (peakBytes)
    *peakBytes = schedule->getPeakBytes();
  return result;
}

FailureOr<int64_t> memopt::scheduledArenaLowerBound(func::FuncOp func,
                                                    int64_t alignment) {
  FailureOr<PendingSchedule> schedule = PendingSchedule::compute(func);
  if (failed(schedule))
    return failure();
  return schedule->getArenaLowerBound(alignment);
}

FailureOr<int64_t> memopt::scheduledPeak(func::FuncOp func) {
  FailureOr<PendingSchedule> schedule = PendingSchedule::compute(func);
  if (failed(schedule))
    return failure();
  return schedule->getPeakBytes();
}

namespace {

struct MemOptSchedulePass
    : public memopt::impl::MemOptScheduleBase<MemOptSchedulePass> {
  void runOnOperation() override {
    // On a module: its memopt graphs. Nested on a function: that function,
    // so the pass manager schedules a module's functions in parallel.
    SmallVector<func::FuncOp> graphs;
    if (failed(collectMemOptGraphs(getOperation(), "memopt-schedule", graphs)))
      return signalPassFailure();
    for (func::FuncOp func : graphs) {
      // The schedule an earlier pass computed for this very block (see
      // CachedSchedule), else a new one.
      std::optional<PendingSchedule> pending;
      if (func.getOperation() == getOperation())
        if (auto cached = getCachedAnalysis<CachedSchedule>();
            cached && cached->get().schedule &&
            cached->get().schedule->readsSameBlock(func)) {
          pending = std::move(cached->get().schedule);
          cached->get().schedule.reset();
        }
      FailureOr<std::pair<int64_t, int64_t>> result =
          pending ? FailureOr<std::pair<int64_t, int64_t>>(pending->apply())
                  : scheduleFunction(func);
      if (failed(result))
        return signalPassFailure();
      auto [moved, frees] = *result;
      numMoved += moved;
      numFrees += frees;
    }
  }
};

} // namespace
