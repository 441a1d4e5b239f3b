//===- Norm.cpp - batch_norm (training mode) and layer_norm on the CPU ----===//
//
// Statistics are accumulated in double with two passes (mean, then the
// centred sum of squares), which is exact enough to serve as the reference
// the GPU is compared against. Both kernels read all of x before writing
// y[i] from x[i], so y may overwrite x (in-place ABN).
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

#include "memopt/runtime/ElementwiseMath.h"

namespace memopt::runtime::cpu {

namespace {

template <typename T> void batchNormImpl(const KernelCall &call) {
  const TensorRef &x = call.in(0);
  const BatchNormAttrs &attrs = call.step.get<BatchNormAttrs>();
  const int64_t n = x.dim(0), c = x.dim(1);
  const int64_t inner = x.numElements / (n * c);
  const int64_t count = n * inner;
  const T *px = x.as<const T>();
  const T *gamma = call.in(1).as<const T>(), *beta = call.in(2).as<const T>();
  const T *runMean = call.in(3).as<const T>();
  const T *runVar = call.in(4).as<const T>();
  T *py = call.out(0).as<T>();
  T *newMean = call.out(1).as<T>(), *newVar = call.out(2).as<T>();
  const double momentum = attrs.momentum;

  for (int64_t ch = 0; ch < c; ++ch) {
    double sum = 0;
    for (int64_t img = 0; img < n; ++img) {
      const T *p = px + (img * c + ch) * inner;
      for (int64_t i = 0; i < inner; ++i)
        sum += static_cast<double>(p[i]);
    }
    const double mean = sum / static_cast<double>(count);
    double squares = 0;
    for (int64_t img = 0; img < n; ++img) {
      const T *p = px + (img * c + ch) * inner;
      for (int64_t i = 0; i < inner; ++i) {
        double d = static_cast<double>(p[i]) - mean;
        squares += d * d;
      }
    }
    const double var = squares / static_cast<double>(count);
    const double unbiased = squares / static_cast<double>(count - 1);
    const double invStd = math::inverseStd(var, attrs.epsilon);
    // y = (x - mean) * invStd * gamma + beta, as one multiply-add.
    const double scale = static_cast<double>(gamma[ch]) * invStd;
    const T s = static_cast<T>(scale);
    const T shift =
        static_cast<T>(static_cast<double>(beta[ch]) - mean * scale);
    for (int64_t img = 0; img < n; ++img) {
      const T *p = px + (img * c + ch) * inner;
      T *q = py + (img * c + ch) * inner;
      for (int64_t i = 0; i < inner; ++i)
        q[i] = p[i] * s + shift;
    }
    newMean[ch] = static_cast<T>(
        math::runningUpdate(static_cast<double>(runMean[ch]), mean, momentum));
    newVar[ch] = static_cast<T>(math::runningUpdate(
        static_cast<double>(runVar[ch]), unbiased, momentum));
  }
}

template <typename T> void layerNormImpl(const KernelCall &call) {
  const TensorRef &x = call.in(0), &g = call.in(1);
  const double epsilon = call.step.get<LayerNormAttrs>().epsilon;
  const int64_t width = g.numElements;
  const int64_t rows = x.numElements / width;
  const T *px = x.as<const T>(), *gamma = g.as<const T>();
  const T *beta = call.in(2).as<const T>();
  T *py = call.out(0).as<T>();
  for (int64_t r = 0; r < rows; ++r) {
    const T *p = px + r * width;
    T *q = py + r * width;
    double sum = 0;
    for (int64_t i = 0; i < width; ++i)
      sum += static_cast<double>(p[i]);
    const double mean = sum / static_cast<double>(width);
    double squares = 0;
    for (int64_t i = 0; i < width; ++i) {
      double d = static_cast<double>(p[i]) - mean;
      squares += d * d;
    }
    const double invStd =
        math::inverseStd(squares / static_cast<double>(width), epsilon);
    const T m = static_cast<T>(mean), s = static_cast<T>(invStd);
    for (int64_t i = 0; i < width; ++i)
      q[i] = (p[i] - m) * s * gamma[i] + beta[i];
  }
}

} // namespace

void batchNorm(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype,
                [&](auto tag) { batchNormImpl<decltype(tag)>(call); });
}

void layerNorm(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype,
                [&](auto tag) { layerNormImpl<decltype(tag)>(call); });
}

} // namespace memopt::runtime::cpu
