//===- CheckpointTest.cpp - checkpointed steps are bit-identical ----------===//
//
// --memopt-checkpoint only recomputes values the step already computed, from
// the same inputs with the same ops: with any strategy the loss and the
// updated parameters (and batch-norm running statistics) must equal the
// un-checkpointed step's bit for bit (f32), over several steps, on models
// with batch norm, residual connections, dropout, attention and recurrence.
// The heuristic strategies must recompute something on every model, so a
// pass that silently did nothing fails here (`strategy=optimal` may choose
// not to: these models are small enough that parameters dominate). That
// checkpointing saves memory is tested on full-size graphs in
// test/Transforms/checkpoint-*.mlir and measured in bench/.
//
//===----------------------------------------------------------------------===//

#include "TrainingTestUtil.h"

#include "memopt/runtime/Plan.h"

#include <gtest/gtest.h>

using namespace memopt::testing;

namespace {

/// Ops marked `memopt.recompute` after running `pipeline` on `source`.
size_t countRecomputed(const std::string &source, const std::string &pipeline) {
  return countOpsAfter(source, pipeline, [](mlir::Operation *op) {
    return op->hasAttr("memopt.recompute");
  });
}

/// The whole step as planned: arguments plus the arena.
uint64_t stepBytes(const CompiledStep &step) {
  uint64_t bytes = step.plan().arenaBytes;
  for (size_t i = 0; i < step.numArguments(); ++i)
    bytes += step.plan().argumentTensor(i).bytes;
  return bytes;
}

uint64_t compiledBytes(const std::string &source, const std::string &pipeline) {
  auto step = CompiledStep::compile(source, pipeline + ",memopt-schedule,"
                                                       "memopt-plan-memory");
  return step ? stepBytes(*step) : 0;
}

void expectCheckpointExact(const std::string &source,
                           const std::string &autodiff,
                           const std::string &checkpoint, int steps = 2,
                           bool mustRecompute = true) {
  SCOPED_TRACE(checkpoint);
  std::string tail = "memopt-schedule,memopt-plan-memory";
  auto base = CompiledStep::compile(source, autodiff + "," + tail);
  auto other =
      CompiledStep::compile(source, autodiff + "," + checkpoint + "," + tail);
  ASSERT_TRUE(base && other);
  if (mustRecompute) {
    EXPECT_GT(countRecomputed(source, autodiff + "," + checkpoint), 0u)
        << "nothing was recomputed";
  }
  expectStepsBitIdentical(*base, *other, steps, 11);
}

/// Each strategy, and whether it must recompute something.
const std::pair<const char *, bool> kStrategies[] = {
    {"memopt-checkpoint{strategy=sqrt}", true},
    {"memopt-checkpoint{strategy=optimal solver=dp}", true},
    {"memopt-checkpoint{strategy=optimal solver=ilp}", false},
    {"memopt-checkpoint{strategy=optimal}", false},
};

TEST(Checkpoint, MlpAllStrategiesBitIdentical) {
  // Three layers: sqrt keeps the one checkpoint worth keeping and drops
  // nothing; the binomial schedule recomputes.
  for (auto [strategy, must] : kStrategies)
    expectCheckpointExact(
        exampleSource("mlp.mlir"), "memopt-autodiff{optimizer=adam}", strategy,
        2, must && std::string(strategy).find("sqrt") == std::string::npos);
}

TEST(Checkpoint, CnnWithBatchNormBitIdentical) {
  // Batch norm in training mode: the clones' running statistics are
  // discarded, the step's new statistics (results 1..) stay exact.
  for (auto [strategy, must] : kStrategies)
    expectCheckpointExact(exampleSource("cnn.mlir"),
                          "memopt-autodiff{optimizer=momentum lr=0.05}",
                          strategy, 2, must);
}

TEST(Checkpoint, ResNetBitIdentical) {
  for (auto [strategy, must] : kStrategies)
    expectCheckpointExact(suiteModelSource("cifar-resnet"), "memopt-autodiff",
                          strategy, 2, must);
}

TEST(Checkpoint, GptWithDropoutBitIdentical) {
  // Dropout masks are regenerated from the op's seed and the step.
  for (auto [strategy, must] : kStrategies)
    expectCheckpointExact(suiteModelSource("gpt2"),
                          "memopt-autodiff{optimizer=adam}", strategy, 3, must);
}

TEST(Checkpoint, LstmBitIdentical) {
  for (auto [strategy, must] : kStrategies)
    expectCheckpointExact(suiteModelSource("lstm"), "memopt-autodiff", strategy,
                          2, must);
}

TEST(Checkpoint, BudgetBitIdenticalAndMet) {
  // A budget halfway between the un-checkpointed step and the sqrt one
  // forces a real choice, which must fit.
  for (const std::string &source :
       {suiteModelSource("cifar-resnet"), suiteModelSource("gpt2")}) {
    uint64_t none = compiledBytes(source, "memopt-autodiff");
    uint64_t sqrt = compiledBytes(
        source, "memopt-autodiff,memopt-checkpoint{strategy=sqrt}");
    ASSERT_LT(sqrt, none) << "the test model should gain from checkpointing";
    uint64_t budget = (none + sqrt) / 2;
    std::string pass =
        "memopt-checkpoint{strategy=budget budget=" + std::to_string(budget) +
        "}";
    expectCheckpointExact(source, "memopt-autodiff", pass);
    EXPECT_LE(compiledBytes(source, "memopt-autodiff," + pass), budget);
  }
}

TEST(Checkpoint, MultiLevelRecomputationBitIdentical) {
  // Few segments and few slots: stages are recomputed more than once, from
  // cuts that were themselves recomputed.
  expectCheckpointExact(suiteModelSource("cifar-resnet"), "memopt-autodiff",
                        "memopt-checkpoint{strategy=sqrt segments=2}");
  expectCheckpointExact(suiteModelSource("gpt2"), "memopt-autodiff",
                        "memopt-checkpoint{strategy=optimal solver=dp}", 1);
}

} // namespace
