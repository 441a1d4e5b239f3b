//===- LossScale.h - dynamic loss scaling for all backends ------*- C++ -*-===//
//
// The scalar arithmetic of mixed-precision training with a dynamic loss
// scale, as PyTorch's torch.amp.GradScaler does it, written once for the CPU
// and the CUDA backend (MEMOPT_HD):
//  * found_inf: whether any gradient element is +-inf or NaN, tested on the
//    bit pattern (an all-ones exponent) so that no compiler flag or
//    f16/bf16 conversion can change the answer;
//  * unscale: g * (1 / scale), with the reciprocal computed once in double
//    and rounded to float (`scale.double().reciprocal().float()`), the
//    product in float (double for f64 gradients) and rounded to g's dtype
//    (`_amp_foreach_non_finite_check_and_unscale_`);
//  * update_loss_scale: `_amp_update_scale_`'s rule: back off and reset the
//    growth tracker after a step with non-finite gradients, grow after
//    `growth_interval` successful steps in a row, and never grow to inf.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_LOSSSCALE_H
#define MEMOPT_RUNTIME_LOSSSCALE_H

#include "memopt/runtime/Half.h"
#include "memopt/runtime/HostDevice.h"

#include <cstdint>
#include <cstring>

namespace memopt::runtime::math {

//===----------------------------------------------------------------------===//
// Non-finite tests on bit patterns
//===----------------------------------------------------------------------===//

/// Whether a binary16 value is +-inf or NaN (exponent all ones).
MEMOPT_HD inline bool halfBitsNonFinite(uint16_t h) {
  return (h & 0x7C00u) == 0x7C00u;
}

/// Whether a bfloat16 value is +-inf or NaN.
MEMOPT_HD inline bool bfloat16BitsNonFinite(uint16_t b) {
  return (b & 0x7F80u) == 0x7F80u;
}

MEMOPT_HD inline bool nonFinite(float x) {
  return (detail::floatBits(x) & 0x7F800000u) == 0x7F800000u;
}

MEMOPT_HD inline bool nonFinite(double x) {
#if defined(__CUDA_ARCH__)
  uint64_t u = static_cast<uint64_t>(__double_as_longlong(x));
#else
  uint64_t u;
  std::memcpy(&u, &x, sizeof u);
#endif
  return (u & 0x7FF0000000000000ull) == 0x7FF0000000000000ull;
}

//===----------------------------------------------------------------------===//
// Unscaling
//===----------------------------------------------------------------------===//

/// 1 / scale, computed in double and rounded to float once per step
/// (PyTorch: `scale.double().reciprocal().float()`).
MEMOPT_HD inline float inverseLossScale(float scale) {
  return static_cast<float>(1.0 / static_cast<double>(scale));
}

/// One unscaled gradient element in its compute type (float for f16, bf16
/// and f32 gradients, double for f64); the caller rounds it to the
/// gradient's dtype.
MEMOPT_HD inline float unscaleValue(float g, float invScale) {
  return g * invScale;
}
MEMOPT_HD inline double unscaleValue(double g, float invScale) {
  return g * static_cast<double>(invScale);
}

//===----------------------------------------------------------------------===//
// The loss-scale update
//===----------------------------------------------------------------------===//

/// The new loss scale and growth tracker (successful steps since the last
/// change of the scale).
struct LossScaleState {
  float scale;
  int32_t growthTracker;
};

/// PyTorch's `_amp_update_scale_`: after a step with non-finite gradients
/// (`foundInf` nonzero, NaN included) the scale is multiplied by
/// `backoffFactor` and the tracker reset; otherwise the tracker counts the
/// step and, on reaching `growthInterval`, the scale is multiplied by
/// `growthFactor` (kept only if the product is finite in float, so the
/// scale never overflows to inf) and the tracker reset. The factors are
/// doubles, as PyTorch passes them: each product is computed in double and
/// rounded to float. `growthInterval` >= 1 and <= INT32_MAX (the plan
/// loader checks), and the tracker arithmetic is in 64 bits, so no value of
/// the tracker overflows.
MEMOPT_HD inline LossScaleState
updateLossScale(float scale, int32_t growthTracker, float foundInf,
                double growthFactor, double backoffFactor,
                int64_t growthInterval) {
  if (foundInf != 0.0f)
    return {static_cast<float>(static_cast<double>(scale) * backoffFactor), 0};
  int64_t successful = static_cast<int64_t>(growthTracker) + 1;
  if (successful < growthInterval)
    return {scale, static_cast<int32_t>(successful)};
  float grown = static_cast<float>(static_cast<double>(scale) * growthFactor);
  return {nonFinite(grown) ? scale : grown, 0};
}

/// Whether a 0-d flag (found_inf as select's condition, an optimizer's skip
/// operand) is set: any nonzero value, NaN included.
MEMOPT_HD inline bool flagSet(float flag) { return flag != 0.0f; }

} // namespace memopt::runtime::math

#endif // MEMOPT_RUNTIME_LOSSSCALE_H
