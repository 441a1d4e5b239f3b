//===- MicrobatchTest.cpp - micro-batching equals the full batch ----------===//
//
// With --memopt-microbatch=count=k the step runs k forward/backward passes on
// slices of the batch and one update. For models without batch norm (or
// dropout) the loss and the updated parameters must equal the full-batch
// step's, up to the rounding of a different summation order (checked in f64
// at 1e-12, and in f32 at float precision).
//
//===----------------------------------------------------------------------===//

#include "TrainingTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace memopt::testing;

namespace {

const char *kConvNet = R"mlir(
func.func @f(%w1: tensor<4x3x3x3xTYPE> {memopt.param}, %b1: tensor<4xTYPE> {memopt.param},
             %w2: tensor<5x16xTYPE> {memopt.param}, %b2: tensor<5xTYPE> {memopt.param},
             %x: tensor<8x3x4x4xTYPE>, %y: tensor<8xi64>) -> tensor<TYPE> {
  %c = memopt.conv2d %x, %w1, %b1 {padding = array<i64: 1, 1>} : tensor<8x3x4x4xTYPE>, tensor<4x3x3x3xTYPE>, tensor<4xTYPE>
  %r = memopt.relu %c : tensor<8x4x4x4xTYPE>
  %p = memopt.max_pool2d %r {kernel_size = array<i64: 2, 2>} : tensor<8x4x4x4xTYPE>
  %f = memopt.reshape %p : tensor<8x4x2x2xTYPE> -> tensor<8x16xTYPE>
  %l = memopt.linear %f, %w2, %b2 : tensor<8x16xTYPE>, tensor<5x16xTYPE>, tensor<5xTYPE>
  %loss = memopt.cross_entropy %l, %y : tensor<8x5xTYPE>, tensor<8xi64>
  return %loss : tensor<TYPE>
}
)mlir";

std::string withType(std::string source, const std::string &type) {
  for (size_t at; (at = source.find("TYPE")) != std::string::npos;)
    source.replace(at, 4, type);
  return source;
}

void expectSameStep(const std::string &type, const std::string &optimizer,
                    int64_t count, double tolerance) {
  std::string source = withType(kConvNet, type);
  std::string autodiff = "memopt-autodiff{" + optimizer + "}";
  auto full = CompiledStep::compile(source, autodiff);
  auto micro = CompiledStep::compile(
      source,
      "memopt-microbatch{count=" + std::to_string(count) + "}," + autodiff);
  ASSERT_TRUE(full && micro);
  full->randomize(42);
  micro->randomize(42);
  for (int step = 0; step < 2; ++step) {
    full->run(step);
    micro->run(step);
    EXPECT_NEAR(micro->result(0)[0], full->result(0)[0],
                tolerance * std::fabs(full->result(0)[0]))
        << "loss, step " << step;
    full->applyUpdates();
    micro->applyUpdates();
    for (size_t arg = 0; arg < 4; ++arg) {
      auto a = full->argument(arg), b = micro->argument(arg);
      for (size_t i = 0; i < a.size(); ++i)
        EXPECT_NEAR(b[i], a[i], tolerance * (1 + std::fabs(a[i])))
            << "parameter " << arg << "[" << i << "], step " << step;
    }
  }
}

TEST(Microbatch, SgdEqualsFullBatchF64) {
  expectSameStep("f64", "optimizer=sgd lr=0.1", 4, 1e-12);
}

TEST(Microbatch, AdamEqualsFullBatchF64) {
  expectSameStep("f64", "optimizer=adam lr=0.01", 2, 1e-10);
}

TEST(Microbatch, MomentumEqualsFullBatchF32) {
  expectSameStep("f32", "optimizer=momentum lr=0.05", 8, 2e-5);
}

} // namespace
