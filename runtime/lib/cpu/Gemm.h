//===- Gemm.h - matrix products for the CPU kernels -------------*- C++ -*-===//
//
// A row-major GEMM over oneDNN (dnnl_sgemm, f32) and OpenBLAS
// (cblas_dgemm, f64), used by conv2d, linear, matmul, attention and the
// LM-head loss: C = alpha * op(A) * op(B) + beta * C with op(A) M x K,
// op(B) K x N. f64 sizes are checked against BLAS's 32-bit ints.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_LIB_CPU_GEMM_H
#define MEMOPT_RUNTIME_LIB_CPU_GEMM_H

#include <cstdint>

namespace memopt::runtime::cpu {

template <typename T>
void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, T alpha,
          const T *a, int64_t lda, const T *b, int64_t ldb, T beta, T *c,
          int64_t ldc);

} // namespace memopt::runtime::cpu

#endif // MEMOPT_RUNTIME_LIB_CPU_GEMM_H
