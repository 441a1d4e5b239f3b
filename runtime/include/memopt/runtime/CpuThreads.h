//===- CpuThreads.h - how many threads the CPU backend's BLAS uses -*- C++ -*-//
//
// The CPU backend's matrix products (linear, matmul, convolutions through
// im2col, the LM-head loss) run on OpenBLAS, which starts one thread per
// core it sees; memopt's own CPU kernels run on the calling thread. On a
// shared machine, or beside other work, a user caps the products' threads:
// memopt-run --threads=N, memopt_set_cpu_threads in the C API. With a BLAS
// other than OpenBLAS the count is that library's business (1 is reported).
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
