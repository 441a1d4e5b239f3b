//===- Half.h - IEEE binary16 and bfloat16 conversions ----------*- C++ -*-===//
//
// f16 and bf16 tensors are stored as 16-bit patterns and computed in float.
// The conversions are written with integer operations only, so the same code
// runs on the host and on a GPU and gives bit-identical results on both:
// float -> f16/bf16 rounds to nearest, ties to even, overflows to infinity
// and keeps NaN a (quiet) NaN with its sign; f16/bf16 -> float is exact.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_HALF_H
#define MEMOPT_RUNTIME_HALF_H

#include "memopt/runtime/HostDevice.h"

#include <cstdint>
#include <cstring>

namespace memopt::runtime {

namespace detail {
MEMOPT_HD inline uint32_t floatBits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

MEMOPT_HD inline float bitsToFloat(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}
} // namespace detail

/// Rounds a float to the nearest binary16 value (ties to even).
MEMOPT_HD inline uint16_t floatToHalfBits(float f) {
  uint32_t x = detail::floatBits(f);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  x &= 0x7FFFFFFFu;
  if (x >= 0x7F800000u) {
    // Infinity stays infinity; NaN keeps its top payload bits and is quieted.
    if (x == 0x7F800000u)
      return sign | 0x7C00u;
    return static_cast<uint16_t>(sign | 0x7E00u | ((x >> 13) & 0x3FFu));
  }
  // 65520 is half-way between the largest finite half (65504, odd mantissa)
  // and 65536: it and everything above round to infinity.
  if (x >= 0x477FF000u)
    return sign | 0x7C00u;
  if (x < 0x38800000u) {
    // Below the smallest normal half (2^-14): a subnormal in units of 2^-24.
    // Anything below 2^-25 rounds to zero; exactly 2^-25 ties to even (0).
    if (x < 0x33000000u)
      return sign;
    uint32_t exponent = x >> 23;
    uint32_t mantissa = (x & 0x7FFFFFu) | 0x800000u;
    uint32_t shift = 126u - exponent; // 14 .. 24
    uint32_t result = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1u);
    uint32_t halfway = 1u << (shift - 1u);
    if (rest > halfway || (rest == halfway && (result & 1u)))
      ++result; // May carry into the smallest normal, which is correct.
    return static_cast<uint16_t>(sign | result);
  }
  // Normal: rebias the exponent (127 -> 15) and round off 13 mantissa bits.
  // A carry out of the mantissa correctly increments the exponent.
  uint32_t result = ((x >> 23) - 112u) << 10 | ((x >> 13) & 0x3FFu);
  uint32_t rest = x & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (result & 1u)))
    ++result;
  return static_cast<uint16_t>(sign | result);
}

/// Widens a binary16 value to float (exact).
MEMOPT_HD inline float halfBitsToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1Fu;
  uint32_t mantissa = h & 0x3FFu;
  if (exponent == 0x1Fu) // Infinity or NaN.
    return detail::bitsToFloat(sign | 0x7F800000u | (mantissa << 13));
  if (exponent != 0)
    return detail::bitsToFloat(sign | ((exponent + 112u) << 23) |
                               (mantissa << 13));
  if (mantissa == 0)
    return detail::bitsToFloat(sign);
  // Subnormal: normalise the mantissa into float's normal range.
  uint32_t e = 113u; // 127 - 14
  while (!(mantissa & 0x400u)) {
    mantissa <<= 1;
    --e;
  }
  return detail::bitsToFloat(sign | (e << 23) | ((mantissa & 0x3FFu) << 13));
}

/// Rounds a float to the nearest bfloat16 value (ties to even). bfloat16 has
/// float's exponent range, so only the mantissa is rounded; an overflow of
/// the rounding carries into infinity as it should.
MEMOPT_HD inline uint16_t floatToBFloat16Bits(float f) {
  uint32_t x = detail::floatBits(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) // NaN: quiet it, keep sign/payload.
    return static_cast<uint16_t>((x >> 16) | 0x0040u);
  uint32_t bias = 0x7FFFu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + bias) >> 16);
}

/// Widens a bfloat16 value to float (exact).
MEMOPT_HD inline float bfloat16BitsToFloat(uint16_t b) {
  return detail::bitsToFloat(static_cast<uint32_t>(b) << 16);
}

/// Storage types for f16 and bf16 elements: a bit pattern with conversions,
/// deliberately without arithmetic (kernels compute in float).
struct Half {
  uint16_t bits = 0;
  Half() = default;
  MEMOPT_HD explicit Half(float f) : bits(floatToHalfBits(f)) {}
  MEMOPT_HD static Half fromBits(uint16_t b) {
    Half h;
    h.bits = b;
    return h;
  }
  MEMOPT_HD explicit operator float() const { return halfBitsToFloat(bits); }
};

struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  MEMOPT_HD explicit BFloat16(float f) : bits(floatToBFloat16Bits(f)) {}
  MEMOPT_HD static BFloat16 fromBits(uint16_t b) {
    BFloat16 h;
    h.bits = b;
    return h;
  }
  MEMOPT_HD explicit operator float() const {
    return bfloat16BitsToFloat(bits);
  }
};

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2,
              "f16/bf16 storage must be 2 bytes");

} // namespace memopt::runtime

#endif // MEMOPT_RUNTIME_HALF_H
