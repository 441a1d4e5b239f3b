// RUN: memopt-opt %s --memopt-conv-workspace=bytes=10000 --memopt-schedule --memopt-plan-memory --convert-memopt-to-memrt | FileCheck %s
// RUN: memopt-opt %s --memopt-conv-workspace=bytes=10000 --memopt-workspace-limit=bytes=2500 --memopt-schedule --memopt-plan-memory --convert-memopt-to-memrt | FileCheck %s --check-prefix=CAP
// RUN: memopt-opt %s --memopt-schedule --memopt-plan-memory --convert-memopt-to-memrt | FileCheck %s --check-prefix=DEFAULT
// RUN: memopt-opt %s --memopt-conv-workspace=bytes=1KiB | FileCheck %s --check-prefix=ATTR
// RUN: memopt-opt %s "--memopt-pipeline=mode=inference conv-workspace=10000" | FileCheck %s --check-prefix=ATTR10K
// RUN: not memopt-opt %s --memopt-conv-workspace=bytes=fast 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not memopt-opt %s --memopt-conv-workspace 2>&1 | FileCheck %s --check-prefix=BAD

// Every convolution reserves at least the floor, the 1x1 one (which needs
// no im2col matrix) too; one image's im2col matrix is 2·3·3·6·6·4 = 2592
// bytes for the first convolution, 4·3·3·6·6·4 = 5184 for the second.
// CHECK-LABEL: func.func @convs
// CHECK:         memrt.kernel "conv2d" {{.*}} workspace(%{{.*}} : memref<10000xi8>)
// CHECK:         memrt.kernel "conv2d" {{.*}} workspace(%{{.*}} : memref<10000xi8>)
// CHECK:         memrt.kernel "conv2d" {{.*}} workspace(%{{.*}} : memref<10000xi8>)

// A cap still applies, to the floor too.
// CAP-LABEL: func.func @convs
// CAP:           memrt.kernel "conv2d" {{.*}} workspace(%{{.*}} : memref<2500xi8>)
// CAP:           memrt.kernel "conv2d" {{.*}} workspace(%{{.*}} : memref<2500xi8>)
// CAP:           memrt.kernel "conv2d" {{.*}} workspace(%{{.*}} : memref<2500xi8>)

// DEFAULT-LABEL: func.func @convs
// DEFAULT:       memrt.kernel "conv2d" {{.*}} workspace(%{{.*}} : memref<2592xi8>)
// DEFAULT:       memrt.kernel "conv2d" {{.*}} workspace(%{{.*}} : memref<5184xi8>)
// DEFAULT:       memrt.kernel "conv2d"
// DEFAULT-NOT:   workspace
// DEFAULT-SAME:  outs(%{{.*}} : memref<16x4x6x6xf32>) attrs

// ATTR-LABEL: func.func @convs
// ATTR-SAME:    memopt.conv_workspace = 1024 : i64
// ATTR10K-LABEL: func.func @convs
// ATTR10K-SAME:    memopt.conv_workspace = 10000 : i64
// BAD: memopt-conv-workspace: bytes must be a byte size such as 512MiB, 65536 or 0, got
func.func @convs(%x: tensor<16x2x6x6xf32>, %w1: tensor<4x2x3x3xf32>,
                 %w2: tensor<4x4x3x3xf32>, %w3: tensor<4x4x1x1xf32>) -> tensor<16x4x6x6xf32> {
  %y1 = memopt.conv2d %x, %w1 {padding = array<i64: 1, 1>}
      : tensor<16x2x6x6xf32>, tensor<4x2x3x3xf32>
  %y2 = memopt.conv2d %y1, %w2 {padding = array<i64: 1, 1>}
      : tensor<16x4x6x6xf32>, tensor<4x4x3x3xf32>
  %y3 = memopt.conv2d %y2, %w3 : tensor<16x4x6x6xf32>, tensor<4x4x1x1xf32>
  return %y3 : tensor<16x4x6x6xf32>
}
