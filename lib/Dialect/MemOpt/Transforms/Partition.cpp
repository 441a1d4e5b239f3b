//===- Partition.cpp - what the backward pass keeps, by a minimum cut -----===//
//
// `--memopt-partition`: which forward values cross into the backward pass.
// Each op's gradient rule names the forward values its backward reads; left
// alone, every such value is kept from the forward pass until its last
// backward use. Many are cheap to compute again from values that are kept
// anyway: the f16 copy of a parameter (`memopt.cast` of a weight under mixed
// precision) is a second copy of every weight held through the backward
// pass, and recomputing it next to its backward use costs one pass over the
// weight.
//
// As torch.compile's min-cut partitioner does, the choice is a minimum s-t
// cut, weighted by bytes, over the forward graph:
//
// * every forward value v is two nodes, v.in -> v.out, with capacity the
//   bytes of v (cutting this edge = keeping v for the backward pass);
// * arguments and constants are kept anyway: source -> v.in is infinite and
//   v.in -> v.out costs nothing;
// * ops that may not be recomputed (anything but cheap ops, see below):
//   source -> v.in is infinite, so their results are kept, never recomputed;
//   for cheap ops that edge weighs one op's recomputation, a tie-breaker
//   (bytes weigh 64 each): of two cuts that keep as many bytes, the one
//   that recomputes fewer ops wins;
// * each operand u of the op defining v: u.out -> v.in, infinite (v can be
//   recomputed only from what is kept or itself recomputed);
// * each forward value a backward op reads: v.out -> sink, infinite.
//
// The cut (Boost.Graph's push-relabel maximum flow, then the source side of
// the residual graph) keeps the values whose v.in is on the source side and
// whose v.out is not; every other value the backward pass reads is
// recomputed from kept values, by clones of its ops marked
// `memopt.recompute`, which `--memopt-schedule` runs only just before their
// first use. The step computes the same bits: recomputed ops are pure and
// deterministic.
//
// Cheap ops: memopt ops with one result, free of memory effects, whose
// FLOPs (CostOpInterface) are at most two per element of their largest
// tensor: casts, element-wise and activation functions, data movement and
// layout (reshape, transpose, slice, concat, embedding lookups). Matrix
// products, convolutions, normalisations and ops with effects are kept.
// Recomputed FLOPs are bounded by `max-recompute` (default 5%) of the
// forward pass's: while the cut exceeds it, the most expensive recomputed
// op is made non-recomputable and the cut is solved again.
//
//===----------------------------------------------------------------------===//

#include "memopt/Analysis/MemoryAnalysis.h"
#include "memopt/Dialect/MemOpt/IR/MemOptDialect.h"
#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"
#include "memopt/Dialect/MemOpt/Transforms/ForeignIR.h"
#include "memopt/Dialect/MemOpt/Transforms/Passes.h"
#include "memopt/Dialect/MemOpt/Transforms/Transforms.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Threading.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>

#include <limits>

namespace memopt {
#define GEN_PASS_DEF_MEMOPTPARTITION
#include "memopt/Dialect/MemOpt/Transforms/Passes.h.inc"
} // namespace memopt

using namespace mlir;
using namespace memopt;

namespace {

//===----------------------------------------------------------------------===//
// The flow network
//===----------------------------------------------------------------------===//

using FlowTraits =
    boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using FlowGraph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS, boost::no_property,
    boost::property<
        boost::edge_capacity_t, int64_t,
        boost::property<boost::edge_residual_capacity_t, int64_t,
                        boost::property<boost::edge_reverse_t,
                                        FlowTraits::edge_descriptor>>>>;

/// Larger than any cut: the sum of all bytes, times kBytesWeight, is far
/// below it.
constexpr int64_t kInfinite = int64_t(1) << 60;
/// A byte kept weighs this much; recomputing one op weighs 1, so between
/// two cuts of equal bytes the one with fewer recomputed ops wins.
constexpr int64_t kBytesWeight = 64;

/// A directed graph with capacities and the reverse edges push-relabel
/// needs; answers which vertices the minimum cut leaves on the source side.
class MinCut {
public:
  explicit MinCut(size_t vertices) : graph(vertices) {}

  void addEdge(size_t from, size_t to, int64_t capacity) {
    auto forward = boost::add_edge(from, to, graph).first;
    auto backward = boost::add_edge(to, from, graph).first;
    auto capacityMap = boost::get(boost::edge_capacity, graph);
    auto reverseMap = boost::get(boost::edge_reverse, graph);
    capacityMap[forward] = capacity;
    capacityMap[backward] = 0;
    reverseMap[forward] = backward;
    reverseMap[backward] = forward;
  }

  /// Solves the maximum flow from `source` to `sink` and returns, per
  /// vertex, whether it is reachable from `source` in the residual graph
  /// (the source side of a minimum cut).
  std::vector<char> sourceSide(size_t source, size_t sink) {
    boost::push_relabel_max_flow(graph, source, sink);
    auto residual = boost::get(boost::edge_residual_capacity, graph);
    std::vector<char> reached(boost::num_vertices(graph), 0);
    std::vector<size_t> stack = {source};
    reached[source] = 1;
    while (!stack.empty()) {
      size_t v = stack.back();
      stack.pop_back();
      for (auto [it, end] = boost::out_edges(v, graph); it != end; ++it) {
        size_t to = boost::target(*it, graph);
        if (!reached[to] && residual[*it] > 0) {
          reached[to] = 1;
          stack.push_back(to);
        }
      }
    }
    return reached;
  }

private:
  FlowGraph graph;
};

//===----------------------------------------------------------------------===//
// The forward graph
//===----------------------------------------------------------------------===//

/// Elements of the largest tensor `op` reads or writes.
int64_t largestElements(Operation *op) {
  int64_t largest = 0;
  auto consider = [&](Type type) {
    auto shaped = dyn_cast<ShapedType>(type);
    if (shaped && shaped.hasStaticShape())
      largest = std::max<int64_t>(largest, shaped.getNumElements());
  };
  for (Type type : op->getOperandTypes())
    consider(type);
  for (Type type : op->getResultTypes())
    consider(type);
  return largest;
}

/// Whether `op` may be recomputed in the backward pass: a memopt op with
/// one result, no regions and no memory effects, not in place, that does at
/// most two FLOPs per element of its largest tensor.
bool isCheap(Operation *op) {
  return isa<MemOptDialect>(op->getDialect()) && op->getNumResults() == 1 &&
         op->getNumRegions() == 0 && isMemoryEffectFree(op) &&
         !op->hasAttr(kInPlaceAttrName) && isa<CostOpInterface>(op) &&
         MemoryAnalysis::getFlops(op) <=
             2 * std::max<int64_t>(largestElements(op), 1);
}

/// The forward graph of a training step as the cut sees it.
struct Partition {
  /// Forward values: the arguments, then each forward op's results in block
  /// order. Node 2k is value k's `in`, 2k+1 its `out`.
  SmallVector<Value> values;
  llvm::DenseMap<Value, size_t> valueIndex;
  /// Where value k is, by position, so that a clone of the function finds
  /// its own: the position of its op in the block (-1 for an argument) and
  /// its result (or argument) number.
  SmallVector<int64_t> defPosition;
  SmallVector<unsigned> number;
  /// Per op position: the index of its first result among `values`, -1 for
  /// an op that is not forward.
  SmallVector<int64_t> firstValue;
  /// Whether value k is read by the backward pass.
  SmallVector<char> neededByBackward;
  /// Whether value k is free to keep (an argument or a constant).
  SmallVector<char> free;
  /// Whether value k's op may be recomputed.
  SmallVector<char> cheap;
  /// Whether value k is computed by cheap ops from arguments and constants
  /// only (a parameter's f16 copy).
  SmallVector<char> fromArguments;
  /// FLOPs of the forward pass.
  int64_t forwardFlops = 0;
  /// Whether the function has a backward pass at all.
  bool hasBackward = false;

  size_t addValue(Value value, bool isFree, int64_t position) {
    auto [it, inserted] = valueIndex.try_emplace(value, values.size());
    if (inserted) {
      values.push_back(value);
      defPosition.push_back(position);
      if (auto arg = dyn_cast<BlockArgument>(value))
        number.push_back(arg.getArgNumber());
      else
        number.push_back(cast<OpResult>(value).getResultNumber());
      neededByBackward.push_back(0);
      free.push_back(isFree);
      cheap.push_back(0);
      fromArguments.push_back(isFree);
    }
    return it->second;
  }

  std::optional<size_t> lookup(Value value) const {
    auto it = valueIndex.find(value);
    if (it == valueIndex.end())
      return std::nullopt;
    return it->second;
  }

  static Partition build(func::FuncOp func, const MemoryAnalysis &analysis);
};

Partition Partition::build(func::FuncOp func, const MemoryAnalysis &analysis) {
  Partition p;
  for (BlockArgument arg : func.getArguments())
    p.addValue(arg, /*isFree=*/true, /*position=*/-1);
  p.firstValue.assign(analysis.getNumOps(), -1);
  for (auto [position, opPtr] : llvm::enumerate(analysis.getOps())) {
    Operation &op = *opPtr;
    if (!analysis.isForwardAt(position))
      continue;
    p.firstValue[position] = static_cast<int64_t>(p.values.size());
    p.forwardFlops += MemoryAnalysis::getFlops(&op);
    bool isConstant = op.hasTrait<mlir::OpTrait::ConstantLike>();
    bool cheap = !isConstant && isCheap(&op);
    bool fromArguments =
        isConstant || (cheap && llvm::all_of(op.getOperands(), [&](Value v) {
                         std::optional<size_t> k = p.lookup(v);
                         return k && p.fromArguments[*k];
                       }));
    for (Value result : op.getResults()) {
      size_t k = p.addValue(result, isConstant, static_cast<int64_t>(position));
      p.cheap[k] = cheap;
      p.fromArguments[k] = fromArguments;
    }
  }
  p.hasBackward = analysis.getFirstBackwardIndex() < analysis.getNumOps();
  for (auto [position, op] : llvm::enumerate(analysis.getOps())) {
    if (analysis.isForwardAt(position))
      continue;
    op->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        if (std::optional<size_t> k = p.lookup(operand))
          p.neededByBackward[*k] = 1;
    });
  }
  return p;
}

/// The values the backward pass recomputes when the ops `allowed` marks may
/// be recomputed: the minimum cut's choice, with the most expensive
/// recomputed op kept instead while the recomputed FLOPs exceed
/// `flopBound`.
SmallVector<char> solve(const Partition &p, SmallVector<char> allowed,
                        int64_t flopBound) {
  size_t n = p.values.size();
  SmallVector<char> recompute;
  while (true) {
    // The network is solved on the part of it that can be cut: the values
    // that may be recomputed (their `in` and `out`) and the values they
    // read (their `out`). Every other value's `in` is joined to the source
    // (an infinite edge from it), so it is kept if needed and never
    // recomputed, and its `out` matters only where it feeds a value that
    // may be recomputed; an argument's `out` gets nothing through its empty
    // edge, so it carries no flow. Contracting and dropping these changes
    // no cut, and the source side of the minimum cut (what the residual
    // graph reaches, the same for every maximum flow) is the same: on a
    // 100k-op ResNet, where few ops are cheap, the network shrinks tenfold.
    auto mayRecompute = [&](size_t k) { return !p.free[k] && allowed[k]; };
    constexpr size_t kNone = std::numeric_limits<size_t>::max();
    constexpr size_t source = 0, sink = 1;
    SmallVector<size_t> inNode(n, kNone), outNode(n, kNone);
    size_t vertices = 2;
    for (size_t k = 0; k < n; ++k)
      if (mayRecompute(k)) {
        inNode[k] = vertices++;
        outNode[k] = vertices++;
      }
    // Nothing may be recomputed: every value the backward pass reads is
    // kept.
    if (vertices == 2)
      return SmallVector<char>(n, 0);
    for (size_t k = 0; k < n; ++k) {
      if (!mayRecompute(k))
        continue;
      for (Value operand : p.values[k].getDefiningOp()->getOperands())
        if (std::optional<size_t> u = p.lookup(operand);
            u && !p.free[*u] && outNode[*u] == kNone)
          outNode[*u] = vertices++;
    }
    MinCut cut(vertices);
    for (size_t k = 0; k < n; ++k) {
      if (outNode[k] == kNone)
        continue;
      int64_t bytes = kBytesWeight * MemoryAnalysis::getValueBytes(p.values[k]);
      if (mayRecompute(k)) {
        cut.addEdge(inNode[k], outNode[k], bytes);
        // Recomputing a cheap op costs a little (ties keep the value).
        cut.addEdge(source, inNode[k], 1);
        for (Value operand : p.values[k].getDefiningOp()->getOperands())
          if (std::optional<size_t> u = p.lookup(operand);
              u && outNode[*u] != kNone)
            cut.addEdge(outNode[*u], inNode[k], kInfinite);
      } else {
        // Never recomputed: its `in` is the source's.
        cut.addEdge(source, outNode[k], bytes);
      }
      if (p.neededByBackward[k])
        cut.addEdge(outNode[k], sink, kInfinite);
    }
    std::vector<char> reached = cut.sourceSide(source, sink);
    auto inOnSourceSide = [&](size_t k) {
      return inNode[k] == kNone || reached[inNode[k]];
    };

    // Recompute what the backward pass reads and the cut does not keep,
    // and what that needs in turn.
    recompute.assign(n, 0);
    SmallVector<size_t> worklist;
    auto require = [&](size_t k) {
      if (p.free[k] || recompute[k] || inOnSourceSide(k))
        return;
      recompute[k] = 1;
      worklist.push_back(k);
    };
    for (size_t k = 0; k < n; ++k)
      if (p.neededByBackward[k])
        require(k);
    while (!worklist.empty()) {
      size_t k = worklist.pop_back_val();
      for (Value operand : p.values[k].getDefiningOp()->getOperands())
        if (std::optional<size_t> u = p.lookup(operand))
          require(*u);
    }
    int64_t flops = 0;
    SmallVector<std::pair<int64_t, size_t>> recomputed;
    for (size_t k = 0; k < n; ++k) {
      if (!recompute[k])
        continue;
      int64_t f = MemoryAnalysis::getFlops(p.values[k].getDefiningOp());
      flops += f;
      recomputed.push_back({f, k});
    }
    if (flops <= flopBound || recomputed.empty())
      return recompute;
    // Over the bound: keep the most expensive recomputed ops (the earlier
    // on ties), as many as it takes for the rest to fit, and cut again.
    // One at a time would solve the cut once per op (quadratic on an
    // unrolled LSTM, whose hundreds of equal element-wise ops exceed it).
    llvm::stable_sort(recomputed, [](const auto &a, const auto &b) {
      return a.first > b.first;
    });
    for (auto [f, k] : recomputed) {
      allowed[k] = 0;
      flops -= f;
      if (flops <= flopBound)
        break;
    }
  }
}

/// What rewriting `func` by a recompute set gives.
struct Applied {
  int64_t cloned = 0;
  int64_t clonedBytes = 0;
  int64_t recomputeFlops = 0;
};

/// Clones what `recompute` marks into the backward pass of `func` and
/// points the backward pass at the clones. `analysis` and `p` are those of
/// `func` or of the function `func` is a clone of (values and ops are found
/// by position, so a copy needs no analysis of its own).
Applied applyRecompute(func::FuncOp func, const MemoryAnalysis &analysis,
                       const Partition &p, ArrayRef<char> recompute,
                       bool remarks) {
  Block &block = func.getBody().front();
  // Each clone goes just before the backward op that first needs it
  // (directly or through a later clone), in that order: the order
  // --memopt-schedule runs recomputation in, each when nothing else can
  // run, so a clone lives only from just before its first use.
  llvm::DenseMap<Operation *, int64_t> position;
  SmallVector<Operation *> blockOps;
  position.reserve(analysis.getNumOps());
  blockOps.reserve(analysis.getNumOps());
  for (Operation &op : block.without_terminator()) {
    position[&op] = static_cast<int64_t>(blockOps.size());
    blockOps.push_back(&op);
  }
  assert(static_cast<int64_t>(blockOps.size()) == analysis.getNumOps() &&
         "applyRecompute on a function other than the analysis's or a copy");
  // Value k of `p` in `func`.
  auto valueAt = [&](size_t k) -> Value {
    if (p.defPosition[k] < 0)
      return block.getArgument(p.number[k]);
    return blockOps[p.defPosition[k]]->getResult(p.number[k]);
  };
  // Whether `top`, an op of the block other than the terminator, is
  // forward.
  auto isForward = [&](Operation *top) {
    return analysis.isForwardAt(position.lookup(top));
  };
  int64_t end = static_cast<int64_t>(blockOps.size());
  SmallVector<int64_t> need(p.values.size(), end);
  for (size_t k = p.values.size(); k-- > 0;) {
    if (!recompute[k])
      continue;
    for (Operation *user : valueAt(k).getUsers()) {
      Operation *top = block.findAncestorOpInBlock(*user);
      if (!top || top->hasTrait<mlir::OpTrait::IsTerminator>())
        continue;
      int64_t at = position.lookup(top);
      if (!analysis.isForwardAt(at)) {
        need[k] = std::min(need[k], at);
        continue;
      }
      // A forward user that is recomputed needs it by its own need.
      for (unsigned r = 0, e = top->getNumResults(); r != e; ++r)
        if (size_t u = static_cast<size_t>(p.firstValue[at] + r); recompute[u])
          need[k] = std::min(need[k], need[u]);
    }
  }
  SmallVector<size_t> order;
  for (size_t k = 0; k < p.values.size(); ++k)
    if (recompute[k])
      order.push_back(k);
  llvm::stable_sort(order,
                    [&](size_t a, size_t b) { return need[a] < need[b]; });

  Applied applied;
  OpBuilder b(func.getContext());
  IRMapping mapping;
  SmallVector<std::pair<Value, Value>> replaced;
  llvm::SetVector<Operation *> clones;
  for (size_t k : order) {
    Value result = valueAt(k);
    Operation *op = result.getDefiningOp();
    b.setInsertionPoint(need[k] < end ? blockOps[need[k]]
                                      : block.getTerminator());
    Operation *clone = b.clone(*op, mapping);
    markRecomputed(clone);
    clones.insert(clone);
    replaced.push_back({result, clone->getResult(0)});
    applied.clonedBytes += MemoryAnalysis::getValueBytes(result);
    applied.recomputeFlops += MemoryAnalysis::getFlops(op);
    if (remarks)
      op->emitRemark() << "recomputed in the backward pass instead of kept: "
                       << MemoryAnalysis::getValueBytes(result) << " bytes, "
                       << MemoryAnalysis::getFlops(op) << " FLOPs";
  }
  for (auto [original, copy] : replaced)
    original.replaceUsesWithIf(copy, [&](OpOperand &use) {
      Operation *top = block.findAncestorOpInBlock(*use.getOwner());
      return top && !clones.contains(top) &&
             !top->hasTrait<mlir::OpTrait::IsTerminator>() && !isForward(top);
    });
  applied.cloned = finishClones(block, clones.getArrayRef());
  return applied;
}

/// The step `recompute` gives, as it will run: on a scratch copy of `func`,
/// the clones, then (when `inplace`) --memopt-inplace, --memopt-schedule
/// and --memopt-plan-memory.
struct Measurement {
  /// The step's peak: arguments and everything live in the arena.
  int64_t peakBytes = 0;
  /// What the runtime allocates for the step (MemoryAnalysis::getStepBytes);
  /// measured only under a budget (the only comparison that reads it).
  int64_t stepBytes = 0;
  int64_t savedBytes = 0;
  int64_t recomputeFlops = 0;
};

/// A candidate measured as far as its schedule: the scratch copy of the
/// step it was measured on, with its schedule chosen and not yet applied,
/// kept for a plan if one is needed. `measurement` holds all but
/// `stepBytes` until `exact`.
struct ScheduledCandidate {
  OwningOpRef<func::FuncOp> scratch;
  std::optional<PendingSchedule> schedule;
  Measurement measurement;
  /// `measurement.stepBytes` is the plan's.
  bool exact = false;
  /// The schedule was applied to `scratch` (for a plan).
  bool applied = false;

  /// The least step any plan of it can have (the arena's lower bound with
  /// the arguments and constants after it): over a budget, it cannot fit.
  /// Asked before the schedule is applied.
  int64_t getStepLowerBound(int64_t alignment) const {
    return MemoryAnalysis::getStepBytes(
        *scratch, schedule->getArenaLowerBound(alignment), alignment);
  }
};

/// The step `recompute` gives, as far as its schedule, on a scratch copy of
/// `func`: the clones, recheckGradients after them when `recheck` (within
/// what the clones leave of `flopBound`, at most `maxCount` gradients),
/// --memopt-inplace when `inplace`, and --memopt-schedule's order, chosen
/// and not applied (the peak is the liveness analysis's, from the
/// scheduler's tables; the arena's offsets do not change it). std::nullopt
/// when `recheck` rechecks nothing: the step is then the one measured
/// without. `analysis` and `p` are `func`'s, as it is.
FailureOr<std::optional<ScheduledCandidate>>
scheduleCandidate(func::FuncOp func, const MemoryAnalysis &analysis,
                  const Partition &p, ArrayRef<char> recompute, bool recheck,
                  int64_t flopBound, bool inplace,
                  int64_t maxCount = std::numeric_limits<int64_t>::max()) {
  ScheduledCandidate c;
  c.scratch = cast<func::FuncOp>(func->clone());
  func::FuncOp scratch = *c.scratch;
  // The copy's ops are where `func`'s are: `func`'s analysis finds them.
  Applied applied =
      applyRecompute(scratch, analysis, p, recompute, /*remarks=*/false);
  if (recheck && recheckGradients(scratch, flopBound - applied.recomputeFlops,
                                  /*remarks=*/false, maxCount)
                         .count == 0)
    return std::optional<ScheduledCandidate>();
  c.measurement.savedBytes = MemoryAnalysis(scratch).getSavedForBackwardBytes();
  if (inplace)
    convertInPlace(scratch, /*remarks=*/false);
  FailureOr<PendingSchedule> schedule = PendingSchedule::compute(scratch);
  if (failed(schedule))
    return failure();
  c.measurement.peakBytes = schedule->getPeakBytes();
  c.schedule = std::move(*schedule);
  c.measurement.recomputeFlops = MemoryAnalysis::sumRecomputeFlops(scratch);
  return std::optional<ScheduledCandidate>(std::move(c));
}

/// Plans `c`'s step (its schedule applied first): its exact step bytes, or
/// false without them when the arena exceeds `limit` (the planner stops
/// there; within it, the plan is the one without a limit). Only the arena's
/// size: the scratch copy's IR is not written.
FailureOr<bool> planCandidate(ScheduledCandidate &c, int64_t alignment,
                              uint64_t limit) {
  if (!c.applied) {
    c.schedule->apply();
    c.applied = true;
  }
  FailureOr<std::optional<int64_t>> arena =
      planArenaBytes(*c.scratch, alignment, limit);
  if (failed(arena))
    return failure();
  if (!*arena)
    return false;
  c.measurement.stepBytes =
      MemoryAnalysis::getStepBytes(*c.scratch, **arena, alignment);
  c.exact = true;
  return true;
}

/// The step `recompute` gives, as it will run (see `scheduleCandidate`),
/// planned with --memopt-plan-memory when `planned` (the step's bytes are
/// needed; the plan is the measurement's costliest part). Where the step is
/// `func` as it is, measured without a copy, its schedule goes to
/// `keepAsIs` if given.
FailureOr<std::optional<Measurement>>
measure(func::FuncOp func, const MemoryAnalysis &analysis, const Partition &p,
        ArrayRef<char> recompute, bool recheck, int64_t flopBound, bool inplace,
        int64_t alignment, bool planned,
        int64_t maxCount = std::numeric_limits<int64_t>::max(),
        std::optional<PendingSchedule> *keepAsIs = nullptr) {
  // The step as it is (nothing recomputed, nothing rechecked), measured
  // without in place or a plan, only reads `func` (the scheduler erases
  // frees of an earlier schedule, so not with those): no copy of it, which
  // on a 100k-op step costs more than the measurement itself. Other
  // candidates' copies are made from it concurrently.
  if (!recheck && !inplace && !planned &&
      llvm::none_of(recompute, [](char c) { return c != 0; }) &&
      llvm::none_of(func.front(),
                    [](Operation &op) { return isa<FreeOp>(op); })) {
    FailureOr<PendingSchedule> schedule = PendingSchedule::compute(func);
    if (failed(schedule))
      return failure();
    Measurement m;
    m.savedBytes = analysis.getSavedForBackwardBytes();
    m.peakBytes = schedule->getPeakBytes();
    m.recomputeFlops = MemoryAnalysis::sumRecomputeFlops(func);
    if (keepAsIs)
      *keepAsIs = std::move(*schedule);
    return std::optional<Measurement>(m);
  }
  FailureOr<std::optional<ScheduledCandidate>> c = scheduleCandidate(
      func, analysis, p, recompute, recheck, flopBound, inplace, maxCount);
  if (failed(c))
    return failure();
  if (!*c)
    return std::optional<Measurement>();
  if (planned && failed(planCandidate(**c, alignment,
                                      std::numeric_limits<uint64_t>::max())))
    return failure();
  return std::optional<Measurement>((*c)->measurement);
}

/// The FLOPs gradient rechecks may take under step-recompute=`fraction`:
/// what the step's recomputation so far leaves of that many forward passes.
int64_t stepRecheckBound(double fraction, int64_t forwardFlops,
                         int64_t recomputed) {
  double allowed = fraction * static_cast<double>(forwardFlops) -
                   static_cast<double>(recomputed);
  if (!(allowed > 0))
    return 0;
  return allowed >= static_cast<double>(std::numeric_limits<int64_t>::max())
             ? std::numeric_limits<int64_t>::max()
             : static_cast<int64_t>(allowed);
}

} // namespace

/// Whether `block` checks its gradients for overflow (dynamic loss
/// scaling).
static bool hasLossScaleCheck(Block &block) {
  return llvm::any_of(block.without_terminator(),
                      [](Operation &op) { return isa<FoundInfOp>(op); });
}

/// Whether a cheap op of `block` reads only arguments and constants: the
/// first op of any chain `Partition::fromArguments` marks (a parameter's
/// f16 copy), forward or not. Without one the estimate's cut recomputes
/// nothing.
static bool hasArgumentCopies(Block &block) {
  auto isFree = [&](Value v) {
    if (auto arg = dyn_cast<BlockArgument>(v))
      return arg.getOwner() == &block;
    Operation *def = v.getDefiningOp();
    return def && def->hasTrait<mlir::OpTrait::ConstantLike>();
  };
  return llvm::any_of(block.without_terminator(), [&](Operation &op) {
    return !op.hasTrait<mlir::OpTrait::ConstantLike>() && isCheap(&op) &&
           llvm::all_of(op.getOperands(), isFree);
  });
}

void memopt::applyPartitionEstimate(func::FuncOp func, bool underBudget,
                                    double stepRecompute) {
  Block &block = func.getBody().front();
  if (findInPlaceOverIntermediate(block))
    return;
  // Nothing to recompute and no gradient to recheck (rechecks need the
  // loss scale's one overflow check): the step stays as it is, without
  // the analysis and the cut (a fifth of a checkpoint candidate's
  // measurement on an f32 ResNet).
  if (!hasArgumentCopies(block) && !hasLossScaleCheck(block))
    return;
  int64_t forwardFlops;
  {
    MemoryAnalysis analysis(func);
    Partition p = Partition::build(func, analysis);
    if (!p.hasBackward)
      return;
    forwardFlops = p.forwardFlops;
    // --memopt-partition's default max-recompute.
    constexpr double kMaxRecompute = 0.05;
    SmallVector<char> copies =
        solve(p, p.fromArguments,
              static_cast<int64_t>(kMaxRecompute *
                                   static_cast<double>(p.forwardFlops)));
    if (llvm::any_of(copies, [](char c) { return c != 0; }))
      applyRecompute(func, analysis, p, copies, /*remarks=*/false);
  }
  int64_t bound =
      underBudget ? std::numeric_limits<int64_t>::max()
                  : stepRecheckBound(stepRecompute, forwardFlops,
                                     MemoryAnalysis::sumRecomputeFlops(func));
  if (bound > 0)
    recheckGradients(func, bound, /*remarks=*/false);
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {

struct MemOptPartitionPass
    : public memopt::impl::MemOptPartitionBase<MemOptPartitionPass> {
  using MemOptPartitionBase::MemOptPartitionBase;

  void runOnOperation() override {
    if (failed(verifyFlopFractionOption(getOperation(), "memopt-partition",
                                        "max-recompute", maxRecompute)) ||
        failed(verifyFlopFractionOption(getOperation(), "memopt-partition",
                                        "step-recompute", stepRecompute)))
      return signalPassFailure();
    if (failed(verifyAlignmentOption(getOperation(), "memopt-partition",
                                     alignment)))
      return signalPassFailure();
    FailureOr<std::optional<int64_t>> parsed =
        parseBudgetOption(getOperation(), "memopt-partition", budget);
    if (failed(parsed))
      return signalPassFailure();
    budgetBytes = *parsed;
    SmallVector<func::FuncOp> graphs;
    if (failed(collectMemOptGraphs(getOperation(), "memopt-partition", graphs)))
      return signalPassFailure();
    changed = false;
    for (func::FuncOp func : graphs)
      if (failed(partition(func)))
        return signalPassFailure();
    // Unchanged IR is not verified again by the pass manager.
    if (!changed)
      markAllAnalysesPreserved();
  }

  LogicalResult partition(func::FuncOp func);

  std::optional<int64_t> budgetBytes;
  /// Whether a function was rewritten (recomputation or rechecks).
  bool changed = false;
};

LogicalResult MemOptPartitionPass::partition(func::FuncOp func) {
  Block &block = func.getBody().front();
  // In-place decisions assume which values the backward pass keeps; an
  // optimizer update writing over its parameter argument does not.
  if (Operation *op = findInPlaceOverIntermediate(block))
    return op->emitOpError()
           << "is in place (memopt.inplace): --memopt-partition runs before "
              "--memopt-inplace, whose decisions assume which values the "
              "backward pass keeps";

  MemoryAnalysis analysis(func);
  Partition p = Partition::build(func, analysis);
  // An inference graph, or a training graph before --memopt-autodiff: no
  // backward pass to partition.
  if (!p.hasBackward)
    return success();
  int64_t flopBound =
      static_cast<int64_t>(maxRecompute * static_cast<double>(p.forwardFlops));

  // Candidates: the minimum cut over every cheap op, the one over copies of
  // arguments only (a parameter's f16 cast), and today's saved set. Each
  // is measured as it will run; the least peak wins, then the fewest bytes
  // kept, then the fewest FLOPs recomputed.
  SmallVector<SmallVector<char>> candidates;
  candidates.push_back(SmallVector<char>(p.values.size(), 0));
  candidates.push_back(solve(p, p.cheap, flopBound));
  candidates.push_back(solve(p, p.fromArguments, flopBound));
  size_t best = 0;
  Measurement bestMeasurement;
  // Under a budget, a candidate that fits beats one that does not; among
  // those that do not, the smallest step, which --memopt-plan-memory's
  // refusal then names and which, given as the budget, fits.
  auto key = [&](const Measurement &x) {
    bool fits = !budgetBytes || x.stepBytes <= *budgetBytes;
    return std::make_tuple(!fits, fits ? x.peakBytes : x.stepBytes,
                           x.savedBytes, x.recomputeFlops);
  };
  // Each candidate also with gradients rechecked, under loss scaling: it
  // frees what held gradients kept alive, which can change which
  // candidate is best.
  bool lossScaling = hasLossScaleCheck(block);
  bool bestRecheck = false;
  // Every (candidate, recheck) pair, the same candidate twice measured once,
  // measured on the context's threads (each on its own scratch copy of
  // `func`, which they only read), then compared in this order.
  SmallVector<std::pair<size_t, bool>> jobs;
  for (auto [i, recompute] : llvm::enumerate(candidates)) {
    if (llvm::is_contained(ArrayRef(candidates).take_front(i), recompute))
      continue;
    for (bool recheck : {false, true})
      if (!recheck || lossScaling)
        jobs.push_back({i, recheck});
  }
  // One candidate (every cut keeps what the step keeps today) and nothing
  // that reads its measurement (rechecks under loss scaling, the remark):
  // the step stays as it is, and measuring it would only cost time.
  if (jobs.size() == 1 && !lossScaling && !remarks)
    return success();
  SmallVector<std::optional<Measurement>> measured(jobs.size());
  // The step as it is, if it stays so, is scheduled as measured (see
  // CachedSchedule): only the one job measuring it writes this.
  std::optional<PendingSchedule> asIsSchedule;
  // The first job (the step as it is) with the least key wins.
  auto choose = [&] {
    for (auto [job, m] : llvm::zip_equal(jobs, measured)) {
      auto [i, recheck] = job;
      if (!m)
        continue;
      if (i == 0 && !recheck ? true : key(*m) < key(bestMeasurement)) {
        best = i;
        bestRecheck = recheck;
        bestMeasurement = *m;
      }
    }
  };
  if (budgetBytes) {
    // Under a budget a job's key needs its plan (the step's bytes) only to
    // say whether it fits, or, when none fits, how far over it is. Every
    // job is scheduled (concurrently), then planned in the order of the
    // key among jobs that fit (least peak, then bytes kept, then FLOPs,
    // then the job), skipping those whose least possible step is over the
    // budget, until one fits: that one wins, as it would with every job
    // planned. Only when none fits are the others planned too. A plan is
    // most of a measurement (on a 100k-op ResNet, 1.4 s of the 1.9).
    SmallVector<std::optional<ScheduledCandidate>> scheduled(jobs.size());
    if (failed(failableParallelForEachN(
            func.getContext(), 0, jobs.size(), [&](size_t j) -> LogicalResult {
              auto [i, recheck] = jobs[j];
              FailureOr<std::optional<ScheduledCandidate>> c =
                  scheduleCandidate(func, analysis, p, candidates[i], recheck,
                                    flopBound, measureInPlace);
              if (failed(c))
                return failure();
              scheduled[j] = std::move(*c);
              return success();
            })))
      return failure();
    SmallVector<size_t> order;
    for (size_t j = 0, e = jobs.size(); j != e; ++j)
      if (scheduled[j])
        order.push_back(j);
    auto fitKey = [&](size_t j) {
      const Measurement &m = scheduled[j]->measurement;
      return std::make_tuple(m.peakBytes, m.savedBytes, m.recomputeFlops, j);
    };
    llvm::sort(order,
               [&](size_t a, size_t b) { return fitKey(a) < fitKey(b); });
    std::optional<size_t> winner;
    for (size_t j : order) {
      ScheduledCandidate &c = *scheduled[j];
      if (c.getStepLowerBound(alignment) > *budgetBytes)
        continue;
      FailureOr<bool> within =
          planCandidate(c, alignment, static_cast<uint64_t>(*budgetBytes));
      if (failed(within))
        return failure();
      if (*within && c.measurement.stepBytes <= *budgetBytes) {
        winner = j;
        break;
      }
    }
    if (winner) {
      best = jobs[*winner].first;
      bestRecheck = jobs[*winner].second;
      bestMeasurement = scheduled[*winner]->measurement;
    } else {
      if (failed(failableParallelForEachN(
              func.getContext(), 0, order.size(),
              [&](size_t k) -> LogicalResult {
                ScheduledCandidate &c = *scheduled[order[k]];
                if (c.exact)
                  return success();
                return planCandidate(c, alignment,
                                     std::numeric_limits<uint64_t>::max());
              })))
        return failure();
      for (size_t j : order)
        measured[j] = scheduled[j]->measurement;
      choose();
    }
  } else {
    if (failed(failableParallelForEachN(
            func.getContext(), 0, jobs.size(), [&](size_t j) -> LogicalResult {
              auto [i, recheck] = jobs[j];
              FailureOr<std::optional<Measurement>> m =
                  measure(func, analysis, p, candidates[i], recheck, flopBound,
                          measureInPlace, alignment, /*planned=*/false,
                          std::numeric_limits<int64_t>::max(),
                          i == 0 && !recheck ? &asIsSchedule : nullptr);
              if (failed(m))
                return failure();
              measured[j] = *m;
              return success();
            })))
      return failure();
    choose();
  }
  // Asking for more rechecks than max-recompute allows: a budget the step
  // does not fit (the fewest gradients that make it fit, whatever they
  // cost), or step-recompute (when that makes the step smaller).
  int64_t recheckBound = flopBound;
  int64_t recheckCount = std::numeric_limits<int64_t>::max();
  auto tryRecheck = [&](int64_t bound, int64_t count) -> FailureOr<bool> {
    FailureOr<std::optional<Measurement>> m =
        measure(func, analysis, p, candidates[best], /*recheck=*/true, bound,
                measureInPlace, alignment, budgetBytes.has_value(), count);
    if (failed(m))
      return failure();
    if (!*m || !(key(**m) < key(bestMeasurement)))
      return false;
    bestRecheck = true;
    bestMeasurement = **m;
    recheckBound = bound;
    recheckCount = count;
    return true;
  };
  bool fits = !budgetBytes || bestMeasurement.stepBytes <= *budgetBytes;
  if (lossScaling && !fits) {
    constexpr int64_t kAll = std::numeric_limits<int64_t>::max();
    FailureOr<bool> better = tryRecheck(kAll, kAll);
    if (failed(better))
      return failure();
    // The fewest gradients, largest savings first, that still fit.
    if (*better && bestMeasurement.stepBytes <= *budgetBytes) {
      RecheckedGradients all;
      {
        auto scratch = cast<func::FuncOp>(func->clone());
        llvm::scope_exit cleanup([&] { scratch->erase(); });
        all = recheckGradients(scratch, kAll, /*remarks=*/false);
      }
      int64_t lo = 0, hi = all.count;
      while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        FailureOr<std::optional<Measurement>> m =
            measure(func, analysis, p, candidates[best], /*recheck=*/true, kAll,
                    measureInPlace, alignment, budgetBytes.has_value(), mid);
        if (failed(m))
          return failure();
        if (*m && (*m)->stepBytes <= *budgetBytes) {
          hi = mid;
          bestMeasurement = **m;
          recheckCount = mid;
        } else {
          lo = mid;
        }
      }
    }
  } else if (lossScaling && stepRecompute > 0) {
    int64_t bound = stepRecheckBound(stepRecompute, p.forwardFlops,
                                     analysis.getRecomputeFlops());
    if (bound > flopBound &&
        failed(tryRecheck(bound, std::numeric_limits<int64_t>::max())))
      return failure();
  }
  // Keeping what the step keeps today leaves it as it is, and
  // --memopt-schedule can apply the schedule measured for it (when this
  // pass runs on the function itself, whose analyses the pass manager
  // keeps while nothing changes it).
  Applied applied;
  bool asIs = llvm::none_of(candidates[best], [](char c) { return c != 0; });
  if (!asIs)
    applied = applyRecompute(func, analysis, p, candidates[best], remarks);
  else if (!bestRecheck && asIsSchedule &&
           func.getOperation() == getOperation())
    getAnalysis<CachedSchedule>().schedule = std::move(asIsSchedule);
  numRecomputed += applied.cloned;
  changed |= applied.cloned != 0;

  if (bestRecheck) {
    RecheckedGradients r = recheckGradients(
        func, recheckBound - applied.recomputeFlops, remarks, recheckCount);
    numRecheckedGradients += r.count;
    applied.recomputeFlops += r.flops;
    changed |= r.count != 0;
  }
  if (remarks) {
    InFlightDiagnostic remark = func.emitRemark();
    remark << "memopt-partition: " << applied.cloned
           << " ops recomputed in the backward pass (" << applied.recomputeFlops
           << " FLOPs, ";
    if (recheckBound == std::numeric_limits<int64_t>::max())
      remark << "gradients rechecked to fit the budget";
    else
      remark << "bound " << recheckBound;
    remark << "), " << applied.clonedBytes
           << " bytes no longer kept; step peak " << bestMeasurement.peakBytes
           << " bytes";
  }
  return success();
}

} // namespace
