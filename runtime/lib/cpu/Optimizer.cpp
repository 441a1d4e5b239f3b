//===- Optimizer.cpp - SGD, momentum, Adam and AdamW steps on the CPU ----===//
//
// torch.optim's update rules, element by element in the compute type with
// the hyper-parameters rounded to it once (as PyTorch passes Python floats
// to its tensor ops). Adam's bias corrections are computed in double from
// the step count t (the step tensor, already incremented: 1 on the first
// step). Each loop reads every operand's element i before writing any
// output's element i, so new values may overwrite the old ones (Kernel.h).
//
// The gradient (input 1) is read in its own dtype (the backend does not
// widen it): f16 or bf16 beside an f32 or f64 parameter, or f32 beside f64,
// is widened exactly element by element, so no wide copy exists. A loss
// scale after the skip flag unscales each element as memopt.unscale would
// in the parameter's type (LossScale.h), before the update uses it.
//
// An optional `skip` operand (0-d f32) after the tensors skips the step when
// nonzero, as GradScaler skips optimizer.step() after non-finite gradients:
// skipOptimizerStep runs before the backend converts any operand, reads the
// flag in its own dtype and copies every old value to its output byte for
// byte (nothing to do for an output over its input), so a skipped step is
// bit-identical whatever the storage dtype.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "WorkspaceRows.h"

#include "memopt/Contract/OptimizerShapes.h"
#include "memopt/runtime/ClipNorm.h"
#include "memopt/runtime/ElementwiseMath.h"
#include "memopt/runtime/LossScale.h"
#include "memopt/runtime/Quantization.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

namespace memopt::runtime::cpu {

namespace {

/// Calls `f` with a function from element index to the gradient's value in
/// compute type T: input 1 widened from its dtype, divided by the loss
/// scale at input `scaleIndex` when the update has one.
template <typename T, typename F>
void withGradient(const KernelCall &call, size_t scaleIndex, F &&f) {
  const TensorRef &g = call.in(1);
  const bool scaled = call.inputs.size() > scaleIndex;
  // The backend may have widened the 0-d f32 scale to f64 beside an f64
  // parameter (exactly): read it back as the f32 it is.
  auto scaleValue = [&]() -> float {
    const TensorRef &s = call.in(scaleIndex);
    return s.dtype == DType::F64 ? static_cast<float>(*s.as<const double>())
                                 : *s.as<const float>();
  };
  const float inv = scaled ? math::inverseLossScale(scaleValue()) : 1.0f;
  auto run = [&](auto widen) {
    if (scaled)
      f([&](int64_t i) -> T {
        return static_cast<T>(
            math::unscaleValue(static_cast<T>(widen(i)), inv));
      });
    else
      f([&](int64_t i) -> T { return static_cast<T>(widen(i)); });
  };
  switch (g.dtype) {
  case DType::F16: {
    const uint16_t *p = g.as<const uint16_t>();
    return run([p](int64_t i) { return halfBitsToFloat(p[i]); });
  }
  case DType::BF16: {
    const uint16_t *p = g.as<const uint16_t>();
    return run([p](int64_t i) { return bfloat16BitsToFloat(p[i]); });
  }
  case DType::F32: {
    const float *p = g.as<const float>();
    return run([p](int64_t i) { return p[i]; });
  }
  case DType::F64: {
    const double *p = g.as<const double>();
    return run([p](int64_t i) { return p[i]; });
  }
  default:
    throw Error(
        ErrorCode::Internal,
        runtime::concat("optimizer gradient of dtype ", dtypeName(g.dtype)));
  }
}

/// The step count t (the step tensor at input `index`, already
/// incremented: 1 on the first step), checked.
template <typename T>
double stepCount(const KernelCall &call, size_t index, const char *optimizer) {
  const double t = static_cast<double>(*call.in(index).as<const T>());
  if (!(t >= 1) || !std::isfinite(t))
    kernelError(optimizer, " step count ", t,
                " must be finite and >= 1 (the step tensor holds the count "
                "after incrementing it)");
  return t;
}

template <typename T, typename G>
void sgdImpl(const KernelCall &call, const G &grad) {
  const SgdAttrs &a = call.step.get<SgdAttrs>();
  const T lr = static_cast<T>(a.lr), wd = static_cast<T>(a.weightDecay);
  const bool decay = a.weightDecay != 0;
  const T *pp = call.in(0).as<const T>();
  T *out = call.out(0).as<T>();
  for (int64_t i = 0, n = call.out(0).numElements; i < n; ++i) {
    const T p = pp[i], g = grad(i);
    const T d = decay ? g + wd * p : g;
    out[i] = p - lr * d;
  }
}

template <typename T, typename G>
void sgdMomentumImpl(const KernelCall &call, const G &grad) {
  const SgdMomentumAttrs &a = call.step.get<SgdMomentumAttrs>();
  const T lr = static_cast<T>(a.lr), wd = static_cast<T>(a.weightDecay);
  const T momentum = static_cast<T>(a.momentum);
  const T keep = static_cast<T>(1 - a.dampening);
  const bool decay = a.weightDecay != 0, nesterov = a.nesterov;
  const T *pp = call.in(0).as<const T>(), *pb = call.in(2).as<const T>();
  T *newP = call.out(0).as<T>(), *newB = call.out(1).as<T>();
  for (int64_t i = 0, n = call.out(0).numElements; i < n; ++i) {
    const T p = pp[i], b = pb[i], g = grad(i);
    const T d = decay ? g + wd * p : g;
    const T buf = momentum * b + keep * d;
    const T step = nesterov ? d + momentum * buf : buf;
    newP[i] = p - lr * step;
    newB[i] = buf;
  }
}

/// One element of Adam's (or AdamW's) step in T, with the hyper-parameters
/// rounded to T once and the bias corrections computed in double from the
/// step count t. Adam adds weight_decay · p to the gradient; AdamW scales p
/// by 1 − lr · weight_decay (a double rounded once, as PyTorch's mul_).
template <typename T> struct AdamStep {
  AdamStep(const AdamAttrs &a, double t)
      : stepSize(static_cast<T>(a.lr / (1 - std::pow(a.beta1, t)))),
        biasCorrection2Sqrt(
            static_cast<T>(std::sqrt(1 - std::pow(a.beta2, t)))),
        beta1(static_cast<T>(a.beta1)), beta2(static_cast<T>(a.beta2)),
        oneMinusBeta1(static_cast<T>(1 - a.beta1)),
        oneMinusBeta2(static_cast<T>(1 - a.beta2)), eps(static_cast<T>(a.eps)),
        wd(static_cast<T>(a.weightDecay)),
        keep(static_cast<T>(1 - a.lr * a.weightDecay)),
        decay(a.weightDecay != 0 && !a.decoupledWeightDecay),
        decoupled(a.weightDecay != 0 && a.decoupledWeightDecay) {}

  /// The new parameter from p0 and its gradient g0; the new moments from
  /// the old ones in `m` and `v`.
  T operator()(T p0, T g0, T &m, T &v) const {
    const T g = decay ? g0 + wd * p0 : g0;
    const T p = decoupled ? p0 * keep : p0;
    m = beta1 * m + oneMinusBeta1 * g;
    v = beta2 * v + oneMinusBeta2 * g * g;
    const T denom = math::sqrt(v) / biasCorrection2Sqrt + eps;
    return p - stepSize * (m / denom);
  }

  T stepSize, biasCorrection2Sqrt, beta1, beta2, oneMinusBeta1, oneMinusBeta2,
      eps, wd, keep;
  bool decay, decoupled;
};

template <typename T, typename G>
void adamImpl(const KernelCall &call, const G &grad) {
  const AdamStep<T> adam(call.step.get<AdamAttrs>(),
                         stepCount<T>(call, 4, "adam"));
  const T *pp = call.in(0).as<const T>();
  const T *pm = call.in(2).as<const T>(), *pv = call.in(3).as<const T>();
  T *newP = call.out(0).as<T>(), *newM = call.out(1).as<T>();
  T *newV = call.out(2).as<T>();
  for (int64_t i = 0, n = call.out(0).numElements; i < n; ++i) {
    T m = pm[i], v = pv[i];
    newP[i] = adam(pp[i], grad(i), m, v);
    newM[i] = m;
    newV[i] = v;
  }
}

template <typename T, typename G>
void adam8bitImpl(const KernelCall &call, const G &grad) {
  const AdamStep<T> adam(call.step.get<AdamAttrs>(),
                         stepCount<T>(call, 6, "adam8bit"));
  static const std::array<float, quant::kCodeSize> code1 =
      quant::dynamicMap(/*isSigned=*/true);
  static const std::array<float, quant::kCodeSize> code2 =
      quant::dynamicMap(/*isSigned=*/false);
  const T *pp = call.in(0).as<const T>();
  const uint8_t *pm = call.in(2).as<const uint8_t>();
  const T *pmMax = call.in(3).as<const T>();
  const uint8_t *pv = call.in(4).as<const uint8_t>();
  const T *pvMax = call.in(5).as<const T>();
  T *newP = call.out(0).as<T>();
  uint8_t *newM = call.out(1).as<uint8_t>();
  T *newMMax = call.out(2).as<T>();
  uint8_t *newV = call.out(3).as<uint8_t>();
  T *newVMax = call.out(4).as<T>();
  const int64_t n = call.out(0).numElements;
  constexpr int64_t kBlock = shapes::kQuantizationBlock;
  T m[kBlock], v[kBlock];
  for (int64_t b = 0, begin = 0; begin < n; ++b, begin += kBlock) {
    const int64_t len = std::min(kBlock, n - begin);
    const T mScale = pmMax[b], vScale = pvMax[b];
    T mMax = 0, vMax = 0;
    for (int64_t j = 0; j < len; ++j) {
      const int64_t i = begin + j;
      m[j] = static_cast<T>(code1[pm[i]]) * mScale;
      v[j] = static_cast<T>(code2[pv[i]]) * vScale;
      newP[i] = adam(pp[i], grad(i), m[j], v[j]);
      mMax = std::max(mMax, std::abs(m[j]));
      vMax = std::max(vMax, std::abs(v[j]));
    }
    // The maxima are stored as f32, and the codes are relative to them.
    const float mMaxF = static_cast<float>(mMax);
    const float vMaxF = static_cast<float>(vMax);
    for (int64_t j = 0; j < len; ++j) {
      newM[begin + j] = quant::quantize(code1.data(), /*isSigned=*/true,
                                        static_cast<float>(m[j]), mMaxF);
      newV[begin + j] = quant::quantize(code2.data(), /*isSigned=*/false,
                                        static_cast<float>(v[j]), vMaxF);
    }
    newMMax[b] = static_cast<T>(mMaxF);
    newVMax[b] = static_cast<T>(vMaxF);
  }
}

/// sqrt(sum of squares / n), accumulated in double.
template <typename T, typename F> T rootMeanSquare(int64_t n, const F &value) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double x = static_cast<double>(value(i));
    sum += x * x;
  }
  return static_cast<T>(std::sqrt(sum / static_cast<double>(n)));
}

template <typename T, typename G>
void adafactorImpl(const KernelCall &call, const G &grad) {
  const AdafactorAttrs &a = call.step.get<AdafactorAttrs>();
  const TensorRef &param = call.in(0);
  const bool factored = shapes::adafactorFactored(*param.shape);
  const size_t k = factored ? 2 : 1;
  const double t = stepCount<T>(call, 2 + k, "adafactor");
  const int64_t n = param.numElements;
  const T *pp = param.as<const T>();
  // α = lr · max(eps2, RMS(p)), from the parameter before the step.
  T alpha = static_cast<T>(a.lr);
  if (a.scaleParameter)
    alpha = alpha *
            std::max(static_cast<T>(a.eps2),
                     rootMeanSquare<T>(n, [&](int64_t i) { return pp[i]; }));
  const T beta2t = static_cast<T>(1 - std::pow(t, a.decayRate));
  const T oneMinusBeta2t = 1 - beta2t;
  const T eps1 = static_cast<T>(a.eps1);
  auto squared = [&](int64_t i) {
    const T g = grad(i);
    return g * g + eps1;
  };
  // Given the update before clipping (element i: g · the factor of its row
  // and column, or the rsqrt of its second moment, from the new state):
  // clipped by its RMS, scaled by α; the decay is relative to α too.
  auto apply = [&](const auto &update) {
    const T clip = std::max(T(1), rootMeanSquare<T>(n, update) /
                                      static_cast<T>(a.clipThreshold));
    const bool decay = a.weightDecay != 0;
    const T decayFactor = -static_cast<T>(a.weightDecay) * alpha;
    T *newP = call.out(0).as<T>();
    for (int64_t i = 0; i < n; ++i) {
      const T u = update(i) / clip * alpha;
      T p = pp[i];
      if (decay)
        p = p + p * decayFactor;
      newP[i] = p - u;
    }
  };
  // The planned workspace (OptimizerShapes.h): the row factors' means,
  // then the column sums, in double.
  WorkspaceRows<double> scratch(
      call, shapes::adafactorWorkspaceDoubles(*param.shape), 1);
  double *rowMeans = scratch.data();
  if (factored) {
    const int64_t cols = param.dim(param.rank() - 1);
    const int64_t rows = param.dim(param.rank() - 2);
    const int64_t batches = rows * cols == 0 ? 0 : n / (rows * cols);
    const T *rowIn = call.in(2).as<const T>(),
            *colIn = call.in(3).as<const T>();
    T *row = call.out(1).as<T>(), *col = call.out(2).as<T>();
    double *colSums = rowMeans + batches;
    for (int64_t b = 0; b < batches; ++b) {
      std::fill(colSums, colSums + cols, 0.0);
      double rowSum = 0;
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t base = (b * rows + r) * cols;
        double sum = 0;
        for (int64_t c = 0; c < cols; ++c) {
          const double u = squared(base + c);
          sum += u;
          colSums[c] += u;
        }
        const int64_t j = b * rows + r;
        row[j] =
            beta2t * rowIn[j] +
            oneMinusBeta2t * static_cast<T>(sum / static_cast<double>(cols));
        rowSum += row[j];
      }
      rowMeans[b] = rowSum / static_cast<double>(rows);
      for (int64_t c = 0; c < cols; ++c) {
        const int64_t j = b * cols + c;
        col[j] = beta2t * colIn[j] +
                 oneMinusBeta2t *
                     static_cast<T>(colSums[c] / static_cast<double>(rows));
      }
    }
    apply([&](int64_t i) -> T {
      const int64_t c = i % cols, br = i / cols, b = br / rows;
      const T rFactor = 1 / math::sqrt(row[br] / static_cast<T>(rowMeans[b]));
      const T cFactor = 1 / math::sqrt(col[b * cols + c]);
      return grad(i) * (rFactor * cFactor);
    });
  } else {
    const T *vIn = call.in(2).as<const T>();
    T *v = call.out(1).as<T>();
    for (int64_t i = 0; i < n; ++i)
      v[i] = beta2t * vIn[i] + oneMinusBeta2t * squared(i);
    apply([&](int64_t i) -> T { return (1 / math::sqrt(v[i])) * grad(i); });
  }
}

/// The index of the skip operand and the inputs holding the old values of
/// outputs 0, 1, ... of an optimizer kernel.
struct OptimizerOperands {
  size_t skipIndex;
  std::vector<size_t> stateInputs;
};

OptimizerOperands optimizerOperands(const KernelCall &call) {
  switch (call.step.kernel) {
  case KernelKind::SgdUpdate:
    return {2, {0}};
  case KernelKind::SgdMomentumUpdate:
    return {3, {0, 2}};
  case KernelKind::AdamUpdate:
    return {5, {0, 2, 3}};
  case KernelKind::Adam8bitUpdate:
    return {7, {0, 2, 3, 4, 5}};
  case KernelKind::AdafactorUpdate:
    if (shapes::adafactorFactored(*call.in(0).shape))
      return {5, {0, 2, 3}};
    return {4, {0, 2}};
  default:
    throw Error(ErrorCode::Internal,
                runtime::concat("'", kernelName(call.step.kernel),
                                "' is not an optimizer update"));
  }
}

} // namespace

bool skipOptimizerStep(const KernelCall &call) {
  OptimizerOperands ops = optimizerOperands(call);
  if (call.inputs.size() <= ops.skipIndex)
    return false;
  const TensorRef &skip = call.in(ops.skipIndex);
  if (skip.dtype != DType::F32)
    throw Error(ErrorCode::Internal, "optimizer skip flag is not f32");
  if (!math::flagSet(*skip.as<const float>()))
    return false;
  for (size_t o = 0; o < ops.stateInputs.size(); ++o) {
    const TensorRef &from = call.in(ops.stateInputs[o]), &to = call.out(o);
    if (from.data != to.data)
      std::memmove(to.data, from.data, to.bytes());
  }
  return true;
}

void sgdUpdate(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype, [&](auto tag) {
    using T = decltype(tag);
    withGradient<T>(call, 3, [&](const auto &g) { sgdImpl<T>(call, g); });
  });
}

void sgdMomentumUpdate(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype, [&](auto tag) {
    using T = decltype(tag);
    withGradient<T>(call, 4,
                    [&](const auto &g) { sgdMomentumImpl<T>(call, g); });
  });
}

void adamUpdate(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype, [&](auto tag) {
    using T = decltype(tag);
    withGradient<T>(call, 6, [&](const auto &g) { adamImpl<T>(call, g); });
  });
}

void adam8bitUpdate(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype, [&](auto tag) {
    using T = decltype(tag);
    withGradient<T>(call, 8, [&](const auto &g) { adam8bitImpl<T>(call, g); });
  });
}

namespace {

/// The sum of the squares of every element of the inputs, in double, in
/// input and element order (clip_grad_norm_'s, and ZeRO stage 2's partial
/// sums).
double sumOfSquares(const KernelCall &call, const char *kernel) {
  double sum = 0;
  for (const TensorRef &g : call.inputs) {
    const int64_t n = g.numElements;
    auto add = [&](auto value) {
      for (int64_t i = 0; i < n; ++i) {
        const double x = value(i);
        sum += x * x;
      }
    };
    switch (g.dtype) {
    case DType::F32:
      add([p = g.as<const float>()](int64_t i) { return double(p[i]); });
      break;
    case DType::F64:
      add([p = g.as<const double>()](int64_t i) { return p[i]; });
      break;
    case DType::F16:
      add([p = g.as<const uint16_t>()](int64_t i) {
        return double(halfBitsToFloat(p[i]));
      });
      break;
    case DType::BF16:
      add([p = g.as<const uint16_t>()](int64_t i) {
        return double(bfloat16BitsToFloat(p[i]));
      });
      break;
    default:
      throw Error(ErrorCode::Internal,
                  runtime::concat(kernel, " of dtype ", dtypeName(g.dtype)));
    }
  }
  return sum;
}

} // namespace

void clipCoefficient(const KernelCall &call) {
  const ClipAttrs &attrs = call.step.get<ClipAttrs>();
  double sum = attrs.squareSum ? *call.in(0).as<const double>()
                               : sumOfSquares(call, "clip_coefficient");
  *call.out(0).as<float>() = math::clipCoefficient(sum, attrs.maxNorm);
}

void squareSum(const KernelCall &call) {
  *call.out(0).as<double>() = sumOfSquares(call, "square_sum");
}

void adafactorUpdate(const KernelCall &call) {
  const size_t scaleIndex =
      shapes::adafactorFactored(*call.in(0).shape) ? 6 : 5;
  dispatchFloat(call.out(0).dtype, [&](auto tag) {
    using T = decltype(tag);
    withGradient<T>(call, scaleIndex,
                    [&](const auto &g) { adafactorImpl<T>(call, g); });
  });
}

} // namespace memopt::runtime::cpu
