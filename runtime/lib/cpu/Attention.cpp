//===- Attention.cpp - memory-efficient attention on the CPU --------------===//
//
// attention(q, k, v): for each leading (batch, head) index, a strip of query
// rows at a time, S = scale · q·kᵀ against every key the strip sees (with
// `causal`, keys up to its last row), each row's softmax (the same
// max-shifted exponentials and reciprocal sum as memopt.softmax, masked
// entries exactly 0), dropout with memopt.dropout's mask at the element's
// index in the ...xSqxSk probabilities, then the strip's rows of P·v. The
// per-row log-sum-exp max + log(sum) is kept for the backward pass; the
// strip is the only score-sized storage, so memory is linear in the
// sequence length (memopt/Contract/AttentionShapes.h sets the strip).
//
// attention_backward recomputes each strip's probabilities from q, k and
// the log-sum-exp, P = exp(S − lse), and then, as the unfused chain's
// backward ops would: dv += (P∘mask)ᵀ·dO; dP = (dO·vᵀ)∘mask;
// dS = P∘(dP − Σ_j P·dP) (the softmax gradient, the row sum in double);
// dq = scale · dS·k and dk += scale · dSᵀ·q. It costs one more q·kᵀ than
// the unfused backward and needs two strips.
//
// An optional key bias (a key-padding mask, …×Sk) is added to each row's
// scaled scores before the softmax, forward and when the backward pass
// recomputes the probabilities. A row whose every key the bias masks with
// -inf is NaN, as the unfused softmax's, or with `safe` 0 with a -inf
// log-sum-exp, which the backward pass reads as probabilities 0.
//
// With fewer key/value heads than query heads (grouped-query attention),
// query head h reads key/value head h / groups in place, and the backward
// pass adds each group's dk and dv into its one key/value head, in head
// order: the repeated K/V are never materialised.
//
// The matrix products are the BLAS GEMMs of Gemm.h; in f32 the exponentials
// are VectorMath.h's, a row at a time, as memopt.softmax's. The (batch,
// head) problems split over the kernel threads (ParallelFor.h), each part
// taking an equal share of the planned strips' rows.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "Gemm.h"
#include "ParallelFor.h"
#include "VectorMath.h"
#include "WorkspaceRows.h"

#include "memopt/Contract/AttentionShapes.h"
#include "memopt/runtime/Dropout.h"
#include "memopt/runtime/ElementwiseMath.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

namespace memopt::runtime::cpu {

namespace {

/// The sizes of one attention call: `heads` independent (batch, head)
/// problems of Sq queries, Sk keys, depth D and value depth Dv, query head
/// h reading key/value head h / groups.
struct AttentionSizes {
  int64_t heads, sq, sk, d, dv, groups;
  /// d and dv as BLAS leading dimensions, which must be at least 1 even
  /// when a depth is 0 (and nothing is read).
  int64_t ldd, ldv;

  AttentionSizes(const TensorRef &q, const TensorRef &k, const TensorRef &v)
      : heads(1), sq(q.dim(q.rank() - 2)), sk(k.dim(k.rank() - 2)),
        d(q.dim(q.rank() - 1)), dv(v.dim(v.rank() - 1)),
        groups(shapes::attentionGroups(*q.shape, *k.shape)),
        ldd(std::max<int64_t>(d, 1)), ldv(std::max<int64_t>(dv, 1)) {
    for (size_t i = 0; i + 2 < q.rank(); ++i)
      heads *= q.dim(i);
  }
  /// The key/value head of query head `h`.
  int64_t kv(int64_t h) const { return h / groups; }
};

/// The optional key bias (…×Sk, q's dimensions before its heads): query
/// head h adds row h / heads to its scaled scores.
template <typename T> struct KeyBias {
  const T *data = nullptr;
  int64_t heads = 1, sk = 0;

  KeyBias(const KernelCall &call, size_t index, const TensorRef &q,
          const AttentionSizes &z)
      : sk(z.sk) {
    if (call.inputs.size() > index) {
      data = call.in(index).as<const T>();
      heads = q.dim(q.rank() - 3);
    }
  }
  /// Adds head h's bias to the first `width` scores of a row.
  void apply(T *p, int64_t width, int64_t h) const {
    if (!data)
      return;
    const T *row = data + (h / heads) * sk;
    for (int64_t j = 0; j < width; ++j)
      p[j] += row[j];
  }
};

/// `strips` score strips of Sk elements per query row, for up to
/// kTileRows query rows at a time (fewer in a smaller workspace): strip `i`
/// is `rows` × Sk elements.
template <typename T> struct Strips {
  Strips(const KernelCall &call, const AttentionSizes &z, int64_t strips)
      : scratch(call, z.sk * strips,
                std::max<int64_t>(1, std::min(attention::kTileRows, z.sq))),
        rows(scratch.rows), sk(z.sk), count(strips) {}

  /// Part `part` of `parts` (at most `rows`): its own strips of rows /
  /// parts query rows, in the part-th block of the storage.
  struct Part {
    T *base;
    int64_t rows, sk;
    T *strip(int64_t i) const { return base + i * rows * sk; }
  };
  Part part(int part, int parts) {
    const int64_t partRows = rows / parts;
    return {scratch.data() + part * partRows * sk * count, partRows, sk};
  }

  WorkspaceRows<T> scratch;
  /// Query rows per strip.
  const int64_t rows;
  const int64_t sk;
  const int64_t count;
};

/// Calls f(own, h0, h1) for each part of a call: the (batch, head)
/// problems [h0, h1) with the part's own share of the strips, the parts on
/// the kernel threads. As many parts as the threads, the problems and the
/// strips' rows (each part's strips need one) allow, and only where each
/// part gets enough work. With `wholeGroups` a part takes whole groups of
/// query heads (the backward pass: a group's heads add into one dk and dv).
template <typename T, typename F>
void forEachHeadPart(const AttentionSizes &z, Strips<T> &strips, F &&f,
                     bool wholeGroups = false) {
  const int64_t unit = wholeGroups ? z.groups : 1, units = z.heads / unit;
  const int64_t work = z.heads * z.sq * z.sk * (z.d + z.dv);
  const int parts = static_cast<int>(std::max<int64_t>(
      1,
      std::min<int64_t>({kernelThreads(), units, strips.rows,
                         std::max<int64_t>(1, work / kMinElementsPerPart)})));
  parallelFor(parts, [&](int part) {
    int64_t u0, u1;
    splitRange(units, parts, part, u0, u1);
    f(strips.part(part, parts), u0 * unit, u1 * unit);
  });
}

/// Dropout of the probabilities of (head, row) into `p` (`width` columns):
/// element j keeps p[j] · scale where memopt.dropout would keep index
/// (head·Sq + row)·Sk + j of the ...xSqxSk probabilities, else 0.
template <typename T> struct Mask {
  bool active;
  uint64_t key;
  uint32_t threshold;
  T scale;

  /// On rank `rank` of a data-parallel job, the mask of its rows of the
  /// global batch (StepContext::rank).
  uint64_t offset;

  Mask(const AttentionAttrs &a, const AttentionSizes &z,
       const StepContext &context)
      : active(a.p > 0), key(dropout::streamKey(a.seed, context.stepCounter)),
        threshold(dropout::threshold(a.p)), scale(dropout::scale<T>(a.p)),
        offset(context.rank * static_cast<uint64_t>(z.heads * z.sq * z.sk)) {}

  uint64_t first(const AttentionSizes &z, int64_t head, int64_t row) const {
    return offset + (static_cast<uint64_t>(head) * z.sq + row) * z.sk;
  }
  void apply(T *p, int64_t width, uint64_t index) const {
    if (!active)
      return;
    for (int64_t j = 0; j < width; ++j)
      p[j] = dropout::keep(key, index + j, threshold) ? p[j] * scale : T(0);
  }
};

/// The keys the rows [r0, r1) see: all of them, or with `causal` (Sq ==
/// Sk) up to the last row's.
int64_t keysSeen(const AttentionSizes &z, bool causal, int64_t r1) {
  return causal ? std::min(z.sk, r1) : z.sk;
}

template <typename T> void attentionImpl(const KernelCall &call) {
  const TensorRef &tq = call.in(0), &tk = call.in(1), &tv = call.in(2);
  const AttentionAttrs &a = call.step.get<AttentionAttrs>();
  const AttentionSizes z(tq, tk, tv);
  const T scale = static_cast<T>(a.scale);
  const Mask<T> mask(a, z, call.context);
  const KeyBias<T> bias(call, 3, tq, z);
  Strips<T> strips(call, z, attention::kForwardStrips);
  const T *q = tq.as<const T>(), *k = tk.as<const T>(), *v = tv.as<const T>();
  T *out = call.out(0).as<T>(), *lse = call.out(1).as<T>();

  // The (batch, head) problems split over the kernel threads, each part
  // with its own share of the strips.
  forEachHeadPart(
      z, strips,
      [&](const typename Strips<T>::Part &own, int64_t h0, int64_t h1) {
        T *s = own.strip(0);
        for (int64_t h = h0; h < h1; ++h) {
          const T *qh = q + h * z.sq * z.d, *kh = k + z.kv(h) * z.sk * z.d,
                  *vh = v + z.kv(h) * z.sk * z.dv;
          T *oh = out + h * z.sq * z.dv, *lh = lse + h * z.sq;
          for (int64_t r0 = 0; r0 < z.sq; r0 += own.rows) {
            const int64_t r1 = std::min(z.sq, r0 + own.rows), rows = r1 - r0;
            const int64_t width = keysSeen(z, a.causal, r1);
            if (width == 0) {
              // No key: an empty softmax, as the unfused chain's 0-length axis.
              std::fill(oh + r0 * z.dv, oh + r1 * z.dv, T(0));
              std::fill(lh + r0, lh + r1, -std::numeric_limits<T>::infinity());
              continue;
            }
            gemm<T>(false, true, rows, width, z.d, scale, qh + r0 * z.d, z.ldd,
                    kh, z.ldd, T(0), s, width);
            for (int64_t i = 0; i < rows; ++i) {
              const int64_t row = r0 + i;
              const int64_t valid = a.causal ? row + 1 : width;
              T *p = s + i * width;
              bias.apply(p, valid, h);
              T max = p[0];
              for (int64_t j = 1; j < valid; ++j)
                max = p[j] > max ? p[j] : max;
              if (a.safe && max == -std::numeric_limits<T>::infinity()) {
                // Every key masked: probabilities 0, as a safe softmax's.
                std::fill(p, p + width, T(0));
                lh[row] = max;
                continue;
              }
              T sum = T(0);
              if constexpr (std::is_same_v<T, float>) {
                for (int64_t j = 0; j < valid; ++j)
                  p[j] -= max;
                vec::exp(p, p, valid);
                for (int64_t j = 0; j < valid; ++j)
                  sum += p[j];
              } else {
                for (int64_t j = 0; j < valid; ++j) {
                  T e = math::exp(p[j] - max);
                  p[j] = e;
                  sum += e;
                }
              }
              const T inv = T(1) / sum;
              for (int64_t j = 0; j < valid; ++j)
                p[j] *= inv;
              std::fill(p + valid, p + width, T(0));
              lh[row] = max + math::log(sum);
              mask.apply(p, width, mask.first(z, h, row));
            }
            gemm<T>(false, false, rows, z.dv, width, T(1), s, width, vh, z.ldv,
                    T(0), oh + r0 * z.dv, z.ldv);
          }
        }
      });
}

template <typename T> void attentionBackwardImpl(const KernelCall &call) {
  const TensorRef &tg = call.in(0), &tq = call.in(1), &tk = call.in(2),
                  &tv = call.in(3), &tl = call.in(5);
  const AttentionAttrs &a = call.step.get<AttentionAttrs>();
  const AttentionSizes z(tq, tk, tv);
  const T scale = static_cast<T>(a.scale);
  const Mask<T> mask(a, z, call.context);
  const KeyBias<T> bias(call, 6, tq, z);
  Strips<T> strips(call, z, attention::kBackwardStrips);
  const T *g = tg.as<const T>(), *q = tq.as<const T>(), *k = tk.as<const T>(),
          *v = tv.as<const T>(), *lse = tl.as<const T>();
  T *dq = call.out(0).as<T>(), *dk = call.out(1).as<T>(),
    *dv = call.out(2).as<T>();
  std::fill(dk, dk + call.out(1).numElements, T(0));
  std::fill(dv, dv + call.out(2).numElements, T(0));

  // Split by (batch, head), as the forward pass, in whole groups: each
  // key/value head's dk and dv sum over its query heads' row strips within
  // one part.
  forEachHeadPart(
      z, strips,
      [&](const typename Strips<T>::Part &own, int64_t h0, int64_t h1) {
        // pStrip: the probabilities, then dS; dStrip: the kept probabilities,
        // then dP.
        T *pStrip = own.strip(0), *dStrip = own.strip(1);
        for (int64_t h = h0; h < h1; ++h) {
          const T *qh = q + h * z.sq * z.d, *kh = k + z.kv(h) * z.sk * z.d,
                  *vh = v + z.kv(h) * z.sk * z.dv, *gh = g + h * z.sq * z.dv,
                  *lh = lse + h * z.sq;
          T *dqh = dq + h * z.sq * z.d, *dkh = dk + z.kv(h) * z.sk * z.d,
            *dvh = dv + z.kv(h) * z.sk * z.dv;
          for (int64_t r0 = 0; r0 < z.sq; r0 += own.rows) {
            const int64_t r1 = std::min(z.sq, r0 + own.rows), rows = r1 - r0;
            const int64_t width = keysSeen(z, a.causal, r1);
            if (width == 0) {
              std::fill(dqh + r0 * z.d, dqh + r1 * z.d, T(0));
              continue;
            }
            gemm<T>(false, true, rows, width, z.d, scale, qh + r0 * z.d, z.ldd,
                    kh, z.ldd, T(0), pStrip, width);
            for (int64_t i = 0; i < rows; ++i) {
              const int64_t row = r0 + i;
              const int64_t valid = a.causal ? row + 1 : width;
              T *p = pStrip + i * width, *kept = dStrip + i * width;
              bias.apply(p, valid, h);
              // A -inf log-sum-exp is a safe forward's fully masked row:
              // exp(s - inf) is its probabilities 0, where exp(s - lse)
              // would be NaN.
              const T l = lh[row] == -std::numeric_limits<T>::infinity()
                              ? std::numeric_limits<T>::infinity()
                              : lh[row];
              if constexpr (std::is_same_v<T, float>) {
                for (int64_t j = 0; j < valid; ++j)
                  p[j] -= l;
                vec::exp(p, p, valid);
              } else {
                for (int64_t j = 0; j < valid; ++j)
                  p[j] = math::exp(p[j] - l);
              }
              std::fill(p + valid, p + width, T(0));
              std::copy(p, p + width, kept);
              mask.apply(kept, width, mask.first(z, h, row));
            }
            // dv += keptᵀ · dO.
            gemm<T>(true, false, width, z.dv, rows, T(1), dStrip, width,
                    gh + r0 * z.dv, z.ldv, T(1), dvh, z.ldv);
            // d(kept) = dO · vᵀ, then back through the dropout mask.
            gemm<T>(false, true, rows, width, z.dv, T(1), gh + r0 * z.dv, z.ldv,
                    vh, z.ldv, T(0), dStrip, width);
            for (int64_t i = 0; i < rows; ++i) {
              const int64_t row = r0 + i;
              T *p = pStrip + i * width, *dp = dStrip + i * width;
              mask.apply(dp, width, mask.first(z, h, row));
              double dot = 0;
              for (int64_t j = 0; j < width; ++j)
                dot += static_cast<double>(dp[j]) * static_cast<double>(p[j]);
              const T t = static_cast<T>(dot);
              for (int64_t j = 0; j < width; ++j)
                p[j] = p[j] * (dp[j] - t);
            }
            // dq = scale · dS · k; dk += scale · dSᵀ · q.
            gemm<T>(false, false, rows, z.d, width, scale, pStrip, width, kh,
                    z.ldd, T(0), dqh + r0 * z.d, z.ldd);
            gemm<T>(true, false, width, z.d, rows, scale, pStrip, width,
                    qh + r0 * z.d, z.ldd, T(1), dkh, z.ldd);
          }
        }
      },
      /*wholeGroups=*/true);
}

} // namespace

void attention(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype,
                [&](auto tag) { attentionImpl<decltype(tag)>(call); });
}

void attentionBackward(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype,
                [&](auto tag) { attentionBackwardImpl<decltype(tag)>(call); });
}

} // namespace memopt::runtime::cpu
