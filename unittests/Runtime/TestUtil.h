//===- TestUtil.h - helpers for the runtime unit tests ----------*- C++ -*-===//
//
// Kernel tests run every kernel the way a user would: a one-step plan built
// as JSON (inputs are data arguments, outputs arena tensors), loaded,
// validated and executed on a backend through the public API. Values travel
// as doubles and are encoded into the tensor's dtype, so one reference
// implementation in double serves every dtype.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_UNITTESTS_RUNTIME_TESTUTIL_H
#define MEMOPT_UNITTESTS_RUNTIME_TESTUTIL_H

#include "memopt/runtime/DType.h"
#include "memopt/runtime/Element.h"
#include "memopt/runtime/Error.h"
#include "memopt/runtime/Executor.h"
#include "memopt/runtime/Half.h"
#include "memopt/runtime/Plan.h"

#include "gtest/gtest.h"
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace memopt::runtime::test {

using nlohmann::json;

/// A tensor on the host with its logical values in double.
struct HostTensor {
  DType dtype = DType::F32;
  Shape shape;
  std::vector<double> values;
};

/// Rounds a value to what `dtype` stores (f16/bf16/f32 rounding).
inline double roundTo(DType dtype, double v) {
  switch (dtype) {
  case DType::F32:
    return static_cast<float>(v);
  case DType::F16:
    return halfBitsToFloat(floatToHalfBits(static_cast<float>(v)));
  case DType::BF16:
    return bfloat16BitsToFloat(floatToBFloat16Bits(static_cast<float>(v)));
  default:
    return v;
  }
}

inline std::vector<uint8_t> encode(const HostTensor &t) {
  size_t size = dtypeSize(t.dtype);
  std::vector<uint8_t> bytes(t.values.size() * size);
  for (size_t i = 0; i < t.values.size(); ++i)
    writeElement(bytes.data() + i * size, t.dtype, t.values[i]);
  return bytes;
}

inline std::vector<double> decode(DType dtype, const uint8_t *p, size_t count) {
  std::vector<double> out(count);
  size_t size = dtypeSize(dtype);
  for (size_t i = 0; i < count; ++i, p += size)
    out[i] = readElement(p, dtype);
  return out;
}

inline int64_t count(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// Uniform values in [lo, hi), already rounded to `dtype`, reproducibly.
inline HostTensor randomTensor(DType dtype, Shape shape, unsigned seed,
                               double lo = -1, double hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  HostTensor t{dtype, shape, {}};
  t.values.resize(count(shape));
  for (double &v : t.values)
    v = roundTo(dtype, dist(rng));
  return t;
}

/// Integer values in [lo, hi].
inline HostTensor randomInts(DType dtype, Shape shape, unsigned seed,
                             int64_t lo, int64_t hi) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> dist(lo, hi);
  HostTensor t{dtype, shape, {}};
  t.values.resize(count(shape));
  for (double &v : t.values)
    v = static_cast<double>(dist(rng));
  return t;
}

struct OutputSpec {
  DType dtype;
  Shape shape;
};

inline json tensorJson(int64_t id, DType dtype, const Shape &shape) {
  return json{
      {"id", id}, {"dtype", std::string(dtypeName(dtype))}, {"shape", shape}};
}

/// The JSON of a plan with one step: input i is data argument "in<i>"
/// (tensor i), output j is an arena tensor packed at 64-byte alignment.
inline json singleStepPlan(const std::string &kernel, const json &attrs,
                           const std::vector<HostTensor> &inputs,
                           const std::vector<OutputSpec> &outputs) {
  json tensors = json::array(), arguments = json::array(), ins = json::array(),
       outs = json::array(), results = json::array();
  int64_t id = 0;
  for (size_t i = 0; i < inputs.size(); ++i, ++id) {
    json t = tensorJson(id, inputs[i].dtype, inputs[i].shape);
    t["storage"] = "argument";
    t["argument"] = i;
    tensors.push_back(t);
    arguments.push_back(
        {{"name", "in" + std::to_string(i)}, {"role", "data"}, {"tensor", id}});
    ins.push_back(id);
  }
  uint64_t offset = 0;
  for (const OutputSpec &o : outputs) {
    json t = tensorJson(id, o.dtype, o.shape);
    t["storage"] = "arena";
    t["offset"] = offset;
    tensors.push_back(t);
    offset += (count(o.shape) * dtypeSize(o.dtype) + 63) / 64 * 64;
    outs.push_back(id);
    results.push_back(id);
    ++id;
  }
  json step = {{"kernel", kernel},
               {"inputs", ins},
               {"outputs", outs},
               {"attrs", attrs},
               {"loc", "test.mlir:1:1"}};
  return json{{"format", "memopt-plan"},
              {"version", 1},
              {"function", "test_" + kernel},
              {"arena_bytes", offset},
              {"alignment", 64},
              {"tensors", tensors},
              {"arguments", arguments},
              {"results", results},
              {"steps", json::array({step})}};
}

/// A small training step: logits = relu(linear(x, w, b)), loss =
/// cross_entropy(logits, labels). Arena: h [0, 80), r [128, 208),
/// loss [256, 260).
inline json mlpPlan() {
  return json::parse(R"({
    "format": "memopt-plan", "version": 1, "function": "mlp_train",
    "arena_bytes": 260, "alignment": 64,
    "tensors": [
      {"id": 0, "dtype": "f32", "shape": [4, 3], "storage": "argument", "argument": 0},
      {"id": 1, "dtype": "f32", "shape": [5, 3], "storage": "argument", "argument": 1},
      {"id": 2, "dtype": "f32", "shape": [5], "storage": "argument", "argument": 2},
      {"id": 3, "dtype": "i64", "shape": [4], "storage": "argument", "argument": 3},
      {"id": 4, "dtype": "f32", "shape": [4, 5], "storage": "arena", "offset": 0},
      {"id": 5, "dtype": "f32", "shape": [4, 5], "storage": "arena", "offset": 128},
      {"id": 6, "dtype": "f32", "shape": [], "storage": "arena", "offset": 256}
    ],
    "arguments": [
      {"name": "x", "role": "data", "tensor": 0},
      {"name": "w", "role": "param", "tensor": 1},
      {"name": "b", "role": "param", "tensor": 2},
      {"name": "labels", "role": "data", "tensor": 3}
    ],
    "results": [6, 5],
    "steps": [
      {"kernel": "linear", "inputs": [0, 1, 2], "outputs": [4], "attrs": {},
       "loc": "mlp.mlir:3:8"},
      {"kernel": "relu", "inputs": [4], "outputs": [5], "attrs": {},
       "loc": "mlp.mlir:4:8"},
      {"kernel": "cross_entropy", "inputs": [5, 3], "outputs": [6],
       "attrs": {}, "loc": "mlp.mlir:5:11"}
    ]
  })");
}

/// A training step of a linear regression: p = linear(x, W, b),
/// loss = mse_loss(p, t), its gradient (in place over p), dW = dp^T x,
/// db = sum_to(dp), and SGD updates (lr 0.1; weight decay 0.01 on W).
/// Results: loss, new W, new b; updates: W and b. Arguments: x [4, 3] and
/// t [4, 2] (data), W [2, 3] and b [2] (param).
inline json sgdTrainingPlan() {
  return json::parse(R"({
    "format": "memopt-plan", "version": 1, "function": "linear_train",
    "arena_bytes": 328, "alignment": 64,
    "tensors": [
      {"id": 0, "dtype": "f32", "shape": [4, 3], "storage": "argument", "argument": 0},
      {"id": 1, "dtype": "f32", "shape": [4, 2], "storage": "argument", "argument": 1},
      {"id": 2, "dtype": "f32", "shape": [2, 3], "storage": "argument", "argument": 2},
      {"id": 3, "dtype": "f32", "shape": [2], "storage": "argument", "argument": 3},
      {"id": 4, "dtype": "f32", "shape": [4, 2], "storage": "arena", "offset": 0},
      {"id": 5, "dtype": "f32", "shape": [], "storage": "arena", "offset": 64},
      {"id": 6, "dtype": "f32", "shape": [], "storage": "constant", "values": [1.0]},
      {"id": 7, "dtype": "f32", "shape": [4, 2], "storage": "view", "of": 4},
      {"id": 8, "dtype": "f32", "shape": [2, 3], "storage": "arena", "offset": 128},
      {"id": 9, "dtype": "f32", "shape": [2], "storage": "arena", "offset": 192},
      {"id": 10, "dtype": "f32", "shape": [2, 3], "storage": "arena", "offset": 256},
      {"id": 11, "dtype": "f32", "shape": [2], "storage": "arena", "offset": 320}
    ],
    "arguments": [
      {"name": "x", "role": "data", "tensor": 0},
      {"name": "t", "role": "data", "tensor": 1},
      {"name": "W", "role": "param", "tensor": 2},
      {"name": "b", "role": "param", "tensor": 3}
    ],
    "results": [5, 10, 11],
    "updates": [{"result": 1, "argument": 2}, {"result": 2, "argument": 3}],
    "steps": [
      {"kernel": "linear", "inputs": [0, 2, 3], "outputs": [4], "attrs": {},
       "loc": "lin.mlir:2:8"},
      {"kernel": "mse_loss", "inputs": [4, 1], "outputs": [5], "attrs": {},
       "loc": "lin.mlir:3:11"},
      {"kernel": "mse_loss_backward", "inputs": [6, 4, 1], "outputs": [7],
       "attrs": {}, "loc": "lin.mlir:3:11"},
      {"kernel": "matmul", "inputs": [7, 0], "outputs": [8],
       "attrs": {"transpose_a": true, "transpose_b": false},
       "loc": "lin.mlir:2:8"},
      {"kernel": "sum_to", "inputs": [7], "outputs": [9], "attrs": {},
       "loc": "lin.mlir:2:8"},
      {"kernel": "sgd_update", "inputs": [2, 8], "outputs": [10],
       "attrs": {"lr": 0.1, "weight_decay": 0.01}, "loc": "lin.mlir:1:1"},
      {"kernel": "sgd_update", "inputs": [3, 9], "outputs": [11],
       "attrs": {"lr": 0.1, "weight_decay": 0.0}, "loc": "lin.mlir:1:1"}
    ]
  })");
}

/// Adam on loss = mse_loss(w, target) with its moments and step count as
/// optimizer state: step' = step + 1, (w', m', v') = adam_update(w, grad,
/// m, v, step'). Results: loss, w', m', v', step'; updates: w, m, v, step.
/// Arguments: w [3] (param), target [3] (data), m, v [3] and step []
/// (optimizer_state).
inline json adamTrainingPlan() {
  return json::parse(R"({
    "format": "memopt-plan", "version": 1, "function": "adam_train",
    "arena_bytes": 332, "alignment": 64,
    "tensors": [
      {"id": 0, "dtype": "f32", "shape": [3], "storage": "argument", "argument": 0},
      {"id": 1, "dtype": "f32", "shape": [3], "storage": "argument", "argument": 1},
      {"id": 2, "dtype": "f32", "shape": [3], "storage": "argument", "argument": 2},
      {"id": 3, "dtype": "f32", "shape": [3], "storage": "argument", "argument": 3},
      {"id": 4, "dtype": "f32", "shape": [], "storage": "argument", "argument": 4},
      {"id": 5, "dtype": "f32", "shape": [], "storage": "constant", "values": [1]},
      {"id": 6, "dtype": "f32", "shape": [], "storage": "arena", "offset": 0},
      {"id": 7, "dtype": "f32", "shape": [3], "storage": "arena", "offset": 64},
      {"id": 8, "dtype": "f32", "shape": [], "storage": "arena", "offset": 128},
      {"id": 9, "dtype": "f32", "shape": [3], "storage": "arena", "offset": 192},
      {"id": 10, "dtype": "f32", "shape": [3], "storage": "arena", "offset": 256},
      {"id": 11, "dtype": "f32", "shape": [3], "storage": "arena", "offset": 320}
    ],
    "arguments": [
      {"name": "w", "role": "param", "tensor": 0},
      {"name": "target", "role": "data", "tensor": 1},
      {"name": "exp_avg", "role": "optimizer_state", "tensor": 2},
      {"name": "exp_avg_sq", "role": "optimizer_state", "tensor": 3},
      {"name": "step", "role": "optimizer_state", "tensor": 4}
    ],
    "results": [6, 9, 10, 11, 8],
    "updates": [{"result": 1, "argument": 0}, {"result": 2, "argument": 2},
                {"result": 3, "argument": 3}, {"result": 4, "argument": 4}],
    "steps": [
      {"kernel": "mse_loss", "inputs": [0, 1], "outputs": [6]},
      {"kernel": "mse_loss_backward", "inputs": [5, 0, 1], "outputs": [7]},
      {"kernel": "add", "inputs": [4, 5], "outputs": [8]},
      {"kernel": "adam_update", "inputs": [0, 7, 2, 3, 8],
       "outputs": [9, 10, 11],
       "attrs": {"lr": 0.1, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8,
                 "weight_decay": 0.0}}
    ]
  })");
}

/// Runs a plan whose arguments are `inputs` and whose results are `outputs`
/// (as singleStepPlan builds) on the CPU backend and returns every output's
/// values.
inline std::vector<std::vector<double>>
runPlan(const json &planJson, const std::vector<HostTensor> &inputs,
        const std::vector<OutputSpec> &outputs, uint64_t stepCounter = 0) {
  Executor exec(Plan::parse(planJson.dump()), "cpu");
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::vector<uint8_t> bytes = encode(inputs[i]);
    exec.setArgument(i, inputs[i].dtype, inputs[i].shape, bytes.data(),
                     bytes.size());
  }
  exec.run(stepCounter);
  std::vector<std::vector<double>> results;
  for (size_t j = 0; j < outputs.size(); ++j) {
    size_t n = count(outputs[j].shape);
    std::vector<uint8_t> bytes(n * dtypeSize(outputs[j].dtype));
    exec.getResult(j, bytes.data(), bytes.size());
    results.push_back(decode(outputs[j].dtype, bytes.data(), n));
  }
  return results;
}

/// Runs one kernel on the CPU backend and returns every output's values.
inline std::vector<std::vector<double>>
runOp(const std::string &kernel, const json &attrs,
      const std::vector<HostTensor> &inputs,
      const std::vector<OutputSpec> &outputs, uint64_t stepCounter = 0) {
  return runPlan(singleStepPlan(kernel, attrs, inputs, outputs), inputs,
                 outputs, stepCounter);
}

/// Single-output shorthand.
inline std::vector<double> runOp1(const std::string &kernel, const json &attrs,
                                  const std::vector<HostTensor> &inputs,
                                  OutputSpec output, uint64_t stepCounter = 0) {
  return runOp(kernel, attrs, inputs, {output}, stepCounter)[0];
}

/// A one-kernel plan whose output `o` is written over input `i` (as a view
/// of it) for every pair (o, i) in `aliases`. Steps write only arena
/// tensors, so each input (data argument "in<i>") is first copied into the
/// arena by a reshape step.
inline json inPlacePlan(const std::string &kernel, const json &attrs,
                        const std::vector<HostTensor> &inputs,
                        const std::vector<OutputSpec> &outputs,
                        const std::vector<std::pair<size_t, size_t>> &aliases) {
  json tensors = json::array(), arguments = json::array(),
       steps = json::array(), ins = json::array(), outs = json::array();
  const int64_t n = static_cast<int64_t>(inputs.size());
  uint64_t offset = 0;
  auto arenaTensor = [&](int64_t id, DType dtype, const Shape &shape) {
    json t = tensorJson(id, dtype, shape);
    t["storage"] = "arena";
    t["offset"] = offset;
    offset += (count(shape) * dtypeSize(dtype) + 63) / 64 * 64;
    return t;
  };
  for (int64_t i = 0; i < n; ++i) {
    json t = tensorJson(i, inputs[i].dtype, inputs[i].shape);
    t["storage"] = "argument";
    t["argument"] = i;
    tensors.push_back(t);
    arguments.push_back(
        {{"name", "in" + std::to_string(i)}, {"role", "data"}, {"tensor", i}});
  }
  for (int64_t i = 0; i < n; ++i) {
    tensors.push_back(arenaTensor(n + i, inputs[i].dtype, inputs[i].shape));
    steps.push_back(
        {{"kernel", "reshape"}, {"inputs", {i}}, {"outputs", {n + i}}});
    ins.push_back(n + i);
  }
  for (size_t o = 0; o < outputs.size(); ++o) {
    int64_t id = 2 * n + static_cast<int64_t>(o);
    json t = arenaTensor(id, outputs[o].dtype, outputs[o].shape);
    for (const auto &[out, in] : aliases)
      if (out == o) {
        t = tensorJson(id, outputs[o].dtype, outputs[o].shape);
        t["storage"] = "view";
        t["of"] = n + static_cast<int64_t>(in);
      }
    tensors.push_back(t);
    outs.push_back(id);
  }
  steps.push_back({{"kernel", kernel},
                   {"inputs", ins},
                   {"outputs", outs},
                   {"attrs", attrs},
                   {"loc", "test.mlir:1:1"}});
  return json{{"format", "memopt-plan"},
              {"version", 1},
              {"function", "in_place_" + kernel},
              {"arena_bytes", offset},
              {"alignment", 64},
              {"tensors", tensors},
              {"arguments", arguments},
              {"results", outs},
              {"steps", steps}};
}

/// Like runOp, with the kernel's outputs over its inputs as in inPlacePlan.
inline std::vector<std::vector<double>>
runOpInPlace(const std::string &kernel, const json &attrs,
             const std::vector<HostTensor> &inputs,
             const std::vector<OutputSpec> &outputs,
             const std::vector<std::pair<size_t, size_t>> &aliases) {
  json plan = inPlacePlan(kernel, attrs, inputs, outputs, aliases);
  Executor exec(Plan::parse(plan.dump()), "cpu");
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::vector<uint8_t> bytes = encode(inputs[i]);
    exec.setArgument(i, inputs[i].dtype, inputs[i].shape, bytes.data(),
                     bytes.size());
  }
  exec.run(0);
  std::vector<std::vector<double>> results;
  for (size_t j = 0; j < outputs.size(); ++j) {
    size_t numel = count(outputs[j].shape);
    std::vector<uint8_t> bytes(numel * dtypeSize(outputs[j].dtype));
    exec.getResult(j, bytes.data(), bytes.size());
    results.push_back(decode(outputs[j].dtype, bytes.data(), numel));
  }
  return results;
}

/// The message of the Error `f` throws (fails the test if none).
template <typename F> std::string errorOf(F &&f) {
  try {
    f();
  } catch (const Error &e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a memopt::runtime::Error";
  return "";
}

/// Per-element |actual - expected| <= atol + rtol * |expected|, reporting
/// the first mismatches and the largest error.
inline ::testing::AssertionResult close(const std::vector<double> &actual,
                                        const std::vector<double> &expected,
                                        double atol, double rtol) {
  if (actual.size() != expected.size())
    return ::testing::AssertionFailure()
           << "size " << actual.size() << " != " << expected.size();
  size_t bad = 0;
  double worst = 0;
  ::testing::AssertionResult failure = ::testing::AssertionFailure();
  for (size_t i = 0; i < actual.size(); ++i) {
    double err = std::fabs(actual[i] - expected[i]);
    bool nanMatch = std::isnan(actual[i]) && std::isnan(expected[i]);
    if (!nanMatch && !(err <= atol + rtol * std::fabs(expected[i]))) {
      if (bad < 5)
        failure << "\n  [" << i << "] got " << actual[i] << ", want "
                << expected[i];
      ++bad;
      worst = std::max(worst, err);
    }
  }
  if (!bad)
    return ::testing::AssertionSuccess();
  return failure << "\n  " << bad << " of " << actual.size()
                 << " elements differ; largest error " << worst;
}

/// Tolerances for comparing a kernel computing in `dtype` with a double
/// reference on the same (rounded) inputs.
struct Tolerance {
  double atol, rtol;
};
inline Tolerance toleranceFor(DType dtype) {
  switch (dtype) {
  case DType::F64:
    return {1e-12, 1e-11};
  case DType::F32:
    return {1e-5, 1e-5};
  case DType::F16:
    return {2e-3, 2e-3};
  case DType::BF16:
    return {1.6e-2, 1.6e-2};
  default:
    return {0, 0};
  }
}

} // namespace memopt::runtime::test

#endif // MEMOPT_UNITTESTS_RUNTIME_TESTUTIL_H
