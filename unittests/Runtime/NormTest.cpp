//===- NormTest.cpp - batch_norm and layer_norm kernels -------------------===//
//
// batch_norm in training mode (biased variance for normalising, unbiased for
// the running variance, PyTorch's momentum rule), including per-channel
// operands in a wider dtype than x; layer_norm over one and two trailing
// dimensions.
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

} // namespace
