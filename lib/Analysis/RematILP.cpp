//===- RematILP.cpp - exact keep/recompute choice with CBC ----------------===//
//
// Builds the 0-1 program of RematILP.h as sparse rows, hands it to CBC
// through CbcMain1 (the command-line driver: it runs CBC's integer
// preprocessing, cut generators and heuristics, which a bare
// CbcModel::branchAndBound does not), and reads the assignment back.
// MinMemory starts CBC from "keep everything", its second stage from the
// first stage's answer.
//
// Everything CBC sees is integral: byte quantities are divided by their gcd
// and flops by theirs, budgets are rounded down in those units, and the peak
// variable of MinMemory is an integer. Every objective is then integral, CBC
// moves its cutoff by whole units, and "optimal" means optimal, not optimal
// up to a gap tolerance. (The live-bytes columns carry no objective and stay
// continuous.)
// Whatever CBC returns is rounded, cleaned and re-evaluated in int64 here;
// a result that breaks the model is an error, never a silently wrong answer.
//
//===----------------------------------------------------------------------===//

#include "memopt/Analysis/RematILP.h"

#include "llvm/Support/FormatVariadic.h"

#include <CbcModel.hpp>
#include <CbcSolver.hpp>
#include <CoinPackedMatrix.hpp>
#include <OsiClpSolverInterface.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>
#include <numeric>
#include <string>
#include <utility>

using namespace memopt;

namespace {

using Clock = std::chrono::steady_clock;

/// Doubles represent every integer up to this exactly; the scaled ILP data
/// must stay below it.
constexpr int64_t kExactDoubleLimit = int64_t(1) << 53;
/// The most memory units (bytes over their common divisor) a problem may
/// total; see checkExactness.
constexpr int64_t kMaxByteUnits = int64_t(1) << 32;

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message.str());
}

int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/// The problem's users lists, deduplicated operands and the presolve facts
/// every step needs.
struct Prepared {
  int n = 0;
  int numTimes = 0;
  /// Operands of each op, sorted and without repeats.
  std::vector<std::vector<int>> operands;
  std::vector<int> lastNeed;
  /// Has backward uses or reaches an op that has them through its users.
  std::vector<char> relevant;
  /// Columns of keep_i / recompute_i, -1 for ops fixed to 0.
  std::vector<int> keepCol, recomputeCol;
  int numOpColumns = 0;
  /// Common divisors of the byte quantities and of the flops.
  int64_t byteUnit = 1;
  int64_t flopUnit = 1;
  int64_t totalFlops = 0;
  /// Backward times split into intervals at every change point; per
  /// interval its representative time (the one with the largest baseBytes),
  /// and the interval of every time.
  std::vector<int> rowTimes;
  std::vector<int> intervalOf;
};

std::vector<std::vector<int>> uniqueOperands(const RematProblem &problem) {
  std::vector<std::vector<int>> result(problem.ops.size());
  for (size_t i = 0; i < problem.ops.size(); ++i) {
    std::vector<int> &ops = result[i];
    for (int p : problem.ops[i].operands)
      if (p >= 0 && size_t(p) < i)
        ops.push_back(p);
    std::sort(ops.begin(), ops.end());
    ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
  }
  return result;
}

std::vector<int> lastNeedFrom(const RematProblem &problem,
                              const std::vector<std::vector<int>> &operands) {
  std::vector<int> lastNeed(problem.ops.size());
  for (size_t i = 0; i < problem.ops.size(); ++i)
    lastNeed[i] = std::max(problem.ops[i].lastBackwardUse, -1);
  // Transitively: a kept op may feed a clone that feeds another clone that
  // the backward reads late. Users come after their operands, so visiting
  // ops last to first finalises each before it propagates.
  for (size_t j = problem.ops.size(); j-- > 0;)
    for (int p : operands[j])
      lastNeed[p] = std::max(lastNeed[p], lastNeed[j]);
  return lastNeed;
}

Prepared prepare(const RematProblem &problem) {
  Prepared prep;
  prep.n = int(problem.ops.size());
  prep.numTimes = problem.numBackwardSteps;
  prep.operands = uniqueOperands(problem);
  prep.lastNeed = lastNeedFrom(problem, prep.operands);

  // Relevance flows from users to operands, i.e. backwards in index order.
  prep.relevant.assign(prep.n, 0);
  for (int i = prep.n - 1; i >= 0; --i) {
    if (problem.ops[i].hasBackwardUse())
      prep.relevant[i] = 1;
    if (prep.relevant[i])
      for (int p : prep.operands[i])
        prep.relevant[p] = 1;
  }

  prep.keepCol.assign(prep.n, -1);
  prep.recomputeCol.assign(prep.n, -1);
  for (int i = 0; i < prep.n; ++i) {
    if (!prep.relevant[i])
      continue;
    prep.keepCol[i] = prep.numOpColumns++;
    prep.recomputeCol[i] = prep.numOpColumns++;
  }

  int64_t byteGcd = problem.forwardEndBytes;
  for (int64_t b : problem.baseBytes)
    byteGcd = std::gcd(byteGcd, b);
  int64_t flopGcd = 0;
  for (int i = 0; i < prep.n; ++i) {
    if (!prep.relevant[i])
      continue;
    byteGcd = std::gcd(byteGcd, problem.ops[i].bytes);
    flopGcd = std::gcd(flopGcd, problem.ops[i].flops);
    prep.totalFlops += problem.ops[i].flops;
  }
  prep.byteUnit = byteGcd > 0 ? byteGcd : 1;
  prep.flopUnit = flopGcd > 0 ? flopGcd : 1;

  // Coefficients of M_t change only where some relevant op's keep or
  // recompute term switches on or off.
  std::vector<char> changes(prep.numTimes, 0);
  changes[0] = 1;
  auto mark = [&](int t) {
    if (t >= 0 && t < prep.numTimes)
      changes[t] = 1;
  };
  for (int i = 0; i < prep.n; ++i) {
    if (!prep.relevant[i])
      continue;
    const RematOp &op = problem.ops[i];
    if (op.hasBackwardUse()) {
      mark(op.firstBackwardUse);
      mark(op.lastBackwardUse + 1);
    }
    mark(prep.lastNeed[i] + 1);
  }
  prep.intervalOf.resize(prep.numTimes);
  for (int start = 0; start < prep.numTimes;) {
    int end = start + 1;
    while (end < prep.numTimes && !changes[end])
      ++end;
    int best = start;
    for (int t = start; t < end; ++t) {
      if (problem.baseBytes[t] > problem.baseBytes[best])
        best = t;
      prep.intervalOf[t] = int(prep.rowTimes.size());
    }
    prep.rowTimes.push_back(best);
    start = end;
  }
  return prep;
}

/// Forward-result bytes live at every backward time (M_t - baseBytes[t]):
/// a difference array over times, then a running sum.
std::vector<int64_t> liveForwardBytes(const RematProblem &problem,
                                      const std::vector<int> &lastNeed,
                                      const std::vector<char> &keep,
                                      const std::vector<char> &recompute) {
  int numTimes = std::max(problem.numBackwardSteps, 0);
  std::vector<int64_t> live(numTimes + 1, 0);
  auto add = [&](int64_t bytes, int begin, int end) {
    begin = std::max(begin, 0);
    end = std::min(end, numTimes - 1);
    if (begin <= end) {
      live[begin] += bytes;
      live[end + 1] -= bytes;
    }
  };
  for (size_t i = 0; i < problem.ops.size(); ++i) {
    const RematOp &op = problem.ops[i];
    if (keep[i])
      add(op.bytes, 0, lastNeed[i]);
    if (recompute[i] && op.hasBackwardUse())
      add(op.bytes, op.firstBackwardUse, op.lastBackwardUse);
  }
  for (int t = 1; t < numTimes; ++t)
    live[t] += live[t - 1];
  live.pop_back();
  return live;
}

/// Clears ops that neither have uses nor feed a recomputed op that is itself
/// needed; lowers memory and recompute or leaves them alone.
void dropUnneeded(const RematProblem &problem, const Prepared &prep,
                  std::vector<char> &keep, std::vector<char> &recompute) {
  std::vector<char> needed(prep.n, 0);
  for (int i = prep.n - 1; i >= 0; --i) {
    if (problem.ops[i].hasBackwardUse())
      needed[i] = 1;
    if (!needed[i]) {
      keep[i] = recompute[i] = 0;
      continue;
    }
    if (recompute[i])
      for (int p : prep.operands[i])
        needed[p] = 1;
  }
}

int64_t recomputeFlopsOf(const RematProblem &problem,
                         const std::vector<char> &recompute) {
  int64_t total = 0;
  for (size_t i = 0; i < problem.ops.size(); ++i)
    if (recompute[i])
      total += problem.ops[i].flops;
  return total;
}

/// A sparse row with bounds.
struct Row {
  std::vector<int> columns;
  std::vector<double> values;
  double lower = -COIN_DBL_MAX;
  double upper = COIN_DBL_MAX;
};

/// How the memory rows are bounded.
struct MemoryBound {
  /// Each M ≤ budget, or (when peakColumn ≥ 0) each M ≤ that column.
  int64_t budget = 0;
  int peakColumn = -1;
};

/// One ILP as handed to CBC.
struct Ilp {
  int numColumns = 0;
  std::vector<double> columnLower, columnUpper;
  std::vector<double> objective;
  std::vector<char> isInteger;
  std::vector<Row> rows;
  /// The live-bytes column of every interval (see addMemoryRows).
  std::vector<int> liveColumns;
  /// Some memory row can never hold (MinRecompute with base > budget).
  bool triviallyInfeasible = false;

  int addColumn(double lower, double upper, bool integer) {
    columnLower.push_back(lower);
    columnUpper.push_back(upper);
    objective.push_back(0);
    isInteger.push_back(integer);
    return numColumns++;
  }
};

/// An ILP over the op columns (binary, objective 0) and, if `withPeak`, one
/// more integer column for the peak, returned in `peakColumn`.
Ilp makeIlp(const Prepared &prep, bool withPeak, int &peakColumn) {
  Ilp ilp;
  ilp.numColumns = prep.numOpColumns;
  peakColumn = -1;
  if (withPeak)
    peakColumn = ilp.numColumns++;
  ilp.columnLower.assign(ilp.numColumns, 0);
  ilp.columnUpper.assign(ilp.numColumns, 1);
  ilp.objective.assign(ilp.numColumns, 0);
  ilp.isInteger.assign(ilp.numColumns, 1);
  if (withPeak)
    ilp.columnUpper[peakColumn] = COIN_DBL_MAX;
  return ilp;
}

/// Adds constraints 1-3.
void addStructureRows(const RematProblem &problem, const Prepared &prep,
                      Ilp &ilp) {
  for (int i = 0; i < prep.n; ++i) {
    if (!prep.relevant[i])
      continue;
    Row row;
    row.columns = {prep.keepCol[i], prep.recomputeCol[i]};
    row.values = {1, 1};
    row.upper = 1;
    if (problem.ops[i].hasBackwardUse())
      row.lower = 1;
    ilp.rows.push_back(std::move(row));
    for (int p : prep.operands[i]) {
      Row dep;
      dep.columns = {prep.recomputeCol[i], prep.keepCol[p],
                     prep.recomputeCol[p]};
      dep.values = {1, -1, -1};
      dep.upper = 0;
      ilp.rows.push_back(std::move(dep));
    }
  }
}

/// Bounds `base + expression ≤ bound`, where the expression is the single
/// column `column` (live bytes, scaled) whose largest value is `maxLive`, or
/// the row `row` when column is -1.
void boundMemory(const Prepared &prep, const MemoryBound &bound, int64_t base,
                 int column, Row row, int64_t maxLive, Ilp &ilp) {
  int64_t scaledBase = base / prep.byteUnit;
  if (bound.peakColumn >= 0) {
    if (maxLive == 0) {
      double &lower = ilp.columnLower[bound.peakColumn];
      lower = std::max(lower, double(scaledBase));
      return;
    }
    if (column >= 0) {
      row.columns = {column};
      row.values = {1};
    }
    row.columns.push_back(bound.peakColumn);
    row.values.push_back(-1);
    row.upper = double(-scaledBase);
    ilp.rows.push_back(std::move(row));
    return;
  }
  // base and budget are non-negative, so the difference cannot overflow.
  int64_t rhs = floorDiv(bound.budget - base, prep.byteUnit);
  if (rhs < 0) {
    ilp.triviallyInfeasible = true;
    return;
  }
  if (rhs >= maxLive)
    return; // Holds whatever the variables do.
  if (column >= 0) {
    ilp.columnUpper[column] = double(rhs);
    return;
  }
  row.upper = double(rhs);
  ilp.rows.push_back(std::move(row));
}

/// Adds the memory constraints. The forward end is one row over the kept
/// ops with uses. The backward times would need one dense row per interval
/// (every op kept past it: O(n·T) nonzeros, which made CBC's preprocessing
/// the bottleneck at a few thousand ops), so instead each interval k gets a
/// column L_k, the forward bytes live in it, defined incrementally:
///   L_0 = Σ keep terms with lastNeed ≥ 0 + Σ recompute terms starting at 0
///   L_k = L_{k-1} + terms starting at k's first time - terms ending just
///         before it
/// (the same polytope, projected; every op appears in at most four rows),
/// and bounded by the budget (as its upper bound) or by the peak column.
/// L_k is integral whenever the binaries are, so it is left continuous:
/// declaring it integer made peak minimisation two to ten times slower on
/// 1,000-op chains and gained nothing.
void addMemoryRows(const RematProblem &problem, const Prepared &prep,
                   const MemoryBound &bound, Ilp &ilp) {
  Row forwardEnd;
  int64_t forwardEndMax = 0;
  for (int i = 0; i < prep.n; ++i) {
    if (!prep.relevant[i] || !problem.ops[i].hasBackwardUse() ||
        problem.ops[i].bytes == 0)
      continue;
    int64_t coefficient = problem.ops[i].bytes / prep.byteUnit;
    forwardEnd.columns.push_back(prep.keepCol[i]);
    forwardEnd.values.push_back(double(coefficient));
    forwardEndMax += coefficient;
  }
  boundMemory(prep, bound, problem.forwardEndBytes, -1, std::move(forwardEnd),
              forwardEndMax, ilp);

  // Each term is live over a range of intervals [from, to]: it enters L at
  // `from`, leaves after `to`, and contributes to maxLive over the range.
  int numIntervals = int(prep.rowTimes.size());
  std::vector<Row> definitions(numIntervals);
  std::vector<int64_t> maxLiveDelta(numIntervals + 1, 0);
  auto addTerm = [&](int column, int64_t coefficient, int from, int to) {
    definitions[from].columns.push_back(column);
    definitions[from].values.push_back(-double(coefficient));
    if (to + 1 < numIntervals) {
      definitions[to + 1].columns.push_back(column);
      definitions[to + 1].values.push_back(double(coefficient));
    }
    maxLiveDelta[from] += coefficient;
    maxLiveDelta[to + 1] -= coefficient;
  };
  for (int i = 0; i < prep.n; ++i) {
    const RematOp &op = problem.ops[i];
    if (!prep.relevant[i] || op.bytes == 0)
      continue;
    int64_t coefficient = op.bytes / prep.byteUnit;
    if (prep.lastNeed[i] >= 0)
      addTerm(prep.keepCol[i], coefficient, 0,
              prep.intervalOf[prep.lastNeed[i]]);
    if (op.hasBackwardUse())
      addTerm(prep.recomputeCol[i], coefficient,
              prep.intervalOf[op.firstBackwardUse],
              prep.intervalOf[op.lastBackwardUse]);
  }
  ilp.liveColumns.clear();
  int64_t maxLive = 0;
  for (int k = 0; k < numIntervals; ++k) {
    maxLive += maxLiveDelta[k];
    int column = ilp.addColumn(0, double(maxLive), /*integer=*/false);
    ilp.liveColumns.push_back(column);
    Row &definition = definitions[k];
    definition.columns.push_back(column);
    definition.values.push_back(1);
    if (k > 0) {
      definition.columns.push_back(ilp.liveColumns[k - 1]);
      definition.values.push_back(-1);
    }
    definition.lower = definition.upper = 0;
    ilp.rows.push_back(std::move(definition));
    boundMemory(prep, bound, problem.baseBytes[prep.rowTimes[k]], column, Row(),
                maxLive, ilp);
  }
}

/// Adds Σ flops·recompute ≤ limit unless it cannot bind.
void addRecomputeLimitRow(const RematProblem &problem, const Prepared &prep,
                          int64_t limit, Ilp &ilp) {
  if (limit >= prep.totalFlops)
    return;
  Row row;
  for (int i = 0; i < prep.n; ++i)
    if (prep.relevant[i] && problem.ops[i].flops > 0) {
      row.columns.push_back(prep.recomputeCol[i]);
      row.values.push_back(double(problem.ops[i].flops / prep.flopUnit));
    }
  row.upper = double(limit / prep.flopUnit);
  ilp.rows.push_back(std::move(row));
}

void setRecomputeObjective(const RematProblem &problem, const Prepared &prep,
                           Ilp &ilp) {
  for (int i = 0; i < prep.n; ++i)
    if (prep.relevant[i])
      ilp.objective[prep.recomputeCol[i]] =
          double(problem.ops[i].flops / prep.flopUnit);
}

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

/// runCbcUnguarded with CBC's exceptions turned into errors (this file is
/// the only one of the library built with exceptions).
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

/// The op assignment of a column vector.
void readAssignment(const Prepared &prep, const std::vector<double> &values,
                    std::vector<char> &keep, std::vector<char> &recompute) {
  keep.assign(prep.n, 0);
  recompute.assign(prep.n, 0);
  for (int i = 0; i < prep.n; ++i) {
    if (!prep.relevant[i])
      continue;
    keep[i] = values[prep.keepCol[i]] > 0.5;
    recompute[i] = values[prep.recomputeCol[i]] > 0.5;
  }
}

/// Column values of an assignment (plus the peak column, if any).
std::vector<double> columnValues(const RematProblem &problem,
                                 const Prepared &prep, const Ilp &ilp,
                                 const std::vector<char> &keep,
                                 const std::vector<char> &recompute,
                                 int peakColumn, int64_t peak) {
  std::vector<double> values(ilp.numColumns, 0);
  for (int i = 0; i < prep.n; ++i) {
    if (!prep.relevant[i])
      continue;
    values[prep.keepCol[i]] = keep[i] ? 1 : 0;
    values[prep.recomputeCol[i]] = recompute[i] ? 1 : 0;
  }
  std::vector<int64_t> live =
      liveForwardBytes(problem, prep.lastNeed, keep, recompute);
  for (size_t k = 0; k < ilp.liveColumns.size(); ++k)
    values[ilp.liveColumns[k]] = double(live[prep.rowTimes[k]] / prep.byteUnit);
  if (peakColumn >= 0)
    values[peakColumn] = double(peak / prep.byteUnit);
  return values;
}

/// Fills the solution's assignment and derived numbers from keep/recompute.
void setAssignment(const RematProblem &problem, const Prepared &prep,
                   std::vector<char> keep, std::vector<char> recompute,
                   RematSolution &solution) {
  dropUnneeded(problem, prep, keep, recompute);
  solution.recomputeFlops = recomputeFlopsOf(problem, recompute);
  solution.modelPeakBytes = evaluateRematPeak(problem, keep, recompute);
  solution.keep = std::move(keep);
  solution.recompute = std::move(recompute);
}

llvm::Error validateOptions(const RematOptions &options) {
  if (!(options.timeLimitSeconds > 0) ||
      !std::isfinite(options.timeLimitSeconds))
    return makeError("the time limit must be a positive number of seconds");
  if (options.mode == RematMode::MinRecompute && options.budget < 0)
    return makeError(
        llvm::formatv("the memory budget ({0}) is negative", options.budget));
  if (options.mode == RematMode::MinMemory && options.recomputeLimit < 0)
    return makeError(llvm::formatv("the recompute limit ({0}) is negative",
                                   options.recomputeLimit));
  return llvm::Error::success();
}

/// The doubles CBC works with must hold every value exactly.
llvm::Error checkExactness(const RematProblem &problem, const Prepared &prep) {
  int64_t bytes = 0, base = problem.forwardEndBytes;
  for (int i = 0; i < prep.n; ++i)
    if (prep.relevant[i])
      bytes += problem.ops[i].bytes;
  for (int64_t b : problem.baseBytes)
    base = std::max(base, b);
  // Clp's simplex is not robust to coefficients spanning many orders of
  // magnitude: past about 2^32 units it returned assignments breaking the
  // model's own constraints, or failed an assertion and aborted the process
  // (tensors of 2^36 elements beside 64-byte parameters). Such problems are
  // refused here; the caller falls back to a heuristic.
  if ((bytes + base) / prep.byteUnit >= kMaxByteUnits)
    return makeError(llvm::formatv(
        "the byte sizes ({0} in all, common divisor {1}) span more than 2^32 "
        "units, beyond what the LP solver handles reliably",
        bytes + base, prep.byteUnit));
  if (prep.totalFlops / prep.flopUnit >= kExactDoubleLimit)
    return makeError(llvm::formatv(
        "the flop counts ({0} in all, common divisor {1}) are too large to be "
        "solved exactly in double precision",
        prep.totalFlops, prep.flopUnit));
  return llvm::Error::success();
}

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Checks what will be returned against the model itself.
llvm::Error checkSolution(const RematProblem &problem,
                          const RematOptions &options,
                          const RematSolution &solution) {
  if (solution.status != RematStatus::Optimal &&
      solution.status != RematStatus::Feasible)
    return llvm::Error::success();
  if (!isRematFeasible(problem, solution.keep, solution.recompute))
    return makeError("CBC returned an assignment that breaks "
                     "the keep/recompute constraints");
  if (options.mode == RematMode::MinRecompute &&
      solution.modelPeakBytes > options.budget)
    return makeError(
        llvm::formatv("CBC returned an assignment with peak {0} over the "
                      "budget {1}",
                      solution.modelPeakBytes, options.budget));
  if (options.mode == RematMode::MinMemory &&
      solution.recomputeFlops > options.recomputeLimit)
    return makeError(
        llvm::formatv("CBC returned an assignment recomputing {0} flops, "
                      "over the limit {1}",
                      solution.recomputeFlops, options.recomputeLimit));
  return llvm::Error::success();
}

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

} // namespace

llvm::StringRef memopt::stringifyRematStatus(RematStatus status) {
  switch (status) {
  case RematStatus::Optimal:
    return "optimal";
  case RematStatus::Feasible:
    return "feasible";
  case RematStatus::Infeasible:
    return "infeasible";
  case RematStatus::TimedOut:
    return "timed-out";
  }
  return "unknown";
}

llvm::Error memopt::validateRematProblem(const RematProblem &problem) {
  int numTimes = problem.numBackwardSteps;
  if (numTimes < 1)
    return makeError(llvm::formatv(
        "the backward pass needs at least one step, got {0}", numTimes));
  if (problem.baseBytes.size() != size_t(numTimes))
    return makeError(
        llvm::formatv("baseBytes has {0} entries, expected one per backward "
                      "step ({1})",
                      problem.baseBytes.size(), numTimes));
  if (problem.ops.size() >= (size_t(1) << 29))
    return makeError(llvm::formatv("too many ops ({0})", problem.ops.size()));
  if (problem.forwardEndBytes < 0)
    return makeError(llvm::formatv("forwardEndBytes ({0}) is negative",
                                   problem.forwardEndBytes));
  int64_t maxBase = problem.forwardEndBytes;
  for (int t = 0; t < numTimes; ++t) {
    if (problem.baseBytes[t] < 0)
      return makeError(llvm::formatv("baseBytes[{0}] ({1}) is negative", t,
                                     problem.baseBytes[t]));
    maxBase = std::max(maxBase, problem.baseBytes[t]);
  }
  int64_t totalBytes = maxBase, totalFlops = 0;
  for (size_t i = 0; i < problem.ops.size(); ++i) {
    const RematOp &op = problem.ops[i];
    if (op.flops < 0)
      return makeError(
          llvm::formatv("op {0}: flops ({1}) is negative", i, op.flops));
    if (op.bytes < 0)
      return makeError(
          llvm::formatv("op {0}: bytes ({1}) is negative", i, op.bytes));
    for (int p : op.operands)
      if (p < 0 || size_t(p) >= i)
        return makeError(
            llvm::formatv("op {0}: operand {1} is not an earlier op", i, p));
    int first = op.firstBackwardUse, last = op.lastBackwardUse;
    bool none = first == -1 && last == -1;
    if (!none && !(0 <= first && first <= last && last < numTimes))
      return makeError(llvm::formatv(
          "op {0}: backward uses [{1}, {2}] are neither -1/-1 nor an "
          "interval within [0, {3})",
          i, first, last, numTimes));
    if (__builtin_add_overflow(totalBytes, op.bytes, &totalBytes))
      return makeError("the byte sizes overflow 64 bits");
    if (__builtin_add_overflow(totalFlops, op.flops, &totalFlops))
      return makeError("the flop counts overflow 64 bits");
  }
  return llvm::Error::success();
}

std::vector<int> memopt::computeRematLastNeed(const RematProblem &problem) {
  return lastNeedFrom(problem, uniqueOperands(problem));
}

bool memopt::isRematFeasible(const RematProblem &problem,
                             const std::vector<char> &keep,
                             const std::vector<char> &recompute) {
  size_t n = problem.ops.size();
  if (keep.size() != n || recompute.size() != n)
    return false;
  for (size_t i = 0; i < n; ++i) {
    const RematOp &op = problem.ops[i];
    if (keep[i] && recompute[i])
      return false;
    if (op.hasBackwardUse() && !keep[i] && !recompute[i])
      return false;
    if (recompute[i])
      for (int p : op.operands)
        if (p < 0 || size_t(p) >= i || (!keep[p] && !recompute[p]))
          return false;
  }
  return true;
}

int64_t memopt::evaluateRematPeak(const RematProblem &problem,
                                  const std::vector<char> &keep,
                                  const std::vector<char> &recompute) {
  size_t n = problem.ops.size();
  if (keep.size() != n || recompute.size() != n)
    return std::numeric_limits<int64_t>::max();
  int64_t peak = problem.forwardEndBytes;
  for (size_t i = 0; i < n; ++i)
    if (keep[i] && problem.ops[i].hasBackwardUse())
      peak += problem.ops[i].bytes;
  std::vector<int64_t> live =
      liveForwardBytes(problem, computeRematLastNeed(problem), keep, recompute);
  for (size_t t = 0; t < live.size(); ++t) {
    int64_t base = t < problem.baseBytes.size() ? problem.baseBytes[t] : 0;
    peak = std::max(peak, base + live[t]);
  }
  return peak;
}

llvm::Expected<RematSolution>
memopt::solveRematILP(const RematProblem &problem,
                      const RematOptions &options) {
  Clock::time_point start = Clock::now();
  if (llvm::Error error = validateRematProblem(problem))
    return std::move(error);
  if (llvm::Error error = validateOptions(options))
    return std::move(error);
  Prepared prep = prepare(problem);
  if (llvm::Error error = checkExactness(problem, prep))
    return std::move(error);

  // Longer limits than about four months are as good as none (and would
  // overflow the clock).
  Clock::time_point deadline =
      start +
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
          std::min(options.timeLimitSeconds, 1e7)));
  RematSolution solution;
  for (int i = 0; i < prep.n; ++i)
    solution.numFixedOps += !prep.relevant[i];
  llvm::Error error =
      options.mode == RematMode::MinRecompute
          ? solveMinRecompute(problem, options, prep, deadline, solution)
          : solveMinMemory(problem, options, prep, deadline, solution);
  if (error)
    return std::move(error);
  if (llvm::Error error = checkSolution(problem, options, solution))
    return std::move(error);
  solution.solveSeconds = secondsSince(start);
  return solution;
}
