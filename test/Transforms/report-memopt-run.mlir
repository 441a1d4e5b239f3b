// memopt-run --report writes the memory report of the step it compiles,
// after its pipeline and before lowering. Without the memory optimisations
// (--no-optimize) the pipeline is autodiff alone, and the report is the one
// memopt-opt gives for the same pass.
// RUN: memopt-run %examples/mlp.mlir --device=cpu --steps=1 --optimizer=momentum --no-optimize --report=%t.run.json > /dev/null
// RUN: memopt-opt %examples/mlp.mlir --memopt-autodiff=optimizer=momentum --memopt-report=file=%t.opt.json -o /dev/null
// RUN: diff %t.run.json %t.opt.json
// RUN: FileCheck %s --check-prefix=MOMENTUM --input-file=%t.run.json
// MOMENTUM:      "function": "mlp_train",
// MOMENTUM:      "gradient_bytes": 940584,
// MOMENTUM-NEXT: "optimizer_state_bytes": 940584,
// MOMENTUM:      "arena_bytes": null,

// By default the report sees the scheduled step (with its frees) and the
// planned arena.
// RUN: memopt-run %examples/mlp.mlir --device=cpu --steps=1 --report=%t.default.json > /dev/null
// RUN: FileCheck %s --check-prefix=PLANNED --input-file=%t.default.json
// PLANNED:     "arena_bytes": {{[1-9][0-9]*}},
// PLANNED:     "op": "memopt.free",

// `-` writes to stdout, before the run's own output. Evaluation has no
// backward pass: nothing saved, no gradients; the peak is the forward
// graph's (see report.mlir).
// RUN: memopt-run %examples/mlp.mlir --device=cpu --steps=1 --eval --no-optimize --report=- | FileCheck %s --check-prefix=EVAL
// EVAL:      {{^}}{
// EVAL-NEXT:   "function": "mlp_train",
// EVAL:        "gradient_bytes": 0,
// EVAL:        "saved_for_backward_bytes": 0,
// EVAL-NEXT:   "peak_bytes": 1272872,
// EVAL:      {{^}}}
// EVAL-NEXT: @mlp_train on cpu
