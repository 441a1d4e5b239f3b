//===- Optimizer.cu - SGD, SGD with momentum and Adam steps on the GPU ----===//
//
// The CUDA versions of cpu/Optimizer.cpp: torch.optim's update rules,
// element by element in the CPU backend's compute type (double when the
// parameter or Adam's step count is f64, float otherwise; f16/bf16 values
// round once, on the store) with the hyper-parameters rounded to it once on
// the host. Every operation is an explicitly rounded intrinsic (__fmul_rn,
// __fadd_rn, ...), which the compiler never contracts into a fused
// multiply-add, so an update is bit-identical to the CPU backend's for the
// same inputs (Adam's bias corrections aside: they use the device's pow).
//
// Adam's bias corrections depend on the step count t, a device tensor
// (already incremented: 1 on the first step): the first thread of each
// block computes them in double from t and shares them with its block. A t
// that is not finite or below 1 sets the error flag and writes nothing (the
// CPU backend fails the step).
//
// The gradient is read in its own dtype (f16 or bf16 beside an f32 or f64
// parameter, f32 beside f64, widened exactly) and, with a loss scale after
// the skip flag, unscaled element by element as memopt.unscale would in
// the parameter's type (LossScale.h), as the CPU backend does.
//
// The optional `skip` operand (0-d f32) after the tensors is read by the kernel
// itself: when nonzero the step copies every old value (param, buffers) to
// its output bit for bit, or does nothing for an output over its input, as
// GradScaler skips optimizer.step() after non-finite gradients.
//
// Each thread reads every operand's element i before writing any output's
// element i, so new values may overwrite any old ones (Kernel.h).
//
//===----------------------------------------------------------------------===//

#include "AdamStep.cuh"
#include "Device.cuh"

#include "memopt/runtime/ElementwiseMath.h"
#include "memopt/runtime/LossScale.h"

#include <initializer_list>

namespace memopt::runtime::cuda {

namespace {

//===----------------------------------------------------------------------===//
// Operands and the skip flag
//===----------------------------------------------------------------------===//

/// The most tensor inputs (Adam: param, grad, exp_avg, exp_avg_sq, step)
/// and outputs (new param, exp_avg, exp_avg_sq) of an update.
constexpr int kMaxInputs = 5;
constexpr int kMaxOutputs = 3;

/// An update's tensors as its kernel sees them.
struct Operands {
  const void *in[kMaxInputs] = {};
  void *out[kMaxOutputs] = {};
  /// The input holding output o's old value (copied when the step is
  /// skipped).
  int stateInput[kMaxOutputs] = {};
  int numOutputs = 0;
  /// The skip flag, or null without the optional operand.
  const float *skip = nullptr;
  /// The loss scale the gradient is divided by, or null.
  const float *lossScale = nullptr;
  /// The dtype of param and the new param.
  DType dtype = DType::F32;
  /// The dtype of the optimizer buffers and their new values: the
  /// param's, or bf16 (`state-dtype=bf16`).
  DType stateDType = DType::F32;
  size_t stateBytes = 4;
  /// The gradient's own dtype.
  DType gradDtype = DType::F32;
  size_t elementBytes = 4;
  int64_t n = 0;
};

/// `skipIndex` is the index of the optional skip operand, `stateInputs` the
/// inputs holding the old values of outputs 0, 1, ...
Operands operands(const KernelCall &call, size_t skipIndex,
                  std::initializer_list<int> stateInputs) {
  Operands o;
  for (size_t i = 0; i < call.inputs.size() && i < size_t(kMaxInputs); ++i)
    o.in[i] = call.in(i).data;
  for (int s : stateInputs) {
    o.out[o.numOutputs] = call.out(o.numOutputs).data;
    o.stateInput[o.numOutputs] = s;
    ++o.numOutputs;
  }
  if (call.inputs.size() > skipIndex) {
    const TensorRef &skip = call.in(skipIndex);
    if (skip.dtype != DType::F32)
      throw Error(ErrorCode::Internal, "optimizer skip flag is not f32");
    o.skip = skip.as<const float>();
  }
  if (call.inputs.size() > skipIndex + 1) {
    const TensorRef &scale = call.in(skipIndex + 1);
    if (scale.dtype != DType::F32)
      throw Error(ErrorCode::Internal, "optimizer loss scale is not f32");
    o.lossScale = scale.as<const float>();
  }
  o.dtype = call.out(0).dtype;
  o.stateDType = o.numOutputs > 1 ? call.out(1).dtype : o.dtype;
  o.gradDtype = call.in(1).dtype;
  o.elementBytes = dtypeSize(o.dtype);
  o.stateBytes = dtypeSize(o.stateDType);
  o.n = call.out(0).numElements;
  return o;
}

__device__ inline uint64_t loadRaw(const void *p, size_t bytes, int64_t i) {
  switch (bytes) {
  case 2:
    return static_cast<const uint16_t *>(p)[i];
  case 4:
    return static_cast<const uint32_t *>(p)[i];
  default:
    return static_cast<const uint64_t *>(p)[i];
  }
}

__device__ inline void storeRaw(void *p, size_t bytes, int64_t i, uint64_t v) {
  switch (bytes) {
  case 2:
    static_cast<uint16_t *>(p)[i] = static_cast<uint16_t>(v);
    return;
  case 4:
    static_cast<uint32_t *>(p)[i] = static_cast<uint32_t>(v);
    return;
  default:
    static_cast<uint64_t *>(p)[i] = v;
    return;
  }
}

/// Gradient element i in compute type T: widened from its dtype, divided by
/// the loss scale when the update has one.
template <typename T>
__device__ inline T loadGradient(const Operands &o, int64_t i) {
  const T g = loadAs<T>(o.in[1], o.gradDtype, i);
  if (!o.lossScale)
    return g;
  return static_cast<T>(
      math::unscaleValue(g, math::inverseLossScale(*o.lossScale)));
}

/// When the step is skipped: copies every old value to its output (all of
/// element i read before any is written) and returns true. The flag is the
/// same for every thread, so the whole grid takes the same branch.
__device__ inline bool skipStep(const Operands &o) {
  if (!o.skip || !math::flagSet(*o.skip))
    return false;
  MEMOPT_GRID_STRIDE(i, o.n) {
    uint64_t old[kMaxOutputs] = {};
    for (int k = 0; k < o.numOutputs; ++k)
      old[k] = loadRaw(o.in[o.stateInput[k]],
                       k == 0 ? o.elementBytes : o.stateBytes, i);
    for (int k = 0; k < o.numOutputs; ++k)
      if (o.out[k] != o.in[o.stateInput[k]])
        storeRaw(o.out[k], k == 0 ? o.elementBytes : o.stateBytes, i, old[k]);
  }
  return true;
}

//===----------------------------------------------------------------------===//
// SGD
//===----------------------------------------------------------------------===//

template <typename T> struct SgdParams {
  T lr, wd;
  bool decay;
};

template <typename T> __global__ void sgdKernel(Operands o, SgdParams<T> a) {
  if (skipStep(o))
    return;
  MEMOPT_GRID_STRIDE(i, o.n) {
    const T p = loadAs<T>(o.in[0], o.dtype, i);
    const T g = loadGradient<T>(o, i);
    const T d = a.decay ? addRn(g, mulRn(a.wd, p)) : g;
    storeAs(o.out[0], o.dtype, i, subRn(p, mulRn(a.lr, d)));
  }
}

template <typename T> void sgdImpl(const KernelCall &call) {
  const SgdAttrs &attrs = call.step.get<SgdAttrs>();
  SgdParams<T> a;
  a.lr = static_cast<T>(attrs.lr);
  a.wd = static_cast<T>(attrs.weightDecay);
  a.decay = attrs.weightDecay != 0;
  const Operands o = operands(call, 2, {0});
  sgdKernel<T><<<blocksFor(o.n), kThreads, 0, call.cuda.stream>>>(o, a);
  checkLaunch("sgd_update");
}

//===----------------------------------------------------------------------===//
// SGD with momentum
//===----------------------------------------------------------------------===//

template <typename T> struct SgdMomentumParams {
  T lr, wd, momentum, keep;
  bool decay, nesterov;
};

template <typename T>
__global__ void sgdMomentumKernel(Operands o, SgdMomentumParams<T> a) {
  if (skipStep(o))
    return;
  MEMOPT_GRID_STRIDE(i, o.n) {
    const T p = loadAs<T>(o.in[0], o.dtype, i);
    const T g = loadGradient<T>(o, i);
    const T b = loadAs<T>(o.in[2], o.stateDType, i);
    const T d = a.decay ? addRn(g, mulRn(a.wd, p)) : g;
    const T buf = addRn(mulRn(a.momentum, b), mulRn(a.keep, d));
    const T step = a.nesterov ? addRn(d, mulRn(a.momentum, buf)) : buf;
    storeAs(o.out[0], o.dtype, i, subRn(p, mulRn(a.lr, step)));
    storeAs(o.out[1], o.stateDType, i, buf);
  }
}

template <typename T> void sgdMomentumImpl(const KernelCall &call) {
  const SgdMomentumAttrs &attrs = call.step.get<SgdMomentumAttrs>();
  SgdMomentumParams<T> a;
  a.lr = static_cast<T>(attrs.lr);
  a.wd = static_cast<T>(attrs.weightDecay);
  a.momentum = static_cast<T>(attrs.momentum);
  a.keep = static_cast<T>(1 - attrs.dampening);
  a.decay = attrs.weightDecay != 0;
  a.nesterov = attrs.nesterov;
  const Operands o = operands(call, 3, {0, 2});
  sgdMomentumKernel<T><<<blocksFor(o.n), kThreads, 0, call.cuda.stream>>>(o, a);
  checkLaunch("sgd_momentum_update");
}

//===----------------------------------------------------------------------===//
// Adam
//===----------------------------------------------------------------------===//

template <typename T> struct AdamParams {
  AdamStep<T> adam;
  /// The step tensor's own dtype (any float dtype).
  DType stepDType;
  int *errorFlag;
  int errorCode;
};

template <typename T> __global__ void adamKernel(Operands o, AdamParams<T> a) {
  if (skipStep(o))
    return;
  // The same value for every thread: the whole grid returns or none does.
  const double t = static_cast<double>(loadAs<T>(o.in[4], a.stepDType, 0));
  if (!(t >= 1) || math::nonFinite(t)) {
    if (blockIdx.x == 0 && threadIdx.x == 0)
      raiseError(a.errorFlag, a.errorCode);
    return;
  }
  __shared__ T stepSize, biasCorrection2Sqrt;
  if (threadIdx.x == 0)
    a.adam.corrections(t, stepSize, biasCorrection2Sqrt);
  __syncthreads();
  MEMOPT_GRID_STRIDE(i, o.n) {
    const T p0 = loadAs<T>(o.in[0], o.dtype, i);
    const T g0 = loadGradient<T>(o, i);
    T m = loadAs<T>(o.in[2], o.stateDType, i);
    T v = loadAs<T>(o.in[3], o.stateDType, i);
    const T p = a.adam(p0, g0, m, v, stepSize, biasCorrection2Sqrt);
    storeAs(o.out[0], o.dtype, i, p);
    storeAs(o.out[1], o.stateDType, i, m);
    storeAs(o.out[2], o.stateDType, i, v);
  }
}

template <typename T> void adamImpl(const KernelCall &call) {
  AdamParams<T> a;
  a.adam = AdamStep<T>::from(call.step.get<AdamAttrs>());
  a.stepDType = call.in(4).dtype;
  a.errorFlag = call.cuda.errorFlag;
  a.errorCode = static_cast<int>(call.context.stepIndex) + 1;
  const Operands o = operands(call, 5, {0, 2, 3});
  adamKernel<T><<<blocksFor(o.n), kThreads, 0, call.cuda.stream>>>(o, a);
  checkLaunch("adam_update");
}

} // namespace

void sgdUpdate(const KernelCall &call) {
  dispatchCompute(call, [&](auto tag) { sgdImpl<decltype(tag)>(call); });
}

void sgdMomentumUpdate(const KernelCall &call) {
  dispatchCompute(call,
                  [&](auto tag) { sgdMomentumImpl<decltype(tag)>(call); });
}

void adamUpdate(const KernelCall &call) {
  dispatchCompute(call, [&](auto tag) { adamImpl<decltype(tag)>(call); });
}

} // namespace memopt::runtime::cuda
