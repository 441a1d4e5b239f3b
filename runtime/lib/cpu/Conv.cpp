//===- Conv.cpp - conv2d and its gradients on the CPU ---------------------===//
//
// im2col + GEMM: for each image and group, the receptive fields are laid out
// as a (C/g*R*S) x (OH*OW) matrix and multiplied by the group's K/g x
// (C/g*R*S) weights, writing straight into the NCHW output. A 1x1 conv with
// unit stride and no padding needs no im2col: the input already is that
// matrix. The column matrix (one image-group at a time) lives in the step's
// workspace, which the compiler reserves in the arena for exactly this
// (WorkspaceModel.cpp); when the plan caps workspaces (`workspace-limit`)
// the matrix is built and multiplied a chunk of output rows at a time. Only
// a plan without a workspace for one output row makes the call allocate.
//
// The gradients are the same products transposed: the input's gradient is
// W^T * dY scattered back by col2im (the adjoint of im2col: overlapping
// receptive fields add up), the weight's is the sum over images of
// dY * col^T.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "Gemm.h"
#include "ParallelFor.h"
#include "WorkspaceRows.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

namespace memopt::runtime::cpu {

namespace {

/// Lays out the receptive fields of output rows [y0, y1) of one image-group
/// (`channels` x H x W) as rows (c, r, s) and columns (oh in [y0, y1), ow)
/// of `col`, whose rows are (y1 - y0) * ow long.
template <typename T>
void im2col(const T *src, int64_t channels, int64_t h, int64_t w, int64_t kh,
            int64_t kw, const Conv2DAttrs &a, int64_t y0, int64_t y1,
            int64_t ow, T *col) {
  const int64_t sh = a.strides[0], sw = a.strides[1];
  const int64_t ph = a.padding[0], pw = a.padding[1];
  const int64_t dh = a.dilations[0], dw = a.dilations[1];
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t r = 0; r < kh; ++r) {
      for (int64_t s = 0; s < kw; ++s) {
        T *row = col + ((c * kh + r) * kw + s) * (y1 - y0) * ow;
        // Columns ow with 0 <= ow*sw + shift < w read the input; the rest
        // are padding. Compute that range once per row instead of testing
        // every element.
        int64_t shift = s * dw - pw;
        int64_t lo = shift >= 0 ? 0 : (-shift + sw - 1) / sw;
        int64_t hi = w - 1 - shift < 0 ? -1 : (w - 1 - shift) / sw;
        lo = std::min(lo, ow);
        hi = std::min(hi, ow - 1);
        for (int64_t y = y0; y < y1; ++y) {
          T *out = row + (y - y0) * ow;
          int64_t ih = y * sh - ph + r * dh;
          if (ih < 0 || ih >= h || hi < lo) {
            std::fill(out, out + ow, T(0));
            continue;
          }
          const T *in = src + (c * h + ih) * w;
          std::fill(out, out + lo, T(0));
          if (sw == 1) {
            std::copy(in + lo + shift, in + hi + shift + 1, out + lo);
          } else {
            for (int64_t x = lo; x <= hi; ++x)
              out[x] = in[x * sw + shift];
          }
          std::fill(out + hi + 1, out + ow, T(0));
        }
      }
    }
  }
}

/// The adjoint of im2col over output rows [y0, y1): adds each column entry
/// (c, r, s; oh, ow) to the input position it was read from. `dst` must be
/// zeroed by the caller before the first chunk.
template <typename T>
void col2im(const T *col, int64_t channels, int64_t h, int64_t w, int64_t kh,
            int64_t kw, const Conv2DAttrs &a, int64_t y0, int64_t y1,
            int64_t ow, T *dst) {
  const int64_t sh = a.strides[0], sw = a.strides[1];
  const int64_t ph = a.padding[0], pw = a.padding[1];
  const int64_t dh = a.dilations[0], dw = a.dilations[1];
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t r = 0; r < kh; ++r) {
      for (int64_t s = 0; s < kw; ++s) {
        const T *row = col + ((c * kh + r) * kw + s) * (y1 - y0) * ow;
        // The same column range as in im2col.
        int64_t shift = s * dw - pw;
        int64_t lo = shift >= 0 ? 0 : (-shift + sw - 1) / sw;
        int64_t hi = w - 1 - shift < 0 ? -1 : (w - 1 - shift) / sw;
        lo = std::min(lo, ow);
        hi = std::min(hi, ow - 1);
        if (hi < lo)
          continue;
        for (int64_t y = y0; y < y1; ++y) {
          int64_t ih = y * sh - ph + r * dh;
          if (ih < 0 || ih >= h)
            continue;
          const T *in = row + (y - y0) * ow;
          T *out = dst + (c * h + ih) * w;
          for (int64_t x = lo; x <= hi; ++x)
            out[x * sw + shift] += in[x];
        }
      }
    }
  }
}

/// The sizes shared by conv2d and its gradients, from the input (x or dx),
/// weight (w or dw) and output (y or dy) tensors.
struct ConvSizes {
  int64_t n, c, h, w, k, kh, kw, oh, ow, groups, cg, kg, colRows, colCols;
  bool direct;

  ConvSizes(const TensorRef &x, const TensorRef &wt, const TensorRef &y,
            const Conv2DAttrs &a)
      : n(x.dim(0)), c(x.dim(1)), h(x.dim(2)), w(x.dim(3)), k(wt.dim(0)),
        kh(wt.dim(2)), kw(wt.dim(3)), oh(y.dim(2)), ow(y.dim(3)),
        groups(a.groups), cg(c / groups), kg(k / groups), colRows(cg * kh * kw),
        colCols(oh * ow),
        direct(kh == 1 && kw == 1 && a.strides[0] == 1 && a.strides[1] == 1 &&
               a.padding[0] == 0 && a.padding[1] == 0) {}
};

/// Storage for im2col matrices: the matrix of `rowsPerChunk` output rows
/// at a time (WorkspaceRows: all of them unless the plan capped the
/// workspace, and a whole matrix of the call's own without one), none for
/// a direct (1x1) convolution.
template <typename T> class ColumnBuffer {
public:
  ColumnBuffer(const KernelCall &call, const ConvSizes &z) {
    rowsPerChunk = z.oh;
    if (z.direct || z.colCols == 0)
      return;
    rows.emplace(call, z.colRows * z.ow, z.oh);
    rowsPerChunk = rows->rows;
  }
  T *data() { return rows ? rows->data() : nullptr; }
  /// Output rows whose columns fit at once.
  int64_t rowsPerChunk = 0;

private:
  std::optional<WorkspaceRows<T>> rows;
};

/// Calls `f(y0, y1)` for consecutive chunks of output rows covering
/// [r0, r1), `rows` at a time.
template <typename F>
void forEachRowChunk(int64_t r0, int64_t r1, int64_t rows, F &&f) {
  for (int64_t y0 = r0; y0 < r1; y0 += rows)
    f(y0, std::min(r1, y0 + rows));
}

/// Multiply-adds below which a call's parts would cost more in waking
/// threads than they save.
constexpr int64_t kMinWorkPerPart = int64_t(1) << 20;

/// How many parts a call of these sizes splits into: at most `limit` (the
/// items it can split), at most the kernel threads, and only where each
/// part gets kMinWorkPerPart.
int partsFor(const ConvSizes &z, int64_t limit) {
  const int64_t work = z.n * z.k * z.colRows * z.colCols;
  const int64_t byWork = std::max<int64_t>(1, work / kMinWorkPerPart);
  return static_cast<int>(std::max<int64_t>(
      1, std::min({static_cast<int64_t>(kernelThreads()), limit, byWork})));
}

/// A gradient kernel's part: input channels [ch0, ch1) of every group,
/// whose `rows` rows of the column matrix sit at a fixed place for every
/// chunk (row ch0 · taps of a chunkCols-wide matrix): the parts move
/// through the chunks independently, and a chunk can be shorter.
struct ChannelPart {
  int64_t ch0, ch1, rows, chunkCols;
};

/// Calls f(part) for each part of a gradient kernel's split by input
/// channel, the parts on the kernel threads (partsFor).
template <typename F>
void forEachChannelPart(const ConvSizes &z, int64_t rowsPerChunk, F &&f) {
  const int parts = partsFor(z, z.cg);
  parallelFor(parts, [&](int part) {
    ChannelPart p;
    splitRange(z.cg, parts, part, p.ch0, p.ch1);
    p.rows = (p.ch1 - p.ch0) * z.kh * z.kw;
    p.chunkCols = rowsPerChunk * z.ow;
    f(p);
  });
}

// The three kernels split into parts that write disjoint memory: conv2d by
// output rows (or output columns when direct), each part building its rows'
// im2col columns in its own slice of the workspace; the two gradients by
// input channel, each part owning its channels' rows of the column matrix,
// of the input gradient and of the weight gradient, and adding up the
// images and chunks in the same order as one thread. Each part's products
// are smaller than one thread's, which oneDNN may sum in another order.

template <typename T> void conv2dImpl(const KernelCall &call) {
  const TensorRef &x = call.in(0), &w = call.in(1), &y = call.out(0);
  const Conv2DAttrs &a = call.step.get<Conv2DAttrs>();
  const ConvSizes z(x, w, y, a);
  ColumnBuffer<T> col(call, z);
  const T *px = x.as<const T>(), *pw = w.as<const T>();
  const T *bias = call.inputs.size() == 3 ? call.in(2).as<const T>() : nullptr;
  T *py = y.as<T>();
  // Each part takes a slice of the workspace's rows (direct: of the columns).
  const int parts =
      partsFor(z, z.direct ? z.colCols : std::min(z.oh, col.rowsPerChunk));
  const int64_t sliceRows = z.direct ? 0 : col.rowsPerChunk / parts;

  parallelFor(parts, [&](int part) {
    int64_t r0, r1;
    splitRange(z.direct ? z.colCols : z.oh, parts, part, r0, r1);
    // The part's output columns [c0, c1) of every image-group.
    const int64_t c0 = z.direct ? r0 : r0 * z.ow,
                  c1 = z.direct ? r1 : r1 * z.ow;
    T *slice =
        z.direct ? nullptr : col.data() + part * sliceRows * z.colRows * z.ow;
    for (int64_t img = 0; img < z.n; ++img) {
      for (int64_t g = 0; g < z.groups; ++g) {
        const T *src = px + (img * z.c + g * z.cg) * z.h * z.w;
        T *dst = py + (img * z.k + g * z.kg) * z.colCols;
        T beta = T(0);
        if (bias) {
          for (int64_t o = 0; o < z.kg; ++o)
            std::fill(dst + o * z.colCols + c0, dst + o * z.colCols + c1,
                      bias[g * z.kg + o]);
          beta = T(1);
        }
        const T *weights = pw + g * z.kg * z.colRows;
        if (z.direct) {
          gemm<T>(false, false, z.kg, c1 - c0, z.colRows, T(1), weights,
                  z.colRows, src + c0, z.colCols, beta, dst + c0, z.colCols);
          continue;
        }
        // Y_g[:, chunk] = W_g (kg x colRows) * col (colRows x chunk).
        forEachRowChunk(r0, r1, sliceRows, [&](int64_t y0, int64_t y1) {
          const int64_t cols = (y1 - y0) * z.ow;
          im2col(src, z.cg, z.h, z.w, z.kh, z.kw, a, y0, y1, z.ow, slice);
          gemm<T>(false, false, z.kg, cols, z.colRows, T(1), weights, z.colRows,
                  slice, cols, beta, dst + y0 * z.ow, z.colCols);
        });
      }
    }
  });
}

template <typename T> void conv2dBackwardInputImpl(const KernelCall &call) {
  const TensorRef &dy = call.in(0), &w = call.in(1), &dx = call.out(0);
  const Conv2DAttrs &a = call.step.get<Conv2DAttrs>();
  const ConvSizes z(dx, w, dy, a);
  ColumnBuffer<T> col(call, z);
  const T *pdy = dy.as<const T>(), *pw = w.as<const T>();
  T *pdx = dx.as<T>();
  if (!z.direct)
    std::fill(pdx, pdx + dx.numElements, T(0));
  const int64_t taps = z.kh * z.kw;
  forEachChannelPart(z, col.rowsPerChunk, [&](const ChannelPart &own) {
    const int64_t ch0 = own.ch0, ch1 = own.ch1, rows = own.rows,
                  chunkCols = own.chunkCols;
    for (int64_t img = 0; img < z.n; ++img) {
      for (int64_t g = 0; g < z.groups; ++g) {
        const T *grad = pdy + (img * z.k + g * z.kg) * z.colCols;
        T *dst = pdx + (img * z.c + g * z.cg + ch0) * z.h * z.w;
        const T *weights = pw + g * z.kg * z.colRows + ch0 * taps;
        // A 1x1 unit conv's col is the input gradient itself.
        if (z.direct) {
          gemm<T>(true, false, rows, z.colCols, z.kg, T(1), weights, z.colRows,
                  grad, z.colCols, T(0), dst, z.colCols);
          continue;
        }
        // col = W_g^T (colRows x kg) * dY_g[:, chunk] (kg x chunk), this
        // part's channels' rows, scattered back by col2im.
        forEachRowChunk(0, z.oh, col.rowsPerChunk, [&](int64_t y0, int64_t y1) {
          const int64_t cols = (y1 - y0) * z.ow;
          T *slice = col.data() + ch0 * taps * chunkCols;
          gemm<T>(true, false, rows, cols, z.kg, T(1), weights, z.colRows,
                  grad + y0 * z.ow, z.colCols, T(0), slice, cols);
          col2im(slice, ch1 - ch0, z.h, z.w, z.kh, z.kw, a, y0, y1, z.ow, dst);
        });
      }
    }
  });
}

template <typename T> void conv2dBackwardWeightImpl(const KernelCall &call) {
  const TensorRef &dy = call.in(0), &x = call.in(1), &dw = call.out(0);
  const Conv2DAttrs &a = call.step.get<Conv2DAttrs>();
  const ConvSizes z(x, dw, dy, a);
  ColumnBuffer<T> col(call, z);
  const T *pdy = dy.as<const T>(), *px = x.as<const T>();
  T *pdw = dw.as<T>();
  const int64_t taps = z.kh * z.kw;
  forEachChannelPart(z, col.rowsPerChunk, [&](const ChannelPart &own) {
    const int64_t ch0 = own.ch0, ch1 = own.ch1, rows = own.rows,
                  chunkCols = own.chunkCols;
    for (int64_t img = 0; img < z.n; ++img) {
      for (int64_t g = 0; g < z.groups; ++g) {
        const T *src = px + (img * z.c + g * z.cg + ch0) * z.h * z.w;
        const T *grad = pdy + (img * z.k + g * z.kg) * z.colCols;
        T *dst = pdw + g * z.kg * z.colRows + ch0 * taps;
        if (z.direct) {
          gemm<T>(false, true, z.kg, rows, z.colCols, T(1), grad, z.colCols,
                  src, z.colCols, img == 0 ? T(0) : T(1), dst, z.colRows);
          continue;
        }
        // dW_g[:, this part's rows] += dY_g[:, chunk] (kg x chunk) * col^T;
        // the first chunk of the first image overwrites.
        forEachRowChunk(0, z.oh, col.rowsPerChunk, [&](int64_t y0, int64_t y1) {
          const int64_t cols = (y1 - y0) * z.ow;
          T *slice = col.data() + ch0 * taps * chunkCols;
          im2col(src, ch1 - ch0, z.h, z.w, z.kh, z.kw, a, y0, y1, z.ow, slice);
          gemm<T>(false, true, z.kg, rows, cols, T(1), grad + y0 * z.ow,
                  z.colCols, slice, cols, img == 0 && y0 == 0 ? T(0) : T(1),
                  dst, z.colRows);
        });
      }
    }
  });
}

} // namespace

void conv2dBackwardInput(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype, [&](auto tag) {
    conv2dBackwardInputImpl<decltype(tag)>(call);
  });
}

void conv2dBackwardWeight(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype, [&](auto tag) {
    conv2dBackwardWeightImpl<decltype(tag)>(call);
  });
}

void conv2d(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype,
                [&](auto tag) { conv2dImpl<decltype(tag)>(call); });
}

} // namespace memopt::runtime::cpu
