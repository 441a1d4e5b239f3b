//===- ElementwiseShapes.h - the shape rules of broadcasting ----*- C++ -*-===//
//
// Part of the compiler-runtime contract (ShapeRule.h), MLIR-free: the
// shape rules of the broadcasting element-wise ops (memopt.add, sub, mul,
// div) and of memopt.sum_to, the reduction that undoes a broadcast in the
// backward pass. The activations (relu, gelu, sigmoid, tanh, leaky_relu,
// elu) and their backward ops have no arithmetic: every type matches.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_CONTRACT_ELEMENTWISESHAPES_H
#define MEMOPT_CONTRACT_ELEMENTWISESHAPES_H

#include "memopt/Contract/ShapeRule.h"

namespace memopt::shapes {

/// add, sub, mul, div: NumPy broadcasting of `lhs` and `rhs`, in `out`.
inline ShapeProblem binaryShape(const Dims &lhs, const Dims &rhs, Dims &out) {
  std::optional<Dims> shape = broadcastDims(lhs, rhs);
  if (!shape)
    return problem("operand shapes ", formatDims(lhs), " and ", formatDims(rhs),
                   " do not broadcast");
  out = *shape;
  return {};
}

/// sum_to: the `result` shape must broadcast to the `operand`'s.
inline ShapeProblem sumToShape(const Dims &operand, const Dims &result) {
  std::optional<Dims> shape = broadcastDims(result, operand);
  if (!shape || *shape != operand)
    return problem("result shape ", formatDims(result),
                   " does not broadcast to the operand's ",
                   formatDims(operand));
  return {};
}

} // namespace memopt::shapes

#endif // MEMOPT_CONTRACT_ELEMENTWISESHAPES_H
