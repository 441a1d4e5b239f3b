//===- MixedPrecisionTest.cpp - f16 training steps on the CPU runtime -----===//
//
// --memopt-mixed-precision with --memopt-autodiff, run on the CPU runtime
// (f16 storage with round-to-nearest-even after every kernel, f32
// accumulation):
//
//  * GradScaler's behaviour: an overflow skips the whole update (parameters
//    and optimizer state bit-identical) and halves the scale; the scale
//    doubles after `growth-interval` finite steps; the loss is unscaled.
//  * Loss scaling's purpose: a gradient that underflows in f16 without
//    scaling survives with it, close to the f32 gradient.
//  * The memory passes stay exact on top: checkpointing and in place leave
//    a mixed-precision step bit-identical.
//
// Convergence against f32 is checked end to end with memopt-run
// (test/Runtime/mixed-precision.test).
//
//===----------------------------------------------------------------------===//

#include "TrainingTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace memopt::testing;

namespace {

/// examples/mlp.mlir has six parameters, images and labels; autodiff adds
/// the loss scale and its growth counter first, then optimizer state.
constexpr size_t kMlpParams = 6;
constexpr size_t kMlpScale = 8, kMlpTracker = 9;

std::vector<std::vector<double>> arguments(const CompiledStep &step,
                                           size_t first, size_t count) {
  std::vector<std::vector<double>> values;
  for (size_t i = first; i < first + count; ++i)
    values.push_back(step.argument(i));
  return values;
}

TEST(MixedPrecision, OverflowSkipsTheUpdateAndHalvesTheScale) {
  // A scale of 1e38 overflows every f16 gradient.
  auto step = CompiledStep::compile(
      exampleSource("mlp.mlir"),
      "memopt-mixed-precision{growth-interval=3},"
      "memopt-autodiff{optimizer=momentum lr=0.05},memopt-schedule,"
      "memopt-plan-memory");
  ASSERT_TRUE(step);
  ASSERT_EQ(step->plan().arguments[kMlpScale].role,
            memopt::runtime::ArgumentRole::OptimizerState);
  step->randomize(3);
  EXPECT_EQ(step->argument(kMlpScale), std::vector<double>{65536.0})
      << "the scale starts at init-scale";
  step->setArgument(kMlpScale, {1e38});
  auto params = arguments(*step, 0, kMlpParams);
  auto buffers = arguments(*step, kMlpTracker + 1, kMlpParams);

  step->run(0);
  double loss = step->result(0)[0];
  EXPECT_TRUE(std::isfinite(loss)) << "the returned loss is unscaled";
  step->applyUpdates();
  EXPECT_EQ(arguments(*step, 0, kMlpParams), params)
      << "parameters changed on an overflowing step";
  EXPECT_EQ(arguments(*step, kMlpTracker + 1, kMlpParams), buffers)
      << "momentum buffers changed on an overflowing step";
  EXPECT_EQ(step->argument(kMlpScale),
            std::vector<double>{static_cast<float>(1e38 * 0.5)});
  EXPECT_EQ(step->argument(kMlpTracker), std::vector<double>{0.0});

  // From a safe scale (the test's uniform(-1, 1) weights make gradients in
  // the hundreds): two finite steps count, the third doubles the scale
  // (growth-interval=3) and resets the counter; every step updates.
  step->setArgument(kMlpScale, {2.0});
  const double expectedScale[] = {2, 2, 4, 4};
  const double expectedTracker[] = {1, 2, 0, 1};
  for (int i = 0; i < 4; ++i) {
    auto before = arguments(*step, 0, kMlpParams);
    step->run(i + 1);
    step->applyUpdates();
    EXPECT_NE(arguments(*step, 0, kMlpParams), before)
        << "finite step " << i << " did not update";
    EXPECT_EQ(step->argument(kMlpScale), std::vector<double>{expectedScale[i]})
        << "after finite step " << i;
    EXPECT_EQ(step->argument(kMlpTracker),
              std::vector<double>{expectedTracker[i]})
        << "after finite step " << i;
  }
}

TEST(MixedPrecision, LossIsUnscaledAndUpdatesMatchStaticScaling) {
  // The forward pass does not see the scale: the loss is the same bit for
  // bit with any scale. A power-of-two scale that neither overflows nor
  // underflows changes the f16 gradients only where they were subnormal,
  // so the updates agree closely.
  std::string tail = ",memopt-autodiff{optimizer=sgd lr=0.1}";
  auto scaled =
      CompiledStep::compile(exampleSource("cnn.mlir"),
                            "memopt-mixed-precision{loss-scale=1024}" + tail);
  auto plain =
      CompiledStep::compile(exampleSource("cnn.mlir"),
                            "memopt-mixed-precision{loss-scale=none}" + tail);
  ASSERT_TRUE(scaled && plain);
  scaled->randomize(5);
  plain->randomize(5);
  scaled->run();
  plain->run();
  ASSERT_EQ(scaled->result(0), plain->result(0));
  for (size_t r = 1; r < plain->plan().results.size(); ++r) {
    auto a = scaled->result(r), b = plain->result(r);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i)
      ASSERT_NEAR(a[i], b[i], 1e-3 + 1e-3 * std::fabs(b[i]))
          << "result " << r << " element " << i;
  }
}

/// loss = mse(x·wᵀ, t) with w = 0, x = t = 1e-4: dL/dw = -5e-9 per element,
/// below f16's smallest subnormal (6e-8).
const char *kTinyGradient = R"mlir(
func.func @tiny(%w: tensor<4x8xf32> {memopt.param}, %x: tensor<2x8xf32>,
                %t: tensor<2x4xf32>) -> tensor<f32> {
  %o = memopt.linear %x, %w : tensor<2x8xf32>, tensor<4x8xf32>
  %l = memopt.mse_loss %o, %t : tensor<2x4xf32>
  return %l : tensor<f32>
}
)mlir";

std::vector<double> tinyGradient(const std::string &precision) {
  auto step = CompiledStep::compile(
      kTinyGradient, precision + "memopt-autodiff{optimizer=none}");
  if (!step)
    return {};
  step->randomize(1);
  step->setArgument(0, std::vector<double>(32, 0.0));
  step->setArgument(1, std::vector<double>(16, 1e-4));
  step->setArgument(2, std::vector<double>(8, 1e-4));
  step->run();
  return step->result(1);
}

TEST(MixedPrecision, ScalingKeepsGradientsThatUnderflowWithoutIt) {
  std::vector<double> f32 = tinyGradient("");
  std::vector<double> unscaled =
      tinyGradient("memopt-mixed-precision{loss-scale=none},");
  std::vector<double> scaled = tinyGradient("memopt-mixed-precision,");
  ASSERT_EQ(f32.size(), 32u);
  ASSERT_EQ(unscaled.size(), 32u);
  ASSERT_EQ(scaled.size(), 32u);
  for (size_t i = 0; i < f32.size(); ++i) {
    ASSERT_NEAR(f32[i], -5e-9, 1e-11) << "f32 reference, element " << i;
    EXPECT_EQ(unscaled[i], 0.0)
        << "element " << i << " should underflow in f16 without scaling";
    EXPECT_NEAR(scaled[i], f32[i], 1e-2 * std::fabs(f32[i]))
        << "element " << i << " lost with a scale of 65536";
  }
}

/// Checkpointing and in place change only order and storage, so on top of
/// mixed precision they are still bit-identical.
void expectExactOnTop(const std::string &source, const std::string &passes) {
  SCOPED_TRACE(passes);
  std::string front = "memopt-mixed-precision{growth-interval=2},"
                      "memopt-autodiff{optimizer=momentum lr=0.05}";
  std::string tail = ",memopt-schedule,memopt-plan-memory";
  auto base = CompiledStep::compile(source, front + tail);
  auto other = CompiledStep::compile(source, front + "," + passes + tail);
  ASSERT_TRUE(base && other);
  expectStepsBitIdentical(*base, *other, 3, 7);
}

TEST(MixedPrecision, CheckpointAndInPlaceStayBitIdentical) {
  for (const char *passes :
       {"memopt-checkpoint{strategy=sqrt}",
        "memopt-checkpoint{strategy=optimal}", "memopt-inplace",
        "memopt-checkpoint{strategy=sqrt},memopt-inplace"}) {
    expectExactOnTop(exampleSource("cnn.mlir"), passes);
    expectExactOnTop(suiteModelSource("cifar-resnet"), passes);
    expectExactOnTop(suiteModelSource("gpt2"), passes);
  }
}

/// A linear layer of 1024 -> 2048 at batch 2: its weight gradient (2M
/// values) dwarfs what it is computed from (2x2048 and 2x1024 values).
const char *kWideLayer = R"(
func.func @wide(%w1: tensor<2048x1024xf32> {memopt.param},
                %b1: tensor<2048xf32> {memopt.param},
                %w2: tensor<10x2048xf32> {memopt.param},
                %b2: tensor<10xf32> {memopt.param},
                %x: tensor<2x1024xf32>, %y: tensor<2xi64>) -> tensor<f32> {
  %0 = memopt.linear %x, %w1, %b1 : tensor<2x1024xf32>, tensor<2048x1024xf32>, tensor<2048xf32>
  %1 = memopt.relu %0 : tensor<2x2048xf32>
  %2 = memopt.linear %1, %w2, %b2 : tensor<2x2048xf32>, tensor<10x2048xf32>, tensor<10xf32>
  %3 = memopt.cross_entropy %2, %y : tensor<2x10xf32>, tensor<2xi64>
  return %3 : tensor<f32>
}
)";

/// --memopt-partition checks the large weight gradient for overflow when it
/// is computed and computes it again for its update (two found_inf steps in
/// the plan): the step stays bit-identical, overflowing steps included.
TEST(MixedPrecision, RecheckedGradientsStayBitIdentical) {
  std::string front = "memopt-mixed-precision{growth-interval=2},"
                      "memopt-autodiff{optimizer=sgd lr=0.05}";
  std::string tail = ",memopt-schedule,memopt-plan-memory";
  auto base = CompiledStep::compile(kWideLayer, front + tail);
  auto other =
      CompiledStep::compile(kWideLayer, front + ",memopt-partition" + tail);
  ASSERT_TRUE(base && other);
  auto checks = [](const CompiledStep &step) {
    return llvm::count_if(step.plan().steps, [](const auto &s) {
      return s.kernel == memopt::runtime::KernelKind::FoundInf;
    });
  };
  EXPECT_EQ(checks(*base), 1);
  EXPECT_EQ(checks(*other), 2);
  expectStepsBitIdentical(*base, *other, 3, 7);
}

} // namespace
