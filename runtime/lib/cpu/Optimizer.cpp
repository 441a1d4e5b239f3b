//===- Optimizer.cpp - SGD, momentum, Adam and AdamW steps on the CPU ----===//
//
// torch.optim's update rules, element by element in the compute type with
// the hyper-parameters rounded to it once (as PyTorch passes Python floats
// to its tensor ops). Adam's bias corrections are computed in double from
// the step count t (the step tensor, already incremented: 1 on the first
// step). Each loop reads every operand's element i before writing any
// output's element i, so new values may overwrite the old ones (Kernel.h).
//
// The gradient (input 1) is read in its own dtype (the backend does not
// widen it): f16 or bf16 beside an f32 or f64 parameter, or f32 beside f64,
// is widened exactly element by element, so no wide copy exists. A loss
// scale after the skip flag unscales each element as memopt.unscale would
// in the parameter's type (LossScale.h), before the update uses it.
//
// An optional `skip` operand (0-d f32) after the tensors skips the step when
// nonzero, as GradScaler skips optimizer.step() after non-finite gradients:
// skipOptimizerStep runs before the backend converts any operand, reads the
// flag in its own dtype and copies every old value to its output byte for
// byte (nothing to do for an output over its input), so a skipped step is
// bit-identical whatever the storage dtype.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

#include "memopt/runtime/ElementwiseMath.h"
#include "memopt/runtime/LossScale.h"

#include <cmath>

namespace memopt::runtime::cpu {

namespace {

/// Calls `f` with a function from element index to the gradient's value in
/// compute type T: input 1 widened from its dtype, divided by the loss
/// scale at input `scaleIndex` when the update has one.
template <typename T, typename F>
void withGradient(const KernelCall &call, size_t scaleIndex, F &&f) {
  const TensorRef &g = call.in(1);
  const bool scaled = call.inputs.size() > scaleIndex;
  // The backend may have widened the 0-d f32 scale to f64 beside an f64
  // parameter (exactly): read it back as the f32 it is.
  auto scaleValue = [&]() -> float {
    const TensorRef &s = call.in(scaleIndex);
    return s.dtype == DType::F64 ? static_cast<float>(*s.as<const double>())
                                 : *s.as<const float>();
  };
  const float inv = scaled ? math::inverseLossScale(scaleValue()) : 1.0f;
  auto run = [&](auto widen) {
    if (scaled)
      f([&](int64_t i) -> T {
        return static_cast<T>(
            math::unscaleValue(static_cast<T>(widen(i)), inv));
      });
    else
      f([&](int64_t i) -> T { return static_cast<T>(widen(i)); });
  };
  switch (g.dtype) {
  case DType::F16: {
    const uint16_t *p = g.as<const uint16_t>();
    return run([p](int64_t i) { return halfBitsToFloat(p[i]); });
  }
  case DType::BF16: {
    const uint16_t *p = g.as<const uint16_t>();
    return run([p](int64_t i) { return bfloat16BitsToFloat(p[i]); });
  }
  case DType::F32: {
    const float *p = g.as<const float>();
    return run([p](int64_t i) { return p[i]; });
  }
  case DType::F64: {
    const double *p = g.as<const double>();
    return run([p](int64_t i) { return p[i]; });
  }
  default:
    throw Error(
        ErrorCode::Internal,
        runtime::concat("optimizer gradient of dtype ", dtypeName(g.dtype)));
  }
}

template <typename T, typename G>
void sgdImpl(const KernelCall &call, const G &grad) {
  const SgdAttrs &a = call.step.get<SgdAttrs>();
  const T lr = static_cast<T>(a.lr), wd = static_cast<T>(a.weightDecay);
  const bool decay = a.weightDecay != 0;
  const T *pp = call.in(0).as<const T>();
  T *out = call.out(0).as<T>();
  for (int64_t i = 0, n = call.out(0).numElements; i < n; ++i) {
    const T p = pp[i], g = grad(i);
    const T d = decay ? g + wd * p : g;
    out[i] = p - lr * d;
  }
}

template <typename T, typename G>
void sgdMomentumImpl(const KernelCall &call, const G &grad) {
  const SgdMomentumAttrs &a = call.step.get<SgdMomentumAttrs>();
  const T lr = static_cast<T>(a.lr), wd = static_cast<T>(a.weightDecay);
  const T momentum = static_cast<T>(a.momentum);
  const T keep = static_cast<T>(1 - a.dampening);
  const bool decay = a.weightDecay != 0, nesterov = a.nesterov;
  const T *pp = call.in(0).as<const T>(), *pb = call.in(2).as<const T>();
  T *newP = call.out(0).as<T>(), *newB = call.out(1).as<T>();
  for (int64_t i = 0, n = call.out(0).numElements; i < n; ++i) {
    const T p = pp[i], b = pb[i], g = grad(i);
    const T d = decay ? g + wd * p : g;
    const T buf = momentum * b + keep * d;
    const T step = nesterov ? d + momentum * buf : buf;
    newP[i] = p - lr * step;
    newB[i] = buf;
  }
}

template <typename T, typename G>
void adamImpl(const KernelCall &call, const G &grad) {
  const AdamAttrs &a = call.step.get<AdamAttrs>();
  const double t = static_cast<double>(*call.in(4).as<const T>());
  if (!(t >= 1) || !std::isfinite(t))
    kernelError("adam step count ", t,
                " must be finite and >= 1 (the step "
                "tensor holds the count after incrementing it)");
  const double biasCorrection1 = 1 - std::pow(a.beta1, t);
  const double biasCorrection2 = 1 - std::pow(a.beta2, t);
  const T stepSize = static_cast<T>(a.lr / biasCorrection1);
  const T biasCorrection2Sqrt = static_cast<T>(std::sqrt(biasCorrection2));
  const T beta1 = static_cast<T>(a.beta1), beta2 = static_cast<T>(a.beta2);
  const T oneMinusBeta1 = static_cast<T>(1 - a.beta1);
  const T oneMinusBeta2 = static_cast<T>(1 - a.beta2);
  const T eps = static_cast<T>(a.eps), wd = static_cast<T>(a.weightDecay);
  // Adam adds weight_decay · p to the gradient; AdamW scales p by
  // 1 − lr · weight_decay (a double rounded once, as PyTorch's mul_).
  const bool decay = a.weightDecay != 0 && !a.decoupledWeightDecay;
  const bool decoupled = a.weightDecay != 0 && a.decoupledWeightDecay;
  const T keep = static_cast<T>(1 - a.lr * a.weightDecay);
  const T *pp = call.in(0).as<const T>();
  const T *pm = call.in(2).as<const T>(), *pv = call.in(3).as<const T>();
  T *newP = call.out(0).as<T>(), *newM = call.out(1).as<T>();
  T *newV = call.out(2).as<T>();
  for (int64_t i = 0, n = call.out(0).numElements; i < n; ++i) {
    const T p0 = pp[i], g0 = grad(i);
    const T g = decay ? g0 + wd * p0 : g0;
    const T p = decoupled ? p0 * keep : p0;
    const T m = beta1 * pm[i] + oneMinusBeta1 * g;
    const T v = beta2 * pv[i] + oneMinusBeta2 * g * g;
    const T denom = math::sqrt(v) / biasCorrection2Sqrt + eps;
    newP[i] = p - stepSize * (m / denom);
    newM[i] = m;
    newV[i] = v;
  }
}

/// The index of the skip operand and the inputs holding the old values of
/// outputs 0, 1, ... of an optimizer kernel.
struct OptimizerOperands {
  size_t skipIndex;
  std::vector<size_t> stateInputs;
};

OptimizerOperands optimizerOperands(KernelKind kind) {
  switch (kind) {
  case KernelKind::SgdUpdate:
    return {2, {0}};
  case KernelKind::SgdMomentumUpdate:
    return {3, {0, 2}};
  case KernelKind::AdamUpdate:
    return {5, {0, 2, 3}};
  default:
    throw Error(
        ErrorCode::Internal,
        runtime::concat("'", kernelName(kind), "' is not an optimizer update"));
  }
}

} // namespace

bool skipOptimizerStep(const KernelCall &call) {
  OptimizerOperands ops = optimizerOperands(call.step.kernel);
  if (call.inputs.size() <= ops.skipIndex)
    return false;
  const TensorRef &skip = call.in(ops.skipIndex);
  if (skip.dtype != DType::F32)
    throw Error(ErrorCode::Internal, "optimizer skip flag is not f32");
  if (!math::flagSet(*skip.as<const float>()))
    return false;
  for (size_t o = 0; o < ops.stateInputs.size(); ++o) {
    const TensorRef &from = call.in(ops.stateInputs[o]), &to = call.out(o);
    if (from.data != to.data)
      std::memmove(to.data, from.data, to.bytes());
  }
  return true;
}

void sgdUpdate(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype, [&](auto tag) {
    using T = decltype(tag);
    withGradient<T>(call, 3, [&](const auto &g) { sgdImpl<T>(call, g); });
  });
}

void sgdMomentumUpdate(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype, [&](auto tag) {
    using T = decltype(tag);
    withGradient<T>(call, 4,
                    [&](const auto &g) { sgdMomentumImpl<T>(call, g); });
  });
}

void adamUpdate(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype, [&](auto tag) {
    using T = decltype(tag);
    withGradient<T>(call, 6, [&](const auto &g) { adamImpl<T>(call, g); });
  });
}

} // namespace memopt::runtime::cpu
