// RUN: memopt-opt %s -split-input-file --memopt-schedule --memopt-plan-memory | FileCheck %s
// RUN: memopt-opt %s -split-input-file --memopt-schedule --memopt-plan-memory --convert-memopt-to-memrt | FileCheck %s --check-prefix=MEMRT

// A chain of 4 KiB buffers: each dies when the next-but-one is made, so two
// slots suffice and the arena meets the lower bound.
// CHECK-LABEL: func.func @chain
// CHECK-SAME:    attributes {memopt.arena_bytes = 8192 : i64, memopt.arena_lower_bound = 8192 : i64}
// CHECK:         memopt.relu %arg0 {memopt.offsets = array<i64: [[A:[0-9]+]]>}
// CHECK:         memopt.tanh %{{.*}} {memopt.offsets = array<i64: [[B:[0-9]+]]>}
// CHECK:         memopt.sigmoid %{{.*}} {memopt.offsets = array<i64: [[A]]>}
// CHECK:         memopt.relu %{{.*}} {memopt.offsets = array<i64: [[B]]>}
// MEMRT-LABEL: func.func @chain
// MEMRT-SAME:    memrt.arena_bytes = 8192 : i64
// MEMRT-NOT:     memopt.arena_bytes
func.func @chain(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %a = memopt.relu %x : tensor<1024xf32>       // +A
  %b = memopt.tanh %a : tensor<1024xf32>       // +B, A dies
  %c = memopt.sigmoid %b : tensor<1024xf32>    // reuses A, B dies
  %d = memopt.relu %c : tensor<1024xf32>       // reuses B, returned
  return %d : tensor<1024xf32>
}

// -----

// Two buffers live at the same time never share bytes; a reshape allocates
// nothing (-1: it is a view of its operand); a result that is returned keeps
// its slot to the end.
// CHECK-LABEL: func.func @live_together
// (Three 1 KiB buffers are live at the add: its two inputs and its output.)
// CHECK-SAME:    memopt.arena_bytes = 3072 : i64, memopt.arena_lower_bound = 3072 : i64
// CHECK:         %[[A:.*]] = memopt.relu %arg0 {memopt.offsets = array<i64: 0>} : tensor<256xf32>
// CHECK-NEXT:    memopt.reshape %[[A]] {memopt.offsets = array<i64: -1>}
// CHECK-NEXT:    %[[B:.*]] = memopt.tanh %arg0 {memopt.offsets = array<i64: 1024>} : tensor<256xf32>
// CHECK-NEXT:    memopt.reshape %[[B]] {memopt.offsets = array<i64: -1>}
// CHECK-NEXT:    memopt.add {{.*}} {memopt.offsets = array<i64: 2048>}
func.func @live_together(%x: tensor<256xf32>) -> tensor<16x16xf32> {
  %a = memopt.relu %x : tensor<256xf32>
  %b = memopt.tanh %x : tensor<256xf32>
  %r = memopt.reshape %a : tensor<256xf32> -> tensor<16x16xf32>
  %s = memopt.reshape %b : tensor<256xf32> -> tensor<16x16xf32>
  %y = memopt.add %r, %s : tensor<16x16xf32>, tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}
