//===- Norm.cpp - batch_norm (training), layer_norm, rms_norm, gradients --===//
//
// Statistics are accumulated in double with two passes (mean, then the
// centred sum of squares), which is exact enough to serve as the reference
// the GPU is compared against. The kernels read all of a channel (row) of x
// before writing y[i] from x[i], so y may overwrite x. batch_norm_act is
// batch_norm's arithmetic followed by the activation (InPlace-ABN); its
// backward rebuilds x̂ from the output instead of reading x.
//
// The backward kernels recompute the statistics from x and, per channel
// (batch norm) or row (layer norm), reduce sum(dy) and sum(dy * xhat) in
// double before writing any dx, so dx may overwrite dy or x. With
// xhat = (x - mean) * invStd and M values per statistic:
//   dx = gamma * invStd * (dy - sum(dy)/M - xhat * sum(dy * xhat)/M)
// (for layer norm with dy * gamma in place of gamma * dy, as gamma varies
// within the row), dgamma = sum(dy * xhat), dbeta = sum(dy). RMS norm is
// layer norm with the mean fixed at 0 (invStd = 1/sqrt(mean(x^2) + eps)) and
// no shift, so its dx drops the sum(dy)/M term: dy * gamma * invStd minus
// xhat * invStd * mean(dy * gamma * xhat).
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "ParallelFor.h"

#include "memopt/runtime/ElementwiseMath.h"

#include <array>
#include <vector>

namespace memopt::runtime::cpu {

namespace {

/// Σ f(i) over i in [0, count) in double for each f of `fs`, in one pass:
/// per sum, four interleaved partial sums (i mod 4) added as (s0 + s1) +
/// (s2 + s3), four independent chains of additions instead of one, several
/// times faster on long channels. The order is fixed, so the result is the
/// same on every run, and the same whether a sum is taken alone or beside
/// others (kernels that need two sums of the same elements read them once).
template <typename... F>
std::array<double, sizeof...(F)> sumsOf(int64_t count, F... fs) {
  std::array<std::array<double, 4>, sizeof...(F)> chains{};
  auto add = [&](int64_t i, int chain) {
    size_t k = 0;
    ((chains[k++][chain] += fs(i)), ...);
  };
  int64_t i = 0;
  for (; i + 4 <= count; i += 4)
    for (int chain = 0; chain < 4; ++chain)
      add(i + chain, chain);
  for (; i < count; ++i)
    add(i, 0);
  std::array<double, sizeof...(F)> sums;
  for (size_t k = 0; k < sums.size(); ++k)
    sums[k] = (chains[k][0] + chains[k][1]) + (chains[k][2] + chains[k][3]);
  return sums;
}

/// Σ over the images of channel `ch` of an N x C x inner tensor of
/// f(offset of the element) for each f of `fs`: one sumsOf per image, added
/// in image order.
template <typename... F>
std::array<double, sizeof...(F)> channelSums(int64_t n, int64_t c, int64_t ch,
                                             int64_t inner, F... fs) {
  std::array<double, sizeof...(F)> sums{};
  for (int64_t img = 0; img < n; ++img) {
    const int64_t base = (img * c + ch) * inner;
    const std::array<double, sizeof...(F)> image =
        sumsOf(inner, [&](int64_t i) { return fs(base + i); }...);
    for (size_t k = 0; k < sums.size(); ++k)
      sums[k] += image[k];
  }
  return sums;
}

/// One channelSums.
template <typename F>
double channelSum(int64_t n, int64_t c, int64_t ch, int64_t inner, F f) {
  return channelSums(n, c, ch, inner, f)[0];
}

/// The mean and inverse standard deviation (of the biased variance).
struct Stats {
  double mean = 0, invStd = 0;
  /// Σ (x − mean)², for the variance (biased or not).
  double squares = 0;
};

/// The statistics of channel `ch` of an N x C x inner tensor, over every
/// image (a layer-norm row is channel 0 of a 1 x 1 x width tensor).
template <typename T>
Stats channelStats(const T *px, int64_t n, int64_t c, int64_t ch, int64_t inner,
                   double epsilon) {
  const double count = static_cast<double>(n * inner);
  Stats s;
  s.mean = channelSum(n, c, ch, inner,
                      [&](int64_t i) { return static_cast<double>(px[i]); }) /
           count;
  s.squares = channelSum(n, c, ch, inner, [&](int64_t i) {
    const double d = static_cast<double>(px[i]) - s.mean;
    return d * d;
  });
  s.invStd = math::inverseStd(s.squares / count, epsilon);
  return s;
}

/// Training-mode batch norm: `activation` maps each normalised value before
/// it is stored (the identity for batch_norm) and `savedInvStd`, when not
/// null, receives each channel's 1/sqrt(var + epsilon). batch_norm_act runs
/// exactly batch_norm's arithmetic, so the fusion changes no forward bit
/// when x is stored in the compute type (f32, f64); with f16/bf16 storage the
/// normalised value is not rounded to it before the activation, as the
/// unfused pair of kernels does.
template <typename T, typename Activation>
void batchNormTraining(const KernelCall &call, double epsilon, double momentum,
                       Activation activation, T *savedInvStd) {
  const TensorRef &x = call.in(0);
  const int64_t n = x.dim(0), c = x.dim(1);
  const int64_t inner = x.numElements / (n * c);
  const int64_t count = n * inner;
  const T *px = x.as<const T>();
  const T *gamma = call.in(1).as<const T>(), *beta = call.in(2).as<const T>();
  const T *runMean = call.in(3).as<const T>();
  const T *runVar = call.in(4).as<const T>();
  T *py = call.out(0).as<T>();
  T *newMean = call.out(1).as<T>(), *newVar = call.out(2).as<T>();

  parallelRange(c, 3 * n * inner, [&](int64_t c0, int64_t c1) {
    for (int64_t ch = c0; ch < c1; ++ch) {
      const Stats st = channelStats(px, n, c, ch, inner, epsilon);
      const double mean = st.mean, invStd = st.invStd;
      const double unbiased = st.squares / static_cast<double>(count - 1);
      // y = (x - mean) * invStd * gamma + beta, as one multiply-add.
      const double scale = static_cast<double>(gamma[ch]) * invStd;
      const T s = static_cast<T>(scale);
      const T shift =
          static_cast<T>(static_cast<double>(beta[ch]) - mean * scale);
      for (int64_t img = 0; img < n; ++img) {
        const T *p = px + (img * c + ch) * inner;
        T *q = py + (img * c + ch) * inner;
        for (int64_t i = 0; i < inner; ++i)
          q[i] = activation(static_cast<T>(p[i] * s + shift));
      }
      newMean[ch] = static_cast<T>(math::runningUpdate(
          static_cast<double>(runMean[ch]), mean, momentum));
      newVar[ch] = static_cast<T>(math::runningUpdate(
          static_cast<double>(runVar[ch]), unbiased, momentum));
      if (savedInvStd)
        savedInvStd[ch] = static_cast<T>(invStd);
    }
  });
}

template <typename T> void batchNormImpl(const KernelCall &call) {
  const BatchNormAttrs &attrs = call.step.get<BatchNormAttrs>();
  batchNormTraining<T>(
      call, attrs.epsilon, attrs.momentum, [](T v) { return v; }, nullptr);
}

template <typename T> void batchNormActImpl(const KernelCall &call) {
  const BatchNormActAttrs &attrs = call.step.get<BatchNormActAttrs>();
  const T alpha = static_cast<T>(attrs.alpha);
  T *saved = call.out(3).as<T>();
  if (attrs.activation == InvertibleActivation::Elu)
    return batchNormTraining<T>(
        call, attrs.epsilon, attrs.momentum,
        [alpha](T v) { return math::elu(v, alpha); }, saved);
  batchNormTraining<T>(
      call, attrs.epsilon, attrs.momentum,
      [alpha](T v) { return math::leakyRelu(v, alpha); }, saved);
}

/// Evaluation mode: the running statistics normalise, nothing is updated.
template <typename T> void batchNormInferenceImpl(const KernelCall &call) {
  const TensorRef &x = call.in(0);
  const BatchNormAttrs &attrs = call.step.get<BatchNormAttrs>();
  const int64_t n = x.dim(0), c = x.dim(1);
  const int64_t inner = x.numElements / (n * c);
  const T *px = x.as<const T>();
  const T *gamma = call.in(1).as<const T>(), *beta = call.in(2).as<const T>();
  const T *runMean = call.in(3).as<const T>();
  const T *runVar = call.in(4).as<const T>();
  T *py = call.out(0).as<T>();
  parallelRange(c, n * inner, [&](int64_t c0, int64_t c1) {
    for (int64_t ch = c0; ch < c1; ++ch) {
      const double invStd =
          math::inverseStd(static_cast<double>(runVar[ch]), attrs.epsilon);
      const double scale = static_cast<double>(gamma[ch]) * invStd;
      const T s = static_cast<T>(scale);
      const T shift = static_cast<T>(static_cast<double>(beta[ch]) -
                                     static_cast<double>(runMean[ch]) * scale);
      for (int64_t img = 0; img < n; ++img) {
        const T *p = px + (img * c + ch) * inner;
        T *q = py + (img * c + ch) * inner;
        for (int64_t i = 0; i < inner; ++i)
          q[i] = p[i] * s + shift;
      }
    }
  });
}

/// The statistics of one row of `width` elements: layer norm's (a row is
/// channel 0 of a 1 x 1 x width tensor), or RMS norm's, a mean of 0 and
/// the inverse root mean square.
template <bool Rms, typename T>
Stats rowStats(const T *p, int64_t width, double epsilon) {
  if constexpr (!Rms)
    return channelStats(p, 1, 1, 0, width, epsilon);
  Stats s;
  s.squares = sumsOf(width, [&](int64_t i) {
    const double v = static_cast<double>(p[i]);
    return v * v;
  })[0];
  s.invStd = math::inverseStd(s.squares / static_cast<double>(width), epsilon);
  return s;
}

/// layer_norm, (x - mean) * invStd * gamma + beta, or rms_norm,
/// x * invStd * gamma, each in the compute type.
template <bool Rms, typename T> void rowNormImpl(const KernelCall &call) {
  const TensorRef &x = call.in(0), &g = call.in(1);
  const double epsilon = call.step.get<LayerNormAttrs>().epsilon;
  const int64_t width = g.numElements;
  const int64_t rows = x.numElements / width;
  const T *px = x.as<const T>(), *gamma = g.as<const T>();
  const T *beta = Rms ? nullptr : call.in(2).as<const T>();
  T *py = call.out(0).as<T>();
  parallelRange(rows, 3 * width, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T *p = px + r * width;
      T *q = py + r * width;
      // The statistics the backward pass takes.
      const Stats st = rowStats<Rms>(p, width, epsilon);
      const T m = static_cast<T>(st.mean), s = static_cast<T>(st.invStd);
      for (int64_t i = 0; i < width; ++i) {
        if constexpr (Rms)
          q[i] = p[i] * s * gamma[i];
        else
          q[i] = (p[i] - m) * s * gamma[i] + beta[i];
      }
    }
  });
}

template <typename T> void batchNormBackwardImpl(const KernelCall &call) {
  const TensorRef &dy = call.in(0), &x = call.in(1);
  const double epsilon = call.step.get<NormBackwardAttrs>().epsilon;
  const int64_t n = x.dim(0), c = x.dim(1);
  const int64_t inner = x.numElements / (n * c);
  const double count = static_cast<double>(n * inner);
  const T *px = x.as<const T>(), *pdy = dy.as<const T>();
  const T *gamma = call.in(2).as<const T>();
  T *pdx = call.out(0).as<T>();
  T *dgamma = call.out(1).as<T>(), *dbeta = call.out(2).as<T>();

  parallelRange(c, 5 * n * inner, [&](int64_t c0, int64_t c1) {
    for (int64_t ch = c0; ch < c1; ++ch) {
      // channelStats's two sums, each paired with one of the gradient's in
      // the same pass: the same bits as separate passes, two passes fewer.
      Stats st;
      const std::array<double, 2> first = channelSums(
          n, c, ch, inner,
          [&](int64_t i) { return static_cast<double>(px[i]); },
          [&](int64_t i) { return static_cast<double>(pdy[i]); });
      st.mean = first[0] / count;
      const double sumDy = first[1];
      const std::array<double, 2> second = channelSums(
          n, c, ch, inner,
          [&](int64_t i) {
            const double d = static_cast<double>(px[i]) - st.mean;
            return d * d;
          },
          [&](int64_t i) {
            return static_cast<double>(pdy[i]) *
                   (static_cast<double>(px[i]) - st.mean);
          });
      st.squares = second[0];
      st.invStd = math::inverseStd(st.squares / count, epsilon);
      const double sumDyCentred = second[1];
      const double sumDyXhat = sumDyCentred * st.invStd;
      dgamma[ch] = static_cast<T>(sumDyXhat);
      dbeta[ch] = static_cast<T>(sumDy);
      const double scale = static_cast<double>(gamma[ch]) * st.invStd;
      const double meanDy = sumDy / count, meanDyXhat = sumDyXhat / count;
      for (int64_t img = 0; img < n; ++img) {
        const int64_t base = (img * c + ch) * inner;
        for (int64_t i = 0; i < inner; ++i) {
          const double xhat =
              (static_cast<double>(px[base + i]) - st.mean) * st.invStd;
          pdx[base + i] =
              static_cast<T>(scale * (static_cast<double>(pdy[base + i]) -
                                      meanDy - xhat * meanDyXhat));
        }
      }
    }
  });
}

/// InPlace-ABN's backward: batch_norm_backward with x̂ rebuilt from the
/// activation's output y. Per element z = f⁻¹(y) and dz = dy · f'(z) (from
/// y, in the compute type, as the activation backward kernel computes it);
/// x̂ = (z - beta) / gamma in double. A channel with gamma = 0 has lost x̂:
/// it gets x̂ = 0, so grad_gamma = 0 there, while grad_x (scaled by gamma)
/// is 0 and grad_beta exact as they should be.
template <typename T, typename Inverse, typename Backward>
void batchNormActBackwardLoop(const KernelCall &call, Inverse inverse,
                              Backward backward) {
  const TensorRef &dy = call.in(0), &y = call.in(1);
  const int64_t n = y.dim(0), c = y.dim(1);
  const int64_t inner = y.numElements / (n * c);
  const double count = static_cast<double>(n * inner);
  const T *pdy = dy.as<const T>(), *py = y.as<const T>();
  const T *gamma = call.in(2).as<const T>(), *beta = call.in(3).as<const T>();
  const T *invStd = call.in(4).as<const T>();
  T *pdx = call.out(0).as<T>();
  T *dgamma = call.out(1).as<T>(), *dbeta = call.out(2).as<T>();

  parallelRange(c, 2 * n * inner, [&](int64_t c0, int64_t c1) {
    for (int64_t ch = c0; ch < c1; ++ch) {
      const double g = static_cast<double>(gamma[ch]);
      const double b = static_cast<double>(beta[ch]);
      auto xhat = [&](T out) {
        return g != 0 ? (static_cast<double>(inverse(out)) - b) / g : 0.0;
      };
      double sumDz = 0, sumDzXhat = 0;
      for (int64_t img = 0; img < n; ++img) {
        const int64_t base = (img * c + ch) * inner;
        for (int64_t i = 0; i < inner; ++i) {
          const T out = py[base + i];
          const double dz = static_cast<double>(backward(pdy[base + i], out));
          sumDz += dz;
          sumDzXhat += dz * xhat(out);
        }
      }
      // Every input of the channel is read before any output is written, so
      // grad_x may overwrite grad or output.
      const double scale = g * static_cast<double>(invStd[ch]);
      const double meanDz = sumDz / count, meanDzXhat = sumDzXhat / count;
      for (int64_t img = 0; img < n; ++img) {
        const int64_t base = (img * c + ch) * inner;
        for (int64_t i = 0; i < inner; ++i) {
          const T out = py[base + i];
          const double dz = static_cast<double>(backward(pdy[base + i], out));
          pdx[base + i] =
              static_cast<T>(scale * (dz - meanDz - xhat(out) * meanDzXhat));
        }
      }
      dgamma[ch] = static_cast<T>(sumDzXhat);
      dbeta[ch] = static_cast<T>(sumDz);
    }
  });
}

template <typename T> void batchNormActBackwardImpl(const KernelCall &call) {
  const BatchNormActBackwardAttrs &attrs =
      call.step.get<BatchNormActBackwardAttrs>();
  const T alpha = static_cast<T>(attrs.alpha);
  if (attrs.activation == InvertibleActivation::Elu)
    return batchNormActBackwardLoop<T>(
        call, [alpha](T out) { return math::eluInverse(out, alpha); },
        [alpha](T d, T out) {
          return math::eluBackwardFromOutput(d, out, alpha);
        });
  batchNormActBackwardLoop<T>(
      call, [alpha](T out) { return math::leakyReluInverse(out, alpha); },
      [alpha](T d, T out) {
        return math::leakyReluBackwardFromOutput(d, out, alpha);
      });
}

/// layer_norm_backward, or rms_norm_backward (no mean, so no mean(g) term
/// and no grad_beta).
template <bool Rms, typename T>
void rowNormBackwardImpl(const KernelCall &call) {
  const TensorRef &dy = call.in(0), &x = call.in(1), &g = call.in(2);
  const double epsilon = call.step.get<NormBackwardAttrs>().epsilon;
  const int64_t width = g.numElements;
  const int64_t rows = x.numElements / width;
  const double count = static_cast<double>(width);
  const T *px = x.as<const T>(), *pdy = dy.as<const T>();
  const T *gamma = g.as<const T>();
  T *pdx = call.out(0).as<T>();
  // RMS norm has no shift: no sum(dy) per row, no grad_beta.
  std::vector<double> dgamma(width, 0.0), dbeta(Rms ? 0 : width, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const T *p = px + r * width, *d = pdy + r * width;
    T *q = pdx + r * width;
    const Stats st = rowStats<Rms>(p, width, epsilon);
    double sumG = 0, sumGXhat = 0;
    for (int64_t i = 0; i < width; ++i) {
      const double xhat = (static_cast<double>(p[i]) - st.mean) * st.invStd;
      const double dyi = static_cast<double>(d[i]);
      const double gi = dyi * static_cast<double>(gamma[i]);
      sumGXhat += gi * xhat;
      dgamma[i] += dyi * xhat;
      if constexpr (!Rms) {
        sumG += gi;
        dbeta[i] += dyi;
      }
    }
    const double meanG = sumG / count;
    const double meanGXhat = sumGXhat / count;
    for (int64_t i = 0; i < width; ++i) {
      const double xhat = (static_cast<double>(p[i]) - st.mean) * st.invStd;
      const double gi =
          static_cast<double>(d[i]) * static_cast<double>(gamma[i]);
      q[i] = static_cast<T>(st.invStd * (gi - meanG - xhat * meanGXhat));
    }
  }
  T *pdgamma = call.out(1).as<T>();
  for (int64_t i = 0; i < width; ++i)
    pdgamma[i] = static_cast<T>(dgamma[i]);
  if constexpr (!Rms) {
    T *pdbeta = call.out(2).as<T>();
    for (int64_t i = 0; i < width; ++i)
      pdbeta[i] = static_cast<T>(dbeta[i]);
  }
}

} // namespace

void batchNormBackward(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype,
                [&](auto tag) { batchNormBackwardImpl<decltype(tag)>(call); });
}

void layerNormBackward(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype, [&](auto tag) {
    rowNormBackwardImpl<false, decltype(tag)>(call);
  });
}

void rmsNormBackward(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype, [&](auto tag) {
    rowNormBackwardImpl<true, decltype(tag)>(call);
  });
}

void batchNormAct(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype,
                [&](auto tag) { batchNormActImpl<decltype(tag)>(call); });
}

void batchNormActBackward(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype, [&](auto tag) {
    batchNormActBackwardImpl<decltype(tag)>(call);
  });
}

void batchNorm(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype,
                [&](auto tag) { batchNormImpl<decltype(tag)>(call); });
}

void batchNormInference(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype,
                [&](auto tag) { batchNormInferenceImpl<decltype(tag)>(call); });
}

void layerNorm(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype,
                [&](auto tag) { rowNormImpl<false, decltype(tag)>(call); });
}

void rmsNorm(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype,
                [&](auto tag) { rowNormImpl<true, decltype(tag)>(call); });
}

} // namespace memopt::runtime::cpu
