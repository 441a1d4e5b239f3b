//===- PoolTest.cpp - max/avg/global-avg pooling kernels ------------------===//
//
// PyTorch's semantics: max ignores padding (all-negative inputs make a
// padded zero win if it were counted), avg counts it (count_include_pad),
// strides default to the window.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <limits>

using namespace memopt::runtime;
using namespace memopt::runtime::test;

namespace {

std::vector<double> referencePool(const HostTensor &x, bool isMax,
                                  std::array<int64_t, 2> k,
                                  std::array<int64_t, 2> s,
                                  std::array<int64_t, 2> p, Shape &out) {
  int64_t planes = x.shape[0] * x.shape[1], h = x.shape[2], w = x.shape[3];
  int64_t oh = (h + 2 * p[0] - k[0]) / s[0] + 1;
  int64_t ow = (w + 2 * p[1] - k[1]) / s[1] + 1;
  out = {x.shape[0], x.shape[1], oh, ow};
  std::vector<double> y;
  for (int64_t pl = 0; pl < planes; ++pl)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        double best = -std::numeric_limits<double>::infinity(), sum = 0;
        for (int64_t a = 0; a < k[0]; ++a)
          for (int64_t b = 0; b < k[1]; ++b) {
            int64_t iy = i * s[0] - p[0] + a, ix = j * s[1] - p[1] + b;
            if (iy < 0 || iy >= h || ix < 0 || ix >= w)
              continue; // Padding: ignored by max, zero in the sum.
            double v = x.values[(pl * h + iy) * w + ix];
            best = std::max(best, v);
            sum += v;
          }
        y.push_back(isMax ? best : sum / (k[0] * k[1]));
      }
  return y;
}

void checkPool(bool isMax, Shape shape, std::array<int64_t, 2> k,
               std::optional<std::array<int64_t, 2>> s,
               std::array<int64_t, 2> p, DType dtype = DType::F32,
               double lo = -1, double hi = 1) {
  HostTensor x = randomTensor(dtype, shape, 21, lo, hi);
  Shape out;
  std::vector<double> want = referencePool(x, isMax, k, s ? *s : k, p, out);
  for (double &v : want)
    v = roundTo(dtype, v);
  json attrs = {{"kernel_size", k}, {"padding", p}};
  attrs["strides"] = s ? json(*s) : json(nullptr);
  auto got =
      runOp1(isMax ? "max_pool2d" : "avg_pool2d", attrs, {x}, {dtype, out});
  Tolerance tol = toleranceFor(dtype);
  EXPECT_TRUE(close(got, want, tol.atol, tol.rtol));
}

TEST(PoolKernelTest, MaxResNetStem) {
  checkPool(true, {2, 3, 9, 8}, {3, 3}, std::array<int64_t, 2>{2, 2}, {1, 1});
}
TEST(PoolKernelTest, MaxIgnoresPaddingOnNegativeInput) {
  checkPool(true, {1, 2, 5, 6}, {3, 3}, std::array<int64_t, 2>{2, 2}, {1, 1},
            DType::F32, -5, -1);
  checkPool(true, {1, 1, 4, 4}, {2, 2}, std::array<int64_t, 2>{1, 1}, {1, 1},
            DType::F32, -5, -1);
}
TEST(PoolKernelTest, MaxNonSquareWindowAndStrides) {
  checkPool(true, {2, 2, 7, 9}, {2, 3}, std::array<int64_t, 2>{1, 2}, {1, 1});
}
TEST(PoolKernelTest, MaxDefaultStridesAreTheWindow) {
  checkPool(true, {1, 3, 7, 6}, {2, 2}, std::nullopt, {0, 0});
}
TEST(PoolKernelTest, AvgCountsPadding) {
  checkPool(false, {2, 2, 5, 6}, {3, 3}, std::array<int64_t, 2>{2, 2}, {1, 1});
  checkPool(false, {1, 2, 4, 5}, {2, 4}, std::array<int64_t, 2>{3, 1}, {1, 2});
}
TEST(PoolKernelTest, AvgDefaultStrides) {
  checkPool(false, {2, 3, 6, 7}, {3, 2}, std::nullopt, {0, 0});
}
TEST(PoolKernelTest, OtherDtypes) {
  checkPool(true, {1, 2, 6, 6}, {3, 3}, std::array<int64_t, 2>{2, 2}, {1, 1},
            DType::F16);
  checkPool(false, {1, 2, 6, 6}, {3, 3}, std::array<int64_t, 2>{2, 2}, {1, 1},
            DType::F64);
  checkPool(false, {1, 2, 6, 6}, {2, 2}, std::nullopt, {1, 1}, DType::BF16);
}

TEST(PoolKernelTest, GlobalAverage) {
  for (DType dtype : {DType::F32, DType::F64, DType::F16}) {
    HostTensor x = randomTensor(dtype, {3, 4, 5, 7}, 22);
    std::vector<double> want;
    for (int64_t p = 0; p < 12; ++p) {
      double sum = 0;
      for (int64_t i = 0; i < 35; ++i)
        sum += x.values[p * 35 + i];
      want.push_back(roundTo(dtype, sum / 35));
    }
    auto got =
        runOp1("global_avg_pool2d", json::object(), {x}, {dtype, {3, 4}});
    Tolerance tol = toleranceFor(dtype);
    EXPECT_TRUE(close(got, want, tol.atol, tol.rtol)) << dtypeName(dtype);
  }
}

} // namespace

/// 2x2 windows 2 apart without padding take a fast path in both directions;
/// it must give the general scan's bits: ties go to the first maximum in
/// row-major order, a NaN wins and propagates, odd edges get no gradient,
/// and each gradient lands as 0 + g (a -0 gradient gives +0).
TEST(PoolKernelTest, MaxTwoByTwoMatchesTheGeneralScan) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const int64_t n = 2, c = 3, h = 5, w = 7, oh = 2, ow = 3;
  HostTensor x{DType::F32, {n, c, h, w}, {}};
  const double pool[] = {-1, 0, 1, 1, 0.5, -1};
  for (int64_t i = 0; i < n * c * h * w; ++i)
    x.values.push_back(i % 37 == 5 ? nan : pool[(i * 7 + i / 5) % 6]);
  HostTensor dy{DType::F32, {n, c, oh, ow}, {}};
  for (int64_t i = 0; i < n * c * oh * ow; ++i)
    dy.values.push_back(i % 4 == 0 ? -0.0 : 0.25 * static_cast<double>(i));
  std::vector<double> wantY, wantDx(x.values.size(), 0.0);
  for (int64_t p = 0; p < n * c; ++p)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        int64_t arg = (p * h + 2 * i) * w + 2 * j;
        double best = x.values[arg];
        for (int64_t a = 0; a < 2; ++a)
          for (int64_t b = 0; b < 2; ++b) {
            int64_t at = (p * h + 2 * i + a) * w + 2 * j + b;
            if (!(x.values[at] <= best)) {
              best = x.values[at];
              arg = at;
            }
          }
        wantY.push_back(best);
        wantDx[arg] = 0.0 + dy.values[(p * oh + i) * ow + j];
      }
  json attrs = {
      {"kernel_size", {2, 2}}, {"strides", {2, 2}}, {"padding", {0, 0}}};
  auto same = [](const std::vector<double> &got,
                 const std::vector<double> &want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      if (std::isnan(want[i])) {
        EXPECT_TRUE(std::isnan(got[i])) << "element " << i;
        continue;
      }
      EXPECT_EQ(got[i], want[i]) << "element " << i;
      EXPECT_EQ(std::signbit(got[i]), std::signbit(want[i])) << "element " << i;
    }
  };
  same(runOp1("max_pool2d", attrs, {x}, {DType::F32, {n, c, oh, ow}}), wantY);
  same(
      runOp1("max_pool2d_backward", attrs, {dy, x}, {DType::F32, {n, c, h, w}}),
      wantDx);
}
