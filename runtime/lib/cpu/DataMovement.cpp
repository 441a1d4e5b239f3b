//===- DataMovement.cpp - reshape, transpose, slice, concat, upsample, ----===//
//                        embedding, slice_backward on the CPU
//
// These kernels move elements without arithmetic, so they work on any
// dtype by element size (2, 4 or 8 bytes), including f16/bf16 without
// widening. reshape copies only when its output does not alias its input.
// slice_backward zero-fills (all-zero bits are 0.0 in every float dtype)
// and scatters the gradient where the slice read.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "DispatchSize.h"
#include "Indexing.h"

#include <algorithm>

namespace memopt::runtime::cpu {

namespace {

/// Copies the elements of `in` visited in `outShape`'s row-major order with
/// `inStrides` (one stride per output dimension) into the contiguous `out`.
template <typename E>
void gatherStrided(const E *in, int64_t base, const Shape &outShape,
                   const Shape &inStrides, E *out) {
  if (outShape.empty()) {
    out[0] = in[base];
    return;
  }
  const int64_t inner = outShape.back();
  const int64_t step = inStrides.back();
  E *row = out;
  forEachRow<1>(outShape, std::array<Shape, 1>{inStrides},
                [&](const std::array<int64_t, 1> &off) {
                  const E *src = in + base + off[0];
                  if (step == 1) {
                    std::copy(src, src + inner, row);
                  } else {
                    for (int64_t i = 0; i < inner; ++i)
                      row[i] = src[i * step];
                  }
                  row += inner;
                });
}

/// The inverse of gatherStrided: writes the contiguous `in` to the elements
/// of `out` visited in `inShape`'s row-major order with `outStrides`.
template <typename E>
void scatterStrided(const E *in, const Shape &inShape, const Shape &outStrides,
                    E *out, int64_t base) {
  if (inShape.empty()) {
    out[base] = in[0];
    return;
  }
  const int64_t inner = inShape.back();
  const int64_t step = outStrides.back();
  const E *row = in;
  forEachRow<1>(inShape, std::array<Shape, 1>{outStrides},
                [&](const std::array<int64_t, 1> &off) {
                  E *dst = out + base + off[0];
                  if (step == 1) {
                    std::copy(row, row + inner, dst);
                  } else {
                    for (int64_t i = 0; i < inner; ++i)
                      dst[i * step] = row[i];
                  }
                  row += inner;
                });
}

} // namespace

void sliceBackward(const KernelCall &call) {
  const TensorRef &g = call.in(0), &dx = call.out(0);
  const SliceAttrs &a = call.step.get<SliceAttrs>();
  Shape own = contiguousStrides(*dx.shape);
  Shape strides(own.size());
  int64_t base = 0;
  for (size_t d = 0; d < own.size(); ++d) {
    base += a.offsets[d] * own[d];
    strides[d] = a.strides[d] * own[d];
  }
  std::memset(dx.data, 0, dx.bytes());
  dispatchSize(dx.dtype, [&](auto tag) {
    using E = decltype(tag);
    scatterStrided<E>(g.as<const E>(), *g.shape, strides, dx.as<E>(), base);
  });
}

void reshape(const KernelCall &call) {
  const TensorRef &x = call.in(0), &y = call.out(0);
  if (x.data != y.data)
    std::memcpy(y.data, x.data, y.bytes());
}

void transpose(const KernelCall &call) {
  const TensorRef &x = call.in(0), &y = call.out(0);
  const Shape strides =
      permutedStrides(*x.shape, call.step.get<TransposeAttrs>().permutation);
  dispatchSize(x.dtype, [&](auto tag) {
    using E = decltype(tag);
    gatherStrided<E>(x.as<const E>(), 0, *y.shape, strides, y.as<E>());
  });
}

void slice(const KernelCall &call) {
  const TensorRef &x = call.in(0), &y = call.out(0);
  const SliceAttrs &a = call.step.get<SliceAttrs>();
  Shape own = contiguousStrides(*x.shape);
  Shape strides(own.size());
  int64_t base = 0;
  for (size_t d = 0; d < own.size(); ++d) {
    base += a.offsets[d] * own[d];
    strides[d] = a.strides[d] * own[d];
  }
  dispatchSize(x.dtype, [&](auto tag) {
    using E = decltype(tag);
    gatherStrided<E>(x.as<const E>(), base, *y.shape, strides, y.as<E>());
  });
}

void concat(const KernelCall &call) {
  const TensorRef &y = call.out(0);
  const int64_t axis = call.step.get<ConcatAttrs>().axis;
  const size_t elementSize = dtypeSize(y.dtype);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= y.dim(d);
  for (size_t d = axis + 1; d < y.rank(); ++d)
    inner *= y.dim(d);
  const size_t outChunk = y.dim(axis) * inner * elementSize;
  char *out = static_cast<char *>(y.data);
  size_t position = 0; // Byte offset of the current input within a chunk.
  for (const TensorRef &x : call.inputs) {
    const size_t chunk = x.dim(axis) * inner * elementSize;
    const char *in = static_cast<const char *>(x.data);
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(out + o * outChunk + position, in + o * chunk, chunk);
    position += chunk;
  }
}

void upsampleNearest2d(const KernelCall &call) {
  const TensorRef &x = call.in(0), &y = call.out(0);
  const int64_t scale = call.step.get<UpsampleAttrs>().scale;
  const int64_t planes = x.dim(0) * x.dim(1);
  const int64_t h = x.dim(2), w = x.dim(3), oh = y.dim(2), ow = y.dim(3);
  dispatchSize(x.dtype, [&](auto tag) {
    using E = decltype(tag);
    const E *in = x.as<const E>();
    E *out = y.as<E>();
    for (int64_t p = 0; p < planes; ++p) {
      for (int64_t oy = 0; oy < oh; ++oy) {
        const E *src = in + (p * h + oy / scale) * w;
        E *dst = out + (p * oh + oy) * ow;
        for (int64_t ox = 0; ox < ow; ++ox)
          dst[ox] = src[ox / scale];
      }
    }
  });
}

void embedding(const KernelCall &call) {
  const TensorRef &table = call.in(0), &ids = call.in(1), &y = call.out(0);
  const int64_t vocab = table.dim(0);
  const size_t rowBytes = table.dim(1) * dtypeSize(table.dtype);
  const char *src = static_cast<const char *>(table.data);
  char *dst = static_cast<char *>(y.data);
  for (int64_t i = 0; i < ids.numElements; ++i) {
    const int64_t id = loadIndex(ids, i);
    if (id < 0 || id >= vocab)
      kernelError("id ", id, " (ids element ", i, ") is outside [0, ", vocab,
                  ")");
    std::memcpy(dst + i * rowBytes, src + id * rowBytes, rowBytes);
  }
}

} // namespace memopt::runtime::cpu
