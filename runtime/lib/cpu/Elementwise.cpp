//===- Elementwise.cpp - activations, their gradients, binary ops, dropout ===//
//
// The scalar functions come from ElementwiseMath.h and Dropout.h, shared
// with the CUDA backend. Each loop reads element i of every input before
// writing element i, so every kernel here may run in place (Kernel.h).
// GELU and its gradient in f32 evaluate erf and exp a chunk at a time
// (VectorMath.h) and combine them with the shared formulas.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "Indexing.h"
#include "ParallelFor.h"
#include "VectorMath.h"

#include "memopt/runtime/Dropout.h"
#include "memopt/runtime/Element.h"
#include "memopt/runtime/ElementwiseMath.h"

#include <algorithm>
#include <type_traits>

namespace memopt::runtime::cpu {

namespace {

/// y = gelu(x) in f32, erf a chunk at a time; y may be x.
void geluF32(const float *x, float *y, int64_t n) {
  float part[vec::kChunk];
  for (int64_t i0 = 0; i0 < n; i0 += vec::kChunk) {
    const int64_t m = std::min(vec::kChunk, n - i0);
    const float *xs = x + i0;
    for (int64_t j = 0; j < m; ++j)
      part[j] = math::geluErfArg(xs[j]);
    vec::erf(part, part, m);
    float *ys = y + i0;
    for (int64_t j = 0; j < m; ++j)
      ys[j] = math::geluFromParts(xs[j], part[j]);
  }
}

/// dx = dy * gelu'(x) in f32, erf and exp a chunk at a time; dx may be dy
/// or x.
void geluBackwardF32(const float *dy, const float *x, float *dx, int64_t n) {
  float erfPart[vec::kChunk], expPart[vec::kChunk];
  for (int64_t i0 = 0; i0 < n; i0 += vec::kChunk) {
    const int64_t m = std::min(vec::kChunk, n - i0);
    const float *xs = x + i0, *dys = dy + i0;
    for (int64_t j = 0; j < m; ++j) {
      erfPart[j] = math::geluErfArg(xs[j]);
      expPart[j] = math::geluExpArg(xs[j]);
    }
    vec::erf(erfPart, erfPart, m);
    vec::exp(expPart, expPart, m);
    float *dxs = dx + i0;
    for (int64_t j = 0; j < m; ++j)
      dxs[j] = dys[j] * math::geluGradFromParts(xs[j], erfPart[j], expPart[j]);
  }
}

/// Element-wise loops split into contiguous ranges of this many elements,
/// the parts taking whole ranges (so a part never splits a chunk of the
/// vector paths below).
constexpr int64_t kElementBlock = 4096;

/// Calls body(begin, end) over [0, n) in parallel ranges (ParallelFor.h).
template <typename F> void forElementRanges(int64_t n, F &&body) {
  const int64_t blocks = (n + kElementBlock - 1) / kElementBlock;
  parallelRange(blocks, kElementBlock, [&](int64_t b0, int64_t b1) {
    body(b0 * kElementBlock, std::min(n, b1 * kElementBlock));
  });
}

template <typename T, typename F>
void map(const TensorRef &x, const TensorRef &y, F f) {
  const T *in = x.as<const T>();
  T *out = y.as<T>();
  forElementRanges(y.numElements, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i)
      out[i] = f(in[i]);
  });
}

template <typename T> void unaryImpl(const KernelCall &call) {
  const TensorRef &x = call.in(0), &y = call.out(0);
  switch (call.step.kernel) {
  case KernelKind::Relu:
    return map<T>(x, y, [](T v) { return math::relu(v); });
  case KernelKind::Gelu:
    if constexpr (std::is_same_v<T, float>)
      return forElementRanges(y.numElements, [&](int64_t i0, int64_t i1) {
        geluF32(x.as<const float>() + i0, y.as<float>() + i0, i1 - i0);
      });
    else
      return map<T>(x, y, [](T v) { return math::gelu(v); });
  case KernelKind::Sigmoid:
    return map<T>(x, y, [](T v) { return math::sigmoid(v); });
  case KernelKind::Tanh:
    return map<T>(x, y, [](T v) { return math::tanhForward(v); });
  case KernelKind::Silu:
    return map<T>(x, y, [](T v) { return math::silu(v); });
  case KernelKind::Exp:
    return map<T>(x, y, [](T v) { return math::exp(v); });
  case KernelKind::Log:
    return map<T>(x, y, [](T v) { return math::log(v); });
  case KernelKind::Sqrt:
    return map<T>(x, y, [](T v) { return math::sqrt(v); });
  case KernelKind::Abs:
    return map<T>(x, y, [](T v) { return math::fabs(v); });
  case KernelKind::LeakyRelu: {
    T alpha = static_cast<T>(call.step.get<AlphaAttrs>().alpha);
    return map<T>(x, y, [alpha](T v) { return math::leakyRelu(v, alpha); });
  }
  case KernelKind::Elu: {
    T alpha = static_cast<T>(call.step.get<AlphaAttrs>().alpha);
    return map<T>(x, y, [alpha](T v) { return math::elu(v, alpha); });
  }
  case KernelKind::Clamp: {
    const ClampAttrs &a = call.step.get<ClampAttrs>();
    const T lo = static_cast<T>(a.min), hi = static_cast<T>(a.max);
    return map<T>(x, y, [lo, hi](T v) { return math::clamp(v, lo, hi); });
  }
  default:
    throw Error(ErrorCode::Internal, "unary kernel called for another kernel");
  }
}

template <typename T, typename Op>
void broadcastBinary(const TensorRef &a, const TensorRef &b, const TensorRef &y,
                     Op op) {
  const T *pa = a.as<const T>(), *pb = b.as<const T>();
  T *out = y.as<T>();
  const int64_t n = y.numElements;
  if (a.numElements == n && b.numElements == n) {
    forElementRanges(n, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i)
        out[i] = op(pa[i], pb[i]);
    });
    return;
  }
  if (a.numElements == n && b.numElements == 1) {
    const T s = pb[0];
    for (int64_t i = 0; i < n; ++i)
      out[i] = op(pa[i], s);
    return;
  }
  if (a.numElements == 1 && b.numElements == n) {
    const T s = pa[0];
    for (int64_t i = 0; i < n; ++i)
      out[i] = op(s, pb[i]);
    return;
  }
  const Shape &shape = *y.shape;
  const size_t rank = shape.size();
  std::array<Shape, 2> strides = {broadcastStrides(*a.shape, rank),
                                  broadcastStrides(*b.shape, rank)};
  const int64_t inner = shape[rank - 1];
  const int64_t sa = strides[0][rank - 1], sb = strides[1][rank - 1];
  T *row = out;
  forEachRow<2>(shape, strides, [&](const std::array<int64_t, 2> &off) {
    const T *ra = pa + off[0], *rb = pb + off[1];
    for (int64_t i = 0; i < inner; ++i)
      row[i] = op(ra[i * sa], rb[i * sb]);
    row += inner;
  });
}

template <typename T> void binaryImpl(const KernelCall &call) {
  const TensorRef &a = call.in(0), &b = call.in(1), &y = call.out(0);
  switch (call.step.kernel) {
  case KernelKind::Add:
    return broadcastBinary<T>(a, b, y, [](T u, T v) { return u + v; });
  case KernelKind::Sub:
    return broadcastBinary<T>(a, b, y, [](T u, T v) { return u - v; });
  case KernelKind::Mul:
    return broadcastBinary<T>(a, b, y, [](T u, T v) { return u * v; });
  case KernelKind::Div:
    return broadcastBinary<T>(a, b, y, [](T u, T v) { return u / v; });
  case KernelKind::Maximum:
    return broadcastBinary<T>(a, b, y, math::maximum<T>);
  case KernelKind::Minimum:
    return broadcastBinary<T>(a, b, y, math::minimum<T>);
  case KernelKind::MaximumWeight:
    return broadcastBinary<T>(a, b, y, math::maximumWeight<T>);
  default:
    throw Error(ErrorCode::Internal, "binary kernel called for another kernel");
  }
}

template <typename T> void dropoutImpl(const KernelCall &call) {
  const DropoutAttrs &attrs = call.step.get<DropoutAttrs>();
  const uint64_t key = dropout::streamKey(attrs.seed, call.context.stepCounter);
  const uint32_t threshold = dropout::threshold(attrs.p);
  const T scale = dropout::scale<T>(attrs.p);
  const T *in = call.in(0).as<const T>();
  T *out = call.out(0).as<T>();
  const int64_t n = call.out(0).numElements;
  // On rank r of a data-parallel job, its rows of the global batch's mask.
  const uint64_t first = call.context.rank * static_cast<uint64_t>(n);
  for (int64_t i = 0; i < n; ++i)
    out[i] = dropout::keep(key, first + static_cast<uint64_t>(i), threshold)
                 ? in[i] * scale
                 : T(0);
}

template <typename T, typename F>
void map2(const TensorRef &a, const TensorRef &b, const TensorRef &y, F f) {
  const T *pa = a.as<const T>(), *pb = b.as<const T>();
  T *out = y.as<T>();
  forElementRanges(y.numElements, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i)
      out[i] = f(pa[i], pb[i]);
  });
}

/// grad * f'(saved). Where the derivative is a 0/1 or 1/alpha switch the
/// gradient is selected rather than multiplied, as PyTorch does (so a NaN
/// gradient does not leak through relu's zero).
template <typename T> void activationBackwardImpl(const KernelCall &call) {
  const TensorRef &g = call.in(0), &s = call.in(1), &y = call.out(0);
  switch (call.step.kernel) {
  case KernelKind::ReluBackward:
    return map2<T>(g, s, y, [](T dy, T out) { return out > T(0) ? dy : T(0); });
  case KernelKind::GeluBackward:
    if constexpr (std::is_same_v<T, float>)
      return forElementRanges(y.numElements, [&](int64_t i0, int64_t i1) {
        geluBackwardF32(g.as<const float>() + i0, s.as<const float>() + i0,
                        y.as<float>() + i0, i1 - i0);
      });
    else
      return map2<T>(g, s, y, [](T dy, T x) { return dy * math::geluGrad(x); });
  case KernelKind::SigmoidBackward:
    return map2<T>(g, s, y, [](T dy, T out) {
      return dy * math::sigmoidGradFromOutput(out);
    });
  case KernelKind::TanhBackward:
    return map2<T>(g, s, y, [](T dy, T out) {
      return dy * math::tanhGradFromOutput(out);
    });
  case KernelKind::SiluBackward:
    return map2<T>(g, s, y, [](T dy, T x) { return math::siluGrad(dy, x); });
  case KernelKind::ExpBackward:
    return map2<T>(
        g, s, y, [](T dy, T out) { return math::expGradFromOutput(dy, out); });
  case KernelKind::LogBackward:
    return map2<T>(g, s, y, [](T dy, T x) { return math::logGrad(dy, x); });
  case KernelKind::SqrtBackward:
    return map2<T>(
        g, s, y, [](T dy, T out) { return math::sqrtGradFromOutput(dy, out); });
  case KernelKind::AbsBackward:
    return map2<T>(g, s, y, [](T dy, T x) { return math::absGrad(dy, x); });
  case KernelKind::LeakyReluBackward: {
    // The sign test is the same from the input and from the output.
    const T alpha =
        static_cast<T>(call.step.get<ActivationBackwardAttrs>().alpha);
    return map2<T>(g, s, y,
                   [alpha](T dy, T v) { return v > T(0) ? dy : dy * alpha; });
  }
  case KernelKind::EluBackward: {
    const ActivationBackwardAttrs &a = call.step.get<ActivationBackwardAttrs>();
    const T alpha = static_cast<T>(a.alpha);
    if (a.fromOutput)
      return map2<T>(g, s, y, [alpha](T dy, T out) {
        return out > T(0) ? dy : dy * math::eluGradFromOutput(out, alpha);
      });
    return map2<T>(g, s, y, [alpha](T dy, T x) {
      return x > T(0) ? dy : dy * math::eluGrad(x, alpha);
    });
  }
  case KernelKind::ClampBackward: {
    const ClampAttrs &a = call.step.get<ClampAttrs>();
    const T lo = static_cast<T>(a.min), hi = static_cast<T>(a.max);
    return map2<T>(g, s, y, [lo, hi](T dy, T v) {
      return math::clampBackward(dy, v, lo, hi);
    });
  }
  default:
    throw Error(ErrorCode::Internal,
                "activation backward kernel called for another kernel");
  }
}

} // namespace

void activationBackward(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype,
                [&](auto tag) { activationBackwardImpl<decltype(tag)>(call); });
}

void unary(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype,
                [&](auto tag) { unaryImpl<decltype(tag)>(call); });
}

void compare(const KernelCall &call) {
  const TensorRef &x = call.in(0), &y = call.out(0);
  const CompareAttrs &a = call.step.get<CompareAttrs>();
  const auto *src = static_cast<const char *>(x.data);
  const size_t size = dtypeSize(x.dtype);
  float *dst = y.as<float>();
  forElementRanges(y.numElements, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i)
      dst[i] = math::compare(readElement(src + i * size, x.dtype), a.predicate,
                             a.value);
  });
}

void binary(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype,
                [&](auto tag) { binaryImpl<decltype(tag)>(call); });
}

void dropout(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype,
                [&](auto tag) { dropoutImpl<decltype(tag)>(call); });
}

} // namespace memopt::runtime::cpu
