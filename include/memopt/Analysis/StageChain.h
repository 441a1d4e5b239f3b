//===- StageChain.h - the forward pass as a chain of stages -----*- C++ -*-===//
//
// Checkpointing's view of a training step (CheckpointSchedule.h): the
// forward ops the loss depends on, constants aside, cut into stages at the
// narrowest op boundaries, the op boundaries the fewest forward values
// cross (one value in a chain or at a ResNet block output: the articulation
// points of the graph; two, h and c, in an unrolled LSTM, whose only
// single-value boundary is before its head), widening the cut until it
// splits the chain in about sqrt(n) places. Per stage: the values crossing
// its cut, the values its backward reads, and their bytes. Forward ops
// computed from parameters, state and constants alone (f16 weight copies)
// are `fixed`: computed once, read anywhere, in no stage.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_ANALYSIS_STAGECHAIN_H
#define MEMOPT_ANALYSIS_STAGECHAIN_H

#include "memopt/Analysis/CheckpointSchedule.h"
#include "memopt/Analysis/MemoryAnalysis.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <cstdint>
#include <vector>

namespace memopt {

/// The forward pass of a function as a chain of stages; `build` computes
/// it from the function's current op order.
struct StageChain {
  /// The forward ops (constants aside), in block order.
  llvm::SmallVector<mlir::Operation *> ops;
  /// Forward ops of each stage, in block order.
  llvm::SmallVector<llvm::SmallVector<mlir::Operation *>> stages;
  /// cuts[j]: the forward values crossing from stage j to later stages
  /// (j < stages.size() - 1).
  llvm::SmallVector<llvm::SmallVector<mlir::Value>> cuts;
  /// saved[j]: values of stage j outside cuts[j] that a non-forward op
  /// reads (what the stage's backward needs).
  llvm::SmallVector<llvm::SmallVector<mlir::Value>> saved;
  /// Bytes of stage j's values the backward reads (saved and cut).
  llvm::SmallVector<int64_t> weights;
  /// Values crossing each cut.
  int64_t width = 0;
  int64_t forwardFlops = 0;
  int64_t forwardOps = 0;
  /// The forward ops, `fixed` included.
  llvm::DenseSet<mlir::Operation *> forward;
  /// Forward ops computed from parameters, state and constants alone (the
  /// f16 copies of weights under mixed precision), and collectives (ZeRO
  /// stage 3's copies of parameters other ranks hold): like the arguments
  /// they are computed once and read anywhere, so they are in no stage.
  llvm::DenseSet<mlir::Operation *> fixed;

  int64_t size() const { return static_cast<int64_t>(stages.size()); }
  /// Whether every stage is one op: a plain chain of ops.
  bool isPlainChain() const {
    return llvm::all_of(stages, [](const auto &s) { return s.size() == 1; });
  }

  static StageChain build(mlir::func::FuncOp func);
  /// This chain in a clone of its function: every op and value through
  /// `mapping`, which the clone filled. The same as building the clone's
  /// chain, without the analysis.
  StageChain remapped(const mlir::IRMapping &mapping) const;
  /// Whether `op` reads a forward value for the backward pass: any op that
  /// is not forward, not a recomputed clone and not the terminator.
  bool isBackwardUser(mlir::Operation *op) const;
  /// The ops of stage `stage` that computing `values` needs, in order.
  llvm::SmallVector<mlir::Operation *>
  closure(int64_t stage, llvm::ArrayRef<mlir::Value> values) const;
  llvm::SmallVector<mlir::Value> actionTargets(const StageAction &action) const;
  /// FLOPs of the forward ops of stages [0, prefix).
  int64_t prefixFlops(int64_t prefix) const {
    int64_t total = 0;
    for (int64_t j = 0; j < prefix && j < size(); ++j)
      for (mlir::Operation *op : stages[j])
        total += MemoryAnalysis::getFlops(op);
    return total;
  }
  /// The binomial programme over this chain, with its stages' mean advance
  /// and reverse FLOPs as costs.
  RevolveTable revolveTable(int64_t maxSlots) const;

  /// Writes the chain for FileCheck tests (`--test-memopt-print-stages`):
  ///
  ///   stages 3, width 1, forward ops 5, fixed 1, forward flops 1200
  ///     stage 0: ops [memopt.linear, memopt.relu], saved 1 value, cut 1
  ///       value, weight 512 bytes
  ///
  /// (one line per stage; the last stage has no cut).
  void print(llvm::raw_ostream &os) const;
};

/// The FLOPs of running schedules' clones over one chain. An action's FLOPs
/// depend only on its stage and on whether it reverses the stage and
/// derives its output cut, so each of those closures is computed once
/// however many schedules are priced. Not thread-safe; one per search.
class ScheduleFlops {
public:
  explicit ScheduleFlops(const StageChain &chain) : chain(chain) {}
  int64_t operator()(const CheckpointSchedule &schedule);
  /// Whether `table.schedule(prefix, slots)` costs at most `limit` FLOPs,
  /// reading its actions only until they exceed it.
  bool within(const RevolveTable &table, int64_t prefix, int64_t slots,
              int64_t limit);

private:
  int64_t of(const StageAction &action);

  const StageChain &chain;
  /// [stage][reverse + 2 × produceCut]: FLOPs, or -1 before it is needed.
  std::vector<std::array<int64_t, 4>> perAction;
};

} // namespace memopt

#endif // MEMOPT_ANALYSIS_STAGECHAIN_H
