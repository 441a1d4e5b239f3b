//===- PlanValidationTest.cpp - the plan loader refuses bad plans ---------===//
//
// One test per rule of docs/plan-format.md's "Validation" section (and the
// kernel rules): each mutates a valid plan and checks that loading fails
// with an InvalidPlan error whose message names the offending entry.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <cmath>
#include <cstdio>
#include <fstream>

using namespace memopt::runtime;
using namespace memopt::runtime::test;

namespace {

/// Loads `text` and expects an InvalidPlan error containing `expected`.
void expectRefused(const std::string &text, const std::string &expected) {
  try {
    Plan::parse(text);
    ADD_FAILURE() << "plan accepted; expected: " << expected;
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidPlan);
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos)
        << "message: " << e.what() << "\nexpected to contain: " << expected;
  }
}
void expectRefused(const json &plan, const std::string &expected) {
  expectRefused(plan.dump(), expected);
}

TEST(PlanValidationTest, AcceptsTheReferencePlan) {
  auto plan = Plan::parse(mlpPlan().dump());
  EXPECT_EQ(plan->function, "mlp_train");
  EXPECT_EQ(plan->arenaBytes, 260u);
  ASSERT_EQ(plan->tensors.size(), 7u);
  EXPECT_EQ(plan->tensors[5].offset, 128u);
  EXPECT_EQ(plan->tensors[5].bytes, 80u);
  EXPECT_EQ(plan->arguments[3].name, "labels");
  EXPECT_EQ(plan->arguments[1].role, ArgumentRole::Param);
  ASSERT_EQ(plan->steps.size(), 3u);
  EXPECT_EQ(plan->steps[2].kernel, KernelKind::CrossEntropy);
  EXPECT_EQ(plan->describeStep(1), "steps[1] (relu at mlp.mlir:4:8)");
  EXPECT_EQ(plan->findArgument("w"), 1);
  EXPECT_EQ(plan->findArgument("nope"), -1);
}

/// The reference plan as version 2: tensor 6 (the loss, written by step 2)
/// reuses tensor 4's bytes, which step 1 reads last.
json plannedMlpPlan() {
  json p = mlpPlan();
  p["version"] = 2;
  p["tensors"][4]["live"] = {0, 1};
  p["tensors"][5]["live"] = {1, 3};
  p["tensors"][6]["live"] = {2, 3};
  p["tensors"][6]["offset"] = 0;
  return p;
}

TEST(PlanValidationTest, Version2SharesBytesBetweenDisjointLifetimes) {
  auto plan = Plan::parse(plannedMlpPlan().dump());
  EXPECT_EQ(plan->tensors[6].offset, 0u);
  EXPECT_EQ(plan->tensors[4].liveLast, 1);
  // Same results as the version 1 plan with its own slice per tensor.
  json v1 = mlpPlan();
  std::vector<double> losses;
  for (const json &p : {v1, plannedMlpPlan()}) {
    Executor executor(Plan::parse(p.dump()), "cpu");
    std::vector<float> x(12, 0.5f), w(15, 0.25f), b(5, 0.1f);
    std::vector<int64_t> labels = {0, 1, 2, 3};
    executor.setArgument(0, DType::F32, {4, 3}, x.data(), 48);
    executor.setArgument(1, DType::F32, {5, 3}, w.data(), 60);
    executor.setArgument(2, DType::F32, {5}, b.data(), 20);
    executor.setArgument(3, DType::I64, {4}, labels.data(), 32);
    executor.run(0);
    float loss;
    executor.getResult(0, &loss, 4);
    losses.push_back(loss);
  }
  EXPECT_EQ(losses[0], losses[1]);
}

TEST(PlanValidationTest, Version2Lifetimes) {
  json p = plannedMlpPlan();
  p["tensors"][5]["offset"] = 0;
  expectRefused(p, "plan: tensors[5]: arena slice [0, 80) overlaps tensors[4] "
                   "[0, 80) while both are live (steps 0-1 and 1-3)");
  p = plannedMlpPlan();
  p["tensors"][4]["live"] = {0, 0};
  expectRefused(p, "plan: steps[1] (relu at mlp.mlir:4:8): tensor 4 is used "
                   "outside its lifetime "
                   "(steps 0-0)");
  p = plannedMlpPlan();
  p["tensors"][6]["live"] = {2, 2};
  expectRefused(p, "plan: results[0]: tensor 6 must stay live after the last "
                   "step (its live range ends at step 2 of 3)");
  p = plannedMlpPlan();
  p["tensors"][4]["live"] = {2, 1};
  expectRefused(p, "plan: tensors[4]: field 'live' must be [first, last] step "
                   "indices with 0 <= first <= last, got [2,1]");
  p = plannedMlpPlan();
  p["tensors"][4].erase("live");
  expectRefused(p, "plan: tensors[4]: ");
}

TEST(PlanValidationTest, StepWorkspaces) {
  // Step 2's workspace may reuse tensor 4's bytes (dead after step 1).
  json p = plannedMlpPlan();
  p["steps"][2]["workspace"] = {{"offset", 64}, {"bytes", 64}};
  auto plan = Plan::parse(p.dump());
  EXPECT_EQ(plan->steps[2].workspaceOffset, 64u);
  EXPECT_EQ(plan->steps[2].workspaceBytes, 64u);
  EXPECT_EQ(plan->steps[1].workspaceBytes, 0u);
  EXPECT_EQ(liveArenaBytesPerStep(*plan)[2], 80u + 4u + 64u);

  p["steps"][2]["workspace"]["offset"] = 128;
  expectRefused(p, "plan: steps[2] workspace: arena slice [128, 192) overlaps "
                   "tensors[5] [128, 208) while both are live (steps 1-3 and "
                   "2-2)");
  p["steps"][2]["workspace"] = {{"offset", 64}, {"bytes", 0}};
  expectRefused(p, "plan: steps[2]: workspace: field 'bytes' must be > 0");
  p["steps"][2]["workspace"] = {{"offset", 32}, {"bytes", 16}};
  expectRefused(p, "plan: steps[2]: workspace: offset 32 is not a multiple of "
                   "the alignment 64");
  p["steps"][2]["workspace"] = {{"offset", 256}, {"bytes", 64}};
  expectRefused(p, "plan: steps[2]: workspace: arena slice [256, 320) exceeds "
                   "arena_bytes 260");
  p["steps"][2]["workspace"] = {{"offset", 64}};
  expectRefused(p, "plan: steps[2]: workspace: missing field 'bytes'");
  p["steps"][2]["workspace"] = 64;
  expectRefused(p, "plan: steps[2]: workspace: expected an object");
  // Version 1 plans have no tensor lifetimes: a workspace may not share a
  // tensor's bytes.
  json v1 = mlpPlan();
  v1["steps"][2]["workspace"] = {{"offset", 64}, {"bytes", 64}};
  expectRefused(v1, "plan: steps[2] workspace: arena slice [64, 128) overlaps "
                    "tensors[4] [0, 80) (version 1 plans carry no lifetimes");
}

TEST(PlanValidationTest, Syntax) {
  std::string text = mlpPlan().dump();
  expectRefused(text.substr(0, text.size() / 2),
                "plan: invalid JSON: parse error");
  expectRefused(text.substr(0, text.size() / 2), "truncated");
  expectRefused(text.substr(0, text.size() - 1), "truncated");
  expectRefused(std::string(), "plan: invalid JSON");
  std::string corrupt = text;
  size_t colon = text.find(':');
  corrupt[colon] = '#';
  expectRefused(corrupt, "plan: invalid JSON: parse error at line 1, column " +
                             std::to_string(colon + 1));
  std::string message = errorOf([&] { Plan::parse(corrupt); });
  EXPECT_EQ(message.find("truncated"), std::string::npos) << message;
  expectRefused(std::string("[1, 2]"), "plan: expected an object, got array");
  expectRefused(std::string("{\"format\": \"\xff\"}"), "plan: invalid JSON");
}

TEST(PlanValidationTest, FormatAndVersion) {
  json p = mlpPlan();
  p["version"] = 3;
  expectRefused(
      p, "plan: unsupported version 3 (this runtime reads versions 1 to 2)");
  p["version"] = 0;
  expectRefused(
      p, "plan: unsupported version 0 (this runtime reads versions 1 to 2)");
  p["version"] = "1";
  expectRefused(p,
                "plan: field 'version' must be an integer, got string \"1\"");
  p = mlpPlan();
  p["format"] = "onnx";
  expectRefused(
      p, "plan: field 'format' must be \"memopt-plan\", got string \"onnx\"");
  p = mlpPlan();
  p.erase("format");
  expectRefused(p, "plan: missing field 'format'");
}

TEST(PlanValidationTest, MissingAndMistypedFields) {
  json p = mlpPlan();
  p.erase("arena_bytes");
  expectRefused(p, "plan: missing field 'arena_bytes'");
  p = mlpPlan();
  p["tensors"][4].erase("offset");
  expectRefused(p, "plan: tensors[4]: missing field 'offset'");
  p = mlpPlan();
  p["steps"][1].erase("inputs");
  expectRefused(
      p, "plan: steps[1] (relu at mlp.mlir:4:8): missing field 'inputs'");
  p = mlpPlan();
  p["arguments"][2].erase("role");
  expectRefused(p, "plan: arguments[2]: missing field 'role'");
  p = mlpPlan();
  p["tensors"][0]["shape"] = "4x3";
  expectRefused(p,
                "plan: tensors[0]: field 'shape' must be an array, got string");
  p = mlpPlan();
  p["tensors"][0]["shape"] = {4, 3.5};
  expectRefused(
      p,
      "plan: tensors[0]: field 'shape[1]' must be an integer, got number 3.5");
  p = mlpPlan();
  p["arena_bytes"] = -1;
  expectRefused(p, "plan: field 'arena_bytes' must be >= 0, got -1");
  p = mlpPlan();
  p["steps"] = json::object();
  expectRefused(p, "plan: field 'steps' must be an array, got object");
  p = mlpPlan();
  p["steps"][0]["attrs"] = json::array();
  expectRefused(p, "plan: steps[0] (linear at mlp.mlir:3:8): field 'attrs' "
                   "must be an object");
  p = mlpPlan();
  p["tensors"][3]["dtype"] = "f8";
  expectRefused(p, "plan: tensors[3]: unknown dtype \"f8\"");
  p = mlpPlan();
  p["tensors"][4]["storage"] = "heap";
  expectRefused(p, "plan: tensors[4]: field 'storage' must be \"arena\", "
                   "\"argument\", \"view\" or \"constant\", got \"heap\"");
  p = mlpPlan();
  p["arguments"][0]["role"] = "input";
  expectRefused(p, "plan: arguments[0]: field 'role' must be \"param\", "
                   "\"state\", \"optimizer_state\" or \"data\", got "
                   "\"input\"");
}

TEST(PlanValidationTest, IdsInRange) {
  json p = mlpPlan();
  p["steps"][1]["inputs"] = {7};
  expectRefused(
      p, "plan: steps[1] (relu at mlp.mlir:4:8): input 7 is not a tensor id");
  p = mlpPlan();
  p["steps"][2]["outputs"] = {-1};
  expectRefused(p, "plan: steps[2] (cross_entropy at mlp.mlir:5:11): output -1 "
                   "is not a tensor id");
  p = mlpPlan();
  p["results"] = {6, 9};
  expectRefused(p, "plan: results[1]: 9 is not a tensor id");
  p = mlpPlan();
  p["arguments"][0]["tensor"] = 12;
  expectRefused(p, "plan: arguments[0]: tensor 12 is not a tensor id");
  p = mlpPlan();
  p["tensors"][2]["id"] = 5;
  expectRefused(
      p, "plan: tensors[2]: field 'id' must equal the entry's index 2, got 5");
  p = mlpPlan();
  p["tensors"][2]["argument"] = 4;
  expectRefused(p, "plan: tensors[2]: argument 4 is not an argument index (the "
                   "plan has 4 arguments)");
  p = mlpPlan();
  p["tensors"][2]["argument"] = 1;
  expectRefused(p,
                "plan: arguments[2]: tensor 2 must have storage \"argument\" "
                "with argument 2, got storage \"argument\" with argument 1");
  p = mlpPlan();
  p["tensors"].push_back({{"id", 7},
                          {"dtype", "f32"},
                          {"shape", {20}},
                          {"storage", "view"},
                          {"of", 42}});
  expectRefused(p, "plan: tensors[7]: view of 42, which is not a tensor id");
  p = mlpPlan();
  p["steps"][0]["inputs"] = {0, 1, 18446744073709551615ull};
  expectRefused(p, "plan: steps[0] (linear at mlp.mlir:3:8): input "
                   "18446744073709551615 is not a tensor id");
}

TEST(PlanValidationTest, Shapes) {
  json p = mlpPlan();
  p["tensors"][4]["shape"] = {4, 0};
  expectRefused(p, "plan: tensors[4]: shape 4x0 must have positive sizes "
                   "(dimension 1 is 0)");
  p = mlpPlan();
  p["tensors"][4]["shape"] = {1ll << 40, 1ll << 40};
  expectRefused(p, "plan: tensors[4]: shape 1099511627776x1099511627776 has "
                   "too many elements");
  p = mlpPlan();
  p["tensors"][4]["shape"] = {1ll << 61};
  expectRefused(
      p, "plan: tensors[4]: shape 2305843009213693952 has too many elements");
}

TEST(PlanValidationTest, ArenaSlices) {
  json p = mlpPlan();
  p["tensors"][6]["offset"] = 320;
  expectRefused(
      p, "plan: tensors[6]: arena slice [320, 324) exceeds arena_bytes 260");
  p = mlpPlan();
  p["arena_bytes"] = 4096;
  p["tensors"][4]["shape"] = {1024};
  p["tensors"][4]["offset"] = 64;
  expectRefused(
      p, "plan: tensors[4]: arena slice [64, 4160) exceeds arena_bytes 4096");
  p = mlpPlan();
  p["tensors"][6]["offset"] = 9223372036854775744ll;
  expectRefused(p, "plan: tensors[6]: arena slice [9223372036854775744, "
                   "9223372036854775748) exceeds arena_bytes 260");
  p = mlpPlan();
  p["tensors"][5]["offset"] = 64;
  expectRefused(
      p, "plan: tensors[5]: arena slice [64, 144) overlaps tensors[4] [0, 80)");
  p = mlpPlan();
  p["tensors"][4]["offset"] = 128;
  p["tensors"][5]["offset"] = 0;
  p["tensors"][6]["offset"] = 64; // Inside tensors[5] = [0, 80).
  expectRefused(
      p, "plan: tensors[6]: arena slice [64, 68) overlaps tensors[5] [0, 80)");
  p = mlpPlan();
  p["tensors"][5]["offset"] = 100;
  expectRefused(
      p, "plan: tensors[5]: offset 100 is not a multiple of the alignment 64");
  p = mlpPlan();
  p["alignment"] = 48;
  expectRefused(p, "plan: field 'alignment' must be a power of two, got 48");
  p = mlpPlan();
  p["alignment"] = 0;
  expectRefused(p, "plan: field 'alignment' must be a power of two, got 0");
}

TEST(PlanValidationTest, Views) {
  json p = mlpPlan();
  p["tensors"].push_back({{"id", 7},
                          {"dtype", "f32"},
                          {"shape", {3, 5}},
                          {"storage", "view"},
                          {"of", 4}});
  expectRefused(p,
                "plan: tensors[7]: view of tensors[4] must have its dtype and "
                "element count (f32, 20 elements), got f32, 15 elements");
  p = mlpPlan();
  p["tensors"].push_back({{"id", 7},
                          {"dtype", "i32"},
                          {"shape", {20}},
                          {"storage", "view"},
                          {"of", 4}});
  expectRefused(p,
                "plan: tensors[7]: view of tensors[4] must have its dtype and "
                "element count (f32, 20 elements), got i32, 20 elements");
  p = mlpPlan();
  p["tensors"].push_back({{"id", 7},
                          {"dtype", "f32"},
                          {"shape", {20}},
                          {"storage", "view"},
                          {"of", 8}});
  p["tensors"].push_back({{"id", 8},
                          {"dtype", "f32"},
                          {"shape", {2, 10}},
                          {"storage", "view"},
                          {"of", 7}});
  expectRefused(p, "plan: tensors[7]: views form a cycle (7 -> 8 -> 7)");
  p = mlpPlan();
  p["tensors"].push_back({{"id", 7},
                          {"dtype", "f32"},
                          {"shape", {20}},
                          {"storage", "view"},
                          {"of", 7}});
  expectRefused(p, "plan: tensors[7]: views form a cycle (7 -> 7)");
  // A valid chain of views resolves to its root.
  p = mlpPlan();
  p["tensors"].push_back({{"id", 7},
                          {"dtype", "f32"},
                          {"shape", {20}},
                          {"storage", "view"},
                          {"of", 8}});
  p["tensors"].push_back({{"id", 8},
                          {"dtype", "f32"},
                          {"shape", {2, 10}},
                          {"storage", "view"},
                          {"of", 5}});
  auto plan = Plan::parse(p.dump());
  EXPECT_EQ(plan->tensors[7].root, 5);
}

TEST(PlanValidationTest, Constants) {
  json p = mlpPlan();
  p["tensors"].push_back({{"id", 7},
                          {"dtype", "f32"},
                          {"shape", {2, 3}},
                          {"storage", "constant"},
                          {"values", {1, 2}}});
  expectRefused(p, "plan: tensors[7]: constant of shape 2x3 needs 6 values (or "
                   "1 to splat), got 2");
  p = mlpPlan();
  p["tensors"].push_back({{"id", 7},
                          {"dtype", "i64"},
                          {"shape", {2}},
                          {"storage", "constant"},
                          {"values", {1, 2.5}}});
  expectRefused(p, "plan: tensors[7]: values[1] must be an integer for dtype "
                   "i64, got number 2.5");
  p = mlpPlan();
  p["tensors"].push_back({{"id", 7},
                          {"dtype", "i32"},
                          {"shape", {1}},
                          {"storage", "constant"},
                          {"values", {1ll << 40}}});
  expectRefused(
      p, "plan: tensors[7]: values[0] = 1099511627776 does not fit in i32");
  p = mlpPlan();
  p["tensors"].push_back({{"id", 7},
                          {"dtype", "f16"},
                          {"shape", {1}},
                          {"storage", "constant"},
                          {"values", {"one"}}});
  expectRefused(p, "plan: tensors[7]: values[0] must be a number or \"inf\", "
                   "\"-inf\", \"nan\", got string \"one\"");
  p = mlpPlan();
  p["tensors"].push_back({{"id", 7},
                          {"dtype", "i64"},
                          {"shape", {1}},
                          {"storage", "constant"},
                          {"values", {"inf"}}});
  expectRefused(p, "plan: tensors[7]: values[0] must be a number, got string "
                   "\"inf\"");
  // JSON has no infinity: float constants spell it as a string (masks).
  p = mlpPlan();
  p["tensors"].push_back({{"id", 7},
                          {"dtype", "f32"},
                          {"shape", {3}},
                          {"storage", "constant"},
                          {"values", {"-inf", 2.0, "inf"}}});
  std::vector<double> special = decode(
      DType::F32, Plan::parse(p.dump())->tensors[7].constantData.data(), 3);
  EXPECT_EQ(special, (std::vector<double>{-INFINITY, 2.0, INFINITY}));
  // A splat fills every element.
  p = mlpPlan();
  p["tensors"].push_back({{"id", 7},
                          {"dtype", "f32"},
                          {"shape", {2, 2}},
                          {"storage", "constant"},
                          {"values", {0.5}}});
  auto plan = Plan::parse(p.dump());
  const std::vector<uint8_t> &bytes = plan->tensors[7].constantData;
  ASSERT_EQ(bytes.size(), 16u);
  EXPECT_EQ(decode(DType::F32, bytes.data(), 4),
            (std::vector<double>{0.5, 0.5, 0.5, 0.5}));
}

TEST(PlanValidationTest, Arguments) {
  json p = mlpPlan();
  p["arguments"][3]["name"] = "x";
  expectRefused(
      p, "plan: arguments[3]: duplicate argument name 'x' (also arguments[0])");
  p = mlpPlan();
  p["arguments"][1]["tensor"] = 4;
  expectRefused(p, "plan: arguments[1]: tensor 4 must have storage "
                   "\"argument\" with argument 1, got storage \"arena\"");
}

TEST(PlanValidationTest, KernelsAndArity) {
  json p = mlpPlan();
  p["steps"][1]["kernel"] = "relu6";
  expectRefused(p, "plan: steps[1]: unknown kernel 'relu6'");
  p = mlpPlan();
  p["steps"][1]["inputs"] = {4, 4};
  expectRefused(
      p, "plan: steps[1] (relu at mlp.mlir:4:8): expected 1 input(s), got 2");
  p = mlpPlan();
  p["steps"][0]["inputs"] = {0};
  expectRefused(
      p,
      "plan: steps[0] (linear at mlp.mlir:3:8): expected 2 to 3 inputs, got 1");
  p = mlpPlan();
  p["steps"][2]["outputs"] = json::array();
  expectRefused(p, "plan: steps[2] (cross_entropy at mlp.mlir:5:11): expected "
                   "1 output(s), got 0");
  p = mlpPlan();
  p["steps"][0]["attrs"] = {{"bias", true}};
  expectRefused(p, "plan: steps[0] (linear at mlp.mlir:3:8): unknown attribute "
                   "'bias' for kernel 'linear'");
  p = mlpPlan();
  p["steps"][1]["recompute"] = "yes";
  expectRefused(p, "plan: steps[1]: field 'recompute' must be a boolean, got "
                   "string");
  p = mlpPlan();
  p["steps"][1].erase("loc");
  p["steps"][1]["kernel"] = "tanh";
  p["tensors"][5]["shape"] = {4, 6};
  expectRefused(p,
                "plan: steps[1] (tanh): expected output 0 shape 4x5, got 4x6");
  p = mlpPlan();
  p["tensors"][5]["dtype"] = "f16";
  expectRefused(p, "plan: steps[1] (relu at mlp.mlir:4:8): expected output 0 "
                   "dtype f32, got f16");
  p = mlpPlan();
  p["tensors"][1]["shape"] = {5, 4};
  expectRefused(p, "plan: steps[0] (linear at mlp.mlir:3:8): expected weight "
                   "shape 5x3 for 3 input features, got 5x4");
  p = mlpPlan();
  p["tensors"][3]["dtype"] = "f32";
  expectRefused(p, "plan: steps[2] (cross_entropy at mlp.mlir:5:11): expected "
                   "labels of dtype i32 or i64, got f32");
}

/// Single-step plans for attribute rules.
void expectStepRefused(const std::string &kernel, const json &attrs,
                       const std::vector<HostTensor> &inputs,
                       const std::vector<OutputSpec> &outputs,
                       const std::string &expected) {
  expectRefused(singleStepPlan(kernel, attrs, inputs, outputs),
                "plan: steps[0] (" + kernel +
                    " at test.mlir:1:1): " + expected);
}

// The attention and LM-head kernels' attributes and shapes.
TEST(PlanValidationTest, AttentionAndLinearCrossEntropy) {
  HostTensor q{DType::F32, {2, 4, 8}, {}}, k{DType::F32, {2, 6, 8}, {}},
      v{DType::F32, {2, 6, 3}, {}};
  const std::vector<OutputSpec> out{{DType::F32, {2, 4, 3}},
                                    {DType::F32, {2, 4}}};
  expectStepRefused("attention", json::object(), {q, k, v}, out,
                    "missing attribute 'scale'");
  expectStepRefused("attention", {{"scale", 1.0}, {"p", 1.0}}, {q, k, v}, out,
                    "expected 'p' in [0, 1), got 1");
  expectStepRefused("attention", {{"scale", 1.0}, {"causal", true}}, {q, k, v},
                    out,
                    "'causal' needs as many queries as keys, got 4 queries "
                    "and 6 keys");
  expectStepRefused("attention", {{"scale", 1.0}}, {q, q, v}, out,
                    "expected v to have k's sequence length (4), got 2x6x3");
  expectStepRefused("attention", {{"scale", 1.0}, {"dropout", 0.1}}, {q, k, v},
                    out, "unknown attribute 'dropout' for kernel 'attention'");
  // The key bias is q's dimensions before its heads, then the keys.
  expectStepRefused("attention", {{"scale", 1.0}}, {q, k, v, q}, out,
                    "expected key_bias of shape 6, got 2x4x8");
  // Key/value groups must divide the query heads.
  HostTensor q6{DType::F32, {1, 6, 4, 8}, {}}, k4{DType::F32, {1, 4, 4, 8}, {}};
  expectStepRefused("attention", {{"scale", 1.0}}, {q6, k4, k4},
                    {{DType::F32, {1, 6, 4, 8}}, {DType::F32, {1, 6, 4}}},
                    "expected q, k and v to share their leading (batch and "
                    "head) dimensions, or k and v to have a divisor of q's "
                    "heads (dimension 1), got 1x6x4x8, 1x4x4x8 and 1x4x4x8");
  HostTensor h{DType::F32, {5, 8}, {}}, w{DType::F32, {10, 8}, {}},
      labels{DType::I64, {5}, {}};
  const std::vector<OutputSpec> loss{{DType::F32, {}}, {DType::F32, {5}}};
  expectStepRefused("linear_cross_entropy", json::object(), {h, w, labels},
                    loss, "missing attribute 'chunk'");
  expectStepRefused("linear_cross_entropy", {{"chunk", 0}}, {h, w, labels},
                    loss, "expected 'chunk' >= 1, got 0");
  HostTensor narrow{DType::F32, {10, 7}, {}}, three{DType::I64, {3}, {}};
  expectStepRefused("linear_cross_entropy", {{"chunk", 2}}, {h, narrow, labels},
                    loss,
                    "expected weight of shape Vx8 (hidden's width), got 10x7");
  expectStepRefused("linear_cross_entropy", {{"chunk", 2}}, {h, w, three}, loss,
                    "expected 5 labels (one per row of hidden), got 3");
  // The pair in one op: the same operand rules after a scalar grad_loss.
  HostTensor seed{DType::F32, {}, {}}, seeds{DType::F32, {2}, {}};
  const std::vector<OutputSpec> withGrad{
      {DType::F32, {}}, {DType::F32, {5, 8}}, {DType::F32, {10, 8}}};
  expectStepRefused("linear_cross_entropy_with_grad", {{"chunk", 2}},
                    {seeds, h, w, labels}, withGrad,
                    "expected grad_loss of dtype f32 and shape scalar, got "
                    "2 f32");
  expectStepRefused("linear_cross_entropy_with_grad", {{"chunk", 2}},
                    {seed, h, w, three}, withGrad,
                    "expected 5 labels (one per row of hidden), got 3");
  expectStepRefused("linear_cross_entropy_with_grad", {{"chunk", 2}},
                    {seed, h, w}, withGrad, "expected 4 to 5 inputs, got 3");
  // A bias (the last input): V elements of weight's dtype, and one more
  // output, grad_bias.
  HostTensor bias{DType::F32, {10}, {}}, shortBias{DType::F32, {9}, {}},
      halfBias{DType::F16, {10}, {}};
  expectStepRefused("linear_cross_entropy", {{"chunk", 2}},
                    {h, w, labels, shortBias}, loss,
                    "expected bias of shape 10 (weight's rows), got 9");
  expectStepRefused("linear_cross_entropy", {{"chunk", 2}},
                    {h, w, labels, halfBias}, loss,
                    "expected bias dtype f32 (as weight), got f16");
  expectStepRefused("linear_cross_entropy_with_grad", {{"chunk", 2}},
                    {seed, h, w, labels, bias}, withGrad,
                    "expected 4 output(s), got 3");
}

TEST(PlanValidationTest, Attributes) {
  HostTensor x{DType::F32, {2, 3, 8, 8}, {}};
  // clamp's bounds: ordered, and clamp_backward's saved like grad.
  expectStepRefused("clamp", {{"min", 1.0}, {"max", 0.0}}, {x},
                    {{DType::F32, x.shape}},
                    "expected 'min' <= 'max', got min = 1 and max = 0");
  expectStepRefused("clamp", {{"min", "low"}}, {x}, {{DType::F32, x.shape}},
                    "attribute 'min' must be a number");
  HostTensor small{DType::F32, {2, 3}, {}};
  expectStepRefused(
      "clamp_backward", {{"max", 6.0}}, {x, small}, {{DType::F32, x.shape}},
      "expected saved of type 2x3x8x8 f32 (as grad), got 2x3 f32");
  expectStepRefused("softmax", {{"axis", "last"}}, {x}, {{DType::F32, x.shape}},
                    "attribute 'axis' must be an integer, got \"last\"");
  expectStepRefused("softmax", {{"axis", 4}}, {x}, {{DType::F32, x.shape}},
                    "expected 'axis' in [-4, 4) for rank 4, got 4");
  expectStepRefused("softmax", {{"causal", true}, {"axis", 1}}, {x},
                    {{DType::F32, x.shape}},
                    "'causal' needs the softmax over the last axis");
  expectStepRefused("dropout", {{"p", 1.0}}, {x}, {{DType::F32, x.shape}},
                    "expected 'p' in [0, 1), got 1");
  expectStepRefused("transpose", json::object(), {x}, {{DType::F32, x.shape}},
                    "missing attribute 'permutation'");
  expectStepRefused(
      "transpose", {{"permutation", {0, 1, 1, 3}}}, {x},
      {{DType::F32, x.shape}},
      "expected 'permutation' to be a permutation of [0, 4), got [0, 1, 1, 3]");
  expectStepRefused("max_pool2d",
                    {{"kernel_size", {2, 2}}, {"padding", {2, 0}}}, {x},
                    {{DType::F32, {2, 3, 6, 4}}},
                    "expected 'padding' at most half of 'kernel_size', got "
                    "padding 2 for kernel 2");
  expectStepRefused("max_pool2d", {{"kernel_size", {2}}}, {x},
                    {{DType::F32, {2, 3, 4, 4}}},
                    "expected 'kernel_size' to have 2 values, got 1");
  expectStepRefused("conv2d", {{"strides", {0, 1}}},
                    {x, HostTensor{DType::F32, {4, 3, 3, 3}, {}}},
                    {{DType::F32, {2, 4, 6, 6}}},
                    "expected 'strides' values >= 1, got [0, 1]");
  expectStepRefused("conv2d", {{"groups", 2}},
                    {x, HostTensor{DType::F32, {4, 3, 3, 3}, {}}},
                    {{DType::F32, {2, 4, 6, 6}}},
                    "expected input channels (3) and output channels (4) "
                    "divisible by groups (2)");
  expectStepRefused("conv2d", {{"padding", {1, 1}}},
                    {x, HostTensor{DType::F32, {4, 3, 3, 3}, {}}},
                    {{DType::F32, {2, 4, 6, 6}}},
                    "expected output 0 shape 2x4x8x8, got 2x4x6x6");
  expectStepRefused(
      "slice",
      {{"offsets", {0, 0, 4, 0}},
       {"sizes", {1, 1, 3, 8}},
       {"strides", {1, 1, 2, 1}}},
      {x}, {{DType::F32, {1, 1, 3, 8}}},
      "slice of dimension 2 reaches index 8 but the dimension has size 8");
  expectStepRefused("add", json::object(),
                    {x, HostTensor{DType::F32, {2, 8}, {}}},
                    {{DType::F32, x.shape}},
                    "operand shapes 2x3x8x8 and 2x8 do not broadcast");
  expectStepRefused("sub", json::object(),
                    {x, HostTensor{DType::F32, {3, 1, 8}, {}}},
                    {{DType::F32, {2, 3, 8, 1}}},
                    "expected output 0 shape 2x3x8x8, got 2x3x8x1");
  expectStepRefused("div", json::object(), {x, HostTensor{DType::F16, {8}, {}}},
                    {{DType::F32, x.shape}},
                    "expected rhs dtype f32 (as lhs), got f16");
  expectStepRefused("div", {{"rounding_mode", "floor"}},
                    {x, HostTensor{DType::F32, {8}, {}}},
                    {{DType::F32, x.shape}},
                    "unknown attribute 'rounding_mode' for kernel 'div'");
  expectStepRefused("leaky_relu", {{"alpha", true}}, {x},
                    {{DType::F32, x.shape}},
                    "attribute 'alpha' must be a number, got true");
  expectStepRefused(
      "reshape", json::object(), {x}, {{DType::F32, {2, 3, 8}}},
      "cannot reshape 2x3x8x8 (384 elements) to 2x3x8 (48 elements)");
  expectStepRefused(
      "batch_norm", json::object(),
      {HostTensor{DType::F32, {1, 3}, {}}, HostTensor{DType::F32, {3}, {}},
       HostTensor{DType::F32, {3}, {}}, HostTensor{DType::F32, {3}, {}},
       HostTensor{DType::F32, {3}, {}}},
      {{DType::F32, {1, 3}}, {DType::F32, {3}}, {DType::F32, {3}}},
      "expected more than 1 value per channel");
  expectStepRefused("concat", {{"axis", 0}},
                    {x, HostTensor{DType::F32, {2, 3, 8, 7}, {}}},
                    {{DType::F32, {4, 3, 8, 8}}},
                    "expected input #1 to match input #0 (2x3x8x8) in every "
                    "dimension but 0, got 2x3x8x7");
}

TEST(PlanValidationTest, BackwardKernelRules) {
  const DType f32 = DType::F32;
  auto t = [](Shape shape, DType dtype = DType::F32) {
    return HostTensor{dtype, shape, {}};
  };
  expectStepRefused("sum_to", json::object(), {t({2, 3, 4})}, {{f32, {2, 4}}},
                    "result shape 2x4 does not broadcast to the operand's "
                    "2x3x4");
  expectStepRefused("sum_to", json::object(), {t({2, 3})}, {{f32, {1, 2, 3}}},
                    "result shape 1x2x3 does not broadcast to the operand's "
                    "2x3");
  expectStepRefused("sum_to", json::object(), {t({2, 3})}, {{DType::F64, {3}}},
                    "expected output 0 dtype f32");
  // conv2d_backward_input: grad_output must be the conv2d output of the
  // result's shape.
  json conv = {{"strides", {2, 2}}, {"padding", {1, 1}}};
  expectStepRefused("conv2d_backward_input", conv,
                    {t({2, 4, 4, 4}), t({4, 3, 3, 3})}, {{f32, {2, 3, 10, 10}}},
                    "expected grad_output shape 2x4x5x5 (the conv2d output "
                    "for an input of shape 2x3x10x10), got 2x4x4x4");
  expectStepRefused("conv2d_backward_input", conv,
                    {t({2, 4, 5, 4}), t({4, 3, 3, 3})}, {{f32, {2, 3, 8, 8}}},
                    "expected grad_output shape 2x4x4x4 (the conv2d output "
                    "for an input of shape 2x3x8x8), got 2x4x5x4");
  expectStepRefused("conv2d_backward_input", {{"groups", 2}},
                    {t({2, 4, 6, 6}), t({4, 6, 3, 3})}, {{f32, {2, 6, 8, 8}}},
                    "expected weight shape 4x3x3x3 for 6 input channels and 2 "
                    "group(s), got 4x6x3x3");
  expectStepRefused("conv2d_backward_weight", conv,
                    {t({2, 4, 4, 4}), t({2, 3, 8, 8}, DType::F16)},
                    {{f32, {4, 3, 3, 3}}},
                    "expected input dtype f32 (as grad_output), got f16");
  expectStepRefused("conv2d_backward_weight", conv,
                    {t({2, 4, 3, 4}), t({2, 3, 8, 8})}, {{f32, {4, 3, 3, 3}}},
                    "expected grad_output shape 2x4x4x4 (the conv2d output "
                    "for input 2x3x8x8 and weight 4x3x3x3), got 2x4x3x4");
  expectStepRefused("conv2d_backward_weight", {{"dilations", {1, 0}}},
                    {t({2, 4, 4, 4}), t({2, 3, 8, 8})}, {{f32, {4, 3, 3, 3}}},
                    "expected 'dilations' values >= 1, got [1, 0]");
  // Activations: grad, saved and result of one type.
  expectStepRefused("relu_backward", json::object(), {t({2, 3}), t({3, 2})},
                    {{f32, {2, 3}}},
                    "expected saved of type 2x3 f32 (as grad), got 3x2 f32");
  expectStepRefused("gelu_backward", {{"alpha", 1.0}}, {t({2}), t({2})},
                    {{f32, {2}}},
                    "unknown attribute 'alpha' for kernel 'gelu_backward'");
  expectStepRefused("elu_backward", {{"from_output", 1}}, {t({2}), t({2})},
                    {{f32, {2}}},
                    "attribute 'from_output' must be a boolean, got 1");
  expectStepRefused("tanh_backward", json::object(), {t({2}), t({2})},
                    {{DType::F16, {2}}}, "expected output 0 dtype f32");
  // Normalisation.
  expectStepRefused("batch_norm_backward", json::object(),
                    {t({2, 3, 4}), t({2, 3, 4}), t({4})},
                    {{f32, {2, 3, 4}}, {f32, {4}}, {f32, {4}}},
                    "expected gamma of 3 elements (x's dimension 1), got 4");
  expectStepRefused("batch_norm_backward", json::object(),
                    {t({2, 3, 5}), t({2, 3, 4}), t({3})},
                    {{f32, {2, 3, 4}}, {f32, {3}}, {f32, {3}}},
                    "expected grad_output of type 2x3x4 f32 (as x)");
  expectStepRefused(
      "batch_norm_backward", {{"epsilon", 0}}, {t({2, 3}), t({2, 3}), t({3})},
      {{f32, {2, 3}}, {f32, {3}}, {f32, {3}}}, "expected 'epsilon' > 0, got 0");
  expectStepRefused("batch_norm_backward", json::object(),
                    {t({2, 3}), t({2, 3}), t({3}, DType::F64)},
                    {{f32, {2, 3}}, {f32, {3}}, {f32, {3}}},
                    "expected output 1 dtype f64, got f32");
  expectStepRefused("layer_norm_backward", json::object(),
                    {t({2, 3, 4}), t({2, 3, 4}), t({3})},
                    {{f32, {2, 3, 4}}, {f32, {3}}, {f32, {3}}},
                    "expected gamma's shape (3) to be a non-empty suffix of "
                    "x's shape (2x3x4)");
  expectStepRefused("layer_norm_backward", json::object(),
                    {t({2, 4}), t({2, 4}), t({4})}, {{f32, {2, 4}}, {f32, {4}}},
                    "expected 3 output(s), got 2");
  // rms_norm_backward has no grad_beta; rms_norm no beta.
  expectStepRefused(
      "rms_norm_backward", json::object(), {t({2, 4}), t({2, 4}), t({4})},
      {{f32, {2, 4}}, {f32, {4}}, {f32, {4}}}, "expected 2 output(s), got 3");
  expectStepRefused("rms_norm_backward", {{"epsilon", 0.0}},
                    {t({2, 4}), t({2, 4}), t({4})}, {{f32, {2, 4}}, {f32, {4}}},
                    "expected 'epsilon' > 0, got 0");
  expectStepRefused("rms_norm", json::object(), {t({2, 4}), t({4}), t({4})},
                    {{f32, {2, 4}}}, "expected 2 input(s), got 3");
  expectStepRefused("rms_norm", json::object(), {t({2, 4}), t({2})},
                    {{f32, {2, 4}}},
                    "expected gamma's shape (2) to be a non-empty suffix of "
                    "x's shape (2x4)");
  // Pooling.
  json pool = {{"kernel_size", {2, 2}}, {"strides", {2, 2}}};
  expectStepRefused("max_pool2d_backward", pool,
                    {t({1, 2, 4, 3}), t({1, 2, 6, 6})}, {{f32, {1, 2, 6, 6}}},
                    "expected grad_output shape 1x2x3x3, got 1x2x4x3");
  expectStepRefused("max_pool2d_backward", {{"kernel_size", {2, 2}}},
                    {t({1, 2, 3, 3}), t({1, 2, 6, 6})}, {{f32, {1, 2, 6, 6}}},
                    "missing attribute 'strides'");
  expectStepRefused(
      "avg_pool2d_backward",
      {{"kernel_size", {2, 2}}, {"strides", {1, 1}}, {"padding", {2, 0}}},
      {t({1, 2, 9, 5})}, {{f32, {1, 2, 6, 6}}},
      "expected 'padding' at most half of 'kernel_size'");
  expectStepRefused("avg_pool2d_backward", pool, {t({1, 2, 3, 3})},
                    {{f32, {1, 2, 8, 8}}},
                    "expected grad_output shape 1x2x4x4 (the avg_pool2d "
                    "output for an input of shape 1x2x8x8), got 1x2x3x3");
  expectStepRefused("global_avg_pool2d_backward", json::object(), {t({2, 3})},
                    {{f32, {2, 3, 4}}},
                    "expected 4-D output 0 (NxCxHxW), got shape 2x3x4");
  expectStepRefused("global_avg_pool2d_backward", json::object(), {t({2, 4})},
                    {{f32, {2, 3, 4, 4}}},
                    "expected grad_output shape 2x3, got 2x4");
  // Softmax, slice, upsample, embedding.
  expectStepRefused("softmax_backward", {{"axis", 2}}, {t({2, 3}), t({2, 3})},
                    {{f32, {2, 3}}},
                    "expected 'axis' in [-2, 2) for rank 2, got 2");
  expectStepRefused("softmax_backward", {{"causal", true}},
                    {t({2, 2}), t({2, 2})}, {{f32, {2, 2}}},
                    "unknown attribute 'causal'");
  json slice = {{"offsets", {0, 2}}, {"sizes", {2, 3}}, {"strides", {1, 2}}};
  expectStepRefused("slice_backward", slice, {t({2, 3})}, {{f32, {2, 6}}},
                    "slice of dimension 1 reaches index 6 but the output's "
                    "dimension has size 6");
  expectStepRefused("slice_backward", slice, {t({2, 2})}, {{f32, {2, 7}}},
                    "expected grad shape 2x3 (the slice's 'sizes'), got 2x2");
  expectStepRefused("slice_backward", {{"offsets", {0, 2}}, {"sizes", {2, 3}}},
                    {t({2, 3})}, {{f32, {2, 7}}},
                    "missing attribute 'strides'");
  expectStepRefused("upsample_nearest2d_backward", {{"scale", 2}},
                    {t({1, 2, 6, 5})}, {{f32, {1, 2, 3, 3}}},
                    "expected grad shape 1x2x6x6, got 1x2x6x5");
  expectStepRefused("upsample_nearest2d_backward", {{"scale", 0}},
                    {t({1, 2, 6, 6})}, {{f32, {1, 2, 3, 3}}},
                    "expected 'scale' ≥ 1, got 0");
  expectStepRefused("embedding_backward", json::object(),
                    {t({2, 4, 3}), t({2, 5}, DType::I64)}, {{f32, {10, 3}}},
                    "expected grad shape 2x5x3 (ids 2x5 by 3 features), got "
                    "2x4x3");
  expectStepRefused("embedding_backward", json::object(),
                    {t({2, 3}), t({2}, DType::F32)}, {{f32, {10, 3}}},
                    "expected ids of dtype i32 or i64, got f32");
  // Losses.
  expectStepRefused("cross_entropy_backward", json::object(),
                    {t({1}), t({4, 3}), t({4}, DType::I64)}, {{f32, {4, 3}}},
                    "expected a 0-d grad_loss, got shape 1");
  expectStepRefused("cross_entropy_backward", json::object(),
                    {t({}), t({4, 3}), t({3}, DType::I64)}, {{f32, {4, 3}}},
                    "expected 4 labels (one per row of logits), got 3");
  expectStepRefused("mse_loss_backward", json::object(),
                    {t({}), t({4, 3}), t({4, 3}, DType::F64)}, {{f32, {4, 3}}},
                    "expected target dtype f32 (as prediction), got f64");
  expectStepRefused("mse_loss_backward", json::object(),
                    {t({}), t({4, 3}), t({3, 4})}, {{f32, {4, 3}}},
                    "expected target shape 4x3 (as prediction), got 3x4");
  expectStepRefused("mse_loss_backward", json::object(),
                    {t({}, DType::I32), t({4}), t({4})}, {{f32, {4}}},
                    "expected grad_loss of a float dtype");
}

TEST(PlanValidationTest, OptimizerKernelRules) {
  const DType f32 = DType::F32;
  auto t = [](Shape shape, DType dtype = DType::F32) {
    return HostTensor{dtype, shape, {}};
  };
  expectStepRefused("sgd_update", json::object(), {t({3}), t({3})},
                    {{f32, {3}}}, "missing attribute 'lr'");
  expectStepRefused("sgd_update", {{"lr", "0.1"}}, {t({3}), t({3})},
                    {{f32, {3}}},
                    "attribute 'lr' must be a number, got \"0.1\"");
  expectStepRefused("sgd_update", {{"lr", 0.1}}, {t({3}), t({4})}, {{f32, {3}}},
                    "expected grad of the param's shape 3, got 4");
  expectStepRefused("sgd_update", {{"lr", 0.1}}, {t({3}, DType::F16), t({3})},
                    {{DType::F16, {3}}},
                    "expected a grad whose dtype f16 holds exactly, got f32");
  expectStepRefused("sgd_update", {{"lr", 0.1}, {"momentum", 0.9}},
                    {t({3}), t({3})}, {{f32, {3}}},
                    "unknown attribute 'momentum' for kernel 'sgd_update'");
  expectStepRefused("sgd_momentum_update", {{"lr", 0.1}},
                    {t({3}), t({3}), t({3})}, {{f32, {3}}, {f32, {3}}},
                    "missing attribute 'momentum'");
  expectStepRefused("sgd_momentum_update", {{"lr", 0.1}, {"momentum", 0.9}},
                    {t({3}), t({3}), t({3}, DType::F16)},
                    {{f32, {3}}, {f32, {3}}},
                    "expected momentum_buffer of the param's shape 3 in its "
                    "dtype f32 or bf16, got 3 f16");
  expectStepRefused("sgd_momentum_update", {{"lr", 0.1}, {"momentum", 0.9}},
                    {t({3}), t({3}), t({3})}, {{f32, {3}}, {f32, {2}}},
                    "expected output 1 shape 3, got 2");
  std::vector<HostTensor> adam = {t({3}), t({3}), t({3}), t({3}), t({})};
  std::vector<OutputSpec> adamOut = {{f32, {3}}, {f32, {3}}, {f32, {3}}};
  expectStepRefused("adam_update", {{"lr", 0.1}, {"beta1", 1.0}}, adam, adamOut,
                    "expected 'beta1' and 'beta2' in [0, 1), got 1 and 0.999");
  expectStepRefused("adam_update", {{"lr", 0.1}, {"eps", 0}}, adam, adamOut,
                    "expected 'eps' > 0, got 0");
  adam[4] = t({1});
  expectStepRefused("adam_update", {{"lr", 0.1}}, adam, adamOut,
                    "expected a 0-d step, got shape 1");
  adam[4] = t({});
  adam[3] = t({3}, DType::F64);
  expectStepRefused("adam_update", {{"lr", 0.1}}, adam, adamOut,
                    "expected exp_avg_sq of the param's shape 3 in its dtype "
                    "f32 or bf16, got 3 f64");
  // bf16 moments (state-dtype=bf16): both of them, and the outputs too.
  adam[2] = t({3}, DType::BF16);
  adam[3] = t({3});
  expectStepRefused("adam_update", {{"lr", 0.1}}, adam, adamOut,
                    "expected exp_avg_sq of type 3 bf16 (as exp_avg), got 3 "
                    "f32");
  adam[3] = t({3}, DType::BF16);
  expectStepRefused("adam_update", {{"lr", 0.1}}, adam, adamOut,
                    "expected output 1 dtype bf16, got f32");

  // 8-bit Adam: ui8 codes, one f32 maximum per 256 elements.
  std::vector<HostTensor> adam8 = {
      t({300}), t({300}), t({300}, DType::UI8), t({2}), t({300}, DType::UI8),
      t({2}),   t({})};
  std::vector<OutputSpec> adam8Out = {{f32, {300}},
                                      {DType::UI8, {300}},
                                      {f32, {2}},
                                      {DType::UI8, {300}},
                                      {f32, {2}}};
  adam8[3] = t({1});
  expectStepRefused("adam8bit_update", {{"lr", 0.1}}, adam8, adam8Out,
                    "expected exp_avg absmax of shape 2 (one per 256 "
                    "elements), got 1");
  adam8[3] = t({2});
  adam8[4] = t({300});
  expectStepRefused("adam8bit_update", {{"lr", 0.1}}, adam8, adam8Out,
                    "expected exp_avg_sq codes of dtype ui8, got f32");

  // Adafactor: row and column factors for a matrix.
  expectStepRefused("adafactor_update", {{"lr", 0.1}},
                    {t({3, 4}), t({3, 4}), t({3, 4}), t({})},
                    {{f32, {3, 4}}, {f32, {3, 4}}},
                    "expected 5 to 7 inputs, got 4");
  expectStepRefused("adafactor_update", {{"lr", 0.1}},
                    {t({3, 4}), t({3, 4}), t({3}), t({3}), t({})},
                    {{f32, {3, 4}}, {f32, {3}}, {f32, {3}}},
                    "expected the column factor of shape 4, got 3");
  expectStepRefused("adafactor_update", {{"lr", 0.1}, {"decay_rate", 0.5}},
                    {t({3}), t({3}), t({3}), t({})}, {{f32, {3}}, {f32, {3}}},
                    "expected 'decay_rate' < 0, got 0.5");

  // clip_coefficient: any float gradients, a 0-d f32 factor.
  expectStepRefused("clip_coefficient", {{"max_norm", 0.0}},
                    {t({3}), t({2, 2})}, {{f32, {}}},
                    "expected 'max_norm' > 0 and finite, got 0");
  expectStepRefused("clip_coefficient", {{"max_norm", 1.0}}, {t({3})},
                    {{f32, {1}}}, "expected output 0 shape scalar, got 1");
}

// The collectives' and ZeRO stage 2's kernels: attributes and shapes.
TEST(PlanValidationTest, CollectiveKernelRules) {
  const DType f32 = DType::F32, f64 = DType::F64, f16 = DType::F16;
  auto t = [](Shape shape, DType dtype = DType::F32) {
    return HostTensor{dtype, shape, {}};
  };
  // all_reduce: one dtype, at least 2 ranks, `sum` a boolean.
  EXPECT_NO_THROW(
      Plan::parse(singleStepPlan("all_reduce", {{"ranks", 2}, {"sum", true}},
                                 {t({}, f64)}, {{f64, {}}})
                      .dump()));
  expectStepRefused("all_reduce", {{"ranks", 1}}, {t({3})}, {{f32, {3}}},
                    "attribute 'ranks' must be at least 2, got 1");
  expectStepRefused("all_reduce", {{"ranks", 2}, {"sum", 1}}, {t({3})},
                    {{f32, {3}}}, "attribute 'sum' must be a boolean");
  expectStepRefused("all_reduce", {{"ranks", 2}}, {t({3}), t({3}, f16)},
                    {{f32, {3}}, {f16, {3}}},
                    "expected input 1 dtype f32 (as input 0), got f16");
  // reduce_scatter: one output per input the rank owns, in order.
  json scatter = {{"ranks", 2}, {"rank", 1}, {"owners", {0, 1}}};
  EXPECT_NO_THROW(Plan::parse(
      singleStepPlan("reduce_scatter", scatter, {t({3}), t({2})}, {{f32, {2}}})
          .dump()));
  EXPECT_NO_THROW(Plan::parse(
      singleStepPlan("reduce_scatter",
                     {{"ranks", 2}, {"rank", 1}, {"owners", {0}}}, {t({3})}, {})
          .dump()));
  expectStepRefused("reduce_scatter", scatter, {t({3}), t({2})}, {{f32, {3}}},
                    "expected output 0 shape 2, got 3");
  expectStepRefused("reduce_scatter", scatter, {t({3}), t({2})},
                    {{f32, {3}}, {f32, {2}}}, "expected 1 output(s), got 2");
  expectStepRefused(
      "reduce_scatter", {{"ranks", 2}, {"rank", 1}, {"owners", {0, 2}}},
      {t({3}), t({2})}, {{f32, {2}}}, "attribute 'owners' names rank 2 of 2");
  // Owner -1: the rank's rows (rank 1 of 2 holds rows 3 and 4 of 5).
  EXPECT_NO_THROW(Plan::parse(
      singleStepPlan("reduce_scatter",
                     {{"ranks", 2}, {"rank", 1}, {"owners", {0, -1}}},
                     {t({3}), t({5, 2})}, {{f32, {2, 2}}})
          .dump()));
  expectStepRefused("reduce_scatter",
                    {{"ranks", 2}, {"rank", 0}, {"owners", {0, -1}}},
                    {t({3}), t({5, 2})}, {{f32, {3}}, {f32, {2, 2}}},
                    "expected output 1 shape 3x2, got 2x2");
  expectStepRefused(
      "reduce_scatter", {{"ranks", 2}, {"rank", 1}, {"owners", {0, -1}}},
      {t({3}), t({1, 2})}, {{f32, {1, 2}}},
      "input 1 is divided by rows (owner -1) but has fewer than 2 rows");
  expectStepRefused(
      "reduce_scatter", {{"ranks", 2}, {"rank", 1}, {"owners", {0, -2}}},
      {t({3}), t({2})}, {{f32, {2}}}, "expected 'owners' values >= -1");
  expectStepRefused("reduce_scatter",
                    {{"ranks", 2}, {"rank", 1}, {"owners", {0}}},
                    {t({3}), t({2})}, {{f32, {2}}},
                    "expected 'owners' to have 2 values, got 1");
  expectStepRefused("reduce_scatter",
                    {{"ranks", 2}, {"rank", 2}, {"owners", {0, 1}}},
                    {t({3}), t({2})}, {{f32, {2}}},
                    "attribute 'rank' must be in [0, 2), got 2");
  expectStepRefused("reduce_scatter", {{"ranks", 2}, {"owners", {0, 1}}},
                    {t({3}), t({2})}, {{f32, {2}}}, "missing attribute 'rank'");
  // broadcast: with or without an input (ZeRO stage 3), root in range.
  EXPECT_NO_THROW(Plan::parse(
      singleStepPlan("broadcast", {{"ranks", 2}, {"root", 1}}, {}, {{f32, {3}}})
          .dump()));
  expectStepRefused("broadcast", {{"ranks", 2}, {"root", 2}}, {}, {{f32, {3}}},
                    "attribute 'root' must be in [0, 2), got 2");
  expectStepRefused("broadcast", {{"ranks", 2}, {"root", 0}}, {t({3})},
                    {{f32, {2}}}, "expected output 0 shape 3, got 2");
  // all_gather: rank 1's rows of the output (and its storage).
  json gather = {{"ranks", 2}, {"rank", 1}};
  EXPECT_NO_THROW(Plan::parse(
      singleStepPlan("all_gather", gather, {t({2, 2})}, {{f32, {5, 2}}})
          .dump()));
  EXPECT_NO_THROW(
      Plan::parse(singleStepPlan("all_gather", gather, {t({2, 2}), t({5, 2})},
                                 {{f32, {5, 2}}})
                      .dump()));
  expectStepRefused("all_gather", gather, {t({3, 2})}, {{f32, {5, 2}}},
                    "input 0 must be rank 1's rows of 5x2, 2x2, got 3x2");
  expectStepRefused("all_gather", gather, {t({2, 2}), t({4, 2})},
                    {{f32, {5, 2}}}, "expected output 0 shape 4x2, got 5x2");
  expectStepRefused("all_gather", gather, {t({1})}, {{f32, {1}}},
                    "output 0 must have at least 2 rows, got 1");
  expectStepRefused("all_gather", {{"ranks", 2}, {"rank", 2}}, {t({2, 2})},
                    {{f32, {5, 2}}},
                    "attribute 'rank' must be in [0, 2), got 2");
  // square_sum: a 0-d f64; clip_coefficient given it.
  EXPECT_NO_THROW(Plan::parse(singleStepPlan("square_sum", json::object(),
                                             {t({3}), t({2}, f16)}, {{f64, {}}})
                                  .dump()));
  expectStepRefused("square_sum", json::object(), {t({3})}, {{f32, {}}},
                    "expected output 0 dtype f64, got f32");
  EXPECT_NO_THROW(
      Plan::parse(singleStepPlan("clip_coefficient",
                                 {{"max_norm", 1.0}, {"square_sum", true}},
                                 {t({}, f64)}, {{f32, {}}})
                      .dump()));
  expectStepRefused(
      "clip_coefficient", {{"max_norm", 1.0}, {"square_sum", true}}, {t({3})},
      {{f32, {}}}, "with square_sum expected a 0-d f64 input, got");
  expectStepRefused(
      "clip_coefficient", {{"max_norm", 1.0}, {"square_sum", true}},
      {t({}, f64), t({}, f64)}, {{f32, {}}}, "expected 1 input(s), got 2");
}

TEST(PlanValidationTest, OptimizerSkipOperand) {
  const DType f32 = DType::F32;
  auto t = [](Shape shape, DType dtype = DType::F32) {
    return HostTensor{dtype, shape, {}};
  };
  // Accepted: a trailing 0-d f32 skip flag on each optimizer.
  EXPECT_NO_THROW(
      Plan::parse(singleStepPlan("sgd_update", {{"lr", 0.1}},
                                 {t({3}), t({3}), t({})}, {{f32, {3}}})
                      .dump()));
  EXPECT_NO_THROW(Plan::parse(
      singleStepPlan(
          "sgd_momentum_update", {{"lr", 0.1}, {"momentum", 0.9}},
          {t({3}, DType::F16), t({3}, DType::F16), t({3}, DType::F16), t({})},
          {{DType::F16, {3}}, {DType::F16, {3}}})
          .dump()));
  std::vector<HostTensor> adam = {t({3}), t({3}), t({3}), t({3}), t({}), t({})};
  std::vector<OutputSpec> adamOut = {{f32, {3}}, {f32, {3}}, {f32, {3}}};
  EXPECT_NO_THROW(Plan::parse(
      singleStepPlan("adam_update", {{"lr", 0.1}}, adam, adamOut).dump()));
  // Refused: a skip of another dtype or rank, one operand too many.
  expectStepRefused("sgd_update", {{"lr", 0.1}},
                    {t({3}), t({3}), t({}, DType::F16)}, {{f32, {3}}},
                    "expected skip of dtype f32, got f16");
  expectStepRefused("sgd_update", {{"lr", 0.1}}, {t({3}), t({3}), t({1})},
                    {{f32, {3}}}, "expected a 0-d skip, got shape 1");
  // A loss scale after the flag: 0-d f32, beside an f32 or f64 param.
  EXPECT_NO_THROW(Plan::parse(
      singleStepPlan("sgd_update", {{"lr", 0.1}},
                     {t({3}), t({3}, DType::F16), t({}), t({})}, {{f32, {3}}})
          .dump()));
  expectStepRefused("sgd_update", {{"lr", 0.1}},
                    {t({3}), t({3}), t({}), t({}, DType::F64)}, {{f32, {3}}},
                    "expected loss scale of dtype f32, got f64");
  expectStepRefused(
      "sgd_update", {{"lr", 0.1}},
      {t({3}, DType::BF16), t({3}, DType::BF16), t({}), t({})},
      {{DType::BF16, {3}}},
      "expected an f32 or f64 param beside a loss scale, got bf16");
  expectStepRefused("sgd_update", {{"lr", 0.1}},
                    {t({3}), t({3}), t({}), t({}), t({})}, {{f32, {3}}},
                    "expected 2 to 4 inputs, got 5");
  expectStepRefused("sgd_momentum_update", {{"lr", 0.1}, {"momentum", 0.9}},
                    {t({3}), t({3}), t({3}), t({}, DType::I32)},
                    {{f32, {3}}, {f32, {3}}},
                    "expected skip of dtype f32, got i32");
  adam[5] = t({}, DType::F64);
  expectStepRefused("adam_update", {{"lr", 0.1}}, adam, adamOut,
                    "expected skip of dtype f32, got f64");
  adam[5] = t({});
  adam.push_back(t({}));
  EXPECT_NO_THROW(Plan::parse(
      singleStepPlan("adam_update", {{"lr", 0.1}}, adam, adamOut).dump()));
  adam.push_back(t({}));
  expectStepRefused("adam_update", {{"lr", 0.1}}, adam, adamOut,
                    "expected 5 to 7 inputs, got 8");
  // The flag is never overwritten by a new value.
  expectRefused(inPlacePlan("sgd_update", {{"lr", 0.1}}, {t({}), t({}), t({})},
                            {{f32, {}}}, {{0, 2}}),
                "but 'sgd_update' cannot run in place on input 2 producing "
                "output 0");
  std::vector<HostTensor> scalars(6, t({}));
  expectRefused(
      inPlacePlan("adam_update", {{"lr", 0.1}}, scalars,
                  {{f32, {}}, {f32, {}}, {f32, {}}}, {{1, 5}}),
      "but 'adam_update' cannot run in place on input 5 producing output 1");
}

TEST(PlanValidationTest, MixedPrecisionKernelRules) {
  const DType f32 = DType::F32, f16 = DType::F16, i32 = DType::I32;
  auto t = [](Shape shape, DType dtype = DType::F32) {
    return HostTensor{dtype, shape, {}};
  };
  // cast
  EXPECT_NO_THROW(Plan::parse(
      singleStepPlan("cast", json::object(), {t({2, 3})}, {{f16, {2, 3}}})
          .dump()));
  expectStepRefused("cast", json::object(), {t({2, 3}, i32)}, {{f16, {2, 3}}},
                    "expected input of a float dtype (f32, f64, f16, bf16), "
                    "got i32");
  expectStepRefused("cast", json::object(), {t({2, 3})}, {{DType::I64, {2, 3}}},
                    "expected output 0 of a float dtype (f32, f64, f16, "
                    "bf16), got i64");
  expectStepRefused("cast", json::object(), {t({2, 3})}, {{f16, {3, 2}}},
                    "expected output 0 shape 2x3, got 3x2");
  expectStepRefused("cast", {{"dtype", "f16"}}, {t({2, 3})}, {{f16, {2, 3}}},
                    "unknown attribute 'dtype' for kernel 'cast'");
  // found_inf
  EXPECT_NO_THROW(
      Plan::parse(singleStepPlan("found_inf", json::object(),
                                 {t({2, 3}), t({4}, f16), t({}, DType::BF16),
                                  t({1}, DType::F64)},
                                 {{f32, {}}})
                      .dump()));
  expectStepRefused("found_inf", json::object(), {}, {{f32, {}}},
                    "expected at least 1 input(s), got 0");
  expectStepRefused("found_inf", json::object(), {t({3}), t({3}, i32)},
                    {{f32, {}}}, "expected input 1 of a float dtype");
  expectStepRefused("found_inf", json::object(), {t({3})}, {{f16, {}}},
                    "expected output 0 dtype f32, got f16");
  expectStepRefused("found_inf", json::object(), {t({3})}, {{f32, {1}}},
                    "expected output 0 shape scalar, got 1");
  // unscale
  expectStepRefused("unscale", json::object(), {t({3}, f16), t({1})},
                    {{f16, {3}}}, "expected a 0-d scale, got shape 1");
  expectStepRefused("unscale", json::object(), {t({3}, f16), t({}, f16)},
                    {{f16, {3}}}, "expected scale of dtype f32, got f16");
  expectStepRefused("unscale", json::object(), {t({3}, i32), t({})},
                    {{i32, {3}}}, "expected grad of a float dtype");
  expectStepRefused("unscale", json::object(), {t({3}, f16), t({})},
                    {{f32, {3}}}, "expected output 0 dtype f16, got f32");
  expectStepRefused("unscale", json::object(), {t({3}), t({}), t({})},
                    {{f32, {3}}}, "expected 2 input(s), got 3");
  // update_loss_scale
  json attrs = {{"growth_factor", 2.0},
                {"backoff_factor", 0.5},
                {"growth_interval", 2000}};
  std::vector<HostTensor> in = {t({}), t({}, i32), t({})};
  std::vector<OutputSpec> out = {{f32, {}}, {i32, {}}};
  EXPECT_NO_THROW(
      Plan::parse(singleStepPlan("update_loss_scale", attrs, in, out).dump()));
  for (const char *name :
       {"growth_factor", "backoff_factor", "growth_interval"}) {
    json missing = attrs;
    missing.erase(name);
    expectStepRefused("update_loss_scale", missing, in, out,
                      concat("missing attribute '", name, "'"));
  }
  auto refusedWith = [&](const char *name, const json &value,
                         const std::string &expected) {
    json a = attrs;
    a[name] = value;
    expectStepRefused("update_loss_scale", a, in, out, expected);
  };
  refusedWith("growth_interval", 0,
              "expected 'growth_interval' in [1, 2147483647] (the growth "
              "tracker is i32), got 0");
  refusedWith("growth_interval", -5, "expected 'growth_interval' in [1, ");
  refusedWith("growth_interval", 1ll << 31,
              "expected 'growth_interval' in [1, 2147483647] (the growth "
              "tracker is i32), got 2147483648");
  refusedWith("growth_interval", 1.5,
              "attribute 'growth_interval' must be an integer, got 1.5");
  refusedWith("growth_factor", -2.0, "expected 'growth_factor' > 0, got -2");
  refusedWith("growth_factor", "2",
              "attribute 'growth_factor' must be a "
              "number, got \"2\"");
  refusedWith("backoff_factor", 0, "expected 'backoff_factor' > 0, got 0");
  json extra = attrs;
  extra["enabled"] = true;
  expectStepRefused("update_loss_scale", extra, in, out,
                    "unknown attribute 'enabled' for kernel "
                    "'update_loss_scale'");
  expectStepRefused("update_loss_scale", attrs, {t({}), t({}), t({})}, out,
                    "expected growth_tracker of dtype i32, got f32");
  expectStepRefused("update_loss_scale", attrs,
                    {t({}, DType::F64), t({}, i32), t({})}, out,
                    "expected scale of dtype f32, got f64");
  expectStepRefused("update_loss_scale", attrs, {t({}), t({}, i32), t({1})},
                    out, "expected a 0-d found_inf, got shape 1");
  expectStepRefused("update_loss_scale", attrs, in,
                    {{f32, {}}, {DType::I64, {}}},
                    "expected output 1 dtype i32, got i64");
  expectStepRefused("update_loss_scale", attrs, in, {{f32, {}}},
                    "expected 2 output(s), got 1");
  // select
  EXPECT_NO_THROW(Plan::parse(
      singleStepPlan("select", json::object(),
                     {t({}), t({3}, DType::I64), t({3}, DType::I64)},
                     {{DType::I64, {3}}})
          .dump()));
  expectStepRefused("select", json::object(), {t({}, i32), t({3}), t({3})},
                    {{f32, {3}}}, "expected condition of dtype f32, got i32");
  expectStepRefused("select", json::object(), {t({2}), t({3}), t({3})},
                    {{f32, {3}}}, "expected a 0-d condition, got shape 2");
  expectStepRefused("select", json::object(),
                    {t({}), t({3}, DType::I64), t({3}, i32)},
                    {{DType::I64, {3}}},
                    "expected false_value of type 3 i64 (as true_value), "
                    "got 3 i32");
  expectStepRefused("select", json::object(), {t({}), t({3}), t({3})},
                    {{f32, {4}}}, "expected output 0 shape 3, got 4");
}

TEST(PlanValidationTest, InPlaceMixedPrecisionSteps) {
  const DType f32 = DType::F32, i32 = DType::I32;
  auto t = [](Shape shape, DType dtype = DType::F32) {
    return HostTensor{dtype, shape, {}};
  };
  // Accepted: unscale over its gradient, the new scale and tracker over
  // the old ones.
  EXPECT_NO_THROW(Plan::parse(inPlacePlan("unscale", json::object(),
                                          {t({3}, DType::F16), t({})},
                                          {{DType::F16, {3}}}, {{0, 0}})
                                  .dump()));
  json attrs = {{"growth_factor", 2.0},
                {"backoff_factor", 0.5},
                {"growth_interval", 2000}};
  std::vector<HostTensor> in = {t({}), t({}, i32), t({})};
  std::vector<OutputSpec> out = {{f32, {}}, {i32, {}}};
  EXPECT_NO_THROW(Plan::parse(
      inPlacePlan("update_loss_scale", attrs, in, out, {{0, 0}, {1, 1}})
          .dump()));
  // Refused: anything else.
  expectRefused(inPlacePlan("unscale", json::object(), {t({}), t({})},
                            {{f32, {}}}, {{0, 1}}),
                "but 'unscale' cannot run in place on input 1 producing "
                "output 0");
  expectRefused(
      inPlacePlan("update_loss_scale", attrs, in, out, {{0, 2}}),
      "but 'update_loss_scale' cannot run in place on input 2 producing "
      "output 0");
  expectRefused(
      inPlacePlan("cast", json::object(), {t({3})}, {{f32, {3}}}, {{0, 0}}),
      "but 'cast' cannot run in place on input 0");
  expectRefused(
      inPlacePlan("found_inf", json::object(), {t({})}, {{f32, {}}}, {{0, 0}}),
      "but 'found_inf' cannot run in place on input 0");
  expectRefused(inPlacePlan("select", json::object(), {t({}), t({}), t({})},
                            {{f32, {}}}, {{0, 1}}),
                "but 'select' cannot run in place on input 1");
}

TEST(PlanValidationTest, InPlaceBackwardAndOptimizerSteps) {
  auto t = [](Shape shape, DType dtype = DType::F32) {
    return HostTensor{dtype, shape, {}};
  };
  const DType f32 = DType::F32;
  // Accepted: new parameters and buffers over the old ones, in any pairing.
  std::vector<HostTensor> adam = {t({1}), t({1}), t({1}), t({1}), t({})};
  std::vector<OutputSpec> adamOut = {{f32, {1}}, {f32, {1}}, {f32, {1}}};
  EXPECT_NO_THROW(Plan::parse(inPlacePlan("adam_update", {{"lr", 0.1}}, adam,
                                          adamOut, {{0, 0}, {1, 2}, {2, 3}})
                                  .dump()));
  EXPECT_NO_THROW(Plan::parse(
      inPlacePlan("sgd_momentum_update", {{"lr", 0.1}, {"momentum", 0.9}},
                  {t({3}), t({3}), t({3})}, {{f32, {3}}, {f32, {3}}},
                  {{0, 2}, {1, 0}})
          .dump()));
  // Refused: Adam's step count, reductions and scatters.
  expectRefused(
      inPlacePlan("adam_update", {{"lr", 0.1}}, adam, adamOut, {{1, 4}}),
      "but 'adam_update' cannot run in place on input 4 producing "
      "output 1");
  expectRefused(inPlacePlan("sum_to", json::object(), {t({1, 3})}, {{f32, {3}}},
                            {{0, 0}}),
                "but 'sum_to' cannot run in place on input 0 producing "
                "output 0");
  expectRefused(inPlacePlan("max_pool2d_backward",
                            {{"kernel_size", {2, 2}}, {"strides", {2, 2}}},
                            {t({1, 1, 2, 2}), t({1, 1, 4, 4})},
                            {{f32, {1, 1, 4, 4}}}, {{0, 1}}),
                "but 'max_pool2d_backward' cannot run in place on input 1");
  expectRefused(inPlacePlan("batch_norm_backward", json::object(),
                            {t({2, 3}), t({2, 3}), t({3})},
                            {{f32, {2, 3}}, {f32, {3}}, {f32, {3}}}, {{1, 2}}),
                "but 'batch_norm_backward' cannot run in place on input 2 "
                "producing output 1");
  expectRefused(inPlacePlan("mse_loss_backward", json::object(),
                            {t({}), t({1}), t({1})}, {{f32, {1}}}, {{0, 0}}),
                "but 'mse_loss_backward' cannot run in place on input 0");
}

TEST(PlanValidationTest, DataFlow) {
  json p = mlpPlan();
  p["steps"][1]["outputs"] = {0};
  p["steps"][2]["inputs"] = {4, 3};
  expectRefused(
      p, "plan: steps[1] (relu at mlp.mlir:4:8): output 0 is an \"argument\" "
         "tensor; steps write only arena tensors, views of them, and "
         "parameters or state they update in place");
  p = mlpPlan();
  std::swap(p["steps"][0], p["steps"][1]);
  expectRefused(p, "plan: steps[0] (relu at mlp.mlir:4:8): input 4 is read "
                   "before any step writes it");
  p = mlpPlan();
  p["steps"].erase(2);
  expectRefused(p, "plan: results[0]: tensor 6 is never written by a step");
  // Matmul cannot run in place.
  p = mlpPlan();
  p["tensors"].push_back({{"id", 7},
                          {"dtype", "f32"},
                          {"shape", {4, 5}},
                          {"storage", "view"},
                          {"of", 5}});
  p["steps"].push_back(
      {{"kernel", "mul"}, {"inputs", {5, 5}}, {"outputs", {7}}});
  // Tensor 5's value is gone once mul writes over it: the result is 7.
  p["results"] = {6, 7};
  auto ok = Plan::parse(p.dump()); // mul in place is fine.
  EXPECT_EQ(ok->steps.size(), 4u);
  p["steps"][3] = {{"kernel", "transpose"},
                   {"inputs", {5}},
                   {"outputs", {7}},
                   {"attrs", {{"permutation", {0, 1}}}}};
  expectRefused(
      p, "plan: steps[3] (transpose): output 7 shares storage with input 5, "
         "but 'transpose' cannot run in place on input 0 producing output 0");
}

TEST(PlanValidationTest, LoadFileNamesThePath) {
  std::string path = ::testing::TempDir() + "/memopt_bad_plan.json";
  {
    std::ofstream out(path);
    json p = mlpPlan();
    p["version"] = 3;
    out << p.dump();
  }
  try {
    Plan::loadFile(path);
    ADD_FAILURE() << "accepted";
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidPlan);
    EXPECT_EQ(
        std::string(e.what()),
        "plan: " + path +
            ": unsupported version 3 (this runtime reads versions 1 to 2)");
  }
  std::remove(path.c_str());
  try {
    Plan::loadFile(path);
    ADD_FAILURE() << "accepted a missing file";
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), ErrorCode::Io);
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos);
  }
  try {
    Plan::loadFile(::testing::TempDir());
    ADD_FAILURE() << "accepted a directory";
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), ErrorCode::Io);
    EXPECT_NE(std::string(e.what()).find("it is a directory"),
              std::string::npos)
        << e.what();
  }
}

} // namespace

/// An in-place step destroys its input's value: the reference plan with
/// relu running in place (tensor 5 a view of tensor 4) is valid while
/// nothing reads tensor 4 afterwards, and refused when a later step, or a
/// result, does (what a lowering that changed which buffer a kernel writes
/// after --memopt-inplace would emit).
TEST(PlanValidationTest, InPlaceInputIsNotReadAfterwards) {
  json inplace = mlpPlan();
  inplace["tensors"][5] = {{"id", 5},
                           {"dtype", "f32"},
                           {"shape", {4, 5}},
                           {"storage", "view"},
                           {"of", 4}};
  inplace["results"] = {6, 5};
  EXPECT_NO_THROW(Plan::parse(inplace.dump()));

  json readLater = inplace;
  readLater["steps"][2]["inputs"] = {4, 3};
  expectRefused(readLater, "steps[2] (cross_entropy): tensor 4 is read after "
                           "steps[1] wrote tensor 5 over its storage (in "
                           "place)");
  json resultLater = inplace;
  resultLater["results"] = {6, 4};
  expectRefused(resultLater,
                "results[1]: tensor 4 is read after steps[1] wrote tensor 5");
}
