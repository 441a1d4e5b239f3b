//===- Optimizer.cpp - SGD, SGD with momentum and Adam steps on the CPU ---===//
//
// torch.optim's update rules, element by element in the compute type with
// the hyper-parameters rounded to it once (as PyTorch passes Python floats
// to its tensor ops). Adam's bias corrections are computed in double from
// the step count t (the step tensor, already incremented: 1 on the first
// step). Each loop reads every operand's element i before writing any
// output's element i, so new values may overwrite the old ones (Kernel.h).
//
// An optional trailing `skip` operand (0-d f32) skips the step when
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

template <typename T> void sgdImpl(const KernelCall &call) {
  const SgdAttrs &a = call.step.get<SgdAttrs>();
  const T lr = static_cast<T>(a.lr), wd = static_cast<T>(a.weightDecay);
  const bool decay = a.weightDecay != 0;
  const T *pp = call.in(0).as<const T>(), *pg = call.in(1).as<const T>();
  T *out = call.out(0).as<T>();
  for (int64_t i = 0, n = call.out(0).numElements; i < n; ++i) {
    const T p = pp[i];
    const T d = decay ? pg[i] + wd * p : pg[i];
    out[i] = p - lr * d;
  }
}

template <typename T> void sgdMomentumImpl(const KernelCall &call) {
  const SgdMomentumAttrs &a = call.step.get<SgdMomentumAttrs>();
  const T lr = static_cast<T>(a.lr), wd = static_cast<T>(a.weightDecay);
  const T momentum = static_cast<T>(a.momentum);
  const T keep = static_cast<T>(1 - a.dampening);
  const bool decay = a.weightDecay != 0, nesterov = a.nesterov;
  const T *pp = call.in(0).as<const T>(), *pg = call.in(1).as<const T>();
  const T *pb = call.in(2).as<const T>();
  T *newP = call.out(0).as<T>(), *newB = call.out(1).as<T>();
  for (int64_t i = 0, n = call.out(0).numElements; i < n; ++i) {
    const T p = pp[i], b = pb[i];
    const T d = decay ? pg[i] + wd * p : pg[i];
    const T buf = momentum * b + keep * d;
    const T step = nesterov ? d + momentum * buf : buf;
    newP[i] = p - lr * step;
    newB[i] = buf;
  }
}

template <typename T> void adamImpl(const KernelCall &call) {
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
  const bool decay = a.weightDecay != 0;
  const T *pp = call.in(0).as<const T>(), *pg = call.in(1).as<const T>();
  const T *pm = call.in(2).as<const T>(), *pv = call.in(3).as<const T>();
  T *newP = call.out(0).as<T>(), *newM = call.out(1).as<T>();
  T *newV = call.out(2).as<T>();
  for (int64_t i = 0, n = call.out(0).numElements; i < n; ++i) {
    const T p = pp[i];
    const T g = decay ? pg[i] + wd * p : pg[i];
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
  dispatchFloat(call.out(0).dtype,
                [&](auto tag) { sgdImpl<decltype(tag)>(call); });
}

void sgdMomentumUpdate(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype,
                [&](auto tag) { sgdMomentumImpl<decltype(tag)>(call); });
}

void adamUpdate(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype,
                [&](auto tag) { adamImpl<decltype(tag)>(call); });
}

} // namespace memopt::runtime::cpu
