// RUN: memopt-opt %s -split-input-file --memopt-schedule --memopt-plan-memory --convert-memopt-to-memrt | FileCheck %s
// RUN: memopt-opt %s -split-input-file --memopt-workspace-limit=bytes=40MiB --memopt-schedule --memopt-plan-memory --convert-memopt-to-memrt | FileCheck %s
// RUN: memopt-opt %s -split-input-file --memopt-workspace-limit=bytes=2000 --memopt-schedule --memopt-plan-memory --convert-memopt-to-memrt | FileCheck %s --check-prefix=CAP

// The LM head's workspace: one chunk of logits (4 rows of 100 f32, 1600
// bytes), then 32 MiB of GEMM scratch for cuBLAS from a 256-byte boundary
// (1600 + 33554432 + 256 = 33556288 bytes). Under a cap that cannot hold
// the scratch, the rows alone (cuBLAS then runs without a workspace).
// CHECK-LABEL: func.func @head
// CHECK:         memrt.kernel "linear_cross_entropy" {{.*}} workspace(%{{.*}} : memref<33556288xi8>)
// CHECK:         memrt.kernel "linear_cross_entropy_backward" {{.*}} workspace(%{{.*}} : memref<33556288xi8>)
// CAP-LABEL: func.func @head
// CAP:           memrt.kernel "linear_cross_entropy" {{.*}} workspace(%{{.*}} : memref<1600xi8>)
// CAP:           memrt.kernel "linear_cross_entropy_backward" {{.*}} workspace(%{{.*}} : memref<1600xi8>)
func.func @head(%h: tensor<16x8xf32>, %w: tensor<100x8xf32>, %l: tensor<16xi64>)
    -> (tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>) {
  %loss, %lse = memopt.linear_cross_entropy %h, %w, %l {chunk = 4 : i64}
      : tensor<16x8xf32>, tensor<100x8xf32>, tensor<16xi64>
  %dh, %dw = memopt.linear_cross_entropy_backward %loss, %h, %w, %l, %lse {chunk = 4 : i64}
      : (tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>, tensor<16xi64>, tensor<16xf32>)
      -> (tensor<16x8xf32>, tensor<100x8xf32>)
  return %loss, %dh, %dw : tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>
}

// -----

// All 16 rows in one chunk: the GEMMs are as large as the batch, and no
// scratch is reserved (16 rows of 100 f32).
// CHECK-LABEL: func.func @one_chunk
// CHECK:         memrt.kernel "linear_cross_entropy" {{.*}} workspace(%{{.*}} : memref<6400xi8>)
// CHECK:         memrt.kernel "linear_cross_entropy_backward" {{.*}} workspace(%{{.*}} : memref<6400xi8>)
// Under the cap, 5 of the 16 rows a chunk (2000 bytes), and no room for the
// scratch.
// CAP-LABEL: func.func @one_chunk
// CAP:           memrt.kernel "linear_cross_entropy" {{.*}} workspace(%{{.*}} : memref<2000xi8>)
func.func @one_chunk(%h: tensor<16x8xf32>, %w: tensor<100x8xf32>, %l: tensor<16xi64>)
    -> (tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>) {
  %loss, %lse = memopt.linear_cross_entropy %h, %w, %l {chunk = 16 : i64}
      : tensor<16x8xf32>, tensor<100x8xf32>, tensor<16xi64>
  %dh, %dw = memopt.linear_cross_entropy_backward %loss, %h, %w, %l, %lse {chunk = 16 : i64}
      : (tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>, tensor<16xi64>, tensor<16xf32>)
      -> (tensor<16x8xf32>, tensor<100x8xf32>)
  return %loss, %dh, %dw : tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>
}

// -----

// The pair in one op (--memopt-fuse-loss-gradient): its workspace is the
// 16 log-sum-exps (64 bytes, already a multiple of 64) and then the
// backward op's, the 4-row chunk and the GEMM scratch (64 + 33556288);
// under the cap the log-sum-exps and the rows of the 1936 bytes left
// (4 rows, 1600 bytes).
// CHECK-LABEL: func.func @with_grad
// CHECK:         memrt.kernel "linear_cross_entropy_with_grad" {{.*}} workspace(%{{.*}} : memref<33556352xi8>)
// CAP-LABEL: func.func @with_grad
// CAP:           memrt.kernel "linear_cross_entropy_with_grad" {{.*}} workspace(%{{.*}} : memref<1664xi8>)
func.func @with_grad(%h: tensor<16x8xf32>, %w: tensor<100x8xf32>, %l: tensor<16xi64>, %g: tensor<f32>)
    -> (tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>) {
  %loss, %dh, %dw = memopt.linear_cross_entropy_with_grad %g, %h, %w, %l {chunk = 4 : i64}
      : (tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>, tensor<16xi64>) -> (tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>)
  return %loss, %dh, %dw : tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>
}
