//===- Pool.cu - max and average pooling and their gradients --------------===//
//
// The CUDA versions of cpu/Pool.cpp's windowed pooling (PyTorch's
// semantics: max pooling ignores padding, average pooling divides by
// kh*kw, padded zeros included). Written here rather than with cuDNN
// because cuDNN's pooling backward needs the forward output y, which
// max_pool2d_backward and avg_pool2d_backward do not get, and so that the
// forward and backward scans are the CPU's, element for element: the same
// comparisons (`!(v <= best)`: the first maximum in row-major order wins),
// the same summation order, in the same compute type (double for f64,
// float otherwise; f16/bf16 round once, on the store).
//
// The forward kernels run one thread per output element. The backward
// kernels gather instead of scattering: one thread per input element visits
// the windows that contain it, in the order the CPU's scatter loop adds
// them (oy, then ox, ascending), so there are no atomics and, in f32 and
// f64, the gradients are the CPU's bit for bit. Max pooling's backward
// rescans each such window to find whether this element is its argmax.
//
//===----------------------------------------------------------------------===//

#include "Device.cuh"

namespace memopt::runtime::cuda {

namespace {

/// The sizes of one pooling: `planes` = N*C images of h x w pooled into
/// oh x ow.
struct PoolGeometry {
  int64_t planes, h, w, oh, ow, kh, kw, sh, sw, ph, pw;
};

PoolGeometry geometry(const TensorRef &x, const TensorRef &y,
                      const Pool2DAttrs &a) {
  return {x.dim(0) * x.dim(1),
          x.dim(2),
          x.dim(3),
          y.dim(2),
          y.dim(3),
          a.kernelSize[0],
          a.kernelSize[1],
          a.strides[0],
          a.strides[1],
          a.padding[0],
          a.padding[1]};
}

/// The input rows [begin, end) of output row (or column) `o`.
struct Range {
  int64_t begin, end;
};

__device__ inline Range window(int64_t o, int64_t stride, int64_t pad,
                               int64_t size, int64_t extent) {
  const int64_t start = o * stride - pad;
  return {start < 0 ? 0 : start, start + size < extent ? start + size : extent};
}

/// The position (iy * w + ix within the plane) of the maximum of a window:
/// exactly cpu/Pool.cpp's scan.
template <typename C>
__device__ inline int64_t argMax(const void *x, DType t, int64_t base,
                                 int64_t w, Range ry, Range rx, C &best) {
  int64_t arg = ry.begin * w + rx.begin;
  best = loadAs<C>(x, t, base + arg);
  for (int64_t iy = ry.begin; iy < ry.end; ++iy)
    for (int64_t ix = rx.begin; ix < rx.end; ++ix) {
      const C v = loadAs<C>(x, t, base + iy * w + ix);
      // `!(v <= best)` also selects NaN, as on the CPU.
      if (!(v <= best)) {
        best = v;
        arg = iy * w + ix;
      }
    }
  return arg;
}

template <typename C, bool IsMax>
__global__ void poolForward(const void *x, void *y, DType t, PoolGeometry g) {
  const int64_t total = g.planes * g.oh * g.ow;
  MEMOPT_GRID_STRIDE(i, total) {
    const int64_t ox = i % g.ow, oy = (i / g.ow) % g.oh;
    const int64_t base = (i / (g.ow * g.oh)) * g.h * g.w;
    const Range ry = window(oy, g.sh, g.ph, g.kh, g.h);
    const Range rx = window(ox, g.sw, g.pw, g.kw, g.w);
    C result;
    if constexpr (IsMax) {
      argMax<C>(x, t, base, g.w, ry, rx, result);
    } else {
      C sum = C(0);
      for (int64_t iy = ry.begin; iy < ry.end; ++iy)
        for (int64_t ix = rx.begin; ix < rx.end; ++ix)
          sum += loadAs<C>(x, t, base + iy * g.w + ix);
      result = sum / static_cast<C>(g.kh * g.kw);
    }
    storeAs(y, t, i, result);
  }
}

/// The output rows (or columns) [first, last] whose windows contain input
/// row `in`; empty when first > last.
__device__ inline Range covering(int64_t in, int64_t stride, int64_t pad,
                                 int64_t size, int64_t outExtent) {
  // o covers `in` iff o*stride - pad <= in < o*stride - pad + size.
  const int64_t lo = in + pad - size + 1;
  const int64_t first = lo <= 0 ? 0 : (lo + stride - 1) / stride;
  const int64_t last = (in + pad) / stride;
  return {first, last < outExtent - 1 ? last : outExtent - 1};
}

template <typename C, bool IsMax>
__global__ void poolBackward(const void *dy, const void *x, void *dx, DType t,
                             PoolGeometry g) {
  const int64_t total = g.planes * g.h * g.w;
  MEMOPT_GRID_STRIDE(i, total) {
    const int64_t ix = i % g.w, iy = (i / g.w) % g.h;
    const int64_t plane = i / (g.w * g.h);
    const int64_t base = plane * g.h * g.w, outBase = plane * g.oh * g.ow;
    const int64_t self = iy * g.w + ix;
    const Range oys = covering(iy, g.sh, g.ph, g.kh, g.oh);
    const Range oxs = covering(ix, g.sw, g.pw, g.kw, g.ow);
    const C divisor = static_cast<C>(g.kh * g.kw);
    C sum = C(0);
    for (int64_t oy = oys.begin; oy <= oys.end; ++oy) {
      const Range ry = window(oy, g.sh, g.ph, g.kh, g.h);
      for (int64_t ox = oxs.begin; ox <= oxs.end; ++ox) {
        const C grad = loadAs<C>(dy, t, outBase + oy * g.ow + ox);
        if constexpr (IsMax) {
          const Range rx = window(ox, g.sw, g.pw, g.kw, g.w);
          C best;
          if (argMax<C>(x, t, base, g.w, ry, rx, best) == self)
            sum += grad;
        } else {
          sum += grad / divisor;
        }
      }
    }
    storeAs(dx, t, i, sum);
  }
}

template <bool IsMax> void forward(const KernelCall &call) {
  const TensorRef &x = call.in(0), &y = call.out(0);
  if (y.numElements == 0)
    return;
  const PoolGeometry g = geometry(x, y, call.step.get<Pool2DAttrs>());
  const unsigned blocks = blocksFor(y.numElements);
  if (x.dtype == DType::F64)
    poolForward<double, IsMax>
        <<<blocks, kThreads, 0, call.cuda.stream>>>(x.data, y.data, x.dtype, g);
  else
    poolForward<float, IsMax>
        <<<blocks, kThreads, 0, call.cuda.stream>>>(x.data, y.data, x.dtype, g);
  checkLaunch(IsMax ? "max_pool2d" : "avg_pool2d");
}

/// dy = input 0; max pooling's x = input 1 (the forward input).
template <bool IsMax> void backward(const KernelCall &call) {
  const TensorRef &dy = call.in(0), &dx = call.out(0);
  if (dx.numElements == 0)
    return;
  const void *x = IsMax ? call.in(1).data : nullptr;
  const PoolGeometry g = geometry(dx, dy, call.step.get<Pool2DAttrs>());
  const unsigned blocks = blocksFor(dx.numElements);
  if (dx.dtype == DType::F64)
    poolBackward<double, IsMax><<<blocks, kThreads, 0, call.cuda.stream>>>(
        dy.data, x, dx.data, dx.dtype, g);
  else
    poolBackward<float, IsMax><<<blocks, kThreads, 0, call.cuda.stream>>>(
        dy.data, x, dx.data, dx.dtype, g);
  checkLaunch(IsMax ? "max_pool2d_backward" : "avg_pool2d_backward");
}

} // namespace

void maxPool2D(const KernelCall &call) { forward<true>(call); }

void avgPool2D(const KernelCall &call) { forward<false>(call); }

void maxPool2DBackward(const KernelCall &call) { backward<true>(call); }

void avgPool2DBackward(const KernelCall &call) { backward<false>(call); }

} // namespace memopt::runtime::cuda
