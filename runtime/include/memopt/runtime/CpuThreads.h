//===- CpuThreads.h - how many threads the CPU backend uses -----*- C++ -*-===//
//
// The CPU backend's f32 matrix products (linear, matmul, convolutions'
// products, the LM-head loss) run on oneDNN's GEMM, whose threads are
// OpenMP's; memopt's own kernels that split their work (convolutions, batch
// and layer norm, pooling, element-wise ops: lib/cpu/ParallelFor.h) run on
// the same OpenMP threads, and the f64 products on OpenBLAS. One count
// governs all three: by default the cores OpenMP sees (OMP_NUM_THREADS
// overrides it). On a shared machine, or beside other work, a user caps it:
// memopt-run --cpu-threads=N, memopt_set_cpu_threads in the C API.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_CPUTHREADS_H
#define MEMOPT_RUNTIME_CPUTHREADS_H

namespace memopt::runtime {

/// The threads the CPU backend's products and kernels use (at least 1).
int cpuThreads();

/// Lets the CPU backend use `threads` threads from now on (process wide).
/// Throws Error(InvalidArgument) below 1.
void setCpuThreads(int threads);

/// OpenBLAS's idle workers spin (sched_yield) for 2^OPENBLAS_THREAD_TIMEOUT
/// cycles after each product before they sleep: 2^28 by default, about a
/// tenth of a second, during which memopt's own kernel threads share their
/// cores with spinning workers. Unless the environment sets
/// OPENBLAS_THREAD_TIMEOUT, this restarts OpenBLAS's workers with 2^16
/// cycles (tens of microseconds) and returns true. Call it before any
/// product runs and while no other thread can call BLAS (memopt-run does,
/// first thing); it does nothing with another BLAS. (Only f64 products run
/// on OpenBLAS now; the f32 ones are oneDNN's.)
bool shortenBlasSpin();

} // namespace memopt::runtime

#endif // MEMOPT_RUNTIME_CPUTHREADS_H
