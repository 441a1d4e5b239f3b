//===- ClipNorm.h - gradient clipping by the global norm --------*- C++ -*-===//
//
// The scalar arithmetic of memopt.clip_coefficient, written once for the
// CPU and the CUDA backend (MEMOPT_HD), as
// torch.nn.utils.clip_grad_norm_(max_norm, norm_type=2) computes it: the
// total norm (here the square root of the sum of every gradient element's
// square, accumulated in double, then rounded to f32), and the factor
// `max_norm / (total + 1e-6)` in f32, clamped to at most 1. Every gradient
// is then multiplied by that factor (memopt.mul), so gradients whose total
// norm is at most max_norm are left exactly as they are.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_CLIPNORM_H
#define MEMOPT_RUNTIME_CLIPNORM_H

#include "memopt/runtime/HostDevice.h"

#include <cmath>

namespace memopt::runtime::math {

/// The factor clip_grad_norm_ scales the gradients by, from the sum of the
/// squares of all their elements.
MEMOPT_HD inline float clipCoefficient(double sumOfSquares, double maxNorm) {
  const float total = static_cast<float>(sqrt(sumOfSquares));
  const float coefficient =
      static_cast<float>(maxNorm) / (total + static_cast<float>(1e-6));
  // NaN (a non-finite gradient) passes through, as in PyTorch.
  return coefficient > 1.0f ? 1.0f : coefficient;
}

} // namespace memopt::runtime::math

#endif // MEMOPT_RUNTIME_CLIPNORM_H
