//===- VectorMathAvx2.cpp - libmvec's AVX2 exp and erf --------------------===//
//
// Compiled with -mavx2 -mfma. Nothing here may be an inline function or a
// template that another file also instantiates: the linker could keep this
// file's AVX2 copy for every caller, and a CPU without AVX2 would then fault
// outside the checked path. So: intrinsics (always inlined) and plain loops
// only.
//
// The functions are glibc's libmvec (libm's vector variants), called by
// their x86-64 vector function ABI names: _ZGVdN8v_<f> takes and returns
// eight floats in a ymm register (ISA 'd' = AVX2, unmasked, 8 lanes, one
// vector argument). glibc declares them to the compiler only under
// -ffast-math, which this project does not use, so they are declared here.
//
//===----------------------------------------------------------------------===//

#include "VectorMathAvx2.h"

#include <immintrin.h>

extern "C" {
__m256 _ZGVdN8v_expf(__m256);
__m256 _ZGVdN8v_erff(__m256);
}

namespace memopt::runtime::cpu::vec::avx2 {

namespace {

using VectorFn = __m256 (*)(__m256);

void apply(VectorFn f, const float *src, float *dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i, f(_mm256_loadu_ps(src + i)));
  if (i == n)
    return;
  // The tail through the same routine, padded with zeros.
  float lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int64_t j = i; j < n; ++j)
    lanes[j - i] = src[j];
  _mm256_storeu_ps(lanes, f(_mm256_loadu_ps(lanes)));
  for (int64_t j = i; j < n; ++j)
    dst[j] = lanes[j - i];
}

} // namespace

void exp(const float *src, float *dst, int64_t n) {
  apply(_ZGVdN8v_expf, src, dst, n);
}

void erf(const float *src, float *dst, int64_t n) {
  apply(_ZGVdN8v_erff, src, dst, n);
}

} // namespace memopt::runtime::cpu::vec::avx2
