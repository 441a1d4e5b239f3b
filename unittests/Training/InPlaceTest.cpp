//===- InPlaceTest.cpp - in-place steps are bit-identical -----------------===//
//
// --memopt-inplace only changes where results are stored: a step whose
// element-wise ops overwrite dead operands must compute the same loss, the
// same updated parameters and the same running statistics, bit for bit (f32),
// as the step without, over several steps. ResNet-18, DenseNet-121 and U-Net
// are the models (residual adds, concatenations, skip connections:
// the places where in-place is unsafe and must be refused); GPT-2 adds
// dropout, GELU and layer norm, the LSTM sigmoid and tanh chains. Each case
// also checks that ops did go in place and that the planned arena did not
// grow.
//
//===----------------------------------------------------------------------===//

#include "TrainingTestUtil.h"

#include <gtest/gtest.h>

using namespace memopt::testing;

namespace {

/// Ops marked `memopt.inplace` that write over a value (not an argument)
/// after running `pipeline` on `source`.
size_t countInPlace(const std::string &source, const std::string &pipeline) {
  return countOpsAfter(source, pipeline, [](mlir::Operation *op) {
    auto index = op->getAttrOfType<mlir::IntegerAttr>("memopt.inplace");
    return index &&
           !mlir::isa<mlir::BlockArgument>(op->getOperand(index.getInt()));
  });
}

void expectInPlaceExact(const std::string &source, const std::string &autodiff,
                        int steps = 2, const std::string &before = "") {
  std::string tail = "memopt-schedule,memopt-plan-memory";
  std::string prefix = autodiff + (before.empty() ? "" : "," + before);
  auto base = CompiledStep::compile(source, prefix + "," + tail);
  auto other =
      CompiledStep::compile(source, prefix + ",memopt-inplace," + tail);
  ASSERT_TRUE(base && other);
  EXPECT_GT(countInPlace(source, prefix + ",memopt-inplace"), 0u)
      << "nothing went in place";
  EXPECT_LE(other->plan().arenaBytes, base->plan().arenaBytes);
  expectStepsBitIdentical(*base, *other, steps, 3);
}

TEST(InPlace, ResNet18BitIdentical) {
  expectInPlaceExact(suiteModelSource("resnet18"),
                     "memopt-autodiff{optimizer=momentum}");
}

TEST(InPlace, DenseNet121BitIdentical) {
  expectInPlaceExact(suiteModelSource("densenet121"), "memopt-autodiff", 1);
}

TEST(InPlace, UNetBitIdentical) {
  expectInPlaceExact(suiteModelSource("unet"),
                     "memopt-autodiff{optimizer=adam}");
}

TEST(InPlace, GptWithDropoutBitIdentical) {
  expectInPlaceExact(suiteModelSource("gpt2"),
                     "memopt-autodiff{optimizer=adam}", 3);
}

TEST(InPlace, LstmBitIdentical) {
  expectInPlaceExact(suiteModelSource("lstm"), "memopt-autodiff");
}

TEST(InPlace, AfterCheckpointingBitIdentical) {
  // Recomputed clones are readers like any other: in-place decisions made
  // after checkpointing see them.
  expectInPlaceExact(suiteModelSource("cifar-resnet"), "memopt-autodiff", 2,
                     "memopt-checkpoint{strategy=sqrt}");
}

TEST(InPlace, EvaluationBitIdentical) {
  // Inference graphs: batch norm in evaluation mode runs in place too.
  std::string source = suiteModelSource("resnet18");
  auto base = CompiledStep::compile(
      source, "memopt-eval-mode,memopt-schedule,memopt-plan-memory");
  auto other = CompiledStep::compile(
      source,
      "memopt-eval-mode,memopt-inplace,memopt-schedule,memopt-plan-memory");
  ASSERT_TRUE(base && other);
  EXPECT_LT(other->plan().arenaBytes, base->plan().arenaBytes);
  base->randomize(9);
  other->randomize(9);
  base->run(0);
  other->run(0);
  for (size_t r = 0; r < base->plan().results.size(); ++r)
    EXPECT_EQ(base->result(r), other->result(r)) << "result " << r;
}

} // namespace
