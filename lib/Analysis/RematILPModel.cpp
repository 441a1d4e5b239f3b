//===- RematILPModel.cpp - the rematerialisation 0-1 program --------------===//
//
// Presolve and model building for RematILP.h's program: the deduplicated
// operands, the last time each result is needed, the ops that matter and
// their columns, the common divisors bytes and flops are scaled by, and the
// intervals of backward times with equal memory rows (Prepared); then the
// columns and rows of each ILP CBC is given, and the conversions between an
// assignment and column values.
//
//===----------------------------------------------------------------------===//

#include "RematILPImpl.h"

#include <algorithm>
#include <numeric>
#include <utility>

using namespace memopt;
using namespace memopt::detail;

namespace {

int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
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

} // namespace

namespace memopt::detail {

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

void cloneSpansFrom(const RematProblem &problem,
                    const std::vector<std::vector<int>> &operands,
                    std::vector<int> &first, std::vector<int> &last) {
  size_t n = problem.ops.size();
  std::vector<int> users(n, 0), onlyUser(n, -1);
  for (size_t j = 0; j < n; ++j)
    for (int p : operands[j]) {
      ++users[p];
      onlyUser[p] = int(j);
    }
  first.assign(n, -1);
  last.assign(n, -1);
  // Users come after their operands: last to first, each user's span is
  // final when its operands look at it.
  for (size_t i = n; i-- > 0;) {
    const RematOp &op = problem.ops[i];
    if (op.hasBackwardUse()) {
      first[i] = op.firstBackwardUse;
      last[i] = op.lastBackwardUse;
    } else if (users[i] == 1 && first[onlyUser[i]] >= 0) {
      first[i] = last[i] = first[onlyUser[i]];
    }
  }
}

Prepared prepare(const RematProblem &problem) {
  Prepared prep;
  prep.n = int(problem.ops.size());
  prep.numTimes = problem.numBackwardSteps;
  prep.operands = uniqueOperands(problem);
  prep.lastNeed = lastNeedFrom(problem, prep.operands);
  cloneSpansFrom(problem, prep.operands, prep.cloneFirst, prep.cloneLast);

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
    if (prep.cloneFirst[i] >= 0) {
      mark(prep.cloneFirst[i]);
      mark(prep.cloneLast[i] + 1);
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
                                      const std::vector<int> &cloneFirst,
                                      const std::vector<int> &cloneLast,
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
    if (recompute[i] && cloneFirst[i] >= 0)
      add(op.bytes, cloneFirst[i], cloneLast[i]);
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
    if (prep.cloneFirst[i] < 0)
      ilp.columnUpper[prep.recomputeCol[i]] = 0;
    for (int p : prep.operands[i]) {
      Row dep;
      dep.columns = {prep.recomputeCol[i], prep.keepCol[p],
                     prep.recomputeCol[p]};
      dep.values = {1, -1, -1};
      dep.upper = 0;
      ilp.rows.push_back(std::move(dep));
      // A clone reading another clone is computed while that one is live.
      if (prep.cloneFirst[i] >= 0 && prep.cloneFirst[p] >= 0 &&
          !clonesNest(prep.cloneFirst, prep.cloneLast, p, i)) {
        Row nest;
        nest.columns = {prep.recomputeCol[i], prep.recomputeCol[p]};
        nest.values = {1, 1};
        nest.upper = 1;
        ilp.rows.push_back(std::move(nest));
      }
    }
  }
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
    if (prep.cloneFirst[i] >= 0)
      addTerm(prep.recomputeCol[i], coefficient,
              prep.intervalOf[prep.cloneFirst[i]],
              prep.intervalOf[prep.cloneLast[i]]);
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
  std::vector<int64_t> live = liveForwardBytes(
      problem, prep.lastNeed, prep.cloneFirst, prep.cloneLast, keep, recompute);
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

} // namespace memopt::detail
