//===- CpuThreads.cpp - how many threads the CPU backend's BLAS uses ------===//

#include "memopt/runtime/CpuThreads.h"

#include "memopt/runtime/Error.h"

// OpenBLAS's own controls, absent from other BLAS libraries (weak: null
// then).
extern "C" int openblas_get_num_threads(void) __attribute__((weak));
extern "C" void openblas_set_num_threads(int) __attribute__((weak));

namespace memopt::runtime {

int cpuThreads() {
  return openblas_get_num_threads ? openblas_get_num_threads() : 1;
}

void setCpuThreads(int threads) {
  if (threads < 1)
    throw Error(ErrorCode::InvalidArgument,
                concat("CPU threads must be at least 1, got ", threads));
  if (openblas_set_num_threads)
    openblas_set_num_threads(threads);
}

} // namespace memopt::runtime
