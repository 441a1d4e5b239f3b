//===- SoftmaxShapes.h - the shape rules of softmax and dropout -*- C++ -*-===//
//
// Part of the compiler-runtime contract (ShapeRule.h), MLIR-free: the
// shape rule of memopt.softmax and softmax_backward (the result has x's
// shape; the axis must be one of x's, and a causal softmax runs over the
// last axis of square trailing dimensions). memopt.dropout has no shape
// arithmetic (the result has x's shape); its 'p' in [0, 1) is an attribute
// check each side makes.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_CONTRACT_SOFTMAXSHAPES_H
#define MEMOPT_CONTRACT_SOFTMAXSHAPES_H

#include "memopt/Contract/ShapeRule.h"

namespace memopt::shapes {

/// softmax over `axis` of `x` (of rank ≥ 1, as each side checks), the
/// result of x's shape; `normalisedAxis` gets the axis in [0, rank). A
/// `causal` softmax (masking j > i) runs over the last axis of ...xTxT.
/// softmax_backward's rule is the same, never causal.
inline ShapeProblem softmaxShape(const Dims &x, int64_t axis, bool causal,
                                 int64_t &normalisedAxis) {
  int64_t rank = static_cast<int64_t>(x.size());
  if (ShapeProblem p = normaliseAxis(axis, rank, "axis", normalisedAxis);
      !p.empty())
    return p;
  if (causal &&
      (rank < 2 || normalisedAxis != rank - 1 || x[rank - 1] != x[rank - 2]))
    return problem("'causal' needs the softmax over the last axis of square "
                   "trailing dimensions (...xTxT), got shape ",
                   formatDims(x), " with axis ", axis);
  return {};
}

} // namespace memopt::shapes

#endif // MEMOPT_CONTRACT_SOFTMAXSHAPES_H
