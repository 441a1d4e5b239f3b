//===- Softmax.cpp - softmax along an axis and its gradient on the CPU ----===//
//
// exp(x - max) / sum(exp(x - max)) per row along the axis, so values of
// +-1000 neither overflow nor underflow to 0/0. The causal variant (the last
// axis of square ...xTxT scores) gives row i probability only on columns
// j <= i; masked entries are exactly 0. With `safe`, a row of -inf only
// (every entry masked) is 0 instead of NaN. Each row is read (max) before it is
// written, so the kernel may run in place. In f32 a contiguous row's
// exponentials are VectorMath.h's, as fused attention's.
//
// The gradient y * (dy - sum(dy * y)) reduces each row (in double) before
// writing it, so it may overwrite dy or y. Masked entries of a causal
// softmax have y = 0 and get 0.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "VectorMath.h"

#include "memopt/runtime/ElementwiseMath.h"

#include <limits>
#include <type_traits>

namespace memopt::runtime::cpu {

namespace {

/// out[j·inner] = exp(in[j·inner] − max) for j < valid; returns their sum,
/// taken in order. out may be in.
template <typename T>
T shiftedExp(const T *in, T *out, int64_t valid, int64_t inner, T max) {
  T sum = T(0);
  if constexpr (std::is_same_v<T, float>) {
    if (inner == 1) {
      for (int64_t j = 0; j < valid; ++j)
        out[j] = in[j] - max;
      vec::exp(out, out, valid);
      for (int64_t j = 0; j < valid; ++j)
        sum += out[j];
      return sum;
    }
  }
  for (int64_t j = 0; j < valid; ++j) {
    T e = math::exp(in[j * inner] - max);
    out[j * inner] = e;
    sum += e;
  }
  return sum;
}

template <typename T> void softmaxImpl(const KernelCall &call) {
  const TensorRef &x = call.in(0), &y = call.out(0);
  const SoftmaxAttrs &a = call.step.get<SoftmaxAttrs>();
  const Shape &shape = *x.shape;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < a.axis; ++d)
    outer *= shape[d];
  for (size_t d = a.axis + 1; d < shape.size(); ++d)
    inner *= shape[d];
  const int64_t len = shape[a.axis];
  const T *px = x.as<const T>();
  T *py = y.as<T>();

  for (int64_t o = 0; o < outer; ++o) {
    // With `causal`, the axis is the last one (inner == 1) and row o is row
    // (o mod T) of its TxT matrix.
    const int64_t valid = a.causal ? o % len + 1 : len;
    for (int64_t i = 0; i < inner; ++i) {
      const T *in = px + o * len * inner + i;
      T *out = py + o * len * inner + i;
      T max = in[0];
      for (int64_t j = 1; j < valid; ++j)
        if (in[j * inner] > max)
          max = in[j * inner];
      if (a.safe && max == -std::numeric_limits<T>::infinity()) {
        // Every entry -inf (a fully masked row): probabilities 0.
        for (int64_t j = 0; j < len; ++j)
          out[j * inner] = T(0);
        continue;
      }
      const T sum = shiftedExp(in, out, valid, inner, max);
      const T inv = T(1) / sum;
      for (int64_t j = 0; j < valid; ++j)
        out[j * inner] *= inv;
      for (int64_t j = valid; j < len; ++j)
        out[j * inner] = T(0);
    }
  }
}

template <typename T> void softmaxBackwardImpl(const KernelCall &call) {
  const TensorRef &g = call.in(0), &y = call.in(1), &dx = call.out(0);
  const int64_t axis = call.step.get<SoftmaxAttrs>().axis;
  const Shape &shape = *g.shape;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d)
    inner *= shape[d];
  const int64_t len = shape[axis];
  const T *pg = g.as<const T>(), *py = y.as<const T>();
  T *out = dx.as<T>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * len * inner + i;
      double dot = 0;
      for (int64_t j = 0; j < len; ++j)
        dot += static_cast<double>(pg[base + j * inner]) *
               static_cast<double>(py[base + j * inner]);
      const T t = static_cast<T>(dot);
      for (int64_t j = 0; j < len; ++j) {
        const int64_t k = base + j * inner;
        out[k] = py[k] * (pg[k] - t);
      }
    }
  }
}

} // namespace

void softmaxBackward(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype,
                [&](auto tag) { softmaxBackwardImpl<decltype(tag)>(call); });
}

void softmax(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype,
                [&](auto tag) { softmaxImpl<decltype(tag)>(call); });
}

} // namespace memopt::runtime::cpu
