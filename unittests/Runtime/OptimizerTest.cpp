//===- OptimizerTest.cpp - sgd, sgd with momentum and adam updates --------===//
//
// Steps checked against values worked out by hand (written out below), two
// consecutive steps for the stateful optimizers, the in-place forms (new
// values over the old ones) and random tensors against the update rules in
// double for every float dtype.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

using namespace memopt::runtime;
using namespace memopt::runtime::test;

namespace {

HostTensor f64(std::vector<double> v) {
  return HostTensor{DType::F64, {static_cast<int64_t>(v.size())}, v};
}
HostTensor scalar(DType dtype, double v) { return HostTensor{dtype, {}, {v}}; }

TEST(OptimizerTest, SgdByHand) {
  // p - lr * (g + wd * p):
  //   1 - 0.1 * (0.5 + 0.2 * 1)     = 0.93
  //   -2 - 0.1 * (-1 + 0.2 * -2)    = -1.86
  //   0 - 0.1 * (3 + 0)             = -0.3
  auto got = runOp1("sgd_update", {{"lr", 0.1}, {"weight_decay", 0.2}},
                    {f64({1, -2, 0}), f64({0.5, -1, 3})}, {DType::F64, {3}});
  EXPECT_TRUE(close(got, {0.93, -1.86, -0.3}, 1e-15, 1e-15));
  // weight_decay defaults to 0: 1 - 0.1 * 0.5 = 0.95.
  got = runOp1("sgd_update", {{"lr", 0.1}}, {f64({1}), f64({0.5})},
               {DType::F64, {1}});
  EXPECT_TRUE(close(got, {0.95}, 1e-15, 1e-15));
}

/// Runs sgd_momentum_update twice, feeding the new parameter and buffer
/// back, with the gradient `g` both times.
std::vector<std::vector<double>> momentumTwice(const json &attrs, double p,
                                               double g) {
  std::vector<std::vector<double>> out;
  HostTensor param = f64({p}), buffer = f64({0});
  for (int step = 0; step < 2; ++step) {
    auto r = runOp("sgd_momentum_update", attrs, {param, f64({g}), buffer},
                   {{DType::F64, {1}}, {DType::F64, {1}}});
    param.values = r[0];
    buffer.values = r[1];
    out.push_back({r[0][0], r[1][0]});
  }
  return out;
}

TEST(OptimizerTest, MomentumByHand) {
  // Plain momentum 0.9, lr 0.1, p = 1, g = 0.5, b = 0:
  //   step 1: b = 0.5,              p = 1 - 0.05 = 0.95
  //   step 2: b = 0.45 + 0.5 = 0.95, p = 0.95 - 0.095 = 0.855
  auto r = momentumTwice({{"lr", 0.1}, {"momentum", 0.9}}, 1, 0.5);
  EXPECT_NEAR(r[0][0], 0.95, 1e-15);
  EXPECT_NEAR(r[0][1], 0.5, 1e-15);
  EXPECT_NEAR(r[1][0], 0.855, 1e-15);
  EXPECT_NEAR(r[1][1], 0.95, 1e-15);
}

TEST(OptimizerTest, NesterovDampeningAndWeightDecayByHand) {
  // lr 0.1, momentum 0.9, dampening 0.1, weight decay 0.2, nesterov;
  // p = 1, g = 0.5, b = 0:
  //   step 1: d = 0.5 + 0.2 * 1 = 0.7
  //           b = 0.9 * 0 + 0.9 * 0.7 = 0.63
  //           p = 1 - 0.1 * (0.7 + 0.9 * 0.63) = 1 - 0.1267 = 0.8733
  //   step 2: d = 0.5 + 0.2 * 0.8733 = 0.67466
  //           b = 0.9 * 0.63 + 0.9 * 0.67466 = 1.174194
  //           p = 0.8733 - 0.1 * (0.67466 + 0.9 * 1.174194)
  //             = 0.8733 - 0.17314346 = 0.70015654
  json attrs = {{"lr", 0.1},
                {"momentum", 0.9},
                {"dampening", 0.1},
                {"weight_decay", 0.2},
                {"nesterov", true}};
  auto r = momentumTwice(attrs, 1, 0.5);
  EXPECT_NEAR(r[0][1], 0.63, 1e-14);
  EXPECT_NEAR(r[0][0], 0.8733, 1e-14);
  EXPECT_NEAR(r[1][1], 1.174194, 1e-14);
  EXPECT_NEAR(r[1][0], 0.70015654, 1e-14);
  // Without nesterov the step is the buffer: p = 1 - 0.1 * 0.63 = 0.937.
  attrs["nesterov"] = false;
  r = momentumTwice(attrs, 1, 0.5);
  EXPECT_NEAR(r[0][0], 0.937, 1e-14);
}

TEST(OptimizerTest, AdamTwoStepsByHand) {
  // lr 0.1, betas (0.9, 0.999), eps 1e-8, element by element:
  //  * p = 1, g = 0.5 both steps. Step 1: m = 0.05, v = 0.00025,
  //    corrections 0.1 and 0.001, sqrt(v) / sqrt(0.001) = 0.5, so
  //    p = 1 - (0.1 / 0.1) * 0.05 / (0.5 + 1e-8) = 1 - 0.1 / (1 + 2e-8).
  //    Step 2: m = 0.045 + 0.05 = 0.095, v = 0.00024975 + 0.00025
  //    = 0.00049975, corrections 0.19 and 0.001999, v / 0.001999 = 0.25,
  //    p -= (0.1 / 0.19) * 0.095 / (0.5 + 1e-8) = 0.1 / (1 + 2e-8).
  //  * p = -3, g = -2: m = -0.2 then -0.38, v = 0.004 then 0.007996,
  //    sqrt(v / correction2) = 2 both times, so p += 0.2 / (2 + 1e-8)
  //    = 0.1 / (1 + 5e-9) each step.
  //  * p = 0, g = 0: m = v = 0, p stays 0.
  const double step = 0.1 / (1 + 2e-8), step2 = 0.1 / (1 + 5e-9);
  HostTensor p = f64({1, -3, 0}), g = f64({0.5, -2, 0});
  HostTensor m = f64({0, 0, 0}), v = f64({0, 0, 0});
  json attrs = {{"lr", 0.1}};
  const std::vector<std::vector<double>> wantP = {
      {1 - step, -3 + step2, 0}, {1 - 2 * step, -3 + 2 * step2, 0}};
  const std::vector<std::vector<double>> wantM = {{0.05, -0.2, 0},
                                                  {0.095, -0.38, 0}};
  const std::vector<std::vector<double>> wantV = {{0.00025, 0.004, 0},
                                                  {0.00049975, 0.007996, 0}};
  for (int t = 1; t <= 2; ++t) {
    auto r = runOp("adam_update", attrs, {p, g, m, v, scalar(DType::F64, t)},
                   {{DType::F64, {3}}, {DType::F64, {3}}, {DType::F64, {3}}});
    EXPECT_TRUE(close(r[0], wantP[t - 1], 1e-14, 1e-14)) << "p, step " << t;
    EXPECT_TRUE(close(r[1], wantM[t - 1], 1e-16, 1e-14)) << "m, step " << t;
    EXPECT_TRUE(close(r[2], wantV[t - 1], 1e-18, 1e-14)) << "v, step " << t;
    p.values = r[0];
    m.values = r[1];
    v.values = r[2];
  }
}

TEST(OptimizerTest, AdamWeightDecayByHand) {
  // p = 2, g = 0, weight decay 0.5, lr 0.1, beta1 0.5, beta2 0.75, eps 0.1:
  //   g' = 0 + 0.5 * 2 = 1, m = 0.5, v = 0.25,
  //   corrections 0.5 and 0.25, sqrt(0.25) / sqrt(0.25) + 0.1 = 1.1,
  //   p = 2 - (0.1 / 0.5) * 0.5 / 1.1 = 2 - 0.1 / 1.1.
  json attrs = {{"lr", 0.1},
                {"beta1", 0.5},
                {"beta2", 0.75},
                {"eps", 0.1},
                {"weight_decay", 0.5}};
  auto r =
      runOp("adam_update", attrs,
            {f64({2}), f64({0}), f64({0}), f64({0}), scalar(DType::F64, 1)},
            {{DType::F64, {1}}, {DType::F64, {1}}, {DType::F64, {1}}});
  EXPECT_NEAR(r[0][0], 2 - 0.1 / 1.1, 1e-15);
  EXPECT_NEAR(r[1][0], 0.5, 1e-15);
  EXPECT_NEAR(r[2][0], 0.25, 1e-15);
}

TEST(OptimizerTest, AdamStepCountBelowOneIsAKernelFailure) {
  try {
    runOp("adam_update", {{"lr", 0.1}},
          {f64({1}), f64({1}), f64({0}), f64({0}), scalar(DType::F32, 0)},
          {{DType::F64, {1}}, {DType::F64, {1}}, {DType::F64, {1}}});
    ADD_FAILURE() << "accepted step 0";
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), ErrorCode::KernelFailure);
    EXPECT_NE(std::string(e.what()).find("steps[0] (adam_update at "
                                         "test.mlir:1:1): adam step count 0"),
              std::string::npos)
        << e.what();
  }
}

/// The update rules in double (the arithmetic the hand-worked tests follow).
struct Reference {
  static void adam(std::vector<double> &p, const std::vector<double> &g,
                   std::vector<double> &m, std::vector<double> &v, double t,
                   double lr, double b1, double b2, double eps, double wd) {
    double bc1 = 1 - std::pow(b1, t), bc2 = 1 - std::pow(b2, t);
    for (size_t i = 0; i < p.size(); ++i) {
      double gi = g[i] + wd * p[i];
      m[i] = b1 * m[i] + (1 - b1) * gi;
      v[i] = b2 * v[i] + (1 - b2) * gi * gi;
      p[i] -= lr / bc1 * m[i] / (std::sqrt(v[i]) / std::sqrt(bc2) + eps);
    }
  }
};

TEST(OptimizerTest, EveryDtypeAgainstTheRules) {
  for (DType dtype : {DType::F32, DType::F64, DType::F16, DType::BF16}) {
    SCOPED_TRACE(dtypeName(dtype));
    Shape shape = {4, 5};
    HostTensor p = randomTensor(dtype, shape, 1),
               g = randomTensor(dtype, shape, 2);
    HostTensor b = randomTensor(dtype, shape, 3);
    HostTensor m = randomTensor(dtype, shape, 4, -0.1, 0.1);
    HostTensor v = randomTensor(dtype, shape, 5, 0, 0.01);
    Tolerance tol = toleranceFor(dtype);
    // sgd
    std::vector<double> want;
    for (size_t i = 0; i < p.values.size(); ++i)
      want.push_back(roundTo(
          dtype, p.values[i] - 0.05 * (g.values[i] + 0.01 * p.values[i])));
    auto got = runOp1("sgd_update", {{"lr", 0.05}, {"weight_decay", 0.01}},
                      {p, g}, {dtype, shape});
    EXPECT_TRUE(close(got, want, tol.atol, tol.rtol)) << "sgd";
    for (size_t over : {0, 1})
      EXPECT_EQ(runOpInPlace("sgd_update",
                             {{"lr", 0.05}, {"weight_decay", 0.01}}, {p, g},
                             {{dtype, shape}}, {{0, over}})[0],
                got)
          << "sgd over input " << over;
    // sgd with momentum
    json mattrs = {{"lr", 0.05},
                   {"momentum", 0.8},
                   {"dampening", 0.25},
                   {"weight_decay", 0.01},
                   {"nesterov", true}};
    std::vector<double> wantP, wantB;
    for (size_t i = 0; i < p.values.size(); ++i) {
      double d = g.values[i] + 0.01 * p.values[i];
      double buf = 0.8 * b.values[i] + 0.75 * d;
      wantB.push_back(roundTo(dtype, buf));
      wantP.push_back(roundTo(dtype, p.values[i] - 0.05 * (d + 0.8 * buf)));
    }
    auto r = runOp("sgd_momentum_update", mattrs, {p, g, b},
                   {{dtype, shape}, {dtype, shape}});
    EXPECT_TRUE(close(r[0], wantP, tol.atol, tol.rtol)) << "momentum p";
    EXPECT_TRUE(close(r[1], wantB, tol.atol, tol.rtol)) << "momentum b";
    EXPECT_EQ(runOpInPlace("sgd_momentum_update", mattrs, {p, g, b},
                           {{dtype, shape}, {dtype, shape}}, {{0, 0}, {1, 2}}),
              r)
        << "momentum in place";
    // Swapped: each new value over the other's old storage.
    EXPECT_EQ(runOpInPlace("sgd_momentum_update", mattrs, {p, g, b},
                           {{dtype, shape}, {dtype, shape}}, {{0, 2}, {1, 0}}),
              r)
        << "momentum swapped";
    // adam, step 3
    json aattrs = {{"lr", 0.01},
                   {"beta1", 0.8},
                   {"beta2", 0.9},
                   {"eps", 1e-3},
                   {"weight_decay", 0.1}};
    std::vector<double> ap = p.values, am = m.values, av = v.values;
    Reference::adam(ap, g.values, am, av, 3, 0.01, 0.8, 0.9, 1e-3, 0.1);
    for (auto *vec : {&ap, &am, &av})
      for (double &x : *vec)
        x = roundTo(dtype, x);
    std::vector<HostTensor> in = {p, g, m, v, scalar(DType::F32, 3)};
    std::vector<OutputSpec> outs = {
        {dtype, shape}, {dtype, shape}, {dtype, shape}};
    auto a = runOp("adam_update", aattrs, in, outs);
    EXPECT_TRUE(close(a[0], ap, tol.atol, tol.rtol)) << "adam p";
    EXPECT_TRUE(close(a[1], am, tol.atol, tol.rtol)) << "adam m";
    EXPECT_TRUE(close(a[2], av, tol.atol, tol.rtol)) << "adam v";
    EXPECT_EQ(
        runOpInPlace("adam_update", aattrs, in, outs, {{0, 0}, {1, 2}, {2, 3}}),
        a)
        << "adam in place";
  }
}

} // namespace
