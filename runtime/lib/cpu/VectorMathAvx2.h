//===- VectorMathAvx2.h - libmvec's AVX2 exp and erf ------------*- C++ -*-===//
//
// Internal to VectorMath.cpp. VectorMathAvx2.cpp is the only file compiled
// with -mavx2 -mfma; VectorMath.cpp calls it only after checking the CPU.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_LIB_CPU_VECTORMATHAVX2_H
#define MEMOPT_RUNTIME_LIB_CPU_VECTORMATHAVX2_H

#include <cstdint>

namespace memopt::runtime::cpu::vec::avx2 {

void exp(const float *src, float *dst, int64_t n);
void erf(const float *src, float *dst, int64_t n);

} // namespace memopt::runtime::cpu::vec::avx2

#endif // MEMOPT_RUNTIME_LIB_CPU_VECTORMATHAVX2_H
