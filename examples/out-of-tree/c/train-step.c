/*===- train-step.c - train with a memopt plan from C ---------------------===*\
|*                                                                            *|
|* Loads a plan file (memopt-translate --memrt-to-plan), fills its            *|
|* parameters with small deterministic values and its data with a fixed       *|
|* batch, then runs training steps through the runtime's C API, applying      *|
|* the plan's updates after each, and prints the loss:                        *|
|*                                                                            *|
|*   train-step PLAN STEPS CLASSES [DEVICE]                                   *|
|*                                                                            *|
|* Integer data arguments (labels) get values in [0, CLASSES). Exits 1 with   *|
|* the runtime's message on any failure, and 2 if the loss did not go down.   *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "memopt/runtime/memopt_runtime.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, memopt_status status) {
  fprintf(stderr, "train-step: %s: %s: %s\n", what,
          memopt_status_string(status), memopt_last_error());
  return 1;
}

/* A fixed linear congruential sequence in [-1, 1): the same numbers on every
 * machine. */
static uint32_t next_state = 12345u;
static float next_uniform(void) {
  next_state = next_state * 1664525u + 1013904223u;
  return (float)(next_state >> 8) / (float)(1u << 23) - 1.0f;
}

/* Fills argument `index` of the plan: parameters small, data in [-1, 1),
 * integer data as class labels, state (running statistics) with zeros and
 * ones as a fresh batch-norm layer has them. */
static memopt_status fill_argument(const memopt_plan *plan,
                                   memopt_executor *exec, size_t index,
                                   long classes) {
  const char *name;
  memopt_role role;
  memopt_dtype dtype;
  const int64_t *shape;
  size_t rank, bytes;
  memopt_status status = memopt_plan_argument_info(
      plan, index, &name, &role, &dtype, &shape, &rank, &bytes);
  if (status != MEMOPT_OK)
    return status;
  void *data = calloc(bytes ? bytes : 1, 1);
  if (!data)
    return MEMOPT_ERROR_OUT_OF_MEMORY;
  size_t count = bytes / memopt_dtype_size(dtype);
  for (size_t i = 0; i < count; ++i) {
    if (dtype == MEMOPT_I64) {
      ((int64_t *)data)[i] = (int64_t)(i % (size_t)classes);
    } else if (dtype == MEMOPT_I32) {
      ((int32_t *)data)[i] = (int32_t)(i % (size_t)classes);
    } else if (dtype == MEMOPT_F32) {
      float v = next_uniform();
      if (role == MEMOPT_ROLE_PARAM)
        v *= 0.3f;
      else if (role == MEMOPT_ROLE_STATE)
        v = strstr(name, "var") ? 1.0f : 0.0f;
      else if (role == MEMOPT_ROLE_OPTIMIZER_STATE)
        v = 0.0f;
      ((float *)data)[i] = v;
    }
    /* Other element types stay zero. */
  }
  status = memopt_executor_set_argument(exec, index, dtype, shape, rank, data,
                                        bytes);
  free(data);
  return status;
}

int main(int argc, char **argv) {
  if (argc < 4 || argc > 5) {
    fprintf(stderr, "usage: train-step PLAN STEPS CLASSES [DEVICE]\n");
    return 1;
  }
  const char *device = argc == 5 ? argv[4] : "cpu";
  long steps = strtol(argv[2], NULL, 10);
  long classes = strtol(argv[3], NULL, 10);
  if (steps < 1 || classes < 1) {
    fprintf(stderr, "train-step: STEPS and CLASSES must be positive\n");
    return 1;
  }

  memopt_plan *plan = NULL;
  memopt_executor *exec = NULL;
  memopt_status status = memopt_plan_load_file(argv[1], &plan);
  if (status != MEMOPT_OK)
    return fail("loading the plan", status);
  status = memopt_executor_create(plan, device, &exec);
  if (status != MEMOPT_OK) {
    memopt_plan_destroy(plan);
    return fail("creating the executor", status);
  }

  size_t num_arguments = 0, num_updates = 0;
  uint64_t arena = 0;
  memopt_plan_num_arguments(plan, &num_arguments);
  memopt_plan_num_updates(plan, &num_updates);
  memopt_executor_arena_bytes(exec, &arena);
  printf("plan: %zu arguments, %zu updates, arena %llu bytes, device %s\n",
         num_arguments, num_updates, (unsigned long long)arena,
         memopt_executor_device(exec));

  int rc = 0;
  for (size_t i = 0; i < num_arguments && rc == 0; ++i)
    if ((status = fill_argument(plan, exec, i, classes)) != MEMOPT_OK)
      rc = fail("setting an argument", status);

  float first = 0.0f, last = 0.0f;
  for (long step = 0; step < steps && rc == 0; ++step) {
    if ((status = memopt_executor_run(exec, (uint64_t)step)) != MEMOPT_OK) {
      rc = fail("running a step", status);
      break;
    }
    float loss;
    if ((status = memopt_executor_get_result(exec, 0, &loss, sizeof loss)) !=
        MEMOPT_OK) {
      rc = fail("reading the loss", status);
      break;
    }
    if ((status = memopt_executor_apply_updates(exec)) != MEMOPT_OK) {
      rc = fail("applying the updates", status);
      break;
    }
    printf("step %ld loss %.6f\n", step, loss);
    if (step == 0)
      first = loss;
    last = loss;
  }
  if (rc == 0) {
    if (last < first) {
      printf("loss decreased: %.6f -> %.6f\n", first, last);
    } else {
      printf("loss did not decrease: %.6f -> %.6f\n", first, last);
      rc = 2;
    }
  }
  memopt_executor_destroy(exec);
  memopt_plan_destroy(plan);
  return rc;
}
