//===- Quantization.h - block-wise 8-bit optimizer state --------*- C++ -*-===//
//
// The arithmetic of memopt.adam8bit_update's state, written once for the CPU
// and the CUDA backend (MEMOPT_HD), as bitsandbytes' block-wise 8-bit
// optimizers store Adam's moments (Dettmers et al., "8-bit Optimizers via
// Block-wise Quantization", 2022):
//  * the code: the 256 values of the dynamic tree map
//    (bitsandbytes.functional.create_dynamic_map, 7 exponent bits), signed
//    for the first moment and unsigned for the second, sorted ascending and
//    computed in f32 as that function computes them with torch.linspace;
//  * a value is stored as the index of the code nearest to it divided by
//    its block's absolute maximum (ties to the lower index); a nonzero
//    first-moment value whose nearest code has the other sign takes the
//    neighbouring code towards it, as bitsandbytes' kernel does, so a
//    moment never flips sign through quantisation;
//  * the value of index c in a block with maximum a is code[c] · a.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_QUANTIZATION_H
#define MEMOPT_RUNTIME_QUANTIZATION_H

#include "memopt/runtime/HostDevice.h"

#include <array>
#include <cstdint>

namespace memopt::runtime::quant {

/// Entries of a code.
constexpr int kCodeSize = 256;

/// The dynamic tree map, signed (first moments) or unsigned (second
/// moments), sorted ascending. Host only; the CUDA backend copies it to
/// the device.
std::array<float, kCodeSize> dynamicMap(bool isSigned);

/// The index of the entry of the ascending `code` nearest to `x` (ties to
/// the lower index; NaN gives 0).
MEMOPT_HD inline uint8_t nearestCode(const float *code, float x) {
  int lo = 0, hi = kCodeSize - 1;
  if (!(x > code[lo]))
    return 0;
  if (x >= code[hi])
    return static_cast<uint8_t>(hi);
  // code[lo] < x < code[hi]
  while (hi - lo > 1) {
    int mid = (lo + hi) / 2;
    if (code[mid] <= x)
      lo = mid;
    else
      hi = mid;
  }
  return static_cast<uint8_t>(x - code[lo] <= code[hi] - x ? lo : hi);
}

/// The code of `value` in a block of absolute maximum `absmax` (0 when the
/// whole block is zero); a signed code keeps a nonzero value's sign.
MEMOPT_HD inline uint8_t quantize(const float *code, bool isSigned, float value,
                                  float absmax) {
  if (!(absmax > 0))
    return nearestCode(code, 0.0f);
  uint8_t c = nearestCode(code, value / absmax);
  if (isSigned) {
    if (value > 0 && code[c] < 0 && c + 1 < kCodeSize)
      ++c;
    else if (value < 0 && !(code[c] < 0) && c > 0)
      --c;
  }
  return c;
}

} // namespace memopt::runtime::quant

#endif // MEMOPT_RUNTIME_QUANTIZATION_H
