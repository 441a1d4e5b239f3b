//===- NcclCollectives.h - Collectives over NCCL ----------------*- C++ -*-===//
//
// The CUDA backend's collectives: NCCL, in the library MemOptRuntimeNccl,
// built when the CUDA backend is and CMake finds NCCL (nccl.h and libnccl,
// from the CUDA toolkit or the nvidia-nccl-cu13 wheel). One process per
// rank and one GPU per process, as NCCL requires; the processes find each
// other through another Collectives (MPI), which carries NCCL's unique id.
// The tensors are in device memory: the kernels of Collectives.h pack and
// reduce them there (the reduction is memopt's own, in rank order, so the
// bits are the CPU's) and NCCL moves them.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_NCCLCOLLECTIVES_H
#define MEMOPT_RUNTIME_NCCLCOLLECTIVES_H

#include "memopt/runtime/Collectives.h"

#include <memory>

namespace memopt::runtime {

/// NCCL collectives over the ranks of `bootstrap` (each process calls it
/// with its own, in the same order), on CUDA device `device`, which becomes
/// the calling thread's current device. Throws Error(BackendUnavailable)
/// without a usable GPU, Error(Collective) when NCCL fails.
std::unique_ptr<Collectives> createNcclCollectives(Collectives &bootstrap,
                                                   int device);

/// The CUDA device this process should use: its rank among the processes
/// of the job on this machine (Open MPI's OMPI_COMM_WORLD_LOCAL_RANK, else
/// `rank`).
int localDeviceIndex(int rank);

} // namespace memopt::runtime

#endif // MEMOPT_RUNTIME_NCCLCOLLECTIVES_H
