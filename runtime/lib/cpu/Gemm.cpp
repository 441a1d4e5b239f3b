//===- Gemm.cpp - BLAS matrix products for the CPU kernels ----------------===//
//
// The only file that includes cblas.h, so the BLAS dependency stays in one
// place.
//
//===----------------------------------------------------------------------===//

#include "Gemm.h"

#include "memopt/runtime/Error.h"

#include <cblas.h>

#include <climits>

namespace memopt::runtime::cpu {

namespace {
blasint toBlas(int64_t v, const char *what) {
  if (v < 0 || v > INT_MAX)
    throw Error(ErrorCode::KernelFailure,
                concat("matrix ", what, " ", v,
                       " exceeds the BLAS library's 32-bit sizes"));
  return static_cast<blasint>(v);
}
} // namespace

template <>
void gemm<float>(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                 float alpha, const float *a, int64_t lda, const float *b,
                 int64_t ldb, float beta, float *c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
              transB ? CblasTrans : CblasNoTrans, toBlas(m, "dimension"),
              toBlas(n, "dimension"), toBlas(k, "dimension"), alpha, a,
              toBlas(lda, "stride"), b, toBlas(ldb, "stride"), beta, c,
              toBlas(ldc, "stride"));
}

template <>
void gemm<double>(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                  double alpha, const double *a, int64_t lda, const double *b,
                  int64_t ldb, double beta, double *c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
              transB ? CblasTrans : CblasNoTrans, toBlas(m, "dimension"),
              toBlas(n, "dimension"), toBlas(k, "dimension"), alpha, a,
              toBlas(lda, "stride"), b, toBlas(ldb, "stride"), beta, c,
              toBlas(ldc, "stride"));
}

} // namespace memopt::runtime::cpu
