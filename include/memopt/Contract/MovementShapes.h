//===- MovementShapes.h - the shape rules of data movement ------*- C++ -*-===//
//
// Part of the compiler-runtime contract (ShapeRule.h), MLIR-free: the shape
// rules of the ops that move data without arithmetic (memopt.reshape,
// transpose, slice, concat, upsample_nearest2d and embedding), which the
// backward ops of slice, upsampling and embedding reuse (their gradient has
// the forward input's shape, and the forward output's must match their
// grad).
//
// Each side reads the attributes (their presence, their length and lower
// bounds) and checks the ranks before it calls a rule; a rule may assume
// what those checks established, as its comment says.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_CONTRACT_MOVEMENTSHAPES_H
#define MEMOPT_CONTRACT_MOVEMENTSHAPES_H

#include "memopt/Contract/ShapeRule.h"

#include <cstddef>
#include <string>

namespace memopt::shapes {

/// reshape's result shape is written, not inferred: `in` and `out` must
/// hold the same number of elements.
inline ShapeProblem reshapeShape(const Dims &in, const Dims &out) {
  std::optional<int64_t> inCount = 1, outCount = 1;
  for (int64_t d : in)
    if (inCount)
      inCount = checkedMul(*inCount, d);
  for (int64_t d : out)
    if (outCount)
      outCount = checkedMul(*outCount, d);
  if (!inCount || !outCount)
    return problem("expected fewer than 2^63 elements, got ", formatDims(in),
                   " -> ", formatDims(out));
  if (*inCount != *outCount)
    return problem("cannot reshape ", formatDims(in), " (", *inCount,
                   " elements) to ", formatDims(out), " (", *outCount,
                   " elements)");
  return {};
}

/// Dimension d of the result is dimension `permutation[d]` of `x`;
/// `permutation` must be a permutation of [0, rank).
inline ShapeProblem transposeShape(const Dims &x, const Dims &permutation,
                                   Dims &out) {
  int64_t rank = static_cast<int64_t>(x.size());
  std::vector<bool> seen(x.size(), false);
  bool valid = permutation.size() == x.size();
  for (size_t i = 0; valid && i < permutation.size(); ++i) {
    int64_t p = permutation[i];
    valid = p >= 0 && p < rank && !seen[p];
    if (valid)
      seen[p] = true;
  }
  if (!valid)
    return problem("expected 'permutation' to be a permutation of [0, ", rank,
                   "), got ", permutation);
  out.clear();
  for (int64_t p : permutation)
    out.push_back(x[p]);
  return {};
}

/// A strided slice of `x`: `offsets`, `sizes` and `strides` hold one value
/// per dimension of `x` (offsets ≥ 0, sizes and strides ≥ 1, as each side
/// checks when it reads them), the result is `sizes`, and the last index
/// read, offset + (size - 1) * stride, must lie in the dimension.
/// `dimension` names the dimensions of `x` in messages (the backward op's
/// result holds the forward input's shape).
inline ShapeProblem sliceShape(const Dims &x, const Dims &offsets,
                               const Dims &sizes, const Dims &strides,
                               Dims &out,
                               const char *dimension = "the dimension") {
  for (size_t d = 0; d < x.size(); ++d) {
    std::optional<int64_t> last = checkedMul(sizes[d] - 1, strides[d]);
    if (last)
      last = checkedAdd(offsets[d], *last);
    if (!last)
      return problem("slice of dimension ", d,
                     " reaches an index beyond 2^63 but ", dimension,
                     " has size ", x[d]);
    if (*last >= x[d])
      return problem("slice of dimension ", d, " reaches index ", *last,
                     " but ", dimension, " has size ", x[d]);
  }
  out = sizes;
  return {};
}

/// Joins `inputs` (at least one) along `axis`, already normalised into
/// [0, rank of input #0): every input has input #0's rank and sizes but
/// along `axis`, where the result's size is their sum.
inline ShapeProblem concatShape(const std::vector<Dims> &inputs, int64_t axis,
                                Dims &out) {
  const Dims &first = inputs[0];
  out = first;
  for (size_t i = 1; i < inputs.size(); ++i) {
    const Dims &t = inputs[i];
    bool compatible = t.size() == first.size();
    for (size_t d = 0; compatible && d < first.size(); ++d)
      compatible = static_cast<int64_t>(d) == axis || t[d] == out[d];
    if (!compatible)
      return problem("expected input #", i, " to match input #0 (",
                     formatDims(first), ") in every dimension but ", axis,
                     ", got ", formatDims(t));
    std::optional<int64_t> joined = checkedAdd(out[axis], t[axis]);
    if (!joined)
      return problem("concatenated dimension ", axis,
                     " overflows 64-bit sizes");
    out[axis] = *joined;
  }
  return {};
}

/// Nearest upsampling of an NxCxHxW `x` (rank 4) by `scale` ≥ 1: N x C x
/// (H * scale) x (W * scale).
inline ShapeProblem upsampleNearest2dShape(const Dims &x, int64_t scale,
                                           Dims &out) {
  if (scale < 1)
    return problem("expected 'scale' ≥ 1, got ", scale);
  Dims result = x;
  for (size_t d = 2; d < 4; ++d) {
    std::optional<int64_t> size = checkedMul(x[d], scale);
    if (!size)
      return problem("upsampling ", x[2], "x", x[3], " by ", scale,
                     " overflows 64-bit sizes");
    result[d] = *size;
  }
  out = result;
  return {};
}

/// Looking up `ids` (any shape) in a VxD `table` (rank 2) gives the ids'
/// shape followed by D.
inline Dims embeddingShape(const Dims &table, const Dims &ids) {
  Dims out = ids;
  out.push_back(table[1]);
  return out;
}

} // namespace memopt::shapes

#endif // MEMOPT_CONTRACT_MOVEMENTSHAPES_H
