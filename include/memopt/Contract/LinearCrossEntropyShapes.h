//===- LinearCrossEntropyShapes.h - the chunked LM-head loss ----*- C++ -*-===//
//
// Part of the compiler-runtime contract (ShapeRule.h), MLIR-free: the shape
// rule of memopt.linear_cross_entropy and its backward op. Their kernels
// compute the logits `chunk` rows at a time, at most N, in a workspace of
// those rows (fewer under a cap, at least one; WorkspaceModel.cpp).
//
// hidden is NxH, weight VxH (a linear layer's, PyTorch's layout; tied
// embeddings as they are) and labels N integers; the loss is 0-d and the
// per-row log-sum-exp of the logits N. The kernels compute the logits of
// `chunk` rows at a time (chunk x V elements of the compute type, their
// workspace), never NxV. After the rows, when the N rows take more than
// one chunk and a cap leaves room, the workspace holds kGemmScratchBytes
// (plus alignment slack) that the CUDA backend gives cuBLAS for the
// chunk's GEMMs: without a workspace cuBLAS runs the head's GEMMs 3.7x
// slower at 80-row chunks on an H200 (bench/gpu/lce_gemm.cu), 1.2x at 1024
// rows; the CPU leaves it unused.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_CONTRACT_LINEARCROSSENTROPYSHAPES_H
#define MEMOPT_CONTRACT_LINEARCROSSENTROPYSHAPES_H

#include "memopt/Contract/ShapeRule.h"

namespace memopt::shapes {

/// The GEMM scratch after a chunk's rows: 32 MiB, the workspace PyTorch
/// gives cuBLAS on Hopper GPUs.
constexpr int64_t kGemmScratchBytes = int64_t(32) << 20;
/// Its start is rounded up to this many bytes (cuBLAS's requirement for a
/// workspace pointer), so the compiler reserves this much more.
constexpr int64_t kGemmScratchAlignment = 256;

/// linear_cross_entropy_with_grad's workspace starts with the N row
/// log-sum-exps (`computeBytes` each), rounded up to this many bytes (the
/// plan's default alignment, as the unfused pair's lse tensor was), so
/// that the chunk of logits after them stays as aligned as the workspace.
constexpr int64_t kLseAlignment = 64;
inline int64_t linearCrossEntropyLseBytes(int64_t rows, int64_t computeBytes) {
  int64_t bytes = rows * computeBytes;
  return (bytes + kLseAlignment - 1) / kLseAlignment * kLseAlignment;
}

/// linear_cross_entropy: NxH `hidden`, VxH `weight` and N `labels` (ranks
/// 2, 2 and 1, as each side checks) give the N log-sum-exps in `lse` (the
/// loss is 0-d).
inline ShapeProblem linearCrossEntropyShape(const Dims &hidden,
                                            const Dims &weight,
                                            const Dims &labels, Dims &lse) {
  if (weight[1] != hidden[1])
    return problem("expected weight of shape Vx", hidden[1],
                   " (hidden's width), got ", formatDims(weight));
  if (labels[0] != hidden[0])
    return problem("expected ", hidden[0],
                   " labels (one per row of hidden), got ", labels[0]);
  lse = {hidden[0]};
  return {};
}

} // namespace memopt::shapes

#endif // MEMOPT_CONTRACT_LINEARCROSSENTROPYSHAPES_H
