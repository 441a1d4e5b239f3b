//===- MemoryAnalysis.h - sizes, lifetimes and live bytes -------*- C++ -*-===//
//
// What a training step holds in memory, op by op, in its current order: the
// byte size, lifetime and role of every tensor value of a function, which
// values share a buffer, and from that the live bytes at every op, the peak,
// and the forward/backward split the memory report (DESIGN.md §4) states.
//
// A plain class over one function, as Triton's Allocation/Alias analyses:
// passes construct it (directly or through getAnalysis), the report and the
// test-only `--test-memopt-print-liveness` pass print it, and the schedule,
// checkpointing and planning passes read the same numbers, so every tool
// agrees on what "live" means:
//
// * Op indices count the ops of the function's single block in order,
//   without the terminator, which is index `getNumOps()`. Arguments are
//   defined at index -1.
// * A value is live from the op that defines it through its last use,
//   inclusive on both ends: an op's operands and results occupy memory at
//   the same time. A `memopt.free` is a use; a returned value lives to the
//   end (`getNumOps()`).
// * Arguments (parameters, state, optimizer state and data) belong to the
//   caller and are live for the whole step, [-1, getNumOps()].
// * An op with a workspace (WorkspaceOpInterface) holds that many scratch
//   bytes during its own index only; they count in the live bytes there.
// * A value that aliases another (`aliasOf`: a reshape, or a result marked
//   `memopt.inplace`) allocates nothing: it lives in its root's buffer,
//   whose lifetime extends to the last use of every alias.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_ANALYSIS_MEMORYANALYSIS_H
#define MEMOPT_ANALYSIS_MEMORYANALYSIS_H

#include "memopt/Dialect/MemOpt/IR/MemOptDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <cstdint>
#include <optional>

namespace memopt {

/// The dialect's attribute names the analysis reads (declared once, on the
/// dialect in MemOptBase.td).
constexpr llvm::StringLiteral kInPlaceAttrName =
    MemOptDialect::kInPlaceAttrName;
constexpr llvm::StringLiteral kRecomputeAttrName =
    MemOptDialect::kRecomputeAttrName;
constexpr llvm::StringLiteral kArenaBytesAttrName =
    MemOptDialect::kArenaBytesAttrName;

/// What a value is, for the report's totals and for passes that treat
/// activations, gradients and optimizer values differently.
enum class ValueRole {
  /// Arguments, by their `memopt.*` attribute (none: data).
  Param,
  State,
  OptimizerState,
  Data,
  /// A result of a forward op: an op the loss depends on.
  Activation,
  /// A result of any other op: gradients and what computing them needs.
  Gradient,
  /// A result of an optimizer update (a new parameter or optimizer state),
  /// or another backward value the step returns as the new value of an
  /// argument (`memopt.updates`, e.g. Adam's step count).
  Optimizer,
};

/// The role's name as printed: param, state, optimizer_state, data,
/// activation, gradient, optimizer.
llvm::StringRef stringifyValueRole(ValueRole role);

/// Everything the analysis knows about one tensor value.
struct ValueInfo {
  mlir::Value value;
  /// numel × element bytes (sub-byte element types round up to a byte).
  int64_t bytes = 0;
  /// Index of the defining op; -1 for arguments.
  int64_t def = -1;
  /// Index of the last op using the value itself, `getNumOps()` when it is
  /// returned, `def` when it is unused. Aliases are not folded in.
  int64_t lastUse = -1;
  /// The value's buffer, always a root: the value itself unless it aliases.
  mlir::Value root;
  /// Last index at which the buffer is live: for a root, the last use of any
  /// of its aliases (`getNumOps()` for arguments); for an alias, its root's.
  int64_t end = -1;
  ValueRole role = ValueRole::Data;

  bool isAlias() const { return root != value; }
  bool isArgument() const { return def < 0; }
};

/// Sizes, lifetimes and live bytes of a function's tensor values in its
/// current op order. The function must have a body of one block; its IR must
/// not change while the analysis is used.
class MemoryAnalysis {
public:
  explicit MemoryAnalysis(mlir::func::FuncOp func);
  /// For AnalysisManager::getAnalysis: `op` must be a func::FuncOp.
  explicit MemoryAnalysis(mlir::Operation *op);

  /// The value whose buffer `value` reuses, or null when it has its own:
  /// a reshape's operand (a view), or for result 0 of an op carrying
  /// `memopt.inplace = N` its operand N. One step only; see `getRoot`.
  /// This is the single place that says what aliases, so that in-place
  /// rewrites extend it here and every consumer follows.
  static mlir::Value aliasOf(mlir::Value value);
  /// The value owning `value`'s buffer: `aliasOf` followed to the end (the
  /// value itself when it owns one). Needs no analysis, so passes that
  /// change aliasing as they go can ask it.
  static mlir::Value bufferRoot(mlir::Value value);
  /// Bytes of a statically shaped tensor value (numel × element bytes);
  /// 0 for anything else.
  static int64_t getValueBytes(mlir::Value value);
  /// The op's FLOPs: CostOpInterface's count, 0 for ops without it.
  static int64_t getFlops(mlir::Operation *op);
  /// FLOPs of the ops of `func`'s block marked `memopt.recompute`: what
  /// getRecomputeFlops() says, without analysing the function.
  static int64_t sumRecomputeFlops(mlir::func::FuncOp func);
  /// The bytes the runtime's executor allocates for the step of `func`
  /// (docs/plan-format.md, "Memory layout"): one block holding the arena of
  /// `arenaBytes`, then every argument in order, then every tensor constant
  /// in op order, each at the next multiple of max(64, `alignment`). This is
  /// what a budget is measured against and what memopt-run reports as the
  /// measured high-water. Saturates at INT64_MAX (graphs that large are
  /// refused by `verifyGraphSizes`).
  static int64_t getStepBytes(mlir::func::FuncOp func, int64_t arenaBytes,
                              int64_t alignment);
  /// The bytes of the arguments and constants alone, without padding (the
  /// part of getStepBytes outside the arena). Saturates at INT64_MAX.
  static int64_t getPersistentBytes(mlir::func::FuncOp func);
  /// The executor's alignment of every buffer in the step's block.
  static int64_t getBufferAlignment(int64_t alignment) {
    return std::max<int64_t>(64, alignment);
  }
  /// Scratch bytes the op's kernel uses while it runs:
  /// WorkspaceOpInterface's under the function's `memopt.workspace_limit`,
  /// 0 for ops without it.
  static int64_t getWorkspaceBytes(mlir::Operation *op);

  mlir::func::FuncOp getFunction() const { return func; }
  /// The ops of the body in order, without the terminator.
  llvm::ArrayRef<mlir::Operation *> getOps() const { return ops; }
  int64_t getNumOps() const { return static_cast<int64_t>(ops.size()); }
  /// The op's index; `getNumOps()` for the terminator, -1 for an op that is
  /// not in the body.
  int64_t getIndex(mlir::Operation *op) const;

  /// Every tensor value: arguments in order, then results in op order.
  llvm::ArrayRef<ValueInfo> getValues() const { return values; }
  /// The value's info; null for a value the analysis does not track (not a
  /// tensor, or not of this function's block).
  const ValueInfo *lookup(mlir::Value value) const;
  /// The value owning `value`'s buffer (`value` itself when it owns one).
  mlir::Value getRoot(mlir::Value value) const;
  /// Whether `value`'s buffer holds live data at op `index`.
  bool isLiveAt(mlir::Value value, int64_t index) const;

  /// Whether the loss (result 0) depends on `op`. Every op is forward in a
  /// function without a scalar float first result (an inference graph).
  bool isForward(mlir::Operation *op) const;
  /// Whether the op at `index` (0 <= index < getNumOps()) is forward: the
  /// same answer for the op at that position of a clone of the function.
  bool isForwardAt(int64_t index) const { return forward[index]; }
  /// Index of the first backward op: the first op that is not forward and
  /// reads the forward pass, directly or through such ops. Constants, views
  /// and frees never start it, nor do ops over arguments and constants only
  /// (an optimizer's step counter), wherever a schedule puts them.
  /// `getNumOps()` when there is none.
  int64_t getFirstBackwardIndex() const { return firstBackward; }

  /// Bytes of all buffers live at op `index`: arguments always, every other
  /// root while `def ≤ index ≤ end`, aliases never on their own, and the
  /// op's own workspace.
  int64_t getLiveBytes(int64_t index) const { return liveBytes[index]; }
  llvm::ArrayRef<int64_t> getLiveBytes() const { return liveBytes; }
  /// The most bytes live at any op (the arguments' bytes for a function
  /// without ops).
  int64_t getPeakBytes() const { return peakBytes; }

  /// Elements and bytes of the `memopt.param` arguments.
  int64_t getParameterCount() const { return parameterCount; }
  int64_t getParameterBytes() const { return parameterBytes; }
  /// Bytes of the parameter gradients: the `grad` operands of the optimizer
  /// updates, plus the gradients an `optimizer=none` step returns (returned
  /// non-forward values that update no argument). 0 without a training step.
  int64_t getGradientBytes() const { return gradientBytes; }
  /// Bytes of the `memopt.optimizer_state` arguments.
  int64_t getOptimizerStateBytes() const { return optimizerStateBytes; }
  /// Bytes of the gradients gradient clipping holds at once: the operands
  /// of `memopt.clip_coefficient`, all live when it runs (without clipping
  /// each gradient can die at its update); 0 without clipping.
  int64_t getClippedGradientBytes() const { return clippedGradientBytes; }
  /// Bytes of the forward ops' results that own a buffer (not aliases).
  int64_t getForwardAllocatedBytes() const { return forwardAllocatedBytes; }
  /// Bytes of forward buffers (not arguments) still live when the first
  /// backward op runs; 0 without a backward op.
  int64_t getSavedForBackwardBytes() const { return savedForBackwardBytes; }
  /// FLOPs of all ops, and of the ops marked `memopt.recompute`.
  int64_t getTotalFlops() const { return totalFlops; }
  int64_t getRecomputeFlops() const { return recomputeFlops; }
  /// The function's `memopt.arena_bytes`, once planned.
  std::optional<int64_t> getArenaBytes() const;

  /// Writes what the analysis computed, for FileCheck tests
  /// (`--test-memopt-print-liveness`): a header line, one line per tensor
  /// value in definition order, then the live bytes at each op:
  ///
  ///   func @f: 2 ops, first backward op 2, peak 2048 bytes
  ///     arg/0 %arg0: size = 1024, live = [-1, 2], role = data
  ///     memopt.reshape/1 %1: size = 1024, live = [0, 2], role = activation,
  ///         alias of %0
  ///     op 0 memopt.relu: live_bytes = 2048
  ///
  /// `live` is the value's buffer in op indices, inclusive: an alias shows
  /// its root's interval.
  void print(llvm::raw_ostream &os) const;

private:
  void analyze();
  void computeForwardSet();
  void computeLifetimes();
  void computeTotals();
  ValueRole roleOfResult(mlir::Operation *op) const;
  /// The position of `value`'s info in `values`, -1 when untracked.
  int64_t valuePosition(mlir::Value value) const;

  mlir::func::FuncOp func;
  mlir::Block *body = nullptr;
  llvm::SmallVector<mlir::Operation *> ops;
  llvm::DenseMap<mlir::Operation *, int64_t> opIndex;
  llvm::SmallVector<ValueInfo> values;
  /// Where each value's info is in `values` (-1: not a tensor), without a
  /// map of its own (a second hash table as large as the ops' was most of
  /// the analysis's construction): by argument number, and for results by
  /// the op's index, `firstResult[index]` + the result number.
  std::vector<int32_t> argumentPositions;
  std::vector<uint32_t> firstResult;
  std::vector<int32_t> resultPositions;
  /// Per op index: whether the loss depends on the op.
  llvm::SmallVector<bool> forward;
  bool hasLoss = false;
  int64_t firstBackward = 0;
  llvm::SmallVector<int64_t> liveBytes;
  int64_t peakBytes = 0;
  int64_t parameterCount = 0;
  int64_t parameterBytes = 0;
  int64_t gradientBytes = 0;
  int64_t optimizerStateBytes = 0;
  int64_t clippedGradientBytes = 0;
  int64_t forwardAllocatedBytes = 0;
  int64_t savedForBackwardBytes = 0;
  int64_t totalFlops = 0;
  int64_t recomputeFlops = 0;
};

} // namespace memopt

#endif // MEMOPT_ANALYSIS_MEMORYANALYSIS_H
