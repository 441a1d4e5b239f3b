// memopt-run --report writes the memory report of the step it compiles, after
// its pipeline (here autodiff with momentum) and before lowering: the same
// numbers memopt-opt gives for the same pipeline.
// RUN: memopt-run %examples/mlp.mlir --device=cpu --steps=1 --optimizer=momentum --report=%t.run.json > /dev/null
// RUN: memopt-opt %examples/mlp.mlir --memopt-autodiff=optimizer=momentum --memopt-report=file=%t.opt.json -o /dev/null
// RUN: diff %t.run.json %t.opt.json
// RUN: FileCheck %s --check-prefix=MOMENTUM --input-file=%t.run.json
// MOMENTUM:      "function": "mlp_train",
// MOMENTUM:      "gradient_bytes": 940584,
// MOMENTUM-NEXT: "optimizer_state_bytes": 940584,

// `-` writes to stdout, before the run's own output. Evaluation has no
// backward pass: nothing saved, no gradients.
// RUN: memopt-run %examples/mlp.mlir --device=cpu --steps=1 --eval --report=- | FileCheck %s --check-prefix=EVAL
// EVAL:      {{^}}{
// EVAL-NEXT:   "function": "mlp_train",
// EVAL:        "gradient_bytes": 0,
// EVAL:        "saved_for_backward_bytes": 0,
// EVAL-NEXT:   "peak_bytes": 1272872,
// EVAL:      {{^}}}
// EVAL-NEXT: @mlp_train on cpu
