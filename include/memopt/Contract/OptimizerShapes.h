//===- OptimizerShapes.h - shapes of optimizer state ------------*- C++ -*-===//
//
// Part of the compiler-runtime contract (ShapeRule.h), MLIR-free: the shapes
// of the optimizer state that is not simply the parameter's shape, written
// once for --memopt-autodiff (which creates the state), the verifiers and
// the runtime's plan rules:
//  * memopt.adam8bit_update: both moments as 8-bit codes of the
//    parameter's shape and one f32 absolute maximum per block of
//    `kQuantizationBlock` consecutive elements (bitsandbytes' block-wise
//    8-bit optimizers, whose blocks are 256 elements);
//  * memopt.adafactor_update: a parameter of rank >= 2 keeps its second
//    moment factored, as a row factor (the shape without the last
//    dimension) and a column factor (without the second-to-last); any other
//    keeps one tensor of its own shape.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_CONTRACT_OPTIMIZERSHAPES_H
#define MEMOPT_CONTRACT_OPTIMIZERSHAPES_H

#include "memopt/Contract/ShapeRule.h"

namespace memopt::shapes {

/// Elements per block of block-wise 8-bit optimizer state.
inline constexpr int64_t kQuantizationBlock = 256;

/// Parameters with fewer elements keep f32 Adam state under
/// `optimizer=adam8bit`, as bitsandbytes' `min_8bit_size`.
inline constexpr int64_t kMin8bitElements = 4096;

/// The number of blocks of a tensor of `numElements` elements.
inline int64_t quantizationBlocks(int64_t numElements) {
  return (numElements + kQuantizationBlock - 1) / kQuantizationBlock;
}

/// The 8-bit state of a parameter of shape `param`: codes `codes` (of the
/// parameter's shape) and block maxima `absmax` (1-D, one per block).
inline ShapeProblem quantizedStateShape(const Dims &param, const Dims &codes,
                                        const Dims &absmax, const char *name) {
  if (codes != param)
    return problem("expected ", name, " codes of the parameter's shape ",
                   formatDims(param), ", got ", formatDims(codes));
  int64_t n = 1;
  for (int64_t d : param)
    n *= d;
  if (absmax != Dims{quantizationBlocks(n)})
    return problem("expected ", name, " absmax of shape ",
                   formatDims({quantizationBlocks(n)}), " (one per ",
                   kQuantizationBlock, " elements), got ", formatDims(absmax));
  return {};
}

/// Whether Adafactor keeps a parameter's second moment factored.
inline bool adafactorFactored(const Dims &param) { return param.size() >= 2; }

/// The shapes of Adafactor's state for a parameter: {row, col} when
/// factored, else {the parameter's shape}.
inline std::vector<Dims> adafactorStateShapes(const Dims &param) {
  if (!adafactorFactored(param))
    return {param};
  Dims row(param.begin(), param.end() - 1);
  Dims col(param.begin(), param.end() - 2);
  col.push_back(param.back());
  return {row, col};
}

/// Partial sums per reduction of the CUDA Adafactor kernel (blocks of its
/// grid-wide sums of squares).
inline constexpr int64_t kAdafactorPartials = 1024;

/// The planned workspace of memopt.adafactor_update, in doubles: for a
/// factored parameter, the mean of each matrix's row factor (one per
/// leading batch index) and then room for the CPU kernel's column sums or
/// the CUDA kernel's two sets of partial sums of squares, whichever is
/// larger; otherwise those partial sums alone.
inline int64_t adafactorWorkspaceDoubles(const Dims &param) {
  const int64_t partials = 2 * kAdafactorPartials;
  if (!adafactorFactored(param))
    return partials;
  int64_t batches = 1;
  for (size_t i = 0; i + 2 < param.size(); ++i)
    batches *= param[i];
  const int64_t cols = param.back();
  return batches + (cols > partials ? cols : partials);
}

/// The planned workspace of memopt.clip_coefficient, in doubles: the running
/// sum of squares and the CUDA kernel's partial sums of one gradient.
inline constexpr int64_t kClipCoefficientWorkspaceDoubles =
    1 + kAdafactorPartials;

/// Checks Adafactor's state shapes against the parameter's.
inline ShapeProblem adafactorStateShape(const Dims &param,
                                        const std::vector<Dims> &state) {
  std::vector<Dims> expected = adafactorStateShapes(param);
  if (state.size() != expected.size())
    return problem("expected ", expected.size(),
                   expected.size() == 2
                       ? " state tensors (row and column factors)"
                       : " state tensor (the second moment)",
                   " for a parameter of shape ", formatDims(param), ", got ",
                   state.size());
  for (size_t i = 0; i < state.size(); ++i)
    if (state[i] != expected[i])
      return problem("expected ",
                     expected.size() == 1 ? "the second moment"
                     : i == 0             ? "the row factor"
                                          : "the column factor",
                     " of shape ", formatDims(expected[i]), ", got ",
                     formatDims(state[i]));
  return {};
}

} // namespace memopt::shapes

#endif // MEMOPT_CONTRACT_OPTIMIZERSHAPES_H
