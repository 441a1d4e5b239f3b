//===- ConvShapes.h - the shape rule of conv2d ------------------*- C++ -*-===//
//
// Part of the compiler-runtime contract (ShapeRule.h), MLIR-free: the
// shape rule of memopt.conv2d, which its backward ops reuse (their gradient
// has the forward input's or weight's shape, and the forward output's must
// match their grad_output).
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_CONTRACT_CONVSHAPES_H
#define MEMOPT_CONTRACT_CONVSHAPES_H

#include "memopt/Contract/ShapeRule.h"

namespace memopt::shapes {

/// conv2d's attributes, with the dialect's defaults.
struct Conv2DParams {
  std::array<int64_t, 2> strides{1, 1};
  std::array<int64_t, 2> padding{0, 0};
  std::array<int64_t, 2> dilations{1, 1};
  int64_t groups = 1;
};

/// PyTorch's convolution: an NxCxHxW `input` and a Kx(C/groups)xRxS
/// `weight` (both of rank 4, strides and dilations ≥ 1, padding ≥ 0, as
/// each side checks when it reads them), with an optional bias of K
/// elements (`biasElements`), give N x K x ((H + 2 ph - (R - 1) dh - 1) /
/// sh + 1) x (likewise W) in `out`. The padded input must hold the dilated
/// kernel. `inputName` and `weightName` name the operands in messages.
inline ShapeProblem conv2dShape(const Dims &input, const Dims &weight,
                                std::optional<int64_t> biasElements,
                                const Conv2DParams &p, Dims &out,
                                const char *inputName = "input",
                                const char *weightName = "weight") {
  if (p.groups < 1)
    return problem("expected 'groups' ≥ 1, got ", p.groups);
  int64_t n = input[0], c = input[1], k = weight[0];
  if (c % p.groups != 0 || k % p.groups != 0)
    return problem("expected input channels (", c, ") and output channels (", k,
                   ") divisible by groups (", p.groups, ")");
  if (weight[1] != c / p.groups)
    return problem("expected ", weightName, " shape ", k, "x", c / p.groups,
                   "x", weight[2], "x", weight[3], " for ", c,
                   " input channels and ", p.groups, " group(s), got ",
                   formatDims(weight));
  if (biasElements && *biasElements != k)
    return problem("expected bias of ", k, " elements (output channels), got ",
                   *biasElements);
  int64_t padded[2], window[2];
  for (int d = 0; d < 2; ++d) {
    std::optional<int64_t> pad = checkedMul(2, p.padding[d]);
    if (pad)
      pad = checkedAdd(input[2 + d], *pad);
    std::optional<int64_t> span = checkedMul(p.dilations[d], weight[2 + d] - 1);
    if (span)
      span = checkedAdd(*span, 1);
    if (!pad)
      return problem("'padding' ", p.padding, " overflows 64-bit sizes");
    if (!span)
      return problem("'dilations' ", p.dilations, " overflow 64-bit sizes");
    padded[d] = *pad;
    window[d] = *span;
  }
  out = {n, k, 0, 0};
  for (int d = 0; d < 2; ++d) {
    std::optional<int64_t> extent = checkedSub(padded[d], window[d]);
    if (!extent)
      return problem("'dilations' ", p.dilations, " overflow 64-bit sizes");
    if (*extent < 0)
      return problem(inputName, " ", input[2], "x", input[3], " with padding ",
                     p.padding, " is smaller than the dilated kernel ",
                     window[0], "x", window[1]);
    out[2 + d] = *extent / p.strides[d] + 1;
  }
  return {};
}

} // namespace memopt::shapes

#endif // MEMOPT_CONTRACT_CONVSHAPES_H
