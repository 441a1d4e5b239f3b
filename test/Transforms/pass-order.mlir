// Passes used in an order that cannot work say which pass must come first;
// before, checkpointing before autodiff did nothing without a word, and
// passes after --memopt-plan-memory left stale offsets that the runtime
// refused (or worse).
// RUN: not memopt-opt %s --memopt-checkpoint=strategy=sqrt -o /dev/null 2>&1 | FileCheck %s --check-prefix=CKPT
// RUN: not memopt-opt %s --memopt-autodiff --memopt-plan-memory --memopt-inplace -o /dev/null 2>&1 | FileCheck %s --check-prefix=INPLACE
// RUN: not memopt-opt %s --memopt-autodiff --memopt-plan-memory --memopt-schedule -o /dev/null 2>&1 | FileCheck %s --check-prefix=SCHEDULE
// RUN: not memopt-opt %s --memopt-autodiff --memopt-plan-memory --memopt-partition -o /dev/null 2>&1 | FileCheck %s --check-prefix=PARTITION
// RUN: not memopt-opt %s --memopt-autodiff --memopt-plan-memory "--memopt-checkpoint=strategy=sqrt" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PLANNED
// Planning again is allowed, and so is the right order.
// RUN: memopt-opt %s --memopt-autodiff --memopt-checkpoint=strategy=sqrt --memopt-partition --memopt-inplace --memopt-schedule --memopt-plan-memory --memopt-plan-memory -o /dev/null
// CKPT: error: 'func.func' op has a loss over parameters but no backward pass: run --memopt-checkpoint after --memopt-autodiff
// INPLACE: error: 'func.func' op already has an arena plan (memopt.arena_bytes): memopt-inplace changes the step and must run before --memopt-plan-memory
// SCHEDULE: error: 'func.func' op already has an arena plan (memopt.arena_bytes): memopt-schedule changes the step
// PARTITION: error: 'func.func' op already has an arena plan (memopt.arena_bytes): memopt-partition changes the step
// PLANNED: error: 'func.func' op already has an arena plan (memopt.arena_bytes): memopt-checkpoint changes the step
func.func @step(%w: tensor<16x8xf32> {memopt.param}, %x: tensor<4x8xf32>, %y: tensor<4xi64>) -> tensor<f32> {
  %h = memopt.linear %x, %w : tensor<4x8xf32>, tensor<16x8xf32>
  %r = memopt.relu %h : tensor<4x16xf32>
  %l = memopt.cross_entropy %r, %y : tensor<4x16xf32>, tensor<4xi64>
  return %l : tensor<f32>
}
