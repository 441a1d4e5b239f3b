//===- ExecutorTest.cpp - the C++ executor API ----------------------------===//
//
// Runs hand-written plans end to end: the reference MLP step against a
// double reference, the exact arena size, caller mistakes, in-place steps
// and views, state updates between steps and kernel failures.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <algorithm>

using namespace memopt::runtime;
using namespace memopt::runtime::test;

namespace {

struct MlpData {
  HostTensor x = randomTensor(DType::F32, {4, 3}, 1);
  HostTensor w = randomTensor(DType::F32, {5, 3}, 2);
  HostTensor b = randomTensor(DType::F32, {5}, 3);
  HostTensor labels{DType::I64, {4}, {4, 0, 2, 1}};

  /// relu(x w^T + b) and the mean cross-entropy, in double.
  void reference(std::vector<double> &logits, double &loss) const {
    logits.assign(20, 0);
    loss = 0;
    for (int i = 0; i < 4; ++i) {
      double max = -INFINITY, sum = 0;
      for (int o = 0; o < 5; ++o) {
        double acc = b.values[o];
        for (int k = 0; k < 3; ++k)
          acc += x.values[i * 3 + k] * w.values[o * 3 + k];
        logits[i * 5 + o] = std::max(acc, 0.0);
        max = std::max(max, logits[i * 5 + o]);
      }
      for (int o = 0; o < 5; ++o)
        sum += std::exp(logits[i * 5 + o] - max);
      loss += max + std::log(sum) - logits[i * 5 + int(labels.values[i])];
    }
    loss /= 4;
  }

  void setAll(Executor &exec) const {
    int index = 0;
    for (const HostTensor *t : {&x, &w, &b, &labels}) {
      std::vector<uint8_t> bytes = encode(*t);
      exec.setArgument(index++, t->dtype, t->shape, bytes.data(), bytes.size());
    }
  }
};

float runLoss(Executor &exec) {
  exec.run(0);
  float loss = 0;
  exec.getResult(0, &loss, sizeof loss);
  return loss;
}

TEST(ExecutorTest, RunsTheMlpStepAgainstAReference) {
  auto plan = Plan::parse(mlpPlan().dump());
  Executor exec(plan, "cpu");
  MlpData data;
  data.setAll(exec);
  exec.run(0);
  float loss = 0;
  exec.getResult(0, &loss, sizeof loss);
  std::vector<float> logits(20);
  exec.getResult(1, logits.data(), logits.size() * sizeof(float));
  std::vector<double> wantLogits;
  double wantLoss;
  data.reference(wantLogits, wantLoss);
  EXPECT_NEAR(loss, wantLoss, 1e-6);
  EXPECT_TRUE(close(std::vector<double>(logits.begin(), logits.end()),
                    wantLogits, 1e-6, 1e-6));
  // Runs are repeatable, and parameters persist between them.
  EXPECT_EQ(runLoss(exec), loss);
}

TEST(ExecutorTest, AllocatesExactlyTheArena) {
  auto plan = Plan::parse(mlpPlan().dump());
  Executor exec(plan, "cpu");
  EXPECT_EQ(exec.arenaBytes(), 260u);
  // Arguments: x 48, w 60, b 20, labels 32 bytes; no constants.
  EXPECT_EQ(exec.persistentBytes(), 160u);
  // One allocation: the arena, then each argument at a 64-byte aligned
  // offset (320, 384, 448, 512), the last one unpadded.
  MemoryStats stats = exec.backend().memoryStats();
  EXPECT_EQ(stats.bytesInUse, 512u + 32u);
  EXPECT_EQ(stats.peakBytes, 512u + 32u);
  // Arena tensors sit at their planned offsets in one aligned block.
  auto base = reinterpret_cast<uintptr_t>(exec.tensorData(4));
  EXPECT_EQ(base % 64, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(exec.tensorData(5)) - base, 128u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(exec.tensorData(6)) - base, 256u);
}

TEST(ExecutorTest, RefusesCallerMistakes) {
  auto plan = Plan::parse(mlpPlan().dump());
  Executor exec(plan, "cpu");
  std::vector<float> buffer(64);
  auto expectError = [](const std::string &message, const std::string &want) {
    EXPECT_NE(message.find(want), std::string::npos)
        << message << "\nexpected: " << want;
  };
  expectError(errorOf([&] {
                exec.setArgument(0, DType::F32, {3, 4}, buffer.data(), 48);
              }),
              "executor: argument 0 'x' (data) expects f32 of shape 4x3, got "
              "f32 of shape 3x4");
  expectError(errorOf([&] {
                exec.setArgument(0, DType::F64, {4, 3}, buffer.data(), 96);
              }),
              "expects f32 of shape 4x3, got f64 of shape 4x3");
  expectError(errorOf([&] {
                exec.setArgument(1, DType::F32, {5, 3}, buffer.data(), 40);
              }),
              "argument 1 'w' (param) needs 60 bytes, got a buffer of 40");
  expectError(
      errorOf([&] { exec.setArgument(1, DType::F32, {5, 3}, nullptr, 60); }),
      "data is a null pointer");
  expectError(
      errorOf([&] { exec.setArgument(4, DType::F32, {1}, buffer.data(), 4); }),
      "argument index 4 out of range (the plan has 4 arguments)");
  expectError(errorOf([&] {
                exec.setArgument("weights", DType::F32, {5, 3}, buffer.data(),
                                 60);
              }),
              "the plan has no argument named 'weights'");
  exec.setArgument("w", DType::F32, {5, 3}, buffer.data(), 60);
  EXPECT_TRUE(exec.isArgumentSet(1));
  expectError(errorOf([&] { exec.run(0); }),
              "executor: argument 0 'x' (data) has not been set");
  expectError(errorOf([&] { exec.getResult(0, buffer.data(), 8); }),
              "result 0 (f32 of shape scalar) has 4 bytes, got a buffer of 8");
  expectError(errorOf([&] { exec.getResult(2, buffer.data(), 4); }),
              "result index 2 out of range");
  expectError(errorOf([&] { exec.copyResultToArgument(0, 1); }),
              "result 0 (f32 of shape scalar) does not match argument 1 'w' "
              "(param) (f32 of shape 5x3)");
  try {
    exec.run(0);
    ADD_FAILURE() << "ran with unset arguments";
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
  }
}

TEST(ExecutorTest, KernelFailureNamesTheStepAndLeavesTheExecutorUsable) {
  auto plan = Plan::parse(mlpPlan().dump());
  Executor exec(plan, "cpu");
  MlpData data;
  data.labels.values[1] = 7;
  data.setAll(exec);
  try {
    exec.run(0);
    ADD_FAILURE() << "label 7 accepted";
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), ErrorCode::KernelFailure);
    EXPECT_EQ(std::string(e.what()),
              "steps[2] (cross_entropy at mlp.mlir:5:11): label 7 of row 1 is "
              "outside [0, 5)");
  }
  int64_t labels[4] = {4, 0, 2, 1};
  exec.setArgument(3, DType::I64, {4}, labels, sizeof labels);
  MlpData good;
  std::vector<double> logits;
  double want;
  good.reference(logits, want);
  EXPECT_NEAR(runLoss(exec), want, 1e-6);
}

TEST(ExecutorTest, PrefetchedArgumentsApplyAtTheNextStart) {
  auto plan = Plan::parse(mlpPlan().dump());
  Executor exec(plan, "cpu");
  MlpData first, second;
  second.x = randomTensor(DType::F32, {4, 3}, 9);
  first.setAll(exec);
  std::vector<double> logits;
  double wantFirst, wantSecond;
  first.reference(logits, wantFirst);
  second.reference(logits, wantSecond);

  // The prefetched input is for the step after the one in flight.
  exec.start(0);
  std::vector<uint8_t> bytes = encode(second.x);
  exec.prefetchArgument(0, DType::F32, {4, 3}, bytes.data(), bytes.size());
  exec.finish();
  float loss = 0;
  exec.getResult(0, &loss, sizeof loss);
  EXPECT_NEAR(loss, wantFirst, 1e-6);
  EXPECT_NEAR(runLoss(exec), wantSecond, 1e-6);

  // Misuse is an error, not a race.
  EXPECT_NE(errorOf([&] { exec.finish(); }).find("finish() without a start()"),
            std::string::npos);
  exec.start(1);
  EXPECT_NE(errorOf([&] { exec.start(2); }).find("while a step is in flight"),
            std::string::npos);
  exec.finish();
  EXPECT_NE(errorOf([&] {
              exec.prefetchArgument(0, DType::F32, {3, 4}, bytes.data(),
                                    bytes.size());
            }).find("expects"),
            std::string::npos);
}

TEST(ExecutorTest, DevicesByName) {
  auto plan = Plan::parse(mlpPlan().dump());
  std::vector<std::string> built = availableBackends();
  bool cudaBuilt = std::find(built.begin(), built.end(), "cuda") != built.end();
  std::string tpu = errorOf([&] { Executor exec(plan, "tpu"); });
  EXPECT_EQ(tpu, cudaBuilt
                     ? "unknown device 'tpu' (this build supports: cpu, cuda, "
                       "auto)"
                     : "unknown device 'tpu' (this build supports: cpu, auto)");
  bool cudaWorks = false;
  try {
    createBackend("cuda");
    cudaWorks = true;
    EXPECT_TRUE(cudaBuilt) << "created a CUDA backend in a build without one";
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), ErrorCode::BackendUnavailable);
    // Without the backend the error says so; with it but without a GPU it
    // says that no GPU is usable.
    std::string why = e.what();
    EXPECT_NE(why.find(cudaBuilt ? "no usable GPU"
                                 : "memopt was built without the CUDA backend"),
              std::string::npos)
        << why;
  }
  Executor autoExec(plan, "auto");
  EXPECT_EQ(autoExec.backend().name(), cudaWorks ? "cuda" : "cpu");
}

/// add -> relu in place -> reshape (alias) -> softmax in place -> mul by a
/// constant into a second arena tensor.
json inPlacePlan() {
  return json::parse(R"({
    "format": "memopt-plan", "version": 1, "function": "inplace",
    "arena_bytes": 88, "alignment": 64,
    "tensors": [
      {"id": 0, "dtype": "f32", "shape": [2, 3], "storage": "argument", "argument": 0},
      {"id": 1, "dtype": "f32", "shape": [3], "storage": "argument", "argument": 1},
      {"id": 2, "dtype": "f32", "shape": [2, 3], "storage": "arena", "offset": 0},
      {"id": 3, "dtype": "f32", "shape": [2, 3], "storage": "view", "of": 2},
      {"id": 4, "dtype": "f32", "shape": [3, 2], "storage": "view", "of": 3},
      {"id": 5, "dtype": "f32", "shape": [3, 2], "storage": "view", "of": 4},
      {"id": 6, "dtype": "f32", "shape": [3, 2], "storage": "constant", "values": [2.0]},
      {"id": 7, "dtype": "f32", "shape": [3, 2], "storage": "arena", "offset": 64}
    ],
    "arguments": [
      {"name": "a", "role": "data", "tensor": 0},
      {"name": "b", "role": "param", "tensor": 1}
    ],
    "results": [7, 5],
    "steps": [
      {"kernel": "add", "inputs": [0, 1], "outputs": [2]},
      {"kernel": "relu", "inputs": [2], "outputs": [3]},
      {"kernel": "reshape", "inputs": [3], "outputs": [4]},
      {"kernel": "softmax", "inputs": [4], "outputs": [5],
       "attrs": {"axis": -1, "causal": false}},
      {"kernel": "mul", "inputs": [5, 6], "outputs": [7]}
    ]
  })");
}

TEST(ExecutorTest, InPlaceStepsViewsAndConstants) {
  auto plan = Plan::parse(inPlacePlan().dump());
  Executor exec(plan, "cpu");
  EXPECT_EQ(exec.arenaBytes(), 88u);
  EXPECT_EQ(exec.persistentBytes(), 24u + 12u + 24u);
  EXPECT_EQ(exec.tensorData(5), exec.tensorData(2));
  float a[6] = {1, -2, 0.5f, -1, 3, 2}, b[3] = {0.5f, 1, -1};
  exec.setArgument(0, DType::F32, {2, 3}, a, sizeof a);
  exec.setArgument("b", DType::F32, {3}, b, sizeof b);
  exec.run(0);
  std::vector<double> t(6);
  for (int i = 0; i < 6; ++i)
    t[i] = std::max(0.0, double(a[i]) + b[i % 3]);
  std::vector<double> soft(6);
  for (int r = 0; r < 3; ++r) {
    double e0 = std::exp(t[2 * r]), e1 = std::exp(t[2 * r + 1]);
    soft[2 * r] = e0 / (e0 + e1);
    soft[2 * r + 1] = e1 / (e0 + e1);
  }
  float out[6], view[6];
  exec.getResult(0, out, sizeof out);
  exec.getResult(1, view, sizeof view);
  for (int i = 0; i < 6; ++i) {
    EXPECT_NEAR(view[i], soft[i], 1e-6) << i;
    EXPECT_NEAR(out[i], 2 * soft[i], 1e-6) << i;
  }
}

TEST(ExecutorTest, StateUpdatesThroughCopyResultToArgument) {
  json p = json::parse(R"({
    "format": "memopt-plan", "version": 1, "function": "bn",
    "arena_bytes": 320, "alignment": 64,
    "tensors": [
      {"id": 0, "dtype": "f32", "shape": [4, 2, 2, 2], "storage": "argument", "argument": 0},
      {"id": 1, "dtype": "f32", "shape": [2], "storage": "argument", "argument": 1},
      {"id": 2, "dtype": "f32", "shape": [2], "storage": "argument", "argument": 2},
      {"id": 3, "dtype": "f32", "shape": [2], "storage": "argument", "argument": 3},
      {"id": 4, "dtype": "f32", "shape": [2], "storage": "argument", "argument": 4},
      {"id": 5, "dtype": "f32", "shape": [4, 2, 2, 2], "storage": "arena", "offset": 0},
      {"id": 6, "dtype": "f32", "shape": [2], "storage": "arena", "offset": 128},
      {"id": 7, "dtype": "f32", "shape": [2], "storage": "arena", "offset": 192}
    ],
    "arguments": [
      {"name": "x", "role": "data", "tensor": 0},
      {"name": "gamma", "role": "param", "tensor": 1},
      {"name": "beta", "role": "param", "tensor": 2},
      {"name": "running_mean", "role": "state", "tensor": 3},
      {"name": "running_var", "role": "state", "tensor": 4}
    ],
    "results": [6, 7, 5],
    "steps": [
      {"kernel": "batch_norm", "inputs": [0, 1, 2, 3, 4], "outputs": [5, 6, 7],
       "attrs": {"epsilon": 1e-5, "momentum": 0.5}, "loc": "bn.mlir:2:3"}
    ]
  })");
  Executor exec(Plan::parse(p.dump()), "cpu");
  HostTensor x = randomTensor(DType::F32, {4, 2, 2, 2}, 77, 1, 3);
  std::vector<float> xs(x.values.begin(), x.values.end());
  float ones[2] = {1, 1}, zeros[2] = {0, 0};
  exec.setArgument(0, DType::F32, {4, 2, 2, 2}, xs.data(), 128);
  exec.setArgument(1, DType::F32, {2}, ones, 8);
  exec.setArgument(2, DType::F32, {2}, zeros, 8);
  exec.setArgument(3, DType::F32, {2}, zeros, 8);
  exec.setArgument(4, DType::F32, {2}, ones, 8);
  double mean[2] = {0, 0}, var[2] = {0, 0};
  for (int c = 0; c < 2; ++c) {
    for (int n = 0; n < 4; ++n)
      for (int i = 0; i < 4; ++i)
        mean[c] += x.values[(n * 2 + c) * 4 + i] / 16;
    for (int n = 0; n < 4; ++n)
      for (int i = 0; i < 4; ++i)
        var[c] += std::pow(x.values[(n * 2 + c) * 4 + i] - mean[c], 2) / 15;
  }
  double rm[2] = {0, 0}, rv[2] = {1, 1};
  for (int step = 0; step < 3; ++step) {
    exec.run(step);
    exec.copyResultToArgument(0, 3);
    exec.copyResultToArgument(1, 4);
    for (int c = 0; c < 2; ++c) {
      rm[c] = 0.5 * rm[c] + 0.5 * mean[c];
      rv[c] = 0.5 * rv[c] + 0.5 * var[c];
    }
  }
  float gotMean[2], gotVar[2];
  exec.getArgument(3, gotMean, 8);
  exec.getArgument(4, gotVar, 8);
  for (int c = 0; c < 2; ++c) {
    EXPECT_NEAR(gotMean[c], rm[c], 1e-5);
    EXPECT_NEAR(gotVar[c], rv[c], 1e-5);
  }
}

TEST(ExecutorTest, EmptyArenaAndNoSteps) {
  json p = json::parse(R"({
    "format": "memopt-plan", "version": 1, "function": "identity",
    "arena_bytes": 0, "alignment": 1,
    "tensors": [
      {"id": 0, "dtype": "i32", "shape": [3], "storage": "argument", "argument": 0},
      {"id": 1, "dtype": "i32", "shape": [3, 1], "storage": "view", "of": 0}
    ],
    "arguments": [{"name": "ids", "role": "data", "tensor": 0}],
    "results": [1],
    "steps": []
  })");
  Executor exec(Plan::parse(p.dump()), "cpu");
  EXPECT_EQ(exec.arenaBytes(), 0u);
  EXPECT_EQ(exec.backend().memoryStats().bytesInUse, 12u);
  int32_t ids[3] = {7, -1, 9}, out[3] = {0, 0, 0};
  exec.setArgument(0, DType::I32, {3}, ids, sizeof ids);
  exec.run(0);
  exec.getResult(0, out, sizeof out);
  EXPECT_EQ(out[0], 7);
  EXPECT_EQ(out[1], -1);
  EXPECT_EQ(out[2], 9);
}

} // namespace
