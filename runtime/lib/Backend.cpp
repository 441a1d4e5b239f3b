//===- Backend.cpp - creating backends by device name ---------------------===//
//
// The set of backends is fixed at build time. The CUDA backend, when built,
// defines MEMOPT_RUNTIME_HAS_CUDA for this file and provides
// createCudaBackend() and cudaDeviceAvailable(); without it, asking for
// `cuda` is a clear error rather than a link failure or a silent fallback.
//
//===----------------------------------------------------------------------===//

#include "memopt/runtime/Backend.h"

#include "memopt/runtime/Error.h"

namespace memopt::runtime {

Backend::~Backend() = default;

#if MEMOPT_RUNTIME_HAS_CUDA
std::unique_ptr<Backend> createCudaBackend();
bool cudaDeviceAvailable();
#endif

std::unique_ptr<Backend> createBackend(std::string_view device) {
  if (device == "cpu")
    return createCpuBackend();
  if (device == "cuda") {
#if MEMOPT_RUNTIME_HAS_CUDA
    return createCudaBackend();
#else
    throw Error(ErrorCode::BackendUnavailable,
                "device 'cuda': memopt was built without the CUDA backend "
                "(use device 'cpu', or rebuild on a machine with nvcc, cuBLAS "
                "and cuDNN)");
#endif
  }
  if (device == "auto") {
#if MEMOPT_RUNTIME_HAS_CUDA
    if (cudaDeviceAvailable())
      return createCudaBackend();
#endif
    return createCpuBackend();
  }
  std::string known;
  for (const std::string &name : availableBackends())
    known += (known.empty() ? "" : ", ") + name;
  throw Error(ErrorCode::BackendUnavailable,
              concat("unknown device '", device,
                     "' (this build supports: ", known, ")"));
}

std::vector<std::string> availableBackends() {
#if MEMOPT_RUNTIME_HAS_CUDA
  return {"cpu", "cuda", "auto"};
#else
  return {"cpu", "auto"};
#endif
}

} // namespace memopt::runtime
