//===- MathTest.cpp - shared scalar math and the dropout hash -------------===//
//
// ElementwiseMath.h against textbook formulas in long double, derivatives
// against finite differences, and Dropout.h against SplitMix64's published
// outputs and pinned masks (the GPU must reproduce these bit for bit).
//
//===----------------------------------------------------------------------===//

#include "memopt/runtime/Dropout.h"
#include "memopt/runtime/ElementwiseMath.h"

#include "gtest/gtest.h"

#include <cfloat>
#include <cmath>
#include <vector>

using namespace memopt::runtime;

namespace {

const std::vector<double> kPoints = {-1000, -60,   -20, -5.5, -2,   -1,
                                     -0.3,  -1e-6, 0,   1e-6, 0.25, 0.9,
                                     1,     2.5,   7,   19,   60,   1000};

TEST(ElementwiseMathTest, ForwardFormulas) {
  for (double x : kPoints) {
    long double lx = x;
    EXPECT_EQ(math::relu(x), x > 0 ? x : 0.0);
    EXPECT_NEAR(
        math::gelu(x),
        static_cast<double>(0.5L * lx * (1 + std::erf(lx / std::sqrt(2.0L)))),
        1e-15 * std::max(1.0, std::fabs(x)));
    double sig = static_cast<double>(1 / (1 + std::exp(-lx)));
    EXPECT_NEAR(math::sigmoid(x), sig, 1e-16 + 1e-15 * sig) << x;
    EXPECT_NEAR(math::sigmoid(static_cast<float>(x)), sig, 1e-7 * sig + 1e-38)
        << x;
    EXPECT_NEAR(math::tanhForward(x), std::tanh(x), 1e-15);
    EXPECT_EQ(math::leakyRelu(x, 0.2), x >= 0 ? x : 0.2 * x);
    EXPECT_NEAR(math::elu(x, 0.7),
                x > 0 ? x : static_cast<double>(0.7L * std::expm1(lx)),
                1e-15 * std::max(1.0, std::fabs(x)));
  }
  // The stable sigmoid neither overflows nor returns NaN at the extremes.
  EXPECT_EQ(math::sigmoid(-1000.0f), 0.0f);
  EXPECT_EQ(math::sigmoid(1000.0f), 1.0f);
  EXPECT_TRUE(std::isnan(math::relu(NAN)));
  // ELU near 0 keeps precision thanks to expm1: e^x - 1 = x + x^2/2 + ...
  // (exp(x) - 1 in double would be off by 1e-17 here).
  EXPECT_NEAR(math::elu(-1e-8, 1.0), -1e-8 + 5e-17, 1e-23);
}

TEST(ElementwiseMathTest, DerivativesMatchFiniteDifferences) {
  const double h = 1e-6;
  auto numeric = [h](auto f, double x) {
    return (f(x + h) - f(x - h)) / (2 * h);
  };
  for (double x : {-3.0, -1.1, -0.4, 0.3, 0.8, 2.2, 4.0}) {
    EXPECT_NEAR(math::reluGrad(x),
                numeric([](double v) { return math::relu(v); }, x), 1e-8);
    EXPECT_NEAR(math::geluGrad(x),
                numeric([](double v) { return math::gelu(v); }, x), 1e-8);
    EXPECT_NEAR(math::sigmoidGrad(x),
                numeric([](double v) { return math::sigmoid(v); }, x), 1e-8);
    EXPECT_NEAR(math::tanhGrad(x),
                numeric([](double v) { return std::tanh(v); }, x), 1e-8);
    EXPECT_NEAR(math::leakyReluGrad(x, 0.1),
                numeric([](double v) { return math::leakyRelu(v, 0.1); }, x),
                1e-8);
    EXPECT_NEAR(math::eluGrad(x, 1.3),
                numeric([](double v) { return math::elu(v, 1.3); }, x), 1e-7);
    // The from-output forms agree with the from-input forms.
    EXPECT_NEAR(math::sigmoidGradFromOutput(math::sigmoid(x)),
                math::sigmoidGrad(x), 1e-15);
    EXPECT_NEAR(math::tanhGradFromOutput(std::tanh(x)), math::tanhGrad(x),
                1e-15);
    EXPECT_NEAR(math::eluGradFromOutput(math::elu(x, 1.3), 1.3),
                math::eluGrad(x, 1.3), 1e-15);
    EXPECT_EQ(math::leakyReluGradFromOutput(math::leakyRelu(x, 0.1), 0.1),
              math::leakyReluGrad(x, 0.1));
    EXPECT_EQ(math::reluGradFromOutput(math::relu(x)), math::reluGrad(x));
  }
}

// InPlace-ABN rebuilds an activation's input from its output.
TEST(ElementwiseMathTest, InvertibleActivationsRoundTrip) {
  for (double x : kPoints) {
    // leaky_relu: one rounding of y / alpha.
    EXPECT_NEAR(math::leakyReluInverse(math::leakyRelu(x, 0.1), 0.1), x,
                1e-15 * std::fabs(x));
    EXPECT_EQ(math::leakyReluInverse(math::leakyRelu(x, 0.5), 0.5), x);
    // elu: log1p(y / alpha) loses what 1 + y / alpha cancels, about
    // epsilon / e^x; saturated outputs (y = -alpha exactly) give the
    // finite floor log(epsilon).
    double z = math::eluInverse(math::elu(x, 1.3), 1.3);
    if (x > -30)
      EXPECT_NEAR(z, x, 4e-16 * (std::exp(-x) + std::fabs(x))) << x;
    else
      EXPECT_TRUE(std::isfinite(z) && z < -30) << x << " -> " << z;
  }
  EXPECT_EQ(math::eluInverse(-1.0f, 1.0f), std::log1p(-1.0f + FLT_EPSILON));
  EXPECT_EQ(math::eluInverse(-2.0, 2.0), std::log1p(-1.0 + DBL_EPSILON));
  // The backward's derivative from the output selects the gradient where
  // the slope is 1, and uses alpha (leaky) or y + alpha (elu) otherwise.
  EXPECT_EQ(math::leakyReluBackwardFromOutput(3.0, 2.0, 0.1), 3.0);
  EXPECT_EQ(math::leakyReluBackwardFromOutput(3.0, -2.0, 0.1), 3.0 * 0.1);
  EXPECT_EQ(math::eluBackwardFromOutput(3.0, 2.0, 0.5), 3.0);
  EXPECT_EQ(math::eluBackwardFromOutput(3.0, -0.25, 0.5), 3.0 * 0.25);
}

TEST(ElementwiseMathTest, LogSumExpIsStable) {
  math::LogSumExp<float> big;
  for (float v : {1000.0f, 1000.0f, -1000.0f})
    big.add(v);
  EXPECT_NEAR(big.value(), 1000.0f + std::log(2.0f), 1e-3);
  math::LogSumExp<double> seq, a, b;
  std::vector<double> xs = {0.5, -2, 3.25, 1, -7, 2.5};
  double direct = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    seq.add(xs[i]);
    (i < 3 ? a : b).add(xs[i]);
    direct += std::exp(xs[i]);
  }
  a.merge(b);
  EXPECT_NEAR(seq.value(), std::log(direct), 1e-14);
  EXPECT_NEAR(a.value(), std::log(direct), 1e-14);
  math::LogSumExp<double> empty;
  empty.add(-INFINITY);
  EXPECT_EQ(empty.value(), -INFINITY);
  EXPECT_NEAR(math::softplus(800.0), 800.0, 1e-12);
  EXPECT_NEAR(math::softplus(-40.0), std::exp(-40.0), 1e-30);
  EXPECT_NEAR(math::softplus(0.5), std::log1p(std::exp(0.5)), 1e-15);
}

TEST(DropoutHashTest, MixIsSplitMix64) {
  // SplitMix64 seeded with 0 outputs mix(0), mix(gamma), mix(2 gamma), ...
  const uint64_t gamma = 0x9E3779B97F4A7C15ull;
  EXPECT_EQ(dropout::mix(0), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(dropout::mix(gamma), 0x6E789E6AA1B965F4ull);
  EXPECT_EQ(dropout::mix(2 * gamma), 0x06C45D188009454Full);
}

TEST(DropoutHashTest, PinnedMasks) {
  // Pinned from an independent implementation of the formula in Dropout.h.
  uint64_t key = dropout::streamKey(7, 3);
  EXPECT_EQ(key, 0x6BAA78681A99F995ull);
  uint32_t threshold = dropout::threshold(0.5);
  EXPECT_EQ(threshold, 0x80000000u);
  uint32_t mask = 0;
  for (uint64_t i = 0; i < 32; ++i)
    mask |= dropout::keep(key, i, threshold) ? 1u << i : 0u;
  EXPECT_EQ(mask, 0xE4CCB421u);
  uint64_t negative = dropout::streamKey(-1, 0);
  EXPECT_EQ(negative, 0x5DC20AA7B2A27137ull);
  EXPECT_EQ(dropout::elementBits(negative, 0), 0xFC042709u);
  EXPECT_EQ(dropout::elementBits(negative, 2), 0x9F5D67D0u);
}

TEST(DropoutHashTest, ThresholdAndRate) {
  EXPECT_EQ(dropout::threshold(0.0), 0u);
  EXPECT_EQ(dropout::threshold(0.25), 0x40000000u);
  EXPECT_EQ(dropout::threshold(1.0 - 1e-12), 0xFFFFFFFFu);
  EXPECT_FLOAT_EQ(dropout::scale<float>(0.2), 1.25f);
  for (double p : {0.1, 0.5, 0.9}) {
    uint64_t key = dropout::streamKey(123, 9);
    uint32_t t = dropout::threshold(p);
    int kept = 0;
    const int n = 400000;
    for (int i = 0; i < n; ++i)
      kept += dropout::keep(key, i, t);
    // Binomial standard deviation is at most 0.0008 here; allow 5 sigma.
    EXPECT_NEAR(kept / double(n), 1 - p, 0.004) << p;
  }
  // Different steps and seeds give different masks.
  int same = 0;
  uint64_t k1 = dropout::streamKey(5, 0), k2 = dropout::streamKey(5, 1),
           k3 = dropout::streamKey(6, 0);
  for (int i = 0; i < 1000; ++i)
    same +=
        dropout::keep(k1, i, 0x80000000u) == dropout::keep(k2, i, 0x80000000u);
  EXPECT_LT(same, 600);
  same = 0;
  for (int i = 0; i < 1000; ++i)
    same +=
        dropout::keep(k1, i, 0x80000000u) == dropout::keep(k3, i, 0x80000000u);
  EXPECT_LT(same, 600);
}

} // namespace
