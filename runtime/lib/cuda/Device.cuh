//===- Device.cuh - device-side helpers of the CUDA kernels ----*- CUDA -*-===//
//
// Loads and stores of one element of any runtime dtype (computed in float,
// or double for f64 tensors), tensor shapes passed by value, and the launch
// arithmetic shared by the .cu files. f16 and bf16 round to nearest even with
// Half.h's functions, the same as the CPU backend's conversions, so a CPU
// and a GPU kernel that compute the same f32 value store the same bits.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_LIB_CUDA_DEVICE_CUH
#define MEMOPT_RUNTIME_LIB_CUDA_DEVICE_CUH

#include "CudaKernels.h"

#include "memopt/runtime/DType.h"
#include "memopt/runtime/Half.h"

#include <cstdint>

namespace memopt::runtime::cuda {

__device__ inline double loadDouble(const void *p, DType t, int64_t i) {
  switch (t) {
  case DType::F32:
    return static_cast<const float *>(p)[i];
  case DType::F64:
    return static_cast<const double *>(p)[i];
  case DType::F16:
    return halfBitsToFloat(static_cast<const uint16_t *>(p)[i]);
  case DType::BF16:
    return bfloat16BitsToFloat(static_cast<const uint16_t *>(p)[i]);
  case DType::I32:
    return static_cast<const int32_t *>(p)[i];
  case DType::I64:
    return static_cast<double>(static_cast<const int64_t *>(p)[i]);
  }
  return 0;
}

/// Element `i` of a float tensor in f32 (f64 tensors are rounded; kernels
/// that must keep f64 use loadDouble).
__device__ inline float load(const void *p, DType t, int64_t i) {
  switch (t) {
  case DType::F32:
    return static_cast<const float *>(p)[i];
  case DType::F16:
    return halfBitsToFloat(static_cast<const uint16_t *>(p)[i]);
  case DType::BF16:
    return bfloat16BitsToFloat(static_cast<const uint16_t *>(p)[i]);
  default:
    return static_cast<float>(loadDouble(p, t, i));
  }
}

__device__ inline void storeDouble(void *p, DType t, int64_t i, double v) {
  switch (t) {
  case DType::F32:
    static_cast<float *>(p)[i] = static_cast<float>(v);
    return;
  case DType::F64:
    static_cast<double *>(p)[i] = v;
    return;
  case DType::F16:
    static_cast<uint16_t *>(p)[i] = floatToHalfBits(static_cast<float>(v));
    return;
  case DType::BF16:
    static_cast<uint16_t *>(p)[i] = floatToBFloat16Bits(static_cast<float>(v));
    return;
  case DType::I32:
    static_cast<int32_t *>(p)[i] = static_cast<int32_t>(v);
    return;
  case DType::I64:
    static_cast<int64_t *>(p)[i] = static_cast<int64_t>(v);
    return;
  }
}

__device__ inline void store(void *p, DType t, int64_t i, float v) {
  switch (t) {
  case DType::F32:
    static_cast<float *>(p)[i] = v;
    return;
  case DType::F16:
    static_cast<uint16_t *>(p)[i] = floatToHalfBits(v);
    return;
  case DType::BF16:
    static_cast<uint16_t *>(p)[i] = floatToBFloat16Bits(v);
    return;
  default:
    storeDouble(p, t, i, v);
  }
}

/// An index element (i32 or i64) as int64_t.
__device__ inline int64_t loadIndex(const void *p, DType t, int64_t i) {
  if (t == DType::I32)
    return static_cast<const int32_t *>(p)[i];
  return static_cast<const int64_t *>(p)[i];
}

/// Copies element `from` of `src` to element `to` of `dst` bit for bit
/// (same dtype), for data movement.
__device__ inline void copyElement(void *dst, int64_t to, const void *src,
                                   int64_t from, size_t elementBytes) {
  switch (elementBytes) {
  case 2:
    static_cast<uint16_t *>(dst)[to] = static_cast<const uint16_t *>(src)[from];
    return;
  case 4:
    static_cast<uint32_t *>(dst)[to] = static_cast<const uint32_t *>(src)[from];
    return;
  default:
    static_cast<uint64_t *>(dst)[to] = static_cast<const uint64_t *>(src)[from];
    return;
  }
}

/// Element `i` of a float tensor in the compute type C: float, or double
/// for the steps the CPU backend computes in double.
template <typename C>
__device__ inline C loadAs(const void *p, DType t, int64_t i);
template <>
__device__ inline float loadAs<float>(const void *p, DType t, int64_t i) {
  return load(p, t, i);
}
template <>
__device__ inline double loadAs<double>(const void *p, DType t, int64_t i) {
  return loadDouble(p, t, i);
}
__device__ inline void storeAs(void *p, DType t, int64_t i, float v) {
  store(p, t, i, v);
}
__device__ inline void storeAs(void *p, DType t, int64_t i, double v) {
  storeDouble(p, t, i, v);
}

/// Whether the CPU backend would compute the step in double: some float
/// operand is f64.
inline bool computesInDouble(const KernelCall &call) {
  for (const auto *list : {&call.inputs, &call.outputs})
    for (const TensorRef &t : *list)
      if (t.dtype == DType::F64)
        return true;
  return false;
}

/// Calls `f(C{})` with the step's compute type C: double when any operand is
/// f64 (as the CPU backend computes it), float otherwise.
template <typename F> void dispatchCompute(const KernelCall &call, F &&f) {
  if (computesInDouble(call))
    return f(double{});
  return f(float{});
}

/// Arithmetic rounded after each operation, never contracted into fused
/// multiply-adds, so a formula rounds as the CPU build computes it.
__device__ inline float addRn(float a, float b) { return __fadd_rn(a, b); }
__device__ inline double addRn(double a, double b) { return __dadd_rn(a, b); }
__device__ inline float subRn(float a, float b) { return __fsub_rn(a, b); }
__device__ inline double subRn(double a, double b) { return __dsub_rn(a, b); }
__device__ inline float mulRn(float a, float b) { return __fmul_rn(a, b); }
__device__ inline double mulRn(double a, double b) { return __dmul_rn(a, b); }
__device__ inline float divRn(float a, float b) { return __fdiv_rn(a, b); }
__device__ inline double divRn(double a, double b) { return __ddiv_rn(a, b); }
__device__ inline float sqrtRn(float a) { return __fsqrt_rn(a); }
__device__ inline double sqrtRn(double a) { return __dsqrt_rn(a); }

constexpr unsigned kFullMask = 0xffffffffu;

/// The sum over the warp, the same bits in every lane.
template <typename T> __device__ inline T warpSum(T v) {
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(kFullMask, v, o);
  return v;
}

/// The sum over the block (blockDim.x a multiple of 32, at most 1024), the
/// same bits in every thread, in a fixed order. Every thread must call it.
__device__ inline double blockSum(double v) {
  __shared__ double partial[32];
  v = warpSum(v);
  if ((threadIdx.x & 31) == 0)
    partial[threadIdx.x >> 5] = v;
  __syncthreads();
  double total = 0;
  for (unsigned w = 0; w < blockDim.x / 32; ++w)
    total += partial[w];
  __syncthreads();
  return total;
}

/// Threads per block of the element-wise launches.
constexpr int kThreads = 256;

/// Blocks for `n` elements with a grid-stride loop (capped; the loop covers
/// the rest).
inline unsigned blocksFor(int64_t n) {
  int64_t blocks = (n + kThreads - 1) / kThreads;
  if (blocks < 1)
    blocks = 1;
  return static_cast<unsigned>(blocks > 65535 * 8 ? 65535 * 8 : blocks);
}

#define MEMOPT_GRID_STRIDE(i, n)                                               \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n);    \
       i += int64_t(blockDim.x) * gridDim.x)

/// Sets the backend's error flag (first writer wins) to `code`.
__device__ inline void raiseError(int *flag, int code) {
  atomicCAS(flag, 0, code);
}

} // namespace memopt::runtime::cuda

#endif // MEMOPT_RUNTIME_LIB_CUDA_DEVICE_CUH
