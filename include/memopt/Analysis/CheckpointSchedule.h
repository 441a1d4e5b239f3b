//===- CheckpointSchedule.h - which stages to recompute, and when -*- C++
//-*-===//
//
// Checkpointing sees a training step's forward pass as a chain of stages
// split at cuts: points of the forward order that only a few values cross
// (a chain's every op boundary, a ResNet's block outputs). Reversing the
// chain, the backward pass needs each stage's saved values in turn, last
// stage first. A checkpoint schedule says how each stage gets them:
//
// * stored: the original forward values are kept (no action);
// * recomputed: an action clones the stage from a version of its input cut
//   (the original, or one an earlier action recomputed) and the stage's
//   backward reads the clones.
//
// Actions come in the order the backward pass needs them, which is the order
// the scheduler runs them in (recomputation is demand-driven).
//
// Two families, over stages 0..n-1 (cut j follows stage j):
//
// * `sqrtSchedule` (Chen et al. 2016): checkpoints split the chain into
//   segments; every segment but the last is recomputed once, whole, from its
//   checkpoint, right before its backward.
// * `RevolveTable` (Griewank & Walther's binomial checkpointing): with `s`
//   cut versions held at once, the schedule of least recomputation, found by
//   dynamic programming over uniform stages; stages may be recomputed more
//   than once, intermediate cuts re-derived from the nearest checkpoint.
//
// Both can leave a suffix of the chain stored, which is what a byte budget
// slightly under the unoptimised peak calls for.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_ANALYSIS_CHECKPOINTSCHEDULE_H
#define MEMOPT_ANALYSIS_CHECKPOINTSCHEDULE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <string>
#include <vector>

namespace memopt {

/// Recompute stage `stage` from a version of its input cut (`stage - 1`).
struct StageAction {
  int64_t stage = 0;
  /// The action that produced the input cut's version, or -1 for the
  /// original forward values (always for stage 0, whose input is the
  /// step's arguments).
  int64_t source = -1;
  /// Bind the stage's backward to the clones: the stage's saved values and
  /// the input cut's version. False for an advance that only derives the
  /// output cut.
  bool reverse = false;
  /// Also derive the stage's output cut (a version later actions use).
  bool produceCut = false;
};

/// A complete schedule: actions in order of need. Stages no action reverses
/// keep their original values.
struct CheckpointSchedule {
  std::string name;
  std::vector<StageAction> actions;
  /// Recomputation in stage executions (each action counts one).
  int64_t stageRecomputes() const {
    return static_cast<int64_t>(actions.size());
  }
};

/// Checks that `schedule` is well formed for `numStages` stages: sources
/// precede their users and produce the right cut, each stage is reversed at
/// most once, every reversed stage's input exists. Returns an empty string
/// when it is, else what is wrong.
std::string verifyCheckpointSchedule(const CheckpointSchedule &schedule,
                                     int64_t numStages);

/// Chen et al.'s segments over stages [0, prefix): `boundaries` are the
/// stages after which a checkpoint is kept (ascending, < prefix - 1); each
/// segment before the last checkpoint's successor is recomputed once;
/// stages from the last segment to the end of the chain are stored.
CheckpointSchedule sqrtSchedule(llvm::ArrayRef<int64_t> boundaries,
                                int64_t prefix);

/// Segment boundaries for about `segments` segments of equal weight over
/// stages [0, prefix): greedy on the running sum of `weights`.
llvm::SmallVector<int64_t> balancedBoundaries(llvm::ArrayRef<int64_t> weights,
                                              int64_t prefix, int64_t segments);

/// Binomial checkpointing by dynamic programming over chains of up to
/// `maxStages` uniform stages and up to `maxSlots` checkpoint slots. A stage
/// costs `advanceCost` to recompute up to its output cut and `reverseCost`
/// to recompute what its backward reads besides its cuts (0 for a layer
/// whose backward reads only its input and output: Griewank's classic
/// setting, where reversing a step is free once its input is there).
class RevolveTable {
public:
  /// `exhaustive` tries every split where the table otherwise bisects
  /// (the costs are convex in the split; see addSlot): the same table,
  /// slower, for tests that check exactly that.
  RevolveTable(int64_t maxStages, int64_t maxSlots, int64_t advanceCost = 1,
               int64_t reverseCost = 1, bool exhaustive = false);

  int64_t getMaxStages() const { return maxStages; }
  int64_t getMaxSlots() const { return maxSlots; }
  /// Extends the table by one slot (getMaxSlots() + 1), so that a caller
  /// looking for the fewest slots that do pays only for the rows it reads.
  void addSlot();

  /// Least cost to reverse the first `stages` stages of the forward pass
  /// with `slots` checkpoint slots (the last of those stages is stored; it
  /// ran last).
  int64_t cost(int64_t stages, int64_t slots) const;
  /// The least slots whose cost is at most `limit`, or -1.
  int64_t minSlotsWithin(int64_t stages, int64_t limit) const;
  /// The schedule reaching `cost(prefix, slots)` over stages [0, prefix);
  /// the stages from `prefix` on are stored.
  CheckpointSchedule schedule(int64_t prefix, int64_t slots) const;
  /// Calls `visit` with the actions of schedule(prefix, slots) in order,
  /// until it returns false, without building the schedule: with few slots
  /// it holds O(prefix^2) actions, which a caller pricing it against a limit
  /// need not all see.
  void forEachAction(int64_t prefix, int64_t slots,
                     llvm::function_ref<bool(const StageAction &)> visit) const;

private:
  struct Emitter;
  int64_t &topAt(int64_t stages, int64_t slots);
  int64_t &innerAt(int64_t stages, int64_t slots);
  int64_t topValue(int64_t stages, int64_t slots) const;
  int64_t innerValue(int64_t stages, int64_t slots) const;
  int64_t topSplit(int64_t stages, int64_t slots) const;
  int64_t innerSplit(int64_t stages, int64_t slots) const;
  void emitTop(int64_t first, int64_t stages, int64_t slots,
               Emitter &out) const;
  void emitInner(int64_t first, int64_t stages, int64_t slots, int64_t source,
                 Emitter &out) const;

  int64_t maxStages;
  int64_t maxSlots;
  int64_t advanceCost;
  int64_t reverseCost;
  bool exhaustive;
  /// [slots][stages]: least cost; the split achieving it (0: use one slot
  /// fewer; the stage count of the left part otherwise).
  std::vector<int64_t> top, inner;
  std::vector<int32_t> topChoice, innerChoice;
};

} // namespace memopt

#endif // MEMOPT_ANALYSIS_CHECKPOINTSCHEDULE_H
