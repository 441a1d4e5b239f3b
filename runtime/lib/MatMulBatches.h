//===- MatMulBatches.h - the batches of a broadcasting matmul ---*- C++ -*-===//
//
// Internal to the backends: where each batch of a matmul's operands starts
// under NumPy broadcasting. The output's batch index is decomposed over its
// batch dimensions; a dimension of size 1 (or absent) in an operand
// contributes nothing to that operand's offset. The CPU loops over the
// batches with it; the CUDA backend also hands uniform strides to a
// strided-batched GEMM.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_LIB_MATMULBATCHES_H
#define MEMOPT_RUNTIME_LIB_MATMULBATCHES_H

#include "memopt/runtime/Backend.h"

#include <cstdint>
#include <vector>

namespace memopt::runtime {

struct MatMulBatches {
  /// The output's batch dimensions and, per dimension, each operand's
  /// element stride (0 where it broadcasts).
  std::vector<int64_t> shape, strideA, strideB;

  /// The batches of y = a · b (ranks ≥ 2, batch dimensions broadcast).
  MatMulBatches(const TensorRef &a, const TensorRef &b, const TensorRef &y) {
    const size_t ra = a.rank(), rb = b.rank();
    const size_t batchRank = y.rank() - 2;
    shape.assign(y.shape->begin(), y.shape->end() - 2);
    strideA.assign(batchRank, 0);
    strideB.assign(batchRank, 0);
    int64_t sa = a.dim(ra - 2) * a.dim(ra - 1);
    int64_t sb = b.dim(rb - 2) * b.dim(rb - 1);
    for (size_t i = 0; i < batchRank; ++i) {
      const size_t d = batchRank - 1 - i; // Output batch dim, from the back.
      if (i < ra - 2) {
        const int64_t size = a.dim(ra - 3 - i);
        strideA[d] = size == 1 ? 0 : sa;
        sa *= size;
      }
      if (i < rb - 2) {
        const int64_t size = b.dim(rb - 3 - i);
        strideB[d] = size == 1 ? 0 : sb;
        sb *= size;
      }
    }
  }

  /// Calls `f(i, offsetA, offsetB)` for every batch i in order, with the
  /// element offsets of its a and b matrices.
  template <typename F> void forEach(int64_t count, F &&f) const {
    std::vector<int64_t> index(shape.size(), 0);
    int64_t offA = 0, offB = 0;
    for (int64_t i = 0; i < count; ++i) {
      f(i, offA, offB);
      // Advance the batch multi-index (odometer) and the operand offsets.
      for (size_t d = shape.size(); d-- > 0;) {
        offA += strideA[d];
        offB += strideB[d];
        if (++index[d] < shape[d])
          break;
        offA -= strideA[d] * shape[d];
        offB -= strideB[d] * shape[d];
        index[d] = 0;
      }
    }
  }

  /// The element offsets of batch i's a and b matrices (what forEach passes
  /// for i), for callers that visit the batches out of order.
  void offsetsOf(int64_t i, int64_t &offA, int64_t &offB) const {
    offA = offB = 0;
    for (size_t d = shape.size(); d-- > 0;) {
      const int64_t at = i % shape[d];
      i /= shape[d];
      offA += at * strideA[d];
      offB += at * strideB[d];
    }
  }
};

} // namespace memopt::runtime

#endif // MEMOPT_RUNTIME_LIB_MATMULBATCHES_H
