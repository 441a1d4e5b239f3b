//===- RematILP.cpp - exact keep/recompute choice with CBC ----------------===//
//
// Builds the 0-1 program of RematILP.h as sparse rows, hands it to CBC's
// branch and cut (CbcModel, with the cut generators and heuristics CBC's
// command-line driver adds by default; RematILPSolve.cpp), and reads the
// assignment back.
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
// This file holds the public entry points and the checks around the solve:
// the problem and the options are validated, the scaled data checked to be
// exact in doubles, and the answer checked against the model. The program
// is built in RematILPModel.cpp and solved in RematILPSolve.cpp.
//
//===----------------------------------------------------------------------===//

#include "memopt/Analysis/RematILP.h"

#include "RematILPImpl.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace memopt;
using namespace memopt::detail;

namespace memopt::detail {

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message.str());
}

} // namespace memopt::detail

namespace {

/// Doubles represent every integer up to this exactly; the scaled ILP data
/// must stay below it.
constexpr int64_t kExactDoubleLimit = int64_t(1) << 53;
/// The most memory units (bytes over their common divisor) a problem may
/// total; see checkExactness.
constexpr int64_t kMaxByteUnits = int64_t(1) << 32;

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
  std::vector<std::vector<int>> operands = uniqueOperands(problem);
  std::vector<int> first, last;
  cloneSpansFrom(problem, operands, first, last);
  for (size_t i = 0; i < n; ++i) {
    const RematOp &op = problem.ops[i];
    if (keep[i] && recompute[i])
      return false;
    if (op.hasBackwardUse() && !keep[i] && !recompute[i])
      return false;
    if (recompute[i] && first[i] < 0)
      return false;
    if (recompute[i])
      for (int p : op.operands)
        if (p < 0 || size_t(p) >= i || (!keep[p] && !recompute[p]) ||
            (recompute[p] && !clonesNest(first, last, p, int(i))))
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
  std::vector<std::vector<int>> operands = uniqueOperands(problem);
  std::vector<int> first, last;
  cloneSpansFrom(problem, operands, first, last);
  std::vector<int64_t> live = liveForwardBytes(
      problem, lastNeedFrom(problem, operands), first, last, keep, recompute);
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
