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
//    probabilities (plus rank·heads·Sq·Sk on a data-parallel rank), is
//    multiplied into the tile of v. At the end out =
//    acc / l and lse = m + log l (−inf, with out 0, for a row without keys
//    and, with `safe`, for one whose keys the key bias all masks; NaN for
//    the latter without `safe`, as the unfused softmax).
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
// An optional key bias (a key-padding mask, …×Sk) is added to the scaled
// scores wherever they are formed (Problem::logit), forward and backward.
//
// With fewer key/value heads than query heads (grouped-query attention),
// query head h reads key/value head h / groups in place, and a grad k/v
// block loops over its group's query heads in order, so the repeated K/V
// are never materialised and the sums stay deterministic.
//
// Rows and columns beyond the tensors' edges are loaded as 0 and masked,
// so any Sq, Sk, D and Dv work, 0 included; work beyond the grid's size is
// taken by a grid-stride loop over the blocks' work items.
//
//===----------------------------------------------------------------------===//

#include "Device.cuh"

#include "memopt/Contract/AttentionShapes.h"
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
  /// Query heads per key/value head: query head h reads key/value head
  /// h / groups (grouped-query attention; 1 without).
  int64_t groups;
  C scale;
  bool causal;
  /// A row whose every key the key bias masks with -inf gives 0 (else NaN,
  /// as the unfused softmax).
  bool safe;
  bool dropout;
  uint64_t key;
  uint32_t threshold;
  C keepScale;
  /// On rank r of a data-parallel job, r·heads·Sq·Sk: the mask of its rows
  /// of the global batch, as on the CPU (StepContext::rank).
  uint64_t maskOffset;
  /// The optional key bias (…×Sk, of dtype biasType): query head h adds
  /// row h / biasHeads to its scaled scores.
  const void *keyBias;
  DType biasType;
  int64_t biasHeads;

  /// The score of query head h against key j (j < Sk) that the softmax
  /// sees: scale · q·kᵀ, plus the key bias.
  __device__ C logit(C s, int64_t h, int64_t j) const {
    const C scaled = s * scale;
    return keyBias
               ? scaled + loadAs<C>(keyBias, biasType, h / biasHeads * sk + j)
               : scaled;
  }

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
        maskOffset +
        (static_cast<uint64_t>(h) * static_cast<uint64_t>(sq) +
         static_cast<uint64_t>(i)) *
            static_cast<uint64_t>(sk) +
        static_cast<uint64_t>(j);
    return dropout::keep(key, index, threshold) ? x * keepScale : C(0);
  }
};

/// One work item: a head, a tile of B rows and a chunk of kColumns columns.
struct Item {
  int64_t h, tile, chunk;
};

/// The work items of a launch, one per block at a time: (head, tile, chunk),
/// the chunk varying fastest, then the head; with `lastFirst` the tiles are
/// taken from the last one.
struct Items {
  int64_t heads, tiles, chunks;
  bool lastFirst;

  __host__ __device__ int64_t count() const { return heads * tiles * chunks; }
  __device__ Item at(int64_t w) const {
    const int64_t rest = w / chunks, tile = rest / heads;
    return {rest % heads, lastFirst ? tiles - 1 - tile : tile, w % chunks};
  }
};

/// attention's items: (head, B query rows, 64 columns of out; at least one
/// chunk, whose block also writes lse), the last query tiles first: with
/// `causal` they see the most keys.
template <typename C>
__host__ __device__ Items forwardItems(const Problem<C> &pb) {
  return {pb.heads, ceilDiv(pb.sq, TileSize<C>::value),
          std::max<int64_t>(1, ceilDiv(pb.dv, kColumns)), true};
}

/// grad k and v's items: (key/value head, B keys, 64 columns of dK or,
/// after ceil(D / 64) of those, of dV), the first key tiles first: with
/// `causal` the most queries see them.
template <typename C>
__host__ __device__ Items gradKVItems(const Problem<C> &pb) {
  return {pb.heads / pb.groups, ceilDiv(pb.sk, TileSize<C>::value),
          ceilDiv(pb.d, kColumns) + ceilDiv(pb.dv, kColumns), false};
}

/// grad q's items: (head, B query rows, 64 columns of dQ), the last query
/// tiles first.
template <typename C>
__host__ __device__ Items gradQItems(const Problem<C> &pb) {
  return {pb.heads, ceilDiv(pb.sq, TileSize<C>::value), ceilDiv(pb.d, kColumns),
          true};
}

template <typename C>
Problem<C> problemOf(const KernelCall &call, const TensorRef &q,
                     const TensorRef &k, const TensorRef &v,
                     size_t keyBiasIndex) {
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
  pb.groups = shapes::attentionGroups(*q.shape, *k.shape);
  pb.scale = static_cast<C>(a.scale);
  pb.causal = a.causal;
  pb.safe = a.safe;
  pb.dropout = a.p > 0;
  pb.key = dropout::streamKey(a.seed, call.context.stepCounter);
  pb.threshold = dropout::threshold(a.p);
  pb.keepScale = dropout::scale<C>(a.p);
  pb.maskOffset = call.context.rank * static_cast<uint64_t>(pb.heads) *
                  static_cast<uint64_t>(pb.sq) * static_cast<uint64_t>(pb.sk);
  const bool biased = call.inputs.size() > keyBiasIndex;
  pb.keyBias = biased ? call.in(keyBiasIndex).data : nullptr;
  pb.biasType = biased ? call.in(keyBiasIndex).dtype : q.dtype;
  pb.biasHeads = biased ? q.dim(rank - 3) : 1;
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

/// Sets every element of x to `value`.
template <typename C, int RA, int RB>
__device__ __forceinline__ void fill(C (&x)[RA][RB], C value) {
#pragma unroll
  for (int i = 0; i < RA; ++i)
#pragma unroll
    for (int j = 0; j < RB; ++j)
      x[i][j] = value;
}

/// acc[a][b] = Σ_d A(aRow0 + ty + 16a, d) · B(bRow0 + tx + 16b, d): A is the
/// aRows x depth matrix at element `aBase` of `a`, B the bRows x depth one
/// at `bBase` of `b` (rows beyond them count as 0), staged kDepthChunk
/// columns at a time in the operand buffer `operands`. Every thread must
/// call it; it ends with a barrier, so the caller may then reuse the buffer.
template <typename C, DType T, int RA, int RB>
__device__ inline void scoreTile(C (&acc)[RA][RB], const void *a, int64_t aBase,
                                 int64_t aRows, int64_t aRow0, const void *b,
                                 int64_t bBase, int64_t bRows, int64_t bRow0,
                                 int64_t depth, C *operands) {
  constexpr int kLd = kDepthChunk + 1;
  C *as = operands, *bs = operands + RA * kSide * kLd;
  const int ty = threadIdx.x / kSide, tx = threadIdx.x % kSide;
  fill(acc, C(0));
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

/// acc[a][c] += Σ_n P(ty + 16a, n) · X(n, tx + 16c): X is the B x kColumns
/// tile from (row0, col0) of the rows x cols matrix at element `base` of
/// `src` (0 outside it), staged in `xs`; P the B x B tile in `p` (rows
/// padded by one), read as its transpose when `Transposed`. Every thread
/// must call it once the previous readers of `xs` have passed a barrier; its
/// first barrier also publishes the caller's writes to `p`, and it ends with
/// one, so the caller may then reuse both.
template <bool Transposed, typename C, DType T, int R, int RV>
__device__ __forceinline__ void
accumulateTile(C (&acc)[R][RV], const C *p, const void *src, int64_t base,
               int64_t rows, int64_t cols, int64_t row0, int64_t col0, C *xs) {
  constexpr int B = R * kSide;
  const int ty = threadIdx.x / kSide, tx = threadIdx.x % kSide;
  loadTile<C, T, B, kColumns, kColumns>(xs, src, base, rows, cols, row0, col0);
  __syncthreads();
  for (int n = 0; n < B; ++n) {
    C xv[RV];
#pragma unroll
    for (int c = 0; c < RV; ++c)
      xv[c] = xs[n * kColumns + tx + kSide * c];
#pragma unroll
    for (int a = 0; a < R; ++a) {
      const int r = ty + kSide * a;
      const C pv = Transposed ? p[n * (B + 1) + r] : p[r * (B + 1) + n];
#pragma unroll
      for (int c = 0; c < RV; ++c)
        acc[a][c] += pv * xv[c];
    }
  }
  __syncthreads();
}

/// Stores acc[a][c] · scale(a) as element (row0 + ty + 16a, col0 + tx + 16c)
/// of head h's rows x cols matrix in `dst`, for those inside it (scale is
/// called only for rows inside it).
template <typename C, DType T, int R, int RV, typename Scale>
__device__ __forceinline__ void
storeTile(void *dst, int64_t h, int64_t rows, int64_t cols, int64_t row0,
          int64_t col0, const C (&acc)[R][RV], Scale scale) {
  const int ty = threadIdx.x / kSide, tx = threadIdx.x % kSide;
#pragma unroll
  for (int a = 0; a < R; ++a) {
    const int64_t row = row0 + ty + kSide * a;
    if (row >= rows)
      continue;
    const C factor = scale(a);
#pragma unroll
    for (int c = 0; c < RV; ++c) {
      const int64_t col = col0 + tx + kSide * c;
      if (col < cols)
        storeAs(dst, T, (h * rows + row) * cols + col, acc[a][c] * factor);
    }
  }
}

/// Writes the thread's entries (r = ty + 16a, tx + 16b) of the B x B tile of
/// query rows from q0 and keys from k0 to `tile` (rows padded by one):
/// value(a, b, r, i, j) where query i = q0 + r sees key j, else 0.
template <typename C, int R, typename F>
__device__ __forceinline__ void writeScores(const Problem<C> &pb, int64_t q0,
                                            int64_t k0, C *tile, F value) {
  constexpr int B = R * kSide;
  const int ty = threadIdx.x / kSide, tx = threadIdx.x % kSide;
#pragma unroll
  for (int a = 0; a < R; ++a) {
    const int r = ty + kSide * a;
    const int64_t i = q0 + r;
#pragma unroll
    for (int b = 0; b < R; ++b) {
      const int64_t j = k0 + tx + kSide * b;
      tile[r * (B + 1) + tx + kSide * b] =
          i < pb.sq && pb.visible(i, j) ? value(a, b, r, i, j) : C(0);
    }
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
    const C l = row < pb.sq ? loadAs<C>(lse, lt, h * pb.sq + row) : C(0);
    // A -inf lse is a safe forward's fully masked row: exp(s - inf) gives
    // its probabilities 0, where exp(s - lse) would be NaN.
    lseRows[threadIdx.x] = l == -C(INFINITY) ? C(INFINITY) : l;
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

/// dS = P∘(dP − Dᵢ), dP = (dO·vᵀ)∘mask, of the tile of query rows from q0
/// and keys from k0 of head h into `tile` (as writeScores), from its s =
/// q·kᵀ, dp = dO·vᵀ and stageRows' rows, with P = exp(scale·s − lse).
template <typename C, int R>
__device__ __forceinline__ void
writeGradScores(const Problem<C> &pb, int64_t h, int64_t q0, int64_t k0,
                const C (&s)[R][R], const C (&dp)[R][R], const C *lseRows,
                const C *dotRows, C *tile) {
  writeScores<C, R>(
      pb, q0, k0, tile, [&](int a, int b, int r, int64_t i, int64_t j) {
        const C p = math::exp(pb.logit(s[a][b], h, j) - lseRows[r]);
        return p * (pb.drop(dp[a][b], h, i, j) - dotRows[r]);
      });
}

//===----------------------------------------------------------------------===//
// Forward
//===----------------------------------------------------------------------===//

/// out and lse, over forwardItems.
template <typename C, DType T>
__global__ void __launch_bounds__(kAttnThreads, 2)
    attentionKernel(Problem<C> pb, const void *q, const void *k, const void *v,
                    void *out, void *lse, DType lt) {
  constexpr int B = TileSize<C>::value, R = B / kSide, RV = kColumns / kSide;
  __shared__ C operands[operandElements(B)];
  __shared__ C probs[B * (B + 1)];
  const int ty = threadIdx.x / kSide, tx = threadIdx.x % kSide;
  const C minusInf = -C(INFINITY);

  const Items items = forwardItems(pb);
  for (int64_t w = blockIdx.x; w < items.count(); w += gridDim.x) {
    const Item it = items.at(w);
    const int64_t h = it.h, q0 = it.tile * B, c0 = it.chunk * kColumns;
    const int64_t qBase = h * pb.sq * pb.d,
                  kBase = h / pb.groups * pb.sk * pb.d,
                  vBase = h / pb.groups * pb.sk * pb.dv;

    C m[R], l[R], acc[R][RV];
#pragma unroll
    for (int a = 0; a < R; ++a) {
      m[a] = minusInf;
      l[a] = C(0);
    }
    fill(acc, C(0));

    const int64_t kEnd = pb.causal ? std::min(pb.sk, q0 + B) : pb.sk;
    for (int64_t k0 = 0; k0 < kEnd; k0 += B) {
      C s[R][R];
      scoreTile<C, T, R, R>(s, q, qBase, pb.sq, q0, k, kBase, pb.sk, k0, pb.d,
                            operands);
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
          s[a][b] = pb.visible(i, j) ? pb.logit(s[a][b], h, j) : minusInf;
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
      accumulateTile<false, C, T>(acc, probs, v, vBase, pb.sk, pb.dv, k0, c0,
                                  operands);
    }

    // l = 0: no key (out 0, lse -inf), or every key masked by -inf: NaN
    // as the unfused softmax, or with `safe` as a row without keys.
    const bool nanRows = !pb.safe && pb.sk > 0;
    storeTile<C, T>(out, h, pb.sq, pb.dv, q0, c0, acc, [&](int a) {
      return l[a] != C(0) ? C(1) / l[a] : nanRows ? C(NAN) : C(0);
    });
    if (it.chunk == 0 && tx == 0) {
#pragma unroll
      for (int a = 0; a < R; ++a) {
        const int64_t i = q0 + ty + kSide * a;
        if (i < pb.sq)
          storeAs(lse, lt, h * pb.sq + i,
                  l[a] == C(0) && nanRows ? C(NAN) : m[a] + math::log(l[a]));
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Backward
//===----------------------------------------------------------------------===//

/// grad_k and grad_v, over gradKVItems.
template <typename C, DType T>
__global__ void __launch_bounds__(kAttnThreads, 2)
    attentionGradKVKernel(Problem<C> pb, const void *grad, const void *q,
                          const void *k, const void *v, const void *out,
                          const void *lse, DType lt, void *dk, void *dv) {
  constexpr int B = TileSize<C>::value, R = B / kSide, RV = kColumns / kSide;
  __shared__ C operands[operandElements(B)];
  __shared__ C scores[B * (B + 1)];
  __shared__ C lseRows[B], dotRows[B];

  const Items items = gradKVItems(pb);
  const int64_t kChunks = ceilDiv(pb.d, kColumns);
  for (int64_t w = blockIdx.x; w < items.count(); w += gridDim.x) {
    const Item it = items.at(w);
    const bool forV = it.chunk >= kChunks;
    const int64_t hk = it.h, k0 = it.tile * B;
    const int64_t c0 = (forV ? it.chunk - kChunks : it.chunk) * kColumns;
    const int64_t width = forV ? pb.dv : pb.d;
    const int64_t kBase = hk * pb.sk * pb.d, vBase = hk * pb.sk * pb.dv;

    C acc[R][RV];
    fill(acc, C(0));

    // Every query head of the key/value head's group, in order.
    for (int64_t h = hk * pb.groups; h < (hk + 1) * pb.groups; ++h) {
      const int64_t qBase = h * pb.sq * pb.d, gBase = h * pb.sq * pb.dv;
      for (int64_t q0 = pb.causal ? k0 / B * B : 0; q0 < pb.sq; q0 += B) {
        stageRows<C, T, B>(pb, h, q0, grad, out, lse, lt, lseRows, dotRows,
                           !forV);
        C s[R][R], dp[R][R];
        scoreTile<C, T, R, R>(s, q, qBase, pb.sq, q0, k, kBase, pb.sk, k0, pb.d,
                              operands);
        if (forV) {
          // dV += (P∘mask)ᵀ·dO.
          writeScores<C, R>(
              pb, q0, k0, scores,
              [&](int a, int b, int r, int64_t i, int64_t j) {
                return pb.drop(math::exp(pb.logit(s[a][b], h, j) - lseRows[r]),
                               h, i, j);
              });
        } else {
          // dK += scale · dSᵀ·q.
          scoreTile<C, T, R, R>(dp, grad, gBase, pb.sq, q0, v, vBase, pb.sk, k0,
                                pb.dv, operands);
          writeGradScores(pb, h, q0, k0, s, dp, lseRows, dotRows, scores);
        }
        // The score operands are free (past the last barrier): stage dO's or
        // q's columns.
        accumulateTile<true, C, T>(acc, scores, forV ? grad : q,
                                   forV ? gBase : qBase, pb.sq, width, q0, c0,
                                   operands);
      }
    }

    const C factor = forV ? C(1) : pb.scale;
    storeTile<C, T>(forV ? dv : dk, hk, pb.sk, width, k0, c0, acc,
                    [&](int) { return factor; });
  }
}

/// grad_q, over gradQItems.
template <typename C, DType T>
__global__ void __launch_bounds__(kAttnThreads, 2)
    attentionGradQKernel(Problem<C> pb, const void *grad, const void *q,
                         const void *k, const void *v, const void *out,
                         const void *lse, DType lt, void *dq) {
  constexpr int B = TileSize<C>::value, R = B / kSide, RV = kColumns / kSide;
  __shared__ C operands[operandElements(B)];
  __shared__ C scores[B * (B + 1)];
  __shared__ C lseRows[B], dotRows[B];

  const Items items = gradQItems(pb);
  for (int64_t w = blockIdx.x; w < items.count(); w += gridDim.x) {
    const Item it = items.at(w);
    const int64_t h = it.h, q0 = it.tile * B, c0 = it.chunk * kColumns;
    const int64_t qBase = h * pb.sq * pb.d,
                  kBase = h / pb.groups * pb.sk * pb.d,
                  vBase = h / pb.groups * pb.sk * pb.dv,
                  gBase = h * pb.sq * pb.dv;
    // The previous item's readers of the rows passed its last barrier.
    stageRows<C, T, B>(pb, h, q0, grad, out, lse, lt, lseRows, dotRows, true);

    C acc[R][RV];
    fill(acc, C(0));

    const int64_t kEnd = pb.causal ? std::min(pb.sk, q0 + B) : pb.sk;
    for (int64_t k0 = 0; k0 < kEnd; k0 += B) {
      // dQ += scale · dS·k.
      C s[R][R], dp[R][R];
      scoreTile<C, T, R, R>(s, q, qBase, pb.sq, q0, k, kBase, pb.sk, k0, pb.d,
                            operands);
      scoreTile<C, T, R, R>(dp, grad, gBase, pb.sq, q0, v, vBase, pb.sk, k0,
                            pb.dv, operands);
      writeGradScores(pb, h, q0, k0, s, dp, lseRows, dotRows, scores);
      // The score operands are free (past the last barrier): stage k's columns.
      accumulateTile<false, C, T>(acc, scores, k, kBase, pb.sk, pb.d, k0, c0,
                                  operands);
    }

    storeTile<C, T>(dq, h, pb.sq, pb.d, q0, c0, acc,
                    [&](int) { return pb.scale; });
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
  const Problem<C> pb = problemOf<C>(call, q, k, v, 3);
  const int64_t work = forwardItems(pb).count();
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
  const Problem<C> pb = problemOf<C>(call, q, k, v, 6);
  // Two independent kernels (each writes only its own outputs), so their
  // order does not matter; neither reads what the other writes.
  const int64_t kvWork = gradKVItems(pb).count();
  if (kvWork > 0) {
    attentionGradKVKernel<C, T>
        <<<gridFor(kvWork), kAttnThreads, 0, call.cuda.stream>>>(
            pb, grad.data, q.data, k.data, v.data, out.data, lse.data,
            lse.dtype, dk.data, dv.data);
    checkLaunch("attention_backward");
  }
  const int64_t qWork = gradQItems(pb).count();
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
