//===- AttentionShapes.h - attention's shape rule and tiles -----*- C++ -*-===//
//
// Part of the compiler-runtime contract (ShapeRule.h), MLIR-free: the shape
// rule of memopt.attention and attention_backward, and how their CPU
// kernels tile the score matrix, which fixes the workspace the compiler
// reserves for them (lib/Dialect/MemOpt/IR/WorkspaceModel.cpp).
//
// q is ...xSqxD, k ...xSkxD and v ...xSkxDv with the same leading
// dimensions (no broadcasting); the result is ...xSqxDv and the per-row
// log-sum-exp ...xSq. A causal attention (query i sees keys j <= i) needs
// Sq == Sk, as a causal softmax needs square scores.
//
// The kernels work a strip of query rows at a time against every key they
// see: the strip's scores (and, backward, the gradient of its
// probabilities) are the only score-sized storage, tile rows x Sk elements
// of the compute type, never Sq x Sk.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_CONTRACT_ATTENTIONSHAPES_H
#define MEMOPT_CONTRACT_ATTENTIONSHAPES_H

#include "memopt/Contract/ShapeRule.h"

namespace memopt::shapes {

/// The result and log-sum-exp shapes of attention over `q`, `k`, `v` (each
/// of rank >= 2, as each side checks); `causal` needs square scores.
inline ShapeProblem attentionShape(const Dims &q, const Dims &k, const Dims &v,
                                   bool causal, Dims &result, Dims &lse) {
  size_t rank = q.size();
  if (k.size() != rank || v.size() != rank)
    return problem("expected q, k and v of one rank, got ", formatDims(q), ", ",
                   formatDims(k), " and ", formatDims(v));
  for (size_t d = 0; d + 2 < rank; ++d)
    if (k[d] != q[d] || v[d] != q[d])
      return problem("expected q, k and v to share their leading (batch and "
                     "head) dimensions, got ",
                     formatDims(q), ", ", formatDims(k), " and ",
                     formatDims(v));
  int64_t sq = q[rank - 2], depth = q[rank - 1], sk = k[rank - 2];
  if (k[rank - 1] != depth)
    return problem("expected k's last dimension to be q's (", depth, "), got ",
                   formatDims(k));
  if (v[rank - 2] != sk)
    return problem("expected v to have k's sequence length (", sk, "), got ",
                   formatDims(v));
  if (causal && sq != sk)
    return problem("'causal' needs as many queries as keys, got ", sq,
                   " queries and ", sk, " keys");
  result = q;
  result[rank - 1] = v[rank - 1];
  lse.assign(q.begin(), q.end() - 1);
  return {};
}

} // namespace memopt::shapes

namespace memopt::runtime::attention {

/// Query rows a CPU kernel scores at once when its workspace allows.
constexpr int64_t kTileRows = 64;

/// Score-sized strips each kernel keeps: the scores (forward); the
/// probabilities and their gradient (backward). The workspace is up to
/// kTileRows query rows of these strips of Sk compute-type elements each,
/// fewer under a cap but at least one row (WorkspaceModel.cpp).
constexpr int64_t kForwardStrips = 1;
constexpr int64_t kBackwardStrips = 2;

} // namespace memopt::runtime::attention

#endif // MEMOPT_CONTRACT_ATTENTIONSHAPES_H
