//===- CpuThreads.cpp - how many threads the CPU backend's BLAS uses ------===//

#include "memopt/runtime/CpuThreads.h"

#include "memopt/runtime/Error.h"

#include <cstdlib>

// OpenBLAS's own controls, absent from other BLAS libraries (weak: null
// then).
extern "C" int openblas_get_num_threads(void) __attribute__((weak));
extern "C" void openblas_set_num_threads(int) __attribute__((weak));
// OpenBLAS's environment reader and thread server (exported by its shared
// library; weak, so absent with another BLAS).
extern "C" void openblas_read_env(void) __attribute__((weak));
extern "C" int blas_thread_shutdown_(void) __attribute__((weak));
extern "C" int blas_thread_init(void) __attribute__((weak));

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

bool shortenBlasSpin() {
  if (std::getenv("OPENBLAS_THREAD_TIMEOUT") || !openblas_read_env ||
      !blas_thread_shutdown_ || !blas_thread_init)
    return false;
  ::setenv("OPENBLAS_THREAD_TIMEOUT", "16", /*overwrite=*/0);
  // The timeout is read from the environment when the library loads and
  // applied when its workers start: read it again, restart them.
  openblas_read_env();
  blas_thread_shutdown_();
  blas_thread_init();
  return true;
}

} // namespace memopt::runtime
