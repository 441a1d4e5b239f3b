//===- PlanFuzzTest.cpp - corrupt plans never crash the runtime -----------===//
//
// Deterministic mutation testing of the loader and executor: every prefix
// of a valid plan, and thousands of plans with fields replaced by hostile
// values (negative, zero, huge, wrong type), must either be refused with an
// InvalidPlan error or load and run (on data within the plan's types)
// without touching memory outside the buffers. Run under ASan/UBSan this is
// a sanitizer check too.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <functional>

using namespace memopt::runtime;
using namespace memopt::runtime::test;

namespace {

/// Loads `text`; if it is a valid plan, runs it once with every argument
/// filled with small values (ids in range) and reads every result.
/// Returns whether the plan was accepted.
bool loadAndRun(const std::string &text) {
  std::shared_ptr<const Plan> plan;
  try {
    plan = Plan::parse(text);
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidPlan) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("plan: ", 0), 0u) << e.what();
    return false;
  }
  // Arenas of accepted mutants are small (the mutator never grows them past
  // a few MiB), so running is cheap.
  if (plan->arenaBytes > (64u << 20))
    return true;
  uint64_t argumentBytes = 0;
  for (size_t i = 0; i < plan->arguments.size(); ++i)
    argumentBytes += plan->argumentTensor(i).bytes;
  if (argumentBytes > (64u << 20))
    return true;
  Executor exec(plan, "cpu");
  for (size_t i = 0; i < plan->arguments.size(); ++i) {
    const TensorInfo &t = plan->argumentTensor(i);
    HostTensor h{t.dtype, t.shape, std::vector<double>(t.numElements, 0.0)};
    for (int64_t e = 0; e < t.numElements; ++e)
      h.values[e] = isFloatDType(t.dtype) ? 0.25 * (e % 7) - 0.5 : 0;
    std::vector<uint8_t> bytes = encode(h);
    exec.setArgument(i, t.dtype, t.shape, bytes.data(), bytes.size());
  }
  try {
    exec.run(1);
    exec.applyUpdates();
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), ErrorCode::KernelFailure) << e.what();
  }
  for (size_t r = 0; r < plan->results.size(); ++r) {
    std::vector<uint8_t> out(plan->resultTensor(r).bytes);
    exec.getResult(r, out.data(), out.size());
  }
  return true;
}

TEST(PlanFuzzTest, EveryPrefixIsRefused) {
  std::string text = mlpPlan().dump();
  for (size_t n = 0; n < text.size(); ++n)
    EXPECT_FALSE(loadAndRun(text.substr(0, n))) << n;
  EXPECT_TRUE(loadAndRun(text));
}

/// Visits every number, string and array leaf of `j` by JSON pointer.
void leaves(const json &j, const json::json_pointer &at,
            std::vector<json::json_pointer> &out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      leaves(it.value(), at / it.key(), out);
    out.push_back(at);
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i)
      leaves(j[i], at / i, out);
    out.push_back(at);
  } else {
    out.push_back(at);
  }
}

TEST(PlanFuzzTest, HostileValuesAreRefusedOrRunSafely) {
  const std::vector<json> hostile = {json(-1),
                                     json(0),
                                     json(1),
                                     json(2),
                                     json(3),
                                     json(4),
                                     json(5),
                                     json(6),
                                     json(7),
                                     json(63),
                                     json(64),
                                     json(65),
                                     json(128),
                                     json(256),
                                     json(1ll << 31),
                                     json(1ll << 32),
                                     json(INT64_MAX),
                                     json(INT64_MIN),
                                     json(UINT64_MAX),
                                     json(0.5),
                                     json(1e308),
                                     json(true),
                                     json(nullptr),
                                     json("f16"),
                                     json("i32"),
                                     json("view"),
                                     json("constant"),
                                     json("arena"),
                                     json::array(),
                                     json::array({1}),
                                     json::array({4, 5}),
                                     json::array({0, 0}),
                                     json::array({-1, 2}),
                                     json::object()};
  std::vector<json> bases = {mlpPlan()};
  // A second base with views, constants and every attribute kind.
  bases.push_back(json::parse(R"({
    "format": "memopt-plan", "version": 1, "function": "f",
    "arena_bytes": 512, "alignment": 64,
    "tensors": [
      {"id": 0, "dtype": "f32", "shape": [1, 2, 4, 4], "storage": "argument", "argument": 0},
      {"id": 1, "dtype": "f32", "shape": [3, 2, 3, 3], "storage": "argument", "argument": 1},
      {"id": 2, "dtype": "f32", "shape": [1, 3, 2, 2], "storage": "arena", "offset": 0},
      {"id": 3, "dtype": "f32", "shape": [1, 3, 1, 1], "storage": "arena", "offset": 64},
      {"id": 4, "dtype": "f32", "shape": [1, 3], "storage": "view", "of": 3},
      {"id": 5, "dtype": "i64", "shape": [2], "storage": "constant", "values": [0, 0]},
      {"id": 6, "dtype": "f32", "shape": [2, 3], "storage": "arena", "offset": 128},
      {"id": 7, "dtype": "f32", "shape": [3, 2], "storage": "arena", "offset": 192},
      {"id": 8, "dtype": "f32", "shape": [2, 2], "storage": "arena", "offset": 256}
    ],
    "arguments": [
      {"name": "x", "role": "data", "tensor": 0},
      {"name": "w", "role": "param", "tensor": 1}
    ],
    "results": [8, 4],
    "steps": [
      {"kernel": "conv2d", "inputs": [0, 1], "outputs": [2],
       "attrs": {"strides": [2, 2], "padding": [1, 1], "dilations": [1, 1], "groups": 1}},
      {"kernel": "max_pool2d", "inputs": [2], "outputs": [3],
       "attrs": {"kernel_size": [2, 2], "strides": null, "padding": [0, 0]}},
      {"kernel": "embedding", "inputs": [4, 5], "outputs": [6]},
      {"kernel": "transpose", "inputs": [6], "outputs": [7],
       "attrs": {"permutation": [1, 0]}},
      {"kernel": "matmul", "inputs": [7, 7], "outputs": [8],
       "attrs": {"transpose_a": true, "transpose_b": false}}
    ]
  })"));
  // A third with backward and optimizer kernels, optimizer state and
  // updates (results that are views of arguments among them).
  bases.push_back(json::parse(R"({
    "format": "memopt-plan", "version": 1, "function": "g",
    "arena_bytes": 1284, "alignment": 64,
    "tensors": [
      {"id": 0, "dtype": "f32", "shape": [1, 2, 4, 4], "storage": "argument", "argument": 0},
      {"id": 1, "dtype": "f32", "shape": [3, 2, 3, 3], "storage": "argument", "argument": 1},
      {"id": 2, "dtype": "f32", "shape": [3, 2, 3, 3], "storage": "argument", "argument": 2},
      {"id": 3, "dtype": "f32", "shape": [], "storage": "argument", "argument": 3},
      {"id": 4, "dtype": "f32", "shape": [1, 3, 2, 2], "storage": "arena", "offset": 0},
      {"id": 5, "dtype": "f32", "shape": [1, 2, 4, 4], "storage": "arena", "offset": 64},
      {"id": 6, "dtype": "f32", "shape": [3, 2, 3, 3], "storage": "arena", "offset": 192},
      {"id": 7, "dtype": "f32", "shape": [3, 2, 3, 3], "storage": "arena", "offset": 448},
      {"id": 8, "dtype": "f32", "shape": [3, 2, 3, 3], "storage": "view", "of": 6},
      {"id": 9, "dtype": "f32", "shape": [], "storage": "constant", "values": [2]},
      {"id": 10, "dtype": "f32", "shape": [3, 2, 3, 3], "storage": "arena", "offset": 704},
      {"id": 11, "dtype": "f32", "shape": [1, 2, 2, 2], "storage": "arena", "offset": 960},
      {"id": 12, "dtype": "f32", "shape": [1, 2, 4, 4], "storage": "arena", "offset": 1024},
      {"id": 13, "dtype": "f32", "shape": [3, 1, 1], "storage": "arena", "offset": 1152},
      {"id": 14, "dtype": "i64", "shape": [4], "storage": "constant", "values": [1, 0, 2, 1]},
      {"id": 15, "dtype": "f32", "shape": [3, 3], "storage": "arena", "offset": 1216},
      {"id": 16, "dtype": "f32", "shape": [4, 3], "storage": "view", "of": 4},
      {"id": 17, "dtype": "f32", "shape": [], "storage": "arena", "offset": 1280},
      {"id": 18, "dtype": "f32", "shape": [3, 18], "storage": "view", "of": 2}
    ],
    "arguments": [
      {"name": "x", "role": "data", "tensor": 0},
      {"name": "w", "role": "param", "tensor": 1},
      {"name": "m", "role": "optimizer_state", "tensor": 2},
      {"name": "t", "role": "optimizer_state", "tensor": 3}
    ],
    "results": [7, 8, 18, 17, 12, 13, 15],
    "updates": [{"result": 0, "argument": 1}, {"result": 1, "argument": 2},
                {"result": 3, "argument": 3}],
    "steps": [
      {"kernel": "conv2d", "inputs": [0, 1], "outputs": [4],
       "attrs": {"strides": [2, 2], "padding": [1, 1], "dilations": [1, 1], "groups": 1}},
      {"kernel": "conv2d_backward_input", "inputs": [4, 1], "outputs": [5],
       "attrs": {"strides": [2, 2], "padding": [1, 1], "dilations": [1, 1], "groups": 1}},
      {"kernel": "conv2d_backward_weight", "inputs": [4, 0], "outputs": [6],
       "attrs": {"strides": [2, 2], "padding": [1, 1], "dilations": [1, 1], "groups": 1}},
      {"kernel": "add", "inputs": [3, 9], "outputs": [17]},
      {"kernel": "adam_update", "inputs": [1, 6, 2, 2, 17], "outputs": [7, 8, 10],
       "attrs": {"lr": 0.1, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.0}},
      {"kernel": "max_pool2d", "inputs": [5], "outputs": [11],
       "attrs": {"kernel_size": [2, 2], "strides": null, "padding": [0, 0]}},
      {"kernel": "max_pool2d_backward", "inputs": [11, 5], "outputs": [12],
       "attrs": {"kernel_size": [2, 2], "strides": [2, 2], "padding": [0, 0]}},
      {"kernel": "sum_to", "inputs": [4], "outputs": [13]},
      {"kernel": "embedding_backward", "inputs": [16, 14], "outputs": [15]}
    ]
  })"));
  // A fourth with mixed precision and dynamic loss scaling: casts,
  // found_inf, unscale in place, update_loss_scale, select and optimizer
  // updates with a skip flag, the scale and tracker as optimizer state.
  bases.push_back(json::parse(R"({
    "format": "memopt-plan", "version": 1, "function": "amp",
    "arena_bytes": 656, "alignment": 64,
    "tensors": [
      {"id": 0, "dtype": "f32", "shape": [4], "storage": "argument", "argument": 0},
      {"id": 1, "dtype": "f16", "shape": [4], "storage": "argument", "argument": 1},
      {"id": 2, "dtype": "f32", "shape": [], "storage": "argument", "argument": 2},
      {"id": 3, "dtype": "i32", "shape": [], "storage": "argument", "argument": 3},
      {"id": 4, "dtype": "f32", "shape": [], "storage": "argument", "argument": 4},
      {"id": 5, "dtype": "f32", "shape": [], "storage": "arena", "offset": 0},
      {"id": 6, "dtype": "f32", "shape": [4], "storage": "arena", "offset": 64},
      {"id": 7, "dtype": "f32", "shape": [4], "storage": "view", "of": 6},
      {"id": 8, "dtype": "f32", "shape": [4], "storage": "arena", "offset": 128},
      {"id": 9, "dtype": "f32", "shape": [], "storage": "arena", "offset": 192},
      {"id": 10, "dtype": "i32", "shape": [], "storage": "arena", "offset": 256},
      {"id": 11, "dtype": "f32", "shape": [], "storage": "arena", "offset": 320},
      {"id": 12, "dtype": "f32", "shape": [], "storage": "constant", "values": [2]},
      {"id": 13, "dtype": "f32", "shape": [], "storage": "arena", "offset": 384},
      {"id": 14, "dtype": "f16", "shape": [4], "storage": "arena", "offset": 448},
      {"id": 15, "dtype": "f32", "shape": [4], "storage": "arena", "offset": 512},
      {"id": 16, "dtype": "f32", "shape": [4], "storage": "arena", "offset": 576},
      {"id": 17, "dtype": "f32", "shape": [4], "storage": "arena", "offset": 640}
    ],
    "arguments": [
      {"name": "w", "role": "param", "tensor": 0},
      {"name": "g16", "role": "data", "tensor": 1},
      {"name": "scale", "role": "optimizer_state", "tensor": 2},
      {"name": "tracker", "role": "optimizer_state", "tensor": 3},
      {"name": "t", "role": "optimizer_state", "tensor": 4}
    ],
    "results": [14, 9, 10, 13, 17],
    "updates": [{"result": 1, "argument": 2}, {"result": 2, "argument": 3},
                {"result": 3, "argument": 4}],
    "steps": [
      {"kernel": "found_inf", "inputs": [1, 0], "outputs": [5]},
      {"kernel": "cast", "inputs": [1], "outputs": [6]},
      {"kernel": "unscale", "inputs": [6, 2], "outputs": [7]},
      {"kernel": "sgd_update", "inputs": [0, 7, 5], "outputs": [8],
       "attrs": {"lr": 0.1, "weight_decay": 0.0}},
      {"kernel": "update_loss_scale", "inputs": [2, 3, 5], "outputs": [9, 10],
       "attrs": {"growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 3}},
      {"kernel": "add", "inputs": [4, 12], "outputs": [11]},
      {"kernel": "select", "inputs": [5, 4, 11], "outputs": [13]},
      {"kernel": "cast", "inputs": [8], "outputs": [14]},
      {"kernel": "adam_update", "inputs": [8, 7, 7, 7, 11, 5], "outputs": [15, 16, 17],
       "attrs": {"lr": 0.1, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.0}}
    ]
  })"));
  // The second base is itself valid and runs.
  EXPECT_EQ(errorOf([&] {
              Plan::parse(bases[1].dump());
              throw Error(ErrorCode::Internal, "accepted");
            }),
            "accepted");
  ASSERT_TRUE(loadAndRun(bases[1].dump()));
  ASSERT_TRUE(loadAndRun(bases[2].dump()));
  ASSERT_TRUE(loadAndRun(bases[3].dump()));
  int accepted = 0, refused = 0;
  std::mt19937 rng(2024);
  for (const json &base : bases) {
    std::vector<json::json_pointer> paths;
    leaves(base, json::json_pointer(), paths);
    for (const json::json_pointer &path : paths) {
      if (path.empty())
        continue;
      for (const json &value : hostile) {
        json mutant = base;
        mutant[path] = value;
        (loadAndRun(mutant.dump()) ? accepted : refused)++;
      }
      // And deleting the entry altogether.
      json mutant = base;
      mutant[path.parent_pointer()].is_object()
          ? (void)mutant[path.parent_pointer()].erase(path.back())
          : (void)mutant[path.parent_pointer()].erase(
                static_cast<size_t>(std::stoul(path.back())));
      (loadAndRun(mutant.dump()) ? accepted : refused)++;
    }
    // Pairs of random mutations.
    for (int i = 0; i < 2000; ++i) {
      json mutant = base;
      for (int k = 0; k < 2; ++k) {
        const json::json_pointer &path = paths[rng() % (paths.size() - 1)];
        const json &value = hostile[rng() % hostile.size()];
        // The first mutation may have removed the second one's parent.
        try {
          mutant[path] = value;
        } catch (const json::exception &) {
        }
      }
      (loadAndRun(mutant.dump()) ? accepted : refused)++;
    }
  }
  // Both outcomes occur, so the mutator exercises the loader and the
  // kernels alike.
  EXPECT_GT(accepted, 100);
  EXPECT_GT(refused, 1000);
}

} // namespace
