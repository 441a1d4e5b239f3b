//===- Reduce.cu - sum_to, global pooling, softmax, losses on the GPU -----===//
//
// The reductions of the CUDA backend, each deterministic: a fixed
// assignment of elements to threads and fixed-order trees (warp shuffles,
// then the warps' partials summed in order), never atomics, so a plan gives
// the same bits on every run. Accumulation types follow the CPU kernels:
// double for sum_to, global average pooling, softmax_backward's dot product
// and the losses; the compute type (float, or double for f64 tensors) for
// softmax's sum, as the CPU does.
//
//  * sum_to: one thread per output element summing its preimage in the
//    CPU's order, or, when there are few outputs with large preimages, one
//    block per output element.
//  * reduce_max/min and their backward: one warp per row of the last axis.
//  * softmax, softmax_backward, cross_entropy(_backward): one warp per row
//    when the reduced axis is the last one, else one thread per row. Every
//    row is reduced before any of its elements is written, so they run in
//    place.
//  * cross_entropy and mse_loss reduce the whole tensor: blocks write
//    partial sums to the step's workspace and one more kernel adds them
//    in order; with too small a workspace, a single block does it all. The
//    compiler reserves one partial per block (both count blocks by
//    ReductionLayout.h), which avoids this.
//
//===----------------------------------------------------------------------===//

#include "Device.cuh"

#include "memopt/Contract/ReductionLayout.h"
#include "memopt/runtime/ElementwiseMath.h"

namespace memopt::runtime::cuda {

namespace {

/// Warps per block of the row kernels (blocks of kThreads threads).
constexpr int kRowWarps = kThreads / 32;
// The losses' blocks are what the compiler reserves partial sums for.
static_assert(kRowWarps == reduction::kLossRowsPerBlock &&
                  kThreads == reduction::kLossElementsPerBlock,
              "the loss kernels' block shape must match ReductionLayout.h");
/// Threads of the single-block fallback.
constexpr int kSingleBlockThreads = 1024;

/// The largest value over the warp (NaNs are skipped; a NaN of the row
/// reaches the results through the sum of exponentials anyway).
template <typename T> __device__ inline T warpMax(T v) {
  for (int o = 16; o > 0; o >>= 1) {
    T other = __shfl_xor_sync(kFullMask, v, o);
    v = other > v ? other : v;
  }
  return v;
}

/// Blocks for `rows` rows of one warp each.
unsigned blocksForRows(int64_t rows) {
  int64_t blocks = (rows + kRowWarps - 1) / kRowWarps;
  return static_cast<unsigned>(blocks > 65535 * 8 ? 65535 * 8 : blocks);
}

//===----------------------------------------------------------------------===//
// sum_to
//===----------------------------------------------------------------------===//

/// x's dimensions split into the kept ones (the output's index selects
/// them) and the reduced ones (broadcast in the output: size 1 or absent),
/// in x's order. When x's last dimension is reduced it is kept apart as
/// `inner`, summed per row first as the CPU does.
struct SumToShape {
  int kept = 0;
  int64_t keptSize[kMaxRank] = {};
  int64_t keptOutStride[kMaxRank] = {};
  int64_t keptInStride[kMaxRank] = {};
  int reduced = 0;
  int64_t reducedSize[kMaxRank] = {};
  int64_t reducedInStride[kMaxRank] = {};
  /// The product of reducedSize.
  int64_t outerCount = 1;
  /// x's last dimension's size when it is reduced, else 1.
  int64_t inner = 1;
  bool lastReduced = false;
};

/// The offset in x of the first preimage element of output element `o`.
__device__ inline int64_t keptOffset(const SumToShape &s, int64_t o) {
  int64_t offset = 0;
  for (int k = 0; k < s.kept; ++k)
    offset += (o / s.keptOutStride[k]) % s.keptSize[k] * s.keptInStride[k];
  return offset;
}

/// The offset in x of combination `q` (row-major) of the reduced dimensions.
__device__ inline int64_t reducedOffset(const SumToShape &s, int64_t q) {
  int64_t offset = 0;
  for (int k = s.reduced - 1; k >= 0; --k) {
    const int64_t next = q / s.reducedSize[k];
    offset += (q - next * s.reducedSize[k]) * s.reducedInStride[k];
    q = next;
  }
  return offset;
}

/// One thread per output element, in the CPU's order.
__global__ void sumToThreadKernel(const void *x, void *y, DType dtype,
                                  SumToShape s, int64_t outputs) {
  MEMOPT_GRID_STRIDE(o, outputs) {
    const int64_t base = keptOffset(s, o);
    double acc = 0;
    for (int64_t q = 0; q < s.outerCount; ++q) {
      const int64_t offset = base + reducedOffset(s, q);
      if (s.lastReduced) {
        double row = 0;
        for (int64_t i = 0; i < s.inner; ++i)
          row += loadDouble(x, dtype, offset + i);
        acc += row;
      } else {
        acc += loadDouble(x, dtype, offset);
      }
    }
    storeDouble(y, dtype, o, acc);
  }
}

/// One block per output element: each thread sums a strided share of the
/// preimage, then the block adds the shares.
__global__ void sumToBlockKernel(const void *x, void *y, DType dtype,
                                 SumToShape s, int64_t outputs) {
  const int64_t count = s.outerCount * s.inner;
  for (int64_t o = blockIdx.x; o < outputs; o += gridDim.x) {
    const int64_t base = keptOffset(s, o);
    double acc = 0;
    for (int64_t p = threadIdx.x; p < count; p += blockDim.x) {
      const int64_t q = p / s.inner;
      acc +=
          loadDouble(x, dtype, base + reducedOffset(s, q) + (p - q * s.inner));
    }
    acc = blockSum(acc);
    if (threadIdx.x == 0)
      storeDouble(y, dtype, o, acc);
  }
}

//===----------------------------------------------------------------------===//
// Global average pooling
//===----------------------------------------------------------------------===//

/// One warp per plane.
__global__ void globalAvgPoolKernel(const void *x, void *y, DType dtype,
                                    int64_t planes, int64_t size) {
  const int lane = threadIdx.x & 31;
  const int64_t warps = int64_t(gridDim.x) * kRowWarps;
  for (int64_t p = int64_t(blockIdx.x) * kRowWarps + (threadIdx.x >> 5);
       p < planes; p += warps) {
    double sum = 0;
    for (int64_t i = lane; i < size; i += 32)
      sum += loadDouble(x, dtype, p * size + i);
    sum = warpSum(sum);
    if (lane == 0)
      storeDouble(y, dtype, p, sum / static_cast<double>(size));
  }
}

__global__ void globalAvgPoolBackwardKernel(const void *dy, void *dx,
                                            DType dtype, int64_t size,
                                            int64_t n) {
  MEMOPT_GRID_STRIDE(i, n) {
    storeDouble(dx, dtype, i,
                loadDouble(dy, dtype, i / size) / static_cast<double>(size));
  }
}

//===----------------------------------------------------------------------===//
// reduce_max, reduce_min and their backward
//===----------------------------------------------------------------------===//

/// One warp per row of `n`: the row's maximum (or minimum), a NaN
/// propagated as on the CPU (the extremum is exact in any order).
template <typename C>
__global__ void reduceExtremumKernel(const void *x, void *y, DType dtype,
                                     int64_t rows, int64_t n, bool max) {
  const int lane = threadIdx.x & 31;
  const int64_t warps = int64_t(gridDim.x) * kRowWarps;
  for (int64_t r = int64_t(blockIdx.x) * kRowWarps + (threadIdx.x >> 5);
       r < rows; r += warps) {
    C m = loadAs<C>(x, dtype, r * n);
    for (int64_t i = lane; i < n; i += 32) {
      const C v = loadAs<C>(x, dtype, r * n + i);
      m = max ? math::maximum(m, v) : math::minimum(m, v);
    }
    for (int o = 16; o > 0; o >>= 1) {
      const C other = __shfl_xor_sync(kFullMask, m, o);
      m = max ? math::maximum(m, other) : math::minimum(m, other);
    }
    if (lane == 0)
      storeAs(y, dtype, r, m);
  }
}

/// One warp per row: the row's gradient over the count of its elements
/// equal to the extremum, there; 0 elsewhere.
template <typename C>
__global__ void
reduceExtremumBackwardKernel(const void *g, const void *x, const void *m,
                             void *dx, DType dtype, int64_t rows, int64_t n) {
  const int lane = threadIdx.x & 31;
  const int64_t warps = int64_t(gridDim.x) * kRowWarps;
  for (int64_t r = int64_t(blockIdx.x) * kRowWarps + (threadIdx.x >> 5);
       r < rows; r += warps) {
    const C e = loadAs<C>(m, dtype, r);
    long long count = 0;
    for (int64_t i = lane; i < n; i += 32)
      count += math::isExtremum(loadAs<C>(x, dtype, r * n + i), e);
    count = warpSum(count);
    const C share = count ? loadAs<C>(g, dtype, r) / static_cast<C>(count)
                          : static_cast<C>(0);
    for (int64_t i = lane; i < n; i += 32)
      storeAs(dx, dtype, r * n + i,
              math::isExtremum(loadAs<C>(x, dtype, r * n + i), e)
                  ? share
                  : static_cast<C>(0));
  }
}

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

/// Softmax of contiguous rows (the last axis), one warp per row, in the
/// compute type C. With `causal`, row r is row (r mod len) of its square
/// matrix and sees only its first r mod len + 1 columns.
template <typename C>
__global__ void softmaxRowsKernel(const void *x, void *y, DType dtype,
                                  int64_t rows, int64_t len, bool causal,
                                  bool safe) {
  const int lane = threadIdx.x & 31;
  const int64_t warps = int64_t(gridDim.x) * kRowWarps;
  for (int64_t r = int64_t(blockIdx.x) * kRowWarps + (threadIdx.x >> 5);
       r < rows; r += warps) {
    const int64_t base = r * len;
    const int64_t valid = causal ? r % len + 1 : len;
    C max = -C(INFINITY);
    for (int64_t j = lane; j < valid; j += 32) {
      const C v = loadAs<C>(x, dtype, base + j);
      max = v > max ? v : max;
    }
    max = warpMax(max);
    // A row of -inf only: with `safe` every exp(x - 0) is 0 and so is the
    // row; without, x - max is NaN, as on the CPU.
    if (safe && max == -C(INFINITY))
      max = C(0);
    C sum = C(0);
    for (int64_t j = lane; j < valid; j += 32)
      sum += math::exp(loadAs<C>(x, dtype, base + j) - max);
    // Every lane has read its elements: the row may be overwritten.
    const C total = warpSum(sum);
    const C inv = safe && total == C(0) ? C(0) : C(1) / total;
    for (int64_t j = lane; j < valid; j += 32)
      storeAs(y, dtype, base + j,
              math::exp(loadAs<C>(x, dtype, base + j) - max) * inv);
    for (int64_t j = valid + lane; j < len; j += 32)
      storeAs(y, dtype, base + j, C(0));
  }
}

/// Softmax along a non-last axis: one thread per row (element `i` of the
/// `inner` ones of outer index `o`), exactly the CPU's loops.
template <typename C>
__global__ void softmaxStridedKernel(const void *x, void *y, DType dtype,
                                     int64_t outer, int64_t len, int64_t inner,
                                     bool safe) {
  MEMOPT_GRID_STRIDE(r, outer * inner) {
    const int64_t o = r / inner;
    const int64_t base = o * len * inner + (r - o * inner);
    C max = loadAs<C>(x, dtype, base);
    for (int64_t j = 1; j < len; ++j) {
      const C v = loadAs<C>(x, dtype, base + j * inner);
      if (v > max)
        max = v;
    }
    if (safe && max == -C(INFINITY))
      max = C(0);
    C sum = C(0);
    for (int64_t j = 0; j < len; ++j)
      sum += math::exp(loadAs<C>(x, dtype, base + j * inner) - max);
    const C inv = safe && sum == C(0) ? C(0) : C(1) / sum;
    for (int64_t j = 0; j < len; ++j) {
      const int64_t k = base + j * inner;
      storeAs(y, dtype, k, math::exp(loadAs<C>(x, dtype, k) - max) * inv);
    }
  }
}

/// y * (dy - sum(dy * y)) over contiguous rows, one warp per row; the dot
/// product in double.
template <typename C>
__global__ void softmaxBackwardRowsKernel(const void *g, const void *y,
                                          void *dx, DType dtype, int64_t rows,
                                          int64_t len) {
  const int lane = threadIdx.x & 31;
  const int64_t warps = int64_t(gridDim.x) * kRowWarps;
  for (int64_t r = int64_t(blockIdx.x) * kRowWarps + (threadIdx.x >> 5);
       r < rows; r += warps) {
    const int64_t base = r * len;
    double dot = 0;
    for (int64_t j = lane; j < len; j += 32)
      dot += __dmul_rn(static_cast<double>(loadAs<C>(g, dtype, base + j)),
                       static_cast<double>(loadAs<C>(y, dtype, base + j)));
    const C t = static_cast<C>(warpSum(dot));
    for (int64_t j = lane; j < len; j += 32) {
      const int64_t k = base + j;
      storeAs(dx, dtype, k,
              loadAs<C>(y, dtype, k) * (loadAs<C>(g, dtype, k) - t));
    }
  }
}

template <typename C>
__global__ void softmaxBackwardStridedKernel(const void *g, const void *y,
                                             void *dx, DType dtype,
                                             int64_t outer, int64_t len,
                                             int64_t inner) {
  MEMOPT_GRID_STRIDE(r, outer * inner) {
    const int64_t o = r / inner;
    const int64_t base = o * len * inner + (r - o * inner);
    double dot = 0;
    for (int64_t j = 0; j < len; ++j)
      dot +=
          __dmul_rn(static_cast<double>(loadAs<C>(g, dtype, base + j * inner)),
                    static_cast<double>(loadAs<C>(y, dtype, base + j * inner)));
    const C t = static_cast<C>(dot);
    for (int64_t j = 0; j < len; ++j) {
      const int64_t k = base + j * inner;
      storeAs(dx, dtype, k,
              loadAs<C>(y, dtype, k) * (loadAs<C>(g, dtype, k) - t));
    }
  }
}

/// outer, len, inner of a reduction along `axis`.
struct AxisSplit {
  int64_t outer = 1, len = 1, inner = 1;
};

AxisSplit splitAt(const Shape &shape, int64_t axis) {
  AxisSplit s;
  for (int64_t d = 0; d < axis; ++d)
    s.outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d)
    s.inner *= shape[d];
  s.len = shape[axis];
  return s;
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

/// Where a whole-tensor reduction puts its block sums: `partials` in the
/// workspace with `blocks` blocks of kThreads, or (partials null) a single
/// block of kSingleBlockThreads that writes the result itself.
struct LossLaunch {
  unsigned blocks = 1;
  int threads = kSingleBlockThreads;
  double *partials = nullptr;
};

/// `wanted` blocks when the workspace holds their partial sums.
LossLaunch lossLaunch(const KernelCall &call, int64_t wanted) {
  LossLaunch l;
  const int64_t bytes = reduction::lossPartialBytes(wanted);
  if (bytes > 0 && call.cuda.workspace &&
      call.cuda.workspaceBytes >= static_cast<size_t>(bytes)) {
    l.blocks = static_cast<unsigned>(reduction::lossPartials(wanted));
    l.threads = kThreads;
    l.partials = static_cast<double *>(call.cuda.workspace);
  }
  return l;
}

/// Thread 0's block total goes to the block's partial, or, for a single
/// block, divided by `divisor` to the output.
__device__ inline void finishBlock(double blockTotal, double *partials,
                                   void *out, DType outType, double divisor) {
  if (threadIdx.x != 0)
    return;
  if (partials)
    partials[blockIdx.x] = blockTotal;
  else
    storeDouble(out, outType, 0, blockTotal / divisor);
}

/// Adds the partial sums in order and writes their mean.
__global__ void finishLossKernel(const double *partials, int count, void *out,
                                 DType outType, double divisor) {
  if (threadIdx.x != 0 || blockIdx.x != 0)
    return;
  double total = 0;
  for (int i = 0; i < count; ++i)
    total += partials[i];
  storeDouble(out, outType, 0, total / divisor);
}

/// Sum over rows of log-sum-exp(row) - row[label], one warp per row (the
/// CPU's LogSumExp in double, merged across lanes).
__global__ void crossEntropyKernel(const void *logits, DType dtype,
                                   const void *labels, DType labelType,
                                   int64_t n, int64_t c, double *partials,
                                   void *out, int *flag, int code) {
  const int lane = threadIdx.x & 31, warpsPerBlock = blockDim.x / 32;
  const int64_t warps = int64_t(gridDim.x) * warpsPerBlock;
  double total = 0; // Lane 0's sum over its warp's rows.
  for (int64_t r = int64_t(blockIdx.x) * warpsPerBlock + (threadIdx.x >> 5);
       r < n; r += warps) {
    const int64_t label = loadIndex(labels, labelType, r);
    if (label < 0 || label >= c) {
      if (lane == 0)
        raiseError(flag, code);
      continue;
    }
    math::LogSumExp<double> lse;
    for (int64_t j = lane; j < c; j += 32)
      lse.add(loadDouble(logits, dtype, r * c + j));
    for (int o = 16; o > 0; o >>= 1) {
      math::LogSumExp<double> other;
      other.max = __shfl_xor_sync(kFullMask, lse.max, o);
      other.sum = __shfl_xor_sync(kFullMask, lse.sum, o);
      lse.merge(other);
    }
    if (lane == 0)
      total += lse.value() - loadDouble(logits, dtype, r * c + label);
  }
  finishBlock(blockSum(lane == 0 ? total : 0.0), partials, out, dtype,
              static_cast<double>(n));
}

/// Sum of (p - t)^2 in double.
__global__ void mseLossKernel(const void *p, const void *t, DType dtype,
                              int64_t n, double *partials, void *out) {
  double total = 0;
  MEMOPT_GRID_STRIDE(i, n) {
    const double d = loadDouble(p, dtype, i) - loadDouble(t, dtype, i);
    total += d * d;
  }
  finishBlock(blockSum(total), partials, out, dtype, static_cast<double>(n));
}

/// grad_loss * (softmax(row) - onehot(label)) / N, one warp per row, in
/// double as the CPU. A row with a bad label is left unwritten.
__global__ void crossEntropyBackwardKernel(const void *gradLoss, DType gradType,
                                           const void *logits, void *dx,
                                           DType dtype, const void *labels,
                                           DType labelType, int64_t n,
                                           int64_t c, int *flag, int code) {
  const int lane = threadIdx.x & 31;
  const int64_t warps = int64_t(gridDim.x) * kRowWarps;
  const double scale =
      loadDouble(gradLoss, gradType, 0) / static_cast<double>(n);
  for (int64_t r = int64_t(blockIdx.x) * kRowWarps + (threadIdx.x >> 5); r < n;
       r += warps) {
    const int64_t label = loadIndex(labels, labelType, r);
    if (label < 0 || label >= c) {
      if (lane == 0)
        raiseError(flag, code);
      continue;
    }
    const int64_t base = r * c;
    double max = -INFINITY;
    for (int64_t j = lane; j < c; j += 32) {
      const double v = loadDouble(logits, dtype, base + j);
      max = v > max ? v : max;
    }
    max = warpMax(max);
    double sum = 0;
    for (int64_t j = lane; j < c; j += 32)
      sum += math::exp(loadDouble(logits, dtype, base + j) - max);
    // Every lane has read its elements: the row may be overwritten.
    const double inv = 1 / warpSum(sum);
    for (int64_t j = lane; j < c; j += 32) {
      const double p =
          __dmul_rn(math::exp(loadDouble(logits, dtype, base + j) - max), inv);
      storeDouble(dx, dtype, base + j, (p - (j == label ? 1.0 : 0.0)) * scale);
    }
  }
}

/// grad_loss * 2 * (p - t) / numel, element-wise in the compute type C.
template <typename C>
__global__ void mseLossBackwardKernel(const void *gradLoss, DType gradType,
                                      const void *p, const void *t, void *dx,
                                      DType dtype, int64_t n) {
  const C scale = static_cast<C>(2 * loadDouble(gradLoss, gradType, 0) /
                                 static_cast<double>(n));
  MEMOPT_GRID_STRIDE(i, n) {
    storeAs(dx, dtype, i,
            scale * (loadAs<C>(p, dtype, i) - loadAs<C>(t, dtype, i)));
  }
}

} // namespace

void sumTo(const KernelCall &call) {
  const TensorRef &x = call.in(0), &y = call.out(0);
  if (y.numElements == x.numElements) {
    // Only leading or size-1 dimensions differ: a copy.
    copyAsync(call, y.data, x.data, y.bytes());
    return;
  }
  const Shape &xs = *x.shape, &ys = *y.shape;
  const size_t rank = xs.size();
  if (rank > static_cast<size_t>(kMaxRank))
    throw Error(ErrorCode::Internal,
                runtime::concat("cuda: rank ", rank, " exceeds ", kMaxRank));
  // Rank >= 1 here: a scalar x has one element, so the copy above took it.
  const Shape xStrides = contiguousStrides(xs), yOwn = contiguousStrides(ys);
  SumToShape s;
  for (size_t d = 0; d < rank; ++d) {
    const size_t lead = rank - ys.size();
    const bool kept = d >= lead && ys[d - lead] != 1;
    if (kept) {
      s.keptSize[s.kept] = xs[d];
      s.keptOutStride[s.kept] = yOwn[d - lead];
      s.keptInStride[s.kept] = xStrides[d];
      ++s.kept;
    } else if (d + 1 == rank) {
      s.lastReduced = true;
      s.inner = xs[d];
    } else {
      s.reducedSize[s.reduced] = xs[d];
      s.reducedInStride[s.reduced] = xStrides[d];
      s.outerCount *= xs[d];
      ++s.reduced;
    }
  }
  const int64_t preimage = s.outerCount * s.inner;
  if (preimage >= 2048 && y.numElements < 16384) {
    sumToBlockKernel<<<static_cast<unsigned>(y.numElements), kThreads, 0,
                       call.cuda.stream>>>(x.data, y.data, y.dtype, s,
                                           y.numElements);
  } else {
    sumToThreadKernel<<<blocksFor(y.numElements), kThreads, 0,
                        call.cuda.stream>>>(x.data, y.data, y.dtype, s,
                                            y.numElements);
  }
  checkLaunch("sum_to");
}

void globalAvgPool2D(const KernelCall &call) {
  const TensorRef &x = call.in(0), &y = call.out(0);
  const int64_t planes = x.dim(0) * x.dim(1), size = x.dim(2) * x.dim(3);
  globalAvgPoolKernel<<<blocksForRows(planes), kThreads, 0, call.cuda.stream>>>(
      x.data, y.data, y.dtype, planes, size);
  checkLaunch("global_avg_pool2d");
}

void globalAvgPool2DBackward(const KernelCall &call) {
  const TensorRef &dy = call.in(0), &dx = call.out(0);
  globalAvgPoolBackwardKernel<<<blocksFor(dx.numElements), kThreads, 0,
                                call.cuda.stream>>>(
      dy.data, dx.data, dx.dtype, dx.dim(2) * dx.dim(3), dx.numElements);
  checkLaunch("global_avg_pool2d_backward");
}

void reduceExtremum(const KernelCall &call) {
  const TensorRef &x = call.in(0), &y = call.out(0);
  const int64_t n = x.shape->back(), rows = n ? x.numElements / n : 0;
  const bool max = call.step.kernel == KernelKind::ReduceMax;
  if (rows == 0)
    return;
  dispatchCompute(call, [&](auto tag) {
    reduceExtremumKernel<decltype(tag)>
        <<<blocksForRows(rows), kThreads, 0, call.cuda.stream>>>(
            x.data, y.data, y.dtype, rows, n, max);
  });
  checkLaunch(max ? "reduce_max" : "reduce_min");
}

void reduceExtremumBackward(const KernelCall &call) {
  const TensorRef &g = call.in(0), &x = call.in(1), &m = call.in(2),
                  &dx = call.out(0);
  const int64_t n = x.shape->back(), rows = n ? x.numElements / n : 0;
  if (rows == 0)
    return;
  dispatchCompute(call, [&](auto tag) {
    reduceExtremumBackwardKernel<decltype(tag)>
        <<<blocksForRows(rows), kThreads, 0, call.cuda.stream>>>(
            g.data, x.data, m.data, dx.data, dx.dtype, rows, n);
  });
  checkLaunch("reduce_extremum_backward");
}

void softmax(const KernelCall &call) {
  const TensorRef &x = call.in(0), &y = call.out(0);
  const SoftmaxAttrs &a = call.step.get<SoftmaxAttrs>();
  const AxisSplit s = splitAt(*x.shape, a.axis);
  dispatchCompute(call, [&](auto tag) {
    using C = decltype(tag);
    if (s.inner == 1)
      softmaxRowsKernel<C>
          <<<blocksForRows(s.outer), kThreads, 0, call.cuda.stream>>>(
              x.data, y.data, y.dtype, s.outer, s.len, a.causal, a.safe);
    else
      softmaxStridedKernel<C>
          <<<blocksFor(s.outer * s.inner), kThreads, 0, call.cuda.stream>>>(
              x.data, y.data, y.dtype, s.outer, s.len, s.inner, a.safe);
  });
  checkLaunch("softmax");
}

void softmaxBackward(const KernelCall &call) {
  const TensorRef &g = call.in(0), &y = call.in(1), &dx = call.out(0);
  const AxisSplit s = splitAt(*g.shape, call.step.get<SoftmaxAttrs>().axis);
  dispatchCompute(call, [&](auto tag) {
    using C = decltype(tag);
    if (s.inner == 1)
      softmaxBackwardRowsKernel<C>
          <<<blocksForRows(s.outer), kThreads, 0, call.cuda.stream>>>(
              g.data, y.data, dx.data, dx.dtype, s.outer, s.len);
    else
      softmaxBackwardStridedKernel<C>
          <<<blocksFor(s.outer * s.inner), kThreads, 0, call.cuda.stream>>>(
              g.data, y.data, dx.data, dx.dtype, s.outer, s.len, s.inner);
  });
  checkLaunch("softmax_backward");
}

void crossEntropy(const KernelCall &call) {
  const TensorRef &logits = call.in(0), &labels = call.in(1);
  const int64_t n = logits.dim(0), c = logits.dim(1);
  const int code = static_cast<int>(call.context.stepIndex) + 1;
  const LossLaunch l = lossLaunch(call, reduction::crossEntropyBlocks(n));
  crossEntropyKernel<<<l.blocks, l.threads, 0, call.cuda.stream>>>(
      logits.data, logits.dtype, labels.data, labels.dtype, n, c, l.partials,
      call.out(0).data, call.cuda.errorFlag, code);
  checkLaunch("cross_entropy");
  if (l.partials) {
    finishLossKernel<<<1, 32, 0, call.cuda.stream>>>(
        l.partials, static_cast<int>(l.blocks), call.out(0).data,
        call.out(0).dtype, static_cast<double>(n));
    checkLaunch("cross_entropy");
  }
}

void crossEntropyBackward(const KernelCall &call) {
  const TensorRef &gl = call.in(0), &logits = call.in(1), &labels = call.in(2),
                  &dx = call.out(0);
  const int64_t n = logits.dim(0), c = logits.dim(1);
  const int code = static_cast<int>(call.context.stepIndex) + 1;
  crossEntropyBackwardKernel<<<blocksForRows(n), kThreads, 0,
                               call.cuda.stream>>>(
      gl.data, gl.dtype, logits.data, dx.data, dx.dtype, labels.data,
      labels.dtype, n, c, call.cuda.errorFlag, code);
  checkLaunch("cross_entropy_backward");
}

void mseLoss(const KernelCall &call) {
  const TensorRef &p = call.in(0), &t = call.in(1), &out = call.out(0);
  const LossLaunch l =
      lossLaunch(call, reduction::mseLossBlocks(p.numElements));
  mseLossKernel<<<l.blocks, l.threads, 0, call.cuda.stream>>>(
      p.data, t.data, p.dtype, p.numElements, l.partials, out.data);
  checkLaunch("mse_loss");
  if (l.partials) {
    finishLossKernel<<<1, 32, 0, call.cuda.stream>>>(
        l.partials, static_cast<int>(l.blocks), out.data, out.dtype,
        static_cast<double>(p.numElements));
    checkLaunch("mse_loss");
  }
}

void mseLossBackward(const KernelCall &call) {
  const TensorRef &gl = call.in(0), &p = call.in(1), &t = call.in(2),
                  &dx = call.out(0);
  dispatchCompute(call, [&](auto tag) {
    using C = decltype(tag);
    mseLossBackwardKernel<C>
        <<<blocksFor(p.numElements), kThreads, 0, call.cuda.stream>>>(
            gl.data, gl.dtype, p.data, t.data, dx.data, dx.dtype,
            p.numElements);
  });
  checkLaunch("mse_loss_backward");
}

} // namespace memopt::runtime::cuda
