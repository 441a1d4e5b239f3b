//===- InPlaceABNTest.cpp - InPlace-ABN against unfused training ----------===//
//
// batch_norm_act's gradient rule against central finite differences (the
// fused op written directly, and batch norm + activation fused after
// autodiff), and a differential test of the fusion: a CNN with batch norms
// followed by leaky_relu and elu, trained with and without
// `test-memopt-inplace-abn`. The fused forward is batch norm's arithmetic
// followed by the activation, so the loss and the running statistics are
// bit-identical; the backward rebuilds x̂ = (f⁻¹(y) − β)/γ from the f32
// output instead of reading x, so gradients, and the parameters updated
// from them, agree to float rounding amplified by 1/|γ| (bounds below).
//
//===----------------------------------------------------------------------===//

#include "TrainingTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

using namespace memopt;
using namespace memopt::testing;

namespace {

/// Replaces the first occurrence of `from` in `text`.
std::string replaced(std::string text, const std::string &from,
                     const std::string &to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos)
    text.replace(at, from.size(), to);
  return text;
}

/// examples/cnn.mlir with its three ReLUs made invertible: leaky_relu,
/// elu and leaky_relu again.
std::string invertibleCnn() {
  std::string cnn = exampleSource("cnn.mlir");
  cnn = replaced(cnn, "%r1 = memopt.relu %n1",
                 "%r1 = memopt.leaky_relu %n1 {alpha = 0.1 : f64}");
  cnn = replaced(cnn, "%r2 = memopt.relu %n2",
                 "%r2 = memopt.elu %n2 {alpha = 1.0 : f64}");
  cnn = replaced(cnn, "%r3 = memopt.relu %n3", "%r3 = memopt.leaky_relu %n3");
  return cnn;
}

/// Compares the gradient of every parameter, from `gradientPipeline`
/// (ending in optimizer=none), with central finite differences of the loss
/// of `source` run as it is (f64).
void checkGradients(const std::string &source,
                    const std::string &gradientPipeline) {
  expectGradientsMatchFiniteDifferences(source, gradientPipeline,
                                        /*seed=*/77, gradientPipeline);
}

/// A batch_norm_act written in the graph, differentiated by its own rule;
/// a second one feeds on the first (x of the second is an activation).
std::string fusedGraph(const std::string &activation, double alpha) {
  std::string attrs = "{activation = \"" + activation +
                      "\", alpha = " + std::to_string(alpha) +
                      " : f64, epsilon = 1.0e-3 : f64}";
  return "func.func @f(%x: tensor<4x3x2x2xf64> {memopt.param}, "
         "%g: tensor<3xf64> {memopt.param}, %b: tensor<3xf64> {memopt.param}, "
         "%g2: tensor<3xf64> {memopt.param}, %b2: tensor<3xf64> "
         "{memopt.param}, %rm: tensor<3xf64> {memopt.state}, "
         "%rv: tensor<3xf64> {memopt.state}, %t: tensor<4x3x2x2xf64>) "
         "-> tensor<f64> {\n"
         "  %y:4 = memopt.batch_norm_act %x, %g, %b, %rm, %rv " +
         attrs +
         " : tensor<4x3x2x2xf64>, tensor<3xf64>\n"
         "  %z:4 = memopt.batch_norm_act %y#0, %g2, %b2, %rm, %rv " +
         attrs +
         " : tensor<4x3x2x2xf64>, tensor<3xf64>\n"
         "  %loss = memopt.mse_loss %z#0, %t : tensor<4x3x2x2xf64>\n"
         "  return %loss : tensor<f64>\n}\n";
}

TEST(InPlaceABN, BatchNormActGradientMatchesFiniteDifferences) {
  checkGradients(fusedGraph("leaky_relu", 0.2),
                 "memopt-autodiff{optimizer=none}");
  checkGradients(fusedGraph("elu", 0.7), "memopt-autodiff{optimizer=none}");
}

TEST(InPlaceABN, FusedStepGradientMatchesFiniteDifferences) {
  // batch_norm + activation, differentiated, then fused: the gradients
  // the fused backward computes from the output are the forward graph's.
  for (const char *act : {"memopt.leaky_relu %y {alpha = 0.3 : f64}",
                          "memopt.elu %y {alpha = 0.6 : f64}"}) {
    std::string source =
        "func.func @f(%x: tensor<5x3x2xf64> {memopt.param}, "
        "%g: tensor<3xf64> {memopt.param}, %b: tensor<3xf64> {memopt.param}, "
        "%rm: tensor<3xf64> {memopt.state}, %rv: tensor<3xf64> "
        "{memopt.state}, %t: tensor<5x3x2xf64>) -> tensor<f64> {\n"
        "  %h = memopt.mul %x, %x : tensor<5x3x2xf64>, tensor<5x3x2xf64>\n"
        "  %y, %m, %v = memopt.batch_norm %h, %g, %b, %rm, %rv "
        ": tensor<5x3x2xf64>, tensor<3xf64>\n"
        "  %a = " +
        std::string(act) +
        " : tensor<5x3x2xf64>\n"
        "  %loss = memopt.mse_loss %a, %t : tensor<5x3x2xf64>\n"
        "  return %loss : tensor<f64>\n}\n";
    auto fused = CompiledStep::compile(
        source, "memopt-autodiff{optimizer=none},test-memopt-inplace-abn");
    ASSERT_TRUE(fused);
    EXPECT_EQ(countKernels(*fused, runtime::KernelKind::BatchNormAct), 1u);
    EXPECT_EQ(countKernels(*fused, runtime::KernelKind::BatchNormBackward), 0u);
    checkGradients(source,
                   "memopt-autodiff{optimizer=none},test-memopt-inplace-abn");
  }
}

/// One training step of `source` with and without the fusion, both followed
/// by the passes `after` (",memopt-schedule,..." or empty): the loss and the
/// running statistics bit-identical, every updated parameter within
/// `atol + rtol·|p|`.
void expectFusedStepMatches(const std::string &source,
                            const std::string &autodiff,
                            const std::string &after, double atol,
                            double rtol) {
  bool plan = after.find("memopt-plan-memory") != std::string::npos;
  auto base = CompiledStep::compile(source, autodiff + after);
  auto fused = CompiledStep::compile(
      source, autodiff + ",test-memopt-inplace-abn" + after);
  ASSERT_TRUE(base && fused);
  EXPECT_GT(countKernels(*fused, runtime::KernelKind::BatchNormAct), 0u);
  EXPECT_EQ(countKernels(*fused, runtime::KernelKind::BatchNormBackward), 0u);
  base->randomize(11);
  fused->randomize(11);
  base->run(0);
  fused->run(0);
  EXPECT_EQ(base->result(0), fused->result(0)) << "loss";
  const runtime::Plan &p = base->plan();
  ASSERT_EQ(p.updates.size(), fused->plan().updates.size());
  double worst = 0;
  for (const runtime::UpdateInfo &u : p.updates) {
    const std::string &name = p.arguments[u.argument].name;
    std::vector<double> want = base->result(u.result);
    std::vector<double> got = fused->result(u.result);
    ASSERT_EQ(want.size(), got.size()) << name;
    if (p.arguments[u.argument].role == runtime::ArgumentRole::State) {
      EXPECT_EQ(want, got) << "running statistic " << name;
      continue;
    }
    for (size_t e = 0; e < want.size(); ++e) {
      double err = std::fabs(got[e] - want[e]);
      worst = std::max(worst, err / (atol + rtol * std::fabs(want[e])));
      EXPECT_LE(err, atol + rtol * std::fabs(want[e]))
          << name << "[" << e << "]: fused " << got[e] << ", unfused "
          << want[e];
    }
  }
  // Where the fused step's arena is planned, it cannot be larger: x's
  // buffer holds the fused output, and the backward keeps nothing of x.
  if (plan) {
    EXPECT_LE(fused->plan().arenaBytes, base->plan().arenaBytes);
  }
  ::testing::Test::RecordProperty("worst_error_fraction_of_tolerance",
                                  std::to_string(worst));
}

// Tolerances: the fused backward's x̂ carries the f32 rounding of y
// (relative 2^-24) divided by |γ|, and reductions run in double on both
// sides, so parameter gradients agree to ~1e-6 relative; after an update
// with lr ≤ 0.1 the parameters agree far inside 1e-5 + 1e-4·|p|.
TEST(InPlaceABN, CnnStepMatchesUnfused) {
  expectFusedStepMatches(invertibleCnn(),
                         "memopt-autodiff{optimizer=momentum lr=0.05}", "",
                         1e-5, 1e-4);
}

TEST(InPlaceABN, PlannedCnnStepMatchesUnfusedAndIsSmaller) {
  expectFusedStepMatches(invertibleCnn(),
                         "memopt-autodiff{optimizer=sgd lr=0.1}",
                         ",memopt-schedule,memopt-plan-memory", 1e-5, 1e-4);
}

TEST(InPlaceABN, WithInPlacePassMatchesUnfused) {
  // The fusion, then --memopt-inplace on the rest of the step (activation
  // backward ops, the fused backward over its gradient), scheduled and
  // planned, against --memopt-inplace alone.
  expectFusedStepMatches(
      invertibleCnn(), "memopt-autodiff{optimizer=momentum lr=0.05}",
      ",memopt-inplace,memopt-schedule,memopt-plan-memory", 1e-5, 1e-4);
}

TEST(InPlaceABN, ReluCnnIsUnchanged) {
  // examples/cnn.mlir as it is (ReLU): nothing to fuse, bit-identical.
  auto fused = CompiledStep::compile(exampleSource("cnn.mlir"),
                                     "memopt-autodiff,test-memopt-inplace-abn");
  ASSERT_TRUE(fused);
  EXPECT_EQ(countKernels(*fused, runtime::KernelKind::BatchNormAct), 0u);
  EXPECT_EQ(countKernels(*fused, runtime::KernelKind::BatchNormBackward), 3u);
}

TEST(InPlaceABN, SeveralStepsStayClose) {
  // After the first update the parameters differ by rounding, so later
  // losses agree to a tolerance, not bit for bit.
  std::string source = invertibleCnn();
  std::string autodiff = "memopt-autodiff{optimizer=momentum lr=0.05}";
  auto base = CompiledStep::compile(source, autodiff);
  auto fused =
      CompiledStep::compile(source, autodiff + ",test-memopt-inplace-abn");
  ASSERT_TRUE(base && fused);
  base->randomize(3);
  fused->randomize(3);
  for (int step = 0; step < 3; ++step) {
    base->run(step);
    fused->run(step);
    double want = base->result(0)[0], got = fused->result(0)[0];
    if (step == 0) {
      EXPECT_EQ(got, want);
    }
    EXPECT_NEAR(got, want, 1e-5 * std::fabs(want)) << "loss at step " << step;
    base->applyUpdates();
    fused->applyUpdates();
  }
}

} // namespace
