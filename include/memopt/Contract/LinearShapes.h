//===- LinearShapes.h - the shape rules of linear and matmul ----*- C++ -*-===//
//
// Part of the compiler-runtime contract (ShapeRule.h), MLIR-free: the
// shape rules of memopt.linear (x * W^T + b over the last dimension) and
// memopt.matmul (batched, with broadcast batch dimensions and optional
// transposes).
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_CONTRACT_LINEARSHAPES_H
#define MEMOPT_CONTRACT_LINEARSHAPES_H

#include "memopt/Contract/ShapeRule.h"

#include <utility>

namespace memopt::shapes {

/// linear: an ...xI `input` (rank ≥ 1) and an OxI `weight` (rank 2, as each
/// side checks), with an optional bias of O elements (`biasElements`), give
/// ...xO in `out`.
inline ShapeProblem linearShape(const Dims &input, const Dims &weight,
                                std::optional<int64_t> biasElements,
                                Dims &out) {
  int64_t inFeatures = input.back(), outFeatures = weight[0];
  if (weight[1] != inFeatures)
    return problem("expected weight shape ", outFeatures, "x", inFeatures,
                   " for ", inFeatures, " input features, got ",
                   formatDims(weight));
  if (biasElements && *biasElements != outFeatures)
    return problem("expected bias of ", outFeatures,
                   " elements (output features), got ", *biasElements);
  out = input;
  out.back() = outFeatures;
  return {};
}

/// matmul: `a` (...xMxK, or ...xKxM when `transposeA`) and `b` (...xKxN, or
/// ...xNxK when `transposeB`), both of rank ≥ 2 (as each side checks), give
/// the broadcast batch dimensions followed by MxN in `out`.
inline ShapeProblem matmulShape(const Dims &a, const Dims &b, bool transposeA,
                                bool transposeB, Dims &out) {
  size_t ra = a.size(), rb = b.size();
  int64_t m = a[ra - 2], ka = a[ra - 1];
  if (transposeA)
    std::swap(m, ka);
  int64_t kb = b[rb - 2], n = b[rb - 1];
  if (transposeB)
    std::swap(kb, n);
  if (ka != kb)
    return problem("expected contracted dimensions to agree, got ", ka, " (a",
                   transposeA ? ", transposed" : "", ") and ", kb, " (b",
                   transposeB ? ", transposed" : "", ")");
  Dims batchA(a.begin(), a.end() - 2), batchB(b.begin(), b.end() - 2);
  std::optional<Dims> batch = broadcastDims(batchA, batchB);
  if (!batch)
    return problem("batch dimensions ", formatDims(batchA), " and ",
                   formatDims(batchB), " do not broadcast");
  out = *batch;
  out.push_back(m);
  out.push_back(n);
  return {};
}

} // namespace memopt::shapes

#endif // MEMOPT_CONTRACT_LINEARSHAPES_H
