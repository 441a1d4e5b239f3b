//===- Conv.cpp - conv2d on the CPU ---------------------------------------===//
//
// im2col + GEMM: for each image and group, the receptive fields are laid out
// as a (C/g*R*S) x (OH*OW) matrix and multiplied by the group's K/g x
// (C/g*R*S) weights, writing straight into the NCHW output. A 1x1 conv with
// unit stride and no padding needs no im2col: the input already is that
// matrix. The column buffer is per call (at most one image-group at a time)
// and lives outside the planned arena, like a cuDNN workspace would not.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "Gemm.h"

#include <algorithm>

namespace memopt::runtime::cpu {

namespace {

/// Lays out the receptive fields of one image-group (`channels` x H x W)
/// as rows (c, r, s) and columns (oh, ow) of `col`.
template <typename T>
void im2col(const T *src, int64_t channels, int64_t h, int64_t w, int64_t kh,
            int64_t kw, const Conv2DAttrs &a, int64_t oh, int64_t ow, T *col) {
  const int64_t sh = a.strides[0], sw = a.strides[1];
  const int64_t ph = a.padding[0], pw = a.padding[1];
  const int64_t dh = a.dilations[0], dw = a.dilations[1];
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t r = 0; r < kh; ++r) {
      for (int64_t s = 0; s < kw; ++s) {
        T *row = col + ((c * kh + r) * kw + s) * oh * ow;
        // Columns ow with 0 <= ow*sw + shift < w read the input; the rest
        // are padding. Compute that range once per row instead of testing
        // every element.
        int64_t shift = s * dw - pw;
        int64_t lo = shift >= 0 ? 0 : (-shift + sw - 1) / sw;
        int64_t hi = w - 1 - shift < 0 ? -1 : (w - 1 - shift) / sw;
        lo = std::min(lo, ow);
        hi = std::min(hi, ow - 1);
        for (int64_t y = 0; y < oh; ++y) {
          T *out = row + y * ow;
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

template <typename T> void conv2dImpl(const KernelCall &call) {
  const TensorRef &x = call.in(0), &w = call.in(1), &y = call.out(0);
  const Conv2DAttrs &a = call.step.get<Conv2DAttrs>();
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), wd = x.dim(3);
  const int64_t k = w.dim(0), kh = w.dim(2), kw = w.dim(3);
  const int64_t oh = y.dim(2), ow = y.dim(3);
  const int64_t groups = a.groups, cg = c / groups, kg = k / groups;
  const int64_t colRows = cg * kh * kw, colCols = oh * ow;
  const bool direct = kh == 1 && kw == 1 && a.strides[0] == 1 &&
                      a.strides[1] == 1 && a.padding[0] == 0 &&
                      a.padding[1] == 0;
  std::vector<T> col(direct ? 0 : static_cast<size_t>(colRows * colCols));
  const T *px = x.as<const T>(), *pw = w.as<const T>();
  const T *bias = call.inputs.size() == 3 ? call.in(2).as<const T>() : nullptr;
  T *py = y.as<T>();

  for (int64_t img = 0; img < n; ++img) {
    for (int64_t g = 0; g < groups; ++g) {
      const T *src = px + (img * c + g * cg) * h * wd;
      const T *matrix = src;
      if (!direct) {
        im2col(src, cg, h, wd, kh, kw, a, oh, ow, col.data());
        matrix = col.data();
      }
      T *dst = py + (img * k + g * kg) * colCols;
      T beta = T(0);
      if (bias) {
        for (int64_t o = 0; o < kg; ++o)
          std::fill(dst + o * colCols, dst + (o + 1) * colCols,
                    bias[g * kg + o]);
        beta = T(1);
      }
      gemm<T>(false, false, kg, colCols, colRows, T(1), pw + g * kg * colRows,
              colRows, matrix, colCols, beta, dst, colCols);
    }
  }
}

} // namespace

void conv2d(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype,
                [&](auto tag) { conv2dImpl<decltype(tag)>(call); });
}

} // namespace memopt::runtime::cpu
