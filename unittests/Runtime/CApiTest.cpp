//===- CApiTest.cpp - the C API -------------------------------------------===//
//
// The reference MLP plan through the C API gives the C++ API's results; a
// training plan's updates and optimizer state through the C API; every
// failure is a status code plus a message, never an exception.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "memopt/runtime/memopt_runtime.h"

#include <fstream>

using namespace memopt::runtime;
using namespace memopt::runtime::test;

namespace {

std::string lastError() { return memopt_last_error(); }

struct Handles {
  memopt_plan *plan = nullptr;
  memopt_executor *exec = nullptr;
  ~Handles() {
    memopt_executor_destroy(exec);
    memopt_plan_destroy(plan);
  }
};

const float kX[12] = {0.5f, -1, 2, 1, 0, -0.5f, 3, 1, 1, -2, 0.25f, 0.75f};
const float kW[15] = {1, 0, -1, 0.5f, 0.5f, 0.5f, -1, 2, 0, 0, 0, 1, 1, 1, -1};
const float kB[5] = {0.1f, -0.2f, 0, 0.3f, 0};
const int64_t kLabels[4] = {0, 4, 1, 3};

/// The loss via the C++ API, for comparison.
float cppLoss() {
  Executor exec(Plan::parse(mlpPlan().dump()), "cpu");
  exec.setArgument(0, DType::F32, {4, 3}, kX, sizeof kX);
  exec.setArgument(1, DType::F32, {5, 3}, kW, sizeof kW);
  exec.setArgument(2, DType::F32, {5}, kB, sizeof kB);
  exec.setArgument(3, DType::I64, {4}, kLabels, sizeof kLabels);
  exec.run(0);
  float loss;
  exec.getResult(0, &loss, sizeof loss);
  return loss;
}

TEST(CApiTest, RunsTheMlpPlan) {
  std::string text = mlpPlan().dump();
  Handles h;
  ASSERT_EQ(memopt_plan_load_string(text.data(), text.size(), &h.plan),
            MEMOPT_OK)
      << lastError();
  uint64_t arena = 0;
  ASSERT_EQ(memopt_plan_arena_bytes(h.plan, &arena), MEMOPT_OK);
  EXPECT_EQ(arena, 260u);
  size_t numArgs = 0, numResults = 0;
  ASSERT_EQ(memopt_plan_num_arguments(h.plan, &numArgs), MEMOPT_OK);
  ASSERT_EQ(memopt_plan_num_results(h.plan, &numResults), MEMOPT_OK);
  EXPECT_EQ(numArgs, 4u);
  EXPECT_EQ(numResults, 2u);

  const char *name = nullptr;
  memopt_role role;
  memopt_dtype dtype;
  const int64_t *shape = nullptr;
  size_t rank = 0, bytes = 0;
  ASSERT_EQ(memopt_plan_argument_info(h.plan, 1, &name, &role, &dtype, &shape,
                                      &rank, &bytes),
            MEMOPT_OK);
  EXPECT_STREQ(name, "w");
  EXPECT_EQ(role, MEMOPT_ROLE_PARAM);
  EXPECT_EQ(dtype, MEMOPT_F32);
  ASSERT_EQ(rank, 2u);
  EXPECT_EQ(shape[0], 5);
  EXPECT_EQ(shape[1], 3);
  EXPECT_EQ(bytes, 60u);
  ASSERT_EQ(memopt_plan_result_info(h.plan, 0, &dtype, &shape, &rank, &bytes),
            MEMOPT_OK);
  EXPECT_EQ(rank, 0u);
  EXPECT_EQ(bytes, 4u);
  size_t index = 99;
  ASSERT_EQ(memopt_plan_find_argument(h.plan, "labels", &index), MEMOPT_OK);
  EXPECT_EQ(index, 3u);

  ASSERT_EQ(memopt_executor_create(h.plan, "cpu", &h.exec), MEMOPT_OK)
      << lastError();
  EXPECT_STREQ(memopt_executor_device(h.exec), "cpu");
  ASSERT_EQ(memopt_executor_arena_bytes(h.exec, &arena), MEMOPT_OK);
  EXPECT_EQ(arena, 260u);
  // The executor keeps the plan alive.
  memopt_plan_destroy(h.plan);
  h.plan = nullptr;

  const int64_t xShape[2] = {4, 3}, wShape[2] = {5, 3}, bShape[1] = {5},
                lShape[1] = {4};
  ASSERT_EQ(memopt_executor_set_argument(h.exec, 0, MEMOPT_F32, xShape, 2, kX,
                                         sizeof kX),
            MEMOPT_OK);
  ASSERT_EQ(memopt_executor_set_argument_by_name(h.exec, "w", MEMOPT_F32,
                                                 wShape, 2, kW, sizeof kW),
            MEMOPT_OK);
  ASSERT_EQ(memopt_executor_set_argument(h.exec, 2, MEMOPT_F32, bShape, 1, kB,
                                         sizeof kB),
            MEMOPT_OK);
  ASSERT_EQ(memopt_executor_set_argument(h.exec, 3, MEMOPT_I64, lShape, 1,
                                         kLabels, sizeof kLabels),
            MEMOPT_OK);
  ASSERT_EQ(memopt_executor_run(h.exec, 0), MEMOPT_OK) << lastError();
  float loss = 0;
  ASSERT_EQ(memopt_executor_get_result(h.exec, 0, &loss, sizeof loss),
            MEMOPT_OK);
  EXPECT_EQ(loss, cppLoss());
  EXPECT_GT(loss, 0.0f);
  float w[15];
  ASSERT_EQ(memopt_executor_get_argument(h.exec, 1, w, sizeof w), MEMOPT_OK);
  EXPECT_EQ(std::memcmp(w, kW, sizeof w), 0);
}

TEST(CApiTest, LoadFromFile) {
  std::string path = ::testing::TempDir() + "/memopt_capi_plan.json";
  {
    std::ofstream out(path);
    out << mlpPlan().dump(2);
  }
  Handles h;
  EXPECT_EQ(memopt_plan_load_file(path.c_str(), &h.plan), MEMOPT_OK)
      << lastError();
  std::remove(path.c_str());
  memopt_plan *missing = reinterpret_cast<memopt_plan *>(0x1);
  EXPECT_EQ(memopt_plan_load_file(path.c_str(), &missing), MEMOPT_ERROR_IO);
  EXPECT_EQ(missing, nullptr);
  EXPECT_NE(lastError().find(path), std::string::npos) << lastError();
}

TEST(CApiTest, ErrorsAreStatusCodesWithMessages) {
  std::string text = mlpPlan().dump();
  Handles h;
  memopt_plan *bad = nullptr;
  EXPECT_EQ(memopt_plan_load_string(text.data(), text.size() / 3, &bad),
            MEMOPT_ERROR_INVALID_PLAN);
  EXPECT_EQ(bad, nullptr);
  EXPECT_NE(lastError().find("plan: invalid JSON"), std::string::npos);
  EXPECT_NE(lastError().find("truncated"), std::string::npos);
  EXPECT_EQ(memopt_plan_load_string(nullptr, 0, &bad),
            MEMOPT_ERROR_INVALID_PLAN);
  EXPECT_EQ(memopt_plan_load_string(text.data(), text.size(), nullptr),
            MEMOPT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lastError(), "memopt: out is a null pointer");

  ASSERT_EQ(memopt_plan_load_string(text.data(), text.size(), &h.plan),
            MEMOPT_OK);
  memopt_executor *none = nullptr;
  EXPECT_EQ(memopt_executor_create(h.plan, "tpu", &none),
            MEMOPT_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_EQ(none, nullptr);
  EXPECT_NE(lastError().find("unknown device 'tpu'"), std::string::npos)
      << lastError();
  EXPECT_EQ(memopt_executor_create(nullptr, "cpu", &none),
            MEMOPT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lastError(), "memopt: plan is a null pointer");
  EXPECT_EQ(memopt_executor_create(h.plan, nullptr, &none),
            MEMOPT_ERROR_INVALID_ARGUMENT);

  ASSERT_EQ(memopt_executor_create(h.plan, "cpu", &h.exec), MEMOPT_OK);
  const int64_t wrong[2] = {3, 4};
  EXPECT_EQ(memopt_executor_set_argument(h.exec, 0, MEMOPT_F32, wrong, 2, kX,
                                         sizeof kX),
            MEMOPT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lastError(), "executor: argument 0 'x' (data) expects f32 of "
                         "shape 4x3, got f32 of shape 3x4");
  const int64_t xShape[2] = {4, 3};
  EXPECT_EQ(memopt_executor_set_argument(h.exec, 0,
                                         static_cast<memopt_dtype>(42), xShape,
                                         2, kX, sizeof kX),
            MEMOPT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lastError(), "memopt: invalid dtype value 42");
  EXPECT_EQ(memopt_executor_set_argument(h.exec, 0, MEMOPT_F32, nullptr, 2, kX,
                                         sizeof kX),
            MEMOPT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(memopt_executor_set_argument_by_name(h.exec, "nope", MEMOPT_F32,
                                                 xShape, 2, kX, sizeof kX),
            MEMOPT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(memopt_executor_run(h.exec, 0), MEMOPT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(lastError().find("has not been set"), std::string::npos);
  EXPECT_EQ(memopt_executor_run(nullptr, 0), MEMOPT_ERROR_INVALID_ARGUMENT);

  // A kernel failure: label 5 of 5 classes.
  const int64_t wShape[2] = {5, 3}, bShape[1] = {5}, lShape[1] = {4};
  const int64_t badLabels[4] = {0, 5, 1, 3};
  ASSERT_EQ(memopt_executor_set_argument(h.exec, 0, MEMOPT_F32, xShape, 2, kX,
                                         sizeof kX),
            MEMOPT_OK);
  ASSERT_EQ(memopt_executor_set_argument(h.exec, 1, MEMOPT_F32, wShape, 2, kW,
                                         sizeof kW),
            MEMOPT_OK);
  ASSERT_EQ(memopt_executor_set_argument(h.exec, 2, MEMOPT_F32, bShape, 1, kB,
                                         sizeof kB),
            MEMOPT_OK);
  ASSERT_EQ(memopt_executor_set_argument(h.exec, 3, MEMOPT_I64, lShape, 1,
                                         badLabels, sizeof badLabels),
            MEMOPT_OK);
  EXPECT_EQ(memopt_executor_run(h.exec, 0), MEMOPT_ERROR_KERNEL_FAILURE);
  EXPECT_EQ(lastError(), "steps[2] (cross_entropy at mlp.mlir:5:11): label 5 "
                         "of row 1 is outside [0, 5)");
  float loss;
  EXPECT_EQ(memopt_executor_get_result(h.exec, 0, &loss, 2),
            MEMOPT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(memopt_executor_get_result(h.exec, 7, &loss, 4),
            MEMOPT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(memopt_executor_copy_result_to_argument(h.exec, 0, 0),
            MEMOPT_ERROR_INVALID_ARGUMENT);
  size_t index;
  EXPECT_EQ(memopt_plan_find_argument(h.plan, "nope", &index),
            MEMOPT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(memopt_plan_argument_info(h.plan, 9, nullptr, nullptr, nullptr,
                                      nullptr, nullptr, nullptr),
            MEMOPT_ERROR_INVALID_ARGUMENT);

  memopt_executor_destroy(nullptr);
  memopt_plan_destroy(nullptr);
  EXPECT_STREQ(memopt_status_string(MEMOPT_ERROR_KERNEL_FAILURE),
               "MEMOPT_ERROR_KERNEL_FAILURE");
  EXPECT_EQ(memopt_dtype_size(MEMOPT_BF16), 2u);
  EXPECT_EQ(memopt_dtype_size(MEMOPT_UI8), 1u);
  EXPECT_EQ(memopt_dtype_size(static_cast<memopt_dtype>(7)), 0u);
  EXPECT_EQ(memopt_dtype_size(static_cast<memopt_dtype>(9)), 0u);
}

TEST(CApiTest, CpuThreads) {
  int before = memopt_cpu_threads();
  ASSERT_GE(before, 1);
  EXPECT_EQ(memopt_set_cpu_threads(0), MEMOPT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(memopt_last_error()).find("at least 1, got 0"),
            std::string::npos);
  EXPECT_EQ(memopt_set_cpu_threads(-3), MEMOPT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(memopt_cpu_threads(), before);
  ASSERT_EQ(memopt_set_cpu_threads(1), MEMOPT_OK);
  EXPECT_EQ(memopt_cpu_threads(), 1);
  ASSERT_EQ(memopt_set_cpu_threads(before), MEMOPT_OK);
  EXPECT_EQ(memopt_cpu_threads(), before);
}

TEST(CApiTest, TrainingStepsWithApplyUpdates) {
  std::string text = adamTrainingPlan().dump();
  Handles h;
  ASSERT_EQ(memopt_plan_load_string(text.data(), text.size(), &h.plan),
            MEMOPT_OK)
      << lastError();
  size_t numUpdates = 0, result = 9, argument = 9;
  ASSERT_EQ(memopt_plan_num_updates(h.plan, &numUpdates), MEMOPT_OK);
  EXPECT_EQ(numUpdates, 4u);
  ASSERT_EQ(memopt_plan_update_info(h.plan, 2, &result, &argument), MEMOPT_OK);
  EXPECT_EQ(result, 3u);
  EXPECT_EQ(argument, 3u);
  EXPECT_EQ(memopt_plan_update_info(h.plan, 4, &result, nullptr),
            MEMOPT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lastError(),
            "memopt: update index 4 out of range (the plan has 4 updates)");
  memopt_role role = MEMOPT_ROLE_DATA;
  ASSERT_EQ(memopt_plan_argument_info(h.plan, 4, nullptr, &role, nullptr,
                                      nullptr, nullptr, nullptr),
            MEMOPT_OK);
  EXPECT_EQ(role, MEMOPT_ROLE_OPTIMIZER_STATE);

  ASSERT_EQ(memopt_executor_create(h.plan, "cpu", &h.exec), MEMOPT_OK);
  const int64_t shape[1] = {3};
  const float w[3] = {1, -3, 0.5f}, target[3] = {0, 0, 0.5f},
              zeros[3] = {0, 0, 0}, step = 0;
  ASSERT_EQ(memopt_executor_set_argument_by_name(h.exec, "w", MEMOPT_F32, shape,
                                                 1, w, sizeof w),
            MEMOPT_OK);
  ASSERT_EQ(memopt_executor_set_argument_by_name(
                h.exec, "target", MEMOPT_F32, shape, 1, target, sizeof target),
            MEMOPT_OK);
  for (const char *name : {"exp_avg", "exp_avg_sq"})
    ASSERT_EQ(memopt_executor_set_argument_by_name(
                  h.exec, name, MEMOPT_F32, shape, 1, zeros, sizeof zeros),
              MEMOPT_OK);
  ASSERT_EQ(memopt_executor_set_argument_by_name(
                h.exec, "step", MEMOPT_F32, nullptr, 0, &step, sizeof step),
            MEMOPT_OK);
  EXPECT_EQ(memopt_executor_apply_updates(h.exec),
            MEMOPT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(lastError().find("applyUpdates needs a successful run()"),
            std::string::npos)
      << lastError();
  float losses[2];
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(memopt_executor_run(h.exec, i), MEMOPT_OK) << lastError();
    ASSERT_EQ(memopt_executor_get_result(h.exec, 0, &losses[i], 4), MEMOPT_OK);
    ASSERT_EQ(memopt_executor_apply_updates(h.exec), MEMOPT_OK) << lastError();
  }
  EXPECT_LT(losses[1], losses[0]);
  float newStep = 0, newW[3];
  ASSERT_EQ(memopt_executor_get_argument(h.exec, 4, &newStep, 4), MEMOPT_OK);
  EXPECT_EQ(newStep, 2.0f);
  ASSERT_EQ(memopt_executor_get_argument(h.exec, 0, newW, sizeof newW),
            MEMOPT_OK);
  EXPECT_NEAR(newW[0], 0.8004122f, 1e-6);
  EXPECT_EQ(newW[2], 0.5f);
  EXPECT_EQ(memopt_executor_apply_updates(nullptr),
            MEMOPT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(memopt_plan_num_updates(h.plan, nullptr),
            MEMOPT_ERROR_INVALID_ARGUMENT);
}

TEST(CApiTest, LengthBoundsTheInput) {
  // Only `length` bytes are read: trailing garbage after them is ignored.
  std::string text = mlpPlan().dump() + "garbage that is not JSON";
  Handles h;
  EXPECT_EQ(memopt_plan_load_string(
                text.data(),
                text.size() - std::strlen("garbage that is not JSON"), &h.plan),
            MEMOPT_OK)
      << lastError();
}

} // namespace
