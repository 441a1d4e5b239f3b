//===- ReductionLayout.h - how multi-block reductions split -----*- C++ -*-===//
//
// The CUDA backend's multi-block reductions (the losses' partial sums,
// layer_norm_backward's column partials) keep their partials in the step's
// workspace, which the compiler reserves in the arena
// (lib/Dialect/MemOpt/IR/WorkspaceModel.cpp). Both sides split the work by
// this header, so the bytes the plan reserves are the bytes the kernels
// use. Host code only; header-only, so the compiler includes it without
// linking the runtime. Part of the compiler-runtime contract
// (include/memopt/Contract): the C++ standard library only, never MLIR or
// LLVM.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_CONTRACT_REDUCTIONLAYOUT_H
#define MEMOPT_CONTRACT_REDUCTIONLAYOUT_H

#include <algorithm>
#include <cstdint>

namespace memopt::runtime::reduction {

/// cross_entropy reduces a warp per row, this many rows (warps) a block;
/// mse_loss this many elements a block.
constexpr int64_t kLossRowsPerBlock = 8;
constexpr int64_t kLossElementsPerBlock = 256;
/// The most blocks (double partial sums) of a loss reduction.
constexpr int64_t kMaxPartials = 1024;

inline int64_t crossEntropyBlocks(int64_t rows) {
  return (rows + kLossRowsPerBlock - 1) / kLossRowsPerBlock;
}
inline int64_t mseLossBlocks(int64_t elements) {
  return (elements + kLossElementsPerBlock - 1) / kLossElementsPerBlock;
}
/// The blocks a loss reduction uses when its workspace holds their partial
/// sums: `wanted`, at most kMaxPartials.
inline int64_t lossPartials(int64_t wanted) {
  return std::min(wanted, kMaxPartials);
}
/// Bytes of those partial sums; 0 for a single block, which needs none.
inline int64_t lossPartialBytes(int64_t wanted) {
  return wanted <= 1
             ? 0
             : lossPartials(wanted) * static_cast<int64_t>(sizeof(double));
}

/// layer_norm_backward: per row (mean, 1/σ), then per chunk of rows and
/// column the partial (Σ dy·x̂, Σ dy), all doubles, with chunks chosen so
/// that about kColumnThreadsWanted threads sum columns.
constexpr int64_t kColumnThreadsWanted = 16384;
constexpr int64_t kMaxRowChunks = 1024;

inline int64_t layerNormStatsBytes(int64_t rows) {
  return rows * 2 * static_cast<int64_t>(sizeof(double));
}
inline int64_t layerNormChunkBytes(int64_t width) {
  return width * 2 * static_cast<int64_t>(sizeof(double));
}

struct LayerNormBackwardChunks {
  int64_t rowsPerChunk = 0, chunks = 0;
  /// Workspace bytes of this split of `rows` x `width`.
  int64_t bytes(int64_t rows, int64_t width) const {
    return layerNormStatsBytes(rows) + chunks * layerNormChunkBytes(width);
  }
};

/// The split of `rows` rows of `width` columns into at most `maxChunks`
/// chunks (at least one).
inline LayerNormBackwardChunks
layerNormBackwardChunks(int64_t rows, int64_t width, int64_t maxChunks) {
  int64_t chunks =
      (kColumnThreadsWanted + width - 1) / std::max<int64_t>(1, width);
  chunks = std::min({chunks, kMaxRowChunks, maxChunks, rows});
  chunks = std::max<int64_t>(chunks, 1);
  LayerNormBackwardChunks c;
  c.rowsPerChunk = (rows + chunks - 1) / chunks;
  c.chunks =
      c.rowsPerChunk > 0 ? (rows + c.rowsPerChunk - 1) / c.rowsPerChunk : 0;
  return c;
}

} // namespace memopt::runtime::reduction

#endif // MEMOPT_CONTRACT_REDUCTIONLAYOUT_H
