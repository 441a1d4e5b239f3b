//===- Dropout.h - the counter-based dropout mask ---------------*- C++ -*-===//
//
// Dropout's mask is a pure function of (seed, step counter, element index),
// so backward and recomputation regenerate it instead of storing it, and the
// CPU and CUDA backends produce the same mask bit for bit. This header is the
// definition both backends use; changing it changes every saved model's
// training trajectory, so treat it as a format.
//
// The function, with all arithmetic on unsigned 64-bit integers (wrapping):
//
//   mix(z):  z += 0x9E3779B97F4A7C15
//            z  = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
//            z  = (z ^ (z >> 27)) * 0x94D049BB133111EB
//            return z ^ (z >> 31)                       (SplitMix64's output)
//
//   key(seed, step)   = mix(mix(seed) ^ step)     seed: the i64 attribute's
//                                                  two's-complement bits
//   bits(key, index)  = mix(key ^ index) >> 32    index: row-major element
//                                                  index in the tensor
//   threshold(p)      = min(floor(p * 2^32), 2^32 - 1)   (computed in double)
//   keep(index)       = bits(key, index) >= threshold(p)
//   y[index]          = keep ? x[index] * scale : 0,
//                       scale = 1 / (1 - p) computed in double and rounded
//                       once to the compute type (float for f32/f16/bf16,
//                       double for f64)
//
// So an element is dropped with probability threshold / 2^32 = p to within
// 2^-32, and p = 0 keeps everything.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_DROPOUT_H
#define MEMOPT_RUNTIME_DROPOUT_H

#include "memopt/runtime/HostDevice.h"

#include <cstdint>

namespace memopt::runtime::dropout {

/// SplitMix64's finaliser applied to z + golden gamma: a bijective,
/// well-mixing function of 64 bits.
MEMOPT_HD inline uint64_t mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// The per-(seed, step) stream key; computed once per kernel launch.
MEMOPT_HD inline uint64_t streamKey(int64_t seed, uint64_t step) {
  return mix(mix(static_cast<uint64_t>(seed)) ^ step);
}

/// 32 uniformly distributed bits for one element.
MEMOPT_HD inline uint32_t elementBits(uint64_t key, uint64_t index) {
  return static_cast<uint32_t>(mix(key ^ index) >> 32);
}

/// The drop threshold for probability p in [0, 1).
inline uint32_t threshold(double p) {
  if (!(p > 0))
    return 0;
  double t = p * 4294967296.0;
  if (t >= 4294967295.0)
    return 0xFFFFFFFFu;
  return static_cast<uint32_t>(t); // Truncation is floor for t >= 0.
}

/// Whether element `index` survives.
MEMOPT_HD inline bool keep(uint64_t key, uint64_t index, uint32_t threshold) {
  return elementBits(key, index) >= threshold;
}

/// The survivors' scale 1 / (1 - p), rounded once to the compute type.
template <typename T> inline T scale(double p) {
  return static_cast<T>(1.0 / (1.0 - p));
}

} // namespace memopt::runtime::dropout

#endif // MEMOPT_RUNTIME_DROPOUT_H
