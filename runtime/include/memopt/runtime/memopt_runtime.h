/*===- memopt_runtime.h - C API of the memopt runtime -------------*- C -*-===*\
|*                                                                            *|
|* A stable C interface over the C++ executor for other languages (Python     *|
|* ctypes, Rust) and for C++ code built without exceptions. Handles are       *|
|* opaque; every function that can fail returns a memopt_status and, on       *|
|* failure, leaves a message for memopt_last_error() on the calling thread.   *|
|* No exception ever crosses this interface.                                  *|
|*                                                                            *|
|* Typical use:                                                               *|
|*   memopt_plan *plan; memopt_executor *exec;                                *|
|*   memopt_plan_load_file("step.plan.json", &plan);                          *|
|*   memopt_executor_create(plan, "cpu", &exec);                              *|
|*   memopt_executor_set_argument(exec, 0, MEMOPT_F32, shape, 2, w, bytes);   *|
|*   memopt_executor_run(exec, step);                                         *|
|*   memopt_executor_get_result(exec, 0, &loss, sizeof loss);                 *|
|*   memopt_executor_apply_updates(exec);    (a training step's new state)    *|
|*   memopt_executor_destroy(exec); memopt_plan_destroy(plan);                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef MEMOPT_RUNTIME_MEMOPT_RUNTIME_H
#define MEMOPT_RUNTIME_MEMOPT_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum memopt_status {
  MEMOPT_OK = 0,
  MEMOPT_ERROR_INVALID_PLAN = 1,
  MEMOPT_ERROR_INVALID_ARGUMENT = 2,
  MEMOPT_ERROR_BACKEND_UNAVAILABLE = 3,
  MEMOPT_ERROR_KERNEL_FAILURE = 4,
  MEMOPT_ERROR_OUT_OF_MEMORY = 5,
  MEMOPT_ERROR_IO = 6,
  MEMOPT_ERROR_INTERNAL = 7,
  MEMOPT_ERROR_COLLECTIVE = 8,
  /* Makes the enum int-sized, so any int a caller passes is a value of it. */
  MEMOPT_STATUS_MAX_ENUM = 0x7FFFFFFF
} memopt_status;

/* Element types, numbered as memopt::runtime::DType. */
typedef enum memopt_dtype {
  MEMOPT_F32 = 0,
  MEMOPT_F64 = 1,
  MEMOPT_F16 = 2,
  MEMOPT_BF16 = 3,
  MEMOPT_I32 = 4,
  MEMOPT_I64 = 5,
  MEMOPT_UI8 = 6,
  MEMOPT_DTYPE_MAX_ENUM = 0x7FFFFFFF
} memopt_dtype;

typedef enum memopt_role {
  MEMOPT_ROLE_PARAM = 0,
  MEMOPT_ROLE_STATE = 1,
  MEMOPT_ROLE_DATA = 2,
  MEMOPT_ROLE_OPTIMIZER_STATE = 3,
  MEMOPT_ROLE_MAX_ENUM = 0x7FFFFFFF
} memopt_role;

typedef struct memopt_plan memopt_plan;
typedef struct memopt_executor memopt_executor;

/* The message of the last failed call on this thread ("" if none). Valid
 * until the next failing call on the same thread. */
const char *memopt_last_error(void);
/* A constant name for a status code ("MEMOPT_ERROR_INVALID_PLAN"). */
const char *memopt_status_string(memopt_status status);
/* Bytes per element of a dtype; 0 for an invalid value. */
size_t memopt_dtype_size(memopt_dtype dtype);
/* The threads the CPU backend uses, process wide (OpenMP's): its matrix
 * products (oneDNN; OpenBLAS in f64) and its own kernels that split their
 * work (convolutions, batch and layer norm, pooling, element-wise ops) in a
 * split fixed by the sizes and the count, so a step's bits repeat run after
 * run. By default one per core (or OMP_NUM_THREADS). Setting fewer than 1
 * is MEMOPT_ERROR_INVALID_ARGUMENT. */
memopt_status memopt_set_cpu_threads(int threads);
int memopt_cpu_threads(void);

/*--- Plans ----------------------------------------------------------------*/

memopt_status memopt_plan_load_file(const char *path, memopt_plan **out);
/* `json` need not be NUL-terminated; `length` is its size in bytes. */
memopt_status memopt_plan_load_string(const char *json, size_t length,
                                      memopt_plan **out);
/* Accepts NULL. An executor keeps its plan alive after this call. */
void memopt_plan_destroy(memopt_plan *plan);

memopt_status memopt_plan_arena_bytes(const memopt_plan *plan, uint64_t *out);
memopt_status memopt_plan_num_arguments(const memopt_plan *plan, size_t *out);
memopt_status memopt_plan_num_results(const memopt_plan *plan, size_t *out);
/* The index of the argument called `name`. */
memopt_status memopt_plan_find_argument(const memopt_plan *plan,
                                        const char *name, size_t *index);
/* Describes argument `index`. Any out-pointer may be NULL. `*name` and
 * `*shape` stay valid while the plan (or an executor of it) lives. */
memopt_status memopt_plan_argument_info(const memopt_plan *plan, size_t index,
                                        const char **name, memopt_role *role,
                                        memopt_dtype *dtype,
                                        const int64_t **shape, size_t *rank,
                                        size_t *bytes);
/* Describes result `index`, as memopt_plan_argument_info. */
memopt_status memopt_plan_result_info(const memopt_plan *plan, size_t index,
                                      memopt_dtype *dtype,
                                      const int64_t **shape, size_t *rank,
                                      size_t *bytes);
/* The number of entries of the plan's `updates`. */
memopt_status memopt_plan_num_updates(const memopt_plan *plan, size_t *out);
/* Update `index`: result `*result` becomes argument `*argument` after a
 * step. Either out-pointer may be NULL. */
memopt_status memopt_plan_update_info(const memopt_plan *plan, size_t index,
                                      size_t *result, size_t *argument);

/*--- Executors ------------------------------------------------------------*/

/* Allocates the plan's arena, argument buffers and constants on `device`
 * ("cpu", "cuda" or "auto"). */
memopt_status memopt_executor_create(const memopt_plan *plan,
                                     const char *device, memopt_executor **out);
/* Accepts NULL. */
void memopt_executor_destroy(memopt_executor *executor);

/* The bytes of the one arena (the plan's arena_bytes). */
memopt_status memopt_executor_arena_bytes(const memopt_executor *executor,
                                          uint64_t *out);
/* The name of the device the executor runs on ("cpu", "cuda"). */
const char *memopt_executor_device(const memopt_executor *executor);

/* Copies a host tensor into argument `index`; dtype, shape and byte size
 * must match the plan. */
memopt_status memopt_executor_set_argument(memopt_executor *executor,
                                           size_t index, memopt_dtype dtype,
                                           const int64_t *shape, size_t rank,
                                           const void *data, size_t bytes);
memopt_status memopt_executor_set_argument_by_name(
    memopt_executor *executor, const char *name, memopt_dtype dtype,
    const int64_t *shape, size_t rank, const void *data, size_t bytes);
/* Copies argument `index` back to the host; `bytes` must be its size. */
memopt_status memopt_executor_get_argument(const memopt_executor *executor,
                                           size_t index, void *data,
                                           size_t bytes);

/* Runs every step once; `step` is the training-step counter. */
memopt_status memopt_executor_run(memopt_executor *executor, uint64_t step);

/* Copies result `index` to the host; `bytes` must be its size. */
memopt_status memopt_executor_get_result(const memopt_executor *executor,
                                         size_t index, void *data,
                                         size_t bytes);
/* Copies result `result` into argument `argument` on the device. */
memopt_status memopt_executor_copy_result_to_argument(memopt_executor *executor,
                                                      size_t result,
                                                      size_t argument);
/* Applies the plan's `updates` after a step (new parameters, running
 * statistics and optimizer state become the next step's arguments). Needs a
 * successful memopt_executor_run since the executor was created or the
 * updates were last applied; a no-op for a plan without updates. */
memopt_status memopt_executor_apply_updates(memopt_executor *executor);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MEMOPT_RUNTIME_MEMOPT_RUNTIME_H */
