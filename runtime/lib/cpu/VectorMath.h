//===- VectorMath.h - exp and erf over arrays of floats ---------*- C++ -*-===//
//
// Internal to the CPU backend: the f32 kernels whose time goes to
// transcendental functions (GELU and its gradient, the softmax of
// cross_entropy, linear_cross_entropy and attention) evaluate them a chunk
// at a time through glibc's vector math library (libmvec, the x86-64 vector
// function ABI's AVX2 variants), five to nine times faster than element by
// element. Every element goes through the same vector routine wherever it
// sits in the array (a tail is padded to a full vector), so an element's
// result depends on its value only: recomputation, in-place forms and
// chunking cannot change a bit. On a CPU without AVX2 and FMA, and on other
// architectures, the same functions fall back to libm's scalar expf and erff
// (within the same accuracy, not always the same bits).
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_LIB_CPU_VECTORMATH_H
#define MEMOPT_RUNTIME_LIB_CPU_VECTORMATH_H

#include <cstdint>

namespace memopt::runtime::cpu::vec {

/// Elements per chunk for callers that stage values in a stack buffer: a
/// multiple of every vector width, small enough for L1.
constexpr int64_t kChunk = 256;

/// dst[i] = exp(src[i]) for i < n; dst may be src.
void exp(const float *src, float *dst, int64_t n);
/// dst[i] = erf(src[i]) for i < n; dst may be src.
void erf(const float *src, float *dst, int64_t n);

/// Whether the vector routines are in use on this CPU (else libm's scalar
/// ones).
bool vectorized();

} // namespace memopt::runtime::cpu::vec

#endif // MEMOPT_RUNTIME_LIB_CPU_VECTORMATH_H
