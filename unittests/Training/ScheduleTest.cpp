//===- ScheduleTest.cpp - scheduled steps are bit-identical ---------------===//
//
// --memopt-schedule only reorders ops and inserts frees: the loss and the
// updated parameters of every step must equal the unscheduled step's bit for
// bit (f32), here over several steps of models with batch norm, residual
// connections and attention.
//
//===----------------------------------------------------------------------===//

#include "TrainingTestUtil.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace memopt::testing;

namespace {

void expectBitIdentical(const std::string &source, const std::string &autodiff,
                        const std::string &transform, int steps) {
  auto base = CompiledStep::compile(source, autodiff);
  auto other = CompiledStep::compile(source, autodiff + "," + transform);
  ASSERT_TRUE(base && other);
  expectStepsBitIdentical(*base, *other, steps, 5);
}

TEST(Schedule, CnnWithBatchNormBitIdentical) {
  expectBitIdentical(exampleSource("cnn.mlir"),
                     "memopt-autodiff{optimizer=momentum lr=0.05}",
                     "memopt-schedule", 3);
}

TEST(Schedule, MlpWithAdamBitIdentical) {
  expectBitIdentical(exampleSource("mlp.mlir"),
                     "memopt-autodiff{optimizer=adam}", "memopt-schedule", 3);
}

TEST(PlanMemory, PlannedArenaBitIdentical) {
  // Buffers now share bytes across disjoint lifetimes: every result must
  // still be exactly the unplanned step's.
  expectBitIdentical(exampleSource("cnn.mlir"),
                     "memopt-autodiff{optimizer=adam}",
                     "memopt-schedule,memopt-plan-memory", 3);
  expectBitIdentical(exampleSource("mlp.mlir"),
                     "memopt-autodiff{optimizer=momentum}",
                     "memopt-plan-memory", 2);
}

TEST(Schedule, MicrobatchedBitIdentical) {
  expectBitIdentical(exampleSource("mlp.mlir"),
                     "memopt-microbatch{count=4},memopt-autodiff",
                     "memopt-schedule", 2);
}

} // namespace
