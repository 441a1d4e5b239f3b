//===- Reduce.cpp - sum_to and the summing gradients on the CPU -----------===//
//
// The gradients of broadcasting and of the kernels that copy one element to
// many places add those copies back up: sum_to (add's broadcast),
// upsample_nearest2d_backward (each scale x scale block) and
// embedding_backward (rows scatter-added by id, so repeated ids
// accumulate). sum_to and the block sums accumulate in double; the
// embedding table, possibly far larger than the gradient, accumulates in
// the compute type, as in PyTorch. reduce_max and reduce_min take each
// row's extremum; their backward spreads a row's gradient evenly over the
// elements equal to it (torch.amax's rule).
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "Indexing.h"
#include "ParallelFor.h"

#include "memopt/runtime/ElementwiseMath.h"

#include <algorithm>

namespace memopt::runtime::cpu {

namespace {

template <typename T> void sumToImpl(const KernelCall &call) {
  const TensorRef &x = call.in(0), &y = call.out(0);
  const T *px = x.as<const T>();
  T *py = y.as<T>();
  if (y.numElements == x.numElements) {
    // Only leading or size-1 dimensions differ: a copy.
    std::copy(px, px + x.numElements, py);
    return;
  }
  std::vector<double> acc(static_cast<size_t>(y.numElements), 0.0);
  const Shape &shape = *x.shape;
  const size_t rank = shape.size();
  // Rank >= 1 here: a scalar x has one element, so the copy above took it.
  std::array<Shape, 1> strides = {broadcastStrides(*y.shape, rank)};
  const int64_t inner = shape[rank - 1], step = strides[0][rank - 1];
  const T *row = px;
  forEachRow<1>(shape, strides, [&](const std::array<int64_t, 1> &off) {
    double *dst = acc.data() + off[0];
    if (step == 0) {
      double s = 0;
      for (int64_t i = 0; i < inner; ++i)
        s += static_cast<double>(row[i]);
      *dst += s;
    } else {
      for (int64_t i = 0; i < inner; ++i)
        dst[i * step] += static_cast<double>(row[i]);
    }
    row += inner;
  });
  for (int64_t i = 0; i < y.numElements; ++i)
    py[i] = static_cast<T>(acc[i]);
}

template <typename T> void upsampleBackwardImpl(const KernelCall &call) {
  const TensorRef &g = call.in(0), &dx = call.out(0);
  const int64_t scale = call.step.get<UpsampleAttrs>().scale;
  const int64_t planes = dx.dim(0) * dx.dim(1);
  const int64_t h = dx.dim(2), w = dx.dim(3), ow = g.dim(3);
  const T *pg = g.as<const T>();
  T *pdx = dx.as<T>();
  std::vector<double> acc(static_cast<size_t>(w));
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t y = 0; y < h; ++y) {
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t a = 0; a < scale; ++a) {
        const T *src = pg + (p * h * scale + y * scale + a) * ow;
        for (int64_t ox = 0; ox < ow; ++ox)
          acc[ox / scale] += static_cast<double>(src[ox]);
      }
      T *dst = pdx + (p * h + y) * w;
      for (int64_t x = 0; x < w; ++x)
        dst[x] = static_cast<T>(acc[x]);
    }
  }
}

template <typename T> void embeddingBackwardImpl(const KernelCall &call) {
  const TensorRef &g = call.in(0), &ids = call.in(1), &table = call.out(0);
  const int64_t vocab = table.dim(0), width = table.dim(1);
  for (int64_t i = 0; i < ids.numElements; ++i) {
    const int64_t id = loadIndex(ids, i);
    if (id < 0 || id >= vocab)
      kernelError("id ", id, " (ids element ", i, ") is outside [0, ", vocab,
                  ")");
  }
  const T *pg = g.as<const T>();
  T *pt = table.as<T>();
  std::fill(pt, pt + table.numElements, T(0));
  const int64_t padding = call.step.get<EmbeddingAttrs>().paddingIdx;
  for (int64_t i = 0; i < ids.numElements; ++i) {
    const int64_t id = loadIndex(ids, i);
    if (id == padding)
      continue; // nn.Embedding's padding_idx: the row takes no gradient
    T *dst = pt + id * width;
    const T *src = pg + i * width;
    for (int64_t j = 0; j < width; ++j)
      dst[j] += src[j];
  }
}

/// Rows of the last dimension: `rows` of `n` elements.
void rowsOf(const TensorRef &x, int64_t &rows, int64_t &n) {
  n = x.shape->back();
  rows = n ? x.numElements / n : 0;
}

template <typename T> void reduceExtremumImpl(const KernelCall &call) {
  const TensorRef &x = call.in(0), &y = call.out(0);
  const bool max = call.step.kernel == KernelKind::ReduceMax;
  const T *px = x.as<const T>();
  T *py = y.as<T>();
  int64_t rows, n;
  rowsOf(x, rows, n);
  parallelRange(rows, n, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T *row = px + r * n;
      T m = row[0];
      for (int64_t i = 1; i < n; ++i)
        m = max ? math::maximum(m, row[i]) : math::minimum(m, row[i]);
      py[r] = m;
    }
  });
}

template <typename T> void reduceExtremumBackwardImpl(const KernelCall &call) {
  const TensorRef &g = call.in(0), &x = call.in(1), &m = call.in(2),
                  &dx = call.out(0);
  const T *pg = g.as<const T>(), *px = x.as<const T>(), *pm = m.as<const T>();
  T *out = dx.as<T>();
  int64_t rows, n;
  rowsOf(x, rows, n);
  parallelRange(rows, n, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T *row = px + r * n;
      int64_t count = 0;
      for (int64_t i = 0; i < n; ++i)
        count += math::isExtremum(row[i], pm[r]);
      // grad / count, as torch.amax's backward divides.
      const T share = count ? pg[r] / static_cast<T>(count) : T(0);
      for (int64_t i = 0; i < n; ++i)
        out[r * n + i] = math::isExtremum(row[i], pm[r]) ? share : T(0);
    }
  });
}

} // namespace

void reduceExtremum(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype,
                [&](auto tag) { reduceExtremumImpl<decltype(tag)>(call); });
}

void reduceExtremumBackward(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype, [&](auto tag) {
    reduceExtremumBackwardImpl<decltype(tag)>(call);
  });
}

void sumTo(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype,
                [&](auto tag) { sumToImpl<decltype(tag)>(call); });
}

void upsampleNearest2dBackward(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype,
                [&](auto tag) { upsampleBackwardImpl<decltype(tag)>(call); });
}

void embeddingBackward(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype,
                [&](auto tag) { embeddingBackwardImpl<decltype(tag)>(call); });
}

} // namespace memopt::runtime::cpu
