//===- Quantization.cpp - the dynamic tree map ----------------------------===//
//
// bitsandbytes.functional.create_dynamic_map(signed, max_exponent_bits=7,
// total_bits=8), in f32 as PyTorch evaluates it: for each exponent
// i = 0..6, the midpoints of torch.linspace(0.1, 1, k_i) (f32, computed
// from both ends as ATen's linspace kernel does) scaled by 10^(i-6), with
// k_i = 2^i + 1 for a signed map (and each value negated too) or
// 2^(i+1) + 1 for an unsigned one; then 0 and 1; sorted.
//
//===----------------------------------------------------------------------===//

#include "memopt/runtime/Quantization.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace memopt::runtime::quant {

namespace {

/// torch.linspace(start, end, steps) in f32.
std::vector<float> linspace(float start, float end, int steps) {
  std::vector<float> out(steps);
  const float step = (end - start) / static_cast<float>(steps - 1);
  const int halfway = steps / 2;
  for (int i = 0; i < steps; ++i)
    out[i] = i < halfway ? start + step * static_cast<float>(i)
                         : end - step * static_cast<float>(steps - i - 1);
  return out;
}

} // namespace

std::array<float, kCodeSize> dynamicMap(bool isSigned) {
  constexpr int kExponentBits = 7, kNonSignBits = 7;
  std::vector<float> data;
  for (int i = 0; i < kExponentBits; ++i) {
    const int items = isSigned
                          ? (1 << (i + kNonSignBits - kExponentBits)) + 1
                          : (1 << (i + kNonSignBits - kExponentBits + 1)) + 1;
    std::vector<float> bounds = linspace(0.1f, 1.0f, items);
    const float scale =
        static_cast<float>(std::pow(10.0, -(kExponentBits - 1) + i));
    for (int j = 0; j + 1 < items; ++j) {
      const float mean = (bounds[j] + bounds[j + 1]) / 2.0f;
      data.push_back(scale * mean);
      if (isSigned)
        data.push_back(-scale * mean);
    }
  }
  data.push_back(0.0f);
  data.push_back(1.0f);
  data.resize(kCodeSize, 0.0f);
  std::sort(data.begin(), data.end());
  std::array<float, kCodeSize> code;
  std::copy(data.begin(), data.end(), code.begin());
  return code;
}

} // namespace memopt::runtime::quant
