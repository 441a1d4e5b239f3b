//===- Pool.cpp - max, average, global average pooling and gradients ------===//
//
// PyTorch's semantics: max pooling ignores padding (padded positions never
// win); average pooling counts padded zeros in the divisor
// (count_include_pad=True), so the divisor is always kh*kw. The plan's
// rules bound padding by half the window, so every window holds at least
// one real element.
//
// The gradients are the adjoints: max pooling routes each window's gradient
// to the element the forward kernel picks (the same scan, so the same
// tie-breaking: the first maximum in row-major order), average pooling
// spreads it over the window's real elements with the forward's divisor.
// Overlapping windows add up.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "ParallelFor.h"

#include <algorithm>
#include <utility>

namespace memopt::runtime::cpu {

namespace {

/// Whether the windows are 2x2, 2 apart and unpadded (the common max
/// pooling between convolutions): each input element is in at most one
/// window, and every window lies inside the plane.
bool isTwoByTwo(const Pool2DAttrs &a) {
  return a.kernelSize[0] == 2 && a.kernelSize[1] == 2 && a.strides[0] == 2 &&
         a.strides[1] == 2 && a.padding[0] == 0 && a.padding[1] == 0;
}

/// The maximum of a 2x2 window by the general scan's rule (the first
/// maximum in row-major order; `!(v <= best)` also selects NaN, which then
/// propagates).
template <typename T> inline T max2x2(const T *in, int64_t w) {
  T best = in[0];
  for (const T v : {in[1], in[w], in[w + 1]})
    best = !(v <= best) ? v : best;
  return best;
}

/// The input rows [begin, end) of output row `oy`'s windows, clipped to
/// the `h` rows of the plane (padding contributes none).
std::pair<int64_t, int64_t> windowRows(const Pool2DAttrs &a, int64_t oy,
                                       int64_t h) {
  const int64_t y0 = oy * a.strides[0] - a.padding[0];
  return {std::max<int64_t>(y0, 0), std::min(y0 + a.kernelSize[0], h)};
}

/// The input columns [begin, end) of output column `ox`'s windows, clipped
/// to the `w` columns of the plane.
std::pair<int64_t, int64_t> windowCols(const Pool2DAttrs &a, int64_t ox,
                                       int64_t w) {
  const int64_t x0 = ox * a.strides[1] - a.padding[1];
  return {std::max<int64_t>(x0, 0), std::min(x0 + a.kernelSize[1], w)};
}

template <typename T, bool IsMax> void pool2dImpl(const KernelCall &call) {
  const TensorRef &x = call.in(0), &y = call.out(0);
  const Pool2DAttrs &a = call.step.get<Pool2DAttrs>();
  const int64_t planes = x.dim(0) * x.dim(1);
  const int64_t h = x.dim(2), w = x.dim(3), oh = y.dim(2), ow = y.dim(3);
  const int64_t kh = a.kernelSize[0], kw = a.kernelSize[1];
  const T divisor = static_cast<T>(kh * kw);
  const T *px = x.as<const T>();
  T *py = y.as<T>();
  if (IsMax && isTwoByTwo(a)) {
    // The general loop's result, without its per-window bounds.
    parallelRange(planes, h * w, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p)
        for (int64_t oy = 0; oy < oh; ++oy) {
          const T *in = px + p * h * w + 2 * oy * w;
          T *out = py + (p * oh + oy) * ow;
          for (int64_t ox = 0; ox < ow; ++ox)
            out[ox] = max2x2(in + 2 * ox, w);
        }
    });
    return;
  }
  parallelRange(planes, oh * ow * kh * kw, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const T *in = px + p * h * w;
      T *out = py + p * oh * ow;
      for (int64_t oy = 0; oy < oh; ++oy) {
        const auto [yBegin, yEnd] = windowRows(a, oy, h);
        for (int64_t ox = 0; ox < ow; ++ox) {
          const auto [xBegin, xEnd] = windowCols(a, ox, w);
          if constexpr (IsMax) {
            T best = in[yBegin * w + xBegin];
            for (int64_t iy = yBegin; iy < yEnd; ++iy)
              for (int64_t ix = xBegin; ix < xEnd; ++ix) {
                T v = in[iy * w + ix];
                // `!(v <= best)` also selects NaN, which then propagates.
                if (!(v <= best))
                  best = v;
              }
            out[oy * ow + ox] = best;
          } else {
            T sum = T(0);
            for (int64_t iy = yBegin; iy < yEnd; ++iy)
              for (int64_t ix = xBegin; ix < xEnd; ++ix)
                sum += in[iy * w + ix];
            out[oy * ow + ox] = sum / divisor;
          }
        }
      }
    }
  });
}

template <typename T> void globalAvgPool2dImpl(const KernelCall &call) {
  const TensorRef &x = call.in(0);
  const int64_t planes = x.dim(0) * x.dim(1), size = x.dim(2) * x.dim(3);
  const T *px = x.as<const T>();
  T *py = call.out(0).as<T>();
  for (int64_t p = 0; p < planes; ++p) {
    double sum = 0;
    for (int64_t i = 0; i < size; ++i)
      sum += static_cast<double>(px[p * size + i]);
    py[p] = static_cast<T>(sum / static_cast<double>(size));
  }
}

template <typename T, bool IsMax>
void pool2dBackwardImpl(const KernelCall &call) {
  const TensorRef &dy = call.in(0), &dx = call.out(0);
  const TensorRef *x = IsMax ? &call.in(1) : nullptr;
  const Pool2DAttrs &a = call.step.get<Pool2DAttrs>();
  const int64_t planes = dx.dim(0) * dx.dim(1);
  const int64_t h = dx.dim(2), w = dx.dim(3), oh = dy.dim(2), ow = dy.dim(3);
  const int64_t kh = a.kernelSize[0], kw = a.kernelSize[1];
  const T divisor = static_cast<T>(kh * kw);
  const T *pdy = dy.as<const T>();
  const T *px = IsMax ? x->as<const T>() : nullptr;
  T *pdx = dx.as<T>();
  if (IsMax && isTwoByTwo(a)) {
    // Disjoint windows: each window writes its four elements, the gradient
    // as `0 + g` (so a -0 gradient gives +0, as the general loop's sum
    // does) on the first maximum in row-major order (the general scan's
    // rule, NaN winning) and 0 elsewhere, all by selects
    // (random data would mispredict branches half the time); then the odd
    // last column and row, which no window covers, get 0. One pass over dx.
    parallelRange(planes, h * w, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        T *plane = pdx + p * h * w;
        for (int64_t oy = 0; oy < oh; ++oy) {
          const T *top = px + p * h * w + 2 * oy * w, *bottom = top + w;
          const T *grad = pdy + (p * oh + oy) * ow;
          T *outTop = plane + 2 * oy * w, *outBottom = outTop + w;
          for (int64_t ox = 0; ox < ow; ++ox) {
            const T v0 = top[2 * ox], v1 = top[2 * ox + 1];
            const T v2 = bottom[2 * ox], v3 = bottom[2 * ox + 1];
            // The scan: a later element wins if !(v <= best).
            const bool t1 = !(v1 <= v0);
            const T b1 = t1 ? v1 : v0;
            const bool t2 = !(v2 <= b1);
            const T b2 = t2 ? v2 : b1;
            const bool t3 = !(v3 <= b2);
            const T g = T(0) + grad[ox];
            outTop[2 * ox] = !t1 && !t2 && !t3 ? g : T(0);
            outTop[2 * ox + 1] = t1 && !t2 && !t3 ? g : T(0);
            outBottom[2 * ox] = t2 && !t3 ? g : T(0);
            outBottom[2 * ox + 1] = t3 ? g : T(0);
          }
          std::fill(outTop + 2 * ow, outTop + w, T(0));
          std::fill(outBottom + 2 * ow, outBottom + w, T(0));
        }
        std::fill(plane + 2 * oh * w, plane + h * w, T(0));
      }
    });
    return;
  }
  parallelRange(planes, h * w + oh * ow * kh * kw, [&](int64_t p0, int64_t p1) {
    std::fill(pdx + p0 * h * w, pdx + p1 * h * w, T(0));
    for (int64_t p = p0; p < p1; ++p) {
      const T *in = IsMax ? px + p * h * w : nullptr;
      const T *grad = pdy + p * oh * ow;
      T *out = pdx + p * h * w;
      for (int64_t oy = 0; oy < oh; ++oy) {
        const auto [yBegin, yEnd] = windowRows(a, oy, h);
        for (int64_t ox = 0; ox < ow; ++ox) {
          const auto [xBegin, xEnd] = windowCols(a, ox, w);
          const T g = grad[oy * ow + ox];
          if constexpr (IsMax) {
            // Exactly the forward scan (pool2dImpl), remembering the position.
            int64_t arg = yBegin * w + xBegin;
            T best = in[arg];
            for (int64_t iy = yBegin; iy < yEnd; ++iy)
              for (int64_t ix = xBegin; ix < xEnd; ++ix) {
                T v = in[iy * w + ix];
                if (!(v <= best)) {
                  best = v;
                  arg = iy * w + ix;
                }
              }
            out[arg] += g;
          } else {
            const T share = g / divisor;
            for (int64_t iy = yBegin; iy < yEnd; ++iy)
              for (int64_t ix = xBegin; ix < xEnd; ++ix)
                out[iy * w + ix] += share;
          }
        }
      }
    }
  });
}

template <typename T> void globalAvgPool2dBackwardImpl(const KernelCall &call) {
  const TensorRef &dx = call.out(0);
  const int64_t planes = dx.dim(0) * dx.dim(1), size = dx.dim(2) * dx.dim(3);
  const T *pdy = call.in(0).as<const T>();
  T *pdx = dx.as<T>();
  for (int64_t p = 0; p < planes; ++p) {
    const T share =
        static_cast<T>(static_cast<double>(pdy[p]) / static_cast<double>(size));
    std::fill(pdx + p * size, pdx + (p + 1) * size, share);
  }
}

} // namespace

void maxPool2dBackward(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype, [&](auto tag) {
    pool2dBackwardImpl<decltype(tag), true>(call);
  });
}

void avgPool2dBackward(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype, [&](auto tag) {
    pool2dBackwardImpl<decltype(tag), false>(call);
  });
}

void globalAvgPool2dBackward(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype, [&](auto tag) {
    globalAvgPool2dBackwardImpl<decltype(tag)>(call);
  });
}

void maxPool2d(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype,
                [&](auto tag) { pool2dImpl<decltype(tag), true>(call); });
}

void avgPool2d(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype,
                [&](auto tag) { pool2dImpl<decltype(tag), false>(call); });
}

void globalAvgPool2d(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype,
                [&](auto tag) { globalAvgPool2dImpl<decltype(tag)>(call); });
}

} // namespace memopt::runtime::cpu
