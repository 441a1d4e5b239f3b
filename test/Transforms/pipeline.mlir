// --memopt-pipeline is exactly the passes it names, in order.
// RUN: memopt-opt %examples/cnn.mlir "--memopt-pipeline=optimizer=momentum checkpoint=sqrt inplace=true" -o %t.pipeline.mlir
// RUN: memopt-opt %examples/cnn.mlir --memopt-autodiff=optimizer=momentum --memopt-checkpoint=strategy=sqrt --memopt-partition=measure-inplace=true --memopt-inplace --memopt-schedule --memopt-plan-memory -o %t.passes.mlir
// RUN: diff %t.pipeline.mlir %t.passes.mlir
// RUN: FileCheck %s --input-file=%t.pipeline.mlir
// CHECK: memopt.arena_bytes
// CHECK: memopt.inplace = 0
// CHECK: memopt.recompute
// CHECK: memopt.sgd_momentum_update
//
// A budget alone selects strategy=budget; microbatches adds the split.
// RUN: memopt-opt %examples/mlp.mlir "--memopt-pipeline=microbatches=2 budget=8MiB" -o %t.mb.mlir
// RUN: memopt-opt %examples/mlp.mlir --memopt-microbatch=count=2 --memopt-autodiff "--memopt-checkpoint=strategy=budget budget=8MiB" --memopt-partition --memopt-schedule --memopt-plan-memory -o %t.mb.passes.mlir
// RUN: diff %t.mb.mlir %t.mb.passes.mlir
//
// precision=fp16 adds mixed precision before autodiff, with its loss-scale
// options.
// RUN: memopt-opt %examples/cnn.mlir "--memopt-pipeline=precision=fp16 growth-interval=100 checkpoint=sqrt inplace=true" -o %t.mp.mlir
// RUN: memopt-opt %examples/cnn.mlir --memopt-mixed-precision=growth-interval=100 --memopt-autodiff "--memopt-checkpoint=strategy=sqrt" --memopt-partition=measure-inplace=true --memopt-inplace --memopt-schedule --memopt-plan-memory -o %t.mp.passes.mlir
// RUN: diff %t.mp.mlir %t.mp.passes.mlir
// RUN: FileCheck %s --check-prefix=MP --input-file=%t.mp.mlir
// MP: memopt.update_loss_scale {{.*}}growth_interval = 100
//
// workspace-limit caps the kernels' workspaces right after autodiff, so
// checkpointing's budget measures the capped step.
// RUN: memopt-opt %examples/cnn.mlir "--memopt-pipeline=workspace-limit=16KiB budget=16MiB" -o %t.ws.mlir
// RUN: memopt-opt %examples/cnn.mlir --memopt-autodiff --memopt-workspace-limit=bytes=16KiB "--memopt-checkpoint=strategy=budget budget=16MiB" --memopt-partition --memopt-schedule --memopt-plan-memory -o %t.ws.passes.mlir
// RUN: diff %t.ws.mlir %t.ws.passes.mlir
// RUN: FileCheck %s --check-prefix=WS --input-file=%t.ws.mlir
// WS: memopt.workspace_limit = 16384 : i64
//
// An unknown option, or a bad value, is an error.
// RUN: not memopt-opt %examples/mlp.mlir --memopt-pipeline=fast=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: no such option fast
// RUN: not memopt-opt %examples/mlp.mlir --memopt-pipeline=precision=fp8 -o /dev/null 2>&1 | FileCheck %s --check-prefix=FP8
// FP8: for the --precision option: unknown value 'fp8' (expected fp32, fp16 or bf16)
// RUN: not memopt-opt %examples/mlp.mlir --memopt-pipeline=mode=serve -o /dev/null 2>&1 | FileCheck %s --check-prefix=MODE
// MODE: for the --mode option: unknown value 'serve' (expected train, eval or inference)
// The help lists every closed choice's values; none is a <string>.
// RUN: memopt-opt --help | FileCheck %s --check-prefix=HELP
// HELP: --memopt-autodiff
// HELP: --optimizer=<value>
// HELP-NEXT: =sgd
// HELP-NEXT: =momentum
// HELP-NEXT: =adam
// HELP-NEXT: =adamw
// HELP-NEXT: =adam8bit
// HELP-NEXT: =adamw8bit
// HELP-NEXT: =adafactor
// HELP-NEXT: =none
// HELP: --memopt-checkpoint
// HELP: --solver=<value>
// HELP-NEXT: =auto
// HELP-NEXT: =dp
// HELP-NEXT: =ilp
// HELP: --strategy=<value>
// HELP-NEXT: =sqrt
// HELP-NEXT: =budget
// HELP-NEXT: =optimal
// HELP: --memopt-pipeline
// HELP: --checkpoint=<value>
// HELP-NEXT: =none
// HELP-NEXT: =sqrt
// HELP-NEXT: =budget
// HELP-NEXT: =optimal
