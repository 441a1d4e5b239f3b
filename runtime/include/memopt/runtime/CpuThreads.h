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

} // namespace memopt::runtime

#endif // MEMOPT_RUNTIME_CPUTHREADS_H
