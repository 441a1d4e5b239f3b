//===- SoftmaxTest.cpp - softmax kernel -----------------------------------===//
//
// Along the last, a middle and the first axis (strided rows), with values of
// +-1000 that overflow a naive exp, causally masked attention scores, and
// the safe softmax's rows of -inf.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

using namespace memopt::runtime;
using namespace memopt::runtime::test;

namespace {

std::vector<double> referenceSoftmax(const HostTensor &x, int64_t axis,
                                     bool causal) {
  const Shape &s = x.shape;
  int64_t outer = 1, inner = 1, len = s[axis];
  for (int64_t d = 0; d < axis; ++d)
    outer *= s[d];
  for (size_t d = axis + 1; d < s.size(); ++d)
    inner *= s[d];
  std::vector<double> y(x.values.size(), 0.0);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t valid = causal ? o % len + 1 : len;
      double max = -INFINITY, sum = 0;
      for (int64_t j = 0; j < valid; ++j)
        max = std::max(max, x.values[(o * len + j) * inner + i]);
      for (int64_t j = 0; j < valid; ++j)
        sum += std::exp(x.values[(o * len + j) * inner + i] - max);
      for (int64_t j = 0; j < valid; ++j)
        y[(o * len + j) * inner + i] =
            std::exp(x.values[(o * len + j) * inner + i] - max) / sum;
    }
  return y;
}

void checkSoftmax(Shape shape, int64_t axis, bool causal, DType dtype,
                  double lo = -3, double hi = 3, bool defaults = false) {
  HostTensor x = randomTensor(dtype, shape, 31, lo, hi);
  int64_t rank = shape.size();
  std::vector<double> want =
      referenceSoftmax(x, axis < 0 ? axis + rank : axis, causal);
  for (double &v : want)
    v = roundTo(dtype, v);
  json attrs =
      defaults ? json::object() : json{{"axis", axis}, {"causal", causal}};
  auto got = runOp1("softmax", attrs, {x}, {dtype, shape});
  Tolerance tol = toleranceFor(dtype);
  EXPECT_TRUE(close(got, want, tol.atol, tol.rtol));
}

TEST(SoftmaxKernelTest, LastAxisNegativeIndex) {
  checkSoftmax({2, 3, 5}, -1, false, DType::F32);
}
TEST(SoftmaxKernelTest, DefaultAxisIsLast) {
  checkSoftmax({4, 6}, -1, false, DType::F32, -3, 3, true);
}
TEST(SoftmaxKernelTest, MiddleAndFirstAxis) {
  checkSoftmax({2, 4, 3}, 1, false, DType::F32);
  checkSoftmax({5, 2, 3}, 0, false, DType::F32);
  checkSoftmax({3, 4, 2, 2}, -3, false, DType::F64);
}
TEST(SoftmaxKernelTest, HugeValuesDoNotOverflow) {
  HostTensor x{
      DType::F32, {2, 4}, {1000, 999, -1000, 1000, -1000, -999, -1000, -1001}};
  auto got = runOp1("softmax", {{"axis", -1}}, {x}, {DType::F32, {2, 4}});
  // Row 0 has max 1000: weights 1, e^-1, 0, 1. Row 1 has max -999:
  // weights e^-1, 1, e^-1, e^-2.
  double e1 = std::exp(-1.0), z0 = 2 + e1, z1 = 1 + 2 * e1 + e1 * e1;
  std::vector<double> want = {1 / z0,  e1 / z0, 0,       1 / z0,
                              e1 / z1, 1 / z1,  e1 / z1, e1 * e1 / z1};
  EXPECT_TRUE(close(got, want, 1e-6, 1e-6));
  checkSoftmax({3, 7}, -1, false, DType::F32, -1000, 1000);
}
TEST(SoftmaxKernelTest, CausalMasksTheFuture) {
  checkSoftmax({2, 3, 4, 4}, -1, true, DType::F32);
  checkSoftmax({5, 5}, 1, true, DType::F64);
  HostTensor x = randomTensor(DType::F32, {3, 3}, 5);
  auto got = runOp1("softmax", {{"axis", -1}, {"causal", true}}, {x},
                    {DType::F32, {3, 3}});
  EXPECT_EQ(got[0], 1.0);
  EXPECT_EQ(got[1], 0.0);
  EXPECT_EQ(got[2], 0.0);
  EXPECT_EQ(got[5], 0.0);
}
TEST(SoftmaxKernelTest, SafeZeroesRowsOfMinusInfinity) {
  const double inf = INFINITY;
  // Row 0 is every entry -inf (a fully masked row), row 1 partly.
  HostTensor x{DType::F32, {2, 3}, {-inf, -inf, -inf, 0.0, -inf, 0.0}};
  auto safe = runOp1("softmax", {{"axis", -1}, {"safe", true}}, {x},
                     {DType::F32, {2, 3}});
  EXPECT_EQ(safe, (std::vector<double>{0, 0, 0, 0.5, 0, 0.5}));
  auto plain = runOp1("softmax", {{"axis", -1}}, {x}, {DType::F32, {2, 3}});
  EXPECT_TRUE(std::isnan(plain[0]) && std::isnan(plain[2]));
  EXPECT_EQ(plain[3], 0.5);
  // Along a first axis (strided rows): column 1 is all -inf.
  HostTensor y{DType::F64, {2, 2}, {1.0, -inf, 1.0, -inf}};
  auto strided = runOp1("softmax", {{"axis", 0}, {"safe", true}}, {y},
                        {DType::F64, {2, 2}});
  EXPECT_EQ(strided, (std::vector<double>{0.5, 0, 0.5, 0}));
}
TEST(SoftmaxKernelTest, HalfPrecision) {
  checkSoftmax({3, 10}, -1, false, DType::F16, -8, 8);
  checkSoftmax({2, 6, 6}, -1, true, DType::BF16);
}

} // namespace
