//===- RematILP.h - exact keep/recompute choice by ILP ----------*- C++ -*-===//
//
// Decides, for every forward op of a training step, whether its results stay
// live until the backward pass is done with them ("keep") or are recomputed
// by a clone during the backward pass ("recompute"), and solves that choice
// exactly as a 0-1 integer program with COIN-OR CBC. It is the reference the
// heuristic checkpointing passes are measured against, and the solver to use
// outright on graphs small enough for it.
//
// The model. Forward ops 0..n-1 are in topological order; the backward pass
// runs at times t = 0..T-1. Op i has a recompute cost flops_i, result size
// bytes_i, operands (forward ops < i whose results it reads) and the first
// and last backward times reading its results, [first_i, last_i], or -1/-1
// when the backward pass never reads them ("has uses" below means first_i ≥
// 0). users(i) are the ops listing i as an operand, and
//   lastNeed_i = max(last_i, max over j in users(i) of lastNeed_j)
// (-1 when all are -1) is when a kept op can be freed at the latest: a
// recomputed user, or a clone further down, may need it until its own last
// use (transitive, so a kept op feeding a chain of clones stays counted).
//
// Clones are made once each and run on demand (the checkpoint pass clones
// every recomputed op once, in the order the backward pass first needs it;
// the scheduler runs a clone only when something needs it). So the clone
// of an op with uses is computed at first_i and live over
//   span_i = [first_i, last_i];
// an op without uses read by exactly one op j whose clone has a span is
// computed right when j's clone is, and live at that one time:
//   span_i = [start of span_j, start of span_j];
// any other op has no span and cannot be recomputed (its clone would live
// from its first reader's computation to its last's, a range the model
// does not know). Variables keep_i, recompute_i ∈ {0, 1}:
//   1. has uses:            keep_i + recompute_i ≥ 1
//   2. p operand of i:      recompute_i ≤ keep_p + recompute_p
//      and, if p's span does not contain the start of i's:
//                           recompute_i + recompute_p ≤ 1
//      (i's clone is computed while p's is live; otherwise p's clone would
//      be computed early, for i, and live outside its span)
//   3. always:              keep_i + recompute_i ≤ 1; recompute_i = 0
//                           without a span
//   4. memory, every t:     M_t = baseBytes[t]
//                               + Σ_i bytes_i·keep_i·[t ≤ lastNeed_i]
//                               + Σ_i bytes_i·recompute_i·[t in span_i]
//      and at the forward end: M_end = forwardEndBytes
//                               + Σ_i bytes_i·keep_i·[has uses]
// With 2's second row the spans are exact for the rewrite, so the model's
// memory is what the step holds (up to kept ops freed before lastNeed).
// The price is that a clone cannot feed a clone the backward pass needs
// earlier: on a plain chain the model recomputes single ops from kept
// neighbours, never segments (Chen's or binomial schedules; `auto` measures
// those beside it). Before the second row, it recomputed whole chains whose
// clones all lived at once, reporting savings the step did not have.
// The peak is max(M_end, max_t M_t). Two objectives:
//   - MinRecompute: minimise Σ flops_i·recompute_i subject to peak ≤ budget.
//   - MinMemory: minimise the peak subject to Σ flops_i·recompute_i ≤
//     recomputeLimit; among the solutions with that peak, the least
//     recompute. Solved twice, exactly: first the minimal peak P* (a peak
//     variable bounding every M from above), then the minimal recompute with
//     every M ≤ P*.
//
// Making it small. Ops that neither have uses nor reach (through their
// users) an op with uses can never matter and are fixed to 0 before the ILP
// is built. The coefficients of M_t only change where a span starts or
// ends (+1) and at t = lastNeed_i + 1, so between two consecutive change
// points every M_t has the same variable part and only the t with the
// largest baseBytes can bind: one memory constraint per interval (plus
// M_end). Written out, those constraints would hold O(n·T) nonzeros (every
// kept op appears in every interval up to its lastNeed), so each interval k
// gets a continuous column L_k, its live forward bytes, defined by
// L_k = L_{k-1} + (terms switching on at k) - (terms switching off), which
// projects to the same polytope with O(n + T) nonzeros; the memory
// constraint of the interval is then L_k's upper bound (MinRecompute) or
// L_k + baseBytes ≤ peak (MinMemory). If keeping everything with uses
// already fits the budget, MinRecompute returns it (zero recompute) without
// calling CBC.
//
// Exactness. All byte quantities are divided by their common divisor and all
// flops by theirs, so every row, bound and objective of the ILP has integer
// data and CBC proves optimality on integer objectives (no tolerance can
// accept a worse one); the peak variable can be declared integral because
// every M is an integer in those units.
// Inputs whose scaled sums exceed 2^53, where doubles stop being exact, are
// rejected. The returned assignment is re-evaluated in int64 arithmetic
// (`evaluateRematPeak`), and ops that end up neither having uses nor feeding
// a recomputed op are cleared (this can only lower memory and recompute).
//
// Time limit. CBC itself checks its limit only between branch-and-bound
// nodes, so Clp's LP solves get the same deadline (the root LP alone takes
// seconds at 10,000 ops); since an LP cut short may have pruned a node
// wrongly, a proof (optimality or infeasibility) that arrives past the
// deadline is downgraded to Feasible or TimedOut. Overshoot is then a few
// hundred milliseconds of CBC bookkeeping.
//
// Plain C++17 and LLVM Support; CBC is an implementation detail. CBC is not
// documented as thread-safe, so concurrent calls are serialised (time spent
// waiting counts against the time limit).
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_ANALYSIS_REMATILP_H
#define MEMOPT_ANALYSIS_REMATILP_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <limits>
#include <vector>

namespace memopt {

/// One forward op. See the file comment for the model.
struct RematOp {
  /// Cost of recomputing the op (≥ 0).
  int64_t flops = 0;
  /// Bytes of its results (≥ 0).
  int64_t bytes = 0;
  /// Forward ops whose results it reads; each < this op's index. Repeats are
  /// allowed and mean nothing more.
  std::vector<int> operands;
  /// First and last backward time reading the results, within [0, T) and
  /// first ≤ last; both -1 when the backward pass never reads them.
  int firstBackwardUse = -1;
  int lastBackwardUse = -1;

  bool hasBackwardUse() const { return firstBackwardUse >= 0; }
};

struct RematProblem {
  /// In topological order.
  std::vector<RematOp> ops;
  /// T ≥ 1: the backward pass runs at times 0..T-1.
  int numBackwardSteps = 1;
  /// T entries (≥ 0): memory live at backward time t that is not a forward
  /// result (arguments, gradients, workspace, ...).
  std::vector<int64_t> baseBytes;
  /// Memory other than kept forward results when the backward pass starts
  /// (≥ 0), usually baseBytes[0].
  int64_t forwardEndBytes = 0;
};

enum class RematMode {
  /// Least recompute flops with the peak within `budget`.
  MinRecompute,
  /// Least peak with recompute flops within `recomputeLimit`, then least
  /// recompute at that peak.
  MinMemory,
};

struct RematOptions {
  RematMode mode = RematMode::MinRecompute;
  /// MinRecompute: the peak must not exceed this (≥ 0).
  int64_t budget = 0;
  /// MinMemory: total recompute flops allowed (≥ 0).
  int64_t recomputeLimit = std::numeric_limits<int64_t>::max();
  /// Wall-clock limit of the whole solve (both CBC runs of MinMemory
  /// together), > 0.
  double timeLimitSeconds = 60;
};

enum class RematStatus {
  /// Proven optimal (MinMemory: both the peak and the recompute at it).
  Optimal,
  /// The time limit was hit with a solution in hand: it satisfies every
  /// constraint but may not be optimal. MinMemory always has one (keeping
  /// everything needs no recompute), so it is never TimedOut or Infeasible.
  Feasible,
  /// MinRecompute: no assignment fits the budget (proven).
  Infeasible,
  /// MinRecompute: the time limit was hit before any solution was found.
  TimedOut,
};

llvm::StringRef stringifyRematStatus(RematStatus status);

struct RematSolution {
  RematStatus status = RematStatus::TimedOut;
  /// n entries each (0 or 1) when status is Optimal or Feasible, else empty.
  std::vector<char> keep;
  std::vector<char> recompute;
  /// Σ flops·recompute of the returned assignment.
  int64_t recomputeFlops = 0;
  /// `evaluateRematPeak` of the returned assignment (0 when there is none).
  int64_t modelPeakBytes = 0;
  /// Wall-clock seconds of the whole call, CBC runs included.
  double solveSeconds = 0;
  /// Size of the (first) ILP given to CBC after the presolve described in
  /// the file comment (op columns, live-bytes columns, the peak column);
  /// 0 when none was needed.
  int numVariables = 0;
  int numConstraints = 0;
  /// Ops fixed to keep = recompute = 0 because they can never matter.
  int numFixedOps = 0;
  /// CBC runs made (0, 1 or 2).
  int numSolverCalls = 0;
};

/// Checks the problem's shape and numbers: T ≥ 1, baseBytes has T entries,
/// no negative sizes or costs, operands in [0, i), backward uses either both
/// -1 or 0 ≤ first ≤ last < T, and totals that fit in int64.
llvm::Error validateRematProblem(const RematProblem &problem);

/// lastNeed_i of the file comment, for every op (the problem must be valid).
std::vector<int> computeRematLastNeed(const RematProblem &problem);

/// Constraints 1-3 of the model (not memory): both vectors have one entry
/// per op, every op with backward uses is kept or recomputed, no op is both,
/// every recomputed op has a span, its operands are kept or recomputed, and
/// a recomputed operand's span holds the start of its own. The problem must
/// be valid.
bool isRematFeasible(const RematProblem &problem, const std::vector<char> &keep,
                     const std::vector<char> &recompute);

/// The model's peak max(M_end, max_t M_t) of an assignment (nonzero entries
/// mean 1), in exact integer arithmetic; it does not check constraints 1-3.
/// The problem must be valid; vectors of the wrong length give INT64_MAX.
int64_t evaluateRematPeak(const RematProblem &problem,
                          const std::vector<char> &keep,
                          const std::vector<char> &recompute);

/// Solves the model with CBC (quiet, single-threaded, fixed seeds). Errors
/// are invalid problems or options, and CBC giving up on numerical grounds;
/// infeasibility and time limits are statuses.
llvm::Expected<RematSolution> solveRematILP(const RematProblem &problem,
                                            const RematOptions &options);

} // namespace memopt

#endif // MEMOPT_ANALYSIS_REMATILP_H
