//===- QuantizationTest.cpp - the 8-bit optimizer state's code ------------===//
//
// The dynamic tree map against values worked out by hand from
// bitsandbytes' create_dynamic_map (the midpoints of torch.linspace(0.1, 1,
// k) scaled by powers of ten), and the nearest-code rounding: its error
// bound, ties, sign preservation and the all-zero block.
//
//===----------------------------------------------------------------------===//

#include "memopt/runtime/Quantization.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

using namespace memopt::runtime;

namespace {

TEST(Quantization, SignedMapHasTheDynamicTreeValues) {
  const auto code = quant::dynamicMap(true);
  EXPECT_TRUE(std::is_sorted(code.begin(), code.end()));
  // One zero, one 1.0, and 127 values of each sign.
  EXPECT_EQ(std::count(code.begin(), code.end(), 0.0f), 1);
  EXPECT_EQ(code.back(), 1.0f);
  EXPECT_EQ(
      std::count_if(code.begin(), code.end(), [](float v) { return v < 0; }),
      127);
  // Exponent 0 (10^-6): linspace(0.1, 1, 2) has one midpoint, 0.55.
  EXPECT_FLOAT_EQ(code[128], 0.55e-6f); // the smallest positive value
  EXPECT_FLOAT_EQ(code[126], -0.55e-6f);
  // Exponent 6 (10^0): linspace(0.1, 1, 65), step 0.9/64; the largest
  // midpoint is 1 - 0.9/128.
  EXPECT_FLOAT_EQ(code[0], -(1.0f - 0.9f / 128));
  EXPECT_FLOAT_EQ(code[254], 1.0f - 0.9f / 128);
  EXPECT_FLOAT_EQ(code[253], 1.0f - 3 * 0.9f / 128);
}

TEST(Quantization, UnsignedMapHasTheDynamicTreeValues) {
  const auto code = quant::dynamicMap(false);
  EXPECT_TRUE(std::is_sorted(code.begin(), code.end()));
  EXPECT_EQ(code[0], 0.0f);
  EXPECT_EQ(code[255], 1.0f);
  // Exponent 0: linspace(0.1, 1, 3) = 0.1, 0.55, 1; midpoints 0.325, 0.775.
  EXPECT_FLOAT_EQ(code[1], 0.325e-6f);
  EXPECT_FLOAT_EQ(code[2], 0.775e-6f);
  // Exponent 6: linspace(0.1, 1, 129), step 0.9/128.
  EXPECT_FLOAT_EQ(code[254], 1.0f - 0.9f / 256);
}

/// Over random blocks: the dequantised value is within half the widest gap
/// of the map (the top decade's, 0.9/64 signed and 0.9/128 unsigned) times
/// the block's maximum, and a nonzero first-moment value keeps its sign.
TEST(Quantization, RoundTripErrorIsBounded) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (bool isSigned : {true, false}) {
    const auto code = quant::dynamicMap(isSigned);
    const float halfGap = isSigned ? 0.9f / 128 : 0.9f / 256;
    for (int block = 0; block < 200; ++block) {
      // Magnitudes over ten decades, as Adam's moments spread.
      float values[256], absmax = 0;
      for (float &v : values) {
        v = uniform(rng) * std::pow(10.0f, -10.0f * std::abs(uniform(rng)));
        if (!isSigned)
          v = std::abs(v);
        absmax = std::max(absmax, std::abs(v));
      }
      for (float v : values) {
        const uint8_t c = quant::quantize(code.data(), isSigned, v, absmax);
        const float back = code[c] * absmax;
        EXPECT_LE(std::abs(back - v), halfGap * absmax * 1.0001f)
            << v << " in a block of maximum " << absmax;
        if (isSigned && v != 0) {
          EXPECT_EQ(back < 0, v < 0) << v;
        }
      }
    }
  }
}

TEST(Quantization, NearestCodeTiesAndEdges) {
  const auto code = quant::dynamicMap(false);
  EXPECT_EQ(quant::nearestCode(code.data(), 0.0f), 0);
  EXPECT_EQ(quant::nearestCode(code.data(), 2.0f), 255);
  EXPECT_EQ(quant::nearestCode(code.data(), -1.0f), 0);
  EXPECT_EQ(quant::nearestCode(code.data(), std::nanf("")), 0);
  // Halfway between two entries goes to the lower one.
  const float mid = (code[100] + code[101]) / 2;
  const uint8_t c = quant::nearestCode(code.data(), mid);
  EXPECT_TRUE(c == 100 || (c == 101 && mid - code[100] > code[101] - mid));
  EXPECT_EQ(quant::nearestCode(code.data(), code[37]), 37);
  // An all-zero block stores zero's code (its maximum, 0, scales it).
  const auto signedCode = quant::dynamicMap(true);
  EXPECT_EQ(signedCode[quant::quantize(signedCode.data(), true, 0.0f, 0.0f)],
            0.0f);
  // A tiny negative value whose nearest code is zero takes the largest
  // negative code.
  const uint8_t neg = quant::quantize(signedCode.data(), true, -1e-9f, 1.0f);
  EXPECT_LT(signedCode[neg], 0.0f);
  EXPECT_EQ(neg, 126);
}

} // namespace
