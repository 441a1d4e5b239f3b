//===- MixedPrecision.cpp - casts and dynamic loss scaling on the CPU -----===//
//
// The kernels of mixed-precision training with PyTorch's GradScaler
// semantics: cast between float dtypes, found_inf, unscale,
// update_loss_scale and select. They read and write every operand in its
// own dtype (the backend does not widen them first), so a cast rounds once
// and found_inf sees f16/bf16 bit patterns. The scalar arithmetic is in
// LossScale.h, shared with the CUDA backend.
//
//===----------------------------------------------------------------------===//

#include "Convert.h"
#include "CpuKernels.h"

#include "memopt/runtime/Half.h"
#include "memopt/runtime/LossScale.h"

namespace memopt::runtime::cpu {

namespace {

/// The value of a validated 0-d f32 operand.
float scalarF32(const TensorRef &t) { return *t.as<const float>(); }

bool anyNonFinite(const TensorRef &t) {
  const int64_t n = t.numElements;
  switch (t.dtype) {
  case DType::F32: {
    const float *p = t.as<const float>();
    for (int64_t i = 0; i < n; ++i)
      if (math::nonFinite(p[i]))
        return true;
    return false;
  }
  case DType::F64: {
    const double *p = t.as<const double>();
    for (int64_t i = 0; i < n; ++i)
      if (math::nonFinite(p[i]))
        return true;
    return false;
  }
  case DType::F16: {
    const uint16_t *p = t.as<const uint16_t>();
    for (int64_t i = 0; i < n; ++i)
      if (math::halfBitsNonFinite(p[i]))
        return true;
    return false;
  }
  case DType::BF16: {
    const uint16_t *p = t.as<const uint16_t>();
    for (int64_t i = 0; i < n; ++i)
      if (math::bfloat16BitsNonFinite(p[i]))
        return true;
    return false;
  }
  default:
    throw Error(
        ErrorCode::Internal,
        runtime::concat("found_inf called with dtype ", dtypeName(t.dtype)));
  }
}

} // namespace

void cast(const KernelCall &call) {
  const TensorRef &x = call.in(0), &y = call.out(0);
  if (x.dtype == y.dtype) {
    if (x.data != y.data)
      std::memmove(y.data, x.data, x.bytes());
    return;
  }
  convertFloats(x.data, x.dtype, y.data, y.dtype, x.numElements);
}

void foundInf(const KernelCall &call) {
  bool found = false;
  for (size_t i = 0; i < call.inputs.size() && !found; ++i)
    found = anyNonFinite(call.in(i));
  *call.out(0).as<float>() = found ? 1.0f : 0.0f;
}

void unscale(const KernelCall &call) {
  const TensorRef &g = call.in(0), &out = call.out(0);
  const float inv = math::inverseLossScale(scalarF32(call.in(1)));
  const int64_t n = g.numElements;
  // Element i is read before it is written, so out may be g (in place).
  switch (g.dtype) {
  case DType::F32: {
    const float *p = g.as<const float>();
    float *q = out.as<float>();
    for (int64_t i = 0; i < n; ++i)
      q[i] = math::unscaleValue(p[i], inv);
    return;
  }
  case DType::F64: {
    const double *p = g.as<const double>();
    double *q = out.as<double>();
    for (int64_t i = 0; i < n; ++i)
      q[i] = math::unscaleValue(p[i], inv);
    return;
  }
  case DType::F16: {
    const uint16_t *p = g.as<const uint16_t>();
    uint16_t *q = out.as<uint16_t>();
    for (int64_t i = 0; i < n; ++i)
      q[i] = floatToHalfBits(math::unscaleValue(halfBitsToFloat(p[i]), inv));
    return;
  }
  case DType::BF16: {
    const uint16_t *p = g.as<const uint16_t>();
    uint16_t *q = out.as<uint16_t>();
    for (int64_t i = 0; i < n; ++i)
      q[i] = floatToBFloat16Bits(
          math::unscaleValue(bfloat16BitsToFloat(p[i]), inv));
    return;
  }
  default:
    throw Error(
        ErrorCode::Internal,
        runtime::concat("unscale called with dtype ", dtypeName(g.dtype)));
  }
}

void updateLossScale(const KernelCall &call) {
  const LossScaleAttrs &a = call.step.get<LossScaleAttrs>();
  math::LossScaleState next = math::updateLossScale(
      scalarF32(call.in(0)), *call.in(1).as<const int32_t>(),
      scalarF32(call.in(2)), a.growthFactor, a.backoffFactor, a.growthInterval);
  *call.out(0).as<float>() = next.scale;
  *call.out(1).as<int32_t>() = next.growthTracker;
}

void select(const KernelCall &call) {
  const TensorRef &chosen =
      math::flagSet(scalarF32(call.in(0))) ? call.in(1) : call.in(2);
  const TensorRef &out = call.out(0);
  if (chosen.data != out.data)
    std::memmove(out.data, chosen.data, out.bytes());
}

} // namespace memopt::runtime::cpu
