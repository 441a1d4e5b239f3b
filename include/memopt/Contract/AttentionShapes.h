//===- AttentionShapes.h - attention's shape rule and tiles -----*- C++ -*-===//
//
// Part of the compiler-runtime contract (ShapeRule.h), MLIR-free: the shape
// rule of memopt.attention and attention_backward, and how their CPU
// kernels tile the score matrix, which fixes the workspace the compiler
// reserves for them (lib/Dialect/MemOpt/IR/WorkspaceModel.cpp).
//
// q is ...xSqxD, k ...xSkxD and v ...xSkxDv with the same leading
// dimensions (no broadcasting), except that k and v may have fewer heads
// (dimension rank - 3) than q, a divisor of q's: grouped-query attention,
// each key/value head read by q heads / k heads consecutive query heads
// without being repeated in memory. The result is ...xSqxDv and the per-row
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

/// Query heads per key/value head: q's head dimension (rank - 3) over k's,
/// 1 below rank 3. attentionShape checks that it divides evenly.
inline int64_t attentionGroups(const Dims &q, const Dims &k) {
  size_t rank = q.size();
  if (rank < 3 || k.size() != rank || k[rank - 3] <= 0)
    return 1;
  return q[rank - 3] / k[rank - 3];
}

/// The result and log-sum-exp shapes of attention over `q`, `k`, `v` (each
/// of rank >= 2, as each side checks); `causal` needs square scores. k and
/// v may have fewer heads than q (grouped-query attention): dimension
/// rank - 3 of k and v divides q's, and query head h reads key/value head
/// h / (q heads / k heads), as K/V repeated by repeat_interleave.
inline ShapeProblem attentionShape(const Dims &q, const Dims &k, const Dims &v,
                                   bool causal, Dims &result, Dims &lse) {
  size_t rank = q.size();
  if (k.size() != rank || v.size() != rank)
    return problem("expected q, k and v of one rank, got ", formatDims(q), ", ",
                   formatDims(k), " and ", formatDims(v));
  for (size_t d = 0; d + 2 < rank; ++d) {
    if (d + 3 == rank && k[d] == v[d] && k[d] > 0 && q[d] % k[d] == 0)
      continue; // key/value groups
    if (k[d] != q[d] || v[d] != q[d])
      return problem("expected q, k and v to share their leading (batch and "
                     "head) dimensions, or k and v to have a divisor of q's "
                     "heads (dimension ",
                     rank - 3, "), got ", formatDims(q), ", ", formatDims(k),
                     " and ", formatDims(v));
  }
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

/// The shape of attention's optional key bias over `q` (rank >= 3) and
/// `k`: q's dimensions before its heads (rank - 3), then Sk. Query head h
/// (flat over q's leading dimensions) reads row h / (q's heads).
inline ShapeProblem attentionKeyBiasShape(const Dims &q, const Dims &k,
                                          Dims &bias) {
  size_t rank = q.size();
  if (rank < 3 || k.size() != rank)
    return problem("a key bias needs q of rank >= 3 (...xHxSqxD), got ",
                   formatDims(q));
  bias.assign(q.begin(), q.end() - 3);
  bias.push_back(k[rank - 2]);
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
