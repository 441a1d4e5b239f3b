//===- VectorMath.cpp - exp and erf over arrays of floats -----------------===//

#include "VectorMath.h"

#include <math.h>

#if MEMOPT_VECTOR_MATH_AVX2
#include "VectorMathAvx2.h"
#endif

namespace memopt::runtime::cpu::vec {

bool vectorized() {
#if MEMOPT_VECTOR_MATH_AVX2
  static const bool avx2 =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return avx2;
#else
  return false;
#endif
}

void exp(const float *src, float *dst, int64_t n) {
#if MEMOPT_VECTOR_MATH_AVX2
  if (vectorized())
    return avx2::exp(src, dst, n);
#endif
  for (int64_t i = 0; i < n; ++i)
    dst[i] = ::expf(src[i]);
}

void erf(const float *src, float *dst, int64_t n) {
#if MEMOPT_VECTOR_MATH_AVX2
  if (vectorized())
    return avx2::erf(src, dst, n);
#endif
  for (int64_t i = 0; i < n; ++i)
    dst[i] = ::erff(src[i]);
}

} // namespace memopt::runtime::cpu::vec
