//===- CpuKernels.h - the CPU backend's kernels -----------------*- C++ -*-===//
//
// Internal to the CPU backend. Each kernel takes a KernelCall whose tensors
// the plan loader has already checked against the kernel's rules, so
// kernels index without re-validating shapes; they only check data-dependent
// conditions (ids and labels in range).
//
// Float kernels are templates over float and double. The backend calls
// them with every float tensor in one compute type: f64 when any float
// operand is f64, else f32; f16/bf16 tensors are widened to f32 before and
// narrowed after (CpuBackend.cpp). Data-movement kernels work on raw
// elements of any dtype, and so do the mixed-precision kernels (cast,
// found_inf, unscale, update_loss_scale, select) and the optimizers' skip
// check, which see every operand in its own dtype.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_LIB_CPU_CPUKERNELS_H
#define MEMOPT_RUNTIME_LIB_CPU_CPUKERNELS_H

#include "memopt/runtime/Backend.h"
#include "memopt/runtime/Error.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace memopt::runtime::cpu {

struct KernelCall {
  const Step &step;
  const std::vector<TensorRef> &inputs;
  const std::vector<TensorRef> &outputs;
  const StepContext &context;

  const TensorRef &in(size_t i) const { return inputs[i]; }
  const TensorRef &out(size_t i) const { return outputs[i]; }
};

/// A data-dependent kernel failure (the executor prefixes the step).
template <typename... Args> [[noreturn]] void kernelError(Args &&...args) {
  throw Error(ErrorCode::KernelFailure, concat(std::forward<Args>(args)...));
}

/// Calls `f(T{})` with T the compute type of `dtype` (float or double).
template <typename F> void dispatchFloat(DType dtype, F &&f) {
  if (dtype == DType::F32)
    return f(float{});
  if (dtype == DType::F64)
    return f(double{});
  throw Error(ErrorCode::Internal,
              concat("CPU kernel called with dtype ", dtypeName(dtype),
                     " instead of a compute type"));
}

/// Reads an i32 or i64 index element as int64_t.
inline int64_t loadIndex(const TensorRef &t, int64_t i) {
  if (t.dtype == DType::I32)
    return t.as<const int32_t>()[i];
  return t.as<const int64_t>()[i];
}

/// The class labels of rows [0, n), each checked to lie in [0, classes) (a
/// data-dependent kernel failure naming the first row outside).
inline std::vector<int64_t> checkedLabels(const TensorRef &labels, int64_t n,
                                          int64_t classes) {
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (int64_t r = 0; r < n; ++r) {
    out[r] = loadIndex(labels, r);
    if (out[r] < 0 || out[r] >= classes)
      kernelError("label ", out[r], " of row ", r, " is outside [0, ", classes,
                  ")");
  }
  return out;
}

// Gemm.cpp / Linear.cpp / Conv.cpp
void conv2d(const KernelCall &call);
void conv2dBackwardInput(const KernelCall &call);
void conv2dBackwardWeight(const KernelCall &call);
void linear(const KernelCall &call);
void matmul(const KernelCall &call);

// Elementwise.cpp
void unary(const KernelCall &call);
void compare(const KernelCall &call);
void binary(const KernelCall &call);
void dropout(const KernelCall &call);
void activationBackward(const KernelCall &call);

// Norm.cpp
void batchNorm(const KernelCall &call);
void batchNormInference(const KernelCall &call);
void layerNorm(const KernelCall &call);
void rmsNorm(const KernelCall &call);
void batchNormBackward(const KernelCall &call);
void layerNormBackward(const KernelCall &call);
void rmsNormBackward(const KernelCall &call);
void batchNormAct(const KernelCall &call);
void batchNormActBackward(const KernelCall &call);

// Pool.cpp
void maxPool2d(const KernelCall &call);
void avgPool2d(const KernelCall &call);
void globalAvgPool2d(const KernelCall &call);
void maxPool2dBackward(const KernelCall &call);
void avgPool2dBackward(const KernelCall &call);
void globalAvgPool2dBackward(const KernelCall &call);

// Attention.cpp
void attention(const KernelCall &call);
void attentionBackward(const KernelCall &call);

// LinearCrossEntropy.cpp
void linearCrossEntropy(const KernelCall &call);
void linearCrossEntropyBackward(const KernelCall &call);
void linearCrossEntropyWithGrad(const KernelCall &call);

// Softmax.cpp
void softmax(const KernelCall &call);
void softmaxBackward(const KernelCall &call);

// DataMovement.cpp
void reshape(const KernelCall &call);
void transpose(const KernelCall &call);
void slice(const KernelCall &call);
void concat(const KernelCall &call);
void upsampleNearest2d(const KernelCall &call);
void embedding(const KernelCall &call);
void sliceBackward(const KernelCall &call);

// Loss.cpp
void crossEntropy(const KernelCall &call);
void mseLoss(const KernelCall &call);
void crossEntropyBackward(const KernelCall &call);
void mseLossBackward(const KernelCall &call);

// Reduce.cpp
void sumTo(const KernelCall &call);
void reduceExtremum(const KernelCall &call);
void reduceExtremumBackward(const KernelCall &call);
void upsampleNearest2dBackward(const KernelCall &call);
void embeddingBackward(const KernelCall &call);

// Optimizer.cpp
void sgdUpdate(const KernelCall &call);
void sgdMomentumUpdate(const KernelCall &call);
void adamUpdate(const KernelCall &call);
void adam8bitUpdate(const KernelCall &call);
void adafactorUpdate(const KernelCall &call);
/// Reads each gradient in its own dtype.
void clipCoefficient(const KernelCall &call);
void squareSum(const KernelCall &call);
/// When the step has a nonzero `skip` operand: copies every old value
/// (param, buffers) to its output and returns true. Called by the backend
/// before converting operands, with the step's own tensors.
bool skipOptimizerStep(const KernelCall &call);

// MixedPrecision.cpp (run on operands in their own dtypes)
void cast(const KernelCall &call);
void foundInf(const KernelCall &call);
void unscale(const KernelCall &call);
void updateLossScale(const KernelCall &call);
void select(const KernelCall &call);

} // namespace memopt::runtime::cpu

#endif // MEMOPT_RUNTIME_LIB_CPU_CPUKERNELS_H
