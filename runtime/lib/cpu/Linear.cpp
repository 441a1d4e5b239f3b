//===- Linear.cpp - linear and matmul on the CPU --------------------------===//
//
// Both reduce to row-major GEMMs. linear flattens the input's leading
// dimensions into rows (y = x * W^T + b); matmul runs one GEMM per element
// of the broadcast batch shape, or a single GEMM when b has no batch and a
// is not transposed (its batch then folds into the rows).
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "Gemm.h"
#include "MatMulBatches.h"
#include "ParallelFor.h"

#include <algorithm>

namespace memopt::runtime::cpu {

namespace {

template <typename T> void linearImpl(const KernelCall &call) {
  const TensorRef &x = call.in(0), &w = call.in(1), &y = call.out(0);
  int64_t inFeatures = w.dim(1), outFeatures = w.dim(0);
  int64_t rows = x.numElements / inFeatures;
  T *out = y.as<T>();
  T beta = T(0);
  if (call.inputs.size() == 3) {
    const T *bias = call.in(2).as<const T>();
    for (int64_t r = 0; r < rows; ++r)
      std::copy(bias, bias + outFeatures, out + r * outFeatures);
    beta = T(1);
  }
  gemm<T>(false, true, rows, outFeatures, inFeatures, T(1), x.as<const T>(),
          inFeatures, w.as<const T>(), inFeatures, beta, out, outFeatures);
}

template <typename T> void matmulImpl(const KernelCall &call) {
  const TensorRef &a = call.in(0), &b = call.in(1), &y = call.out(0);
  const MatMulAttrs &attrs = call.step.get<MatMulAttrs>();
  size_t ra = a.rank(), rb = b.rank(), ry = y.rank();
  int64_t m = y.dim(ry - 2), n = y.dim(ry - 1);
  int64_t k = attrs.transposeA ? a.dim(ra - 2) : a.dim(ra - 1);
  int64_t lda = a.dim(ra - 1), ldb = b.dim(rb - 1);
  int64_t matA = a.dim(ra - 2) * a.dim(ra - 1);
  int64_t matB = b.dim(rb - 2) * b.dim(rb - 1);
  int64_t batchA = a.numElements / matA, batchB = b.numElements / matB;
  int64_t batch = y.numElements / (m * n);
  const T *pa = a.as<const T>(), *pb = b.as<const T>();
  T *py = y.as<T>();

  if (batchB == 1 && !attrs.transposeA) {
    // Rows of every batch of a are contiguous: one (batch*M) x K GEMM.
    gemm<T>(false, attrs.transposeB, batchA * m, n, k, T(1), pa, lda, pb, ldb,
            T(0), py, n);
    return;
  }

  // The batches split over the kernel threads, a single-threaded product
  // each (ParallelFor.h).
  const MatMulBatches batches(a, b, y);
  parallelRange(batch, m * n * k, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      int64_t offA, offB;
      batches.offsetsOf(i, offA, offB);
      gemm<T>(attrs.transposeA, attrs.transposeB, m, n, k, T(1), pa + offA, lda,
              pb + offB, ldb, T(0), py + i * m * n, n);
    }
  });
}

} // namespace

void linear(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype,
                [&](auto tag) { linearImpl<decltype(tag)>(call); });
}

void matmul(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype,
                [&](auto tag) { matmulImpl<decltype(tag)>(call); });
}

} // namespace memopt::runtime::cpu
