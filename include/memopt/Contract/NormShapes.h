//===- NormShapes.h - the shape rules of normalisation ----------*- C++ -*-===//
//
// Part of the compiler-runtime contract (ShapeRule.h), MLIR-free: the
// shape rules of memopt.batch_norm (training mode), batch_norm_inference,
// InPlace-ABN's batch_norm_act and layer_norm, which their backward ops
// reuse. Every output has the shape of x (y, grad_x) or of gamma (running
// statistics, saved_invstd, grad_gamma, grad_beta), so a rule only says
// whether the operands fit. That beta and the running statistics have
// gamma's type, and the ranges of epsilon and momentum, are attribute and
// type checks each side makes.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_CONTRACT_NORMSHAPES_H
#define MEMOPT_CONTRACT_NORMSHAPES_H

#include "memopt/Contract/ShapeRule.h"

namespace memopt::shapes {

/// Batch norm over the channels of `x` (NxCx..., of rank ≥ 2, as each side
/// checks): the per-channel operands, of `gamma`'s shape (rank 1, as each
/// side checks), hold C elements. With `batchStatistics` (training mode,
/// as PyTorch) the batch variance needs more than one value per channel.
/// `xName` and `gammaName` name the operands in messages.
inline ShapeProblem
batchNormShape(const Dims &x, const Dims &gamma, bool batchStatistics,
               const char *xName = "x",
               const char *gammaName = "per-channel operands") {
  int64_t c = x[1];
  if (gamma[0] != c)
    return problem("expected ", gammaName, " of ", c, " elements (", xName,
                   "'s dimension 1), got ", gamma[0]);
  if (batchStatistics) {
    bool single = true;
    for (size_t d = 0; d < x.size(); ++d)
      if (d != 1 && x[d] != 1)
        single = false;
    if (single)
      return problem("expected more than 1 value per channel for the batch "
                     "statistics, got ",
                     xName, " of shape ", formatDims(x));
  }
  return {};
}

/// Layer norm over the trailing dimensions of `x` that `gamma` (and beta)
/// spans: gamma's shape is a non-empty suffix of x's.
inline ShapeProblem layerNormShape(const Dims &x, const Dims &gamma) {
  bool suffix = !gamma.empty() && gamma.size() <= x.size();
  for (size_t i = 0; suffix && i < gamma.size(); ++i)
    suffix = x[x.size() - gamma.size() + i] == gamma[i];
  if (!suffix)
    return problem("expected gamma's shape (", formatDims(gamma),
                   ") to be a non-empty suffix of x's shape (", formatDims(x),
                   ")");
  return {};
}

} // namespace memopt::shapes

#endif // MEMOPT_CONTRACT_NORMSHAPES_H
