//===- MixedPrecisionTest.cpp - casts, loss scaling, skipped steps --------===//
//
// The kernels of mixed-precision training with PyTorch's GradScaler
// semantics: cast (rounding to nearest even, overflow to inf), found_inf
// over inputs of every float dtype, unscale, update_loss_scale (growth,
// back-off, never growing to inf), select, and the optimizers' optional
// skip operand (a skipped step leaves every value bit-identical, a zero
// flag changes nothing). Ends with a plan that trains a few steps with a
// dynamic loss scale, one of them with an overflowing gradient.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "memopt/runtime/LossScale.h"

#include <cfloat>
#include <limits>

using namespace memopt::runtime;
using namespace memopt::runtime::test;

namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

HostTensor vec(DType dtype, std::vector<double> v) {
  return HostTensor{dtype, {static_cast<int64_t>(v.size())}, v};
}
HostTensor scalar(DType dtype, double v) { return HostTensor{dtype, {}, {v}}; }

/// Bit-for-bit equality of decoded values (doubles hold every f16, bf16 and
/// f32 value exactly; -0 and +0 differ, NaNs compare by payload).
::testing::AssertionResult sameBits(const std::vector<double> &a,
                                    const std::vector<double> &b) {
  if (a.size() == b.size() &&
      (a.empty() || std::memcmp(a.data(), b.data(), a.size() * 8) == 0))
    return ::testing::AssertionSuccess();
  ::testing::AssertionResult r = ::testing::AssertionFailure();
  r << "values differ:";
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i)
    r << "\n  [" << i << "] " << (i < a.size() ? a[i] : kNaN) << " vs "
      << (i < b.size() ? b[i] : kNaN);
  return r;
}

//===----------------------------------------------------------------------===//
// cast
//===----------------------------------------------------------------------===//

TEST(MixedPrecisionTest, CastF32ToF16RoundsToNearestEven) {
  const double u = std::ldexp(1.0, -10); // f16's spacing at 1.
  HostTensor x = vec(DType::F32, {
                                     1 + u / 2,     // tie: down to even 1
                                     1 + 3 * u / 2, // tie: up to even 1 + 2u
                                     1 + u / 2 + u / 8, // above the tie: up
                                     65504,             // largest finite f16
                                     65519,             // below 65520: 65504
                                     65520,             // ties to even: inf
                                     -1e6,              // overflow: -inf
                                     kInf,
                                     std::ldexp(1.0, -25), // tie to 0
                                     std::ldexp(3.0, -26), // up to 2^-24
                                     -0.0,
                                 });
  auto y = runOp1("cast", json::object(), {x}, {DType::F16, x.shape});
  std::vector<double> want = {
      1,    1 + 2 * u, 1 + u, 65504, 65504,
      kInf, -kInf,     kInf,  0,     std::ldexp(1.0, -24),
      -0.0};
  EXPECT_TRUE(sameBits(y, want));
  // NaN stays NaN.
  y = runOp1("cast", json::object(), {vec(DType::F32, {kNaN})},
             {DType::F16, {1}});
  EXPECT_TRUE(std::isnan(y[0]));
}

TEST(MixedPrecisionTest, CastWideningIsExact) {
  // Every f16 value, subnormals and the extremes, widens exactly.
  HostTensor h = vec(DType::F16, {std::ldexp(1.0, -24), -std::ldexp(5.0, -20),
                                  65504, -65504, 0.333251953125, kInf, -0.0});
  for (DType to : {DType::F32, DType::F64})
    EXPECT_TRUE(
        sameBits(runOp1("cast", json::object(), {h}, {to, h.shape}), h.values))
        << dtypeName(to);
  HostTensor b =
      vec(DType::BF16, {roundTo(DType::BF16, 1e38),
                        roundTo(DType::BF16, -3.0e-39), 1.0078125, -kInf});
  EXPECT_TRUE(sameBits(
      runOp1("cast", json::object(), {b}, {DType::F32, b.shape}), b.values));
}

TEST(MixedPrecisionTest, CastToBFloat16AndBetweenHalfTypes) {
  const double u = std::ldexp(1.0, -7); // bf16's spacing at 1.
  HostTensor x = vec(DType::F32, {1 + u / 2, 1 + 3 * u / 2, 1e38, 3.4e38});
  auto y = runOp1("cast", json::object(), {x}, {DType::BF16, x.shape});
  EXPECT_TRUE(sameBits(y, {1, 1 + 2 * u, roundTo(DType::BF16, 1e38),
                           roundTo(DType::BF16, 3.4e38)}));
  EXPECT_EQ(roundTo(DType::BF16, 3.4e38), kInf); // Rounds past bf16's max.
  // bf16 -> f16 overflows where f16's range ends; f16 -> bf16 rounds.
  HostTensor b = vec(DType::BF16, {65536, 1.5, -2.0});
  EXPECT_TRUE(
      sameBits(runOp1("cast", json::object(), {b}, {DType::F16, b.shape}),
               {kInf, 1.5, -2.0}));
  HostTensor h = vec(DType::F16, {1 + std::ldexp(1.0, -10), 3 * 1.0009765625});
  EXPECT_TRUE(sameBits(
      runOp1("cast", json::object(), {h}, {DType::BF16, h.shape}),
      {1, roundTo(DType::BF16, roundTo(DType::F16, 3 * 1.0009765625))}));
}

TEST(MixedPrecisionTest, CastToTheSameDTypeCopies) {
  for (DType dtype : {DType::F32, DType::F64, DType::F16, DType::BF16}) {
    HostTensor x = randomTensor(dtype, {3, 4}, 7, -100, 100);
    x.values[0] = kInf;
    x.values[1] = -0.0;
    EXPECT_TRUE(sameBits(runOp1("cast", json::object(), {x}, {dtype, x.shape}),
                         x.values))
        << dtypeName(dtype);
  }
  // f64 -> f32 rounds to nearest.
  auto y = runOp1("cast", json::object(), {vec(DType::F64, {0.1, 1e300})},
                  {DType::F32, {2}});
  EXPECT_TRUE(sameBits(y, {static_cast<float>(0.1), kInf}));
}

//===----------------------------------------------------------------------===//
// found_inf
//===----------------------------------------------------------------------===//

TEST(MixedPrecisionTest, FoundInfOverEveryInputAndDType) {
  // Finite extremes of each dtype, f32's largest value included (inf in
  // f16, but these are f32 elements).
  std::vector<HostTensor> inputs = {
      vec(DType::F32, {1, -3.0e38, 3.4e38}),
      HostTensor{DType::F16, {2, 2}, {65504, -65504, 0, std::ldexp(1.0, -24)}},
      scalar(DType::BF16, roundTo(DType::BF16, 3.0e38)),
      vec(DType::F64, {1e308, -1e308})};
  auto found = [&] {
    return runOp1("found_inf", json::object(), inputs, {DType::F32, {}})[0];
  };
  EXPECT_EQ(found(), 0.0);
  for (size_t i = 0; i < inputs.size(); ++i)
    for (double bad : {kInf, -kInf, kNaN}) {
      std::vector<HostTensor> saved = inputs;
      inputs[i].values.back() = bad;
      EXPECT_EQ(found(), 1.0) << "input " << i << " holding " << bad;
      inputs = saved;
    }
  // A single input; a 0-d one.
  EXPECT_EQ(runOp1("found_inf", json::object(), {scalar(DType::F16, kNaN)},
                   {DType::F32, {}})[0],
            1.0);
  EXPECT_EQ(runOp1("found_inf", json::object(), {scalar(DType::F16, 2)},
                   {DType::F32, {}})[0],
            0.0);
}

TEST(MixedPrecisionTest, NonFiniteBitTests) {
  using namespace memopt::runtime::math;
  EXPECT_TRUE(halfBitsNonFinite(0x7C00));  // inf
  EXPECT_TRUE(halfBitsNonFinite(0xFE01));  // -NaN
  EXPECT_FALSE(halfBitsNonFinite(0x7BFF)); // 65504
  EXPECT_TRUE(bfloat16BitsNonFinite(0xFF80));
  EXPECT_TRUE(bfloat16BitsNonFinite(0x7FC0));
  EXPECT_FALSE(bfloat16BitsNonFinite(0x7F7F));
  EXPECT_TRUE(nonFinite(std::numeric_limits<float>::infinity()));
  EXPECT_TRUE(nonFinite(std::numeric_limits<float>::quiet_NaN()));
  EXPECT_FALSE(nonFinite(FLT_MAX));
  EXPECT_FALSE(nonFinite(std::numeric_limits<float>::denorm_min()));
  EXPECT_TRUE(nonFinite(-kInf));
  EXPECT_TRUE(nonFinite(kNaN));
  EXPECT_FALSE(nonFinite(DBL_MAX));
}

//===----------------------------------------------------------------------===//
// unscale
//===----------------------------------------------------------------------===//

TEST(MixedPrecisionTest, UnscaleEveryDType) {
  for (double scale : {65536.0, 3.0, 0.75}) {
    const float inv = static_cast<float>(1.0 / scale);
    for (DType dtype : {DType::F32, DType::F64, DType::F16, DType::BF16}) {
      SCOPED_TRACE(concat(dtypeName(dtype), " scale ", scale));
      HostTensor g = randomTensor(dtype, {2, 5}, 3, -1000, 1000);
      g.values[0] = kInf;
      g.values[1] = -0.0;
      std::vector<double> want;
      for (double v : g.values)
        want.push_back(dtype == DType::F64
                           ? v * static_cast<double>(inv)
                           : roundTo(dtype, static_cast<float>(v) * inv));
      std::vector<HostTensor> in = {g, scalar(DType::F32, scale)};
      auto got = runOp1("unscale", json::object(), in, {dtype, g.shape});
      EXPECT_TRUE(sameBits(got, want));
      EXPECT_TRUE(sameBits(runOpInPlace("unscale", json::object(), in,
                                        {{dtype, g.shape}}, {{0, 0}})[0],
                           want))
          << "in place";
    }
  }
  // 65504 / 0.5 overflows f16 to inf (found_inf's business afterwards).
  auto y = runOp1("unscale", json::object(),
                  {vec(DType::F16, {65504, 1}), scalar(DType::F32, 0.5)},
                  {DType::F16, {2}});
  EXPECT_TRUE(sameBits(y, {kInf, 2}));
}

TEST(MixedPrecisionTest, InverseScaleIsRoundedOnceFromDouble) {
  using memopt::runtime::math::inverseLossScale;
  EXPECT_EQ(inverseLossScale(65536.0f), 1.0f / 65536.0f);
  EXPECT_EQ(inverseLossScale(3.0f), static_cast<float>(1.0 / 3.0));
  EXPECT_EQ(inverseLossScale(0.0f), std::numeric_limits<float>::infinity());
}

//===----------------------------------------------------------------------===//
// update_loss_scale
//===----------------------------------------------------------------------===//

struct ScaleState {
  double scale;
  double tracker;
};

ScaleState updateScale(double scale, int32_t tracker, double foundInf,
                       json attrs = {{"growth_factor", 2.0},
                                     {"backoff_factor", 0.5},
                                     {"growth_interval", 3}},
                       bool inPlace = false) {
  std::vector<HostTensor> in = {scalar(DType::F32, scale),
                                scalar(DType::I32, tracker),
                                scalar(DType::F32, foundInf)};
  std::vector<OutputSpec> out = {{DType::F32, {}}, {DType::I32, {}}};
  auto r = inPlace ? runOpInPlace("update_loss_scale", attrs, in, out,
                                  {{0, 0}, {1, 1}})
                   : runOp("update_loss_scale", attrs, in, out);
  return {r[0][0], r[1][0]};
}

TEST(MixedPrecisionTest, UpdateLossScaleGrowsAfterTheInterval) {
  for (bool inPlace : {false, true}) {
    SCOPED_TRACE(inPlace ? "in place" : "out of place");
    json attrs = {{"growth_factor", 2.0},
                  {"backoff_factor", 0.5},
                  {"growth_interval", 3}};
    // Below the interval: the tracker counts the step.
    ScaleState s = updateScale(65536, 0, 0, attrs, inPlace);
    EXPECT_EQ(s.scale, 65536);
    EXPECT_EQ(s.tracker, 1);
    s = updateScale(65536, 1, 0, attrs, inPlace);
    EXPECT_EQ(s.tracker, 2);
    // The third successful step in a row grows the scale and resets.
    s = updateScale(65536, 2, 0, attrs, inPlace);
    EXPECT_EQ(s.scale, 131072);
    EXPECT_EQ(s.tracker, 0);
    // Non-finite gradients back off and reset, whatever the tracker.
    for (double found : {1.0, kNaN, -2.0}) {
      s = updateScale(65536, 2, found, attrs, inPlace);
      EXPECT_EQ(s.scale, 32768) << found;
      EXPECT_EQ(s.tracker, 0) << found;
    }
  }
}

TEST(MixedPrecisionTest, UpdateLossScaleNeverGrowsToInf) {
  // 3e38 * 2 overflows float: the scale stays, the tracker still resets.
  ScaleState s = updateScale(3.0e38, 2, 0);
  EXPECT_EQ(s.scale, static_cast<float>(3.0e38));
  EXPECT_EQ(s.tracker, 0);
  s = updateScale(FLT_MAX, 2, 0);
  EXPECT_EQ(s.scale, FLT_MAX);
  // Just below the limit the product still rounds to a finite float.
  s = updateScale(FLT_MAX / 2, 2, 0);
  EXPECT_EQ(s.scale, FLT_MAX);
}

TEST(MixedPrecisionTest, UpdateLossScaleFactorsAreDoubles) {
  // scale * factor in double, rounded to float once (PyTorch's kernel).
  json attrs = {
      {"growth_factor", 1.1}, {"backoff_factor", 0.1}, {"growth_interval", 1}};
  ScaleState s = updateScale(3.0, 0, 0, attrs);
  EXPECT_EQ(s.scale, static_cast<float>(3.0 * 1.1));
  EXPECT_EQ(s.tracker, 0);
  s = updateScale(3.0, 0, 1, attrs);
  EXPECT_EQ(s.scale, static_cast<float>(3.0 * 0.1));
  // A tracker already past the interval (a plan resumed with a smaller
  // interval) grows on the next successful step.
  attrs["growth_interval"] = 2;
  s = updateScale(4.0, 7, 0, attrs);
  EXPECT_EQ(s.scale, static_cast<float>(4.0 * 1.1));
  EXPECT_EQ(s.tracker, 0);
  // The largest tracker does not overflow.
  attrs["growth_interval"] = INT32_MAX;
  s = updateScale(4.0, INT32_MAX - 1, 0, attrs);
  EXPECT_EQ(s.tracker, 0);
  s = updateScale(4.0, INT32_MAX - 2, 0, attrs);
  EXPECT_EQ(s.tracker, INT32_MAX - 1);
}

TEST(MixedPrecisionTest, UpdateLossScaleSharedFunction) {
  using memopt::runtime::math::updateLossScale;
  // GradScaler's defaults: 2.0, 0.5, 2000.
  float scale = 65536.0f;
  int32_t tracker = 0;
  for (int i = 0; i < 1999; ++i) {
    auto next = updateLossScale(scale, tracker, 0.0f, 2.0, 0.5, 2000);
    scale = next.scale;
    tracker = next.growthTracker;
  }
  EXPECT_EQ(scale, 65536.0f);
  EXPECT_EQ(tracker, 1999);
  auto next = updateLossScale(scale, tracker, 0.0f, 2.0, 0.5, 2000);
  EXPECT_EQ(next.scale, 131072.0f);
  EXPECT_EQ(next.growthTracker, 0);
}

//===----------------------------------------------------------------------===//
// select
//===----------------------------------------------------------------------===//

TEST(MixedPrecisionTest, Select) {
  for (DType dtype : {DType::F32, DType::F64, DType::F16, DType::BF16,
                      DType::I32, DType::I64}) {
    SCOPED_TRACE(dtypeName(dtype));
    HostTensor a{dtype, {2, 2}, {1, 2, 3, 4}}, b{dtype, {2, 2}, {-5, 6, 0, 8}};
    for (double cond : {1.0, -0.5, kNaN, kInf})
      EXPECT_TRUE(
          sameBits(runOp1("select", json::object(),
                          {scalar(DType::F32, cond), a, b}, {dtype, a.shape}),
                   a.values))
          << cond;
    for (double cond : {0.0, -0.0})
      EXPECT_TRUE(
          sameBits(runOp1("select", json::object(),
                          {scalar(DType::F32, cond), a, b}, {dtype, a.shape}),
                   b.values))
          << cond;
  }
  // 0-d operands (Adam's step count).
  EXPECT_EQ(runOp1("select", json::object(),
                   {scalar(DType::F32, 1), scalar(DType::F32, 4),
                    scalar(DType::F32, 5)},
                   {DType::F32, {}})[0],
            4.0);
}

//===----------------------------------------------------------------------===//
// The optimizers' skip operand
//===----------------------------------------------------------------------===//

TEST(MixedPrecisionTest, SkippedOptimizerStepsLeaveEveryValue) {
  for (DType dtype : {DType::F32, DType::F64, DType::F16, DType::BF16}) {
    SCOPED_TRACE(dtypeName(dtype));
    Shape shape = {3, 4};
    HostTensor p = randomTensor(dtype, shape, 11),
               g = randomTensor(dtype, shape, 12);
    HostTensor b = randomTensor(dtype, shape, 13);
    HostTensor m = randomTensor(dtype, shape, 14, -0.1, 0.1);
    HostTensor v = randomTensor(dtype, shape, 15, 0, 0.01);
    p.values[0] = -0.0;
    g.values[1] = kInf; // The overflow that made the step skip.
    g.values[2] = kNaN;
    HostTensor skip = scalar(DType::F32, 1);
    OutputSpec o = {dtype, shape};

    json sgd = {{"lr", 0.1}, {"weight_decay", 0.01}};
    EXPECT_TRUE(sameBits(runOp1("sgd_update", sgd, {p, g, skip}, o), p.values));
    EXPECT_TRUE(sameBits(
        runOpInPlace("sgd_update", sgd, {p, g, skip}, {o}, {{0, 0}})[0],
        p.values));

    json mom = {{"lr", 0.1}, {"momentum", 0.9}, {"nesterov", true}};
    auto r = runOp("sgd_momentum_update", mom, {p, g, b, skip}, {o, o});
    EXPECT_TRUE(sameBits(r[0], p.values));
    EXPECT_TRUE(sameBits(r[1], b.values));
    r = runOpInPlace("sgd_momentum_update", mom, {p, g, b, skip}, {o, o},
                     {{0, 0}, {1, 2}});
    EXPECT_TRUE(sameBits(r[0], p.values));
    EXPECT_TRUE(sameBits(r[1], b.values));

    // The step count is not read on a skipped step (0 would be refused).
    json adam = {{"lr", 0.01}, {"weight_decay", 0.1}};
    for (double t : {3.0, 0.0}) {
      std::vector<HostTensor> in = {p, g, m, v, scalar(DType::F32, t), skip};
      auto a = runOp("adam_update", adam, in, {o, o, o});
      EXPECT_TRUE(sameBits(a[0], p.values));
      EXPECT_TRUE(sameBits(a[1], m.values));
      EXPECT_TRUE(sameBits(a[2], v.values));
      a = runOpInPlace("adam_update", adam, in, {o, o, o},
                       {{0, 0}, {1, 2}, {2, 3}});
      EXPECT_TRUE(sameBits(a[0], p.values));
      EXPECT_TRUE(sameBits(a[1], m.values));
      EXPECT_TRUE(sameBits(a[2], v.values));
    }
  }
}

TEST(MixedPrecisionTest, ZeroSkipIsTheNormalStep) {
  for (DType dtype : {DType::F32, DType::F64, DType::F16, DType::BF16}) {
    SCOPED_TRACE(dtypeName(dtype));
    Shape shape = {3, 4};
    HostTensor p = randomTensor(dtype, shape, 21),
               g = randomTensor(dtype, shape, 22);
    HostTensor b = randomTensor(dtype, shape, 23);
    HostTensor m = randomTensor(dtype, shape, 24, -0.1, 0.1);
    HostTensor v = randomTensor(dtype, shape, 25, 0, 0.01);
    HostTensor noSkip = scalar(DType::F32, 0);
    OutputSpec o = {dtype, shape};

    json sgd = {{"lr", 0.1}, {"weight_decay", 0.01}};
    auto want = runOp1("sgd_update", sgd, {p, g}, o);
    EXPECT_FALSE(sameBits(want, p.values)); // The step does something.
    EXPECT_TRUE(sameBits(runOp1("sgd_update", sgd, {p, g, noSkip}, o), want));
    EXPECT_TRUE(sameBits(
        runOpInPlace("sgd_update", sgd, {p, g, noSkip}, {o}, {{0, 0}})[0],
        want));

    json mom = {{"lr", 0.1}, {"momentum", 0.9}, {"dampening", 0.1}};
    auto wantM = runOp("sgd_momentum_update", mom, {p, g, b}, {o, o});
    auto r = runOp("sgd_momentum_update", mom, {p, g, b, noSkip}, {o, o});
    EXPECT_TRUE(sameBits(r[0], wantM[0]));
    EXPECT_TRUE(sameBits(r[1], wantM[1]));
    r = runOpInPlace("sgd_momentum_update", mom, {p, g, b, noSkip}, {o, o},
                     {{0, 0}, {1, 2}});
    EXPECT_TRUE(sameBits(r[0], wantM[0]));
    EXPECT_TRUE(sameBits(r[1], wantM[1]));

    json adam = {{"lr", 0.01}, {"beta1", 0.8}, {"weight_decay", 0.1}};
    std::vector<HostTensor> in = {p, g, m, v, scalar(DType::F32, 3)};
    auto wantA = runOp("adam_update", adam, in, {o, o, o});
    in.push_back(noSkip);
    for (bool inPlace : {false, true}) {
      auto a = inPlace ? runOpInPlace("adam_update", adam, in, {o, o, o},
                                      {{0, 0}, {1, 2}, {2, 3}})
                       : runOp("adam_update", adam, in, {o, o, o});
      for (int k = 0; k < 3; ++k)
        EXPECT_TRUE(sameBits(a[k], wantA[k])) << k << " in place " << inPlace;
    }
    // The step count is still checked when the step runs.
    in[4] = scalar(DType::F32, 0);
    EXPECT_NE(errorOf([&] {
                runOp("adam_update", adam, in, {o, o, o});
              }).find("adam step count 0"),
              std::string::npos);
  }
}

//===----------------------------------------------------------------------===//
// Updates reading a narrower gradient, and unscaling it
//===----------------------------------------------------------------------===//

/// An optimizer given an f16 or bf16 gradient (and, with a loss scale, the
/// scale to divide it by) computes bit for bit what it computes from the
/// gradient cast to the parameter's dtype (and unscaled there): the fused
/// form memopt-autodiff emits equals cast + unscale + update, for every
/// optimizer, f32 and f64 parameters, in place or not; a set skip flag
/// still leaves every value.
TEST(MixedPrecisionTest, UpdatesWidenAndUnscaleTheirGradient) {
  for (DType paramType : {DType::F32, DType::F64})
    for (DType gradType : {DType::F16, DType::BF16, DType::F32}) {
      if (gradType == paramType)
        continue;
      SCOPED_TRACE(std::string(dtypeName(gradType)) + " gradient, " +
                   std::string(dtypeName(paramType)) + " param");
      Shape shape = {5, 7};
      OutputSpec o = {paramType, shape};
      HostTensor p = randomTensor(paramType, shape, 31);
      // A scaled gradient: values of a few thousand, as with a scale of
      // 2^12, whose unscaled values are not exact in f16.
      HostTensor g = randomTensor(gradType, shape, 32, -3000, 3000);
      HostTensor b = randomTensor(paramType, shape, 33);
      HostTensor m = randomTensor(paramType, shape, 34, -0.1, 0.1);
      HostTensor v = randomTensor(paramType, shape, 35, 0, 0.01);
      HostTensor step = scalar(DType::F32, 3);
      HostTensor scale = scalar(DType::F32, 3072); // 1/3072 is inexact.
      HostTensor noSkip = scalar(DType::F32, 0), skip = scalar(DType::F32, 1);
      HostTensor wide{paramType, shape, runOp1("cast", json::object(), {g}, o)};
      HostTensor unscaled{paramType, shape,
                          runOp1("unscale", json::object(), {wide, scale}, o)};

      struct Case {
        const char *kernel;
        json attrs;
        /// Inputs after param and grad, and outputs over inputs in place.
        std::vector<HostTensor> state;
        std::vector<std::pair<size_t, size_t>> inPlace;
      };
      std::vector<Case> cases = {
          {"sgd_update", {{"lr", 0.1}, {"weight_decay", 0.01}}, {}, {{0, 0}}},
          {"sgd_momentum_update",
           {{"lr", 0.1}, {"momentum", 0.9}, {"nesterov", true}},
           {b},
           {{0, 0}, {1, 2}}},
          {"adam_update",
           {{"lr", 0.01}, {"weight_decay", 0.1}},
           {m, v, step},
           {{0, 0}, {1, 2}, {2, 3}}},
      };
      for (const Case &c : cases) {
        SCOPED_TRACE(c.kernel);
        std::vector<OutputSpec> outs(c.inPlace.size(), o);
        auto inputs = [&](const HostTensor &grad,
                          std::vector<HostTensor> tail) {
          std::vector<HostTensor> in = {p, grad};
          in.insert(in.end(), c.state.begin(), c.state.end());
          in.insert(in.end(), tail.begin(), tail.end());
          return in;
        };
        // Widening only.
        auto want = runOp(c.kernel, c.attrs, inputs(wide, {}), outs);
        auto got = runOp(c.kernel, c.attrs, inputs(g, {}), outs);
        for (size_t k = 0; k < outs.size(); ++k)
          EXPECT_TRUE(sameBits(got[k], want[k])) << "output " << k;
        // Widening and unscaling, in place or not.
        want = runOp(c.kernel, c.attrs, inputs(unscaled, {noSkip}), outs);
        EXPECT_FALSE(sameBits(want[0], p.values)); // The step moves p.
        for (bool inPlace : {false, true}) {
          std::vector<HostTensor> in = inputs(g, {noSkip, scale});
          got = inPlace ? runOpInPlace(c.kernel, c.attrs, in, outs, c.inPlace)
                        : runOp(c.kernel, c.attrs, in, outs);
          for (size_t k = 0; k < outs.size(); ++k)
            EXPECT_TRUE(sameBits(got[k], want[k]))
                << "output " << k << " in place " << inPlace;
        }
        // Skipped: every value as it was.
        got = runOp(c.kernel, c.attrs, inputs(g, {skip, scale}), outs);
        EXPECT_TRUE(sameBits(got[0], p.values));
      }
    }
}

/// The rules: a gradient the parameter's dtype cannot hold exactly, of
/// another shape, or a loss scale beside an f16 parameter is refused with
/// the reason.
TEST(MixedPrecisionTest, UpdateGradientRules) {
  json sgd = {{"lr", 0.1}};
  HostTensor noSkip = scalar(DType::F32, 0), scale = scalar(DType::F32, 2);
  auto fails = [&](std::vector<HostTensor> in, DType out,
                   const std::string &reason) {
    std::string error = errorOf([&] {
      runOp1("sgd_update", sgd, in, {out, in[0].shape});
    });
    EXPECT_NE(error.find(reason), std::string::npos) << error;
  };
  fails({randomTensor(DType::F16, {4}, 1), randomTensor(DType::F32, {4}, 2)},
        DType::F16, "expected a grad whose dtype f16 holds exactly, got f32");
  fails({randomTensor(DType::F16, {4}, 1), randomTensor(DType::BF16, {4}, 2)},
        DType::F16, "expected a grad whose dtype f16 holds exactly, got bf16");
  fails({randomTensor(DType::F32, {4}, 1), randomTensor(DType::F16, {2, 2}, 2)},
        DType::F32, "expected grad of the param's shape 4, got 2x2");
  fails({randomTensor(DType::F16, {4}, 1), randomTensor(DType::F16, {4}, 2),
         noSkip, scale},
        DType::F16,
        "expected an f32 or f64 param beside a loss scale, got f16");
}

//===----------------------------------------------------------------------===//
// A training step with a dynamic loss scale
//===----------------------------------------------------------------------===//

/// w' = sgd_update(w, unscale(cast(g16), scale), found) in place over w,
/// with found = found_inf(g16) and (scale, tracker) updated in place; the
/// f16 copy of the new w is the result. Arguments: w [4] (param), g16 [4]
/// f16 (data: the scaled gradient of an f16 backward), scale [] and
/// tracker [] i32 (optimizer_state). `fused`: the update reads g16 and
/// unscales it itself, as memopt-autodiff emits it (no cast, no unscale).
json ampPlan(bool fused) {
  json plan = json::parse(R"({
    "format": "memopt-plan", "version": 1, "function": "amp_train",
    "arena_bytes": 136, "alignment": 64,
    "tensors": [
      {"id": 0, "dtype": "f32", "shape": [4], "storage": "argument", "argument": 0},
      {"id": 1, "dtype": "f16", "shape": [4], "storage": "argument", "argument": 1},
      {"id": 2, "dtype": "f32", "shape": [], "storage": "argument", "argument": 2},
      {"id": 3, "dtype": "i32", "shape": [], "storage": "argument", "argument": 3},
      {"id": 4, "dtype": "f32", "shape": [], "storage": "arena", "offset": 0},
      {"id": 5, "dtype": "f32", "shape": [4], "storage": "arena", "offset": 64},
      {"id": 6, "dtype": "f32", "shape": [4], "storage": "view", "of": 5},
      {"id": 7, "dtype": "f32", "shape": [4], "storage": "view", "of": 0},
      {"id": 8, "dtype": "f32", "shape": [], "storage": "view", "of": 2},
      {"id": 9, "dtype": "i32", "shape": [], "storage": "view", "of": 3},
      {"id": 10, "dtype": "f16", "shape": [4], "storage": "arena", "offset": 128}
    ],
    "arguments": [
      {"name": "w", "role": "param", "tensor": 0},
      {"name": "g16", "role": "data", "tensor": 1},
      {"name": "scale", "role": "optimizer_state", "tensor": 2},
      {"name": "tracker", "role": "optimizer_state", "tensor": 3}
    ],
    "results": [10, 4],
    "steps": [
      {"kernel": "found_inf", "inputs": [1], "outputs": [4]},
      {"kernel": "cast", "inputs": [1], "outputs": [5]},
      {"kernel": "unscale", "inputs": [5, 2], "outputs": [6]},
      {"kernel": "sgd_update", "inputs": [0, 6, 4], "outputs": [7],
       "attrs": {"lr": 0.5, "weight_decay": 0.0}},
      {"kernel": "update_loss_scale", "inputs": [2, 3, 4], "outputs": [8, 9],
       "attrs": {"growth_factor": 2.0, "backoff_factor": 0.5,
                 "growth_interval": 2}},
      {"kernel": "cast", "inputs": [7], "outputs": [10]}
    ]
  })");
  if (fused) {
    json &steps = plan["steps"];
    steps.erase(steps.begin() + 1, steps.begin() + 3); // cast, unscale
    steps[1]["inputs"] = {0, 1, 4, 2};
  }
  return plan;
}

TEST(MixedPrecisionTest, TrainingWithADynamicLossScale) {
  for (bool fused : {false, true}) {
    SCOPED_TRACE(fused ? "fused update" : "cast, unscale, update");
    Executor exec(Plan::parse(ampPlan(fused).dump()), "cpu");
    std::vector<float> w = {1, 2, 3, 4};
    float scale = 1024;
    int32_t tracker = 0;
    exec.setArgument(0, DType::F32, {4}, w.data(), 16);
    exec.setArgument(2, DType::F32, {}, &scale, 4);
    exec.setArgument(3, DType::I32, {}, &tracker, 4);
    struct Expect {
      std::vector<double> g16;
      double found;
      std::vector<float> w;
      float scale;
      int32_t tracker;
    };
    const std::vector<Expect> steps = {
        // Gradients {1, 2, -1, 0} scaled by 1024.
        {{1024, 2048, -1024, 0}, 0, {0.5f, 1, 3.5f, 4}, 1024, 1},
        // An overflow: the step is skipped, the scale halves.
        {{kInf, 1, 1, 1}, 1, {0.5f, 1, 3.5f, 4}, 512, 0},
        {{512, 512, 512, kNaN}, 1, {0.5f, 1, 3.5f, 4}, 256, 0},
        // Gradients of 1 scaled by 256, twice: the scale grows back.
        {{256, 256, 256, 256}, 0, {0, 0.5f, 3, 3.5f}, 256, 1},
        {{256, 256, 256, 256}, 0, {-0.5f, 0, 2.5f, 3}, 512, 0},
    };
    for (size_t i = 0; i < steps.size(); ++i) {
      SCOPED_TRACE(concat("step ", i));
      std::vector<uint8_t> g = encode(vec(DType::F16, steps[i].g16));
      exec.setArgument(1, DType::F16, {4}, g.data(), g.size());
      exec.run(i);
      std::vector<float> gotW(4);
      exec.getArgument(0, gotW.data(), 16);
      exec.getArgument(2, &scale, 4);
      exec.getArgument(3, &tracker, 4);
      EXPECT_EQ(gotW, steps[i].w);
      EXPECT_EQ(scale, steps[i].scale);
      EXPECT_EQ(tracker, steps[i].tracker);
      float found;
      exec.getResult(1, &found, 4);
      EXPECT_EQ(found, steps[i].found);
      std::vector<uint8_t> w16(8);
      exec.getResult(0, w16.data(), 8);
      std::vector<double> want(steps[i].w.begin(), steps[i].w.end());
      EXPECT_TRUE(sameBits(decode(DType::F16, w16.data(), 4), want));
    }
  }
}

} // namespace
