// RUN: memopt-opt %s -split-input-file --memopt-workspace-limit=bytes=2500 --memopt-schedule --memopt-plan-memory --convert-memopt-to-memrt | FileCheck %s
// RUN: memopt-opt %s -split-input-file --memopt-workspace-limit=bytes=0 --memopt-schedule --memopt-plan-memory --convert-memopt-to-memrt | FileCheck %s --check-prefix=ZERO
// RUN: memopt-opt %s -split-input-file --memopt-workspace-limit=bytes=1000 | FileCheck %s --check-prefix=ATTR
// RUN: not memopt-opt %s -split-input-file --memopt-workspace-limit=bytes=lots 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not memopt-opt %s -split-input-file --memopt-workspace-limit 2>&1 | FileCheck %s --check-prefix=BAD

// The cap is a function attribute every workspace user reads.
// ATTR-LABEL: func.func @convs
// ATTR-SAME:    memopt.workspace_limit = 1000 : i64
// BAD: memopt-workspace-limit: bytes must be a byte size such as 4MiB, 65536 or 0, got

// Under a cap a convolution reserves whole output rows of its im2col matrix
// (a row: C·R·S·OW f32, 2·3·3·6·4 = 432 and 4·3·3·6·4 = 864 bytes here), as
// many as fit (5 and 2 of 6 under 2500 bytes) and at least one; a loss whose partial sums do not fit
// reserves nothing and reduces in one block.
// CHECK-LABEL: func.func @convs
// CHECK:         memrt.arena_slice offset {{[0-9]+}} : memref<2160xi8>
// CHECK:         memrt.kernel "conv2d" {{.*}} workspace(%{{.*}} : memref<2160xi8>)
// CHECK:         memrt.arena_slice offset {{[0-9]+}} : memref<1728xi8>
// CHECK:         memrt.kernel "conv2d" {{.*}} workspace(%{{.*}} : memref<1728xi8>)
// CHECK:         memrt.kernel "cross_entropy"
// CHECK-SAME:    workspace(%{{.*}} : memref<16xi8>)
// ZERO-LABEL: func.func @convs
// ZERO:          memrt.kernel "conv2d" {{.*}} workspace(%{{.*}} : memref<432xi8>)
// ZERO:          memrt.kernel "conv2d" {{.*}} workspace(%{{.*}} : memref<864xi8>)
// ZERO:          memrt.kernel "cross_entropy"
// ZERO-NOT:      workspace
// ZERO-SAME:     attrs
func.func @convs(%x: tensor<16x2x6x6xf32>, %w1: tensor<4x2x3x3xf32>,
                 %w2: tensor<4x4x3x3xf32>, %labels: tensor<16xi64>) -> tensor<f32> {
  %y1 = memopt.conv2d %x, %w1 {padding = array<i64: 1, 1>}
      : tensor<16x2x6x6xf32>, tensor<4x2x3x3xf32>
  %y2 = memopt.conv2d %y1, %w2 {padding = array<i64: 1, 1>}
      : tensor<16x4x6x6xf32>, tensor<4x4x3x3xf32>
  %p = memopt.global_avg_pool2d %y2 : tensor<16x4x6x6xf32>
  %loss = memopt.cross_entropy %p, %labels : tensor<16x4xf32>, tensor<16xi64>
  return %loss : tensor<f32>
}

// -----

// layer_norm_backward keeps its per-row statistics and as many chunks of
// column partials as fit: 8 rows × 16 bytes, then chunks of 64 × 16 bytes
// (2 of the 8 it would use without a cap); with less than one chunk it
// reserves nothing (one block).
// CHECK-LABEL: func.func @layer_norm
// CHECK:         memrt.kernel "layer_norm_backward" {{.*}} workspace(%{{.*}} : memref<2176xi8>)
// ZERO-LABEL: func.func @layer_norm
// ZERO:          memrt.kernel "layer_norm_backward"
// ZERO-NOT:      workspace
// ZERO-SAME:     attrs
func.func @layer_norm(%dy: tensor<8x64xf32>, %x: tensor<8x64xf32>, %g: tensor<64xf32>)
    -> (tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>) {
  %dx, %dg, %db = memopt.layer_norm_backward %dy, %x, %g
      : (tensor<8x64xf32>, tensor<8x64xf32>, tensor<64xf32>)
      -> (tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>)
  return %dx, %dg, %db : tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>
}
