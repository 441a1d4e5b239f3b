//===- FuseLinearCrossEntropyTest.cpp - chunked LM-head loss vs unfused ---===//
//
// Differential tests of --memopt-fuse-linear-cross-entropy: a training
// step's loss and every parameter gradient with memopt.linear_cross_entropy
// (logits a chunk of rows at a time, recomputed in the backward pass)
// against linear → reshape → cross_entropy, on the CPU runtime in f32,
// within 1e-5 of each result's largest magnitude: a GPT-2 with tied
// embeddings (the weight is also the embedding table, so its gradient is
// a sum) in chunks that do not divide the rows, with a workspace capped to
// one row, and planned; a 2-D head on a matmul with transpose_b; and
// biased heads (a linear layer's bias, and Transpose, MatMul and Add as
// the ONNX exporters write one).
// The gradient rule itself is checked against finite differences in
// GradCheckTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "TrainingTestUtil.h"

#include <gtest/gtest.h>

using namespace memopt;
using namespace memopt::testing;

namespace {

/// `source` through `autodiff` + `after`, with and without the fusion
/// (`fusion`, a pass with its options) first.
void expectFusedMatchesUnfused(const std::string &source,
                               const std::string &fusion,
                               const std::string &autodiff,
                               const std::string &after) {
  auto base = CompiledStep::compile(source, autodiff + after);
  auto fused = CompiledStep::compile(source, fusion + "," + autodiff + after);
  ASSERT_TRUE(base && fused);
  using runtime::KernelKind;
  EXPECT_EQ(countKernels(*fused, KernelKind::LinearCrossEntropy), 1u);
  EXPECT_EQ(countKernels(*fused, KernelKind::LinearCrossEntropyBackward), 1u);
  EXPECT_EQ(countKernels(*fused, KernelKind::CrossEntropy), 0u);
  EXPECT_EQ(countKernels(*base, KernelKind::CrossEntropy), 1u);
  expectResultsCloseToRounding(*base, *fused, /*seed=*/7, 1e-5);
}

// 134 rows (2 x 67 tokens) in chunks of 9: fourteen full chunks and one of
// 8.
const char *kFusion = "memopt-fuse-linear-cross-entropy{min-classes=1 chunk=9}";

TEST(FuseLinearCrossEntropy, Gpt2TiedEmbeddingsMatchUnfused) {
  expectFusedMatchesUnfused(suiteModelSource("gpt2-odd"), kFusion,
                            "memopt-autodiff{optimizer=none}", "");
}

TEST(FuseLinearCrossEntropy, PlannedAndCappedMatchUnfused) {
  std::string source = suiteModelSource("gpt2-odd");
  const std::string autodiff = "memopt-autodiff{optimizer=none}";
  expectFusedMatchesUnfused(source, kFusion, autodiff,
                            ",memopt-schedule,memopt-plan-memory");
  expectFusedMatchesUnfused(source, kFusion, autodiff,
                            ",memopt-workspace-limit{bytes=0},memopt-schedule,"
                            "memopt-plan-memory");
}

const char *kMatMulHead = R"mlir(
func.func @f(%x: tensor<12x6xf32>, %w: tensor<6x6xf32> {memopt.param},
             %head: tensor<50x6xf32> {memopt.param}, %labels: tensor<12xi64>)
    -> tensor<f32> {
  %h = memopt.linear %x, %w : tensor<12x6xf32>, tensor<6x6xf32>
  %t = memopt.tanh %h : tensor<12x6xf32>
  %logits = memopt.matmul %t, %head {transpose_b = true} : tensor<12x6xf32>, tensor<50x6xf32>
  %loss = memopt.cross_entropy %logits, %labels : tensor<12x50xf32>, tensor<12xi64>
  return %loss : tensor<f32>
}
)mlir";

TEST(FuseLinearCrossEntropy, MatMulHeadMatchesUnfused) {
  expectFusedMatchesUnfused(
      kMatMulHead, "memopt-fuse-linear-cross-entropy{min-classes=50 chunk=5}",
      "memopt-autodiff{optimizer=none}", ",memopt-schedule,memopt-plan-memory");
}

// A biased head, as a linear layer and as the ONNX exporters write one
// (Transpose, MatMul, Add, Reshape: kBiasedOnnxHead): the bias's gradient
// too.
const char *kBiasedLinearHead = R"mlir(
func.func @f(%x: tensor<12x6xf32>, %w: tensor<6x6xf32> {memopt.param},
             %head: tensor<50x6xf32> {memopt.param},
             %b: tensor<50xf32> {memopt.param}, %labels: tensor<12xi64>)
    -> tensor<f32> {
  %h = memopt.linear %x, %w : tensor<12x6xf32>, tensor<6x6xf32>
  %t = memopt.tanh %h : tensor<12x6xf32>
  %logits = memopt.linear %t, %head, %b : tensor<12x6xf32>, tensor<50x6xf32>, tensor<50xf32>
  %loss = memopt.cross_entropy %logits, %labels : tensor<12x50xf32>, tensor<12xi64>
  return %loss : tensor<f32>
}
)mlir";

TEST(FuseLinearCrossEntropy, BiasedHeadsMatchUnfused) {
  const char *fusion =
      "memopt-fuse-linear-cross-entropy{min-classes=50 chunk=5}";
  expectFusedMatchesUnfused(kBiasedOnnxHead, fusion,
                            "memopt-autodiff{optimizer=none}",
                            ",memopt-schedule,memopt-plan-memory");
  expectFusedMatchesUnfused(kBiasedLinearHead, fusion,
                            "memopt-autodiff{optimizer=none}", "");
}

// Below min-classes nothing is fused.
TEST(FuseLinearCrossEntropy, SmallVocabularyIsLeftAlone) {
  auto step = CompiledStep::compile(
      kMatMulHead, "memopt-fuse-linear-cross-entropy{min-classes=51},"
                   "memopt-autodiff{optimizer=none}");
  ASSERT_TRUE(step);
  EXPECT_EQ(countKernels(*step, runtime::KernelKind::LinearCrossEntropy), 0u);
  EXPECT_EQ(countKernels(*step, runtime::KernelKind::CrossEntropy), 1u);
}

} // namespace
