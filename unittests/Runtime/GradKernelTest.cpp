//===- GradKernelTest.cpp - activation, norm, softmax and loss gradients --===//
//
// Each backward kernel against a reference loop in double over every float
// dtype; the normalisation and loss gradients also against central
// differences of their forward definitions (so the reference formula is
// checked too); and every kernel that may run in place, in place, with the
// same result bits as out of place.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <functional>

using namespace memopt::runtime;
using namespace memopt::runtime::test;

namespace {

constexpr DType kFloatTypes[] = {DType::F32, DType::F64, DType::F16,
                                 DType::BF16};

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

double phi(double x) { return std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI); }
double Phi(double x) { return 0.5 * (1 + std::erf(x / std::sqrt(2.0))); }

/// Runs `<fwd>_backward(grad, saved)` with saved = `makeSaved(x)` and checks
/// it against grad * `derivative(saved)`.
void checkActivationBackward(const std::string &kernel, const json &attrs,
                             const std::function<double(double)> &makeSaved,
                             const std::function<double(double)> &derivative) {
  for (DType dtype : kFloatTypes) {
    HostTensor x = randomTensor(dtype, {3, 5, 4}, 11, -4, 4);
    x.values[0] = 0;
    x.values[1] = roundTo(dtype, -1e-3);
    x.values[2] = roundTo(dtype, 30);
    x.values[3] = roundTo(dtype, -30);
    HostTensor saved = x;
    for (double &v : saved.values)
      v = roundTo(dtype, makeSaved(v));
    HostTensor grad = randomTensor(dtype, x.shape, 12, -2, 2);
    std::vector<double> want;
    for (size_t i = 0; i < x.values.size(); ++i)
      want.push_back(
          roundTo(dtype, grad.values[i] * derivative(saved.values[i])));
    auto got = runOp1(kernel, attrs, {grad, saved}, {dtype, x.shape});
    Tolerance tol = toleranceFor(dtype);
    EXPECT_TRUE(close(got, want, tol.atol, tol.rtol))
        << kernel << " " << dtypeName(dtype);
    // In place over the gradient and over the saved tensor.
    for (size_t over : {0, 1}) {
      auto inPlace = runOpInPlace(kernel, attrs, {grad, saved},
                                  {{dtype, x.shape}}, {{0, over}});
      EXPECT_EQ(inPlace[0], got) << kernel << " in place over input " << over;
    }
  }
}

double identity(double x) { return x; }

TEST(ActivationBackwardTest, Relu) {
  checkActivationBackward(
      "relu_backward", json::object(), [](double x) { return x > 0 ? x : 0; },
      [](double y) { return y > 0 ? 1 : 0; });
}
TEST(ActivationBackwardTest, ReluSelectsRatherThanMultiplies) {
  // A NaN or infinite gradient where y = 0 gives 0, as in PyTorch.
  HostTensor g{DType::F32, {3}, {NAN, INFINITY, 2}};
  HostTensor y{DType::F32, {3}, {0, 0, 1}};
  auto got = runOp1("relu_backward", json::object(), {g, y}, {DType::F32, {3}});
  EXPECT_EQ(got, (std::vector<double>{0, 0, 2}));
}
TEST(ActivationBackwardTest, GeluExactErf) {
  checkActivationBackward("gelu_backward", json::object(), identity,
                          [](double x) { return Phi(x) + x * phi(x); });
}
TEST(ActivationBackwardTest, SigmoidFromOutput) {
  checkActivationBackward(
      "sigmoid_backward", json::object(),
      [](double x) { return 1 / (1 + std::exp(-x)); },
      [](double y) { return y * (1 - y); });
}
TEST(ActivationBackwardTest, TanhFromOutput) {
  checkActivationBackward(
      "tanh_backward", json::object(), [](double x) { return std::tanh(x); },
      [](double y) { return 1 - y * y; });
}
TEST(ActivationBackwardTest, SiluFromInput) {
  checkActivationBackward("silu_backward", json::object(), identity,
                          [](double x) {
                            const double s = 1 / (1 + std::exp(-x));
                            return s * (1 + x * (1 - s));
                          });
}
// exp, log, sqrt and abs as PyTorch's derivatives: grad·y, grad/x,
// grad/(2y), grad·sgn(x); saved values kept finite and, for log and sqrt,
// away from 0.
TEST(ActivationBackwardTest, ExpLogSqrtAbs) {
  checkActivationBackward(
      "exp_backward", json::object(), [](double x) { return std::exp(x / 8); },
      identity);
  checkActivationBackward(
      "log_backward", json::object(),
      [](double x) { return std::fabs(x) + 0.5; },
      [](double x) { return 1 / x; });
  checkActivationBackward(
      "sqrt_backward", json::object(),
      [](double x) { return std::sqrt(std::fabs(x) + 0.5); },
      [](double y) { return 1 / (2 * y); });
  checkActivationBackward("abs_backward", json::object(), identity,
                          [](double x) { return x > 0   ? 1
                                                : x < 0 ? -1
                                                        : 0; });
}
TEST(ActivationBackwardTest, AbsGradientIsZeroAtZeroAndPassesNaN) {
  HostTensor g{DType::F32, {4}, {2, 2, 2, 2}};
  HostTensor x{DType::F32, {4}, {0, -0.0, -3, NAN}};
  auto got = runOp1("abs_backward", json::object(), {g, x}, {DType::F32, {4}});
  EXPECT_EQ(got[0], 0);
  EXPECT_EQ(got[1], 0);
  EXPECT_EQ(got[2], -2);
  EXPECT_TRUE(std::isnan(got[3]));
}
TEST(ActivationBackwardTest, LeakyReluFromInputAndOutput) {
  for (double alpha : {0.2, 0.01}) {
    json attrs = alpha == 0.01 ? json::object() : json{{"alpha", alpha}};
    auto slope = [alpha](double s) { return s > 0 ? 1 : alpha; };
    checkActivationBackward("leaky_relu_backward", attrs, identity, slope);
    json fromOutput = attrs;
    fromOutput["from_output"] = true;
    checkActivationBackward(
        "leaky_relu_backward", fromOutput,
        [alpha](double x) { return x >= 0 ? x : alpha * x; }, slope);
  }
}
// hardtanh_backward's test: the gradient where min < saved < max, 0 at and
// beyond a bound; the same from the input and from the clamped output.
TEST(ActivationBackwardTest, ClampFromInputAndOutputZeroAtTheBounds) {
  auto inside = [](double s) { return s > 0 && s < 6 ? 1 : 0; };
  json attrs = {{"min", 0.0}, {"max", 6.0}};
  checkActivationBackward("clamp_backward", attrs, identity, inside);
  checkActivationBackward(
      "clamp_backward", attrs,
      [](double x) { return x < 0   ? 0
                            : x > 6 ? 6
                                    : x; }, inside);
  checkActivationBackward("clamp_backward", {{"max", 1.0}}, identity,
                          [](double s) { return s < 1 ? 1 : 0; });
  HostTensor g{DType::F32, {4}, {1, 2, 3, 4}};
  HostTensor s{DType::F32, {4}, {0, 6, NAN, 3}};
  EXPECT_EQ(runOp1("clamp_backward", attrs, {g, s}, {DType::F32, {4}}),
            (std::vector<double>{0, 0, 3, 4}));
}
TEST(ActivationBackwardTest, EluFromInputAndOutput) {
  for (double alpha : {1.0, 0.5}) {
    json attrs = {{"alpha", alpha}, {"from_output", false}};
    checkActivationBackward("elu_backward", attrs, identity, [alpha](double x) {
      return x > 0 ? 1 : alpha * std::exp(x);
    });
    attrs["from_output"] = true;
    checkActivationBackward(
        "elu_backward", attrs,
        [alpha](double x) { return x > 0 ? x : alpha * std::expm1(x); },
        [alpha](double y) { return y > 0 ? 1 : y + alpha; });
  }
  // Defaults: alpha 1, from the input.
  checkActivationBackward("elu_backward", json::object(), identity,
                          [](double x) { return x > 0 ? 1 : std::exp(x); });
}

//===----------------------------------------------------------------------===//
// Batch, layer and RMS normalisation
//===----------------------------------------------------------------------===//

/// The forward ops in double: batch norm over every dimension but 1
/// (`batch`), or layer norm over the trailing `width` elements, or (`rms`)
/// RMS norm over them (no mean, `beta` unused).
std::vector<double> normForward(const std::vector<double> &x, const Shape &xs,
                                const std::vector<double> &gamma,
                                const std::vector<double> &beta, bool batch,
                                double eps, bool rms = false) {
  int64_t groups, n, inner, stride;
  if (batch) {
    groups = xs[1];
    n = xs[0];
    inner = count(xs) / (xs[0] * xs[1]);
    stride = groups * inner;
  } else {
    groups = count(xs) / static_cast<int64_t>(gamma.size());
    n = 1;
    inner = static_cast<int64_t>(gamma.size());
    stride = 0;
  }
  // Element j of group g: image i, position k.
  auto index = [&](int64_t g, int64_t i, int64_t k) {
    return batch ? i * stride + g * inner + k : g * inner + k;
  };
  std::vector<double> y(x.size());
  for (int64_t g = 0; g < groups; ++g) {
    double sum = 0, sq = 0, m = double(n * inner);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < inner; ++k)
        sum += x[index(g, i, k)];
    double mean = rms ? 0.0 : sum / m;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < inner; ++k)
        sq += std::pow(x[index(g, i, k)] - mean, 2);
    double inv = 1 / std::sqrt(sq / m + eps);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < inner; ++k) {
        int64_t e = index(g, i, k);
        int64_t p = batch ? g : k;
        y[e] = (x[e] - mean) * inv * gamma[p] + (rms ? 0.0 : beta[p]);
      }
  }
  return y;
}

/// The gradients of L = <normForward(x, gamma, beta), dy> by central
/// differences: the reference independent of the kernel's formula.
std::vector<std::vector<double>>
numericNormGrads(const HostTensor &dy, const HostTensor &x,
                 const HostTensor &gamma, bool batch, double eps, bool rms) {
  std::vector<double> beta(gamma.values.size(), 0.3);
  auto loss = [&](const std::vector<double> &xv, const std::vector<double> &gv,
                  const std::vector<double> &bv) {
    auto y = normForward(xv, x.shape, gv, bv, batch, eps, rms);
    double s = 0;
    for (size_t i = 0; i < y.size(); ++i)
      s += y[i] * dy.values[i];
    return s;
  };
  const double h = 1e-5;
  auto grad = [&](std::vector<double> v, int which) {
    std::vector<double> out(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      double keep = v[i];
      double f[2];
      for (int sgn = 0; sgn < 2; ++sgn) {
        v[i] = keep + (sgn ? -h : h);
        f[sgn] = which == 0   ? loss(v, gamma.values, beta)
                 : which == 1 ? loss(x.values, v, beta)
                              : loss(x.values, gamma.values, v);
      }
      v[i] = keep;
      out[i] = (f[0] - f[1]) / (2 * h);
    }
    return out;
  };
  return {grad(x.values, 0), grad(gamma.values, 1), grad(beta, 2)};
}

void checkNormBackward(const std::string &kernel, Shape xShape,
                       Shape gammaShape, DType xType, DType gType, double eps,
                       double atol) {
  SCOPED_TRACE(::testing::Message()
               << kernel << " " << formatShape(xShape) << " "
               << dtypeName(xType) << "/" << dtypeName(gType));
  bool batch = kernel == "batch_norm_backward";
  bool rms = kernel == "rms_norm_backward";
  HostTensor x = randomTensor(xType, xShape, 41, -2, 3);
  HostTensor dy = randomTensor(xType, xShape, 42, -1, 1);
  HostTensor gamma = randomTensor(gType, gammaShape, 43, 0.5, 1.5);
  auto want = numericNormGrads(dy, x, gamma, batch, eps, rms);
  // rms_norm_backward has no grad_beta.
  std::vector<OutputSpec> outs = {
      {xType, xShape}, {gType, gammaShape}, {gType, gammaShape}};
  if (rms)
    outs.pop_back();
  auto got = runOp(kernel, {{"epsilon", eps}}, {dy, x, gamma}, outs);
  // dgamma and dbeta sum over many elements.
  double rtol = std::max(toleranceFor(xType).rtol, 1e-6);
  EXPECT_TRUE(close(got[0], want[0], atol, rtol)) << "grad_x";
  EXPECT_TRUE(close(got[1], want[1], 8 * atol, rtol)) << "grad_gamma";
  if (!rms) {
    EXPECT_TRUE(close(got[2], want[2], 8 * atol, rtol)) << "grad_beta";
  }
  // In place over grad_output and over x.
  for (size_t over : {0, 1}) {
    auto inPlace = runOpInPlace(kernel, {{"epsilon", eps}}, {dy, x, gamma},
                                outs, {{0, over}});
    EXPECT_EQ(inPlace, got) << "in place over input " << over;
  }
}

TEST(NormBackwardTest, BatchNormAgainstCentralDifferences) {
  checkNormBackward("batch_norm_backward", {3, 4, 2, 3}, {4}, DType::F64,
                    DType::F64, 1e-3, 1e-7);
  checkNormBackward("batch_norm_backward", {5, 3}, {3}, DType::F64, DType::F64,
                    1e-5, 1e-7);
  checkNormBackward("batch_norm_backward", {2, 3, 5}, {3}, DType::F32,
                    DType::F32, 1e-5, 2e-5);
}
TEST(NormBackwardTest, BatchNormOneValuePerChannel) {
  // Biased variance 0: the gradient of x is 0, that of gamma is 0.
  HostTensor dy{DType::F64, {1, 2}, {0.5, -2}};
  HostTensor x{DType::F64, {1, 2}, {3, 4}};
  HostTensor gamma{DType::F64, {2}, {2, 3}};
  auto got =
      runOp("batch_norm_backward", json::object(), {dy, x, gamma},
            {{DType::F64, {1, 2}}, {DType::F64, {2}}, {DType::F64, {2}}});
  EXPECT_EQ(got[0], (std::vector<double>{0, 0}));
  EXPECT_EQ(got[1], (std::vector<double>{0, 0}));
  EXPECT_EQ(got[2], (std::vector<double>{0.5, -2}));
}
TEST(NormBackwardTest, BatchNormHalfActivationsWithF32Gamma) {
  checkNormBackward("batch_norm_backward", {4, 3, 2, 2}, {3}, DType::F16,
                    DType::F32, 1e-5, 2e-2);
  checkNormBackward("batch_norm_backward", {4, 3, 2, 2}, {3}, DType::BF16,
                    DType::F32, 1e-5, 1e-1);
}
TEST(NormBackwardTest, LayerNormAgainstCentralDifferences) {
  checkNormBackward("layer_norm_backward", {3, 4, 6}, {6}, DType::F64,
                    DType::F64, 1e-5, 1e-7);
  checkNormBackward("layer_norm_backward", {2, 3, 4}, {3, 4}, DType::F64,
                    DType::F64, 1e-2, 1e-7);
  checkNormBackward("layer_norm_backward", {4, 7}, {7}, DType::F32, DType::F32,
                    1e-5, 2e-5);
  checkNormBackward("layer_norm_backward", {4, 8}, {8}, DType::F16, DType::F32,
                    1e-5, 2e-2);
}
TEST(NormBackwardTest, RmsNormAgainstCentralDifferences) {
  checkNormBackward("rms_norm_backward", {3, 4, 6}, {6}, DType::F64, DType::F64,
                    1e-6, 1e-7);
  checkNormBackward("rms_norm_backward", {2, 3, 4}, {3, 4}, DType::F64,
                    DType::F64, 1e-2, 1e-7);
  checkNormBackward("rms_norm_backward", {4, 7}, {7}, DType::F32, DType::F32,
                    1e-6, 2e-5);
  checkNormBackward("rms_norm_backward", {4, 8}, {8}, DType::F16, DType::F32,
                    1e-6, 2e-2);
}

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

std::vector<double> referenceSoftmaxBackward(const HostTensor &g,
                                             const HostTensor &y,
                                             int64_t axis) {
  const Shape &s = g.shape;
  int64_t outer = 1, inner = 1, len = s[axis];
  for (int64_t d = 0; d < axis; ++d)
    outer *= s[d];
  for (size_t d = axis + 1; d < s.size(); ++d)
    inner *= s[d];
  std::vector<double> dx(g.values.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double dot = 0;
      for (int64_t j = 0; j < len; ++j) {
        int64_t k = (o * len + j) * inner + i;
        dot += g.values[k] * y.values[k];
      }
      for (int64_t j = 0; j < len; ++j) {
        int64_t k = (o * len + j) * inner + i;
        dx[k] = y.values[k] * (g.values[k] - dot);
      }
    }
  return dx;
}

void checkSoftmaxBackward(Shape shape, int64_t axis, bool causal, DType dtype) {
  SCOPED_TRACE(::testing::Message() << formatShape(shape) << " axis " << axis
                                    << " " << dtypeName(dtype));
  int64_t rank = shape.size();
  HostTensor x = randomTensor(dtype, shape, 51, -3, 3);
  // y from the runtime's forward softmax, as a training step would have it.
  HostTensor y{dtype, shape,
               runOp1("softmax", {{"axis", axis}, {"causal", causal}}, {x},
                      {dtype, shape})};
  HostTensor g = randomTensor(dtype, shape, 52, -1, 1);
  auto want = referenceSoftmaxBackward(g, y, axis < 0 ? axis + rank : axis);
  for (double &v : want)
    v = roundTo(dtype, v);
  json attrs = axis == -1 ? json::object() : json{{"axis", axis}};
  auto got = runOp1("softmax_backward", attrs, {g, y}, {dtype, shape});
  Tolerance tol = toleranceFor(dtype);
  EXPECT_TRUE(close(got, want, tol.atol, tol.rtol));
  if (causal) {
    // Masked entries (column > row) get exactly 0.
    int64_t t = shape[rank - 1];
    for (size_t k = 0; k < got.size(); ++k) {
      if (int64_t(k) % t > (int64_t(k) / t) % t) {
        EXPECT_EQ(got[k], 0.0) << k;
      }
    }
  }
  for (size_t over : {0, 1})
    EXPECT_EQ(runOpInPlace("softmax_backward", attrs, {g, y}, {{dtype, shape}},
                           {{0, over}})[0],
              got)
        << "in place over input " << over;
}

TEST(SoftmaxBackwardTest, AlongEveryKindOfAxis) {
  checkSoftmaxBackward({4, 7}, -1, false, DType::F32);
  checkSoftmaxBackward({2, 5, 3}, 1, false, DType::F32);
  checkSoftmaxBackward({3, 2, 4}, 0, false, DType::F64);
  checkSoftmaxBackward({2, 6}, -2, false, DType::F16);
  checkSoftmaxBackward({3, 9}, -1, false, DType::BF16);
}
TEST(SoftmaxBackwardTest, CausalOutput) {
  checkSoftmaxBackward({2, 3, 5, 5}, -1, true, DType::F32);
  checkSoftmaxBackward({4, 4}, 1, true, DType::F64);
}
TEST(SoftmaxBackwardTest, GradientRowsSumToZero) {
  HostTensor x = randomTensor(DType::F64, {3, 8}, 53, -2, 2);
  HostTensor y{DType::F64, x.shape,
               runOp1("softmax", json::object(), {x}, {DType::F64, x.shape})};
  HostTensor g = randomTensor(DType::F64, x.shape, 54);
  auto dx =
      runOp1("softmax_backward", {{"axis", 1}}, {g, y}, {DType::F64, x.shape});
  for (int r = 0; r < 3; ++r) {
    double s = 0;
    for (int j = 0; j < 8; ++j)
      s += dx[r * 8 + j];
    EXPECT_NEAR(s, 0, 1e-15);
  }
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

TEST(LossBackwardTest, CrossEntropyAgainstCentralDifferences) {
  const int64_t n = 5, c = 4;
  HostTensor logits = randomTensor(DType::F64, {n, c}, 61, -3, 3);
  logits.values[0] = 800; // Large logits: no overflow.
  HostTensor labels{DType::I64, {n}, {0, 3, 1, 1, 2}};
  HostTensor gl{DType::F64, {}, {0.75}};
  auto got = runOp1("cross_entropy_backward", json::object(),
                    {gl, logits, labels}, {DType::F64, {n, c}});
  auto loss = [&](const std::vector<double> &z) {
    double total = 0;
    for (int64_t r = 0; r < n; ++r) {
      double max = -INFINITY, sum = 0;
      for (int64_t j = 0; j < c; ++j)
        max = std::max(max, z[r * c + j]);
      for (int64_t j = 0; j < c; ++j)
        sum += std::exp(z[r * c + j] - max);
      total += max + std::log(sum) - z[r * c + int64_t(labels.values[r])];
    }
    return 0.75 * total / n;
  };
  std::vector<double> want(n * c), z = logits.values;
  for (int64_t i = 0; i < n * c; ++i) {
    double keep = z[i], h = 1e-5;
    z[i] = keep + h;
    double up = loss(z);
    z[i] = keep - h;
    want[i] = (up - loss(z)) / (2 * h);
    z[i] = keep;
  }
  EXPECT_TRUE(close(got, want, 1e-7, 1e-6));
  // Rows sum to zero; the first row's label column is 0.75 * (1 - 1) / 5.
  EXPECT_NEAR(got[0], 0, 1e-15);
}

TEST(LossBackwardTest, CrossEntropyEveryDtypeAndInPlace) {
  for (DType dtype : kFloatTypes) {
    HostTensor logits = randomTensor(dtype, {6, 5}, 62, -4, 4);
    HostTensor labels{DType::I32, {6}, {4, 0, 0, 2, 1, 3}};
    HostTensor gl{dtype, {}, {roundTo(dtype, 1.5)}};
    std::vector<double> want;
    for (int r = 0; r < 6; ++r) {
      double max = -INFINITY, sum = 0;
      for (int j = 0; j < 5; ++j)
        max = std::max(max, logits.values[r * 5 + j]);
      for (int j = 0; j < 5; ++j)
        sum += std::exp(logits.values[r * 5 + j] - max);
      for (int j = 0; j < 5; ++j)
        want.push_back(
            roundTo(dtype, gl.values[0] *
                               (std::exp(logits.values[r * 5 + j] - max) / sum -
                                (j == labels.values[r] ? 1 : 0)) /
                               6));
    }
    auto got = runOp1("cross_entropy_backward", json::object(),
                      {gl, logits, labels}, {dtype, {6, 5}});
    Tolerance tol = toleranceFor(dtype);
    EXPECT_TRUE(close(got, want, tol.atol, tol.rtol)) << dtypeName(dtype);
    EXPECT_EQ(runOpInPlace("cross_entropy_backward", json::object(),
                           {gl, logits, labels}, {{dtype, {6, 5}}},
                           {{0, 1}})[0],
              got)
        << dtypeName(dtype);
  }
}

TEST(LossBackwardTest, CrossEntropyLabelOutOfRangeNamesTheStep) {
  HostTensor logits = randomTensor(DType::F32, {3, 4}, 63);
  HostTensor gl{DType::F32, {}, {1}};
  for (double bad : {4.0, -1.0}) {
    HostTensor labels{DType::I64, {3}, {0, 1, bad}};
    std::string message = errorOf([&] {
      runOp1("cross_entropy_backward", json::object(), {gl, logits, labels},
             {DType::F32, {3, 4}});
    });
    EXPECT_NE(
        message.find("steps[0] (cross_entropy_backward at test.mlir:1:1)"),
        std::string::npos)
        << message;
    EXPECT_NE(message.find("of row 2 is outside [0, 4)"), std::string::npos)
        << message;
  }
}

TEST(LossBackwardTest, MseEveryDtypeAndInPlace) {
  for (DType dtype : kFloatTypes) {
    HostTensor p = randomTensor(dtype, {3, 4, 2}, 64, -2, 2);
    HostTensor t = randomTensor(dtype, {3, 4, 2}, 65, -2, 2);
    HostTensor gl{dtype, {}, {roundTo(dtype, -0.5)}};
    std::vector<double> want;
    for (size_t i = 0; i < p.values.size(); ++i)
      want.push_back(
          roundTo(dtype, gl.values[0] * 2 * (p.values[i] - t.values[i]) / 24));
    auto got = runOp1("mse_loss_backward", json::object(), {gl, p, t},
                      {dtype, p.shape});
    Tolerance tol = toleranceFor(dtype);
    EXPECT_TRUE(close(got, want, tol.atol, tol.rtol)) << dtypeName(dtype);
    for (size_t over : {1, 2})
      EXPECT_EQ(runOpInPlace("mse_loss_backward", json::object(), {gl, p, t},
                             {{dtype, p.shape}}, {{0, over}})[0],
                got)
          << dtypeName(dtype) << " over input " << over;
  }
}

TEST(LossBackwardTest, GradLossOfAnotherDtype) {
  // An f32 seed gradient for f16 predictions computes in f32.
  HostTensor p{DType::F16, {2}, {1, 3}};
  HostTensor t{DType::F16, {2}, {0, 0}};
  HostTensor gl{DType::F32, {}, {1}};
  auto got = runOp1("mse_loss_backward", json::object(), {gl, p, t},
                    {DType::F16, {2}});
  EXPECT_EQ(got, (std::vector<double>{1, 3}));
}

} // namespace
