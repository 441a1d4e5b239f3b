//===- CpuThreads.h - how many threads the CPU backend's BLAS uses -*- C++ -*-//
//
// The CPU backend's matrix products (linear, matmul, the LM-head loss) run
// on OpenBLAS, which starts one thread per core it sees; memopt's own
// kernels that split their work (convolutions, batch and layer norm,
// pooling, element-wise ops: lib/cpu/ParallelFor.h) use as many threads.
// On a shared machine, or beside other work, a user caps them: memopt-run
// --cpu-threads=N, memopt_set_cpu_threads in the C API. With a BLAS other
// than OpenBLAS the count is that library's business (1 is reported) and
// memopt's kernels run on the calling thread.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_CPUTHREADS_H
#define MEMOPT_RUNTIME_CPUTHREADS_H

namespace memopt::runtime {

/// The threads OpenBLAS's products use (1 with another BLAS).
int cpuThreads();

/// Lets OpenBLAS's products use `threads` threads from now on (process
/// wide). Throws Error(InvalidArgument) below 1.
void setCpuThreads(int threads);

/// OpenBLAS's idle workers spin (sched_yield) for 2^OPENBLAS_THREAD_TIMEOUT
/// cycles after each product before they sleep: 2^28 by default, about a
/// tenth of a second, during which memopt's own kernel threads share their
/// cores with spinning workers (a 2-thread attention kernel ran no faster
/// than one thread). Unless the environment sets OPENBLAS_THREAD_TIMEOUT,
/// this restarts OpenBLAS's workers with 2^16 cycles (tens of
/// microseconds) and returns true. Call it before any product runs and
/// while no other thread can call BLAS (memopt-run does, first thing); it
/// does nothing with another BLAS.
bool shortenBlasSpin();

} // namespace memopt::runtime

#endif // MEMOPT_RUNTIME_CPUTHREADS_H
