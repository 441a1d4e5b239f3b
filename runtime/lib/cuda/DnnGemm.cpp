//===- DnnGemm.cpp - linear and matmul on cuBLAS --------------------------===//
//
// linear and matmul are row-major GEMMs on cuBLAS (cublasGemmEx, f32
// compute, or f64 for f64 tensors): C = A * B row-major is C^T = B^T * A^T
// column-major, so the operands are passed swapped. matmul mirrors
// cpu/Linear.cpp: one GEMM when b has no batch and a is not transposed, one
// strided-batched GEMM when every broadcast batch advances each operand by a
// constant stride, else one GEMM per batch. Biases (linear, conv2d) are
// broadcast into the output first and accumulated into with beta = 1, as on
// the CPU (Bias.h).
//
//===----------------------------------------------------------------------===//

#include "Bias.h"
#include "DnnCommon.h"
#include "MatMulBatches.h"

namespace memopt::runtime::cuda {

namespace {

/// The operand layout of a row-major C (m x n) = op(A) (m x k) * op(B)
/// (k x n), with leading dimensions (elements per stored row) lda, ldb and
/// n for C.
struct Gemm {
  DType dtype;
  bool transA, transB;
  int64_t m, n, k, lda, ldb;

  /// Row-major op(A) is column-major op(A)^T: the swapped call below
  /// computes C^T = op(B)^T * op(A)^T, each operand transposed iff the
  /// row-major one is.
  cublasOperation_t opA() const { return transA ? CUBLAS_OP_T : CUBLAS_OP_N; }
  cublasOperation_t opB() const { return transB ? CUBLAS_OP_T : CUBLAS_OP_N; }
};

void gemm(const KernelCall &call, const Gemm &g, const void *a, const void *b,
          const Scale &beta, void *c) {
  const cudaDataType_t t = cudaType(g.dtype);
  check(cublasGemmEx(call.cuda.cublas, g.opB(), g.opA(), toInt(g.n, "GEMM N"),
                     toInt(g.m, "GEMM M"), toInt(g.k, "GEMM K"),
                     kOne.forType(g.dtype), b, t, toInt(g.ldb, "GEMM ldb"), a,
                     t, toInt(g.lda, "GEMM lda"), beta.forType(g.dtype), c, t,
                     toInt(g.n, "GEMM ldc"), gemmCompute(g.dtype, call.cuda),
                     CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx");
}

void gemmStridedBatched(const KernelCall &call, const Gemm &g, const void *a,
                        int64_t strideA, const void *b, int64_t strideB,
                        void *c, int64_t batch) {
  const cudaDataType_t t = cudaType(g.dtype);
  check(cublasGemmStridedBatchedEx(
            call.cuda.cublas, g.opB(), g.opA(), toInt(g.n, "GEMM N"),
            toInt(g.m, "GEMM M"), toInt(g.k, "GEMM K"), kOne.forType(g.dtype),
            b, t, toInt(g.ldb, "GEMM ldb"), strideB, a, t,
            toInt(g.lda, "GEMM lda"), strideA, kZero.forType(g.dtype), c, t,
            toInt(g.n, "GEMM ldc"), g.m * g.n, toInt(batch, "GEMM batch"),
            gemmCompute(g.dtype, call.cuda), CUBLAS_GEMM_DEFAULT),
        "cublasGemmStridedBatchedEx");
}

/// Whether the odometer over `shape` moves an operand with per-dimension
/// strides `strides` by a constant `step` per batch (0 for a broadcast
/// operand), as cublasGemmStridedBatchedEx needs.
bool uniformStride(const std::vector<int64_t> &shape,
                   const std::vector<int64_t> &strides, int64_t &step) {
  step = 0;
  bool found = false;
  int64_t inner = 1; // Batches per index of dimension d.
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] != 1) {
      if (!found) {
        step = strides[d];
        found = true;
      } else if (strides[d] != step * inner) {
        return false;
      }
    }
    inner *= shape[d];
  }
  return true;
}

} // namespace

void linear(const KernelCall &call) {
  // (input ... x I, weight O x I[, bias O]) -> ... x O: y = x * W^T + b.
  const TensorRef &x = call.in(0), &w = call.in(1), &y = call.out(0);
  const int64_t inFeatures = w.dim(1), outFeatures = w.dim(0);
  if (y.numElements == 0)
    return;
  const int64_t rows = y.numElements / outFeatures;
  const bool hasBias = call.inputs.size() == 3;
  if (hasBias)
    fillWithBias(call, y, call.in(2), 1);
  if (inFeatures == 0) {
    // An empty product: y is the bias, or zero.
    if (!hasBias)
      check(cudaMemsetAsync(y.data, 0, y.bytes(), call.cuda.stream),
            "cudaMemsetAsync");
    return;
  }
  Gemm g{y.dtype,     false,      true,       rows,
         outFeatures, inFeatures, inFeatures, inFeatures};
  gemm(call, g, x.data, w.data, hasBias ? kOne : kZero, y.data);
}

void matmul(const KernelCall &call) {
  const TensorRef &a = call.in(0), &b = call.in(1), &y = call.out(0);
  const MatMulAttrs &attrs = call.step.get<MatMulAttrs>();
  const size_t ra = a.rank(), rb = b.rank(), ry = y.rank();
  const int64_t m = y.dim(ry - 2), n = y.dim(ry - 1);
  const int64_t k = attrs.transposeA ? a.dim(ra - 2) : a.dim(ra - 1);
  const int64_t lda = a.dim(ra - 1), ldb = b.dim(rb - 1);
  if (y.numElements == 0)
    return;
  if (k == 0) {
    check(cudaMemsetAsync(y.data, 0, y.bytes(), call.cuda.stream),
          "cudaMemsetAsync");
    return;
  }
  const int64_t matA = a.dim(ra - 2) * a.dim(ra - 1);
  const int64_t matB = b.dim(rb - 2) * b.dim(rb - 1);
  const int64_t batchA = a.numElements / matA, batchB = b.numElements / matB;
  const int64_t batch = y.numElements / (m * n);
  const size_t elem = dtypeSize(y.dtype);
  const char *pa = static_cast<const char *>(a.data);
  const char *pb = static_cast<const char *>(b.data);
  char *py = static_cast<char *>(y.data);

  if (batchB == 1 && !attrs.transposeA) {
    // Rows of every batch of a are contiguous: one (batch*M) x K GEMM.
    Gemm g{y.dtype, false, attrs.transposeB, batchA * m, n, k, lda, ldb};
    gemm(call, g, pa, pb, kZero, py);
    return;
  }

  const MatMulBatches batches(a, b, y);
  const Gemm g{y.dtype, attrs.transposeA, attrs.transposeB, m, n, k, lda, ldb};
  int64_t stepA = 0, stepB = 0;
  if (uniformStride(batches.shape, batches.strideA, stepA) &&
      uniformStride(batches.shape, batches.strideB, stepB)) {
    gemmStridedBatched(call, g, pa, stepA, pb, stepB, py, batch);
    return;
  }
  batches.forEach(batch, [&](int64_t i, int64_t offA, int64_t offB) {
    gemm(call, g, pa + offA * elem, pb + offB * elem, kZero,
         py + i * m * n * elem);
  });
}

} // namespace memopt::runtime::cuda
