//===- ElementwiseKernelTest.cpp - activations, binary ops, dropout -------===//
//
// Activations against libm formulas in double for every float dtype,
// add/sub/mul/div over awkward broadcasts (scalars, size-1 dims, rank
// mismatch), by zero and in place, and dropout against the documented mask
// function.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "memopt/runtime/Dropout.h"

#include <cmath>
#include <functional>

using namespace memopt::runtime;
using namespace memopt::runtime::test;

namespace {

HostTensor activationInputs(DType dtype) {
  HostTensor x = randomTensor(dtype, {3, 4, 5}, 99, -6, 6);
  // Extremes where naive formulas overflow.
  x.values[0] = roundTo(dtype, -100);
  x.values[1] = roundTo(dtype, 100);
  x.values[2] = 0;
  x.values[3] = roundTo(dtype, -1e-3);
  return x;
}

void checkUnary(const std::string &kernel, const json &attrs,
                const std::function<double(double)> &f) {
  for (DType dtype : {DType::F32, DType::F64, DType::F16, DType::BF16}) {
    HostTensor x = activationInputs(dtype);
    std::vector<double> want;
    for (double v : x.values)
      want.push_back(roundTo(dtype, f(v)));
    std::vector<double> got = runOp1(kernel, attrs, {x}, {dtype, x.shape});
    Tolerance tol = toleranceFor(dtype);
    EXPECT_TRUE(close(got, want, tol.atol, tol.rtol))
        << kernel << " " << dtypeName(dtype);
  }
}

TEST(ActivationKernelTest, Relu) {
  checkUnary("relu", json::object(), [](double x) { return x > 0 ? x : 0; });
}
TEST(ActivationKernelTest, Gelu) {
  checkUnary("gelu", json::object(), [](double x) {
    return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  });
}
TEST(ActivationKernelTest, Sigmoid) {
  checkUnary("sigmoid", json::object(),
             [](double x) { return 1 / (1 + std::exp(-x)); });
}
TEST(ActivationKernelTest, Silu) {
  checkUnary("silu", json::object(),
             [](double x) { return x / (1 + std::exp(-x)); });
}
TEST(ActivationKernelTest, Tanh) {
  checkUnary("tanh", json::object(), [](double x) { return std::tanh(x); });
}
// exp, log, sqrt and abs against <cmath> over [-3, 3] (log and sqrt NaN
// below 0, as torch's), with their edges at 0.
TEST(ActivationKernelTest, ExpLogSqrtAbs) {
  const std::pair<const char *, double (*)(double)> ops[] = {
      {"exp", [](double x) { return std::exp(x); }},
      {"log", [](double x) { return std::log(x); }},
      {"sqrt", [](double x) { return std::sqrt(x); }},
      {"abs", [](double x) { return std::fabs(x); }}};
  for (auto [kernel, f] : ops)
    for (DType dtype : {DType::F32, DType::F64, DType::F16, DType::BF16}) {
      HostTensor x = randomTensor(dtype, {3, 4, 5}, 98, -3, 3);
      std::vector<double> want;
      for (double v : x.values)
        want.push_back(roundTo(dtype, f(v)));
      std::vector<double> got =
          runOp1(kernel, json::object(), {x}, {dtype, x.shape});
      Tolerance tol = toleranceFor(dtype);
      EXPECT_TRUE(close(got, want, tol.atol, tol.rtol))
          << kernel << " " << dtypeName(dtype);
    }
  HostTensor edges{DType::F32, {3}, {0, -0.0, -1}};
  EXPECT_EQ(runOp1("sqrt", json::object(), {edges}, {DType::F32, {3}})[1], 0);
  EXPECT_TRUE(
      std::isinf(runOp1("log", json::object(), {edges}, {DType::F32, {3}})[0]));
  EXPECT_TRUE(std::signbit(
      -runOp1("abs", json::object(), {edges}, {DType::F32, {3}})[1]));
}
TEST(ActivationKernelTest, LeakyReluWithAlphaAndDefault) {
  checkUnary("leaky_relu", {{"alpha", 0.2}},
             [](double x) { return x >= 0 ? x : 0.2 * x; });
  checkUnary("leaky_relu", json::object(),
             [](double x) { return x >= 0 ? x : 0.01 * x; });
}
TEST(ActivationKernelTest, ClampBothBoundsAndEither) {
  checkUnary("clamp", {{"min", 0.0}, {"max", 6.0}}, [](double x) {
    return x < 0 ? 0 : x > 6 ? 6 : x;
  });
  checkUnary("clamp", {{"min", -0.5}},
             [](double x) { return x < -0.5 ? -0.5 : x; });
  checkUnary("clamp", {{"max", 0.25}},
             [](double x) { return x > 0.25 ? 0.25 : x; });
  checkUnary("clamp", json::object(), [](double x) { return x; });
}
TEST(ActivationKernelTest, ClampPassesNaNAndRefusesCrossedBounds) {
  HostTensor x{DType::F32, {3}, {NAN, -1, 7}};
  auto got =
      runOp1("clamp", {{"min", 0.0}, {"max", 6.0}}, {x}, {DType::F32, {3}});
  EXPECT_TRUE(std::isnan(got[0]));
  EXPECT_EQ(got[1], 0);
  EXPECT_EQ(got[2], 6);
  std::string message = errorOf([&] {
    runOp1("clamp", {{"min", 1.0}, {"max", 0.0}}, {x}, {DType::F32, {3}});
  });
  EXPECT_NE(message.find("expected 'min' <= 'max', got min = 1 and max = 0"),
            std::string::npos)
      << message;
}
TEST(CompareKernelTest, EveryPredicateOnIdsAndFloats) {
  // Integer ids (i64 and i32) compared exactly, into f32 0/1.
  for (DType dtype : {DType::I64, DType::I32}) {
    HostTensor ids{dtype, {5}, {0, 3, 7, 0, 2}};
    auto ne = runOp1("compare", {{"predicate", "ne"}, {"value", 0.0}}, {ids},
                     {DType::F32, {5}});
    EXPECT_EQ(ne, (std::vector<double>{0, 1, 1, 0, 1}));
    auto lt = runOp1("compare", {{"predicate", "lt"}, {"value", 3.0}}, {ids},
                     {DType::F32, {5}});
    EXPECT_EQ(lt, (std::vector<double>{1, 0, 0, 1, 1}));
  }
  // A NaN is unequal to everything; each predicate at, below and above.
  HostTensor x{DType::F16, {4}, {NAN, 0.5, 1.0, 1.5}};
  const std::pair<const char *, std::vector<double>> cases[] = {
      {"eq", {0, 0, 1, 0}}, {"ne", {1, 1, 0, 1}}, {"lt", {0, 1, 0, 0}},
      {"le", {0, 1, 1, 0}}, {"gt", {0, 0, 0, 1}}, {"ge", {0, 0, 1, 1}}};
  for (const auto &[predicate, want] : cases)
    EXPECT_EQ(runOp1("compare", {{"predicate", predicate}, {"value", 1.0}}, {x},
                     {DType::F32, {4}}),
              want)
        << predicate;
  std::string message = errorOf([&] {
    runOp1("compare", {{"predicate", "neq"}, {"value", 1.0}}, {x},
           {DType::F32, {4}});
  });
  EXPECT_NE(message.find("expected 'predicate' one of eq, ne, lt, le, gt, ge, "
                         "got 'neq'"),
            std::string::npos)
      << message;
}
// maximum/minimum propagate NaN and broadcast; maximum_weight gives ties
// half (torch.maximum's gradient rule).
TEST(ExtremumKernelTest, MaximumMinimumAndTheirWeight) {
  for (DType dtype : {DType::F32, DType::F64, DType::F16}) {
    HostTensor a{dtype, {2, 3}, {1, 2, NAN, -1, 5, 0}};
    HostTensor b{dtype, {3}, {2, 2, 0}};
    auto mx = runOp1("maximum", {}, {a, b}, {dtype, {2, 3}});
    auto mn = runOp1("minimum", {}, {a, b}, {dtype, {2, 3}});
    auto w = runOp1("maximum_weight", {}, {a, b}, {dtype, {2, 3}});
    EXPECT_EQ(mx[0], 2);
    EXPECT_EQ(mx[1], 2);
    EXPECT_TRUE(std::isnan(mx[2]));
    EXPECT_EQ(mx[3], 2);
    EXPECT_EQ(mx[4], 5);
    EXPECT_EQ(mx[5], 0);
    EXPECT_EQ(mn[0], 1);
    EXPECT_TRUE(std::isnan(mn[2]));
    EXPECT_EQ(mn[4], 2);
    EXPECT_EQ(w, (std::vector<double>{0, 0.5, 1, 0, 1, 0.5}));
  }
}

// reduce_max/min over the last axis; the backward splits a row's gradient
// evenly over its ties (torch.amax's rule), a NaN row's over its NaNs.
TEST(ExtremumKernelTest, ReduceAndTiesSplitEvenly) {
  HostTensor x{DType::F32, {3, 4}, {1, 3, 3, 0, -2, -2, -2, 5, 1, NAN, 2, NAN}};
  auto mx = runOp1("reduce_max", {}, {x}, {DType::F32, {3, 1}});
  auto mn = runOp1("reduce_min", {}, {x}, {DType::F32, {3, 1}});
  EXPECT_EQ(mx[0], 3);
  EXPECT_EQ(mx[1], 5);
  EXPECT_TRUE(std::isnan(mx[2]));
  EXPECT_EQ(mn[0], 0);
  EXPECT_EQ(mn[1], -2);
  HostTensor g{DType::F32, {3, 1}, {1, 3, 4}};
  HostTensor m{DType::F32, {3, 1}, {3, -2, NAN}};
  auto dx =
      runOp1("reduce_extremum_backward", {}, {g, x, m}, {DType::F32, {3, 4}});
  EXPECT_EQ(dx, (std::vector<double>{0, 0.5, 0.5, 0, 1, 1, 1, 0, 0, 2, 0, 2}));
  std::string message = errorOf([&] {
    runOp1("reduce_extremum_backward", {}, {g, x, x}, {DType::F32, {3, 4}});
  });
  EXPECT_NE(message.find("expected grad and extremum of shape 3x1 (x's 3x4 "
                         "reduced), got 3x1 and 3x4"),
            std::string::npos)
      << message;
}

// A null float attribute (what a JSON writer makes of NaN) is an error, not
// the default: the user's value must never be silently replaced.
TEST(ActivationKernelTest, NullAlphaIsAnErrorNotTheDefault) {
  HostTensor x = activationInputs(DType::F32);
  for (const char *kernel : {"leaky_relu", "elu"}) {
    std::string message = errorOf([&] {
      runOp1(kernel, {{"alpha", nullptr}}, {x}, {DType::F32, x.shape});
    });
    EXPECT_NE(message.find("attribute 'alpha' is null, not a number"),
              std::string::npos)
        << kernel << ": " << message;
  }
}
TEST(ActivationKernelTest, EluWithAlphaAndDefault) {
  checkUnary("elu", {{"alpha", 0.7}},
             [](double x) { return x > 0 ? x : 0.7 * std::expm1(x); });
  checkUnary("elu", json::object(),
             [](double x) { return x > 0 ? x : std::expm1(x); });
}

struct BinaryKernel {
  const char *name;
  double (*f)(double, double);
};

const BinaryKernel kBinaryKernels[] = {
    {"add", [](double u, double v) { return u + v; }},
    {"sub", [](double u, double v) { return u - v; }},
    {"mul", [](double u, double v) { return u * v; }},
    {"div", [](double u, double v) { return u / v; }},
};

std::vector<double> referenceBroadcast(const HostTensor &a, const HostTensor &b,
                                       double (*f)(double, double),
                                       Shape &out) {
  out = *broadcastShapes(a.shape, b.shape);
  size_t rank = out.size();
  std::vector<double> y(count(out));
  for (int64_t i = 0; i < count(out); ++i) {
    Shape idx(rank);
    int64_t rem = i;
    for (size_t d = rank; d-- > 0;) {
      idx[d] = rem % out[d];
      rem /= out[d];
    }
    auto at = [&](const HostTensor &t) {
      int64_t off = 0;
      for (size_t j = 0; j < t.shape.size(); ++j) {
        size_t d = rank - t.shape.size() + j;
        off = off * t.shape[j] + (t.shape[j] == 1 ? 0 : idx[d]);
      }
      return t.values[off];
    };
    y[i] = f(at(a), at(b));
  }
  return y;
}

void checkBinary(Shape sa, Shape sb, DType dtype = DType::F32) {
  HostTensor a = randomTensor(dtype, sa, 3), b = randomTensor(dtype, sb, 4);
  // A divisor at least 0.5 away from zero keeps every quotient finite in f16.
  HostTensor divisor = b;
  for (double &v : divisor.values)
    v = roundTo(dtype, v < 0 ? v - 0.5 : v + 0.5);
  for (const BinaryKernel &k : kBinaryKernels) {
    const HostTensor &rhs = std::string(k.name) == "div" ? divisor : b;
    Shape out;
    std::vector<double> want = referenceBroadcast(a, rhs, k.f, out);
    for (double &v : want)
      v = roundTo(dtype, v);
    std::vector<double> got =
        runOp1(k.name, json::object(), {a, rhs}, {dtype, out});
    Tolerance tol = toleranceFor(dtype);
    EXPECT_TRUE(close(got, want, tol.atol, tol.rtol))
        << k.name << " " << formatShape(sa) << " " << formatShape(sb) << " "
        << dtypeName(dtype);
  }
}

TEST(BinaryKernelTest, SameShape) { checkBinary({2, 3, 4}, {2, 3, 4}); }
TEST(BinaryKernelTest, TrailingVector) { checkBinary({2, 3, 4}, {4}); }
TEST(BinaryKernelTest, ScalarEitherSide) {
  checkBinary({2, 3}, {});
  checkBinary({}, {2, 3});
  checkBinary({}, {});
  checkBinary({1}, {2, 3});
}
TEST(BinaryKernelTest, SizeOneDimsBothSides) {
  checkBinary({2, 1, 4}, {3, 1});
  checkBinary({2, 3, 1, 5}, {3, 4, 1});
  checkBinary({1, 4, 1}, {3, 1, 5});
}
TEST(BinaryKernelTest, ChannelBiasBroadcast) {
  checkBinary({2, 3, 4, 5}, {3, 1, 1});
}
TEST(BinaryKernelTest, OtherDtypes) {
  checkBinary({2, 1, 4}, {3, 1}, DType::F64);
  checkBinary({2, 3, 4}, {3, 1}, DType::F16);
  checkBinary({2, 3, 4}, {4}, DType::BF16);
}

TEST(BinaryKernelTest, DivisionByZeroFollowsIeee) {
  for (DType dtype : {DType::F32, DType::F64, DType::F16, DType::BF16}) {
    HostTensor a{dtype, {4}, {1, -1, 0, 2}}, b{dtype, {4}, {0, 0, 0, -0.0}};
    std::vector<double> y = runOp1("div", json::object(), {a, b}, {dtype, {4}});
    EXPECT_TRUE(std::isinf(y[0]) && y[0] > 0) << dtypeName(dtype);
    EXPECT_TRUE(std::isinf(y[1]) && y[1] < 0) << dtypeName(dtype);
    EXPECT_TRUE(std::isnan(y[2])) << dtypeName(dtype);
    EXPECT_TRUE(std::isinf(y[3]) && y[3] < 0) << dtypeName(dtype);
  }
}

TEST(BinaryKernelTest, InPlaceOverEitherOperand) {
  for (DType dtype : {DType::F32, DType::F16}) {
    HostTensor a = randomTensor(dtype, {3, 5}, 5),
               b = randomTensor(dtype, {3, 5}, 6, 0.5, 2);
    for (const BinaryKernel &k : kBinaryKernels) {
      auto got = runOp1(k.name, json::object(), {a, b}, {dtype, a.shape});
      for (size_t over : {0, 1})
        EXPECT_EQ(runOpInPlace(k.name, json::object(), {a, b},
                               {{dtype, a.shape}}, {{0, over}})[0],
                  got)
            << k.name << " in place over input " << over << " "
            << dtypeName(dtype);
    }
  }
}

TEST(DropoutKernelTest, MatchesTheDocumentedMask) {
  for (DType dtype : {DType::F32, DType::F64, DType::F16}) {
    HostTensor x = randomTensor(dtype, {4, 33, 5}, 8, 0.5, 2);
    const double p = 0.3;
    const int64_t seed = 1234;
    const uint64_t step = 17;
    std::vector<double> got = runOp1("dropout", {{"p", p}, {"seed", seed}}, {x},
                                     {dtype, x.shape}, step);
    uint64_t key = dropout::streamKey(seed, step);
    uint32_t threshold = dropout::threshold(p);
    double scale = dtype == DType::F64
                       ? 1 / (1 - p)
                       : static_cast<double>(dropout::scale<float>(p));
    std::vector<double> want;
    for (size_t i = 0; i < x.values.size(); ++i)
      want.push_back(roundTo(
          dtype, dropout::keep(key, i, threshold) ? x.values[i] * scale : 0.0));
    Tolerance tol = toleranceFor(dtype);
    EXPECT_TRUE(close(got, want, tol.atol, tol.rtol)) << dtypeName(dtype);
  }
}

TEST(DropoutKernelTest, DependsOnStepAndSeedOnly) {
  HostTensor x = randomTensor(DType::F32, {1000}, 9, 1, 2);
  json attrs = {{"p", 0.5}, {"seed", 3}};
  auto a = runOp1("dropout", attrs, {x}, {DType::F32, x.shape}, 5);
  auto b = runOp1("dropout", attrs, {x}, {DType::F32, x.shape}, 5);
  auto c = runOp1("dropout", attrs, {x}, {DType::F32, x.shape}, 6);
  auto d = runOp1("dropout", {{"p", 0.5}, {"seed", 4}}, {x},
                  {DType::F32, x.shape}, 5);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(a, d);
  int zeros = 0;
  for (double v : a)
    zeros += v == 0;
  EXPECT_GT(zeros, 400);
  EXPECT_LT(zeros, 600);
}

TEST(DropoutKernelTest, ZeroProbabilityIsIdentity) {
  HostTensor x = randomTensor(DType::F32, {3, 7}, 10);
  EXPECT_EQ(
      runOp1("dropout", {{"p", 0.0}, {"seed", 1}}, {x}, {DType::F32, x.shape}),
      x.values);
}

} // namespace
