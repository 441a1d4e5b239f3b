//===- OptimizerStepTest.cpp - one training step against references -------===//
//
// Runs a compiled training step with SGD, momentum, Adam and AdamW and
// checks the updated parameters against PyTorch's update rules evaluated
// here, in f64, from the gradient the same graph computes with
// optimizer=none.
//
//===----------------------------------------------------------------------===//

#include "TrainingTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace memopt::testing;

namespace {

const char *kGraph = R"mlir(
func.func @f(%w: tensor<3x4xf64> {memopt.param}, %b: tensor<3xf64> {memopt.param},
             %x: tensor<5x4xf64>, %t: tensor<5x3xf64>) -> tensor<f64> {
  %y = memopt.linear %x, %w, %b : tensor<5x4xf64>, tensor<3x4xf64>, tensor<3xf64>
  %l = memopt.mse_loss %y, %t : tensor<5x3xf64>
  return %l : tensor<f64>
}
)mlir";

/// The gradient of every parameter at the arguments `step` currently holds.
std::vector<std::vector<double>> gradientsAt(CompiledStep &step) {
  auto grad = CompiledStep::compile(kGraph, "memopt-autodiff{optimizer=none}");
  std::vector<std::vector<double>> out;
  for (size_t i = 0; i < 4; ++i)
    grad->setArgument(i, step.argument(i));
  grad->run();
  out.push_back(grad->result(1));
  out.push_back(grad->result(2));
  return out;
}

TEST(OptimizerStep, SgdWithWeightDecay) {
  auto step = CompiledStep::compile(
      kGraph, "memopt-autodiff{optimizer=sgd lr=0.1 weight-decay=0.01}");
  step->randomize(7);
  auto g = gradientsAt(*step);
  auto w = step->argument(0);
  step->run();
  auto w1 = step->result(1);
  for (size_t i = 0; i < w.size(); ++i)
    EXPECT_NEAR(w1[i], w[i] - 0.1 * (g[0][i] + 0.01 * w[i]), 1e-14);
}

TEST(OptimizerStep, MomentumOverTwoSteps) {
  auto step = CompiledStep::compile(
      kGraph, "memopt-autodiff{optimizer=momentum lr=0.05 momentum=0.9}");
  step->randomize(8);
  std::vector<double> buf(12, 0.0), w = step->argument(0);
  for (int s = 0; s < 2; ++s) {
    auto g = gradientsAt(*step);
    step->run(s);
    // PyTorch: b = momentum·b + g (b = g on the first step); w -= lr·b.
    for (size_t i = 0; i < w.size(); ++i) {
      buf[i] = 0.9 * buf[i] + g[0][i];
      w[i] -= 0.05 * buf[i];
    }
    step->applyUpdates();
    auto actual = step->argument(0);
    for (size_t i = 0; i < w.size(); ++i)
      EXPECT_NEAR(actual[i], w[i], 1e-13) << "step " << s << " element " << i;
  }
}

/// Three steps of `pipeline` (Adam or AdamW with lr 0.01) against
/// torch.optim's rule for the weight: Adam adds `l2` · w to the gradient,
/// AdamW first scales w by 1 − lr · `decoupled`.
void expectAdamSteps(const std::string &pipeline, double l2, double decoupled) {
  auto step = CompiledStep::compile(kGraph, pipeline);
  ASSERT_TRUE(step);
  step->randomize(9);
  const double b1 = 0.9, b2 = 0.999, eps = 1e-8, lr = 0.01;
  std::vector<double> w = step->argument(0), m(12, 0.0), v(12, 0.0);
  for (int t = 1; t <= 3; ++t) {
    auto g = gradientsAt(*step);
    step->run(t - 1);
    double bc1 = 1 - std::pow(b1, t), bc2 = 1 - std::pow(b2, t);
    for (size_t i = 0; i < w.size(); ++i) {
      double gi = g[0][i] + l2 * w[i];
      w[i] *= 1 - lr * decoupled;
      m[i] = b1 * m[i] + (1 - b1) * gi;
      v[i] = b2 * v[i] + (1 - b2) * gi * gi;
      double denom = std::sqrt(v[i]) / std::sqrt(bc2) + eps;
      w[i] -= (lr / bc1) * m[i] / denom;
    }
    step->applyUpdates();
    auto actual = step->argument(0);
    for (size_t i = 0; i < w.size(); ++i)
      EXPECT_NEAR(actual[i], w[i], 1e-12)
          << pipeline << " step " << t << " element " << i;
  }
}

TEST(OptimizerStep, AdamOverThreeSteps) {
  expectAdamSteps("memopt-autodiff{optimizer=adam lr=0.01}", 0, 0);
  expectAdamSteps("memopt-autodiff{optimizer=adam lr=0.01 weight-decay=0.1}",
                  0.1, 0);
}

// torch.optim.AdamW: decoupled decay, 0.01 unless given.
TEST(OptimizerStep, AdamWOverThreeSteps) {
  expectAdamSteps("memopt-autodiff{optimizer=adamw lr=0.01}", 0, 0.01);
  expectAdamSteps("memopt-autodiff{optimizer=adamw lr=0.01 weight-decay=0.5}",
                  0, 0.5);
  expectAdamSteps("memopt-autodiff{optimizer=adamw lr=0.01 weight-decay=0}", 0,
                  0);
}

// A frozen bias: no update and no state for it, its value the same bit for
// bit after three Adam steps; the weight's first update bit-identical to
// the unfrozen step's (its gradient does not depend on the bias being
// trained).
TEST(OptimizerStep, FrozenParameterStaysAndOthersMatch) {
  std::string frozenGraph = kGraph;
  const std::string from = "%b: tensor<3xf64> {memopt.param}";
  frozenGraph.replace(frozenGraph.find(from), from.size(),
                      "%b: tensor<3xf64> {memopt.param, memopt.frozen}");
  const char *pipeline = "memopt-autodiff{optimizer=adam lr=0.01}";
  auto frozen = CompiledStep::compile(frozenGraph, pipeline);
  auto trained = CompiledStep::compile(kGraph, pipeline);
  ASSERT_TRUE(frozen && trained);
  // Updates: w, its two moments and the step count; none for b.
  EXPECT_EQ(frozen->plan().updates.size(), 4u);
  EXPECT_EQ(trained->plan().updates.size(), 7u);
  frozen->randomize(9);
  trained->randomize(9);
  const std::vector<double> bias = frozen->argument(1);
  ASSERT_EQ(bias, trained->argument(1));
  for (int step = 0; step < 3; ++step) {
    frozen->run(step);
    trained->run(step);
    if (step == 0)
      EXPECT_EQ(frozen->result(1), trained->result(1)) << "new w";
    frozen->applyUpdates();
    trained->applyUpdates();
    EXPECT_EQ(frozen->argument(1), bias) << "b after step " << step;
  }
  EXPECT_NE(trained->argument(1), bias);
}

} // namespace
