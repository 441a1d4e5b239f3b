//===- Exact.cpp - the exact keep/recompute model -------------------------===//
//
// Which forward values to keep and which to recompute, as the 0-1 model of
// RematILP.h (solved with COIN-OR CBC): built from the scheduled step's
// timeline, solved for the least memory within one forward pass of
// recomputation, and mapped back to the function's ops. A failing solver
// never takes the step down: the binomial schedule stands in, with a remark.
//
//===----------------------------------------------------------------------===//

#include "Checkpoint.h"

#include "llvm/Support/FormatVariadic.h"

#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"
#include "memopt/Dialect/MemOpt/Transforms/Transforms.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/ScopeExit.h"

#include <algorithm>

using namespace mlir;
using namespace memopt;
using namespace memopt::checkpoint;

RematProblem checkpoint::buildRematProblem(func::FuncOp func,
                                           const StageChain &chain) {
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
    if (chain.isBackwardUser(op) && !isa<FreeOp>(op)) {
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

FailureOr<std::optional<CheckpointPlan>>
checkpoint::solveExact(func::FuncOp func, const StageChain &chain,
                       const SearchOptions &search) {
  if (static_cast<int64_t>(chain.ops.size()) > kMaxIlpOps) {
    if (search.solver == CheckpointSolver::ILP) {
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
  options.timeLimitSeconds = search.timeLimit;
  llvm::Expected<RematSolution> solution = solveRematILP(problem, options);
  if (!solution) {
    // The solver never takes the step down with it: the binomial schedule
    // (dynamic programming) stands in, and the user is told.
    func.emitRemark("memopt-checkpoint: the exact solver failed (")
        << llvm::toString(solution.takeError())
        << "); using the binomial schedule by dynamic programming instead";
    ScheduleFlops flops(chain);
    return std::optional<CheckpointPlan>(
        CheckpointPlan{binomialSchedule(chain, flops), std::nullopt});
  }
  if (solution->status != RematStatus::Optimal)
    func.emitRemark("memopt-checkpoint: the exact solver hit its time limit "
                    "of ")
        << llvm::formatv("{0}", search.timeLimit).str()
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
