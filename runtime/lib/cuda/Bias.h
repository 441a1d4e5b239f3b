//===- Bias.h - broadcasting a bias into an output --------------*- C++ -*-===//
//
// Internal to the CUDA backend. conv2d and linear add their bias the way the
// CPU kernels do: the output is first filled with the bias, broadcast over
// everything but the channel (feature) dimension, and the GEMM or
// convolution then accumulates into it (beta = 1), so the sum is rounded to
// the output's dtype once.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_LIB_CUDA_BIAS_H
#define MEMOPT_RUNTIME_LIB_CUDA_BIAS_H

#include "CudaKernels.h"

#include <cstdint>

namespace memopt::runtime::cuda {

/// Sets element i of `out` to element (i / inner) % bias.numElements of
/// `bias` (of the same dtype, copied bit for bit, or converted to `out`'s
/// wider float dtype), on the call's stream: `inner` is
/// 1 for linear's rows x features output, OH*OW for conv2d's NxKxOHxOW one.
void fillWithBias(const KernelCall &call, const TensorRef &out,
                  const TensorRef &bias, int64_t inner);

} // namespace memopt::runtime::cuda

#endif // MEMOPT_RUNTIME_LIB_CUDA_BIAS_H
