//===- ParallelFor.cpp - the CPU kernels' own threads ---------------------===//

#include "ParallelFor.h"

#include "memopt/runtime/CpuThreads.h"

#include <omp.h>

#include <algorithm>
#include <exception>
#include <mutex>

// OpenBLAS's control, absent from other BLAS libraries (weak: null then).
extern "C" void openblas_set_num_threads(int) __attribute__((weak));

namespace memopt::runtime::cpu {

namespace {

/// OpenBLAS (the f64 products) single-threaded for the lifetime of the
/// object, so that each part's product runs on the part's thread, then back
/// to cpuThreads(). (oneDNN's f32 products run single-threaded inside a
/// parallel region by themselves.)
class SingleThreadedBlas {
public:
  SingleThreadedBlas() : saved(cpuThreads()) {
    if (saved > 1 && openblas_set_num_threads)
      openblas_set_num_threads(1);
  }
  ~SingleThreadedBlas() {
    if (saved > 1 && openblas_set_num_threads)
      openblas_set_num_threads(saved);
  }

private:
  int saved;
};

} // namespace

int kernelThreads() { return std::max(1, cpuThreads()); }

void parallelFor(int parts, const std::function<void(int)> &part) {
  if (parts <= 1) {
    if (parts == 1)
      part(0);
    return;
  }
  // A part that splits again, or a kernel called from inside another
  // parallel region, runs its parts itself, in order.
  if (omp_in_parallel()) {
    for (int i = 0; i < parts; ++i)
      part(i);
    return;
  }
  SingleThreadedBlas blas;
  std::mutex failure;
  std::exception_ptr error;
  // Part i on thread i: no exception may leave the region, so the first
  // one a part throws is kept and rethrown after it.
#pragma omp parallel for num_threads(parts) schedule(static, 1)
  for (int i = 0; i < parts; ++i) {
    try {
      part(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure);
      if (!error)
        error = std::current_exception();
    }
  }
  if (error)
    std::rethrow_exception(error);
}

} // namespace memopt::runtime::cpu
