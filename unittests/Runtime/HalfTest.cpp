//===- HalfTest.cpp - f16/bf16 conversion tests ---------------------------===//
//
// Exhaustive over all 2^16 patterns where that is cheap, and against GCC's
// _Float16 (libgcc's correctly rounded conversion) for float -> f16.
//
//===----------------------------------------------------------------------===//

#include "memopt/runtime/Half.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <random>

using namespace memopt::runtime;

namespace {

float fromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// The f16 value of a bit pattern computed independently of Half.h.
double halfValue(uint16_t h) {
  int sign = h >> 15 ? -1 : 1;
  int e = (h >> 10) & 0x1F, m = h & 0x3FF;
  if (e == 0x1F)
    return m ? NAN : sign * INFINITY;
  if (e == 0)
    return sign * std::ldexp(m, -24);
  return sign * std::ldexp(1024 + m, e - 25);
}

TEST(HalfTest, HalfToFloatIsExactForAllPatterns) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = halfBitsToFloat(static_cast<uint16_t>(h));
    double want = halfValue(static_cast<uint16_t>(h));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(f)) << std::hex << h;
      continue;
    }
    ASSERT_EQ(static_cast<double>(f), want) << std::hex << h;
    EXPECT_EQ(std::signbit(f), (h & 0x8000) != 0) << std::hex << h;
  }
}

TEST(HalfTest, RoundTripsEveryHalf) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    uint16_t back = floatToHalfBits(halfBitsToFloat(static_cast<uint16_t>(h)));
    bool isNan = (h & 0x7C00) == 0x7C00 && (h & 0x3FF);
    if (isNan) {
      // NaNs stay NaNs with their sign; signalling ones become quiet.
      EXPECT_EQ(back & 0x7C00, 0x7C00);
      EXPECT_NE(back & 0x3FF, 0);
      EXPECT_EQ(back & 0x8000, h & 0x8000);
      EXPECT_NE(back & 0x200, 0);
    } else {
      ASSERT_EQ(back, h) << std::hex << h;
    }
  }
}

TEST(HalfTest, RoundsToNearestEvenAtTheEdges) {
  EXPECT_EQ(floatToHalfBits(1.0f), 0x3C00);
  // Ties between 1 and 1 + 2^-10 go to the even mantissa.
  EXPECT_EQ(floatToHalfBits(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  EXPECT_EQ(floatToHalfBits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
  EXPECT_EQ(floatToHalfBits(std::nextafter(1.0f + std::ldexp(1.0f, -11), 2.0f)),
            0x3C01);
  // Largest finite, the overflow tie and beyond.
  EXPECT_EQ(floatToHalfBits(65504.0f), 0x7BFF);
  EXPECT_EQ(floatToHalfBits(std::nextafter(65520.0f, 0.0f)), 0x7BFF);
  EXPECT_EQ(floatToHalfBits(65520.0f), 0x7C00);
  EXPECT_EQ(floatToHalfBits(-1e10f), 0xFC00);
  EXPECT_EQ(floatToHalfBits(INFINITY), 0x7C00);
  // Subnormals: 2^-24 is the smallest; 2^-25 ties to 0, just above to 2^-24.
  EXPECT_EQ(floatToHalfBits(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(floatToHalfBits(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(floatToHalfBits(std::nextafter(std::ldexp(1.0f, -25), 1.0f)),
            0x0001);
  EXPECT_EQ(floatToHalfBits(-std::ldexp(3.0f, -25)), 0x8002); // Tie to even.
  // The largest subnormal rounding up into the smallest normal.
  EXPECT_EQ(floatToHalfBits(std::ldexp(1.0f, -14) - std::ldexp(1.0f, -26)),
            0x0400);
  EXPECT_EQ(floatToHalfBits(-0.0f), 0x8000);
  EXPECT_TRUE(std::isnan(halfBitsToFloat(floatToHalfBits(NAN))));
}

#if defined(__FLT16_MAX__) && !defined(__CUDACC__)
TEST(HalfTest, MatchesFloat16OnRandomAndBoundaryFloats) {
  auto check = [](float f) {
    _Float16 ref = static_cast<_Float16>(f);
    uint16_t want;
    std::memcpy(&want, &ref, 2);
    uint16_t got = floatToHalfBits(f);
    if (std::isnan(f))
      return (got & 0x7C00) == 0x7C00 && (got & 0x3FF) != 0;
    return got == want;
  };
  std::mt19937 rng(42);
  for (int i = 0; i < 200000; ++i) {
    float f = fromBits(rng());
    ASSERT_TRUE(check(f)) << f;
  }
  // Every half-way point between adjacent halves and its neighbours.
  for (uint32_t h = 0; h < 0x7BFF; ++h) {
    float a = halfBitsToFloat(h), b = halfBitsToFloat(h + 1);
    float mid = (a + b) / 2; // Exact in float.
    for (float f :
         {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f)}) {
      ASSERT_TRUE(check(f)) << f;
      ASSERT_TRUE(check(-f)) << -f;
    }
  }
}
#endif

TEST(BFloat16Test, RoundTripsEveryPattern) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    float f = bfloat16BitsToFloat(static_cast<uint16_t>(b));
    uint32_t u;
    std::memcpy(&u, &f, 4);
    ASSERT_EQ(u, b << 16);
    if (std::isnan(f))
      EXPECT_TRUE(std::isnan(bfloat16BitsToFloat(floatToBFloat16Bits(f))));
    else
      ASSERT_EQ(floatToBFloat16Bits(f), b) << std::hex << b;
  }
}

TEST(BFloat16Test, RoundsToNearestEven) {
  std::mt19937 rng(7);
  for (int i = 0; i < 200000; ++i) {
    uint32_t u = rng();
    float f = fromBits(u);
    if (!std::isfinite(f))
      continue;
    // Reference: the two neighbours in bf16 and the closer one (ties: even).
    uint32_t lo = u & 0xFFFF0000u, hi = lo + 0x10000u;
    double dlo = std::fabs(static_cast<double>(fromBits(lo)) - f);
    double dhi = std::fabs(static_cast<double>(fromBits(hi)) - f);
    if ((hi & 0x7F800000u) == 0x7F800000u) // hi is infinity: its distance.
      dhi = std::fabs(std::ldexp(1.0, 128) * (f < 0 ? -1 : 1) - f);
    uint16_t want = static_cast<uint16_t>(
        (dlo < dhi || (dlo == dhi && !((lo >> 16) & 1))) ? lo >> 16 : hi >> 16);
    ASSERT_EQ(floatToBFloat16Bits(f), want) << std::hex << u;
  }
  EXPECT_EQ(floatToBFloat16Bits(fromBits(0x3F808000u)), 0x3F80); // Tie, even.
  EXPECT_EQ(floatToBFloat16Bits(fromBits(0x3F818000u)), 0x3F82); // Tie, up.
  EXPECT_EQ(floatToBFloat16Bits(fromBits(0x7F7FFFFFu)), 0x7F80); // To inf.
  EXPECT_TRUE(std::isnan(bfloat16BitsToFloat(floatToBFloat16Bits(NAN))));
  EXPECT_TRUE(std::isnan(
      bfloat16BitsToFloat(floatToBFloat16Bits(fromBits(0x7F800001u)))));
}

} // namespace
