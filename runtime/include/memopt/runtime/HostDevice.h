//===- HostDevice.h - host/device function annotations ----------*- C++ -*-===//
//
// The CPU and CUDA backends share their scalar arithmetic (element-wise math,
// half-precision conversion, the dropout hash) so that the CPU tests cover
// the GPU's numerics. Functions written once for both are marked MEMOPT_HD,
// which expands to `__host__ __device__` when compiled by nvcc and to
// nothing otherwise.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_HOSTDEVICE_H
#define MEMOPT_RUNTIME_HOSTDEVICE_H

#if defined(__CUDACC__)
#define MEMOPT_HD __host__ __device__
#else
#define MEMOPT_HD
#endif

#endif // MEMOPT_RUNTIME_HOSTDEVICE_H
