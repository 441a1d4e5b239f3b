//===- Reduce.cpp - sum_to and the summing gradients on the CPU -----------===//
//
// The gradients of broadcasting and of the kernels that copy one element to
// many places add those copies back up: sum_to (add's broadcast),
// upsample_nearest2d_backward (each scale x scale block) and
// embedding_backward (rows scatter-added by id, so repeated ids
// accumulate). sum_to and the block sums accumulate in double; the
// embedding table, possibly far larger than the gradient, accumulates in
// the compute type, as in PyTorch.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "Indexing.h"

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

} // namespace

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
