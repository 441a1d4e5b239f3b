//===- ElementwiseMath.h - scalar math shared by all backends ---*- C++ -*-===//
//
// The scalar definition of every element-wise forward op and of the
// derivatives their backward ops need, written once for the CPU and the
// CUDA backend (MEMOPT_HD). Keeping one definition means the CPU kernel tests
// check the arithmetic the GPU runs, and a gradient check on the CPU checks
// the GPU's backward formulas too.
//
// Every function is a template over the compute type, float or double; f16
// and bf16 tensors are computed in float. The formulas follow PyTorch's
// (exact erf GELU, ELU via expm1, NaN propagating through relu) and choose
// the numerically stable form where the textbook one overflows.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_ELEMENTWISEMATH_H
#define MEMOPT_RUNTIME_ELEMENTWISEMATH_H

#include "memopt/Contract/ComparePredicate.h"
#include "memopt/runtime/HostDevice.h"

#include <float.h>
#include <math.h>

namespace memopt::runtime::math {

//===----------------------------------------------------------------------===//
// libm overloads usable in host and device code
//===----------------------------------------------------------------------===//
// The C library's functions are declared `__host__ __device__` by nvcc, the
// std:: overloads are not everywhere; these pick float or double explicitly.

MEMOPT_HD inline float exp(float x) { return ::expf(x); }
MEMOPT_HD inline double exp(double x) { return ::exp(x); }
MEMOPT_HD inline float expm1(float x) { return ::expm1f(x); }
MEMOPT_HD inline double expm1(double x) { return ::expm1(x); }
MEMOPT_HD inline float log(float x) { return ::logf(x); }
MEMOPT_HD inline double log(double x) { return ::log(x); }
MEMOPT_HD inline float log1p(float x) { return ::log1pf(x); }
MEMOPT_HD inline double log1p(double x) { return ::log1p(x); }
MEMOPT_HD inline float sqrt(float x) { return ::sqrtf(x); }
MEMOPT_HD inline double sqrt(double x) { return ::sqrt(x); }
MEMOPT_HD inline float tanh(float x) { return ::tanhf(x); }
MEMOPT_HD inline double tanh(double x) { return ::tanh(x); }
MEMOPT_HD inline float erf(float x) { return ::erff(x); }
MEMOPT_HD inline double erf(double x) { return ::erf(x); }
MEMOPT_HD inline float fabs(float x) { return ::fabsf(x); }
MEMOPT_HD inline double fabs(double x) { return ::fabs(x); }

/// The machine epsilon of the compute type.
template <typename T> MEMOPT_HD constexpr T epsilonOf();
template <> MEMOPT_HD constexpr float epsilonOf<float>() { return FLT_EPSILON; }
template <> MEMOPT_HD constexpr double epsilonOf<double>() {
  return DBL_EPSILON;
}

/// 1/sqrt(2) and 1/sqrt(2*pi), the constants of the normal distribution.
template <typename T> MEMOPT_HD constexpr T kInvSqrt2() {
  return T(0.70710678118654752440084436210484903928);
}
template <typename T> MEMOPT_HD constexpr T kInvSqrt2Pi() {
  return T(0.39894228040143267793994605993438186848);
}

//===----------------------------------------------------------------------===//
// Activations and their derivatives
//===----------------------------------------------------------------------===//
// `...Grad(x)` is d(f)/dx at the input; `...GradFromOutput(y)` is the same
// derivative computed from the output y = f(x), which backward uses when the
// input was overwritten by an in-place forward op (valid for relu, sigmoid,
// tanh, and for leaky_relu/elu when alpha > 0).

/// max(x, 0); NaN propagates as in torch.relu.
template <typename T> MEMOPT_HD inline T relu(T x) {
  return x < T(0) ? T(0) : x;
}
template <typename T> MEMOPT_HD inline T reluGrad(T x) {
  return x > T(0) ? T(1) : T(0);
}
template <typename T> MEMOPT_HD inline T reluGradFromOutput(T y) {
  return y > T(0) ? T(1) : T(0);
}

/// GELU's transcendental parts: gelu takes erf(geluErfArg(x)), geluGrad
/// that and exp(geluExpArg(x)). The CPU's f32 kernels evaluate them a chunk
/// at a time (lib/cpu/VectorMath.h) and finish with geluFromParts and
/// geluGradFromParts, so the formulas stay these.
template <typename T> MEMOPT_HD inline T geluErfArg(T x) {
  return x * kInvSqrt2<T>();
}
template <typename T> MEMOPT_HD inline T geluExpArg(T x) {
  return T(-0.5) * x * x;
}
/// x * Phi(x), given erfPart = erf(geluErfArg(x)).
template <typename T> MEMOPT_HD inline T geluFromParts(T x, T erfPart) {
  return T(0.5) * x * (T(1) + erfPart);
}
/// Phi(x) + x * phi(x), given erfPart = erf(geluErfArg(x)) and expPart =
/// exp(geluExpArg(x)).
template <typename T>
MEMOPT_HD inline T geluGradFromParts(T x, T erfPart, T expPart) {
  T cdf = T(0.5) * (T(1) + erfPart);
  T pdf = kInvSqrt2Pi<T>() * expPart;
  return cdf + x * pdf;
}

/// The exact GELU, x * Phi(x) with Phi(x) = (1 + erf(x / sqrt 2)) / 2.
template <typename T> MEMOPT_HD inline T gelu(T x) {
  return geluFromParts(x, erf(geluErfArg(x)));
}
/// Phi(x) + x * phi(x), phi the standard normal density.
template <typename T> MEMOPT_HD inline T geluGrad(T x) {
  return geluGradFromParts(x, erf(geluErfArg(x)), exp(geluExpArg(x)));
}

/// The logistic function, evaluated so that exp never overflows: for x < 0
/// it uses e^x / (1 + e^x).
template <typename T> MEMOPT_HD inline T sigmoid(T x) {
  if (x >= T(0))
    return T(1) / (T(1) + exp(-x));
  T e = exp(x);
  return e / (T(1) + e);
}
template <typename T> MEMOPT_HD inline T sigmoidGradFromOutput(T y) {
  return y * (T(1) - y);
}
template <typename T> MEMOPT_HD inline T sigmoidGrad(T x) {
  return sigmoidGradFromOutput(sigmoid(x));
}

/// SiLU, x · sigmoid(x) (the same product the unfused sigmoid and mul
/// compute), and its gradient as PyTorch's silu_backward writes it:
/// grad · s · (1 + x · (1 − s)).
template <typename T> MEMOPT_HD inline T silu(T x) { return x * sigmoid(x); }
template <typename T> MEMOPT_HD inline T siluGrad(T dy, T x) {
  const T s = sigmoid(x);
  return dy * s * (T(1) + x * (T(1) - s));
}

template <typename T> MEMOPT_HD inline T tanhForward(T x) { return tanh(x); }
template <typename T> MEMOPT_HD inline T tanhGradFromOutput(T y) {
  return T(1) - y * y;
}
template <typename T> MEMOPT_HD inline T tanhGrad(T x) {
  return tanhGradFromOutput(tanh(x));
}

/// exp, log, sqrt and abs (torch.exp, torch.log, torch.sqrt, torch.abs),
/// and their gradients as PyTorch's derivatives.yaml writes them:
/// grad · y, grad / x, grad / (2 · y) and grad · sgn(x) (sgn 0 at 0, NaN
/// passed through).
template <typename T> MEMOPT_HD inline T expGradFromOutput(T dy, T y) {
  return dy * y;
}
template <typename T> MEMOPT_HD inline T logGrad(T dy, T x) { return dy / x; }
template <typename T> MEMOPT_HD inline T sqrtGradFromOutput(T dy, T y) {
  return dy / (T(2) * y);
}
template <typename T> MEMOPT_HD inline T sign(T x) {
  return x > T(0) ? T(1) : x < T(0) ? T(-1) : x == T(0) ? T(0) : x;
}
template <typename T> MEMOPT_HD inline T absGrad(T dy, T x) {
  return dy * sign(x);
}

/// x for x >= 0, alpha * x otherwise (torch.nn.LeakyReLU).
template <typename T> MEMOPT_HD inline T leakyRelu(T x, T alpha) {
  return x >= T(0) ? x : alpha * x;
}
/// PyTorch's convention: slope 1 only for x > 0.
template <typename T> MEMOPT_HD inline T leakyReluGrad(T x, T alpha) {
  return x > T(0) ? T(1) : alpha;
}
template <typename T> MEMOPT_HD inline T leakyReluGradFromOutput(T y, T alpha) {
  return y > T(0) ? T(1) : alpha;
}

/// x for x > 0, alpha * (e^x - 1) otherwise (torch.nn.ELU); expm1 keeps the
/// small-|x| values accurate.
template <typename T> MEMOPT_HD inline T elu(T x, T alpha) {
  return x > T(0) ? x : alpha * expm1(x);
}
template <typename T> MEMOPT_HD inline T eluGrad(T x, T alpha) {
  return x > T(0) ? T(1) : alpha * exp(x);
}
/// For x <= 0, y = alpha*(e^x - 1), so alpha*e^x = y + alpha.
template <typename T> MEMOPT_HD inline T eluGradFromOutput(T y, T alpha) {
  return y > T(0) ? T(1) : y + alpha;
}

/// 1 where `x predicate v` holds, else 0 (NaN compares unequal to
/// everything, as IEEE and torch.eq/ne/lt say). `x` is the element in
/// double: exact for every float and for integers below 2^53.
MEMOPT_HD inline float compare(double x, ComparePredicate p, double v) {
  bool r = false;
  switch (p) {
  case ComparePredicate::Eq:
    r = x == v;
    break;
  case ComparePredicate::Ne:
    r = x != v;
    break;
  case ComparePredicate::Lt:
    r = x < v;
    break;
  case ComparePredicate::Le:
    r = x <= v;
    break;
  case ComparePredicate::Gt:
    r = x > v;
    break;
  case ComparePredicate::Ge:
    r = x >= v;
    break;
  }
  return r ? 1.0f : 0.0f;
}

/// torch.maximum and torch.minimum: a NaN on either side is NaN.
template <typename T> MEMOPT_HD inline T maximum(T a, T b) {
  return a != a ? a : (b != b ? b : (a > b ? a : b));
}
template <typename T> MEMOPT_HD inline T minimum(T a, T b) {
  return a != a ? a : (b != b ? b : (a < b ? a : b));
}
/// d maximum(a, b) / d a: 1 where a > b, 1/2 where equal, 0 where a < b
/// (torch.maximum's rule); 1 where either is NaN.
template <typename T> MEMOPT_HD inline T maximumWeight(T a, T b) {
  return a < b ? T(0) : (a == b ? T(0.5) : T(1));
}
/// Whether `x` is the row's extremum `m` as reduce_extremum_backward counts
/// it: equal, or both NaN.
template <typename T> MEMOPT_HD inline bool isExtremum(T x, T m) {
  return x == m || (x != x && m != m);
}

/// min(max(x, lo), hi), NaN passed through (torch.clamp; F.hardtanh, and
/// F.relu6 as [0, 6]). lo <= hi; an absent bound is an infinity.
template <typename T> MEMOPT_HD inline T clamp(T x, T lo, T hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}
/// grad where lo < saved < hi, else 0: PyTorch's hardtanh_backward, the
/// backward of F.relu6 and F.hardtanh (a NaN passes the gradient, as there).
/// `saved` is the input or, where the bounds are exact in the stored type,
/// the output: clamp maps x <= lo to lo and x >= hi to hi, so the test reads
/// the same from either.
template <typename T>
MEMOPT_HD inline T clampBackward(T grad, T saved, T lo, T hi) {
  return (saved <= lo || saved >= hi) ? T(0) : grad;
}

//===----------------------------------------------------------------------===//
// Invertible activations (InPlace-ABN)
//===----------------------------------------------------------------------===//
// batch_norm_act's backward has only the activation's output y: it inverts
// the activation to get its input z, and takes the derivative from y
// (leakyReluGradFromOutput, eluGradFromOutput above). Both need alpha > 0.

/// The input of leaky_relu given its output: the sign is preserved when
/// alpha > 0, so y < 0 came from z = y / alpha.
template <typename T> MEMOPT_HD inline T leakyReluInverse(T y, T alpha) {
  return y >= T(0) ? y : y / alpha;
}

/// The input of elu given its output: z = log(1 + y / alpha) for y <= 0.
/// ELU saturates: once e^z is below the compute type's resolution, y is
/// -alpha exactly and z is lost. Such outputs (y / alpha <= -1 + epsilon)
/// map to log(epsilon), the most negative input still distinguishable, so
/// the result is always finite (about -15.9 in float, -36 in double).
template <typename T> MEMOPT_HD inline T eluInverse(T y, T alpha) {
  if (y > T(0))
    return y;
  const T lowest = T(-1) + epsilonOf<T>();
  const T ratio = y / alpha;
  return log1p(ratio > lowest ? ratio : lowest);
}

/// grad * f'(z) computed from the output, selecting rather than multiplying
/// where the derivative is 1 (as the activation backward kernels do).
template <typename T>
MEMOPT_HD inline T leakyReluBackwardFromOutput(T grad, T y, T alpha) {
  return y > T(0) ? grad : grad * leakyReluGradFromOutput(y, alpha);
}
template <typename T>
MEMOPT_HD inline T eluBackwardFromOutput(T grad, T y, T alpha) {
  return y > T(0) ? grad : grad * eluGradFromOutput(y, alpha);
}

//===----------------------------------------------------------------------===//
// Numerically stable building blocks of softmax, losses and normalisation
//===----------------------------------------------------------------------===//

/// log(1 + e^x) without overflow for large x or loss of precision for very
/// negative x.
template <typename T> MEMOPT_HD inline T softplus(T x) {
  return (x > T(0) ? x : T(0)) + log1p(exp(-fabs(x)));
}

/// A running log-sum-exp: after add(x_1) ... add(x_n), `max` is the largest
/// x_i and `sum` is sum(exp(x_i - max)), so log-sum-exp = max + log(sum).
/// Values of -inf contribute nothing; one pass, never overflows, and two
/// partial accumulators merge (for parallel reductions on the GPU).
template <typename T> struct LogSumExp {
  T max = -T(INFINITY);
  T sum = T(0);

  MEMOPT_HD void add(T x) {
    if (x == -T(INFINITY))
      return;
    if (x > max) {
      sum = sum * exp(max - x) + T(1);
      max = x;
    } else {
      sum += exp(x - max);
    }
  }
  MEMOPT_HD void merge(const LogSumExp &other) {
    if (other.sum == T(0))
      return;
    if (other.max > max) {
      sum = sum * exp(max - other.max) + other.sum;
      max = other.max;
    } else {
      sum += other.sum * exp(other.max - max);
    }
  }
  /// log(sum(exp(x_i))); -inf for an empty or all -inf sequence.
  MEMOPT_HD T value() const { return sum == T(0) ? max : max + log(sum); }
};

/// 1 / sqrt(var + epsilon), the normalisation factor of batch and layer
/// norm (the variance is the biased one).
template <typename T> MEMOPT_HD inline T inverseStd(T variance, T epsilon) {
  return T(1) / sqrt(variance + epsilon);
}

/// The running-statistics update of batch norm in training mode
/// (PyTorch's rule): (1 - momentum) * running + momentum * batch.
template <typename T>
MEMOPT_HD inline T runningUpdate(T running, T batch, T momentum) {
  return (T(1) - momentum) * running + momentum * batch;
}

} // namespace memopt::runtime::math

#endif // MEMOPT_RUNTIME_ELEMENTWISEMATH_H
