//===- MixedPrecision.cu - casts and dynamic loss scaling on the GPU ------===//
//
// The CUDA versions of cpu/MixedPrecision.cpp: cast, found_inf, unscale,
// update_loss_scale and select, with PyTorch's GradScaler semantics and the
// scalar arithmetic of LossScale.h. Every operand is read in its own dtype
// (found_inf tests f16/bf16 bit patterns), and the 0-d operands (scale,
// found_inf flag, growth tracker, select's condition) are read on the device
// by the kernels themselves, so nothing waits for the host.
//
// found_inf clears its flag, then each launch sets it to 1 where an element
// of one of its inputs is +-inf or NaN; the stream orders the clear before
// the tests. unscale reads element i before writing it, so it may run in
// place; update_loss_scale is one thread that reads both old values before
// writing the new ones over them.
//
//===----------------------------------------------------------------------===//

#include "Device.cuh"

#include "memopt/runtime/LossScale.h"

#include <algorithm>

namespace memopt::runtime::cuda {

namespace {

//===----------------------------------------------------------------------===//
// cast
//===----------------------------------------------------------------------===//

/// Through double, which holds every float dtype exactly; storeDouble
/// rounds to f16/bf16 through float like the CPU's convertFloats (double ->
/// float -> half).
__global__ void castKernel(const void *x, DType from, void *y, DType to,
                           int64_t n) {
  MEMOPT_GRID_STRIDE(i, n) { storeDouble(y, to, i, loadDouble(x, from, i)); }
}

//===----------------------------------------------------------------------===//
// found_inf
//===----------------------------------------------------------------------===//

/// Up to this many inputs are tested by one launch (blockIdx.y picks one).
constexpr int kFoundInfBatch = 32;

struct FoundInfBatch {
  const void *data[kFoundInfBatch];
  int64_t numElements[kFoundInfBatch];
  DType dtype[kFoundInfBatch];
};

__device__ inline bool nonFiniteAt(const void *p, DType t, int64_t i) {
  switch (t) {
  case DType::F32:
    return math::nonFinite(static_cast<const float *>(p)[i]);
  case DType::F64:
    return math::nonFinite(static_cast<const double *>(p)[i]);
  case DType::F16:
    return math::halfBitsNonFinite(static_cast<const uint16_t *>(p)[i]);
  case DType::BF16:
    return math::bfloat16BitsNonFinite(static_cast<const uint16_t *>(p)[i]);
  default:
    return false;
  }
}

__global__ void foundInfKernel(FoundInfBatch batch, float *flag) {
  // Another input (or block) already found one: nothing left to learn.
  if (*static_cast<volatile float *>(flag) != 0.0f)
    return;
  const int k = blockIdx.y;
  const void *p = batch.data[k];
  const DType t = batch.dtype[k];
  const int64_t n = batch.numElements[k];
  MEMOPT_GRID_STRIDE(i, n) {
    if (nonFiniteAt(p, t, i)) {
      *flag = 1.0f;
      return;
    }
  }
}

//===----------------------------------------------------------------------===//
// unscale
//===----------------------------------------------------------------------===//

__global__ void unscaleKernel(const void *g, void *out, DType dtype, int64_t n,
                              const float *scale) {
  const float inv = math::inverseLossScale(*scale);
  if (dtype == DType::F64) {
    const double *p = static_cast<const double *>(g);
    double *q = static_cast<double *>(out);
    MEMOPT_GRID_STRIDE(i, n) { q[i] = math::unscaleValue(p[i], inv); }
    return;
  }
  MEMOPT_GRID_STRIDE(i, n) {
    store(out, dtype, i, math::unscaleValue(load(g, dtype, i), inv));
  }
}

//===----------------------------------------------------------------------===//
// update_loss_scale
//===----------------------------------------------------------------------===//

__global__ void updateLossScaleKernel(const float *scale,
                                      const int32_t *tracker,
                                      const float *foundInf, float *newScale,
                                      int32_t *newTracker, double growthFactor,
                                      double backoffFactor,
                                      int64_t growthInterval) {
  const math::LossScaleState next = math::updateLossScale(
      *scale, *tracker, *foundInf, growthFactor, backoffFactor, growthInterval);
  *newScale = next.scale;
  *newTracker = next.growthTracker;
}

//===----------------------------------------------------------------------===//
// select
//===----------------------------------------------------------------------===//

/// out = condition ? a : b, element by element and bit for bit; nothing is
/// written when the chosen operand is the output itself.
__global__ void selectKernel(const float *condition, const void *a,
                             const void *b, void *out, int64_t n,
                             size_t elementBytes) {
  const void *chosen = math::flagSet(*condition) ? a : b;
  if (chosen == out)
    return;
  MEMOPT_GRID_STRIDE(i, n) { copyElement(out, i, chosen, i, elementBytes); }
}

} // namespace

void cast(const KernelCall &call) {
  const TensorRef &x = call.in(0), &y = call.out(0);
  if (x.dtype == y.dtype)
    return copyAsync(call, y.data, x.data, x.bytes());
  const int64_t n = x.numElements;
  castKernel<<<blocksFor(n), kThreads, 0, call.cuda.stream>>>(
      x.data, x.dtype, y.data, y.dtype, n);
  checkLaunch("cast");
}

void foundInf(const KernelCall &call) {
  float *flag = call.out(0).as<float>();
  check(cudaMemsetAsync(flag, 0, sizeof(float), call.cuda.stream),
        "cudaMemsetAsync (found_inf)");
  for (size_t first = 0; first < call.inputs.size(); first += kFoundInfBatch) {
    const size_t count =
        std::min<size_t>(kFoundInfBatch, call.inputs.size() - first);
    FoundInfBatch batch{};
    int64_t largest = 0;
    for (size_t k = 0; k < count; ++k) {
      const TensorRef &t = call.in(first + k);
      if (!isFloatDType(t.dtype))
        throw Error(ErrorCode::Internal,
                    runtime::concat("found_inf called with dtype ",
                                    dtypeName(t.dtype)));
      batch.data[k] = t.data;
      batch.numElements[k] = t.numElements;
      batch.dtype[k] = t.dtype;
      largest = std::max(largest, t.numElements);
    }
    const dim3 grid(std::min(blocksFor(largest), 1024u),
                    static_cast<unsigned>(count));
    foundInfKernel<<<grid, kThreads, 0, call.cuda.stream>>>(batch, flag);
    checkLaunch("found_inf");
  }
}

void unscale(const KernelCall &call) {
  const TensorRef &g = call.in(0), &out = call.out(0);
  if (!isFloatDType(g.dtype))
    throw Error(
        ErrorCode::Internal,
        runtime::concat("unscale called with dtype ", dtypeName(g.dtype)));
  const int64_t n = g.numElements;
  unscaleKernel<<<blocksFor(n), kThreads, 0, call.cuda.stream>>>(
      g.data, out.data, g.dtype, n, call.in(1).as<const float>());
  checkLaunch("unscale");
}

void updateLossScale(const KernelCall &call) {
  const LossScaleAttrs &a = call.step.get<LossScaleAttrs>();
  updateLossScaleKernel<<<1, 1, 0, call.cuda.stream>>>(
      call.in(0).as<const float>(), call.in(1).as<const int32_t>(),
      call.in(2).as<const float>(), call.out(0).as<float>(),
      call.out(1).as<int32_t>(), a.growthFactor, a.backoffFactor,
      a.growthInterval);
  checkLaunch("update_loss_scale");
}

void select(const KernelCall &call) {
  const TensorRef &out = call.out(0);
  const int64_t n = out.numElements;
  selectKernel<<<blocksFor(n), kThreads, 0, call.cuda.stream>>>(
      call.in(0).as<const float>(), call.in(1).data, call.in(2).data, out.data,
      n, dtypeSize(out.dtype));
  checkLaunch("select");
}

} // namespace memopt::runtime::cuda
