//===- LossShapes.h - the shape rules of the losses -------------*- C++ -*-===//
//
// Part of the compiler-runtime contract (ShapeRule.h), MLIR-free: the
// shape rules of memopt.cross_entropy and memopt.mse_loss, each a 0-d
// loss, which their backward ops reuse (their gradient has the logits' or
// the prediction's shape).
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_CONTRACT_LOSSSHAPES_H
#define MEMOPT_CONTRACT_LOSSSHAPES_H

#include "memopt/Contract/ShapeRule.h"

namespace memopt::shapes {

/// cross_entropy: NxC `logits` and N `labels` (ranks 2 and 1, as each side
/// checks) give a 0-d loss in `out`.
inline ShapeProblem crossEntropyShape(const Dims &logits, const Dims &labels,
                                      Dims &out) {
  if (labels[0] != logits[0])
    return problem("expected ", logits[0],
                   " labels (one per row of logits), got ", labels[0]);
  out = {};
  return {};
}

/// mse_loss: a `target` of the `prediction`'s shape gives a 0-d loss in
/// `out`.
inline ShapeProblem mseLossShape(const Dims &prediction, const Dims &target,
                                 Dims &out) {
  if (target != prediction)
    return problem("expected target shape ", formatDims(prediction),
                   " (as prediction), got ", formatDims(target));
  out = {};
  return {};
}

} // namespace memopt::shapes

#endif // MEMOPT_CONTRACT_LOSSSHAPES_H
