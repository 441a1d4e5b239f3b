//===- CpuThreads.cpp - how many threads the CPU backend uses -------------===//

#include "memopt/runtime/CpuThreads.h"

#include "memopt/runtime/Error.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>

// OpenBLAS's own controls, absent from other BLAS libraries (weak: null
// then).
extern "C" void openblas_set_num_threads(int) __attribute__((weak));
// OpenBLAS's environment reader and thread server (exported by its shared
// library; weak, so absent with another BLAS).
extern "C" void openblas_read_env(void) __attribute__((weak));
extern "C" int blas_thread_shutdown_(void) __attribute__((weak));
extern "C" int blas_thread_init(void) __attribute__((weak));

namespace memopt::runtime {

namespace {
/// 0 until the first query or setting: then OpenMP's default for the
/// thread that asks (the cores it may use, or OMP_NUM_THREADS).
std::atomic<int> threadCount{0};
} // namespace

int cpuThreads() {
  int n = threadCount.load(std::memory_order_relaxed);
  if (n > 0)
    return n;
  // Inside a parallel region OpenMP answers for nested regions (1).
  int fallback = std::max(1, omp_in_parallel() ? omp_get_num_procs()
                                               : omp_get_max_threads());
  threadCount.compare_exchange_strong(n, fallback);
  return threadCount.load(std::memory_order_relaxed);
}

void setCpuThreads(int threads) {
  if (threads < 1)
    throw Error(ErrorCode::InvalidArgument,
                concat("CPU threads must be at least 1, got ", threads));
  threadCount.store(threads, std::memory_order_relaxed);
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
