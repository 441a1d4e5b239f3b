//===- LoraTest.cpp - --memopt-lora against the graph it adapts -----------===//
//
// LoRA leaves what a graph computes unchanged until the adapters train (B
// starts at zero), freezes every other parameter bit for bit, and the
// adapters' gradients match central differences, for a linear weight and a
// matmul weight (in × out) alike.
//
//===----------------------------------------------------------------------===//

#include "TrainingTestUtil.h"

#include <gtest/gtest.h>

using namespace memopt::testing;

namespace {

const char *kGraph = R"mlir(
func.func @f(%w: tensor<6x5xf64> {memopt.param} loc("fc.w"),
             %b: tensor<6xf64> {memopt.param} loc("fc.b"),
             %v: tensor<6x3xf64> {memopt.param} loc("proj"),
             %x: tensor<7x5xf64>, %t: tensor<7x3xf64>) -> tensor<f64> {
  %y = memopt.linear %x, %w, %b : tensor<7x5xf64>, tensor<6x5xf64>, tensor<6xf64>
  %r = memopt.tanh %y : tensor<7x6xf64>
  %z = memopt.matmul %r, %v : tensor<7x6xf64>, tensor<6x3xf64>
  %l = memopt.mse_loss %z, %t : tensor<7x3xf64>
  return %l : tensor<f64>
}
)mlir";

const char *kLora = "memopt-lora{targets=fc.w|proj rank=2 alpha=3}";

// Arguments: the five of the source, then fc.w's A (2x5) and B (6x2), then
// proj's A (6x2) and B (2x3), then the optimizer state.
TEST(Lora, StartsAsTheOriginalAndTrainsOnlyTheAdapters) {
  auto original =
      CompiledStep::compile(kGraph, "memopt-autodiff{optimizer=adam lr=0.01}");
  auto adapted = CompiledStep::compile(
      kGraph, std::string(kLora) + ",memopt-autodiff{optimizer=adam lr=0.01}");
  ASSERT_TRUE(original && adapted);
  ASSERT_EQ(adapted->plan().arguments[5].name, "fc.w.lora_A");
  ASSERT_EQ(adapted->plan().arguments[8].name, "proj.lora_B");
  original->randomize(3);
  adapted->randomize(3);
  for (size_t i = 0; i < 5; ++i)
    ASSERT_EQ(original->argument(i), adapted->argument(i));
  // B at zero, as memopt-run initialises it (memopt.initial_value).
  adapted->setArgument(6, std::vector<double>(12, 0.0));
  adapted->setArgument(8, std::vector<double>(6, 0.0));
  original->run();
  adapted->run();
  EXPECT_EQ(adapted->result(0), original->result(0));
  // Three steps: the original weights and bias stay bit for bit, the
  // adapters move.
  const std::vector<double> w = adapted->argument(0), b = adapted->argument(1),
                            v = adapted->argument(2),
                            projB = adapted->argument(8);
  for (int s = 0; s < 3; ++s) {
    adapted->run(s);
    adapted->applyUpdates();
  }
  EXPECT_EQ(adapted->argument(0), w);
  EXPECT_EQ(adapted->argument(1), b);
  EXPECT_EQ(adapted->argument(2), v);
  EXPECT_NE(adapted->argument(8), projB);
  size_t trained = 0;
  for (const auto &update : adapted->plan().updates)
    trained += update.argument < 9;
  EXPECT_EQ(trained, 4u) << "updates of the four adapters only";
}

TEST(Lora, AdapterGradientsMatchFiniteDifferences) {
  auto forward = CompiledStep::compile(kGraph, kLora);
  auto gradient = CompiledStep::compile(
      kGraph, std::string(kLora) + ",memopt-autodiff{optimizer=none}");
  ASSERT_TRUE(forward && gradient);
  // Every argument random, B included, so every adapter has a gradient.
  forward->randomize(5);
  gradient->randomize(5);
  gradient->run();
  forward->run();
  ASSERT_EQ(gradient->result(0), forward->result(0));
  // Results: the loss, then the gradients of the four adapters.
  ASSERT_EQ(gradient->plan().results.size(), 5u);
  for (size_t k = 0; k < 4; ++k)
    expectGradientMatchesFiniteDifferences(*forward, 5 + k,
                                           gradient->result(1 + k), "lora");
}

} // namespace
