//===- RematILPSolve.cpp - the rematerialisation ILP on CBC ---------------===//
//
// Runs CBC on one ILP through CbcMain1, with its deadline, fixed seeds and
// a MIP start, and reads its answer back (rounded; its status only trusted
// when the search ended before the deadline). solveMinRecompute and
// solveMinMemory drive it for the two modes: MinRecompute solves once,
// MinMemory twice (the least peak, then the least recompute at that peak).
//
//===----------------------------------------------------------------------===//

#include "RematILPImpl.h"

#include "llvm/Support/FormatVariadic.h"

#include <CbcModel.hpp>
#include <CbcSolver.hpp>
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

std::string columnName(int column) { return "c" + std::to_string(column); }

/// Runs CBC on `ilp` until `deadline`, starting from `start` (one value per
/// column) if given.
llvm::Expected<IlpOutcome> runCbcUnguarded(const Ilp &ilp,
                                           Clock::time_point deadline,
                                           const std::vector<double> *start) {
  // CbcMain1 parses its arguments through global state.
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
  // CbcMain1 matches a MIP start to columns by name.
  std::vector<std::pair<std::string, double>> mipStart;
  if (start) {
    for (int c = 0; c < ilp.numColumns; ++c) {
      solver.setColName(c, columnName(c));
      mipStart.push_back({columnName(c), (*start)[c]});
    }
  }

  CbcModel model(solver);
  model.messageHandler()->setLogLevel(0);
  if (start)
    model.setMIPStart(mipStart);
  CbcSolverUsefulData data;
  data.noPrinting_ = true;
  data.useSignalHandler_ = false;
  CbcMain0(model, data);
  // Elapsed rather than CPU time, one thread, fixed seeds: the same input
  // gives the same answer (unless the time limit cuts the search short).
  std::string secondsArg = llvm::formatv("{0:f3}", seconds);
  // CGL's preprocessing and Clp's presolve are off: on some of these
  // problems they crash (a null model dereferenced in
  // ClpPresolve::gutsOfPresolvedModel; Cbc 2.10.8, Clp 1.17.6), seen on
  // mixed-precision CIFAR ResNets and on DenseNet-121
  // (test/Transforms/checkpoint-solver-crash.test). Both problems are
  // sparse and already tight, so the cost is small (bench/checkpoint.py).
  const char *argv[] = {"memopt-remat",              // program name
                        "-preprocess",    "off",     // see above
                        "-presolve",      "off",     // see above
                        "-log",           "0",       // quiet
                        "-slog",          "0",       // quiet LP solver
                        "-threads",       "0",       // single-threaded
                        "-randomCbcSeed", "1",       // fixed seeds (CBC)
                        "-randomSeed",    "1234567", // and Clp
                        "-timeMode",      "elapsed", // wall-clock limit
                        "-seconds",       secondsArg.c_str(), // time left
                        "-solve",         "-quit"};
  CbcMain1(
      int(sizeof(argv) / sizeof(argv[0])), argv, model,
      [](CbcModel *, int) { return 0; }, data);
  bool pastDeadline = Clock::now() >= deadline;

  IlpOutcome outcome;
  const double *best = model.bestSolution();
  if (best && model.getNumCols() == ilp.numColumns) {
    outcome.values.resize(ilp.numColumns);
    for (int c = 0; c < ilp.numColumns; ++c)
      outcome.values[c] = std::round(best[c]);
  }
  if (model.isProvenInfeasible() && !pastDeadline) {
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
