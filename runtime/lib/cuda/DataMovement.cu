//===- DataMovement.cu - reshape, transpose, slice, concat, upsample, -----===//
//                       embedding and their gradients on the GPU
//
// The forward kernels move elements without arithmetic, so they copy raw
// elements of 2, 4 or 8 bytes (any dtype, f16/bf16 without widening), one
// thread per output element. reshape copies only when its output does not
// alias its input. slice_backward zero-fills (all-zero bits are 0.0 in every
// float dtype) and scatters the gradient where the slice read.
//
// The gradients that add copies back up are deterministic and follow the
// CPU's order: upsample_nearest2d_backward gives each input cell one thread
// that sums its scale x scale block in double, row by row as the CPU does;
// embedding_backward gives each distinct id one block (the block of its
// first occurrence) that sums the gradient rows of every occurrence in
// position order, in the compute type (float, or double for f64), and
// stores the row once. No atomics, so f16/bf16 tables are rounded once, and
// the result matches the CPU bit for bit (same additions, same order).
//
//===----------------------------------------------------------------------===//

#include "Device.cuh"
#include "DispatchSize.h"

namespace memopt::runtime::cuda {

namespace {

/// A contiguous tensor of shape `dims` and, for each of its dimensions, the
/// element stride of the same index in a strided view of another tensor
/// starting at `base` (transpose, slice and slice_backward).
struct StridedView {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};
  int64_t base = 0;
};

StridedView stridedView(const Shape &dims, const Shape &strides, int64_t base) {
  if (dims.size() > static_cast<size_t>(kMaxRank))
    throw Error(ErrorCode::Internal, runtime::concat("cuda: rank ", dims.size(),
                                                     " exceeds ", kMaxRank));
  StridedView v;
  v.rank = static_cast<int>(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    v.dims[d] = dims[d];
    v.strides[d] = strides[d];
  }
  v.base = base;
  return v;
}

/// The strided view's offset of contiguous element `i`.
__device__ inline int64_t viewOffset(const StridedView &v, int64_t i) {
  int64_t offset = v.base;
  for (int d = v.rank - 1; d >= 0; --d) {
    const int64_t q = i / v.dims[d];
    offset += (i - q * v.dims[d]) * v.strides[d];
    i = q;
  }
  return offset;
}

/// Gather: contiguous `out` from the view of `in`.
template <typename E>
__global__ void gatherKernel(const E *__restrict__ in, E *__restrict__ out,
                             StridedView v, int64_t n) {
  MEMOPT_GRID_STRIDE(i, n) { out[i] = in[viewOffset(v, i)]; }
}

/// Scatter: contiguous `in` to the view of `out`.
template <typename E>
__global__ void scatterKernel(const E *__restrict__ in, E *__restrict__ out,
                              StridedView v, int64_t n) {
  MEMOPT_GRID_STRIDE(i, n) { out[viewOffset(v, i)] = in[i]; }
}

/// Copies one input of a concatenation: `outer` chunks of `chunk` elements
/// to chunks of `outChunk` elements, at `position` within each.
template <typename E>
__global__ void concatKernel(const E *__restrict__ in, E *__restrict__ out,
                             int64_t outer, int64_t chunk, int64_t outChunk,
                             int64_t position) {
  MEMOPT_GRID_STRIDE(i, outer * chunk) {
    const int64_t o = i / chunk;
    out[o * outChunk + position + (i - o * chunk)] = in[i];
  }
}

template <typename E>
__global__ void upsampleKernel(const E *__restrict__ in, E *__restrict__ out,
                               int64_t h, int64_t w, int64_t oh, int64_t ow,
                               int64_t scale, int64_t n) {
  MEMOPT_GRID_STRIDE(i, n) {
    const int64_t ox = i % ow, rest = i / ow;
    const int64_t oy = rest % oh, p = rest / oh;
    out[i] = in[(p * h + oy / scale) * w + ox / scale];
  }
}

/// One thread per input cell: the sum of its scale x scale block in double,
/// in the CPU's order (block rows, then columns).
__global__ void upsampleBackwardKernel(const void *grad, void *dx, DType dtype,
                                       int64_t h, int64_t w, int64_t scale,
                                       int64_t n) {
  const int64_t ow = w * scale;
  MEMOPT_GRID_STRIDE(i, n) {
    const int64_t x = i % w, rest = i / w;
    const int64_t y = rest % h, p = rest / h;
    double acc = 0;
    for (int64_t a = 0; a < scale; ++a) {
      const int64_t row = (p * h * scale + y * scale + a) * ow + x * scale;
      for (int64_t b = 0; b < scale; ++b)
        acc += loadDouble(grad, dtype, row + b);
    }
    storeDouble(dx, dtype, i, acc);
  }
}

template <typename E>
__global__ void embeddingKernel(const E *__restrict__ table, const void *ids,
                                DType idType, E *__restrict__ out,
                                int64_t vocab, int64_t width, int64_t n,
                                int *flag, int code) {
  MEMOPT_GRID_STRIDE(i, n) {
    const int64_t r = i / width;
    const int64_t id = loadIndex(ids, idType, r);
    if (id < 0 || id >= vocab) {
      raiseError(flag, code);
      out[i] = E(0);
      continue;
    }
    out[i] = table[id * width + (i - r * width)];
  }
}

/// Threads of an embedding_backward block, and the table columns each
/// thread accumulates at once.
constexpr int kEmbeddingThreads = 256;
constexpr int kEmbeddingColumns = 4;

/// One block per position i whose id occurs first at i: the block lists
/// every position with that id in increasing order (a chunk of positions at
/// a time, compacted order-preserving with warp ballots) and each thread
/// adds those gradient rows' elements of its columns, in the compute type C,
/// then stores the table row once. Blocks of later occurrences do nothing;
/// the table rows of ids that do not occur keep the zeros written before.
template <typename C>
__global__ void __launch_bounds__(kEmbeddingThreads)
    embeddingBackwardKernel(const void *grad, void *table, DType dtype,
                            const void *ids, DType idType, int64_t vocab,
                            int64_t width, int64_t n, int64_t padding,
                            int *flag, int code) {
  constexpr int kWarps = kEmbeddingThreads / 32;
  __shared__ int64_t positions[kEmbeddingThreads];
  __shared__ int warpCounts[kWarps];
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  for (int64_t i = blockIdx.x; i < n; i += gridDim.x) {
    const int64_t id = loadIndex(ids, idType, i);
    if (id < 0 || id >= vocab) {
      if (t == 0)
        raiseError(flag, code);
      continue;
    }
    // padding_idx: the row keeps the zeros written before.
    if (id == padding)
      continue;
    bool earlier = false;
    for (int64_t j = t; j < i && !earlier; j += kEmbeddingThreads)
      earlier = loadIndex(ids, idType, j) == id;
    if (__syncthreads_or(earlier))
      continue;

    for (int64_t c0 = 0; c0 < width;
         c0 += int64_t(kEmbeddingColumns) * kEmbeddingThreads) {
      C acc[kEmbeddingColumns];
#pragma unroll
      for (int k = 0; k < kEmbeddingColumns; ++k)
        acc[k] = C(0);
      for (int64_t j0 = i; j0 < n; j0 += kEmbeddingThreads) {
        const int64_t j = j0 + t;
        const bool match = j < n && loadIndex(ids, idType, j) == id;
        const unsigned mask = __ballot_sync(0xffffffffu, match);
        if (lane == 0)
          warpCounts[warp] = __popc(mask);
        __syncthreads();
        int offset = __popc(mask & ((1u << lane) - 1u)), total = 0;
        for (int w = 0; w < kWarps; ++w) {
          if (w < warp)
            offset += warpCounts[w];
          total += warpCounts[w];
        }
        if (match)
          positions[offset] = j;
        __syncthreads();
        for (int m = 0; m < total; ++m) {
          const int64_t row = positions[m] * width;
#pragma unroll
          for (int k = 0; k < kEmbeddingColumns; ++k) {
            const int64_t d = c0 + t + int64_t(k) * kEmbeddingThreads;
            if (d < width)
              acc[k] += loadAs<C>(grad, dtype, row + d);
          }
        }
        // The next chunk rewrites positions and warpCounts.
        __syncthreads();
      }
#pragma unroll
      for (int k = 0; k < kEmbeddingColumns; ++k) {
        const int64_t d = c0 + t + int64_t(k) * kEmbeddingThreads;
        if (d < width)
          storeAs(table, dtype, id * width + d, acc[k]);
      }
    }
  }
}

} // namespace

void reshape(const KernelCall &call) {
  const TensorRef &x = call.in(0), &y = call.out(0);
  copyAsync(call, y.data, x.data, y.bytes());
}

void transpose(const KernelCall &call) {
  const TensorRef &x = call.in(0), &y = call.out(0);
  const Shape strides =
      permutedStrides(*x.shape, call.step.get<TransposeAttrs>().permutation);
  StridedView v = stridedView(*y.shape, strides, 0);
  dispatchSize(x.dtype, [&](auto tag) {
    using E = decltype(tag);
    gatherKernel<E>
        <<<blocksFor(y.numElements), kThreads, 0, call.cuda.stream>>>(
            x.as<const E>(), y.as<E>(), v, y.numElements);
  });
  checkLaunch("transpose");
}

namespace {

/// The view of the sliced tensor `full` that a slice reads (or its
/// backward writes), over the slice's shape.
StridedView sliceView(const SliceAttrs &a, const Shape &full,
                      const Shape &sliced) {
  Shape own = contiguousStrides(full);
  Shape strides(own.size());
  int64_t base = 0;
  for (size_t d = 0; d < own.size(); ++d) {
    base += a.offsets[d] * own[d];
    strides[d] = a.strides[d] * own[d];
  }
  return stridedView(sliced, strides, base);
}

} // namespace

void slice(const KernelCall &call) {
  const TensorRef &x = call.in(0), &y = call.out(0);
  StridedView v = sliceView(call.step.get<SliceAttrs>(), *x.shape, *y.shape);
  dispatchSize(x.dtype, [&](auto tag) {
    using E = decltype(tag);
    gatherKernel<E>
        <<<blocksFor(y.numElements), kThreads, 0, call.cuda.stream>>>(
            x.as<const E>(), y.as<E>(), v, y.numElements);
  });
  checkLaunch("slice");
}

void sliceBackward(const KernelCall &call) {
  const TensorRef &g = call.in(0), &dx = call.out(0);
  StridedView v = sliceView(call.step.get<SliceAttrs>(), *dx.shape, *g.shape);
  check(cudaMemsetAsync(dx.data, 0, dx.bytes(), call.cuda.stream),
        "cudaMemsetAsync");
  dispatchSize(dx.dtype, [&](auto tag) {
    using E = decltype(tag);
    scatterKernel<E>
        <<<blocksFor(g.numElements), kThreads, 0, call.cuda.stream>>>(
            g.as<const E>(), dx.as<E>(), v, g.numElements);
  });
  checkLaunch("slice_backward");
}

void concat(const KernelCall &call) {
  const TensorRef &y = call.out(0);
  const int64_t axis = call.step.get<ConcatAttrs>().axis;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= y.dim(d);
  for (size_t d = axis + 1; d < y.rank(); ++d)
    inner *= y.dim(d);
  const int64_t outChunk = y.dim(axis) * inner;
  int64_t position = 0; // Element offset of the current input in a chunk.
  for (const TensorRef &x : call.inputs) {
    const int64_t chunk = x.dim(axis) * inner;
    dispatchSize(y.dtype, [&](auto tag) {
      using E = decltype(tag);
      concatKernel<E>
          <<<blocksFor(outer * chunk), kThreads, 0, call.cuda.stream>>>(
              x.as<const E>(), y.as<E>(), outer, chunk, outChunk, position);
    });
    checkLaunch("concat");
    position += chunk;
  }
}

void upsampleNearest2D(const KernelCall &call) {
  const TensorRef &x = call.in(0), &y = call.out(0);
  const int64_t scale = call.step.get<UpsampleAttrs>().scale;
  dispatchSize(x.dtype, [&](auto tag) {
    using E = decltype(tag);
    upsampleKernel<E>
        <<<blocksFor(y.numElements), kThreads, 0, call.cuda.stream>>>(
            x.as<const E>(), y.as<E>(), x.dim(2), x.dim(3), y.dim(2), y.dim(3),
            scale, y.numElements);
  });
  checkLaunch("upsample_nearest2d");
}

void upsampleNearest2DBackward(const KernelCall &call) {
  const TensorRef &g = call.in(0), &dx = call.out(0);
  const int64_t scale = call.step.get<UpsampleAttrs>().scale;
  upsampleBackwardKernel<<<blocksFor(dx.numElements), kThreads, 0,
                           call.cuda.stream>>>(
      g.data, dx.data, dx.dtype, dx.dim(2), dx.dim(3), scale, dx.numElements);
  checkLaunch("upsample_nearest2d_backward");
}

void embedding(const KernelCall &call) {
  const TensorRef &table = call.in(0), &ids = call.in(1), &y = call.out(0);
  const int code = static_cast<int>(call.context.stepIndex) + 1;
  dispatchSize(table.dtype, [&](auto tag) {
    using E = decltype(tag);
    embeddingKernel<E>
        <<<blocksFor(y.numElements), kThreads, 0, call.cuda.stream>>>(
            table.as<const E>(), ids.data, ids.dtype, y.as<E>(), table.dim(0),
            table.dim(1), y.numElements, call.cuda.errorFlag, code);
  });
  checkLaunch("embedding");
}

void embeddingBackward(const KernelCall &call) {
  const TensorRef &g = call.in(0), &ids = call.in(1), &table = call.out(0);
  const int code = static_cast<int>(call.context.stepIndex) + 1;
  const int64_t padding = call.step.get<EmbeddingAttrs>().paddingIdx;
  check(cudaMemsetAsync(table.data, 0, table.bytes(), call.cuda.stream),
        "cudaMemsetAsync");
  const int64_t n = ids.numElements;
  const unsigned blocks =
      static_cast<unsigned>(n < (int64_t(1) << 20) ? n : int64_t(1) << 20);
  if (table.dtype == DType::F64)
    embeddingBackwardKernel<double>
        <<<blocks, kEmbeddingThreads, 0, call.cuda.stream>>>(
            g.data, table.data, table.dtype, ids.data, ids.dtype, table.dim(0),
            table.dim(1), n, padding, call.cuda.errorFlag, code);
  else
    embeddingBackwardKernel<float>
        <<<blocks, kEmbeddingThreads, 0, call.cuda.stream>>>(
            g.data, table.data, table.dtype, ids.data, ids.dtype, table.dim(0),
            table.dim(1), n, padding, call.cuda.errorFlag, code);
  checkLaunch("embedding_backward");
}

} // namespace memopt::runtime::cuda
