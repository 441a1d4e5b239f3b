//===- CollectiveShapes.h - the collectives' buffers ------------*- C++ -*-===//
//
// Part of the compiler-runtime contract, MLIR-free: the workspace of
// memopt.all_reduce, which the compiler plans (WorkspaceModel.cpp) and the
// runtime's kernel uses (runtime/lib/AllReduce.cpp).
//
// A bucket of T elements of one float type is packed into one buffer of
// `padded` elements, T rounded up to a multiple of the number of ranks N:
// rank r owns the r-th of N equal slices. The kernel sends slice k of its
// packed copy to rank k and receives every rank's slice r (an all-to-all),
// sums them in rank order, and gathers the N reduced slices back (an
// all-gather). The workspace holds the packed copy and the N received
// slices: two buffers of `padded` elements.
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

/// memopt.all_reduce's workspace: the packed bucket and the received
/// slices, each `ranks` slices of `elementBytes`-byte elements.
inline int64_t allReduceWorkspaceBytes(int64_t elements, int64_t ranks,
                                       int64_t elementBytes) {
  return 2 * allReduceSliceElements(elements, ranks) * ranks * elementBytes;
}

} // namespace memopt::shapes

#endif // MEMOPT_CONTRACT_COLLECTIVESHAPES_H
