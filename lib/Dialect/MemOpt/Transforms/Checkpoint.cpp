//===- Checkpoint.cpp - rematerialisation of saved activations ------------===//
//
// `--memopt-checkpoint`: drops forward values the backward pass would keep
// and recomputes them, right before the backward needs them, from a few kept
// checkpoints.
//
// 1. The forward pass (the ops the loss depends on, constants aside) is cut
//    into a chain of stages at its narrowest points: op boundaries that the
//    fewest forward values cross (one value in a chain or at a ResNet block
//    output: the articulation points of the graph; two, h and c, in an
//    unrolled LSTM, whose only single-value boundary is before its head),
//    widening the cut until it splits the chain in about sqrt(n) places.
// 2. A checkpoint schedule (CheckpointSchedule.h: Chen et al.'s square-root
//    segments, or the binomial Revolve schedule) says which stages to
//    recompute, from which version of their input cut.
// 3. Each action clones the stage's ops that its needs reach, marks them
//    `memopt.recompute`, and the backward ops of the stage read the clones;
//    the originals then die in the forward pass. Clones are exact copies
//    (dropout regenerates its mask from its seed; a batch-norm clone's
//    running statistics are never used, so the statistics update once).
//
// The scheduler runs recomputation on demand, so the pass places clones
// where the current order needs them and leaves the rest to
// `--memopt-schedule`. `strategy=budget` measures each candidate exactly as
// the pipeline will run it: on a scratch copy, checkpointed, scheduled and
// planned: arguments, constants and the planned arena.
//
//===----------------------------------------------------------------------===//

#include "memopt/Analysis/CheckpointSchedule.h"
#include "memopt/Analysis/MemoryAnalysis.h"
#include "memopt/Analysis/RematILP.h"
#include "memopt/Dialect/MemOpt/IR/MemOptDialect.h"
#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"
#include "memopt/Dialect/MemOpt/Transforms/ForeignIR.h"
#include "memopt/Dialect/MemOpt/Transforms/Passes.h"
#include "memopt/Dialect/MemOpt/Transforms/Transforms.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Threading.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>
#include <map>

#define DEBUG_TYPE "memopt-checkpoint"

namespace memopt {
#define GEN_PASS_DEF_MEMOPTCHECKPOINT
#include "memopt/Dialect/MemOpt/Transforms/Passes.h.inc"
} // namespace memopt

using namespace mlir;
using namespace memopt;

namespace {

//===----------------------------------------------------------------------===//
// The stage chain
//===----------------------------------------------------------------------===//

bool isConstant(Operation *op) {
  return op->hasTrait<mlir::OpTrait::ConstantLike>();
}

/// The forward pass as a chain of stages.
struct StageChain {
  /// The forward ops (constants aside), in block order.
  SmallVector<Operation *> ops;
  /// Forward ops of each stage, in block order.
  SmallVector<SmallVector<Operation *>> stages;
  /// cuts[j]: the forward values crossing from stage j to later stages
  /// (j < stages.size() - 1).
  SmallVector<SmallVector<Value>> cuts;
  /// saved[j]: values of stage j outside cuts[j] that a non-forward op
  /// reads (what the stage's backward needs).
  SmallVector<SmallVector<Value>> saved;
  /// Bytes of stage j's values the backward reads (saved and cut).
  SmallVector<int64_t> weights;
  /// Values crossing each cut.
  int64_t width = 0;
  int64_t forwardFlops = 0;
  int64_t forwardOps = 0;
  /// The forward ops, `fixed` included.
  llvm::DenseSet<Operation *> forward;
  /// Forward ops computed from parameters, state and constants alone (the
  /// f16 copies of weights under mixed precision): like the arguments they
  /// are computed once and read anywhere, so they are in no stage.
  llvm::DenseSet<Operation *> fixed;

  int64_t size() const { return static_cast<int64_t>(stages.size()); }
  /// Whether every stage is one op: a plain chain of ops.
  bool isPlainChain() const {
    return llvm::all_of(stages, [](const auto &s) { return s.size() == 1; });
  }

  static StageChain build(func::FuncOp func);
  /// The ops of stage `stage` that computing `values` needs, in order.
  SmallVector<Operation *> closure(int64_t stage, ArrayRef<Value> values) const;
  /// The FLOPs of running `schedule`'s clones.
  int64_t flops(const CheckpointSchedule &schedule) const;
  SmallVector<Value> actionTargets(const StageAction &action) const;
  /// FLOPs of the forward ops of stages [0, prefix).
  int64_t prefixFlops(int64_t prefix) const {
    int64_t total = 0;
    for (int64_t j = 0; j < prefix && j < size(); ++j)
      for (Operation *op : stages[j])
        total += MemoryAnalysis::getFlops(op);
    return total;
  }
  /// The binomial programme over this chain, with its stages' mean advance
  /// and reverse FLOPs as costs.
  RevolveTable revolveTable(int64_t maxSlots) const;
};

/// Whether `op` reads a forward value for the backward pass: any op that is
/// not forward, not a clone and not the terminator.
bool isBackwardUser(Operation *op, const llvm::DenseSet<Operation *> &forward) {
  return !forward.contains(op) &&
         !op->hasTrait<mlir::OpTrait::IsTerminator>() &&
         !op->hasAttr(kRecomputeAttrName);
}

StageChain StageChain::build(func::FuncOp func) {
  StageChain chain;
  MemoryAnalysis analysis(func);
  SmallVector<Operation *> &ops = chain.ops;
  DenseMap<Operation *, int64_t> position;
  for (Operation *op : analysis.getOps()) {
    if (!analysis.isForward(op) || isConstant(op))
      continue;
    bool fromArgumentsOnly = llvm::all_of(op->getOperands(), [&](Value v) {
      if (auto arg = dyn_cast<BlockArgument>(v))
        return func.getArgAttr(arg.getArgNumber(),
                               MemOptDialect::kParamAttrName) ||
               func.getArgAttr(arg.getArgNumber(),
                               MemOptDialect::kStateAttrName);
      Operation *def = v.getDefiningOp();
      return isConstant(def) || chain.fixed.contains(def);
    });
    if (fromArgumentsOnly && op->getNumOperands() > 0) {
      chain.fixed.insert(op);
      chain.forward.insert(op);
      continue;
    }
    position[op] = static_cast<int64_t>(ops.size());
    ops.push_back(op);
    chain.forward.insert(op);
    chain.forwardFlops += MemoryAnalysis::getFlops(op);
  }
  chain.forwardOps = static_cast<int64_t>(ops.size());
  if (ops.empty())
    return chain;
  int64_t n = static_cast<int64_t>(ops.size());

  // Values computed from the data arguments and constants alone (an LSTM's
  // per-step input slices) are available anywhere, like the arguments: they
  // neither cross boundaries nor need recomputing from a cut. Anything a
  // parameter reaches is a real activation.
  llvm::DenseSet<Operation *> inputOnly;
  for (Operation *op : ops)
    if (llvm::all_of(op->getOperands(), [&](Value v) {
          if (auto arg = dyn_cast<BlockArgument>(v))
            return !func.getArgAttr(arg.getArgNumber(),
                                    MemOptDialect::kParamAttrName);
          Operation *def = v.getDefiningOp();
          return isConstant(def) || inputOnly.contains(def);
        }))
      inputOnly.insert(op);

  // Values crossing each op boundary b (between positions b and b+1).
  SmallVector<int64_t> delta(ops.size() + 1, 0);
  DenseMap<Value, int64_t> lastForwardUse;
  for (Operation *op : ops)
    for (Value r : op->getResults()) {
      int64_t last = position[op];
      if (!inputOnly.contains(op))
        for (Operation *user : r.getUsers())
          if (auto it = position.find(user); it != position.end())
            last = std::max(last, it->second);
      lastForwardUse[r] = last;
      if (last > position[op]) {
        ++delta[position[op]];
        --delta[last];
      }
    }
  SmallVector<int64_t> crossing(ops.size(), 0);
  int64_t running = 0;
  int64_t narrowest = std::numeric_limits<int64_t>::max();
  for (int64_t b = 0; b + 1 < n; ++b) {
    running += delta[b];
    crossing[b] = running;
    narrowest = std::min(narrowest, running);
  }
  // The cut width: the narrowest that still splits the chain in enough
  // places (about sqrt(n) boundaries). A ResNet has width-1 boundaries at
  // every block output; an unrolled LSTM's one width-1 boundary is before
  // its head, and its time steps are split where h and c cross (width 2).
  if (n > 1) {
    std::map<int64_t, int64_t> histogram;
    for (int64_t b = 0; b + 1 < n; ++b)
      ++histogram[crossing[b]];
    int64_t wanted = std::max<int64_t>(
        2, static_cast<int64_t>(std::sqrt(static_cast<double>(n))));
    int64_t count = 0;
    for (auto [width, boundaries] : histogram) {
      narrowest = width;
      count += boundaries;
      if (count >= wanted)
        break;
    }
  }
  chain.width = n > 1 ? narrowest : 0;

  // A stage ends at a narrowest boundary where the backward pass reads a
  // crossing value; a boundary it reads nothing at (a linear layer's output
  // before its activation) would only add a stage with nothing to save.
  SmallVector<int64_t> readDelta(ops.size() + 1, 0);
  for (Operation *op : ops)
    for (Value r : op->getResults()) {
      int64_t def = position[op], last = lastForwardUse[r];
      if (last > def && llvm::any_of(r.getUsers(), [&](Operation *u) {
            return isBackwardUser(u, chain.forward);
          })) {
        ++readDelta[def];
        --readDelta[last];
      }
    }
  SmallVector<bool> readAt(ops.size(), false);
  running = 0;
  for (int64_t b = 0; b + 1 < n; ++b) {
    running += readDelta[b];
    readAt[b] = running > 0;
  }
  auto backwardReadsCrossing = [&](int64_t b) { return readAt[b]; };
  chain.stages.emplace_back();
  for (int64_t p = 0; p < n; ++p) {
    chain.stages.back().push_back(ops[p]);
    if (p + 1 < n && crossing[p] <= narrowest && backwardReadsCrossing(p))
      chain.stages.emplace_back();
  }
  int64_t numStages = chain.size();
  chain.cuts.resize(numStages);
  chain.saved.resize(numStages);
  chain.weights.assign(numStages, 0);
  int64_t stageEnd = -1;
  for (int64_t j = 0; j < numStages; ++j) {
    stageEnd += static_cast<int64_t>(chain.stages[j].size());
    for (Operation *op : chain.stages[j])
      for (Value r : op->getResults()) {
        bool crosses = j + 1 < numStages && lastForwardUse[r] > stageEnd;
        bool readByBackward = llvm::any_of(r.getUsers(), [&](Operation *u) {
          return isBackwardUser(u, chain.forward);
        });
        if (crosses)
          chain.cuts[j].push_back(r);
        else if (readByBackward)
          chain.saved[j].push_back(r);
        if (readByBackward)
          chain.weights[j] += MemoryAnalysis::getValueBytes(r);
      }
  }
  return chain;
}

SmallVector<Operation *> StageChain::closure(int64_t stage,
                                             ArrayRef<Value> values) const {
  const SmallVector<Operation *> &stageOps = stages[stage];
  llvm::SmallPtrSet<Operation *, 16> inStage(stageOps.begin(), stageOps.end());
  llvm::SmallPtrSet<Operation *, 16> needed;
  SmallVector<Operation *> worklist;
  for (Value v : values)
    if (Operation *def = v.getDefiningOp(); def && inStage.contains(def))
      if (needed.insert(def).second)
        worklist.push_back(def);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp();
          def && inStage.contains(def) && needed.insert(def).second)
        worklist.push_back(def);
  }
  SmallVector<Operation *> ordered;
  for (Operation *op : stageOps)
    if (needed.contains(op))
      ordered.push_back(op);
  return ordered;
}

SmallVector<Value> StageChain::actionTargets(const StageAction &action) const {
  SmallVector<Value> targets;
  if (action.reverse)
    llvm::append_range(targets, saved[action.stage]);
  if (action.produceCut)
    llvm::append_range(targets, cuts[action.stage]);
  return targets;
}

RevolveTable StageChain::revolveTable(int64_t maxSlots) const {
  int64_t n = size();
  double advance = 0, reverse = 0;
  auto flopsOf = [&](int64_t stage, ArrayRef<Value> values) {
    double total = 0;
    for (Operation *op : closure(stage, values))
      total += static_cast<double>(MemoryAnalysis::getFlops(op));
    return total;
  };
  for (int64_t j = 0; j < n; ++j) {
    advance += flopsOf(j, cuts[j]);
    reverse += flopsOf(j, saved[j]);
  }
  advance /= std::max<int64_t>(n - 1, 1);
  reverse /= std::max<int64_t>(n, 1);
  // Integer costs on a 0..1000 scale.
  double scale = std::max(advance, reverse);
  int64_t a = 1, r = 1;
  if (scale > 0) {
    a = std::max<int64_t>(1, std::llround(1000.0 * advance / scale));
    r = std::llround(1000.0 * reverse / scale);
  }
  return RevolveTable(n, maxSlots, a, r);
}

int64_t StageChain::flops(const CheckpointSchedule &schedule) const {
  int64_t total = 0;
  for (const StageAction &action : schedule.actions)
    for (Operation *op : closure(action.stage, actionTargets(action)))
      total += MemoryAnalysis::getFlops(op);
  return total;
}

//===----------------------------------------------------------------------===//
// Rewriting
//===----------------------------------------------------------------------===//

/// Clones the stages `schedule` recomputes and points the backward pass at
/// the clones. Returns the number of ops cloned (after removing clones
/// nothing reads).
int64_t applySchedule(func::FuncOp func, const StageChain &chain,
                      const CheckpointSchedule &schedule) {
  Block &block = func.getBody().front();
  Operation *terminator = block.getTerminator();
  OpBuilder b(terminator);

  SmallVector<SmallVector<Value>> versions(schedule.actions.size());
  SmallVector<SmallVector<Operation *>> clones(schedule.actions.size());
  // Original value -> the clone its backward uses read.
  llvm::MapVector<Value, Value> bindings;
  for (auto [index, action] : llvm::enumerate(schedule.actions)) {
    int64_t j = action.stage;
    IRMapping mapping;
    if (j > 0 && action.source >= 0)
      for (auto [original, version] :
           llvm::zip(chain.cuts[j - 1], versions[action.source]))
        mapping.map(original, version);
    for (Operation *op : chain.closure(j, chain.actionTargets(action))) {
      Operation *clone = b.clone(*op, mapping);
      markRecomputed(clone);
      clones[index].push_back(clone);
    }
    if (action.reverse) {
      for (Value v : chain.saved[j])
        bindings[v] = mapping.lookup(v);
      if (j > 0 && action.source >= 0)
        for (auto [original, version] :
             llvm::zip(chain.cuts[j - 1], versions[action.source]))
          bindings[original] = version;
    }
    if (action.produceCut)
      for (Value v : chain.cuts[j])
        versions[index].push_back(mapping.lookup(v));
  }
  for (auto [original, clone] : bindings)
    original.replaceUsesWithIf(clone, [&](OpOperand &use) {
      return isBackwardUser(use.getOwner(), chain.forward);
    });

  // Place each action's clones before the first op (not itself a clone)
  // that needs them or anything after them, so the order is already lazy.
  DenseMap<Operation *, int64_t> position;
  for (auto [i, op] : llvm::enumerate(block.getOperations()))
    position[&op] = static_cast<int64_t>(i);
  int64_t none = std::numeric_limits<int64_t>::max();
  SmallVector<int64_t> firstNeed(clones.size(), none);
  for (auto [index, list] : llvm::enumerate(clones))
    for (Operation *clone : list)
      for (Operation *user : clone->getUsers())
        if (!user->hasAttr(kRecomputeAttrName))
          firstNeed[index] = std::min(firstNeed[index], position[user]);
  SmallVector<Operation *> byPosition(block.getOperations().size());
  for (auto &[op, p] : position)
    byPosition[p] = op;
  int64_t suffix = none;
  SmallVector<int64_t> insertAt(clones.size(), none);
  for (size_t k = clones.size(); k-- > 0;) {
    suffix = std::min(suffix, firstNeed[k]);
    insertAt[k] = suffix;
  }
  for (auto [index, list] : llvm::enumerate(clones))
    if (insertAt[index] != none)
      for (Operation *clone : list)
        clone->moveBefore(byPosition[insertAt[index]]);

  SmallVector<Operation *> all;
  for (auto &list : clones)
    llvm::append_range(all, list);
  return finishClones(block, all);
}

//===----------------------------------------------------------------------===//
// The exact keep/recompute model (RematILP.h)
//===----------------------------------------------------------------------===//

/// The forward ops and the backward timeline of `func`, in the model the
/// ILP solves: sizes and FLOPs per op, when the backward reads each op's
/// results, and the other memory live at every backward op (from the memory
/// analysis of the current order).
RematProblem buildRematProblem(func::FuncOp func, const StageChain &chain) {
  MemoryAnalysis analysis(func);
  RematProblem problem;
  DenseMap<Operation *, int> forwardIndex;
  for (auto [i, op] : llvm::enumerate(chain.ops))
    forwardIndex[op] = static_cast<int>(i);
  DenseMap<Operation *, int> time;
  SmallVector<int64_t> backwardOps;
  // Frees (in a scheduled step) only end lifetimes, which the live bytes
  // already show; they are not steps of the timeline.
  for (Operation *op : analysis.getOps())
    if (isBackwardUser(op, chain.forward) && !isa<FreeOp>(op)) {
      time[op] = static_cast<int>(backwardOps.size());
      backwardOps.push_back(analysis.getIndex(op));
    }
  problem.numBackwardSteps = std::max<int>(1, backwardOps.size());

  // Memory of forward buffers live at each op, to subtract from the live
  // bytes: what remains is the base the model adds kept values to.
  int64_t numOps = analysis.getNumOps();
  SmallVector<int64_t> delta(numOps + 1, 0);
  for (const ValueInfo &info : analysis.getValues()) {
    if (info.isArgument() || info.isAlias())
      continue;
    Operation *def = info.value.getDefiningOp();
    // Fixed values (weight copies) are not in the model: they stay in the
    // base, like the parameters they copy.
    if (!chain.forward.contains(def) || chain.fixed.contains(def))
      continue;
    delta[info.def] += info.bytes;
    delta[std::min(info.end, numOps - 1) + 1] -= info.bytes;
  }
  SmallVector<int64_t> forwardLive(numOps, 0);
  int64_t running = 0;
  for (int64_t i = 0; i < numOps; ++i) {
    running += delta[i];
    forwardLive[i] = running;
  }
  auto base = [&](int64_t index) {
    return analysis.getLiveBytes(index) - forwardLive[index];
  };
  for (int64_t index : backwardOps)
    problem.baseBytes.push_back(base(index));
  if (problem.baseBytes.empty())
    problem.baseBytes.push_back(0);
  problem.forwardEndBytes = base(analysis.getIndex(chain.ops.back()));

  for (Operation *op : chain.ops) {
    RematOp r;
    r.flops = MemoryAnalysis::getFlops(op);
    for (Value result : op->getResults()) {
      if (!MemoryAnalysis::aliasOf(result))
        r.bytes += MemoryAnalysis::getValueBytes(result);
      for (Operation *user : result.getUsers())
        if (auto it = time.find(user); it != time.end()) {
          r.firstBackwardUse = r.firstBackwardUse < 0
                                   ? it->second
                                   : std::min(r.firstBackwardUse, it->second);
          r.lastBackwardUse = std::max(r.lastBackwardUse, it->second);
        }
    }
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        if (auto it = forwardIndex.find(def); it != forwardIndex.end())
          r.operands.push_back(it->second);
    problem.ops.push_back(std::move(r));
  }
  return problem;
}

/// Clones every op `recompute` marks once, in the order the backward pass
/// first needs it, and points the backward pass at the clones. Returns the
/// number of ops cloned.
int64_t applyKeepSet(func::FuncOp func, const StageChain &chain,
                     const RematProblem &problem,
                     const std::vector<char> &recompute) {
  Block &block = func.getBody().front();
  int n = static_cast<int>(chain.ops.size());
  // When each clone is first needed: by the backward pass directly or by a
  // later clone.
  std::vector<int> need(n, std::numeric_limits<int>::max());
  std::vector<std::vector<int>> users(n);
  for (int i = 0; i < n; ++i)
    for (int p : problem.ops[i].operands)
      users[p].push_back(i);
  for (int i = n - 1; i >= 0; --i) {
    if (!recompute[i])
      continue;
    if (problem.ops[i].hasBackwardUse())
      need[i] = problem.ops[i].firstBackwardUse;
    for (int u : users[i])
      if (recompute[u])
        need[i] = std::min(need[i], need[u]);
  }
  std::vector<int> order;
  for (int i = 0; i < n; ++i)
    if (recompute[i])
      order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return need[a] < need[b]; });

  SmallVector<Operation *> backwardOps;
  for (Operation &op : block.without_terminator())
    if (isBackwardUser(&op, chain.forward))
      backwardOps.push_back(&op);
  OpBuilder b(block.getTerminator());
  IRMapping mapping;
  SmallVector<std::pair<Operation *, Operation *>> clones;
  for (int i : order) {
    Operation *op = chain.ops[i];
    int at = need[i];
    if (at >= 0 && at < static_cast<int>(backwardOps.size()))
      b.setInsertionPoint(backwardOps[at]);
    else
      b.setInsertionPoint(block.getTerminator());
    Operation *clone = b.clone(*op, mapping);
    markRecomputed(clone);
    clones.push_back({op, clone});
  }
  for (auto [op, clone] : clones)
    for (auto [original, copy] :
         llvm::zip(op->getResults(), clone->getResults()))
      original.replaceUsesWithIf(copy, [&](OpOperand &use) {
        return isBackwardUser(use.getOwner(), chain.forward);
      });
  SmallVector<Operation *> all;
  for (auto &[op, clone] : clones)
    all.push_back(clone);
  return finishClones(block, all);
}

//===----------------------------------------------------------------------===//
// Measuring a schedule
//===----------------------------------------------------------------------===//

/// What to recompute: a stage schedule, or (from the exact model) one
/// clone of each op `recompute` marks.
struct CheckpointPlan {
  CheckpointSchedule schedule;
  std::optional<std::vector<char>> recompute;
};

/// Rewrites `func` by `plan`; returns the number of ops cloned.
int64_t applyPlan(func::FuncOp func, const StageChain &chain,
                  const CheckpointPlan &plan) {
  if (plan.recompute)
    return applyKeepSet(func, chain, buildRematProblem(func, chain),
                        *plan.recompute);
  return applySchedule(func, chain, plan.schedule);
}

struct Measurement {
  /// What the executor allocates: the planned arena, the arguments and the
  /// constants, with their alignment padding (MemoryAnalysis::getStepBytes).
  int64_t totalBytes = 0;
  int64_t recomputeFlops = 0;
};

/// Runs the plan, `--memopt-schedule` and `--memopt-plan-memory` on a
/// scratch copy of `func` and measures the step.
FailureOr<Measurement> measure(func::FuncOp func, const CheckpointPlan &plan,
                               int64_t alignment, bool inplace) {
  auto scratch = cast<func::FuncOp>(func->clone());
  llvm::scope_exit cleanup([&] { scratch->erase(); });
  StageChain chain = StageChain::build(scratch);
  applyPlan(scratch, chain, plan);
  if (inplace)
    convertInPlace(scratch, /*remarks=*/false);
  if (failed(scheduleFunction(scratch)))
    return failure();
  FailureOr<int64_t> arena = planFunctionMemory(scratch, alignment);
  if (failed(arena))
    return failure();
  Measurement m;
  m.totalBytes = MemoryAnalysis::getStepBytes(scratch, *arena, alignment);
  m.recomputeFlops = MemoryAnalysis(scratch).getRecomputeFlops();
  return m;
}

/// Measures `plans[begin, end)`, on the context's threads when it has them:
/// each works on its own scratch copy of `func`, which only reads it.
FailureOr<SmallVector<Measurement>>
measureRange(func::FuncOp func, ArrayRef<CheckpointPlan> plans, size_t begin,
             size_t end, int64_t alignment, bool inplace) {
  SmallVector<Measurement> results(end - begin);
  LogicalResult status = failableParallelForEachN(
      func.getContext(), begin, end, [&](size_t i) -> LogicalResult {
        FailureOr<Measurement> m = measure(func, plans[i], alignment, inplace);
        if (failed(m))
          return failure();
        results[i - begin] = *m;
        return success();
      });
  if (failed(status))
    return failure();
  return results;
}

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

struct MemOptCheckpointPass
    : public memopt::impl::MemOptCheckpointBase<MemOptCheckpointPass> {
  using MemOptCheckpointBase::MemOptCheckpointBase;

  void runOnOperation() override {
    // The option parser admits sqrt, budget and optimal only; none is the
    // pipeline's, which then leaves this pass out.
    if (strategy == CheckpointStrategy::None) {
      getOperation()->emitError()
          << "memopt-checkpoint: strategy=none checkpoints nothing; leave the "
             "pass out";
      return signalPassFailure();
    }
    if (strategy == CheckpointStrategy::Budget) {
      if (budget.empty()) {
        getOperation()->emitError() << "memopt-checkpoint: strategy=budget "
                                       "needs budget=<bytes>, e.g. "
                                       "budget=512MiB";
        return signalPassFailure();
      }
      FailureOr<std::optional<int64_t>> parsed =
          parseBudgetOption(getOperation(), "memopt-checkpoint", budget);
      if (failed(parsed))
        return signalPassFailure();
      budgetBytes = *parsed;
    } else if (!budget.empty()) {
      getOperation()->emitError()
          << "memopt-checkpoint: budget= applies to strategy=budget only";
      return signalPassFailure();
    }
    if (!(timeLimit > 0)) {
      getOperation()->emitError()
          << "memopt-checkpoint: time-limit must be positive seconds";
      return signalPassFailure();
    }
    if (failed(verifyAlignmentOption(getOperation(), "memopt-checkpoint",
                                     alignment)))
      return signalPassFailure();
    if (slots < -1) {
      getOperation()->emitError()
          << "memopt-checkpoint: slots must be a count >= 0 (or -1, the "
             "default: the fewest within one forward pass), got "
          << static_cast<int64_t>(slots);
      return signalPassFailure();
    }
    if (slots >= 0 && (strategy != CheckpointStrategy::Optimal ||
                       solver != CheckpointSolver::DP)) {
      getOperation()->emitError()
          << "memopt-checkpoint: slots= applies to strategy=optimal "
             "solver=dp only";
      return signalPassFailure();
    }
    if (segments < 0) {
      getOperation()->emitError()
          << "memopt-checkpoint: segments must be positive (0: about the "
             "square root of the stage count)";
      return signalPassFailure();
    }
    if (segments > 0 && strategy != CheckpointStrategy::Sqrt) {
      getOperation()->emitError()
          << "memopt-checkpoint: segments= applies to strategy=sqrt only";
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> graphs;
    if (failed(
            collectMemOptGraphs(getOperation(), "memopt-checkpoint", graphs)))
      return signalPassFailure();
    for (func::FuncOp func : graphs)
      if (failed(checkpoint(func)))
        return signalPassFailure();
  }

  LogicalResult checkpoint(func::FuncOp func);
  FailureOr<CheckpointSchedule> chooseBudget(func::FuncOp func,
                                             const StageChain &chain);
  FailureOr<CheckpointPlan> chooseOptimal(func::FuncOp func,
                                          const StageChain &chain);
  /// The exact model's plan, or none where it does not apply.
  FailureOr<std::optional<CheckpointPlan>> solveExact(func::FuncOp func,
                                                      const StageChain &chain);
  CheckpointSchedule binomial(const StageChain &chain);

  /// Every cut held, every stage but the last recomputed once from its
  /// input right before its backward: the slot-unlimited binomial schedule.
  static CheckpointSchedule keepEveryCut(int64_t stages) {
    CheckpointSchedule schedule{"binomial", {}};
    for (int64_t j = stages - 2; j >= 0; --j)
      schedule.actions.push_back({j, -1, /*reverse=*/true,
                                  /*produceCut=*/false});
    return schedule;
  }
  /// Checkpoint slots the dynamic programme considers: enough for the
  /// binomial optimum within one forward pass, with room to spare.
  static int64_t slotLimit(int64_t stages) {
    return std::min<int64_t>(
        stages, 4 * static_cast<int64_t>(std::ceil(std::sqrt(stages))) + 4);
  }
  /// Segment counts the sqrt family tries: 2 to n, growing by a quarter.
  static SmallVector<int64_t> sqrtSegmentCounts(int64_t stages) {
    SmallVector<int64_t> counts;
    for (int64_t k = 2; k <= stages; k += (k + 3) / 4)
      counts.push_back(k);
    return counts;
  }
  /// Forward ops beyond which the exact model is not attempted.
  static constexpr int64_t kMaxIlpOps = 2000;

  std::optional<int64_t> budgetBytes;
};

LogicalResult MemOptCheckpointPass::checkpoint(func::FuncOp func) {
  if (!func.getBody().hasOneBlock())
    return func.emitOpError("memopt-checkpoint expects a single-block "
                            "function");
  Block &block = func.front();
  // A loss over parameters with no backward pass yet: nothing would be
  // checkpointed, and saying nothing would look like success.
  {
    bool hasParams = llvm::any_of(func.getArguments(), [&](BlockArgument a) {
      return bool(
          func.getArgAttr(a.getArgNumber(), MemOptDialect::kParamAttrName));
    });
    auto loss = func.getNumResults() == 0
                    ? RankedTensorType()
                    : dyn_cast<RankedTensorType>(func.getResultTypes()[0]);
    if (hasParams && loss && loss.getRank() == 0) {
      MemoryAnalysis analysis(func);
      if (analysis.getFirstBackwardIndex() >= analysis.getNumOps())
        return func.emitOpError(
            "has a loss over parameters but no backward pass: run "
            "--memopt-checkpoint after --memopt-autodiff, which builds the "
            "step it recomputes in");
    }
  }
  for (Operation &op : block)
    if (op.hasAttr(kRecomputeAttrName))
      return op.emitOpError("is already recomputed: run --memopt-checkpoint "
                            "once, on the step --memopt-autodiff built");
  // A forward value overwritten in place could not be read by a clone in the
  // backward pass.
  if (Operation *op = findInPlaceOverIntermediate(block))
    return op->emitOpError("runs in place: run --memopt-checkpoint before "
                           "--memopt-inplace, whose decisions depend on "
                           "which values the backward pass reads");
  // Frees from an earlier schedule would pin what checkpointing drops;
  // --memopt-schedule recomputes them.
  for (Operation &op : llvm::make_early_inc_range(block.without_terminator()))
    if (isa<FreeOp>(op))
      op.erase();

  StageChain chain = StageChain::build(func);
  bool hasBackward = llvm::any_of(chain.ops, [&](Operation *op) {
    return llvm::any_of(op->getUsers(), [&](Operation *user) {
      return isBackwardUser(user, chain.forward);
    });
  });
  // An inference graph, or a step whose backward keeps nothing.
  if (chain.size() == 0 || !hasBackward)
    return success();
  numStages += chain.size();

  CheckpointPlan plan;
  if (strategy == CheckpointStrategy::Sqrt) {
    int64_t n = chain.size();
    int64_t k = segments > 0 ? static_cast<int64_t>(segments)
                             : static_cast<int64_t>(std::llround(
                                   std::sqrt(static_cast<double>(n))));
    // Segments of about equal saved bytes.
    plan.schedule = sqrtSchedule(balancedBoundaries(chain.weights, n, k), n);
  } else if (strategy == CheckpointStrategy::Optimal) {
    FailureOr<CheckpointPlan> chosen = chooseOptimal(func, chain);
    if (failed(chosen))
      return failure();
    plan = std::move(*chosen);
  } else {
    FailureOr<CheckpointSchedule> chosen = chooseBudget(func, chain);
    if (failed(chosen))
      return failure();
    plan.schedule = std::move(*chosen);
  }
  if (!plan.recompute)
    if (std::string error =
            verifyCheckpointSchedule(plan.schedule, chain.size());
        !error.empty())
      return func.emitOpError("internal error: invalid checkpoint schedule: ")
             << error;
  numRecomputed += applyPlan(func, chain, plan);
  return success();
}

CheckpointSchedule MemOptCheckpointPass::binomial(const StageChain &chain) {
  int64_t n = chain.size();
  RevolveTable table = chain.revolveTable(slotLimit(n));
  // The fewest checkpoint slots whose binomial schedule recomputes at most
  // one forward pass of FLOPs.
  for (int64_t slots = 0; slots <= table.getMaxSlots(); ++slots) {
    CheckpointSchedule schedule = table.schedule(n, slots);
    if (chain.flops(schedule) <= chain.forwardFlops) {
      schedule.name = "binomial";
      return schedule;
    }
  }
  // Where reversing a stage itself costs about a stage's forward (a block
  // whose backward reads its insides), one pass only allows holding every
  // cut: each stage recomputed once from its own input.
  return keepEveryCut(n);
}

FailureOr<std::optional<CheckpointPlan>>
MemOptCheckpointPass::solveExact(func::FuncOp func, const StageChain &chain) {
  if (static_cast<int64_t>(chain.ops.size()) > kMaxIlpOps) {
    if (solver == CheckpointSolver::ILP) {
      func.emitOpError("has ")
          << chain.ops.size() << " forward ops, more than the exact "
          << "checkpointing model takes (" << kMaxIlpOps
          << "); use solver=dp or solver=auto";
      return failure();
    }
    func.emitRemark("memopt-checkpoint: ")
        << chain.ops.size() << " forward ops are more than the exact model "
        << "takes (" << kMaxIlpOps << "); choosing among the heuristic "
        << "schedules";
    return std::optional<CheckpointPlan>();
  }
  // The model's timeline is the scheduled step's, as the pipeline will run
  // it; its decisions map back to this function's ops.
  IRMapping mapping;
  auto scratch = cast<func::FuncOp>(func->clone(mapping));
  llvm::scope_exit cleanup([&] { scratch->erase(); });
  if (failed(scheduleFunction(scratch)))
    return failure();
  StageChain scheduled = StageChain::build(scratch);
  RematProblem problem = buildRematProblem(scratch, scheduled);
  RematOptions options;
  options.mode = RematMode::MinMemory;
  options.recomputeLimit = chain.forwardFlops;
  options.timeLimitSeconds = timeLimit;
  llvm::Expected<RematSolution> solution = solveRematILP(problem, options);
  if (!solution) {
    // The solver never takes the step down with it: the binomial schedule
    // (dynamic programming) stands in, and the user is told.
    func.emitRemark("memopt-checkpoint: the exact solver failed (")
        << llvm::toString(solution.takeError())
        << "); using the binomial schedule by dynamic programming instead";
    return std::optional<CheckpointPlan>(
        CheckpointPlan{binomial(chain), std::nullopt});
  }
  if (solution->status != RematStatus::Optimal)
    func.emitRemark("memopt-checkpoint: the exact solver hit its time limit "
                    "of ")
        << static_cast<double>(timeLimit)
        << " s; its best solution so far competes with the heuristic "
           "schedules";
  if (solution->recompute.empty())
    return std::optional<CheckpointPlan>();
  DenseMap<Operation *, int> scratchIndex;
  for (auto [i, op] : llvm::enumerate(scheduled.ops))
    scratchIndex[op] = static_cast<int>(i);
  std::vector<char> recompute(chain.ops.size(), 0);
  for (auto [i, op] : llvm::enumerate(chain.ops)) {
    auto it = scratchIndex.find(mapping.lookup(op));
    if (it != scratchIndex.end())
      recompute[i] = solution->recompute[it->second];
  }
  return std::optional<CheckpointPlan>(
      CheckpointPlan{CheckpointSchedule{"ilp", {}}, std::move(recompute)});
}

FailureOr<CheckpointPlan>
MemOptCheckpointPass::chooseOptimal(func::FuncOp func,
                                    const StageChain &chain) {
  int64_t n = chain.size();
  SmallVector<CheckpointPlan> candidates;
  if (solver == CheckpointSolver::DP && slots >= 0) {
    RevolveTable table = chain.revolveTable(std::max<int64_t>(slots, 0));
    CheckpointSchedule schedule = table.schedule(n, slots);
    schedule.name = "binomial";
    return CheckpointPlan{std::move(schedule), std::nullopt};
  }
  if (solver == CheckpointSolver::DP)
    return CheckpointPlan{binomial(chain), std::nullopt};
  if (solver == CheckpointSolver::ILP || !chain.isPlainChain()) {
    FailureOr<std::optional<CheckpointPlan>> exact = solveExact(func, chain);
    if (failed(exact))
      return failure();
    if (*exact && solver == CheckpointSolver::ILP)
      return std::move(**exact);
    if (*exact)
      candidates.push_back(std::move(**exact));
  }
  if (solver == CheckpointSolver::ILP)
    return CheckpointPlan{CheckpointSchedule{"none", {}}, std::nullopt};

  // Heuristic schedules within one forward pass: none, the binomial
  // schedule, and Chen's segments at every count the family tries.
  candidates.push_back({CheckpointSchedule{"none", {}}, std::nullopt});
  candidates.push_back({binomial(chain), std::nullopt});
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
      if (chain.flops(s) <= chain.forwardFlops)
        candidates.push_back({std::move(s), std::nullopt});
    }
  }

  // Least measured memory; equal memory, least recompute; then the earlier.
  FailureOr<SmallVector<Measurement>> measured = measureRange(
      func, candidates, 0, candidates.size(), alignment, measureInPlace);
  if (failed(measured))
    return failure();
  numCandidates += candidates.size();
  size_t best = 0;
  for (auto [i, m] : llvm::enumerate(*measured)) {
    const Measurement &b = (*measured)[best];
    if (m.totalBytes < b.totalBytes ||
        (m.totalBytes == b.totalBytes && m.recomputeFlops < b.recomputeFlops))
      best = i;
  }
  return std::move(candidates[best]);
}

FailureOr<CheckpointSchedule>
MemOptCheckpointPass::chooseBudget(func::FuncOp func, const StageChain &chain) {
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
    FailureOr<SmallVector<Measurement>> measured =
        measureRange(func, plans, begin, end, alignment, measureInPlace);
    if (failed(measured))
      return failure();
    numCandidates += end - begin;
    for (auto [i, m] : llvm::enumerate(*measured)) {
      if (m.totalBytes <= *budgetBytes)
        return std::move(family[begin + i].schedule);
      least = std::min(least, m.totalBytes);
    }
  }
  func.emitOpError("cannot fit the training step in a budget of ")
      << formatByteSize(*budgetBytes)
      << ": the smallest any checkpoint schedule reaches is "
      << formatByteSize(least)
      << " (the planned arena, arguments and constants, each at "
      << MemoryAnalysis::getBufferAlignment(alignment)
      << "-byte alignment, as the runtime allocates them); use budget=" << least
      << " or more";
  return failure();
}

} // namespace
