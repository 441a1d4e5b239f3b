//===- Indexing.h - strided iteration for the CPU kernels -------*- C++ -*-===//
//
// Broadcasting, transposition and slicing all walk an output shape in
// row-major order while each operand advances by its own strides. This
// header holds that walk once: an odometer over every dimension but the
// last, with the last dimension left to the caller's inner loop (where the
// contiguous fast paths live).
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_LIB_CPU_INDEXING_H
#define MEMOPT_RUNTIME_LIB_CPU_INDEXING_H

#include "memopt/runtime/Shape.h"

#include <array>
#include <cstddef>
#include <vector>

namespace memopt::runtime::cpu {

/// The element strides of `shape` aligned to the trailing dimensions of a
/// broadcast result of rank `rank`: 0 where `shape` has size 1 or no
/// dimension at all, so the same element is reused.
inline Shape broadcastStrides(const Shape &shape, size_t rank) {
  Shape strides(rank, 0);
  Shape own = contiguousStrides(shape);
  for (size_t i = 0; i < shape.size(); ++i) {
    size_t d = rank - shape.size() + i;
    strides[d] = shape[i] == 1 ? 0 : own[i];
  }
  return strides;
}

/// Calls `f(offsets)` once per row of `shape` (every index of all dimensions
/// but the last, in row-major order), where offsets[k] is the sum over
/// those dimensions of index[d] * strides[k][d]. Shapes of rank 0 or 1 have
/// one row at offsets 0.
template <size_t N, typename F>
void forEachRow(const Shape &shape, const std::array<Shape, N> &strides,
                F &&f) {
  size_t outer = shape.empty() ? 0 : shape.size() - 1;
  int64_t rows = 1;
  for (size_t d = 0; d < outer; ++d)
    rows *= shape[d];
  std::vector<int64_t> index(outer, 0);
  std::array<int64_t, N> offsets{};
  for (int64_t r = 0; r < rows; ++r) {
    f(offsets);
    for (size_t d = outer; d-- > 0;) {
      for (size_t k = 0; k < N; ++k)
        offsets[k] += strides[k][d];
      if (++index[d] < shape[d])
        break;
      for (size_t k = 0; k < N; ++k)
        offsets[k] -= strides[k][d] * shape[d];
      index[d] = 0;
    }
  }
}

} // namespace memopt::runtime::cpu

#endif // MEMOPT_RUNTIME_LIB_CPU_INDEXING_H
