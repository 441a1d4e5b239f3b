//===- PoolShapes.h - the shape rules of pooling ----------------*- C++ -*-===//
//
// Part of the compiler-runtime contract (ShapeRule.h), MLIR-free: the
// shape rules of memopt.max_pool2d, avg_pool2d and global_avg_pool2d, which
// their backward ops reuse (their gradient has the forward input's shape,
// and the forward output's must match their grad_output).
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_CONTRACT_POOLSHAPES_H
#define MEMOPT_CONTRACT_POOLSHAPES_H

#include "memopt/Contract/ShapeRule.h"

namespace memopt::shapes {

/// max_pool2d's and avg_pool2d's attributes (the dialect has no default
/// kernel; strides default to the kernel in the forward ops).
struct Pool2DParams {
  std::array<int64_t, 2> kernelSize{1, 1};
  std::array<int64_t, 2> strides{1, 1};
  std::array<int64_t, 2> padding{0, 0};
};

/// PyTorch's pooling without dilation or ceil mode: an NxCxHxW `input` (of
/// rank 4, kernel and strides ≥ 1, padding ≥ 0, as each side checks when it
/// reads them) gives N x C x ((H + 2 ph - kh) / sh + 1) x (likewise W) in
/// `out`. As in PyTorch, padding is at most half the kernel (every window
/// holds a real element; this also keeps the sum from overflowing), and
/// the padded input must hold the window. `inputName` names the operand in
/// messages.
inline ShapeProblem pool2dShape(const Dims &input, const Pool2DParams &p,
                                Dims &out, const char *inputName = "input") {
  out = input;
  for (int d = 0; d < 2; ++d) {
    if (p.padding[d] > p.kernelSize[d] / 2)
      return problem("expected 'padding' at most half of 'kernel_size', got "
                     "padding ",
                     p.padding[d], " for kernel ", p.kernelSize[d]);
    int64_t extent = input[2 + d] - p.kernelSize[d] + 2 * p.padding[d];
    if (extent < 0)
      return problem(inputName, " ", input[2], "x", input[3], " with padding ",
                     p.padding, " is smaller than the window ", p.kernelSize[0],
                     "x", p.kernelSize[1]);
    out[2 + d] = extent / p.strides[d] + 1;
  }
  return {};
}

/// global_avg_pool2d: an NxCxHxW `input` (of rank 4, as each side checks)
/// gives NxC.
inline Dims globalAvgPool2dShape(const Dims &input) {
  return {input[0], input[1]};
}

} // namespace memopt::shapes

#endif // MEMOPT_CONTRACT_POOLSHAPES_H
