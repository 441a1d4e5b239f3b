//===- SliceMean.h - the collectives' reduction on the GPU ------*- C++ -*-===//
//
// Collectives::reduceSlices for tensors in device memory: the same sum, in
// rank order in f32 (f64 for f64), divided once, as the CPU's
// (Collectives.cpp), so that NCCL ranks and MPI ranks give the same bits.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_LIB_NCCL_SLICEMEAN_H
#define MEMOPT_RUNTIME_LIB_NCCL_SLICEMEAN_H

#include "memopt/runtime/DType.h"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace memopt::runtime::nccl {

/// Launches on `stream`: out[i] = (slices[i] + slices[count + i] + ... ) /
/// (mean ? ranks : 1) over `ranks` slices of `count` elements; `out` may be
/// the first slice.
cudaError_t reduceSlices(const void *slices, void *out, int64_t count,
                         int ranks, DType dtype, bool mean,
                         cudaStream_t stream);

} // namespace memopt::runtime::nccl

#endif // MEMOPT_RUNTIME_LIB_NCCL_SLICEMEAN_H
