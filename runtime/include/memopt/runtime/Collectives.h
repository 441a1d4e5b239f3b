//===- Collectives.h - communication between the ranks of a job -*- C++ -*-===//
//
// Data-parallel training runs one process per rank; the plan's collectives
// (memopt.all_reduce) exchange tensors between them. `Collectives` is what
// the executor needs from a communication library: byte-moving collectives
// over every rank of the job, on host memory. The reduction
// itself (its order, its arithmetic) is the runtime's own (allReduceMean),
// so every implementation gives the same bits. The MPI implementation is
// createMpiCollectives (MpiCollectives.h), built when CMake finds MPI.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_COLLECTIVES_H
#define MEMOPT_RUNTIME_COLLECTIVES_H

#include "memopt/runtime/Backend.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace memopt::runtime {

class Collectives {
public:
  virtual ~Collectives();

  /// This process's rank, in [0, size()).
  virtual int rank() const = 0;
  /// The ranks of the job.
  virtual int size() const = 0;
  /// What carries the bytes (`MPI (Open MPI 4.1.4)`), for messages.
  virtual std::string describe() const = 0;

  /// Every rank sends bytes [k·bytes, (k+1)·bytes) of `send` to rank k and
  /// receives rank k's slice for it at `recv + k·bytes`. Blocks until done;
  /// throws Error(Collective) on failure.
  virtual void allToAll(const void *send, void *recv, size_t bytes) = 0;
  /// allToAll with parts of any size: every rank sends `sendBytes[k]` bytes
  /// at `send + sendOffsets[k]` to rank k and receives rank k's part for it,
  /// `recvBytes[k]` bytes, at `recv + recvOffsets[k]` (each vector has
  /// size() entries; a rank's recvBytes[k] is rank k's sendBytes for it).
  virtual void allToAllV(const void *send, const std::vector<size_t> &sendBytes,
                         const std::vector<size_t> &sendOffsets, void *recv,
                         const std::vector<size_t> &recvBytes,
                         const std::vector<size_t> &recvOffsets) = 0;
  /// Every rank's `bytes` bytes at `mine` land at `all + k·bytes` (k the
  /// sender's rank) on every rank. `mine` must not overlap `all`.
  virtual void allGather(const void *mine, void *all, size_t bytes) = 0;
  /// Rank `root`'s `bytes` bytes at `data` land at `data` on every rank.
  virtual void broadcast(void *data, size_t bytes, int root) = 0;

  //===--- This rank's own memory -----------------------------------------===//
  // The collectives' kernels (below) pack, clear and reduce buffers in the
  // memory this implementation moves: host memory by default (MPI), device
  // memory for NCCL, which overrides these.

  /// Whether the tensors it moves are in device (CUDA) memory.
  virtual bool onDevice() const { return false; }
  /// Whether its calls may come from another thread than the one that
  /// created it (one call at a time), so that a collective can run beside
  /// the computation (Executor::setOverlapCollectives).
  virtual bool overlappable() const { return false; }
  /// Copies `bytes` bytes from `src` to `dst` (which do not overlap).
  virtual void copyLocal(void *dst, const void *src, size_t bytes);
  /// Sets `bytes` bytes at `dst` to zero.
  virtual void zeroLocal(void *dst, size_t bytes);
  /// The mean (or, unless `mean`, the sum) of the `ranks` slices at `slices`
  /// (each `count` elements of float `dtype`, one after the other), summed
  /// in rank order in f32 (f64 for f64) and rounded once, into `out`, which
  /// may be the first slice: the reduction whose bits every implementation
  /// must give.
  virtual void reduceSlices(const void *slices, void *out, int64_t count,
                            int ranks, DType dtype, bool mean);
};

/// memopt.all_reduce on host memory: each output is the mean over the ranks
/// of its input, summed in rank order in f32 (f64 for f64) and rounded once
/// to the element type (CollectiveShapes.h gives the workspace's layout).
/// The inputs share one float dtype; an output may be its own input's
/// storage. `workspace` should hold allReduceWorkspaceBytes; with fewer
/// bytes the kernel allocates its buffers for the call.
void allReduceMean(Collectives &collectives,
                   const std::vector<TensorRef> &inputs,
                   const std::vector<TensorRef> &outputs, Workspace workspace);

/// memopt.all_reduce with `sum`: the sum over the ranks (in rank order, in
/// the same precision), not divided.
void allReduceSum(Collectives &collectives,
                  const std::vector<TensorRef> &inputs,
                  const std::vector<TensorRef> &outputs, Workspace workspace);

/// memopt.reduce_scatter on host memory: input i belongs to rank
/// owners[i] (-1: divided among the ranks by rows); this rank's outputs are the
/// means of its inputs, in order, with all_reduce's bits (the same sum in rank
/// order, over the same slices), each rank sending an owner only the pieces of
/// its part it reduced. `workspace` should hold reduceScatterWorkspaceBytes;
/// with fewer bytes the kernel allocates its buffers for the call.
void reduceScatterMean(Collectives &collectives,
                       const std::vector<TensorRef> &inputs,
                       const std::vector<int64_t> &owners,
                       const std::vector<TensorRef> &outputs,
                       Workspace workspace);

/// memopt.all_gather on host memory: `output` holds every rank's `rows`
/// (rank k's rows of it by rowSliceStart/rowSliceRows, CollectiveShapes.h)
/// on every rank. `rows` must not share `output`'s storage.
void allGatherRows(Collectives &collectives, const TensorRef &rows,
                   const TensorRef &output);

/// memopt.broadcast on host memory: `output` holds rank `root`'s `input` on
/// every rank (the root copies it unless they share storage; the other
/// ranks' inputs are not read, and may be null: ZeRO stage 3's ranks that
/// do not hold the parameter).
void broadcastFrom(Collectives &collectives, const TensorRef *input,
                   const TensorRef &output, int64_t root);

/// Throws Error(Collective) on every rank unless every rank holds the same
/// `text` (a plan): ranks running different steps would deadlock or
/// exchange tensors that do not match. `what` names the text in the
/// message.
void checkSameOnEveryRank(Collectives &collectives, std::string_view text,
                          std::string_view what);

} // namespace memopt::runtime

#endif // MEMOPT_RUNTIME_COLLECTIVES_H
