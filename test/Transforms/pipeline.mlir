// --memopt-pipeline is exactly the passes it names, in order.
// RUN: memopt-opt %examples/cnn.mlir "--memopt-pipeline=optimizer=momentum checkpoint=sqrt inplace=true" -o %t.pipeline.mlir
// RUN: memopt-opt %examples/cnn.mlir --memopt-autodiff=optimizer=momentum --memopt-checkpoint=strategy=sqrt --memopt-inplace --memopt-schedule --memopt-plan-memory -o %t.passes.mlir
// RUN: diff %t.pipeline.mlir %t.passes.mlir
// RUN: FileCheck %s --input-file=%t.pipeline.mlir
// CHECK: memopt.arena_bytes
// CHECK: memopt.inplace = 0
// CHECK: memopt.recompute
// CHECK: memopt.sgd_momentum_update
//
// A budget alone selects strategy=budget; microbatches adds the split.
// RUN: memopt-opt %examples/mlp.mlir "--memopt-pipeline=microbatches=2 budget=8MiB" -o %t.mb.mlir
// RUN: memopt-opt %examples/mlp.mlir --memopt-microbatch=count=2 --memopt-autodiff "--memopt-checkpoint=strategy=budget budget=8MiB" --memopt-schedule --memopt-plan-memory -o %t.mb.passes.mlir
// RUN: diff %t.mb.mlir %t.mb.passes.mlir
//
// An unknown option is an error.
// RUN: not memopt-opt %examples/mlp.mlir --memopt-pipeline=precision=fp8 -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: no such option precision
