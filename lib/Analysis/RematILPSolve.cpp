//===- RematILPSolve.cpp - the rematerialisation ILP on CBC ---------------===//
//
// Runs CBC's branch and cut (CbcModel, with the cut generators and
// heuristics of CBC's default driver) on one ILP, with its deadline, fixed
// seeds and a MIP start, and reads its answer back (rounded; its status only
// trusted when the search ended before the deadline). solveMinRecompute and
// solveMinMemory drive it for the two modes: MinRecompute solves once,
// MinMemory twice (the least peak, then the least recompute at that peak).
//
//===----------------------------------------------------------------------===//

#include "RematILPImpl.h"

#include "llvm/Support/FormatVariadic.h"

#include <CbcHeuristic.hpp>
#include <CbcHeuristicFPump.hpp>
#include <CbcModel.hpp>
#include <CglClique.hpp>
#include <CglFlowCover.hpp>
#include <CglGomory.hpp>
#include <CglKnapsackCover.hpp>
#include <CglMixedIntegerRounding2.hpp>
#include <CglProbing.hpp>
#include <CoinPackedMatrix.hpp>
#include <OsiClpSolverInterface.hpp>

#include <cmath>
#include <mutex>
#include <string>
#include <utility>

using namespace memopt;
using namespace memopt::detail;

namespace {

struct IlpOutcome {
  RematStatus status = RematStatus::TimedOut;
  /// The best solution's column values, rounded to integers; empty without
  /// one.
  std::vector<double> values;
};

std::mutex &cbcMutex() {
  static std::mutex mutex;
  return mutex;
}

/// Runs CBC on `ilp` until `deadline`, starting from `start` (one value per
/// column) if given.
llvm::Expected<IlpOutcome> runCbcUnguarded(const Ilp &ilp,
                                           Clock::time_point deadline,
                                           const std::vector<double> *start) {
  // One solve at a time: CBC and Clp are not documented as thread-safe.
  std::lock_guard<std::mutex> lock(cbcMutex());
  double seconds =
      std::chrono::duration<double>(deadline - Clock::now()).count();
  if (seconds <= 0)
    return IlpOutcome();

  // Row-ordered arrays in one go: CoinPackedMatrix::appendRow reallocates
  // the whole matrix on every call, which was quadratic (seconds at 10,000
  // rows).
  std::vector<double> rowLower, rowUpper, elements;
  std::vector<int> indices, lengths;
  std::vector<CoinBigIndex> starts;
  for (const Row &row : ilp.rows) {
    starts.push_back(CoinBigIndex(elements.size()));
    lengths.push_back(int(row.columns.size()));
    indices.insert(indices.end(), row.columns.begin(), row.columns.end());
    elements.insert(elements.end(), row.values.begin(), row.values.end());
    rowLower.push_back(row.lower);
    rowUpper.push_back(row.upper);
  }
  starts.push_back(CoinBigIndex(elements.size()));
  CoinPackedMatrix matrix(/*colordered=*/false, ilp.numColumns,
                          int(ilp.rows.size()), CoinBigIndex(elements.size()),
                          elements.data(), indices.data(), starts.data(),
                          lengths.data());

  OsiClpSolverInterface solver;
  solver.messageHandler()->setLogLevel(0);
  solver.loadProblem(matrix, ilp.columnLower.data(), ilp.columnUpper.data(),
                     ilp.objective.data(), rowLower.data(), rowUpper.data());
  for (int c = 0; c < ilp.numColumns; ++c)
    if (ilp.isInteger[c])
      solver.setInteger(c);
  // CBC checks its time limit between branch-and-bound nodes only; the root
  // LP alone can take longer than the whole limit (12 s at 10,000 ops), so
  // Clp gets the same deadline. An LP stopped by it may have made CBC prune
  // a node it should not have, so a proof that ends past the deadline is
  // not trusted (see below).
  solver.getModelPtr()->setMaximumWallSeconds(seconds);
  // Clp's presolve stays off in every LP solve: on some of these problems
  // it crashes (a null model dereferenced in
  // ClpPresolve::gutsOfPresolvedModel; Clp 1.17.6), seen on mixed-precision
  // CIFAR ResNets, DenseNet-121 and GPT-2
  // (test/Transforms/checkpoint-solver-crash.test). CbcMain1, CBC's
  // command-line driver, re-enabled it in a resolve whatever its options
  // said, so CBC is driven through CbcModel here, with the cut generators
  // and heuristics that driver adds by default. Both problems are sparse
  // and already tight, so presolve gains little (bench/checkpoint.py).
  solver.setHintParam(OsiDoPresolveInInitial, false, OsiHintDo);
  solver.setHintParam(OsiDoPresolveInResolve, false, OsiHintDo);

  CbcModel model(solver);
  model.messageHandler()->setLogLevel(0);
  model.solver()->messageHandler()->setLogLevel(0);
  // Elapsed rather than CPU time, one thread, fixed seeds: the same input
  // gives the same answer (unless the time limit cuts the search short).
  model.setUseElapsedTime(true);
  model.setMaximumSeconds(seconds);
  model.setNumberThreads(0);
  model.setRandomSeed(1);
  CglProbing probing;
  probing.setUsingObjective(1);
  probing.setMaxPass(1);
  probing.setMaxProbe(10);
  probing.setMaxLook(10);
  CglGomory gomory;
  gomory.setLimit(100);
  CglKnapsackCover knapsack;
  CglClique clique;
  CglMixedIntegerRounding2 rounding2;
  CglFlowCover flowCover;
  model.addCutGenerator(&probing, -1, "Probing");
  model.addCutGenerator(&gomory, -100, "Gomory");
  model.addCutGenerator(&knapsack, -100, "Knapsack");
  model.addCutGenerator(&clique, -100, "Clique");
  model.addCutGenerator(&rounding2, -100, "MixedIntegerRounding2");
  model.addCutGenerator(&flowCover, -100, "FlowCover");
  CbcRounding roundingHeuristic(model);
  CbcHeuristicFPump pump(model);
  model.addHeuristic(&roundingHeuristic);
  model.addHeuristic(&pump);
  model.initialSolve();
  bool rootInfeasible = model.solver()->isProvenPrimalInfeasible();
  if (!model.solver()->isProvenOptimal() && !rootInfeasible &&
      Clock::now() < deadline)
    return makeError("CBC abandoned the search (the root LP did not solve)");
  if (model.solver()->isProvenOptimal()) {
    if (start) {
      double objective = 0;
      for (int c = 0; c < ilp.numColumns; ++c)
        objective += ilp.objective[c] * (*start)[c];
      // Checked against the constraints: an infeasible start is dropped.
      model.setBestSolution(start->data(), ilp.numColumns, objective,
                            /*check=*/true);
    }
    model.branchAndBound();
  }
  bool pastDeadline = Clock::now() >= deadline;

  IlpOutcome outcome;
  const double *best = model.bestSolution();
  if (best && model.getNumCols() == ilp.numColumns) {
    outcome.values.resize(ilp.numColumns);
    for (int c = 0; c < ilp.numColumns; ++c)
      outcome.values[c] = std::round(best[c]);
  }
  if ((rootInfeasible || model.isProvenInfeasible()) && !pastDeadline) {
    outcome.status = RematStatus::Infeasible;
    outcome.values.clear();
  } else if (!outcome.values.empty()) {
    outcome.status = model.isProvenOptimal() && !pastDeadline
                         ? RematStatus::Optimal
                         : RematStatus::Feasible;
  } else if (model.isAbandoned() && !pastDeadline) {
    return makeError("CBC abandoned the search (numerical difficulties)");
  } else {
    outcome.status = RematStatus::TimedOut;
  }
  return outcome;
}

/// runCbcUnguarded with CBC's exceptions turned into errors (the
/// RematILP*.cpp files are the only ones of the library built with
/// exceptions).
llvm::Expected<IlpOutcome> runCbc(const Ilp &ilp, Clock::time_point deadline,
                                  const std::vector<double> *start) {
  try {
    return runCbcUnguarded(ilp, deadline, start);
  } catch (const CoinError &error) {
    return makeError(llvm::formatv("CBC failed: {0} (in {1}::{2})",
                                   error.message(), error.className(),
                                   error.methodName()));
  } catch (const std::exception &error) {
    return makeError(llvm::formatv("CBC failed: {0}", error.what()));
  } catch (...) {
    return makeError("CBC failed with an unknown exception");
  }
}

} // namespace

namespace memopt::detail {

llvm::Error solveMinRecompute(const RematProblem &problem,
                              const RematOptions &options, const Prepared &prep,
                              Clock::time_point deadline,
                              RematSolution &solution) {
  // Keeping everything with uses recomputes nothing: optimal if it fits.
  std::vector<char> keepAll(prep.n, 0), none(prep.n, 0);
  for (int i = 0; i < prep.n; ++i)
    keepAll[i] = problem.ops[i].hasBackwardUse();
  if (evaluateRematPeak(problem, keepAll, none) <= options.budget) {
    solution.status = RematStatus::Optimal;
    setAssignment(problem, prep, keepAll, none, solution);
    return llvm::Error::success();
  }

  int peakColumn;
  Ilp ilp = makeIlp(prep, /*withPeak=*/false, peakColumn);
  addStructureRows(problem, prep, ilp);
  MemoryBound bound;
  bound.budget = options.budget;
  addMemoryRows(problem, prep, bound, ilp);
  setRecomputeObjective(problem, prep, ilp);
  solution.numVariables = ilp.numColumns;
  solution.numConstraints = int(ilp.rows.size());
  if (ilp.triviallyInfeasible) {
    solution.status = RematStatus::Infeasible;
    return llvm::Error::success();
  }

  ++solution.numSolverCalls;
  auto outcome = runCbc(ilp, deadline, /*start=*/nullptr);
  if (!outcome)
    return outcome.takeError();
  solution.status = outcome->status;
  if (!outcome->values.empty()) {
    std::vector<char> keep, recompute;
    readAssignment(prep, outcome->values, keep, recompute);
    setAssignment(problem, prep, keep, recompute, solution);
  }
  return llvm::Error::success();
}

llvm::Error solveMinMemory(const RematProblem &problem,
                           const RematOptions &options, const Prepared &prep,
                           Clock::time_point deadline,
                           RematSolution &solution) {
  // Keeping everything with uses is always allowed and starts the search.
  std::vector<char> keepAll(prep.n, 0), none(prep.n, 0);
  for (int i = 0; i < prep.n; ++i)
    keepAll[i] = problem.ops[i].hasBackwardUse();
  int64_t keepAllPeak = evaluateRematPeak(problem, keepAll, none);

  // Stage 1: the least peak.
  int peakColumn;
  Ilp peakIlp = makeIlp(prep, /*withPeak=*/true, peakColumn);
  addStructureRows(problem, prep, peakIlp);
  MemoryBound peakBound;
  peakBound.peakColumn = peakColumn;
  addMemoryRows(problem, prep, peakBound, peakIlp);
  addRecomputeLimitRow(problem, prep, options.recomputeLimit, peakIlp);
  peakIlp.objective[peakColumn] = 1;
  solution.numVariables = peakIlp.numColumns;
  solution.numConstraints = int(peakIlp.rows.size());

  std::vector<double> startValues = columnValues(
      problem, prep, peakIlp, keepAll, none, peakColumn, keepAllPeak);
  ++solution.numSolverCalls;
  auto first = runCbc(peakIlp, deadline, &startValues);
  if (!first)
    return first.takeError();
  std::vector<char> keep = keepAll, recompute = none;
  if (!first->values.empty())
    readAssignment(prep, first->values, keep, recompute);
  dropUnneeded(problem, prep, keep, recompute);
  if (first->status == RematStatus::Infeasible)
    return makeError("CBC found the peak minimisation "
                     "infeasible although keeping everything is allowed");
  // Without a proven least peak there is nothing to tie-break against.
  if (first->status != RematStatus::Optimal) {
    solution.status = RematStatus::Feasible;
    setAssignment(problem, prep, keep, recompute, solution);
    return llvm::Error::success();
  }
  int64_t peak = evaluateRematPeak(problem, keep, recompute);
  solution.status = RematStatus::Optimal;
  setAssignment(problem, prep, keep, recompute, solution);
  if (solution.recomputeFlops == 0)
    return llvm::Error::success(); // Nothing left to save.
  if (Clock::now() >= deadline) {
    solution.status = RematStatus::Feasible;
    return llvm::Error::success();
  }

  // Stage 2: the least recompute at that peak.
  int noPeak;
  Ilp flopIlp = makeIlp(prep, /*withPeak=*/false, noPeak);
  addStructureRows(problem, prep, flopIlp);
  MemoryBound flopBound;
  flopBound.budget = peak;
  addMemoryRows(problem, prep, flopBound, flopIlp);
  addRecomputeLimitRow(problem, prep, options.recomputeLimit, flopIlp);
  setRecomputeObjective(problem, prep, flopIlp);
  if (flopIlp.triviallyInfeasible)
    return makeError("the least peak CBC found is below some base");
  startValues = columnValues(problem, prep, flopIlp, keep, recompute, -1, 0);
  ++solution.numSolverCalls;
  auto second = runCbc(flopIlp, deadline, &startValues);
  if (!second)
    return second.takeError();
  if (second->status == RematStatus::Infeasible)
    return makeError("CBC found the recompute minimisation "
                     "at the least peak infeasible");
  if (second->status != RematStatus::Optimal)
    solution.status = RematStatus::Feasible;
  if (!second->values.empty()) {
    std::vector<char> keep2, recompute2;
    readAssignment(prep, second->values, keep2, recompute2);
    dropUnneeded(problem, prep, keep2, recompute2);
    if (evaluateRematPeak(problem, keep2, recompute2) > peak)
      return makeError("CBC's least-recompute assignment "
                       "exceeds the least peak");
    if (recomputeFlopsOf(problem, recompute2) <= solution.recomputeFlops)
      setAssignment(problem, prep, keep2, recompute2, solution);
  }
  return llvm::Error::success();
}

} // namespace memopt::detail
