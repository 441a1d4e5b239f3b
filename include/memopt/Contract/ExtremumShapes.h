//===- ExtremumShapes.h - the shape rules of max/min reductions -*- C++ -*-===//
//
// Part of the compiler-runtime contract (ShapeRule.h), MLIR-free: the shape
// rules of memopt.reduce_max and reduce_min (the last dimension reduced to
// 1) and of their backward op, reduce_extremum_backward. maximum, minimum
// and maximum_weight broadcast as ElementwiseShapes.h's binaryShape.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_CONTRACT_EXTREMUMSHAPES_H
#define MEMOPT_CONTRACT_EXTREMUMSHAPES_H

#include "memopt/Contract/ShapeRule.h"

namespace memopt::shapes {

/// reduce_max, reduce_min: `x` of rank ≥ 1 with a non-empty last dimension;
/// `out` is its shape with the last dimension 1.
inline ShapeProblem reduceExtremumShape(const Dims &x, Dims &out) {
  if (x.empty())
    return problem("expected x of rank at least 1, got a scalar");
  if (x.back() < 1)
    return problem("expected a non-empty last dimension, got ", formatDims(x));
  out = x;
  out.back() = 1;
  return {};
}

/// reduce_extremum_backward(grad, x, extremum): `grad` and `extremum` are
/// the reduction of `x`'s shape; the result is `x`'s.
inline ShapeProblem reduceExtremumBackwardShape(const Dims &grad, const Dims &x,
                                                const Dims &extremum) {
  Dims reduced;
  if (ShapeProblem p = reduceExtremumShape(x, reduced); !p.empty())
    return p;
  if (grad != reduced || extremum != reduced)
    return problem("expected grad and extremum of shape ", formatDims(reduced),
                   " (x's ", formatDims(x), " reduced), got ", formatDims(grad),
                   " and ", formatDims(extremum));
  return {};
}

} // namespace memopt::shapes

#endif // MEMOPT_CONTRACT_EXTREMUMSHAPES_H
