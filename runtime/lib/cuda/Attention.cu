//===- Attention.cu - memory-efficient attention on the GPU ---------------===//
//
// The arithmetic of cpu/Attention.cpp in FlashAttention-2 style tiles: no
// score-sized buffer and no workspace, only shared-memory tiles of B query
// rows by B keys (B = 64 in float, 32 in double), so memory stays linear in
// the sequence length. Every operand is read and written in its own dtype
// (Device.cuh's loads and stores) and computed in the compute type C:
// float for f32, f16 and bf16, double for f64; the kernels are instantiated
// per tensor dtype, so each load and store is the one conversion it needs.
// Each thread block has 16 x 16 threads (launch bounds for two blocks per
// SM, static shared memory under 48 KiB); thread (ty, tx) owns the rows
// ty + 16a and the columns tx + 16b of every B x B score tile and of the
// B x 64 output tiles, so the row statistics a thread needs are in its own
// registers after a shuffle among the 16 lanes of its row group.
//
//  * attention: one block per (head, B query rows, 64 value columns). It
//    walks the key tiles (with `causal`, only those up to its last row):
//    S = scale · q·kᵀ for the tile, accumulated over the depth in chunks of
//    32 columns through shared memory (so any depth works), then the
//    online softmax: the running row max m and sum l are rescaled by
//    exp(m_old − m_new) together with the output accumulator, and the
//    tile's exp(S − m) (masked entries exactly 0), after dropout with
//    memopt.dropout's mask at index (head·Sq + i)·Sk + j of the ...xSqxSk
//    probabilities, is multiplied into the tile of v. At the end out =
//    acc / l and lse = m + log l (−inf, with out 0, for a row without keys).
//    Each value-column block recomputes the scores; for Dv <= 64 there is
//    one.
//  * attention_backward, without atomics and so deterministic, in two
//    kernels that recompute P = exp(S − lse) from q, k and lse:
//    - grad k and v: one block per (head, B keys, 64 columns of dK or of
//      dV), looping over the query tiles that see its keys. A dV block
//      adds (P∘mask)ᵀ·dO; a dK block also recomputes dP = (dO·vᵀ)∘mask and
//      adds scale · dSᵀ·q with dS = P∘(dP − Dᵢ).
//    - grad q: one block per (head, B query rows, 64 columns of dQ), looping
//      over the key tiles its rows see and adding scale · dS·k.
//    Dᵢ = Σⱼ Pᵢⱼ·dPᵢⱼ (the CPU's softmax-gradient row sum) is computed as
//    the equal rowsum(dO∘out), in double, for each query tile a block
//    visits: it costs Dv products per row instead of a pass over every
//    key. (For f16 and bf16 it therefore sees out rounded to the tensor's
//    dtype, as FlashAttention's does.)
//
// Rows and columns beyond the tensors' edges are loaded as 0 and masked,
// so any Sq, Sk, D and Dv work, 0 included; work beyond the grid's size is
// taken by a grid-stride loop over the blocks' work items.
//
//===----------------------------------------------------------------------===//

#include "Device.cuh"

#include "memopt/runtime/Dropout.h"
#include "memopt/runtime/ElementwiseMath.h"

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace memopt::runtime::cuda {

namespace {

/// Threads per block: a kSide x kSide grid of threads.
constexpr int kSide = 16;
constexpr int kAttnThreads = kSide * kSide;
/// Depth columns of q, k (or dO, v) staged at a time for a score tile.
constexpr int kDepthChunk = 32;
/// Output columns per block (of out, dQ, dK or dV).
constexpr int kColumns = 64;
/// The most blocks of a launch; a grid-stride loop takes the rest.
constexpr int64_t kMaxBlocks = 65535 * 8;

/// Query rows and keys of a tile in compute type C (shared memory stays
/// under the 48 KiB of a static allocation: about 34 KiB in float, 26 KiB
/// in double).
template <typename C> struct TileSize { static constexpr int value = 64; };
template <> struct TileSize<double> { static constexpr int value = 32; };

/// Elements of the shared operand buffer of tiles of B rows: two B x
/// kDepthChunk score operands (rows padded by one element against bank
/// conflicts) or, afterwards, one B x kColumns tile.
constexpr int operandElements(int b) {
  return std::max(2 * b * (kDepthChunk + 1), b * kColumns);
}

__host__ __device__ inline int64_t ceilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

unsigned gridFor(int64_t work) {
  return static_cast<unsigned>(std::min(work, kMaxBlocks));
}

/// One attention call: `heads` independent (batch, head) problems of Sq
/// queries, Sk keys, depth D and value depth Dv, and the attributes in the
/// compute type.
template <typename C> struct Problem {
  int64_t heads, sq, sk, d, dv;
  C scale;
  bool causal;
  bool dropout;
  uint64_t key;
  uint32_t threshold;
  C keepScale;

  /// Whether query i sees key j (i in range).
  __device__ bool visible(int64_t i, int64_t j) const {
    return j < sk && (!causal || j <= i);
  }
  /// `x` after dropout at (head h, row i, key j): memopt.dropout's mask at
  /// index (h·Sq + i)·Sk + j of the ...xSqxSk probabilities.
  __device__ C drop(C x, int64_t h, int64_t i, int64_t j) const {
    if (!dropout)
      return x;
    const uint64_t index =
        (static_cast<uint64_t>(h) * static_cast<uint64_t>(sq) +
         static_cast<uint64_t>(i)) *
            static_cast<uint64_t>(sk) +
        static_cast<uint64_t>(j);
    return dropout::keep(key, index, threshold) ? x * keepScale : C(0);
  }
};

template <typename C>
Problem<C> problemOf(const KernelCall &call, const TensorRef &q,
                     const TensorRef &k, const TensorRef &v) {
  const AttentionAttrs &a = call.step.get<AttentionAttrs>();
  const size_t rank = q.rank();
  Problem<C> pb;
  pb.heads = 1;
  for (size_t i = 0; i + 2 < rank; ++i)
    pb.heads *= q.dim(i);
  pb.sq = q.dim(rank - 2);
  pb.d = q.dim(rank - 1);
  pb.sk = k.dim(rank - 2);
  pb.dv = v.dim(rank - 1);
  pb.scale = static_cast<C>(a.scale);
  pb.causal = a.causal;
  pb.dropout = a.p > 0;
  pb.key = dropout::streamKey(a.seed, call.context.stepCounter);
  pb.threshold = dropout::threshold(a.p);
  pb.keepScale = dropout::scale<C>(a.p);
  return pb;
}

//===----------------------------------------------------------------------===//
// Tiles
//===----------------------------------------------------------------------===//

/// dst[r·LD + c] = element (row0 + r, col0 + c) of the rows x cols matrix
/// that starts at element `base` of `src`, 0 outside it, for R x W elements.
template <typename C, DType T, int R, int W, int LD>
__device__ inline void loadTile(C *dst, const void *src, int64_t base,
                                int64_t rows, int64_t cols, int64_t row0,
                                int64_t col0) {
  for (int e = threadIdx.x; e < R * W; e += kAttnThreads) {
    const int r = e / W, c = e % W;
    const int64_t row = row0 + r, col = col0 + c;
    dst[r * LD + c] = row < rows && col < cols
                          ? loadAs<C>(src, T, base + row * cols + col)
                          : C(0);
  }
}

/// acc[a][b] = Σ_d A(aRow0 + ty + 16a, d) · B(bRow0 + tx + 16b, d): A is the
/// aRows x depth matrix at element `aBase` of `a`, B the bRows x depth one
/// at `bBase` of `b` (rows beyond them count as 0), staged kDepthChunk
/// columns at a time in `as` and `bs`. Every thread must call it; it ends
/// with a barrier, so the caller may then reuse the buffers.
template <typename C, DType T, int RA, int RB>
__device__ inline void scoreTile(C (&acc)[RA][RB], const void *a, int64_t aBase,
                                 int64_t aRows, int64_t aRow0, const void *b,
                                 int64_t bBase, int64_t bRows, int64_t bRow0,
                                 int64_t depth, C *as, C *bs) {
  constexpr int kLd = kDepthChunk + 1;
  const int ty = threadIdx.x / kSide, tx = threadIdx.x % kSide;
#pragma unroll
  for (int i = 0; i < RA; ++i)
#pragma unroll
    for (int j = 0; j < RB; ++j)
      acc[i][j] = C(0);
  for (int64_t d0 = 0; d0 < depth; d0 += kDepthChunk) {
    loadTile<C, T, RA * kSide, kDepthChunk, kLd>(as, a, aBase, aRows, depth,
                                                 aRow0, d0);
    loadTile<C, T, RB * kSide, kDepthChunk, kLd>(bs, b, bBase, bRows, depth,
                                                 bRow0, d0);
    __syncthreads();
#pragma unroll 8
    for (int d = 0; d < kDepthChunk; ++d) {
      C av[RA], bv[RB];
#pragma unroll
      for (int i = 0; i < RA; ++i)
        av[i] = as[(ty + kSide * i) * kLd + d];
#pragma unroll
      for (int j = 0; j < RB; ++j)
        bv[j] = bs[(tx + kSide * j) * kLd + d];
#pragma unroll
      for (int i = 0; i < RA; ++i)
#pragma unroll
        for (int j = 0; j < RB; ++j)
          acc[i][j] += av[i] * bv[j];
    }
    __syncthreads();
  }
}

/// The largest value over the 16 lanes of a row group (NaNs skipped), the
/// same in each of them.
template <typename C> __device__ inline C groupMax(C v) {
  for (int o = kSide / 2; o > 0; o >>= 1) {
    const C other = __shfl_xor_sync(kFullMask, v, o);
    v = other > v ? other : v;
  }
  return v;
}

/// The sum over the 16 lanes of a row group, the same bits in each.
template <typename C> __device__ inline C groupSum(C v) {
  for (int o = kSide / 2; o > 0; o >>= 1)
    v += __shfl_xor_sync(kFullMask, v, o);
  return v;
}

/// Stages the backward pass's row statistics of the B query rows from
/// `row0` of head h: lse (0 beyond Sq) and, when `dots` is set, Dᵢ =
/// rowsum(dO∘out) summed in double by one warp per row. Every thread must
/// call it (with the same `dots`) after the previous readers' barrier; it
/// ends with a barrier, so the rows are then visible to the block.
template <typename C, DType T, int B>
__device__ inline void stageRows(const Problem<C> &pb, int64_t h, int64_t row0,
                                 const void *grad, const void *out,
                                 const void *lse, DType lt, C *lseRows,
                                 C *dotRows, bool dots) {
  if (threadIdx.x < B) {
    const int64_t row = row0 + threadIdx.x;
    lseRows[threadIdx.x] =
        row < pb.sq ? loadAs<C>(lse, lt, h * pb.sq + row) : C(0);
  }
  if (dots) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    for (int r = warp; r < B; r += kAttnThreads / 32) {
      const int64_t row = row0 + r;
      double sum = 0;
      if (row < pb.sq) {
        const int64_t base = (h * pb.sq + row) * pb.dv;
        for (int64_t c = lane; c < pb.dv; c += 32)
          sum += static_cast<double>(loadAs<C>(grad, T, base + c)) *
                 static_cast<double>(loadAs<C>(out, T, base + c));
      }
      sum = warpSum(sum);
      if (lane == 0)
        dotRows[r] = static_cast<C>(sum);
    }
  }
  __syncthreads();
}

//===----------------------------------------------------------------------===//
// Forward
//===----------------------------------------------------------------------===//

/// out and lse: each work item is (head, B query rows, 64 columns of out;
/// at least one, whose block also writes lse).
template <typename C, DType T>
__global__ void __launch_bounds__(kAttnThreads, 2)
    attentionKernel(Problem<C> pb, const void *q, const void *k, const void *v,
                    void *out, void *lse, DType lt) {
  constexpr int B = TileSize<C>::value, R = B / kSide, RV = kColumns / kSide;
  constexpr int kLd = kDepthChunk + 1;
  __shared__ C operands[operandElements(B)];
  __shared__ C probs[B * (B + 1)];
  C *as = operands, *bs = operands + B * kLd, *vs = operands;
  const int ty = threadIdx.x / kSide, tx = threadIdx.x % kSide;
  const C minusInf = -C(INFINITY);

  const int64_t tiles = ceilDiv(pb.sq, B);
  const int64_t chunks = std::max<int64_t>(1, ceilDiv(pb.dv, kColumns));
  const int64_t work = pb.heads * tiles * chunks;
  for (int64_t w = blockIdx.x; w < work; w += gridDim.x) {
    // The last query tiles first: with `causal` they see the most keys.
    const int64_t chunk = w % chunks, rest = w / chunks;
    const int64_t h = rest % pb.heads, q0 = (tiles - 1 - rest / pb.heads) * B;
    const int64_t c0 = chunk * kColumns;
    const int64_t qBase = h * pb.sq * pb.d, kBase = h * pb.sk * pb.d,
                  vBase = h * pb.sk * pb.dv;

    C m[R], l[R], acc[R][RV];
#pragma unroll
    for (int a = 0; a < R; ++a) {
      m[a] = minusInf;
      l[a] = C(0);
#pragma unroll
      for (int c = 0; c < RV; ++c)
        acc[a][c] = C(0);
    }

    const int64_t kEnd = pb.causal ? std::min(pb.sk, q0 + B) : pb.sk;
    for (int64_t k0 = 0; k0 < kEnd; k0 += B) {
      C s[R][R];
      scoreTile<C, T, R, R>(s, q, qBase, pb.sq, q0, k, kBase, pb.sk, k0, pb.d,
                            as, bs);
      // The online softmax: rescale the row's sum and accumulator to the
      // new max, add the tile's exponentials.
#pragma unroll
      for (int a = 0; a < R; ++a) {
        const int r = ty + kSide * a;
        const int64_t i = q0 + r;
        C tileMax = minusInf;
#pragma unroll
        for (int b = 0; b < R; ++b) {
          const int64_t j = k0 + tx + kSide * b;
          s[a][b] = pb.visible(i, j) ? s[a][b] * pb.scale : minusInf;
          tileMax = s[a][b] > tileMax ? s[a][b] : tileMax;
        }
        tileMax = groupMax(tileMax);
        const C mNew = tileMax > m[a] ? tileMax : m[a];
        // A row that has seen no key yet keeps l = 0 and acc = 0.
        const C shift = mNew == minusInf ? C(0) : mNew;
        const C alpha = math::exp(m[a] - shift);
        C sum = C(0);
#pragma unroll
        for (int b = 0; b < R; ++b) {
          const int64_t j = k0 + tx + kSide * b;
          const C p = math::exp(s[a][b] - shift);
          sum += p;
          probs[r * (B + 1) + tx + kSide * b] =
              i < pb.sq && pb.visible(i, j) ? pb.drop(p, h, i, j) : C(0);
        }
        l[a] = l[a] * alpha + groupSum(sum);
        m[a] = mNew;
#pragma unroll
        for (int c = 0; c < RV; ++c)
          acc[a][c] *= alpha;
      }
      // The score operands are free (past scoreTile's barrier, or with D = 0
      // the last tile's): stage v.
      loadTile<C, T, B, kColumns, kColumns>(vs, v, vBase, pb.sk, pb.dv, k0, c0);
      __syncthreads();
      for (int j = 0; j < B; ++j) {
        C vv[RV];
#pragma unroll
        for (int c = 0; c < RV; ++c)
          vv[c] = vs[j * kColumns + tx + kSide * c];
#pragma unroll
        for (int a = 0; a < R; ++a) {
          const C p = probs[(ty + kSide * a) * (B + 1) + j];
#pragma unroll
          for (int c = 0; c < RV; ++c)
            acc[a][c] += p * vv[c];
        }
      }
      __syncthreads();
    }

#pragma unroll
    for (int a = 0; a < R; ++a) {
      const int64_t i = q0 + ty + kSide * a;
      if (i >= pb.sq)
        continue;
      const C inv = l[a] == C(0) ? C(0) : C(1) / l[a];
#pragma unroll
      for (int c = 0; c < RV; ++c) {
        const int64_t col = c0 + tx + kSide * c;
        if (col < pb.dv)
          storeAs(out, T, (h * pb.sq + i) * pb.dv + col, acc[a][c] * inv);
      }
      if (chunk == 0 && tx == 0)
        storeAs(lse, lt, h * pb.sq + i, m[a] + math::log(l[a]));
    }
  }
}

//===----------------------------------------------------------------------===//
// Backward
//===----------------------------------------------------------------------===//

/// grad_k and grad_v: each work item is (head, B keys, 64 columns of dK or,
/// after ceil(D / 64) of those, of dV).
template <typename C, DType T>
__global__ void __launch_bounds__(kAttnThreads, 2)
    attentionGradKVKernel(Problem<C> pb, const void *grad, const void *q,
                          const void *k, const void *v, const void *out,
                          const void *lse, DType lt, void *dk, void *dv) {
  constexpr int B = TileSize<C>::value, R = B / kSide, RV = kColumns / kSide;
  constexpr int kLd = kDepthChunk + 1;
  __shared__ C operands[operandElements(B)];
  __shared__ C scores[B * (B + 1)];
  __shared__ C lseRows[B], dotRows[B];
  C *as = operands, *bs = operands + B * kLd, *xs = operands;
  const int ty = threadIdx.x / kSide, tx = threadIdx.x % kSide;

  const int64_t tiles = ceilDiv(pb.sk, B);
  const int64_t kChunks = ceilDiv(pb.d, kColumns);
  const int64_t chunks = kChunks + ceilDiv(pb.dv, kColumns);
  const int64_t work = pb.heads * tiles * chunks;
  for (int64_t w = blockIdx.x; w < work; w += gridDim.x) {
    // The first key tiles first: with `causal` the most queries see them.
    const int64_t chunk = w % chunks, rest = w / chunks;
    const int64_t h = rest % pb.heads, k0 = rest / pb.heads * B;
    const bool forV = chunk >= kChunks;
    const int64_t c0 = (forV ? chunk - kChunks : chunk) * kColumns;
    const int64_t width = forV ? pb.dv : pb.d;
    const int64_t qBase = h * pb.sq * pb.d, kBase = h * pb.sk * pb.d,
                  vBase = h * pb.sk * pb.dv, gBase = h * pb.sq * pb.dv;

    C acc[R][RV];
#pragma unroll
    for (int a = 0; a < R; ++a)
#pragma unroll
      for (int c = 0; c < RV; ++c)
        acc[a][c] = C(0);

    for (int64_t q0 = pb.causal ? k0 / B * B : 0; q0 < pb.sq; q0 += B) {
      stageRows<C, T, B>(pb, h, q0, grad, out, lse, lt, lseRows, dotRows,
                         !forV);
      C s[R][R], dp[R][R];
      scoreTile<C, T, R, R>(s, q, qBase, pb.sq, q0, k, kBase, pb.sk, k0, pb.d,
                            as, bs);
      if (forV) {
        // dV += (P∘mask)ᵀ·dO.
#pragma unroll
        for (int a = 0; a < R; ++a) {
          const int r = ty + kSide * a;
          const int64_t i = q0 + r;
#pragma unroll
          for (int b = 0; b < R; ++b) {
            const int64_t j = k0 + tx + kSide * b;
            C value = C(0);
            if (i < pb.sq && pb.visible(i, j))
              value =
                  pb.drop(math::exp(s[a][b] * pb.scale - lseRows[r]), h, i, j);
            scores[r * (B + 1) + tx + kSide * b] = value;
          }
        }
      } else {
        // dK += scale · dSᵀ·q, dS = P∘(dP − Dᵢ), dP = (dO·vᵀ)∘mask.
        scoreTile<C, T, R, R>(dp, grad, gBase, pb.sq, q0, v, vBase, pb.sk, k0,
                              pb.dv, as, bs);
#pragma unroll
        for (int a = 0; a < R; ++a) {
          const int r = ty + kSide * a;
          const int64_t i = q0 + r;
#pragma unroll
          for (int b = 0; b < R; ++b) {
            const int64_t j = k0 + tx + kSide * b;
            C value = C(0);
            if (i < pb.sq && pb.visible(i, j)) {
              const C p = math::exp(s[a][b] * pb.scale - lseRows[r]);
              value = p * (pb.drop(dp[a][b], h, i, j) - dotRows[r]);
            }
            scores[r * (B + 1) + tx + kSide * b] = value;
          }
        }
      }
      // The score operands are free (past the last barrier): stage dO's or q's
      // columns.
      loadTile<C, T, B, kColumns, kColumns>(
          xs, forV ? grad : q, forV ? gBase : qBase, pb.sq, width, q0, c0);
      __syncthreads();
      for (int i = 0; i < B; ++i) {
        C xv[RV];
#pragma unroll
        for (int c = 0; c < RV; ++c)
          xv[c] = xs[i * kColumns + tx + kSide * c];
#pragma unroll
        for (int a = 0; a < R; ++a) {
          const C p = scores[i * (B + 1) + ty + kSide * a];
#pragma unroll
          for (int c = 0; c < RV; ++c)
            acc[a][c] += p * xv[c];
        }
      }
      __syncthreads();
    }

    const C factor = forV ? C(1) : pb.scale;
    void *dst = forV ? dv : dk;
#pragma unroll
    for (int a = 0; a < R; ++a) {
      const int64_t j = k0 + ty + kSide * a;
      if (j >= pb.sk)
        continue;
#pragma unroll
      for (int c = 0; c < RV; ++c) {
        const int64_t col = c0 + tx + kSide * c;
        if (col < width)
          storeAs(dst, T, (h * pb.sk + j) * width + col, acc[a][c] * factor);
      }
    }
  }
}

/// grad_q: each work item is (head, B query rows, 64 columns of dQ).
template <typename C, DType T>
__global__ void __launch_bounds__(kAttnThreads, 2)
    attentionGradQKernel(Problem<C> pb, const void *grad, const void *q,
                         const void *k, const void *v, const void *out,
                         const void *lse, DType lt, void *dq) {
  constexpr int B = TileSize<C>::value, R = B / kSide, RV = kColumns / kSide;
  constexpr int kLd = kDepthChunk + 1;
  __shared__ C operands[operandElements(B)];
  __shared__ C scores[B * (B + 1)];
  __shared__ C lseRows[B], dotRows[B];
  C *as = operands, *bs = operands + B * kLd, *ks = operands;
  const int ty = threadIdx.x / kSide, tx = threadIdx.x % kSide;

  const int64_t tiles = ceilDiv(pb.sq, B);
  const int64_t chunks = ceilDiv(pb.d, kColumns);
  const int64_t work = pb.heads * tiles * chunks;
  for (int64_t w = blockIdx.x; w < work; w += gridDim.x) {
    // The last query tiles first: with `causal` they see the most keys.
    const int64_t chunk = w % chunks, rest = w / chunks;
    const int64_t h = rest % pb.heads, q0 = (tiles - 1 - rest / pb.heads) * B;
    const int64_t c0 = chunk * kColumns;
    const int64_t qBase = h * pb.sq * pb.d, kBase = h * pb.sk * pb.d,
                  vBase = h * pb.sk * pb.dv, gBase = h * pb.sq * pb.dv;
    // The previous item's readers of the rows passed its last barrier.
    stageRows<C, T, B>(pb, h, q0, grad, out, lse, lt, lseRows, dotRows, true);

    C acc[R][RV];
#pragma unroll
    for (int a = 0; a < R; ++a)
#pragma unroll
      for (int c = 0; c < RV; ++c)
        acc[a][c] = C(0);

    const int64_t kEnd = pb.causal ? std::min(pb.sk, q0 + B) : pb.sk;
    for (int64_t k0 = 0; k0 < kEnd; k0 += B) {
      // dQ += scale · dS·k, dS = P∘(dP − Dᵢ), dP = (dO·vᵀ)∘mask.
      C s[R][R], dp[R][R];
      scoreTile<C, T, R, R>(s, q, qBase, pb.sq, q0, k, kBase, pb.sk, k0, pb.d,
                            as, bs);
      scoreTile<C, T, R, R>(dp, grad, gBase, pb.sq, q0, v, vBase, pb.sk, k0,
                            pb.dv, as, bs);
#pragma unroll
      for (int a = 0; a < R; ++a) {
        const int r = ty + kSide * a;
        const int64_t i = q0 + r;
#pragma unroll
        for (int b = 0; b < R; ++b) {
          const int64_t j = k0 + tx + kSide * b;
          C value = C(0);
          if (i < pb.sq && pb.visible(i, j)) {
            const C p = math::exp(s[a][b] * pb.scale - lseRows[r]);
            value = p * (pb.drop(dp[a][b], h, i, j) - dotRows[r]);
          }
          scores[r * (B + 1) + tx + kSide * b] = value;
        }
      }
      // The score operands are free (past the last barrier): stage k's columns.
      loadTile<C, T, B, kColumns, kColumns>(ks, k, kBase, pb.sk, pb.d, k0, c0);
      __syncthreads();
      for (int j = 0; j < B; ++j) {
        C kv[RV];
#pragma unroll
        for (int c = 0; c < RV; ++c)
          kv[c] = ks[j * kColumns + tx + kSide * c];
#pragma unroll
        for (int a = 0; a < R; ++a) {
          const C ds = scores[(ty + kSide * a) * (B + 1) + j];
#pragma unroll
          for (int c = 0; c < RV; ++c)
            acc[a][c] += ds * kv[c];
        }
      }
      __syncthreads();
    }

#pragma unroll
    for (int a = 0; a < R; ++a) {
      const int64_t i = q0 + ty + kSide * a;
      if (i >= pb.sq)
        continue;
#pragma unroll
      for (int c = 0; c < RV; ++c) {
        const int64_t col = c0 + tx + kSide * c;
        if (col < pb.d)
          storeAs(dq, T, (h * pb.sq + i) * pb.d + col, acc[a][c] * pb.scale);
      }
    }
  }
}

/// Calls `f(C{}, T{})` with C the compute type and T the tensors' dtype (q,
/// k, v and the results share it) as an integral constant, so the kernels'
/// loads and stores compile to the one conversion they need.
template <typename F> void dispatchAttention(DType dtype, F &&f) {
  switch (dtype) {
  case DType::F32:
    return f(float{}, std::integral_constant<DType, DType::F32>{});
  case DType::F16:
    return f(float{}, std::integral_constant<DType, DType::F16>{});
  case DType::BF16:
    return f(float{}, std::integral_constant<DType, DType::BF16>{});
  case DType::F64:
    return f(double{}, std::integral_constant<DType, DType::F64>{});
  default:
    throw Error(ErrorCode::Internal,
                "attention kernel called with a non-float dtype");
  }
}

template <typename C, DType T> void attentionImpl(const KernelCall &call) {
  const TensorRef &q = call.in(0), &k = call.in(1), &v = call.in(2);
  const TensorRef &out = call.out(0), &lse = call.out(1);
  const Problem<C> pb = problemOf<C>(call, q, k, v);
  constexpr int B = TileSize<C>::value;
  const int64_t work = pb.heads * ceilDiv(pb.sq, B) *
                       std::max<int64_t>(1, ceilDiv(pb.dv, kColumns));
  if (work == 0)
    return;
  attentionKernel<C, T><<<gridFor(work), kAttnThreads, 0, call.cuda.stream>>>(
      pb, q.data, k.data, v.data, out.data, lse.data, lse.dtype);
  checkLaunch("attention");
}

template <typename C, DType T>
void attentionBackwardImpl(const KernelCall &call) {
  const TensorRef &grad = call.in(0), &q = call.in(1), &k = call.in(2),
                  &v = call.in(3), &out = call.in(4), &lse = call.in(5);
  const TensorRef &dq = call.out(0), &dk = call.out(1), &dv = call.out(2);
  const Problem<C> pb = problemOf<C>(call, q, k, v);
  constexpr int B = TileSize<C>::value;
  // Two independent kernels (each writes only its own outputs), so their
  // order does not matter; neither reads what the other writes.
  const int64_t kvWork = pb.heads * ceilDiv(pb.sk, B) *
                         (ceilDiv(pb.d, kColumns) + ceilDiv(pb.dv, kColumns));
  if (kvWork > 0) {
    attentionGradKVKernel<C, T>
        <<<gridFor(kvWork), kAttnThreads, 0, call.cuda.stream>>>(
            pb, grad.data, q.data, k.data, v.data, out.data, lse.data,
            lse.dtype, dk.data, dv.data);
    checkLaunch("attention_backward");
  }
  const int64_t qWork = pb.heads * ceilDiv(pb.sq, B) * ceilDiv(pb.d, kColumns);
  if (qWork > 0) {
    attentionGradQKernel<C, T>
        <<<gridFor(qWork), kAttnThreads, 0, call.cuda.stream>>>(
            pb, grad.data, q.data, k.data, v.data, out.data, lse.data,
            lse.dtype, dq.data);
    checkLaunch("attention_backward");
  }
}

} // namespace

void attention(const KernelCall &call) {
  dispatchAttention(call.in(0).dtype, [&](auto tag, auto dtype) {
    attentionImpl<decltype(tag), decltype(dtype)::value>(call);
  });
}

void attentionBackward(const KernelCall &call) {
  dispatchAttention(call.in(1).dtype, [&](auto tag, auto dtype) {
    attentionBackwardImpl<decltype(tag), decltype(dtype)::value>(call);
  });
}

} // namespace memopt::runtime::cuda
