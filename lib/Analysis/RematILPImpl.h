//===- RematILPImpl.h - the rematerialisation ILP's parts -------*- C++ -*-===//
//
// Internal to lib/Analysis/RematILP*.cpp: the presolved problem (Prepared),
// the 0-1 program as sparse rows (Ilp), and the functions that build it
// (RematILPModel.cpp), solve it with CBC (RematILPSolve.cpp) and check and
// drive it (RematILP.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_LIB_ANALYSIS_REMATILPIMPL_H
#define MEMOPT_LIB_ANALYSIS_REMATILPIMPL_H

#include "memopt/Analysis/RematILP.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <CoinFinite.hpp>

#include <chrono>
#include <cstdint>
#include <vector>

namespace memopt::detail {

using Clock = std::chrono::steady_clock;

/// An llvm::Error with `message` (RematILP.cpp).
llvm::Error makeError(const llvm::Twine &message);

/// The problem's users lists, deduplicated operands and the presolve facts
/// every step needs.
struct Prepared {
  int n = 0;
  int numTimes = 0;
  /// Operands of each op, sorted and without repeats.
  std::vector<std::vector<int>> operands;
  std::vector<int> lastNeed;
  /// The backward times a clone of each op is live, or -1/-1 for ops that
  /// cannot be recomputed (see cloneSpansFrom).
  std::vector<int> cloneFirst, cloneLast;
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

//===----------------------------------------------------------------------===//
// Presolve and model building (RematILPModel.cpp)
//===----------------------------------------------------------------------===//

std::vector<std::vector<int>> uniqueOperands(const RematProblem &problem);
std::vector<int> lastNeedFrom(const RematProblem &problem,
                              const std::vector<std::vector<int>> &operands);
/// When the clone of each op would be live, as the checkpoint pass clones
/// (once) and the scheduler runs clones (on demand): an op with backward
/// uses over [first use, last use]; an op without, feeding one op only, at
/// the moment that op's clone is computed; any other op cannot be
/// recomputed (-1/-1).
void cloneSpansFrom(const RematProblem &problem,
                    const std::vector<std::vector<int>> &operands,
                    std::vector<int> &first, std::vector<int> &last);
/// Whether recomputing both `p` and its user `i` keeps each clone within
/// its span: i's clone is computed while p's is live.
inline bool clonesNest(const std::vector<int> &first,
                       const std::vector<int> &last, int p, int i) {
  return first[p] <= first[i] && first[i] <= last[p];
}
Prepared prepare(const RematProblem &problem);
std::vector<int64_t> liveForwardBytes(const RematProblem &problem,
                                      const std::vector<int> &lastNeed,
                                      const std::vector<int> &cloneFirst,
                                      const std::vector<int> &cloneLast,
                                      const std::vector<char> &keep,
                                      const std::vector<char> &recompute);
void dropUnneeded(const RematProblem &problem, const Prepared &prep,
                  std::vector<char> &keep, std::vector<char> &recompute);
int64_t recomputeFlopsOf(const RematProblem &problem,
                         const std::vector<char> &recompute);

Ilp makeIlp(const Prepared &prep, bool withPeak, int &peakColumn);
void addStructureRows(const RematProblem &problem, const Prepared &prep,
                      Ilp &ilp);
void addMemoryRows(const RematProblem &problem, const Prepared &prep,
                   const MemoryBound &bound, Ilp &ilp);
void addRecomputeLimitRow(const RematProblem &problem, const Prepared &prep,
                          int64_t limit, Ilp &ilp);
void setRecomputeObjective(const RematProblem &problem, const Prepared &prep,
                           Ilp &ilp);

void readAssignment(const Prepared &prep, const std::vector<double> &values,
                    std::vector<char> &keep, std::vector<char> &recompute);
std::vector<double> columnValues(const RematProblem &problem,
                                 const Prepared &prep, const Ilp &ilp,
                                 const std::vector<char> &keep,
                                 const std::vector<char> &recompute,
                                 int peakColumn, int64_t peak);
void setAssignment(const RematProblem &problem, const Prepared &prep,
                   std::vector<char> keep, std::vector<char> recompute,
                   RematSolution &solution);

//===----------------------------------------------------------------------===//
// Solving with CBC (RematILPSolve.cpp)
//===----------------------------------------------------------------------===//

llvm::Error solveMinRecompute(const RematProblem &problem,
                              const RematOptions &options, const Prepared &prep,
                              Clock::time_point deadline,
                              RematSolution &solution);
llvm::Error solveMinMemory(const RematProblem &problem,
                           const RematOptions &options, const Prepared &prep,
                           Clock::time_point deadline, RematSolution &solution);

} // namespace memopt::detail

#endif // MEMOPT_LIB_ANALYSIS_REMATILPIMPL_H
