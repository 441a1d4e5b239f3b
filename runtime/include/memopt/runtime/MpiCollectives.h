//===- MpiCollectives.h - Collectives over MPI ------------------*- C++ -*-===//
//
// The CPU backend's collectives: MPI (Debian's Open MPI), in the library
// MemOptRuntimeMpi, built when CMake finds MPI. A program that uses it runs
// under `mpirun -np N`, one process per rank.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_MPICOLLECTIVES_H
#define MEMOPT_RUNTIME_MPICOLLECTIVES_H

#include "memopt/runtime/Collectives.h"

#include <memory>

namespace memopt::runtime {

/// Initialises MPI (unless the program did) and returns the collectives
/// over every process of the job (a duplicate of MPI_COMM_WORLD whose
/// failures are returned, then thrown as Error(Collective)). MPI is
/// finalised when the last object returned is destroyed, if this call
/// initialised it.
std::unique_ptr<Collectives> createMpiCollectives();

/// Ends every process of the job with `code` (MPI_Abort): for a failure on
/// one rank, which the others, waiting in a collective, cannot see.
[[noreturn]] void abortMpiJob(int code);

} // namespace memopt::runtime

#endif // MEMOPT_RUNTIME_MPICOLLECTIVES_H
