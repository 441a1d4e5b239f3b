// RUN: memopt-opt %s -split-input-file --convert-memopt-to-memrt | FileCheck %s
// RUN: memopt-opt %s -split-input-file --convert-memopt-to-memrt=alignment=256 | FileCheck %s --check-prefix=ALIGN

// Roles, bump allocation in op order (each offset aligned), and the arena size.
// CHECK-LABEL: func.func @mlp
// CHECK-SAME:    %[[W:[a-z0-9]+]]: memref<4x8xf32> {memrt.role = "param"}
// CHECK-SAME:    %[[M:[a-z0-9]+]]: memref<4xf32> {memrt.role = "state"}
// CHECK-SAME:    %[[X:[a-z0-9]+]]: memref<3x8xf32> {memrt.role = "data"}
// CHECK-SAME:    %[[L:[a-z0-9]+]]: memref<3xi64> {memrt.role = "data"}
// CHECK-SAME:    -> (memref<f32>, memref<4xf32>)
// CHECK-SAME:    attributes {memrt.alignment = 64 : i64, memrt.arena_bytes = 192 : i64}
// CHECK:         %[[H:.*]] = memrt.arena_slice offset 0 : memref<3x4xf32>
// CHECK:         memrt.kernel "linear" ins(%[[X]], %[[W]] : {{.*}}) outs(%[[H]] : memref<3x4xf32>) attrs {}
// CHECK:         %[[R:.*]] = memrt.arena_slice offset 64 : memref<3x4xf32>
// CHECK:         memrt.kernel "relu" ins(%[[H]] : memref<3x4xf32>) outs(%[[R]] : memref<3x4xf32>)
// CHECK:         %[[LOSS:.*]] = memrt.arena_slice offset 128 : memref<f32>
// CHECK:         memrt.kernel "cross_entropy" ins(%[[R]], %[[L]] : memref<3x4xf32>, memref<3xi64>) outs(%[[LOSS]] : memref<f32>)
// CHECK:         return %[[LOSS]], %[[M]] : memref<f32>, memref<4xf32>
// ALIGN-LABEL: func.func @mlp
// ALIGN-SAME:    memrt.alignment = 256 : i64, memrt.arena_bytes = 768 : i64
// ALIGN:         memrt.arena_slice offset 256
// ALIGN:         memrt.arena_slice offset 512
func.func @mlp(%w: tensor<4x8xf32> {memopt.param}, %m: tensor<4xf32> {memopt.state},
               %x: tensor<3x8xf32>, %l: tensor<3xi64>) -> (tensor<f32>, tensor<4xf32>) {
  %h = memopt.linear %x, %w : tensor<3x8xf32>, tensor<4x8xf32>
  %r = memopt.relu %h : tensor<3x4xf32>
  %loss = memopt.cross_entropy %r, %l : tensor<3x4xf32>, tensor<3xi64>
  return %loss, %m : tensor<f32>, tensor<4xf32>
}

// -----

// Every attribute reaches the kernel, defaults included; strides that default
// to another attribute are made explicit.
// CHECK-LABEL: func.func @attributes
// CHECK: memrt.kernel "conv2d" {{.*}} attrs {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, strides = array<i64: 1, 1>}
// CHECK: %[[BN:.*]] = memrt.arena_slice offset {{[0-9]+}} : memref<2x4x6x6xf32>
// CHECK: %[[MEAN:.*]] = memrt.arena_slice offset {{[0-9]+}} : memref<4xf32>
// CHECK: %[[VAR:.*]] = memrt.arena_slice offset {{[0-9]+}} : memref<4xf32>
// CHECK: memrt.kernel "batch_norm" {{.*}} outs(%[[BN]], %[[MEAN]], %[[VAR]] : {{.*}}) attrs {epsilon = 1.000000e-05 : f64, momentum = 1.000000e-01 : f64}
// CHECK: memrt.kernel "max_pool2d" {{.*}} attrs {kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>, strides = array<i64: 2, 2>}
// CHECK: memrt.kernel "avg_pool2d" {{.*}} attrs {kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, strides = array<i64: 1, 1>}
// CHECK: memrt.kernel "global_avg_pool2d"
// CHECK: memrt.kernel "softmax" {{.*}} attrs {axis = -1 : i64, causal = false, safe = false}
// CHECK: memrt.kernel "leaky_relu" {{.*}} attrs {alpha = 1.000000e-02 : f64}
// CHECK: memrt.kernel "elu" {{.*}} attrs {alpha = 1.000000e+00 : f64}
// CHECK: memrt.kernel "dropout" {{.*}} attrs {p = 5.000000e-01 : f64, seed = 0 : i64}
// CHECK: memrt.kernel "slice" {{.*}} attrs {offsets = array<i64: 0, 1>, sizes = array<i64: 2, 2>, strides = array<i64: 1, 1>}
// CHECK: memrt.kernel "matmul" {{.*}} attrs {transpose_a = false, transpose_b = true}
// CHECK: memrt.kernel "mse_loss"
func.func @attributes(%x: tensor<2x3x6x6xf32>, %w: tensor<4x3x3x3xf32> {memopt.param},
                      %g: tensor<4xf32> {memopt.param}, %m: tensor<4xf32> {memopt.state},
                      %t: tensor<2x2xf32>) -> tensor<f32> {
  %c = memopt.conv2d %x, %w {padding = array<i64: 1, 1>} : tensor<2x3x6x6xf32>, tensor<4x3x3x3xf32>
  %n, %nm, %nv = memopt.batch_norm %c, %g, %g, %m, %m : tensor<2x4x6x6xf32>, tensor<4xf32>
  %p = memopt.max_pool2d %n {kernel_size = array<i64: 2, 2>} : tensor<2x4x6x6xf32>
  %a = memopt.avg_pool2d %p {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>, padding = array<i64: 1, 1>} : tensor<2x4x3x3xf32>
  %gp = memopt.global_avg_pool2d %a : tensor<2x4x3x3xf32>
  %s = memopt.softmax %gp : tensor<2x4xf32>
  %lr = memopt.leaky_relu %s : tensor<2x4xf32>
  %e = memopt.elu %lr : tensor<2x4xf32>
  %d = memopt.dropout %e : tensor<2x4xf32>
  %sl = memopt.slice %d {offsets = array<i64: 0, 1>, sizes = array<i64: 2, 2>} : tensor<2x4xf32>
  %mm = memopt.matmul %sl, %t {transpose_b = true} : tensor<2x2xf32>, tensor<2x2xf32>
  %loss = memopt.mse_loss %mm, %t : tensor<2x2xf32>
  return %loss : tensor<f32>
}

// -----

// Reshape is a view of the same bytes; tensor constants become constant buffers.
// CHECK-LABEL: func.func @views_and_constants
// CHECK-SAME:    memrt.arena_bytes = 64 : i64
// CHECK:         %[[V:.*]] = memrt.view %arg0 : memref<2x3xf32> -> memref<6xf32>
// CHECK:         %[[C:.*]] = memrt.constant dense<5.000000e-01> : tensor<f32> -> memref<f32>
// CHECK:         %[[O:.*]] = memrt.arena_slice offset 0 : memref<6xf32>
// CHECK:         memrt.kernel "mul" ins(%[[V]], %[[C]] : memref<6xf32>, memref<f32>) outs(%[[O]] : memref<6xf32>)
func.func @views_and_constants(%x: tensor<2x3xf32>) -> tensor<6xf32> {
  %r = memopt.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
  %c = arith.constant dense<0.5> : tensor<f32>
  %y = memopt.mul %r, %c : tensor<6xf32>, tensor<f32>
  return %y : tensor<6xf32>
}

// -----

// The remaining forward ops lower to kernels of the same name.
// CHECK-LABEL: func.func @rest
// CHECK: memrt.kernel "gelu"
// CHECK: memrt.kernel "sigmoid"
// CHECK: memrt.kernel "tanh"
// CHECK: memrt.kernel "add"
// CHECK: memrt.kernel "layer_norm" {{.*}} attrs {epsilon = 1.000000e-05 : f64}
// CHECK: memrt.kernel "transpose" {{.*}} attrs {permutation = array<i64: 1, 0>}
// CHECK: memrt.kernel "concat" {{.*}} attrs {axis = 0 : i64}
// CHECK: memrt.kernel "upsample_nearest2d" {{.*}} attrs {scale = 2 : i64}
// CHECK: memrt.kernel "embedding"
func.func @rest(%x: tensor<4x4xf32>, %g: tensor<4xf32> {memopt.param}, %i: tensor<1x1x2x2xf32>,
                %table: tensor<10x4xf32> {memopt.param}, %ids: tensor<3xi64>)
    -> (tensor<8x4xf32>, tensor<1x1x4x4xf32>, tensor<3x4xf32>) {
  %a = memopt.gelu %x : tensor<4x4xf32>
  %b = memopt.sigmoid %a : tensor<4x4xf32>
  %c = memopt.tanh %b : tensor<4x4xf32>
  %d = memopt.add %c, %g : tensor<4x4xf32>, tensor<4xf32>
  %e = memopt.layer_norm %d, %g, %g : tensor<4x4xf32>, tensor<4xf32>
  %f = memopt.transpose %e {permutation = array<i64: 1, 0>} : tensor<4x4xf32>
  %h = memopt.concat %f, %x {axis = 0 : i64} : tensor<4x4xf32>, tensor<4x4xf32>
  %u = memopt.upsample_nearest2d %i {scale = 2 : i64} : tensor<1x1x2x2xf32>
  %em = memopt.embedding %table, %ids : tensor<10x4xf32>, tensor<3xi64>
  return %h, %u, %em : tensor<8x4xf32>, tensor<1x1x4x4xf32>, tensor<3x4xf32>
}
