// --memopt-plan-memory{budget=B}: the step, as the runtime allocates it, is
// the arena (8192 bytes here), then each argument and constant at the next
// multiple of max(64, alignment): x (4096) at 8192, y (12 bytes) at 12288,
// ending at 12300. Exactly that fits; one byte less is refused with the
// parts named.
// RUN: memopt-opt %s --memopt-schedule "--memopt-plan-memory=budget=12300" | FileCheck %s
// RUN: memopt-opt %s -verify-diagnostics --memopt-schedule "--memopt-plan-memory=budget=12299"
// With 4096-byte alignment y starts at 12288 too; with 8192, past the limit.
// RUN: memopt-opt %s --memopt-schedule "--memopt-plan-memory=budget=12300 alignment=4096" | FileCheck %s
// RUN: not memopt-opt %s --memopt-schedule "--memopt-plan-memory=alignment=8192" 2>&1 | FileCheck %s --check-prefix=ALIGN
// RUN: not memopt-opt %s --memopt-schedule "--memopt-plan-memory=budget=-5" 2>&1 | FileCheck %s --check-prefix=NEG
// RUN: not memopt-opt %s --memopt-schedule "--memopt-plan-memory=alignment=4611686018427387904" 2>&1 | FileCheck %s --check-prefix=HUGE

// CHECK-LABEL: func.func @chain
// CHECK-SAME:    memopt.arena_bytes = 8192
// ALIGN: error: memopt-plan-memory: alignment must be a power of two from 1 to 4096, got 8192
// NEG: error: memopt-plan-memory: invalid budget '-5' (expected a positive byte count
// HUGE: error: memopt-plan-memory: alignment must be a power of two from 1 to 4096, got 4611686018427387904

// expected-error @+1 {{'func.func' op needs 12300 bytes (12.01 KiB) for its step (arena 8192 bytes, arguments and constants 4108 bytes, alignment padding 0 bytes), more than the budget of 12299 bytes (12.01 KiB)}}
func.func @chain(%x: tensor<1024xf32>, %y: tensor<3xf32>) -> (tensor<1024xf32>, tensor<3xf32>) {
  %a = memopt.relu %x : tensor<1024xf32>
  %b = memopt.tanh %a : tensor<1024xf32>
  %c = memopt.sigmoid %b : tensor<1024xf32>
  %d = memopt.relu %c : tensor<1024xf32>
  %e = memopt.relu %y : tensor<3xf32>
  return %d, %e : tensor<1024xf32>, tensor<3xf32>
}
