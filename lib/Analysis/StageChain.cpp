//===- StageChain.cpp - the forward pass as a chain of stages -------------===//
//
// See StageChain.h.
//
//===----------------------------------------------------------------------===//

#include "memopt/Analysis/StageChain.h"

#include "memopt/Dialect/MemOpt/IR/MemOptDialect.h"
#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <cmath>
#include <limits>
#include <map>

using namespace mlir;
using namespace memopt;

static bool isConstant(Operation *op) {
  return op->hasTrait<mlir::OpTrait::ConstantLike>();
}

bool StageChain::isBackwardUser(Operation *op) const {
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
    // A collective (ZeRO stage 3's parameter copies from their owner) is
    // never recomputed: every rank must issue the same ones, and what it
    // brings is an argument held elsewhere.
    if ((fromArgumentsOnly && op->getNumOperands() > 0) || isCollective(op)) {
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
            return chain.isBackwardUser(u);
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
          return chain.isBackwardUser(u);
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

StageChain StageChain::remapped(const IRMapping &mapping) const {
  StageChain chain = *this;
  auto mapOps = [&](SmallVectorImpl<Operation *> &list) {
    for (Operation *&op : list)
      op = mapping.lookup(op);
  };
  auto mapValues = [&](SmallVectorImpl<Value> &list) {
    for (Value &value : list)
      value = mapping.lookup(value);
  };
  auto mapSet = [&](const DenseSet<Operation *> &from,
                    DenseSet<Operation *> &to) {
    to.clear();
    for (Operation *op : from)
      to.insert(mapping.lookup(op));
  };
  mapOps(chain.ops);
  for (auto &stage : chain.stages)
    mapOps(stage);
  for (auto &cut : chain.cuts)
    mapValues(cut);
  for (auto &values : chain.saved)
    mapValues(values);
  mapSet(forward, chain.forward);
  mapSet(fixed, chain.fixed);
  return chain;
}

int64_t ScheduleFlops::of(const StageAction &action) {
  if (perAction.empty())
    perAction.assign(static_cast<size_t>(chain.size()), {-1, -1, -1, -1});
  int64_t &flops =
      perAction[static_cast<size_t>(action.stage)]
               [(action.reverse ? 1 : 0) + (action.produceCut ? 2 : 0)];
  if (flops < 0) {
    flops = 0;
    for (Operation *op :
         chain.closure(action.stage, chain.actionTargets(action)))
      flops += MemoryAnalysis::getFlops(op);
  }
  return flops;
}

int64_t ScheduleFlops::operator()(const CheckpointSchedule &schedule) {
  int64_t total = 0;
  for (const StageAction &action : schedule.actions)
    total += of(action);
  return total;
}

bool ScheduleFlops::within(const RevolveTable &table, int64_t prefix,
                           int64_t slots, int64_t limit) {
  int64_t total = 0;
  table.forEachAction(prefix, slots, [&](const StageAction &action) {
    total += of(action);
    return total <= limit;
  });
  return total <= limit;
}

void StageChain::print(llvm::raw_ostream &os) const {
  os << "stages " << size() << ", width " << width << ", forward ops "
     << forwardOps << ", fixed " << fixed.size() << ", forward flops "
     << forwardFlops << "\n";
  for (int64_t j = 0; j < size(); ++j) {
    os << "  stage " << j << ": ops [";
    llvm::interleaveComma(stages[j], os,
                          [&](Operation *op) { os << op->getName(); });
    os << "], saved " << saved[j].size() << " value"
       << (saved[j].size() == 1 ? "" : "s");
    if (j + 1 < size())
      os << ", cut " << cuts[j].size() << " value"
         << (cuts[j].size() == 1 ? "" : "s");
    os << ", weight " << weights[j] << " bytes\n";
  }
}
