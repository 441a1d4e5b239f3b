//===- TrainingPlanTest.cpp - updates, optimizer state, training steps ----===//
//
// The plan's `updates` and the `optimizer_state` role: validation (each
// refusal names the entry), Executor::applyUpdates (results that are views
// of, or are, other updated arguments' buffers; the run-before-apply
// rule), and whole training steps built from the backward and optimizer
// kernels, run for several steps against a reference computed here.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

using namespace memopt::runtime;
using namespace memopt::runtime::test;

namespace {

void expectRefused(const json &plan, const std::string &expected) {
  try {
    Plan::parse(plan.dump());
    ADD_FAILURE() << "plan accepted; expected: " << expected;
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidPlan);
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos)
        << "message: " << e.what() << "\nexpected to contain: " << expected;
  }
}

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

TEST(UpdatesValidationTest, AcceptsUpdatesAndOptimizerState) {
  auto plan = Plan::parse(adamTrainingPlan().dump());
  ASSERT_EQ(plan->updates.size(), 4u);
  EXPECT_EQ(plan->updates[3].result, 4);
  EXPECT_EQ(plan->updates[3].argument, 4);
  EXPECT_EQ(plan->arguments[2].role, ArgumentRole::OptimizerState);
  EXPECT_EQ(argumentRoleName(ArgumentRole::OptimizerState), "optimizer_state");
  // Optional: absent or null means none.
  json p = sgdTrainingPlan();
  p.erase("updates");
  EXPECT_TRUE(Plan::parse(p.dump())->updates.empty());
  p["updates"] = nullptr;
  EXPECT_TRUE(Plan::parse(p.dump())->updates.empty());
  p["updates"] = json::array();
  EXPECT_TRUE(Plan::parse(p.dump())->updates.empty());
}

TEST(UpdatesValidationTest, RefusesBadEntries) {
  json p = sgdTrainingPlan();
  p["updates"] = json::object();
  expectRefused(p, "plan: field 'updates' must be an array, got object");
  p = sgdTrainingPlan();
  p["updates"][1] = 3;
  expectRefused(p, "plan: updates[1]: expected an object, got integer 3");
  p = sgdTrainingPlan();
  p["updates"][0].erase("result");
  expectRefused(p, "plan: updates[0]: missing field 'result'");
  p = sgdTrainingPlan();
  p["updates"][0]["argument"] = "W";
  expectRefused(p, "plan: updates[0]: field 'argument' must be an integer, "
                   "got string \"W\"");
  p = sgdTrainingPlan();
  p["updates"][1]["result"] = 3;
  expectRefused(p, "plan: updates[1]: result 3 is not a result index (the "
                   "plan has 3 results)");
  p = sgdTrainingPlan();
  p["updates"][1]["result"] = -1;
  expectRefused(p, "plan: updates[1]: result -1 is not a result index");
  p = sgdTrainingPlan();
  p["updates"][0]["argument"] = 4;
  expectRefused(p, "plan: updates[0]: argument 4 is not an argument index "
                   "(the plan has 4 arguments)");
  p = sgdTrainingPlan();
  p["updates"][0]["argument"] = 0;
  p["updates"][0]["result"] = 0;
  expectRefused(p, "plan: updates[0]: argument 0 is data");
  p = sgdTrainingPlan();
  p["updates"].push_back({{"result", 1}, {"argument", 1}});
  expectRefused(p, "plan: updates[2]: argument 1 is data");
  p = sgdTrainingPlan();
  p["updates"][0]["result"] = 0;
  expectRefused(p, "plan: updates[0]: result 0 (f32 of shape scalar) does not "
                   "match argument 2 'W' (f32 of shape 2x3)");
  p = sgdTrainingPlan();
  p["updates"][1]["argument"] = 2;
  expectRefused(p, "plan: updates[1]: result 2 (f32 of shape 2) does not "
                   "match argument 2 'W'");
  p = sgdTrainingPlan();
  p["updates"].push_back({{"result", 1}, {"argument", 2}});
  expectRefused(p, "plan: updates[2]: argument 2 is already updated by "
                   "updates[0]");
}

//===----------------------------------------------------------------------===//
// applyUpdates
//===----------------------------------------------------------------------===//

/// No steps: result 0 is argument b's tensor, result 1 a view of argument
/// a, result 2 argument c itself; updates b -> a, view(a) -> b, c -> c. So
/// applyUpdates swaps a and b (reading both before writing either) and
/// leaves c alone.
json swapPlan() {
  return json::parse(R"({
    "format": "memopt-plan", "version": 1, "function": "swap",
    "arena_bytes": 0, "alignment": 64,
    "tensors": [
      {"id": 0, "dtype": "f32", "shape": [2], "storage": "argument", "argument": 0},
      {"id": 1, "dtype": "f32", "shape": [2], "storage": "argument", "argument": 1},
      {"id": 2, "dtype": "f32", "shape": [2], "storage": "view", "of": 0},
      {"id": 3, "dtype": "f32", "shape": [1, 2], "storage": "argument", "argument": 2}
    ],
    "arguments": [
      {"name": "a", "role": "state", "tensor": 0},
      {"name": "b", "role": "optimizer_state", "tensor": 1},
      {"name": "c", "role": "param", "tensor": 3}
    ],
    "results": [1, 2, 3],
    "updates": [{"result": 0, "argument": 0}, {"result": 1, "argument": 1},
                {"result": 2, "argument": 2}],
    "steps": []
  })");
}

TEST(UpdatesValidationTest, DtypesMustMatch) {
  json p = swapPlan();
  p["tensors"][1]["dtype"] = "i32";
  expectRefused(p, "plan: updates[0]: result 0 (i32 of shape 2) does not "
                   "match argument 0 'a' (f32 of shape 2)");
}

std::vector<float> argumentValues(const Executor &exec, size_t index,
                                  size_t count) {
  std::vector<float> v(count);
  exec.getArgument(index, v.data(), count * sizeof(float));
  return v;
}

TEST(ApplyUpdatesTest, ResultsThatAreOtherUpdatedArgumentsAreReadFirst) {
  Executor exec(Plan::parse(swapPlan().dump()), "cpu");
  float a[2] = {1, 2}, b[2] = {3, 4}, c[2] = {5, 6};
  exec.setArgument(0, DType::F32, {2}, a, sizeof a);
  exec.setArgument(1, DType::F32, {2}, b, sizeof b);
  exec.setArgument(2, DType::F32, {1, 2}, c, sizeof c);
  const uint64_t before = exec.backend().memoryStats().bytesInUse;
  exec.run(0);
  exec.applyUpdates();
  EXPECT_EQ(argumentValues(exec, 0, 2), (std::vector<float>{3, 4}));
  EXPECT_EQ(argumentValues(exec, 1, 2), (std::vector<float>{1, 2}));
  EXPECT_EQ(argumentValues(exec, 2, 2), (std::vector<float>{5, 6}));
  exec.run(1);
  exec.applyUpdates();
  EXPECT_EQ(argumentValues(exec, 0, 2), (std::vector<float>{1, 2}));
  EXPECT_EQ(argumentValues(exec, 1, 2), (std::vector<float>{3, 4}));
  // Staging buffers are released.
  EXPECT_EQ(exec.backend().memoryStats().bytesInUse, before);
}

TEST(ApplyUpdatesTest, NeedsAFreshSuccessfulRun) {
  auto plan = Plan::parse(sgdTrainingPlan().dump());
  Executor exec(plan, "cpu");
  std::vector<float> x(12, 0.5f), t(8, 1.0f), w(6, 0.25f), b(2, 0.0f);
  exec.setArgument("x", DType::F32, {4, 3}, x.data(), 48);
  exec.setArgument("t", DType::F32, {4, 2}, t.data(), 32);
  exec.setArgument("W", DType::F32, {2, 3}, w.data(), 24);
  exec.setArgument("b", DType::F32, {2}, b.data(), 8);
  auto refused = [&] {
    try {
      exec.applyUpdates();
      ADD_FAILURE() << "applyUpdates accepted";
    } catch (const Error &e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
      EXPECT_NE(
          std::string(e.what()).find("applyUpdates needs a successful run()"),
          std::string::npos)
          << e.what();
    }
  };
  refused(); // Before any run.
  exec.run(0);
  exec.applyUpdates();
  EXPECT_NE(argumentValues(exec, 2, 6), w);
  std::vector<float> once = argumentValues(exec, 2, 6);
  refused(); // Twice for one run.
  EXPECT_EQ(argumentValues(exec, 2, 6), once);
  // A plan without updates: always a no-op.
  Executor plain(Plan::parse(mlpPlan().dump()), "cpu");
  plain.applyUpdates();
}

TEST(ApplyUpdatesTest, AFailedRunCannotBeApplied) {
  // The adam plan: step count 0 + 1 is fine, -1 + 1 is a kernel failure.
  auto plan = Plan::parse(adamTrainingPlan().dump());
  Executor exec(plan, "cpu");
  float w[3] = {1, 2, 3}, zeros[3] = {0, 0, 0}, step = 0;
  exec.setArgument("w", DType::F32, {3}, w, sizeof w);
  exec.setArgument("target", DType::F32, {3}, zeros, sizeof zeros);
  exec.setArgument("exp_avg", DType::F32, {3}, zeros, sizeof zeros);
  exec.setArgument("exp_avg_sq", DType::F32, {3}, zeros, sizeof zeros);
  exec.setArgument("step", DType::F32, {}, &step, sizeof step);
  exec.run(0);
  exec.applyUpdates();
  step = -1;
  exec.setArgument("step", DType::F32, {}, &step, sizeof step);
  EXPECT_THROW(exec.run(1), Error);
  EXPECT_THROW(exec.applyUpdates(), Error);
  float stepAfter = 0;
  exec.getArgument(4, &stepAfter, sizeof stepAfter);
  EXPECT_EQ(stepAfter, -1);
}

//===----------------------------------------------------------------------===//
// Training steps
//===----------------------------------------------------------------------===//

TEST(TrainingStepTest, LinearRegressionWithSgdForThreeSteps) {
  HostTensor x = randomTensor(DType::F32, {4, 3}, 501);
  HostTensor t = randomTensor(DType::F32, {4, 2}, 502);
  HostTensor w = randomTensor(DType::F32, {2, 3}, 503);
  HostTensor b = randomTensor(DType::F32, {2}, 504);
  auto plan = Plan::parse(sgdTrainingPlan().dump());
  Executor exec(plan, "cpu");
  for (const HostTensor *h : {&x, &t, &w, &b}) {
    size_t index = h == &x ? 0 : h == &t ? 1 : h == &w ? 2 : 3;
    std::vector<uint8_t> bytes = encode(*h);
    exec.setArgument(index, h->dtype, h->shape, bytes.data(), bytes.size());
  }
  std::vector<double> W = w.values, B = b.values;
  double previous = INFINITY;
  for (int step = 0; step < 3; ++step) {
    // Reference step in double.
    double loss = 0;
    std::vector<double> dp(8), dW(6, 0.0), dB(2, 0.0);
    for (int i = 0; i < 4; ++i)
      for (int o = 0; o < 2; ++o) {
        double p = B[o];
        for (int k = 0; k < 3; ++k)
          p += x.values[i * 3 + k] * W[o * 3 + k];
        double d = p - t.values[i * 2 + o];
        loss += d * d / 8;
        dp[i * 2 + o] = 2 * d / 8;
      }
    for (int o = 0; o < 2; ++o) {
      for (int i = 0; i < 4; ++i) {
        dB[o] += dp[i * 2 + o];
        for (int k = 0; k < 3; ++k)
          dW[o * 3 + k] += dp[i * 2 + o] * x.values[i * 3 + k];
      }
    }
    for (int e = 0; e < 6; ++e)
      W[e] -= 0.1 * (dW[e] + 0.01 * W[e]);
    for (int o = 0; o < 2; ++o)
      B[o] -= 0.1 * dB[o];

    exec.run(step);
    float got = 0;
    exec.getResult(0, &got, sizeof got);
    EXPECT_NEAR(got, loss, 1e-5 * (1 + loss)) << "step " << step;
    EXPECT_LT(got, previous) << "the loss decreases, step " << step;
    previous = got;
    exec.applyUpdates();
    std::vector<float> gotW = argumentValues(exec, 2, 6);
    std::vector<float> gotB = argumentValues(exec, 3, 2);
    EXPECT_TRUE(
        close(std::vector<double>(gotW.begin(), gotW.end()), W, 1e-5, 1e-5))
        << "W after step " << step;
    EXPECT_TRUE(
        close(std::vector<double>(gotB.begin(), gotB.end()), B, 1e-5, 1e-5))
        << "b after step " << step;
  }
}

TEST(TrainingStepTest, AdamWithOptimizerStateForTwoSteps) {
  auto plan = Plan::parse(adamTrainingPlan().dump());
  Executor exec(plan, "cpu");
  // g = 2 (w - target) / 3 = {2/3, -2, 0}: Adam moves each nonzero-gradient
  // element by about lr = 0.1 against the gradient's sign per step.
  float w[3] = {1, -3, 0.5f}, target[3] = {0, 0, 0.5f}, zeros[3] = {0, 0, 0};
  float step = 0;
  exec.setArgument("w", DType::F32, {3}, w, sizeof w);
  exec.setArgument("target", DType::F32, {3}, target, sizeof target);
  exec.setArgument("exp_avg", DType::F32, {3}, zeros, sizeof zeros);
  exec.setArgument("exp_avg_sq", DType::F32, {3}, zeros, sizeof zeros);
  exec.setArgument("step", DType::F32, {}, &step, sizeof step);
  std::vector<double> p = {1, -3, 0.5}, m(3, 0.0), v(3, 0.0);
  for (int t = 1; t <= 2; ++t) {
    double bc1 = 1 - std::pow(0.9, t), bc2 = 1 - std::pow(0.999, t);
    for (int i = 0; i < 3; ++i) {
      double g = 2 * (p[i] - target[i]) / 3;
      m[i] = 0.9 * m[i] + 0.1 * g;
      v[i] = 0.999 * v[i] + 0.001 * g * g;
      p[i] -= 0.1 / bc1 * m[i] / (std::sqrt(v[i]) / std::sqrt(bc2) + 1e-8);
    }
    exec.run(t);
    exec.applyUpdates();
    auto check = [&](size_t arg, const std::vector<double> &want,
                     const char *what) {
      std::vector<float> got = argumentValues(exec, arg, 3);
      EXPECT_TRUE(
          close(std::vector<double>(got.begin(), got.end()), want, 1e-6, 1e-5))
          << what << " after step " << t;
    };
    check(0, p, "w");
    check(2, m, "exp_avg");
    check(3, v, "exp_avg_sq");
    float gotStep = 0;
    exec.getArgument(4, &gotStep, sizeof gotStep);
    EXPECT_EQ(gotStep, float(t));
  }
  // By hand: Adam's first step moves by lr exactly (up to eps), its second
  // by lr times m_hat / sqrt(v_hat), 0.99588 for w[0] (gradients 2/3 then
  // 0.6) and 0.99897 for w[1] (-2 then -1.9333); w[2] has no gradient.
  std::vector<float> got = argumentValues(exec, 0, 3);
  EXPECT_NEAR(got[0], 1 - 0.1 - 0.099588, 2e-6);
  EXPECT_NEAR(got[1], -3 + 0.1 + 0.099897, 2e-6);
  EXPECT_EQ(got[2], 0.5f);
}

} // namespace
