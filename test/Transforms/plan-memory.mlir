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

// -----

// A convolution's workspace (its im2col matrix, 18·36 and 36·36 f32 here)
// lives during that convolution alone: it shares bytes with buffers dead
// by then, counts in the live bytes (the peak is y1 + y2 + conv2's 5184
// bytes) and reaches the kernel as an i8 slice. A 1x1 unit-stride
// convolution reads its input as the matrix and has none.
// CHECK-LABEL: func.func @conv_workspace
// CHECK-SAME:    memopt.arena_bytes = 6336 : i64, memopt.arena_lower_bound = 6336 : i64
// CHECK:         memopt.conv2d {{.*}} {memopt.offsets = array<i64: {{[0-9]+}}>, memopt.workspace_offset = {{[0-9]+}} : i64, padding
// CHECK:         memopt.conv2d {{.*}} {memopt.offsets = array<i64: {{[0-9]+}}>, memopt.workspace_offset = {{[0-9]+}} : i64, padding
// CHECK:         memopt.conv2d
// CHECK-NOT:     workspace_offset
// CHECK-SAME:    tensor<1x4x6x6xf32>, tensor<4x4x1x1xf32>
// MEMRT-LABEL: func.func @conv_workspace
// MEMRT:         %[[WS1:.*]] = memrt.arena_slice offset {{[0-9]+}} : memref<2592xi8>
// MEMRT:         memrt.kernel "conv2d" {{.*}} workspace(%[[WS1]] : memref<2592xi8>)
// MEMRT:         %[[WS2:.*]] = memrt.arena_slice offset {{[0-9]+}} : memref<5184xi8>
// MEMRT:         memrt.kernel "conv2d" {{.*}} workspace(%[[WS2]] : memref<5184xi8>)
// MEMRT:         memrt.kernel "conv2d"
// MEMRT-NOT:     workspace
// MEMRT-SAME:    attrs
func.func @conv_workspace(%x: tensor<1x2x6x6xf32>, %w1: tensor<4x2x3x3xf32>,
                          %w2: tensor<4x4x3x3xf32>, %w3: tensor<4x4x1x1xf32>)
    -> tensor<1x4x6x6xf32> {
  %y1 = memopt.conv2d %x, %w1 {padding = array<i64: 1, 1>}
      : tensor<1x2x6x6xf32>, tensor<4x2x3x3xf32>
  %y2 = memopt.conv2d %y1, %w2 {padding = array<i64: 1, 1>}
      : tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>
  %y3 = memopt.conv2d %y2, %w3 : tensor<1x4x6x6xf32>, tensor<4x4x1x1xf32>
  return %y3 : tensor<1x4x6x6xf32>
}
