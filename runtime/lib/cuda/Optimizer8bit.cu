//===- Optimizer8bit.cu - Adam with block-wise 8-bit moments on the GPU ---===//
//
// The CUDA version of cpu/Optimizer.cpp's adam8bit_update: one thread block
// per quantisation block (memopt/Contract/OptimizerShapes.h), one thread per
// element. Each thread dequantises its moments, updates them and the
// parameter in the compute type with Adam's arithmetic (rounded intrinsics,
// as Optimizer.cu), the block reduces the new moments' absolute maxima in
// shared memory, and each thread stores its nearest codes
// (memopt/runtime/Quantization.h, shared with the CPU backend). The codes
// live in constant memory, copied from the host's tables once per process.
//
// Every output's element i is written only after all of the block's
// inputs are read, so new values may overwrite the old ones (Kernel.h).
// A nonzero `skip` flag copies every old value to its output instead.
//
//===----------------------------------------------------------------------===//

#include "AdamStep.cuh"
#include "Device.cuh"

#include "memopt/Contract/OptimizerShapes.h"
#include "memopt/runtime/ElementwiseMath.h"
#include "memopt/runtime/LossScale.h"
#include "memopt/runtime/Quantization.h"

#include <mutex>

namespace memopt::runtime::cuda {

namespace {

constexpr int kBlock = static_cast<int>(shapes::kQuantizationBlock);

__constant__ float signedCode[quant::kCodeSize];
__constant__ float unsignedCode[quant::kCodeSize];

/// Copies the codes to constant memory (once; the copy is synchronous).
void uploadCodes() {
  static std::once_flag once;
  static cudaError_t status = cudaSuccess;
  std::call_once(once, [] {
    const auto s = quant::dynamicMap(true), u = quant::dynamicMap(false);
    status = cudaMemcpyToSymbol(signedCode, s.data(), sizeof(signedCode));
    if (status == cudaSuccess)
      status = cudaMemcpyToSymbol(unsignedCode, u.data(), sizeof(unsignedCode));
  });
  check(status, "cudaMemcpyToSymbol");
}

template <typename T> struct Adam8bitParams {
  const void *param, *grad;
  const uint8_t *m, *v;
  const float *mMax, *vMax;
  void *newParam;
  uint8_t *newM, *newV;
  float *newMMax, *newVMax;
  const void *step;
  const float *skip, *lossScale;
  DType paramDType, gradDType, stepDType;
  int64_t n;
  AdamStep<T> adam;
  int *errorFlag;
  int errorCode;
};

template <typename T> __device__ inline T blockMax(T v, T *scratch) {
  scratch[threadIdx.x] = v;
  __syncthreads();
  for (int s = kBlock / 2; s > 0; s >>= 1) {
    if (static_cast<int>(threadIdx.x) < s)
      scratch[threadIdx.x] =
          max(scratch[threadIdx.x], scratch[threadIdx.x + s]);
    __syncthreads();
  }
  const T result = scratch[0];
  __syncthreads();
  return result;
}

template <typename T>
__global__ void __launch_bounds__(kBlock) adam8bitKernel(Adam8bitParams<T> a) {
  const int64_t b = blockIdx.x;
  const int64_t i = b * kBlock + threadIdx.x;
  const bool active = i < a.n;
  if (a.skip && math::flagSet(*a.skip)) {
    if (active) {
      const uint8_t m = a.m[i], v = a.v[i];
      const T p = loadAs<T>(a.param, a.paramDType, i);
      if (a.newParam != a.param)
        storeAs(a.newParam, a.paramDType, i, p);
      a.newM[i] = m;
      a.newV[i] = v;
    }
    if (threadIdx.x == 0) {
      const float mMax = a.mMax[b], vMax = a.vMax[b];
      a.newMMax[b] = mMax;
      a.newVMax[b] = vMax;
    }
    return;
  }
  const double t = static_cast<double>(loadAs<T>(a.step, a.stepDType, 0));
  if (!(t >= 1) || math::nonFinite(t)) {
    if (b == 0 && threadIdx.x == 0)
      raiseError(a.errorFlag, a.errorCode);
    return;
  }
  __shared__ T stepSize, biasCorrection2Sqrt, mScale, vScale;
  __shared__ T scratch[kBlock];
  if (threadIdx.x == 0) {
    a.adam.corrections(t, stepSize, biasCorrection2Sqrt);
    mScale = static_cast<T>(a.mMax[b]);
    vScale = static_cast<T>(a.vMax[b]);
  }
  __syncthreads();
  T m = 0, v = 0;
  if (active) {
    const T p0 = loadAs<T>(a.param, a.paramDType, i);
    T g0 = loadAs<T>(a.grad, a.gradDType, i);
    if (a.lossScale)
      g0 = static_cast<T>(
          math::unscaleValue(g0, math::inverseLossScale(*a.lossScale)));
    m = mulRn(static_cast<T>(signedCode[a.m[i]]), mScale);
    v = mulRn(static_cast<T>(unsignedCode[a.v[i]]), vScale);
    storeAs(a.newParam, a.paramDType, i,
            a.adam(p0, g0, m, v, stepSize, biasCorrection2Sqrt));
  }
  // Every thread of the block reaches the reductions.
  const float mMax =
      static_cast<float>(blockMax<T>(active ? fabs(m) : T(0), scratch));
  const float vMax =
      static_cast<float>(blockMax<T>(active ? fabs(v) : T(0), scratch));
  if (active) {
    a.newM[i] = quant::quantize(signedCode, true, static_cast<float>(m), mMax);
    a.newV[i] =
        quant::quantize(unsignedCode, false, static_cast<float>(v), vMax);
  }
  if (threadIdx.x == 0) {
    a.newMMax[b] = mMax;
    a.newVMax[b] = vMax;
  }
}

template <typename T> void adam8bitImpl(const KernelCall &call) {
  const AdamAttrs &attrs = call.step.get<AdamAttrs>();
  Adam8bitParams<T> a;
  a.param = call.in(0).data;
  a.grad = call.in(1).data;
  a.m = call.in(2).as<const uint8_t>();
  a.mMax = call.in(3).as<const float>();
  a.v = call.in(4).as<const uint8_t>();
  a.vMax = call.in(5).as<const float>();
  a.step = call.in(6).data;
  a.skip = call.inputs.size() > 7 ? call.in(7).as<const float>() : nullptr;
  a.lossScale = call.inputs.size() > 8 ? call.in(8).as<const float>() : nullptr;
  a.newParam = call.out(0).data;
  a.newM = call.out(1).as<uint8_t>();
  a.newMMax = call.out(2).as<float>();
  a.newV = call.out(3).as<uint8_t>();
  a.newVMax = call.out(4).as<float>();
  a.paramDType = call.in(0).dtype;
  a.gradDType = call.in(1).dtype;
  a.stepDType = call.in(6).dtype;
  a.n = call.out(0).numElements;
  a.adam = AdamStep<T>::from(attrs);
  a.errorFlag = call.cuda.errorFlag;
  a.errorCode = static_cast<int>(call.context.stepIndex) + 1;
  const int64_t blocks = shapes::quantizationBlocks(a.n);
  if (blocks == 0)
    return;
  adam8bitKernel<T>
      <<<static_cast<unsigned>(blocks), kBlock, 0, call.cuda.stream>>>(a);
  checkLaunch("adam8bit_update");
}

} // namespace

void adam8bitUpdate(const KernelCall &call) {
  uploadCodes();
  dispatchCompute(call, [&](auto tag) { adam8bitImpl<decltype(tag)>(call); });
}

} // namespace memopt::runtime::cuda
