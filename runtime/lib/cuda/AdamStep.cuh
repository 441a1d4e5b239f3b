//===- AdamStep.cuh - Adam's element update on the GPU ----------*- C++ -*-===//
//
// Internal to the CUDA backend: the arithmetic of one element of Adam's (or
// AdamW's) step, shared by adam_update (Optimizer.cu) and adam8bit_update
// (Optimizer8bit.cu), in explicitly rounded intrinsics, as the CPU
// backend's AdamStep (cpu/Optimizer.cpp) computes it.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_LIB_CUDA_ADAMSTEP_CUH
#define MEMOPT_RUNTIME_LIB_CUDA_ADAMSTEP_CUH

#include "Device.cuh"

namespace memopt::runtime::cuda {

/// Adam's hyper-parameters in the compute type T (rounded once on the
/// host) and in double for the bias corrections.
template <typename T> struct AdamStep {
  double lr, beta1Double, beta2Double;
  T beta1, beta2, oneMinusBeta1, oneMinusBeta2, eps, wd;
  /// Adam's L2 term in the gradient (decay), or AdamW's scaling of the
  /// parameter by `keep` = 1 − lr · weight_decay (decoupled).
  bool decay, decoupled;
  T keep;

  static AdamStep from(const AdamAttrs &attrs) {
    AdamStep a;
    a.lr = attrs.lr;
    a.beta1Double = attrs.beta1;
    a.beta2Double = attrs.beta2;
    a.beta1 = static_cast<T>(attrs.beta1);
    a.beta2 = static_cast<T>(attrs.beta2);
    a.oneMinusBeta1 = static_cast<T>(1 - attrs.beta1);
    a.oneMinusBeta2 = static_cast<T>(1 - attrs.beta2);
    a.eps = static_cast<T>(attrs.eps);
    a.wd = static_cast<T>(attrs.weightDecay);
    a.decay = attrs.weightDecay != 0 && !attrs.decoupledWeightDecay;
    a.decoupled = attrs.weightDecay != 0 && attrs.decoupledWeightDecay;
    a.keep = static_cast<T>(1 - attrs.lr * attrs.weightDecay);
    return a;
  }

  /// lr / (1 − β₁ᵗ) and √(1 − β₂ᵗ), from the step count t (in double).
  __device__ void corrections(double t, T &stepSize,
                              T &biasCorrection2Sqrt) const {
    stepSize = static_cast<T>(lr / (1 - ::pow(beta1Double, t)));
    biasCorrection2Sqrt = static_cast<T>(__dsqrt_rn(1 - ::pow(beta2Double, t)));
  }

  /// The new parameter from p0 and its gradient g0; the new moments from
  /// the old ones in `m` and `v`.
  __device__ T operator()(T p0, T g0, T &m, T &v, T stepSize,
                          T biasCorrection2Sqrt) const {
    const T g = decay ? addRn(g0, mulRn(wd, p0)) : g0;
    const T p = decoupled ? mulRn(p0, keep) : p0;
    m = addRn(mulRn(beta1, m), mulRn(oneMinusBeta1, g));
    v = addRn(mulRn(beta2, v), mulRn(mulRn(oneMinusBeta2, g), g));
    const T denom = addRn(divRn(sqrtRn(v), biasCorrection2Sqrt), eps);
    return subRn(p, mulRn(stepSize, divRn(m, denom)));
  }
};

} // namespace memopt::runtime::cuda

#endif // MEMOPT_RUNTIME_LIB_CUDA_ADAMSTEP_CUH
