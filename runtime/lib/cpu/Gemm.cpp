//===- Gemm.cpp - matrix products for the CPU kernels ---------------------===//
//
// The only file that calls a GEMM library, so the dependency stays in one
// place: oneDNN's sgemm for f32, OpenBLAS's dgemm for f64 (oneDNN has no
// f64 GEMM). bench/cpu_gemm.cpp measures the two on the models' shapes.
//
//===----------------------------------------------------------------------===//

#include "Gemm.h"

#include "memopt/runtime/CpuThreads.h"
#include "memopt/runtime/Error.h"

#include <cblas.h>
#include <dnnl.h>
#include <omp.h>

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
  // oneDNN splits a product over the calling thread's OpenMP team; inside a
  // kernel's parallel parts (ParallelFor.h) it runs on the part's thread.
  // The team follows cpuThreads() wherever the product is called from. Its
  // split is a fixed function of the shapes and the thread count, so the
  // bits repeat run after run; another count may divide the inner dimension
  // and sum in another order (CpuGemmTest).
  if (!omp_in_parallel()) {
    int threads = cpuThreads();
    if (omp_get_max_threads() != threads)
      omp_set_num_threads(threads);
  }
  dnnl_status_t status = dnnl_sgemm(transA ? 'T' : 'N', transB ? 'T' : 'N', m,
                                    n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  if (status != dnnl_success)
    throw Error(ErrorCode::KernelFailure,
                concat("oneDNN's sgemm failed (status ", int(status), ") on ",
                       m, "x", k, " by ", k, "x", n));
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
