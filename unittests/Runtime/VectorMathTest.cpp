//===- VectorMathTest.cpp - the CPU kernels' vector exp and erf
//------------===//
//
// lib/cpu/VectorMath.h against double-precision references: within 2 ulps
// of the correctly rounded float (libmvec documents at most 1 for expf and
// 2 for erff), the special values IEEE-exact, and an element's bits
// independent of where it sits in the array (tails are padded, not
// computed another way), which recomputation and chunking rely on.
//
//===----------------------------------------------------------------------===//

#include "cpu/VectorMath.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

using namespace memopt::runtime::cpu;

namespace {

/// Floats in one order on the integers, so that ulps are a difference.
int64_t ordered(float x) {
  int32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits < 0 ? -static_cast<int64_t>(bits & 0x7fffffff) : bits;
}

int64_t ulps(float got, double want) {
  return std::llabs(ordered(got) - ordered(static_cast<float>(want)));
}

std::vector<float> sweep(float lo, float hi, int n) {
  std::vector<float> xs;
  for (int i = 0; i <= n; ++i)
    xs.push_back(lo +
                 (hi - lo) * static_cast<float>(i) / static_cast<float>(n));
  return xs;
}

TEST(VectorMath, ExpWithinTwoUlps) {
  // Past -87.3 the result is subnormal, past 88.7 it overflows.
  std::vector<float> xs = sweep(-103.0f, 88.7f, 20011);
  std::vector<float> ys(xs.size());
  vec::exp(xs.data(), ys.data(), static_cast<int64_t>(xs.size()));
  for (size_t i = 0; i < xs.size(); ++i)
    EXPECT_LE(ulps(ys[i], std::exp(static_cast<double>(xs[i]))), 2)
        << "exp(" << xs[i] << ") = " << ys[i];
}

TEST(VectorMath, ErfWithinTwoUlps) {
  std::vector<float> xs = sweep(-6.0f, 6.0f, 20011);
  // Near zero erf is about 2x/sqrt(pi): relative accuracy matters there.
  for (float x : {1e-30f, -1e-20f, 1e-8f, 3e-5f, -0.001f})
    xs.push_back(x);
  std::vector<float> ys(xs.size());
  vec::erf(xs.data(), ys.data(), static_cast<int64_t>(xs.size()));
  for (size_t i = 0; i < xs.size(); ++i)
    EXPECT_LE(ulps(ys[i], std::erf(static_cast<double>(xs[i]))), 2)
        << "erf(" << xs[i] << ") = " << ys[i];
}

TEST(VectorMath, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> xs = {0.0f, -0.0f, inf, -inf, nan, 89.0f, -104.0f};
  std::vector<float> e(xs.size()), f(xs.size());
  vec::exp(xs.data(), e.data(), static_cast<int64_t>(xs.size()));
  vec::erf(xs.data(), f.data(), static_cast<int64_t>(xs.size()));
  EXPECT_EQ(e[0], 1.0f);
  EXPECT_EQ(e[1], 1.0f);
  EXPECT_EQ(e[2], inf);
  EXPECT_EQ(e[3], 0.0f);
  EXPECT_TRUE(std::isnan(e[4]));
  EXPECT_EQ(e[5], inf);
  EXPECT_EQ(e[6], 0.0f);
  EXPECT_EQ(f[0], 0.0f);
  EXPECT_TRUE(std::signbit(f[1])) << "erf(-0) is -0";
  EXPECT_EQ(f[2], 1.0f);
  EXPECT_EQ(f[3], -1.0f);
  EXPECT_TRUE(std::isnan(f[4]));
  EXPECT_EQ(f[5], 1.0f);
  EXPECT_EQ(f[6], -1.0f);
}

/// Each element alone, at every offset of a longer array, and in place: the
/// same bits as in one call over the whole array.
TEST(VectorMath, AnElementsBitsDependOnItsValueOnly) {
  std::vector<float> xs = sweep(-4.0f, 3.0f, 36); // 37: body and tail
  const int64_t n = static_cast<int64_t>(xs.size());
  for (auto fn : {&vec::exp, &vec::erf}) {
    std::vector<float> whole(xs.size());
    fn(xs.data(), whole.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      float one;
      fn(&xs[i], &one, 1);
      EXPECT_EQ(std::memcmp(&one, &whole[i], sizeof one), 0) << "element " << i;
    }
    for (int64_t from = 1; from < 9; ++from) {
      std::vector<float> part(xs.begin() + from, xs.end());
      fn(part.data(), part.data(), static_cast<int64_t>(part.size()));
      EXPECT_EQ(std::memcmp(part.data(), whole.data() + from,
                            part.size() * sizeof(float)),
                0)
          << "from " << from;
    }
  }
}

} // namespace
