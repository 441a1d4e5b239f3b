//===- CApi.cpp - the C API over the C++ executor -------------------------===//
//
// Every entry point runs its body inside guard(), which turns any C++
// exception into a status code and a thread-local message, so nothing ever
// unwinds into C callers.
//
//===----------------------------------------------------------------------===//

#include "memopt/runtime/CpuThreads.h"
#include "memopt/runtime/memopt_runtime.h"

#include "memopt/runtime/Error.h"
#include "memopt/runtime/Executor.h"
#include "memopt/runtime/Plan.h"

#include <new>
#include <string>

using namespace memopt::runtime;

struct memopt_plan {
  std::shared_ptr<const Plan> plan;
};

struct memopt_executor {
  std::unique_ptr<Executor> executor;
  std::string device;
};

static_assert(MEMOPT_F32 == static_cast<int>(DType::F32) &&
                  MEMOPT_F64 == static_cast<int>(DType::F64) &&
                  MEMOPT_F16 == static_cast<int>(DType::F16) &&
                  MEMOPT_BF16 == static_cast<int>(DType::BF16) &&
                  MEMOPT_I32 == static_cast<int>(DType::I32) &&
                  MEMOPT_I64 == static_cast<int>(DType::I64) &&
                  MEMOPT_UI8 == static_cast<int>(DType::UI8),
              "memopt_dtype must number the dtypes as DType");
static_assert(MEMOPT_ROLE_PARAM == static_cast<int>(ArgumentRole::Param) &&
                  MEMOPT_ROLE_STATE == static_cast<int>(ArgumentRole::State) &&
                  MEMOPT_ROLE_DATA == static_cast<int>(ArgumentRole::Data) &&
                  MEMOPT_ROLE_OPTIMIZER_STATE ==
                      static_cast<int>(ArgumentRole::OptimizerState),
              "memopt_role must number the roles as ArgumentRole");

namespace {

thread_local std::string lastError;

memopt_status toStatus(ErrorCode code) {
  switch (code) {
  case ErrorCode::InvalidPlan:
    return MEMOPT_ERROR_INVALID_PLAN;
  case ErrorCode::InvalidArgument:
    return MEMOPT_ERROR_INVALID_ARGUMENT;
  case ErrorCode::BackendUnavailable:
    return MEMOPT_ERROR_BACKEND_UNAVAILABLE;
  case ErrorCode::KernelFailure:
    return MEMOPT_ERROR_KERNEL_FAILURE;
  case ErrorCode::OutOfMemory:
    return MEMOPT_ERROR_OUT_OF_MEMORY;
  case ErrorCode::Io:
    return MEMOPT_ERROR_IO;
  case ErrorCode::Internal:
    return MEMOPT_ERROR_INTERNAL;
  case ErrorCode::Collective:
    return MEMOPT_ERROR_COLLECTIVE;
  }
  return MEMOPT_ERROR_INTERNAL;
}

/// Stores the message; never throws (a failed string copy leaves a fixed
/// text).
memopt_status setError(memopt_status status, const char *message) noexcept {
  try {
    lastError = message;
  } catch (...) {
    lastError.clear();
  }
  return status;
}

template <typename F> memopt_status guard(F &&body) noexcept {
  try {
    body();
    return MEMOPT_OK;
  } catch (const Error &e) {
    return setError(toStatus(e.code()), e.what());
  } catch (const std::bad_alloc &) {
    return setError(MEMOPT_ERROR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception &e) {
    return setError(MEMOPT_ERROR_INTERNAL, e.what());
  } catch (...) {
    return setError(MEMOPT_ERROR_INTERNAL, "unknown internal error");
  }
}

void requireNonNull(const void *p, const char *what) {
  if (!p)
    throw Error(ErrorCode::InvalidArgument,
                concat("memopt: ", what, " is a null pointer"));
}

DType toDType(memopt_dtype dtype) {
  int value = static_cast<int>(dtype);
  if (value < MEMOPT_F32 || value > MEMOPT_I64)
    throw Error(
        ErrorCode::InvalidArgument,
        concat("memopt: invalid dtype value ", static_cast<int>(dtype)));
  return static_cast<DType>(dtype);
}

Shape toShape(const int64_t *shape, size_t rank) {
  if (rank && !shape)
    throw Error(ErrorCode::InvalidArgument,
                "memopt: shape is a null pointer but rank is not 0");
  return Shape(shape, shape + rank);
}

const Plan &planOf(const memopt_plan *plan) {
  requireNonNull(plan, "plan");
  return *plan->plan;
}

Executor &executorOf(const memopt_executor *executor) {
  requireNonNull(executor, "executor");
  return *executor->executor;
}

void describeTensor(const TensorInfo &t, memopt_dtype *dtype,
                    const int64_t **shape, size_t *rank, size_t *bytes) {
  if (dtype)
    *dtype = static_cast<memopt_dtype>(t.dtype);
  if (shape)
    *shape = t.shape.data();
  if (rank)
    *rank = t.shape.size();
  if (bytes)
    *bytes = static_cast<size_t>(t.bytes);
}

} // namespace

extern "C" {

const char *memopt_last_error(void) { return lastError.c_str(); }

const char *memopt_status_string(memopt_status status) {
  switch (status) {
  case MEMOPT_OK:
    return "MEMOPT_OK";
  case MEMOPT_ERROR_INVALID_PLAN:
    return "MEMOPT_ERROR_INVALID_PLAN";
  case MEMOPT_ERROR_INVALID_ARGUMENT:
    return "MEMOPT_ERROR_INVALID_ARGUMENT";
  case MEMOPT_ERROR_BACKEND_UNAVAILABLE:
    return "MEMOPT_ERROR_BACKEND_UNAVAILABLE";
  case MEMOPT_ERROR_KERNEL_FAILURE:
    return "MEMOPT_ERROR_KERNEL_FAILURE";
  case MEMOPT_ERROR_OUT_OF_MEMORY:
    return "MEMOPT_ERROR_OUT_OF_MEMORY";
  case MEMOPT_ERROR_IO:
    return "MEMOPT_ERROR_IO";
  case MEMOPT_ERROR_INTERNAL:
    return "MEMOPT_ERROR_INTERNAL";
  case MEMOPT_ERROR_COLLECTIVE:
    return "MEMOPT_ERROR_COLLECTIVE";
  case MEMOPT_STATUS_MAX_ENUM:
    break;
  }
  return "MEMOPT_ERROR_UNKNOWN";
}

size_t memopt_dtype_size(memopt_dtype dtype) {
  int value = static_cast<int>(dtype);
  if (value < MEMOPT_F32 || value > MEMOPT_UI8)
    return 0;
  return dtypeSize(static_cast<DType>(dtype));
}

memopt_status memopt_set_cpu_threads(int threads) {
  return guard([&] { setCpuThreads(threads); });
}

int memopt_cpu_threads(void) { return cpuThreads(); }

memopt_status memopt_plan_load_file(const char *path, memopt_plan **out) {
  return guard([&] {
    requireNonNull(path, "path");
    requireNonNull(out, "out");
    *out = nullptr;
    auto handle = std::make_unique<memopt_plan>();
    handle->plan = Plan::loadFile(path);
    *out = handle.release();
  });
}

memopt_status memopt_plan_load_string(const char *json, size_t length,
                                      memopt_plan **out) {
  return guard([&] {
    requireNonNull(out, "out");
    *out = nullptr;
    if (length)
      requireNonNull(json, "json");
    auto handle = std::make_unique<memopt_plan>();
    handle->plan = Plan::parse(std::string_view(json ? json : "", length));
    *out = handle.release();
  });
}

void memopt_plan_destroy(memopt_plan *plan) { delete plan; }

memopt_status memopt_plan_arena_bytes(const memopt_plan *plan, uint64_t *out) {
  return guard([&] {
    requireNonNull(out, "out");
    *out = planOf(plan).arenaBytes;
  });
}

memopt_status memopt_plan_num_arguments(const memopt_plan *plan, size_t *out) {
  return guard([&] {
    requireNonNull(out, "out");
    *out = planOf(plan).arguments.size();
  });
}

memopt_status memopt_plan_num_results(const memopt_plan *plan, size_t *out) {
  return guard([&] {
    requireNonNull(out, "out");
    *out = planOf(plan).results.size();
  });
}

memopt_status memopt_plan_find_argument(const memopt_plan *plan,
                                        const char *name, size_t *index) {
  return guard([&] {
    requireNonNull(name, "name");
    requireNonNull(index, "index");
    int64_t i = planOf(plan).findArgument(name);
    if (i < 0)
      throw Error(
          ErrorCode::InvalidArgument,
          concat("memopt: the plan has no argument named '", name, "'"));
    *index = static_cast<size_t>(i);
  });
}

memopt_status memopt_plan_argument_info(const memopt_plan *plan, size_t index,
                                        const char **name, memopt_role *role,
                                        memopt_dtype *dtype,
                                        const int64_t **shape, size_t *rank,
                                        size_t *bytes) {
  return guard([&] {
    const Plan &p = planOf(plan);
    if (index >= p.arguments.size())
      throw Error(ErrorCode::InvalidArgument,
                  concat("memopt: argument index ", index,
                         " out of range (the plan has ", p.arguments.size(),
                         " arguments)"));
    const ArgumentInfo &a = p.arguments[index];
    if (name)
      *name = a.name.c_str();
    if (role)
      *role = static_cast<memopt_role>(static_cast<int>(a.role));
    describeTensor(p.tensors[a.tensor], dtype, shape, rank, bytes);
  });
}

memopt_status memopt_plan_result_info(const memopt_plan *plan, size_t index,
                                      memopt_dtype *dtype,
                                      const int64_t **shape, size_t *rank,
                                      size_t *bytes) {
  return guard([&] {
    const Plan &p = planOf(plan);
    if (index >= p.results.size())
      throw Error(ErrorCode::InvalidArgument,
                  concat("memopt: result index ", index,
                         " out of range (the plan has ", p.results.size(),
                         " results)"));
    describeTensor(p.resultTensor(index), dtype, shape, rank, bytes);
  });
}

memopt_status memopt_executor_create(const memopt_plan *plan,
                                     const char *device,
                                     memopt_executor **out) {
  return guard([&] {
    requireNonNull(out, "out");
    *out = nullptr;
    requireNonNull(device, "device");
    planOf(plan);
    auto handle = std::make_unique<memopt_executor>();
    handle->executor = std::make_unique<Executor>(plan->plan, device);
    handle->device = std::string(handle->executor->backend().name());
    *out = handle.release();
  });
}

void memopt_executor_destroy(memopt_executor *executor) { delete executor; }

memopt_status memopt_executor_arena_bytes(const memopt_executor *executor,
                                          uint64_t *out) {
  return guard([&] {
    requireNonNull(out, "out");
    *out = executorOf(executor).arenaBytes();
  });
}

const char *memopt_executor_device(const memopt_executor *executor) {
  return executor ? executor->device.c_str() : "";
}

memopt_status memopt_executor_set_argument(memopt_executor *executor,
                                           size_t index, memopt_dtype dtype,
                                           const int64_t *shape, size_t rank,
                                           const void *data, size_t bytes) {
  return guard([&] {
    executorOf(executor).setArgument(index, toDType(dtype),
                                     toShape(shape, rank), data, bytes);
  });
}

memopt_status memopt_executor_set_argument_by_name(
    memopt_executor *executor, const char *name, memopt_dtype dtype,
    const int64_t *shape, size_t rank, const void *data, size_t bytes) {
  return guard([&] {
    requireNonNull(name, "name");
    executorOf(executor).setArgument(std::string_view(name), toDType(dtype),
                                     toShape(shape, rank), data, bytes);
  });
}

memopt_status memopt_executor_get_argument(const memopt_executor *executor,
                                           size_t index, void *data,
                                           size_t bytes) {
  return guard([&] { executorOf(executor).getArgument(index, data, bytes); });
}

memopt_status memopt_executor_run(memopt_executor *executor, uint64_t step) {
  return guard([&] { executorOf(executor).run(step); });
}

memopt_status memopt_executor_get_result(const memopt_executor *executor,
                                         size_t index, void *data,
                                         size_t bytes) {
  return guard([&] { executorOf(executor).getResult(index, data, bytes); });
}

memopt_status memopt_executor_copy_result_to_argument(memopt_executor *executor,
                                                      size_t result,
                                                      size_t argument) {
  return guard(
      [&] { executorOf(executor).copyResultToArgument(result, argument); });
}

memopt_status memopt_plan_num_updates(const memopt_plan *plan, size_t *out) {
  return guard([&] {
    const Plan &p = planOf(plan);
    requireNonNull(out, "out");
    *out = p.updates.size();
  });
}

memopt_status memopt_plan_update_info(const memopt_plan *plan, size_t index,
                                      size_t *result, size_t *argument) {
  return guard([&] {
    const Plan &p = planOf(plan);
    if (index >= p.updates.size())
      throw Error(ErrorCode::InvalidArgument,
                  concat("memopt: update index ", index,
                         " out of range (the plan has ", p.updates.size(),
                         " updates)"));
    if (result)
      *result = static_cast<size_t>(p.updates[index].result);
    if (argument)
      *argument = static_cast<size_t>(p.updates[index].argument);
  });
}

memopt_status memopt_executor_apply_updates(memopt_executor *executor) {
  return guard([&] { executorOf(executor).applyUpdates(); });
}

} // extern "C"
