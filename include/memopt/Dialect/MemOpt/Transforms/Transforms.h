//===- Transforms.h - the passes' work on one function ----------*- C++ -*-===//
//
// The transformations behind the memory passes, callable on one function
// without a pass manager: checkpointing evaluates candidate plans by running
// the schedule and the arena planner on a scratch copy of the step, and
// compilers embedding memopt can call them directly.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_DIALECT_MEMOPT_TRANSFORMS_TRANSFORMS_H
#define MEMOPT_DIALECT_MEMOPT_TRANSFORMS_TRANSFORMS_H

#include "memopt/Support/ByteSize.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace memopt {

/// `--memopt-schedule` on one single-block function: reorders its ops and
/// inserts the frees. Returns (ops moved, frees inserted), and sets
/// `peakBytes`, if given, to the scheduled function's MemoryAnalysis peak
/// (which the schedule measures anyway); fails with a diagnostic when the
/// dependences cannot be ordered.
mlir::FailureOr<std::pair<int64_t, int64_t>>
scheduleFunction(mlir::func::FuncOp func, int64_t *peakBytes = nullptr);

/// What `getArenaLowerBound(func, alignment)` gives after
/// `scheduleFunction(func)`, computed on the scheduler's own tables for the
/// order it would keep, without reordering the block or inserting frees
/// (the frees of an earlier schedule are erased, as `scheduleFunction`
/// does): for candidates that are measured and thrown away, where applying
/// the order and analysing the result again cost more than the order
/// itself. `--test-memopt-schedule-peak` checks the two agree.
mlir::FailureOr<int64_t> scheduledArenaLowerBound(mlir::func::FuncOp func,
                                                  int64_t alignment);

/// The peak `scheduleFunction(func, &peak)` would report, without
/// reordering the block or inserting frees (as `scheduledArenaLowerBound`).
mlir::FailureOr<int64_t> scheduledPeak(mlir::func::FuncOp func);

/// A function's schedule, chosen and not yet applied: what
/// `scheduleFunction(func)` does, from one reading of the block. Computing
/// it changes nothing (the frees of an earlier schedule aside, which it
/// erases); `apply` reorders the block and inserts the frees.
class PendingSchedule {
public:
  /// Reads `func`'s block and chooses its order; fails with a diagnostic
  /// where `scheduleFunction` would.
  static mlir::FailureOr<PendingSchedule> compute(mlir::func::FuncOp func);

  PendingSchedule(PendingSchedule &&) noexcept;
  PendingSchedule &operator=(PendingSchedule &&) noexcept;
  ~PendingSchedule();

  /// The scheduled function's MemoryAnalysis peak.
  int64_t getPeakBytes() const;

  /// What `getArenaLowerBound(func, alignment)` gives once applied (as
  /// `scheduledArenaLowerBound`): no plan of the scheduled step has a
  /// smaller arena.
  int64_t getArenaLowerBound(int64_t alignment) const;

  /// Whether `func`'s block still holds exactly the ops read, in the same
  /// order: a schedule kept across passes is applied only then.
  bool readsSameBlock(mlir::func::FuncOp func) const;

  /// Reorders the block and inserts the frees, once; returns (ops moved,
  /// frees inserted) as `scheduleFunction`.
  std::pair<int64_t, int64_t> apply();

private:
  struct State;
  explicit PendingSchedule(std::unique_ptr<State> state);
  std::unique_ptr<State> state;
};

/// An analysis of a function (MLIR's analysis manager): the schedule a pass
/// computed for it and did not apply. `--memopt-partition` measures the
/// step as it is with its schedule and, when it leaves the function
/// unchanged, keeps that schedule here; `--memopt-schedule` applies it
/// instead of reading the block again (on a 100k-op step most of the
/// pass's time) if the block still holds the same ops. The analysis
/// manager drops it as soon as a pass changes the function without saying
/// it kept its analyses.
struct CachedSchedule {
  explicit CachedSchedule(mlir::Operation *) {}
  std::optional<PendingSchedule> schedule;
};

/// Arguments appended to a function's entry block, its type and argument
/// attributes brought up to date once, by `commit` (or on destruction):
/// `FunctionOpInterface::insertArgument` makes a new function type and
/// argument attribute array per argument, each uniqued in the context for
/// good, so appending an optimizer's state for every parameter one at a time
/// took time and memory quadratic in the parameters (24 GiB for Adam on a
/// chain of 12,500 layers). Until `commit`, the function's type and
/// attributes know only the arguments it had before.
class AppendedArguments {
public:
  explicit AppendedArguments(mlir::func::FuncOp func) : func(func) {}
  AppendedArguments(const AppendedArguments &) = delete;
  AppendedArguments &operator=(const AppendedArguments &) = delete;
  ~AppendedArguments() { commit(); }

  /// Appends an argument of `type`, with `attrs`, at `loc`.
  mlir::BlockArgument append(mlir::Type type, mlir::DictionaryAttr attrs,
                             mlir::Location loc);
  /// Sets the function's type and argument attributes from its block and
  /// the attributes appended so far.
  void commit();

private:
  mlir::func::FuncOp func;
  llvm::SmallVector<mlir::DictionaryAttr> pending;
};

/// A pass's `budget=` option: std::nullopt when `text` is empty, the bytes
/// when it is a positive byte size; otherwise an error at `anchor` naming
/// `pass`, and failure.
mlir::FailureOr<std::optional<int64_t>>
parseBudgetOption(mlir::Operation *anchor, llvm::StringRef pass,
                  llvm::StringRef text);

/// The largest arena alignment the passes accept (a page).
constexpr int64_t kMaxAlignment = 4096;

/// Fails with an error at `anchor` naming `pass` unless `alignment` is a
/// power of two from 1 to kMaxAlignment.
mlir::LogicalResult verifyAlignmentOption(mlir::Operation *anchor,
                                          llvm::StringRef pass,
                                          int64_t alignment);

/// Fails with an error at `anchor` naming `pass` and `option` unless
/// `fraction` (of the forward pass's FLOPs) is finite and >= 0.
mlir::LogicalResult verifyFlopFractionOption(mlir::Operation *anchor,
                                             llvm::StringRef pass,
                                             llvm::StringRef option,
                                             double fraction);

/// `--memopt-plan-memory` on one function: writes the offsets and the arena
/// attributes and returns the arena's size in bytes. `numBuffers`, when
/// given, receives the number of buffers placed.
mlir::FailureOr<int64_t> planFunctionMemory(mlir::func::FuncOp func,
                                            int64_t alignment,
                                            int64_t *numBuffers = nullptr);

/// The arena `planFunctionMemory` would plan for `func`, without writing
/// anything: std::nullopt when it would exceed `limit` bytes, which the
/// planner then stops at (ArenaPlanner's `PlannerOptions::arenaLimit`):
/// for callers comparing candidates against the best so far.
mlir::FailureOr<std::optional<int64_t>>
planArenaBytes(mlir::func::FuncOp func, int64_t alignment,
               uint64_t limit = std::numeric_limits<uint64_t>::max());

/// The least arena any plan of `func` (scheduled, single block) can have:
/// the most bytes its buffers hold at once, each rounded up to `alignment`
/// (ArenaPlanner's `lowerBound` over the buffers `planFunctionMemory`
/// places), in O(n log n), without planning.
int64_t getArenaLowerBound(mlir::func::FuncOp func, int64_t alignment);

/// Whether the lowering gives the buffer `root` (not an argument, a view or
/// an in-place result) a slice of the arena: a result of a memopt op
/// (constants, other dialects' ops, become constant buffers).
bool ownsArenaSlice(mlir::Value root);

/// How a pass names an op in a reason or remark:
/// `'memopt.relu_backward' at file:line:col` (the first file location inside
/// the op's), or just the quoted name when it has none.
std::string describeOp(mlir::Operation *op);

/// InPlace-ABN on one training step (after `--memopt-autodiff`): every
/// `batch_norm` whose result feeds only a `leaky_relu` (alpha > 0) or an
/// `elu` (alpha > 0), together with the two backward ops the step built for
/// them, becomes `batch_norm_act` + `batch_norm_act_backward`, marked
/// `memopt.inplace = 0` when nothing reads the batch norm's input later.
/// A batch norm followed by a non-invertible activation (relu, alpha <= 0)
/// in the same pattern gets a remark saying why it was not fused. Graphs
/// without the backward ops (inference) are left unchanged. Returns the
/// number of fusions.
mlir::FailureOr<int64_t> fuseInPlaceABN(mlir::func::FuncOp func);

/// Marks `clone` as recomputation (`memopt.recompute`); a clone never
/// writes in place (its operand may be a kept value) and has no planned
/// offsets yet.
void markRecomputed(mlir::Operation *clone);

/// Erases the clones nothing reads (a batch-norm clone's statistics, a clone
/// only an erased clone read), last first, restores a topological order of
/// `block` and returns how many clones remain.
int64_t finishClones(mlir::Block &block,
                     llvm::ArrayRef<mlir::Operation *> clones);

/// What `--memopt-partition` after checkpointing will do to `func`, applied
/// without measuring (what `--memopt-checkpoint{measure-partition=true}`
/// measures its candidates with): the argument copies (a weight's f16 cast)
/// recomputed next to their backward use, within the default
/// `max-recompute`; then, under dynamic loss scaling, weight gradients
/// rechecked: every one when `underBudget` (the smallest step decides
/// whether a candidate fits), else within what the step's recomputation
/// leaves of `stepRecompute` forward passes.
void applyPartitionEstimate(mlir::func::FuncOp func, bool underBudget,
                            double stepRecompute);

/// What recheckGradients did.
struct RecheckedGradients {
  /// Gradients checked when computed and computed again for their update.
  int64_t count = 0;
  /// FLOPs of the recomputation.
  int64_t flops = 0;
  /// Bytes no longer held until the overflow check (each gradient's less
  /// the values its op reads).
  int64_t bytes = 0;
};

/// Under dynamic loss scaling (one `memopt.found_inf` feeding the
/// updates), gradients computed from values at least 4x smaller than
/// themselves and read only by the check and one update are checked by a
/// `memopt.found_inf` of their own when computed and computed again, as
/// recomputation, right before their update; the flags are added. The most
/// bytes saved first, within `flopBudget` recomputed FLOPs and at most
/// `maxCount` gradients. The step computes the same bits.
RecheckedGradients
recheckGradients(mlir::func::FuncOp func, int64_t flopBudget, bool remarks,
                 int64_t maxCount = std::numeric_limits<int64_t>::max());

/// The first op of `block` that writes in place over a value other than a
/// block argument (an optimizer update over its parameter does not count),
/// or null. Recomputation cannot read a value overwritten that way.
mlir::Operation *findInPlaceOverIntermediate(mlir::Block &block);

/// `--memopt-inplace` on one function (its frees already removed): marks
/// every op that may write over a dead operand. Returns how many.
int64_t convertInPlace(mlir::func::FuncOp func, bool remarks);

/// `--memopt-inplace`'s rule: why `op` may not write its result 0 over
/// operand `index` (the types differ, the buffer is an argument or a
/// constant, or an op after `op` reads the buffer through any value living
/// in it); empty when it may. Frees are not readers.
std::string inPlaceRefusal(mlir::Operation *op, unsigned index);

} // namespace memopt

#endif // MEMOPT_DIALECT_MEMOPT_TRANSFORMS_TRANSFORMS_H
