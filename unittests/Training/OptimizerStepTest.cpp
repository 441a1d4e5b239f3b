//===- OptimizerStepTest.cpp - one training step against references -------===//
//
// Runs a compiled training step with SGD, momentum, Adam, AdamW, Adafactor
// and 8-bit Adam and checks the updated parameters against PyTorch's (and
// transformers', bitsandbytes') update rules evaluated here, in f64, from
// the gradient the same graph computes with optimizer=none.
//
//===----------------------------------------------------------------------===//

#include "TrainingTestUtil.h"

#include "memopt/runtime/Half.h"
#include "memopt/runtime/Quantization.h"

#include <gtest/gtest.h>

#include <algorithm>
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

/// x as it is stored: unchanged in f64, or rounded to bf16 as the CPU
/// backend stores a value computed in f64 (through f32).
double asStored(double x, bool bf16) {
  if (!bf16)
    return x;
  return memopt::runtime::bfloat16BitsToFloat(
      memopt::runtime::floatToBFloat16Bits(static_cast<float>(x)));
}

/// Three steps of `pipeline` (Adam or AdamW with lr 0.01) against
/// torch.optim's rule for the weight: Adam adds `l2` · w to the gradient,
/// AdamW first scales w by 1 − lr · `decoupled`. With `bf16State`
/// (state-dtype=bf16) the arithmetic is the same on moments stored rounded
/// to bf16 after every step, and the stored moments must equal those.
void expectAdamSteps(const std::string &pipeline, double l2, double decoupled,
                     bool bf16State = false) {
  auto step = CompiledStep::compile(kGraph, pipeline);
  ASSERT_TRUE(step);
  // Arguments: w, b, x, t, the step count, then w's two moments.
  EXPECT_EQ(step->plan().argumentTensor(5).dtype,
            bf16State ? memopt::runtime::DType::BF16
                      : memopt::runtime::DType::F64);
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
      const double mi = b1 * m[i] + (1 - b1) * gi;
      const double vi = b2 * v[i] + (1 - b2) * gi * gi;
      double denom = std::sqrt(vi) / std::sqrt(bc2) + eps;
      w[i] -= (lr / bc1) * mi / denom;
      m[i] = asStored(mi, bf16State);
      v[i] = asStored(vi, bf16State);
    }
    step->applyUpdates();
    auto actual = step->argument(0);
    for (size_t i = 0; i < w.size(); ++i)
      EXPECT_NEAR(actual[i], w[i], 1e-12)
          << pipeline << " step " << t << " element " << i;
    if (!bf16State)
      continue;
    auto storedM = step->argument(5), storedV = step->argument(6);
    for (size_t i = 0; i < w.size(); ++i) {
      EXPECT_EQ(storedM[i], m[i]) << "step " << t << " exp_avg " << i;
      EXPECT_EQ(storedV[i], v[i]) << "step " << t << " exp_avg_sq " << i;
    }
  }
}

// state-dtype=bf16: Adam's and AdamW's arithmetic in the parameter's type
// on moments stored rounded to bf16 after every step.
TEST(OptimizerStep, Bf16MomentsOverThreeSteps) {
  expectAdamSteps("memopt-autodiff{optimizer=adam lr=0.01 state-dtype=bf16}", 0,
                  0, /*bf16State=*/true);
  expectAdamSteps("memopt-autodiff{optimizer=adamw lr=0.01 state-dtype=bf16}",
                  0, 0.01, /*bf16State=*/true);
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

/// torch.nn.utils.clip_grad_norm_(max_norm) before SGD: the factor
/// min(1, max_norm / (‖g‖ + 1e-6)) in f32 from the global norm of both
/// gradients, every gradient multiplied by it.
void expectClippedSgdStep(double maxNorm) {
  auto step = CompiledStep::compile(
      kGraph, "memopt-autodiff{optimizer=sgd lr=0.1 clip-norm=" +
                  std::to_string(maxNorm) + "}");
  ASSERT_TRUE(step);
  step->randomize(12);
  auto g = gradientsAt(*step);
  double sum = 0;
  for (const auto &grad : g)
    for (double x : grad)
      sum += x * x;
  const float total = static_cast<float>(std::sqrt(sum));
  const float factor = std::min(1.0f, static_cast<float>(maxNorm) /
                                          (total + static_cast<float>(1e-6)));
  auto w = step->argument(0), b = step->argument(1);
  step->run();
  auto w1 = step->result(1), b1 = step->result(2);
  for (size_t i = 0; i < w.size(); ++i)
    EXPECT_NEAR(w1[i], w[i] - 0.1 * (g[0][i] * factor), 1e-14)
        << "max_norm " << maxNorm << " w " << i;
  for (size_t i = 0; i < b.size(); ++i)
    EXPECT_NEAR(b1[i], b[i] - 0.1 * (g[1][i] * factor), 1e-14)
        << "max_norm " << maxNorm << " b " << i;
}

TEST(OptimizerStep, GradientClippingByGlobalNorm) {
  expectClippedSgdStep(0.05); // clipped: the gradients' norm is larger
  expectClippedSgdStep(1e6);  // a factor of 1
}

// Gradients whose norm is below max_norm are not changed at all: three
// Adam steps bit-identical to the unclipped ones.
TEST(OptimizerStep, ClippingBelowTheNormChangesNothing) {
  auto plain =
      CompiledStep::compile(kGraph, "memopt-autodiff{optimizer=adam lr=0.01}");
  auto clipped = CompiledStep::compile(
      kGraph, "memopt-autodiff{optimizer=adam lr=0.01 clip-norm=1e6}");
  ASSERT_TRUE(plain && clipped);
  expectStepsBitIdentical(*plain, *clipped, 3, 13);
}

double rootMeanSquare(const std::vector<double> &x) {
  double sum = 0;
  for (double v : x)
    sum += v * v;
  return std::sqrt(sum / static_cast<double>(x.size()));
}

/// One transformers.Adafactor step (relative_step=False, beta1=None,
/// eps=(1e-30, 1e-3), clip_threshold=1, decay_rate=-0.8) of a parameter
/// `p` of `rows` x `cols` (factored when rows > 0, with `state` = row
/// factors then column factors; else `state` is the second moment).
void adafactorReference(std::vector<double> &p, const std::vector<double> &g,
                        std::vector<double> &state, int64_t rows, int64_t cols,
                        int t, double lr, double wd, bool scaleParameter) {
  const double beta2t = 1 - std::pow(t, -0.8);
  const double alpha =
      scaleParameter ? lr * std::max(1e-3, rootMeanSquare(p)) : lr;
  std::vector<double> update(p.size());
  if (rows > 0) {
    for (int64_t r = 0; r < rows; ++r) {
      double mean = 0;
      for (int64_t c = 0; c < cols; ++c)
        mean += (g[r * cols + c] * g[r * cols + c] + 1e-30) / cols;
      state[r] = beta2t * state[r] + (1 - beta2t) * mean;
    }
    for (int64_t c = 0; c < cols; ++c) {
      double mean = 0;
      for (int64_t r = 0; r < rows; ++r)
        mean += (g[r * cols + c] * g[r * cols + c] + 1e-30) / rows;
      state[rows + c] = beta2t * state[rows + c] + (1 - beta2t) * mean;
    }
    double rowMean = 0;
    for (int64_t r = 0; r < rows; ++r)
      rowMean += state[r] / rows;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        update[r * cols + c] = g[r * cols + c] / std::sqrt(state[r] / rowMean) /
                               std::sqrt(state[rows + c]);
  } else {
    for (size_t i = 0; i < p.size(); ++i) {
      state[i] = beta2t * state[i] + (1 - beta2t) * (g[i] * g[i] + 1e-30);
      update[i] = g[i] / std::sqrt(state[i]);
    }
  }
  const double clip = std::max(1.0, rootMeanSquare(update) / 1.0);
  for (size_t i = 0; i < p.size(); ++i)
    p[i] = p[i] - wd * alpha * p[i] - update[i] / clip * alpha;
}

/// Three Adafactor steps of the weight (3x4, factored) and the bias (3,
/// not) against adafactorReference.
void expectAdafactorSteps(const std::string &pipeline, double lr, double wd,
                          bool scaleParameter) {
  auto step = CompiledStep::compile(kGraph, pipeline);
  ASSERT_TRUE(step);
  step->randomize(10);
  std::vector<double> w = step->argument(0), b = step->argument(1);
  std::vector<double> wState(3 + 4, 0.0), bState(3, 0.0);
  for (int t = 1; t <= 3; ++t) {
    auto g = gradientsAt(*step);
    step->run(t - 1);
    adafactorReference(w, g[0], wState, 3, 4, t, lr, wd, scaleParameter);
    adafactorReference(b, g[1], bState, 0, 0, t, lr, wd, scaleParameter);
    step->applyUpdates();
    auto actualW = step->argument(0), actualB = step->argument(1);
    for (size_t i = 0; i < w.size(); ++i)
      EXPECT_NEAR(actualW[i], w[i], 1e-12)
          << pipeline << " step " << t << " w element " << i;
    for (size_t i = 0; i < b.size(); ++i)
      EXPECT_NEAR(actualB[i], b[i], 1e-12)
          << pipeline << " step " << t << " b element " << i;
  }
}

TEST(OptimizerStep, AdafactorOverThreeSteps) {
  expectAdafactorSteps("memopt-autodiff{optimizer=adafactor lr=0.01}", 0.01, 0,
                       true);
  expectAdafactorSteps("memopt-autodiff{optimizer=adafactor lr=0.05 "
                       "weight-decay=0.1 scale-parameter=false}",
                       0.05, 0.1, false);
}

// The factored state is a row and a column factor: 3 + 4 values for the
// 3x4 weight, 3 for the bias, and the step count.
TEST(OptimizerStep, AdafactorStateIsFactored) {
  auto step = CompiledStep::compile(
      kGraph, "memopt-autodiff{optimizer=adafactor lr=0.01}");
  ASSERT_TRUE(step);
  int64_t stateElements = 0;
  for (const auto &arg : step->plan().arguments)
    if (arg.role == memopt::runtime::ArgumentRole::OptimizerState)
      stateElements += step->plan().tensors[arg.tensor].numElements;
  EXPECT_EQ(stateElements, 3 + 4 + 3 + 1);
}

const char *k8bitGraph = R"mlir(
func.func @f(%w: tensor<64x81xf32> {memopt.param}, %b: tensor<64xf32> {memopt.param},
             %x: tensor<5x81xf32>, %t: tensor<5x64xf32>) -> tensor<f32> {
  %y = memopt.linear %x, %w, %b : tensor<5x81xf32>, tensor<64x81xf32>, tensor<64xf32>
  %l = memopt.mse_loss %y, %t : tensor<5x64xf32>
  return %l : tensor<f32>
}
)mlir";

/// Three adam8bit steps of a 64x81 weight (21 blocks of 256, the last
/// partial): each update is Adam's on the moments dequantised from the
/// previous step's codes, in f32; each block's new maximum is the largest
/// new moment; each stored moment is within half the code's widest gap
/// (times the maximum) of the exact one and keeps its sign. The 64-element
/// bias keeps f32 moments (fewer than 4096 elements).
TEST(OptimizerStep, Adam8bitOverThreeSteps) {
  const double lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-8;
  auto step = CompiledStep::compile(
      k8bitGraph, "memopt-autodiff{optimizer=adam8bit lr=0.01}");
  auto grad =
      CompiledStep::compile(k8bitGraph, "memopt-autodiff{optimizer=none}");
  ASSERT_TRUE(step && grad);
  // Results: loss, w, b, the weight's codes and maxima (m, then v), the
  // bias's two f32 moments, the step count.
  ASSERT_EQ(step->plan().results.size(), 10u);
  EXPECT_EQ(step->plan().resultTensor(3).dtype, memopt::runtime::DType::UI8);
  EXPECT_EQ(step->plan().resultTensor(4).numElements, 21);
  EXPECT_EQ(step->plan().resultTensor(7).dtype, memopt::runtime::DType::F32);
  step->randomize(11);
  const auto code1 = memopt::runtime::quant::dynamicMap(true);
  const auto code2 = memopt::runtime::quant::dynamicMap(false);
  const size_t n = 64 * 81;
  std::vector<double> m(n, 0.0), v(n, 0.0);
  for (int t = 1; t <= 3; ++t) {
    for (size_t i = 0; i < 4; ++i)
      grad->setArgument(i, step->argument(i));
    grad->run();
    const std::vector<double> g = grad->result(1), w = step->argument(0);
    step->run(t - 1);
    const double bc1 = 1 - std::pow(b1, t), bc2 = 1 - std::pow(b2, t);
    std::vector<double> mExact(n), vExact(n);
    const std::vector<double> newW = step->result(1);
    for (size_t i = 0; i < n; ++i) {
      mExact[i] = b1 * m[i] + (1 - b1) * g[i];
      vExact[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
      const double expected =
          w[i] - (lr / bc1) * mExact[i] /
                     (std::sqrt(vExact[i]) / std::sqrt(bc2) + eps);
      EXPECT_NEAR(newW[i], expected, 1e-6) << "step " << t << " w " << i;
    }
    const std::vector<double> mCodes = step->result(3), mMax = step->result(4);
    const std::vector<double> vCodes = step->result(5), vMax = step->result(6);
    for (size_t blk = 0; blk < 21; ++blk) {
      double mBlock = 0, vBlock = 0;
      for (size_t i = blk * 256; i < std::min(n, blk * 256 + 256); ++i) {
        mBlock = std::max(mBlock, std::abs(mExact[i]));
        vBlock = std::max(vBlock, vExact[i]);
      }
      EXPECT_NEAR(mMax[blk], mBlock, 1e-6 * mBlock) << "block " << blk;
      EXPECT_NEAR(vMax[blk], vBlock, 1e-6 * vBlock) << "block " << blk;
    }
    for (size_t i = 0; i < n; ++i) {
      const double mBack =
          code1[static_cast<size_t>(mCodes[i])] * mMax[i / 256];
      const double vBack =
          code2[static_cast<size_t>(vCodes[i])] * vMax[i / 256];
      EXPECT_LE(std::abs(mBack - mExact[i]), 0.9 / 128 * mMax[i / 256] * 1.0001)
          << "step " << t << " m " << i;
      EXPECT_LE(std::abs(vBack - vExact[i]), 0.9 / 256 * vMax[i / 256] * 1.0001)
          << "step " << t << " v " << i;
      if (mExact[i] != 0) {
        EXPECT_EQ(mBack < 0, mExact[i] < 0) << "step " << t << " m " << i;
      }
      m[i] = mBack;
      v[i] = vBack;
    }
    step->applyUpdates();
  }
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
    if (step == 0) {
      EXPECT_EQ(frozen->result(1), trained->result(1)) << "new w";
    }
    frozen->applyUpdates();
    trained->applyUpdates();
    EXPECT_EQ(frozen->argument(1), bias) << "b after step " << step;
  }
  EXPECT_NE(trained->argument(1), bias);
}

} // namespace
