//===- CollectiveShapes.h - the collectives' buffers ------------*- C++ -*-===//
//
// Part of the compiler-runtime contract, MLIR-free: the workspace of
// memopt.all_reduce and memopt.reduce_scatter, which the compiler plans
// (WorkspaceModel.cpp) and the runtime's kernels use
// (runtime/lib/Collectives.cpp).
//
// A bucket of T elements of one float type is packed into one buffer of
// `padded` elements, T rounded up to a multiple of the number of ranks N:
// rank r owns the r-th of N equal slices. The kernel sends slice k of its
// packed copy to rank k and receives every rank's slice r (an all-to-all),
// sums them in rank order, and gathers the N reduced slices back (an
// all-gather). The workspace holds the packed copy and the N received
// slices: two buffers of `padded` elements. A bucket of one tensor whose
// elements N divides is sent from the tensor itself and gathered straight
// into the result: the workspace is then the received slices alone.
//
// A parameter divided among the ranks (ZeRO, when one tensor is too large
// to balance the ranks whole) is divided by rows, dimension 0: rank r holds
// rowSliceRows rows from rowSliceStart, the first `rows % ranks` ranks one
// row more than the others.
//
// memopt.reduce_scatter (ZeRO stage 2) packs the bucket by owner (each
// owner's tensors one after the other; a tensor divided by rows gives each
// rank its rows, in the bucket's order among that rank's whole tensors),
// reduces the N slices as the all-reduce does, and instead of gathering every
// slice everywhere sends each owner the pieces of its part (an all-to-all of
// unequal pieces, into the packed buffer, sent already): the same workspace as
// the all-reduce's, with the same one-tensor case.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_CONTRACT_COLLECTIVESHAPES_H
#define MEMOPT_CONTRACT_COLLECTIVESHAPES_H

#include <cstdint>

namespace memopt::shapes {

/// The elements of one rank's slice of a bucket of `elements` over `ranks`.
inline int64_t allReduceSliceElements(int64_t elements, int64_t ranks) {
  return (elements + ranks - 1) / ranks;
}

/// The rows of a `rows`-row tensor that rank `rank` of `ranks` holds.
inline int64_t rowSliceRows(int64_t rows, int64_t ranks, int64_t rank) {
  return rows / ranks + (rank < rows % ranks ? 1 : 0);
}

/// The first of them.
inline int64_t rowSliceStart(int64_t rows, int64_t ranks, int64_t rank) {
  return rank * (rows / ranks) + (rank < rows % ranks ? rank : rows % ranks);
}

/// Whether a bucket of `tensors` tensors and `elements` elements is sent
/// as it is, without a packed copy.
inline bool allReduceSendsInPlace(int64_t tensors, int64_t elements,
                                  int64_t ranks) {
  return tensors == 1 && elements % ranks == 0;
}

/// memopt.all_reduce's workspace: the packed bucket (unless sent in place)
/// and the received slices, each `ranks` slices of `elementBytes`-byte
/// elements.
inline int64_t allReduceWorkspaceBytes(int64_t tensors, int64_t elements,
                                       int64_t ranks, int64_t elementBytes) {
  int64_t copies = allReduceSendsInPlace(tensors, elements, ranks) ? 1 : 2;
  return copies * allReduceSliceElements(elements, ranks) * ranks *
         elementBytes;
}

/// memopt.reduce_scatter's workspace: all_reduce's (the bucket packed by
/// owner and the received slices; one tensor the ranks divide is sent as
/// it is, and its owner receives its part straight into the result).
inline int64_t reduceScatterWorkspaceBytes(int64_t tensors, int64_t elements,
                                           int64_t ranks,
                                           int64_t elementBytes) {
  return allReduceWorkspaceBytes(tensors, elements, ranks, elementBytes);
}

} // namespace memopt::shapes

#endif // MEMOPT_CONTRACT_COLLECTIVESHAPES_H
