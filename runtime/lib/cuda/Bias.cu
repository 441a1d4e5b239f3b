//===- Bias.cu - broadcasting a bias into an output -----------------------===//
//
// One thread per output element copies the bias element of its channel, so
// a following GEMM or convolution with beta = 1 adds the product to it, as
// cpu/Linear.cpp and cpu/Conv.cpp do; an output of a wider float type (the
// f32 logits of linear_cross_entropy's f16 bias) gets it converted exactly.
//
//===----------------------------------------------------------------------===//

#include "Bias.h"
#include "Device.cuh"

namespace memopt::runtime::cuda {

namespace {

__global__ void broadcastBias(void *out, const void *bias, size_t elementBytes,
                              int64_t n, int64_t channels, int64_t inner) {
  MEMOPT_GRID_STRIDE(i, n) {
    copyElement(out, i, bias, (i / inner) % channels, elementBytes);
  }
}

__global__ void broadcastBiasConverted(void *out, DType outType,
                                       const void *bias, DType biasType,
                                       int64_t n, int64_t channels,
                                       int64_t inner) {
  MEMOPT_GRID_STRIDE(i, n) {
    storeDouble(out, outType, i,
                loadDouble(bias, biasType, (i / inner) % channels));
  }
}

} // namespace

void fillWithBias(const KernelCall &call, const TensorRef &out,
                  const TensorRef &bias, int64_t inner) {
  if (out.numElements == 0 || bias.numElements == 0)
    return;
  if (out.dtype == bias.dtype)
    broadcastBias<<<blocksFor(out.numElements), kThreads, 0,
                    call.cuda.stream>>>(
        out.data, bias.data, dtypeSize(out.dtype), out.numElements,
        bias.numElements, inner < 1 ? 1 : inner);
  else
    broadcastBiasConverted<<<blocksFor(out.numElements), kThreads, 0,
                             call.cuda.stream>>>(
        out.data, out.dtype, bias.data, bias.dtype, out.numElements,
        bias.numElements, inner < 1 ? 1 : inner);
  checkLaunch("bias");
}

} // namespace memopt::runtime::cuda
