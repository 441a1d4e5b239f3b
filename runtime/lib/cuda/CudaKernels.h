//===- CudaKernels.h - the CUDA backend's kernels ---------------*- C++ -*-===//
//
// Internal to the CUDA backend. Like the CPU backend's kernels (cpu/
// CpuKernels.h), each kernel takes a call whose tensors the plan loader has
// already checked against the kernel's rules; kernels only check
// data-dependent conditions they can see on the device (ids and labels out
// of range set a device flag that the backend reports after the step).
//
// Unlike the CPU backend, no operand is converted into a temporary: every
// kernel reads and writes each tensor in its own dtype (device.cuh's
// load/store compute in f32, or f64 for f64 tensors) and cuDNN/cuBLAS are
// called with the tensors' own types and f32 compute. A step therefore uses
// only the memory the plan gave it, its workspace included.
//
// Work is issued on the backend's stream and never synchronises with the
// host: the backend checks the error flag once, when the step's work is
// done.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_LIB_CUDA_CUDAKERNELS_H
#define MEMOPT_RUNTIME_LIB_CUDA_CUDAKERNELS_H

#include "memopt/runtime/Backend.h"
#include "memopt/runtime/Error.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstdint>
#include <vector>

namespace memopt::runtime::cuda {

/// Device state every kernel may use.
struct CudaContext {
  cudaStream_t stream = nullptr;
  cublasHandle_t cublas = nullptr;
  cudnnHandle_t cudnn = nullptr;
  /// The running step's workspace, a slice of the arena the plan reserves
  /// for it (null and 0 for steps without one): cuDNN's convolutions and
  /// the multi-block reductions use at most these bytes.
  void *workspace = nullptr;
  size_t workspaceBytes = 0;
  /// A device int: kernels that find bad data (an id or label out of range)
  /// set it to 1 + the step index; the backend checks it after the step.
  int *errorFlag = nullptr;
  /// f32 convolutions and GEMMs may use TF32 tensor cores (MEMOPT_CUDA_TF32=1,
  /// memopt-run --tf32): faster, no longer within f32 rounding of the CPU.
  bool tf32 = false;
};

/// The most dimensions a tensor of the plan has (checked on the host).
constexpr int kMaxRank = 8;

/// A tensor as a device kernel sees it: pointer, dtype and shape, passed by
/// value.
struct DeviceTensor {
  void *data = nullptr;
  DType dtype = DType::F32;
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t numElements = 0;
};

/// `t` for a device kernel; throws for ranks above kMaxRank.
DeviceTensor deviceTensor(const TensorRef &t);

struct KernelCall {
  const Step &step;
  const std::vector<TensorRef> &inputs;
  const std::vector<TensorRef> &outputs;
  const StepContext &context;
  CudaContext &cuda;

  const TensorRef &in(size_t i) const { return inputs[i]; }
  const TensorRef &out(size_t i) const { return outputs[i]; }
};

/// Throws Error(KernelFailure) naming `what` when a CUDA runtime call
/// failed.
void check(cudaError_t status, const char *what);
void check(cublasStatus_t status, const char *what);
void check(cudnnStatus_t status, const char *what);
/// Checks the launch of the kernel just issued.
void checkLaunch(const char *kernel);

/// Copies `bytes` from `src` to `dst` on the device, on the stream (no-op
/// when they are the same memory).
void copyAsync(const KernelCall &call, void *dst, const void *src,
               size_t bytes);

// Elementwise.cu: forward activations, add/sub/mul/div with broadcasting,
// the activation backward ops, dropout.
void unary(const KernelCall &call);
void compare(const KernelCall &call);
void binary(const KernelCall &call);
void activationBackward(const KernelCall &call);
void dropout(const KernelCall &call);

// MixedPrecision.cu: cast, found_inf, unscale, update_loss_scale, select.
void cast(const KernelCall &call);
void foundInf(const KernelCall &call);
void unscale(const KernelCall &call);
void updateLossScale(const KernelCall &call);
void select(const KernelCall &call);

// Optimizer.cu: the three updates, with the optional skip flag.
void sgdUpdate(const KernelCall &call);
void sgdMomentumUpdate(const KernelCall &call);
void adamUpdate(const KernelCall &call);
// Optimizer8bit.cu
void adam8bitUpdate(const KernelCall &call);
// Adafactor.cu (its reductions in the planned workspace)
void adafactorUpdate(const KernelCall &call);
// ClipNorm.cu (its sums in the planned workspace)
void clipCoefficient(const KernelCall &call);
void squareSum(const KernelCall &call);

// DataMovement.cu
void reshape(const KernelCall &call);
void transpose(const KernelCall &call);
void slice(const KernelCall &call);
void sliceBackward(const KernelCall &call);
void concat(const KernelCall &call);
void upsampleNearest2D(const KernelCall &call);
void upsampleNearest2DBackward(const KernelCall &call);
void embedding(const KernelCall &call);
void embeddingBackward(const KernelCall &call);

// Reduce.cu: sum_to, global average pooling, softmax, the losses.
void sumTo(const KernelCall &call);
void reduceExtremum(const KernelCall &call);
void reduceExtremumBackward(const KernelCall &call);
void globalAvgPool2D(const KernelCall &call);
void globalAvgPool2DBackward(const KernelCall &call);
void softmax(const KernelCall &call);
void softmaxBackward(const KernelCall &call);
void crossEntropy(const KernelCall &call);
void crossEntropyBackward(const KernelCall &call);
void mseLoss(const KernelCall &call);
void mseLossBackward(const KernelCall &call);

// Norm.cu: layer norm, InPlace-ABN's fused batch norm + activation, and
// inference batch norm (element-wise, so it may run in place).
void batchNormInference(const KernelCall &call);
void layerNorm(const KernelCall &call);
void layerNormBackward(const KernelCall &call);
void rmsNorm(const KernelCall &call);
void rmsNormBackward(const KernelCall &call);
void batchNormAct(const KernelCall &call);
void batchNormActBackward(const KernelCall &call);

// Attention.cu: memory-efficient attention (FlashAttention-2 style tiles,
// memopt's dropout mask) and its backward pass; no workspace.
void attention(const KernelCall &call);
void attentionBackward(const KernelCall &call);

// LinearCrossEntropy.cu: the chunked LM-head loss and its backward pass
// (cuBLAS GEMMs on a chunk of logits in the workspace, own row kernels).
void linearCrossEntropy(const KernelCall &call);
void linearCrossEntropyBackward(const KernelCall &call);
void linearCrossEntropyWithGrad(const KernelCall &call);

// Pool.cu: max and average pooling and their backward ops (own kernels:
// the backward ops do not get the forward output cuDNN's would need).
void maxPool2D(const KernelCall &call);
void avgPool2D(const KernelCall &call);
void maxPool2DBackward(const KernelCall &call);
void avgPool2DBackward(const KernelCall &call);

// DnnConv.cpp, DnnBatchNorm.cpp, DnnGemm.cpp: cuDNN (convolution, batch
// norm) and cuBLAS (linear, matmul).
void conv2d(const KernelCall &call);
void conv2dBackwardInput(const KernelCall &call);
void conv2dBackwardWeight(const KernelCall &call);
void batchNorm(const KernelCall &call);
void batchNormBackward(const KernelCall &call);
void linear(const KernelCall &call);
void matmul(const KernelCall &call);

/// Chooses the convolution algorithms of a conv step by timing the
/// candidates whose workspace is at most `workspaceLimit` bytes (like
/// torch.backends.cudnn.benchmark, but once, at load time), with
/// `cuda.workspace` as their scratch. Does nothing for other kernels.
void tuneStep(CudaContext &cuda, const Step &step,
              const std::vector<TensorRef> &inputs,
              const std::vector<TensorRef> &outputs, size_t workspaceLimit);

} // namespace memopt::runtime::cuda

#endif // MEMOPT_RUNTIME_LIB_CUDA_CUDAKERNELS_H
