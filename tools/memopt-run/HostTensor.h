//===- HostTensor.h - host-side tensors for memopt-run ----------*- C++ -*-===//
//
// Host buffers memopt-run fills (initial parameters, synthetic data) and
// reads back (results), in any dtype the runtime supports.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_TOOLS_MEMOPT_RUN_HOSTTENSOR_H
#define MEMOPT_TOOLS_MEMOPT_RUN_HOSTTENSOR_H

#include "memopt/Analysis/ArgumentInit.h"
#include "memopt/runtime/DType.h"
#include "memopt/runtime/Plan.h"
#include "memopt/runtime/Safetensors.h"
#include "memopt/runtime/Shape.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace memopt::run {

struct HostTensor {
  runtime::DType dtype = runtime::DType::F32;
  runtime::Shape shape;
  std::vector<uint8_t> bytes;

  HostTensor() = default;
  HostTensor(runtime::DType dtype, runtime::Shape shape);

  int64_t numElements() const;
  /// Element `i` converted to double.
  double get(int64_t i) const;
  /// Stores `value` into element `i`, rounding to the dtype.
  void set(int64_t i, double value);
};

/// Fills `tensor` as `init` says, drawing from `rng`.
void initialize(HostTensor &tensor, const ArgumentInit &init,
                std::mt19937_64 &rng);

/// The bytes of tensor `name` in `weights`, checked against the argument it
/// loads into; throws runtime::Error(InvalidArgument) naming the file and
/// tensor when it is missing or its dtype or shape differ.
std::vector<uint8_t> takeWeight(const runtime::SafetensorsFile &weights,
                                const std::string &name,
                                const runtime::TensorInfo &info,
                                const std::string &path);

/// `tensor<f32> = 2.302585` for a scalar; shape, mean, min, max and the first
/// values otherwise.
std::string summarize(const HostTensor &tensor);

} // namespace memopt::run

#endif // MEMOPT_TOOLS_MEMOPT_RUN_HOSTTENSOR_H
