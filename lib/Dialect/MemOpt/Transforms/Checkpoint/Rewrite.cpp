//===- Rewrite.cpp - cloning what checkpointing recomputes ----------------===//
//
// Each action of a schedule clones the stage's ops that its needs reach,
// marks them `memopt.recompute`, and the backward ops of the stage read the
// clones; the originals then die in the forward pass. A keep set from the
// exact model clones each marked op once. Clones are exact copies (dropout
// regenerates its mask from its seed; a batch-norm clone's running
// statistics are never used, so the statistics update once). Clones go
// before the first op that needs them, so the order is already lazy;
// `--memopt-schedule` does the rest.
//
//===----------------------------------------------------------------------===//

#include "Checkpoint.h"

#include "memopt/Dialect/MemOpt/Transforms/Transforms.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/MapVector.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace memopt;
using namespace memopt::checkpoint;

int64_t checkpoint::applySchedule(func::FuncOp func, const StageChain &chain,
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
      return chain.isBackwardUser(use.getOwner());
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

int64_t checkpoint::applyKeepSet(func::FuncOp func, const StageChain &chain,
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
    if (chain.isBackwardUser(&op))
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
        return chain.isBackwardUser(use.getOwner());
      });
  SmallVector<Operation *> all;
  for (auto &[op, clone] : clones)
    all.push_back(clone);
  return finishClones(block, all);
}

int64_t checkpoint::applyPlan(func::FuncOp func, const StageChain &chain,
                              const CheckpointPlan &plan) {
  if (plan.recompute)
    return applyKeepSet(func, chain, buildRematProblem(func, chain),
                        *plan.recompute);
  return applySchedule(func, chain, plan.schedule);
}
