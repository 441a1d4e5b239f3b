//===- NormTest.cpp - batch_norm, layer_norm and rms_norm kernels ---------===//
//
// batch_norm in training mode (biased variance for normalising, unbiased for
// the running variance, PyTorch's momentum rule), including per-channel
// operands in a wider dtype than x; layer_norm and rms_norm over one and two
// trailing dimensions; InPlace-ABN's batch_norm_act (bit-identical to
// batch_norm and the activation) and its backward, which rebuilds x̂ from the
// output, against the gradients computed from x, and both in place.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

using namespace memopt::runtime;
using namespace memopt::runtime::test;

namespace {

void checkBatchNorm(Shape xShape, DType xType, DType statType, double eps,
                    double momentum, bool defaults = false) {
  int64_t c = xShape[1];
  HostTensor x = randomTensor(xType, xShape, 1, -2, 3);
  HostTensor gamma = randomTensor(statType, {c}, 2, 0.5, 1.5);
  HostTensor beta = randomTensor(statType, {c}, 3);
  HostTensor rm = randomTensor(statType, {c}, 4);
  HostTensor rv = randomTensor(statType, {c}, 5, 0.5, 2);
  int64_t n = xShape[0], inner = count(xShape) / (n * c), m = n * inner;
  std::vector<double> y(x.values.size()), newMean(c), newVar(c);
  for (int64_t ch = 0; ch < c; ++ch) {
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < inner; ++j)
        sum += x.values[(i * c + ch) * inner + j];
    double mean = sum / m;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < inner; ++j) {
        double d = x.values[(i * c + ch) * inner + j] - mean;
        sq += d * d;
      }
    double var = sq / m;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < inner; ++j) {
        int64_t k = (i * c + ch) * inner + j;
        y[k] = roundTo(xType, (x.values[k] - mean) / std::sqrt(var + eps) *
                                      gamma.values[ch] +
                                  beta.values[ch]);
      }
    newMean[ch] =
        roundTo(statType, (1 - momentum) * rm.values[ch] + momentum * mean);
    newVar[ch] = roundTo(statType, (1 - momentum) * rv.values[ch] +
                                       momentum * sq / (m - 1));
  }
  json attrs = defaults ? json::object()
                        : json{{"epsilon", eps}, {"momentum", momentum}};
  auto got = runOp("batch_norm", attrs, {x, gamma, beta, rm, rv},
                   {{xType, xShape}, {statType, {c}}, {statType, {c}}});
  Tolerance tx = toleranceFor(xType), ts = toleranceFor(statType);
  // Normalised values reach |y| ~ 4; scale the absolute tolerance.
  EXPECT_TRUE(close(got[0], y, 4 * tx.atol, tx.rtol)) << "y";
  EXPECT_TRUE(close(got[1], newMean, ts.atol, ts.rtol)) << "running mean";
  EXPECT_TRUE(close(got[2], newVar, ts.atol, ts.rtol)) << "running var";
}

void checkBatchNormInference(Shape xShape, DType xType, double eps) {
  int64_t c = xShape[1];
  HostTensor x = randomTensor(xType, xShape, 6, -2, 3);
  HostTensor gamma = randomTensor(xType, {c}, 7, 0.5, 1.5);
  HostTensor beta = randomTensor(xType, {c}, 8);
  HostTensor rm = randomTensor(xType, {c}, 9);
  HostTensor rv = randomTensor(xType, {c}, 10, 0.5, 2);
  int64_t n = xShape[0], inner = count(xShape) / (n * c);
  std::vector<double> y(x.values.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t j = 0; j < inner; ++j) {
        int64_t k = (i * c + ch) * inner + j;
        y[k] = roundTo(xType, (x.values[k] - rm.values[ch]) /
                                      std::sqrt(rv.values[ch] + eps) *
                                      gamma.values[ch] +
                                  beta.values[ch]);
      }
  auto got = runOp("batch_norm_inference", json{{"epsilon", eps}},
                   {x, gamma, beta, rm, rv}, {{xType, xShape}});
  Tolerance t = toleranceFor(xType);
  EXPECT_TRUE(close(got[0], y, 4 * t.atol, t.rtol));
}

TEST(BatchNormKernelTest, InferenceUsesRunningStatistics) {
  checkBatchNormInference({2, 3, 4, 5}, DType::F32, 1e-5);
  checkBatchNormInference({3, 4}, DType::F64, 1e-3);
  // A single value per channel is fine without batch statistics.
  checkBatchNormInference({1, 4, 1, 1}, DType::F32, 1e-5);
}

TEST(BatchNormKernelTest, Rank4F32) {
  checkBatchNorm({3, 4, 5, 2}, DType::F32, DType::F32, 1e-3, 0.2);
}
TEST(BatchNormKernelTest, Rank2AndRank3) {
  checkBatchNorm({6, 5}, DType::F32, DType::F32, 1e-5, 0.1);
  checkBatchNorm({2, 3, 7}, DType::F32, DType::F32, 1e-5, 1.0);
}
TEST(BatchNormKernelTest, DefaultAttributes) {
  checkBatchNorm({2, 3, 2, 2}, DType::F32, DType::F32, 1e-5, 0.1, true);
}
TEST(BatchNormKernelTest, F64) {
  checkBatchNorm({3, 4, 5, 2}, DType::F64, DType::F64, 1e-3, 0.2);
}
TEST(BatchNormKernelTest, F16ActivationsWithF32Statistics) {
  checkBatchNorm({4, 3, 3, 3}, DType::F16, DType::F32, 1e-5, 0.1);
  checkBatchNorm({4, 3, 3, 3}, DType::BF16, DType::F32, 1e-5, 0.1);
}
TEST(BatchNormKernelTest, SingleValueBatchSpreadOverSpace) {
  // N = 1 is fine when the spatial extent gives more than one value.
  checkBatchNorm({1, 2, 3, 3}, DType::F32, DType::F32, 1e-5, 0.1);
}

void checkLayerNorm(Shape xShape, Shape gShape, DType xType, DType gType,
                    double eps) {
  HostTensor x = randomTensor(xType, xShape, 11, -3, 2);
  HostTensor g = randomTensor(gType, gShape, 12, 0.5, 1.5);
  HostTensor b = randomTensor(gType, gShape, 13);
  int64_t width = count(gShape), rows = count(xShape) / width;
  std::vector<double> want(x.values.size());
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < width; ++i)
      sum += x.values[r * width + i];
    double mean = sum / width;
    for (int64_t i = 0; i < width; ++i)
      sq += (x.values[r * width + i] - mean) * (x.values[r * width + i] - mean);
    double inv = 1 / std::sqrt(sq / width + eps);
    for (int64_t i = 0; i < width; ++i)
      want[r * width + i] =
          roundTo(xType, (x.values[r * width + i] - mean) * inv * g.values[i] +
                             b.values[i]);
  }
  auto got =
      runOp1("layer_norm", {{"epsilon", eps}}, {x, g, b}, {xType, xShape});
  Tolerance tol = toleranceFor(xType);
  EXPECT_TRUE(close(got, want, 4 * tol.atol, tol.rtol));
}

/// rms_norm against x / sqrt(mean(x^2) + eps) * gamma in double, rounded
/// once; also written over x.
void checkRmsNorm(Shape xShape, Shape gShape, DType xType, double eps) {
  SCOPED_TRACE(::testing::Message() << "rms_norm " << formatShape(xShape));
  HostTensor x = randomTensor(xType, xShape, 21, -3, 2);
  HostTensor g = randomTensor(xType, gShape, 22, 0.5, 1.5);
  int64_t width = count(gShape), rows = count(xShape) / width;
  std::vector<double> want(x.values.size());
  for (int64_t r = 0; r < rows; ++r) {
    double sq = 0;
    for (int64_t i = 0; i < width; ++i)
      sq += x.values[r * width + i] * x.values[r * width + i];
    double inv = 1 / std::sqrt(sq / width + eps);
    for (int64_t i = 0; i < width; ++i)
      want[r * width + i] =
          roundTo(xType, x.values[r * width + i] * inv * g.values[i]);
  }
  auto got = runOp1("rms_norm", {{"epsilon", eps}}, {x, g}, {xType, xShape});
  Tolerance tol = toleranceFor(xType);
  EXPECT_TRUE(close(got, want, 4 * tol.atol, tol.rtol));
  auto inPlace = runOpInPlace("rms_norm", {{"epsilon", eps}}, {x, g},
                              {{xType, xShape}}, {{0, 0}});
  EXPECT_EQ(inPlace[0], got);
}

TEST(RmsNormKernelTest, LastDimAndTwoTrailingDims) {
  checkRmsNorm({2, 3, 8}, {8}, DType::F32, 1e-6);
  checkRmsNorm({2, 3, 4, 5}, {4, 5}, DType::F64, 1e-3);
  checkRmsNorm({4, 16}, {16}, DType::F16, 1e-5);
}

TEST(RmsNormKernelTest, ZeroRowIsZero) {
  // mean(x^2) = 0: x / sqrt(eps) is 0, not NaN.
  HostTensor x{DType::F32, {1, 3}, {0, 0, 0}};
  HostTensor g{DType::F32, {3}, {1, 2, 3}};
  EXPECT_EQ(runOp1("rms_norm", json::object(), {x, g}, {DType::F32, {1, 3}}),
            (std::vector<double>{0, 0, 0}));
}

TEST(LayerNormKernelTest, LastDim) {
  checkLayerNorm({2, 3, 8}, {8}, DType::F32, DType::F32, 1e-5);
}
TEST(LayerNormKernelTest, TwoTrailingDims) {
  checkLayerNorm({2, 3, 4, 5}, {4, 5}, DType::F32, DType::F32, 1e-3);
}
TEST(LayerNormKernelTest, WholeTensor) {
  checkLayerNorm({3, 4}, {3, 4}, DType::F64, DType::F64, 1e-5);
}
TEST(LayerNormKernelTest, F16WithF32Affine) {
  checkLayerNorm({4, 16}, {16}, DType::F16, DType::F32, 1e-5);
}

//===----------------------------------------------------------------------===//
// batch_norm_act and batch_norm_act_backward (InPlace-ABN)
//===----------------------------------------------------------------------===//

double activate(const std::string &act, double z, double alpha) {
  if (act == "elu")
    return z > 0 ? z : alpha * std::expm1(z);
  return z >= 0 ? z : alpha * z;
}

double activationSlope(const std::string &act, double z, double alpha) {
  if (act == "elu")
    return z > 0 ? 1 : alpha * std::exp(z);
  return z > 0 ? 1 : alpha;
}

json actAttrs(const std::string &act, double alpha, double eps = 1e-5,
              double momentum = 0.1) {
  return json{{"epsilon", eps},
              {"momentum", momentum},
              {"activation", act},
              {"alpha", alpha}};
}

/// Per-channel batch statistics of x in double: mean and 1/sqrt(var + eps).
void channelStats(const HostTensor &x, double eps, std::vector<double> &mean,
                  std::vector<double> &invStd) {
  int64_t n = x.shape[0], c = x.shape[1], inner = count(x.shape) / (n * c);
  mean.assign(c, 0);
  invStd.assign(c, 0);
  for (int64_t ch = 0; ch < c; ++ch) {
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < inner; ++j)
        sum += x.values[(i * c + ch) * inner + j];
    mean[ch] = sum / (n * inner);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < inner; ++j) {
        double d = x.values[(i * c + ch) * inner + j] - mean[ch];
        sq += d * d;
      }
    invStd[ch] = 1 / std::sqrt(sq / (n * inner) + eps);
  }
}

void checkBatchNormAct(Shape xShape, DType xType, DType statType,
                       const std::string &act, double alpha) {
  SCOPED_TRACE(::testing::Message()
               << act << " " << formatShape(xShape) << " " << dtypeName(xType)
               << "/" << dtypeName(statType));
  const double eps = 1e-3, momentum = 0.2;
  int64_t c = xShape[1];
  HostTensor x = randomTensor(xType, xShape, 21, -2, 3);
  HostTensor gamma = randomTensor(statType, {c}, 22, 0.5, 1.5);
  gamma.values[0] = -gamma.values[0]; // a negative scale inverts too
  HostTensor beta = randomTensor(statType, {c}, 23);
  HostTensor rm = randomTensor(statType, {c}, 24);
  HostTensor rv = randomTensor(statType, {c}, 25, 0.5, 2);
  std::vector<double> mean, invStd;
  channelStats(x, eps, mean, invStd);
  int64_t n = xShape[0], inner = count(xShape) / (n * c);
  std::vector<double> y(x.values.size()), saved(c);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t j = 0; j < inner; ++j) {
        int64_t k = (i * c + ch) * inner + j;
        double z = (x.values[k] - mean[ch]) * invStd[ch] * gamma.values[ch] +
                   beta.values[ch];
        y[k] = roundTo(xType, activate(act, z, alpha));
      }
  for (int64_t ch = 0; ch < c; ++ch)
    saved[ch] = roundTo(statType, invStd[ch]);
  std::vector<OutputSpec> outs = {
      {xType, xShape}, {statType, {c}}, {statType, {c}}, {statType, {c}}};
  json attrs = actAttrs(act, alpha, eps, momentum);
  auto got = runOp("batch_norm_act", attrs, {x, gamma, beta, rm, rv}, outs);
  Tolerance tx = toleranceFor(xType), ts = toleranceFor(statType);
  EXPECT_TRUE(close(got[0], y, 4 * tx.atol, tx.rtol)) << "y";
  EXPECT_TRUE(close(got[3], saved, ts.atol, ts.rtol)) << "saved_invstd";

  // batch_norm followed by the activation kernel. With f32/f64 storage the
  // same bits; with f16/bf16 storage the unfused pair rounds z to the
  // storage type in between, which the fused kernel (computing in f32)
  // does not, so the results may differ by that one rounding.
  auto bn = runOp("batch_norm", {{"epsilon", eps}, {"momentum", momentum}},
                  {x, gamma, beta, rm, rv}, {outs[0], outs[1], outs[2]});
  HostTensor z{xType, xShape, bn[0]};
  auto activated = runOp1(act, {{"alpha", alpha}}, {z}, outs[0]);
  if (xType == DType::F32 || xType == DType::F64) {
    EXPECT_EQ(got[0], activated) << "y differs from batch_norm + " << act;
  } else {
    EXPECT_TRUE(close(got[0], activated, 4 * tx.atol, 2 * tx.rtol))
        << "y vs batch_norm + " << act;
  }
  EXPECT_EQ(got[1], bn[1]) << "running mean";
  EXPECT_EQ(got[2], bn[2]) << "running var";

  // In place over x: the statistics are computed before y is written.
  auto inPlace = runOpInPlace("batch_norm_act", attrs, {x, gamma, beta, rm, rv},
                              outs, {{0, 0}});
  EXPECT_EQ(inPlace, got) << "in place over x";
}

TEST(BatchNormActKernelTest, LeakyReluAndEluEveryDtype) {
  for (const char *act : {"leaky_relu", "elu"}) {
    checkBatchNormAct({3, 4, 5, 2}, DType::F32, DType::F32, act, 0.1);
    checkBatchNormAct({6, 5}, DType::F64, DType::F64, act, 0.7);
    checkBatchNormAct({4, 3, 3, 3}, DType::F16, DType::F32, act, 0.01);
    checkBatchNormAct({4, 3, 3, 3}, DType::BF16, DType::F32, act, 1.0);
  }
}

/// The gradients batch_norm + activation have, from x itself, in double:
/// the reference the fused backward (which never sees x) must reproduce.
std::vector<std::vector<double>>
referenceActGrads(const HostTensor &x, const HostTensor &dy,
                  const HostTensor &gamma, const HostTensor &beta,
                  const std::string &act, double alpha, double eps) {
  std::vector<double> mean, invStd;
  channelStats(x, eps, mean, invStd);
  int64_t n = x.shape[0], c = x.shape[1], inner = count(x.shape) / (n * c);
  double m = static_cast<double>(n * inner);
  std::vector<double> dx(x.values.size()), dg(c), db(c);
  for (int64_t ch = 0; ch < c; ++ch) {
    auto at = [&](int64_t i, int64_t j) { return (i * c + ch) * inner + j; };
    double sumDz = 0, sumDzXhat = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < inner; ++j) {
        int64_t k = at(i, j);
        double xhat = (x.values[k] - mean[ch]) * invStd[ch];
        double z = gamma.values[ch] * xhat + beta.values[ch];
        double dz = dy.values[k] * activationSlope(act, z, alpha);
        sumDz += dz;
        sumDzXhat += dz * xhat;
      }
    dg[ch] = sumDzXhat;
    db[ch] = sumDz;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < inner; ++j) {
        int64_t k = at(i, j);
        double xhat = (x.values[k] - mean[ch]) * invStd[ch];
        double z = gamma.values[ch] * xhat + beta.values[ch];
        double dz = dy.values[k] * activationSlope(act, z, alpha);
        dx[k] = gamma.values[ch] * invStd[ch] *
                (dz - sumDz / m - xhat * sumDzXhat / m);
      }
  }
  return {dx, dg, db};
}

void checkBatchNormActBackward(Shape xShape, DType dtype,
                               const std::string &act, double alpha,
                               double atol, double rtol) {
  SCOPED_TRACE(::testing::Message()
               << act << " " << formatShape(xShape) << " " << dtypeName(dtype));
  const double eps = 1e-3;
  int64_t c = xShape[1];
  HostTensor x = randomTensor(dtype, xShape, 31, -2, 3);
  HostTensor dy = randomTensor(dtype, xShape, 32, -1, 1);
  HostTensor gamma = randomTensor(dtype, {c}, 33, 0.5, 1.5);
  gamma.values[c - 1] = -gamma.values[c - 1];
  HostTensor beta = randomTensor(dtype, {c}, 34, -0.5, 0.5);
  HostTensor stats = randomTensor(dtype, {c}, 35, 0.5, 1.5);
  Shape cs = {c};
  auto fwd = runOp("batch_norm_act", actAttrs(act, alpha, eps),
                   {x, gamma, beta, stats, stats},
                   {{dtype, xShape}, {dtype, cs}, {dtype, cs}, {dtype, cs}});
  HostTensor y{dtype, xShape, fwd[0]}, invStd{dtype, cs, fwd[3]};
  json attrs = {{"activation", act}, {"alpha", alpha}};
  std::vector<OutputSpec> outs = {{dtype, xShape}, {dtype, cs}, {dtype, cs}};
  auto got = runOp("batch_norm_act_backward", attrs,
                   {dy, y, gamma, beta, invStd}, outs);
  auto want = referenceActGrads(x, dy, gamma, beta, act, alpha, eps);
  EXPECT_TRUE(close(got[0], want[0], atol, rtol)) << "grad_x";
  EXPECT_TRUE(close(got[1], want[1], 8 * atol, rtol)) << "grad_gamma";
  EXPECT_TRUE(close(got[2], want[2], 8 * atol, rtol)) << "grad_beta";
  // In place over grad and over output: the same bits.
  for (size_t over : {0, 1}) {
    auto inPlace =
        runOpInPlace("batch_norm_act_backward", attrs,
                     {dy, y, gamma, beta, invStd}, outs, {{0, over}});
    EXPECT_EQ(inPlace, got) << "in place over input " << over;
  }
}

TEST(BatchNormActKernelTest, BackwardFromOutputMatchesGradientsFromX) {
  for (const char *act : {"leaky_relu", "elu"}) {
    // f64: only rounding separates the rebuilt x̂ from the exact one.
    checkBatchNormActBackward({3, 4, 2, 3}, DType::F64, act, 0.3, 1e-11, 1e-10);
    checkBatchNormActBackward({5, 3}, DType::F64, act, 1.0, 1e-11, 1e-10);
    // f32: y is rounded to f32, so x̂ = (f⁻¹(y) - beta) / gamma carries a
    // relative error of a few float epsilons.
    checkBatchNormActBackward({4, 6, 3, 3}, DType::F32, act, 0.01, 2e-5, 1e-4);
  }
}

/// A channel whose gamma is 0 has a constant output: x̂ cannot be rebuilt.
/// The kernel's defined result: grad_gamma 0 there, grad_x 0 (exact: the
/// scale is 0) and grad_beta the exact sum; other channels unaffected.
TEST(BatchNormActKernelTest, ZeroGammaChannelIsDefined) {
  Shape xShape = {4, 3, 2, 2}, cs = {3};
  HostTensor x = randomTensor(DType::F64, xShape, 41, -2, 3);
  HostTensor dy = randomTensor(DType::F64, xShape, 42, -1, 1);
  HostTensor gamma{DType::F64, cs, {0.8, 0.0, -1.2}};
  HostTensor beta{DType::F64, cs, {0.1, -0.4, 0.3}};
  HostTensor stats{DType::F64, cs, {0, 0, 0}};
  for (const char *act : {"leaky_relu", "elu"}) {
    auto fwd = runOp("batch_norm_act", actAttrs(act, 0.2),
                     {x, gamma, beta, stats, stats},
                     {{DType::F64, xShape},
                      {DType::F64, cs},
                      {DType::F64, cs},
                      {DType::F64, cs}});
    HostTensor y{DType::F64, xShape, fwd[0]}, invStd{DType::F64, cs, fwd[3]};
    auto got =
        runOp("batch_norm_act_backward", {{"activation", act}, {"alpha", 0.2}},
              {dy, y, gamma, beta, invStd},
              {{DType::F64, xShape}, {DType::F64, cs}, {DType::F64, cs}});
    auto want = referenceActGrads(x, dy, gamma, beta, act, 0.2, 1e-5);
    want[1][1] = 0; // the documented limitation
    EXPECT_TRUE(close(got[0], want[0], 1e-11, 1e-10)) << act << " grad_x";
    EXPECT_TRUE(close(got[1], want[1], 1e-11, 1e-10)) << act << " grad_gamma";
    EXPECT_TRUE(close(got[2], want[2], 1e-11, 1e-10)) << act << " grad_beta";
  }
}

/// ELU outputs saturated at -alpha (z far below 0) cannot be inverted
/// exactly; the kernel clamps and stays finite.
TEST(BatchNormActKernelTest, SaturatedEluStaysFinite) {
  Shape xShape = {4, 2, 3}, cs = {2};
  HostTensor x = randomTensor(DType::F32, xShape, 51, -2, 3);
  HostTensor dy = randomTensor(DType::F32, xShape, 52, -1, 1);
  HostTensor gamma{DType::F32, cs, {1.0, 1.0}};
  HostTensor beta{DType::F32, cs, {-40.0, 0.0}}; // channel 0 saturates
  HostTensor stats{DType::F32, cs, {0, 1}};
  auto fwd = runOp("batch_norm_act", actAttrs("elu", 1.0),
                   {x, gamma, beta, stats, stats},
                   {{DType::F32, xShape},
                    {DType::F32, cs},
                    {DType::F32, cs},
                    {DType::F32, cs}});
  for (int64_t k = 0; k < 3; ++k)
    EXPECT_EQ(fwd[0][k], -1.0); // first image, channel 0: y = -alpha
  HostTensor y{DType::F32, xShape, fwd[0]}, invStd{DType::F32, cs, fwd[3]};
  auto got =
      runOp("batch_norm_act_backward", {{"activation", "elu"}, {"alpha", 1.0}},
            {dy, y, gamma, beta, invStd},
            {{DType::F32, xShape}, {DType::F32, cs}, {DType::F32, cs}});
  for (const auto &values : got)
    for (double v : values)
      EXPECT_TRUE(std::isfinite(v));
  // Channel 1 is far from saturation and exact as usual.
  auto want = referenceActGrads(x, dy, gamma, beta, "elu", 1.0, 1e-5);
  EXPECT_NEAR(got[1][1], want[1][1], 1e-4);
  EXPECT_NEAR(got[2][1], want[2][1], 1e-4);
  EXPECT_NEAR(got[2][0], 0.0, 1e-6); // dz = dy * (y + alpha) = 0
}

TEST(BatchNormActKernelTest, PlanRefusesNonInvertibleActivations) {
  HostTensor x = randomTensor(DType::F32, {4, 3}, 61);
  HostTensor g = randomTensor(DType::F32, {3}, 62);
  std::vector<OutputSpec> outs = {{DType::F32, {4, 3}},
                                  {DType::F32, {3}},
                                  {DType::F32, {3}},
                                  {DType::F32, {3}}};
  auto parse = [&](const json &attrs) {
    return errorOf([&] {
      Plan::parse(singleStepPlan("batch_norm_act", attrs, {x, g, g, g, g}, outs)
                      .dump());
    });
  };
  EXPECT_NE(parse({{"activation", "relu"}, {"alpha", 0.1}})
                .find("activation 'relu' is not invertible"),
            std::string::npos);
  EXPECT_NE(parse({{"activation", "leaky_relu"}, {"alpha", 0.0}})
                .find("expected 'alpha' > 0 (an invertible activation), got 0"),
            std::string::npos);
  EXPECT_NE(parse({{"alpha", 0.1}}).find("missing attribute 'activation'"),
            std::string::npos);
  EXPECT_NE(
      parse({{"activation", "leaky_relu"}}).find("missing attribute 'alpha'"),
      std::string::npos);
  EXPECT_NE(parse({{"activation", 3}, {"alpha", 0.1}})
                .find("attribute 'activation' must be a string"),
            std::string::npos);
  // The backward's operands: saved_invstd is per channel.
  std::string message = errorOf([&] {
    Plan::parse(singleStepPlan("batch_norm_act_backward",
                               {{"activation", "elu"}, {"alpha", 1.0}},
                               {x, x, g, g, x}, {outs[0], outs[1], outs[2]})
                    .dump());
  });
  EXPECT_NE(message.find("saved_invstd"), std::string::npos) << message;
}

} // namespace
