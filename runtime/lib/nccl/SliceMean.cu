//===- SliceMean.cu - the collectives' reduction on the GPU --------------===//
//
// One thread per element: the ranks' values summed in rank order in the
// accumulation type, divided once, rounded once to the element type (f16
// and bf16 with Half.h's round-to-nearest-even, as the CPU). Plain adds and
// one IEEE division: nvcc contracts no multiply-add here, and the build
// does not use fast math.
//
//===----------------------------------------------------------------------===//

#include "SliceMean.h"

#include "memopt/runtime/Half.h"

namespace memopt::runtime::nccl {
namespace {

template <typename T, typename Acc, typename Load, typename Store>
__global__ void meanOfRows(const T *in, T *out, int64_t count, int ranks,
                           Acc divisor, Load load, Store store) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count)
    return;
  Acc sum = load(in[i]);
  for (int k = 1; k < ranks; ++k)
    sum += load(in[k * count + i]);
  out[i] = store(sum / divisor);
}

template <typename T, typename Acc, typename Load, typename Store>
cudaError_t launch(const void *slices, void *out, int64_t count, int ranks,
                   bool mean, cudaStream_t stream, Load load, Store store) {
  if (count == 0)
    return cudaSuccess;
  constexpr int threads = 256;
  int64_t blocks = (count + threads - 1) / threads;
  meanOfRows<T, Acc><<<static_cast<unsigned>(blocks), threads, 0, stream>>>(
      static_cast<const T *>(slices), static_cast<T *>(out), count, ranks,
      static_cast<Acc>(mean ? ranks : 1), load, store);
  return cudaGetLastError();
}

struct Same {
  template <typename T> __device__ T operator()(T v) const { return v; }
};
struct HalfToFloat {
  __device__ float operator()(uint16_t v) const { return halfBitsToFloat(v); }
};
struct FloatToHalf {
  __device__ uint16_t operator()(float v) const { return floatToHalfBits(v); }
};
struct BFloatToFloat {
  __device__ float operator()(uint16_t v) const {
    return bfloat16BitsToFloat(v);
  }
};
struct FloatToBFloat {
  __device__ uint16_t operator()(float v) const {
    return floatToBFloat16Bits(v);
  }
};

} // namespace

cudaError_t reduceSlices(const void *slices, void *out, int64_t count,
                         int ranks, DType dtype, bool mean,
                         cudaStream_t stream) {
  switch (dtype) {
  case DType::F32:
    return launch<float, float>(slices, out, count, ranks, mean, stream, Same(),
                                Same());
  case DType::F64:
    return launch<double, double>(slices, out, count, ranks, mean, stream,
                                  Same(), Same());
  case DType::F16:
    return launch<uint16_t, float>(slices, out, count, ranks, mean, stream,
                                   HalfToFloat(), FloatToHalf());
  case DType::BF16:
    return launch<uint16_t, float>(slices, out, count, ranks, mean, stream,
                                   BFloatToFloat(), FloatToBFloat());
  default:
    return cudaErrorInvalidValue;
  }
}

} // namespace memopt::runtime::nccl
