//===- PlanValidationTest.cpp - the plan loader refuses bad plans ---------===//
//
// One test per rule of docs/plan-format.md's "Validation" section (and the
// kernel rules): each mutates a valid plan and checks that loading fails
// with an InvalidPlan error whose message names the offending entry.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

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
  p["version"] = 2;
  expectRefused(p,
                "plan: unsupported version 2 (this runtime reads version 1)");
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
                   "\"state\" or \"data\", got \"input\"");
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
  expectRefused(
      p, "plan: tensors[7]: values[0] must be a number, got string \"one\"");
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

TEST(PlanValidationTest, Attributes) {
  HostTensor x{DType::F32, {2, 3, 8, 8}, {}};
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
                    "expected input 1 to match input 0 (2x3x8x8) in every "
                    "dimension but 0, got 2x3x8x7");
}

TEST(PlanValidationTest, DataFlow) {
  json p = mlpPlan();
  p["steps"][1]["outputs"] = {0};
  p["steps"][2]["inputs"] = {4, 3};
  expectRefused(
      p, "plan: steps[1] (relu at mlp.mlir:4:8): output 0 is an \"argument\" "
         "tensor; steps write only arena tensors or views of them");
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
    EXPECT_EQ(std::string(e.what()),
              "plan: " + path +
                  ": unsupported version 3 (this runtime reads version 1)");
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
