// RUN: memopt-opt %s -split-input-file --memopt-autodiff | FileCheck %s
// RUN: memopt-opt %s -split-input-file --memopt-autodiff=optimizer=none | FileCheck %s --check-prefix=NONE

// Conv → batch norm → ReLU → max-pool → linear: each backward op reads only
// what its rule saved (conv: input and weight; BN: x and gamma; ReLU: its
// output; pool: its input), and the data input gets no gradient.
// CHECK-LABEL: func.func @conv_bn
// CHECK-SAME:    -> (tensor<f32>, tensor<4xf32> {memopt.updates = 3 : i64}, tensor<4xf32> {memopt.updates = 4 : i64}, tensor<4x3x3x3xf32> {memopt.updates = 0 : i64}
// CHECK:         %[[C:.*]] = memopt.conv2d %[[X:arg5]], %[[W:arg0]]
// CHECK:         %[[N:.*]], %{{.*}}, %{{.*}} = memopt.batch_norm %[[C]], %[[G:arg1]]
// CHECK:         %[[R:.*]] = memopt.relu %[[N]]
// CHECK:         %[[P:.*]] = memopt.max_pool2d %[[R]]
// CHECK:         %[[F:.*]] = memopt.reshape %[[P]]
// CHECK:         %[[L:.*]] = memopt.linear %[[F]], %[[FW:arg6]]
// CHECK:         %[[LOSS:.*]] = memopt.cross_entropy %[[L]], %[[Y:arg8]]
// CHECK:         %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK:         %[[DL:.*]] = memopt.cross_entropy_backward %[[ONE]], %[[L]], %[[Y]]
// CHECK:         %[[DF:.*]] = memopt.matmul %[[DL]], %[[FW]]
// CHECK:         %[[DFW:.*]] = memopt.matmul %[[DL]], %[[F]] {transpose_a = true}
// CHECK:         %[[DP:.*]] = memopt.reshape %[[DF]]
// CHECK:         %[[DR:.*]] = memopt.max_pool2d_backward %[[DP]], %[[R]] {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>}
// CHECK:         %[[DN:.*]] = memopt.relu_backward %[[DR]], %[[R]]
// CHECK:         %[[DC:.*]], %[[DG:.*]], %[[DB:.*]] = memopt.batch_norm_backward %[[DN]], %[[C]], %[[G]]
// CHECK-NOT:     memopt.conv2d_backward_input
// CHECK:         %[[DW:.*]] = memopt.conv2d_backward_weight %[[DC]], %[[X]] {padding = array<i64: 1, 1>}
// CHECK:         memopt.sgd_update %[[W]], %[[DW]] {lr = 1.000000e-02 : f64, memopt.inplace = 0 : i64}
// CHECK:         memopt.sgd_update %[[G]], %[[DG]]
// CHECK:         memopt.sgd_update %{{.*}}, %[[DB]]
// CHECK:         memopt.sgd_update %[[FW]], %[[DFW]]
// NONE-LABEL: func.func @conv_bn
// NONE-SAME:    -> (tensor<f32>, tensor<4xf32> {memopt.updates = 3 : i64}, tensor<4xf32> {memopt.updates = 4 : i64}, tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<10x16xf32>)
// NONE-NOT:     sgd_update
func.func @conv_bn(%w: tensor<4x3x3x3xf32> {memopt.param}, %g: tensor<4xf32> {memopt.param},
                   %b: tensor<4xf32> {memopt.param}, %m: tensor<4xf32> {memopt.state},
                   %v: tensor<4xf32> {memopt.state}, %x: tensor<2x3x4x4xf32>,
                   %fw: tensor<10x16xf32> {memopt.param}, %unused: tensor<2xf32>, %y: tensor<2xi64>)
    -> (tensor<f32>, tensor<4xf32>, tensor<4xf32>) {
  %c = memopt.conv2d %x, %w {padding = array<i64: 1, 1>} : tensor<2x3x4x4xf32>, tensor<4x3x3x3xf32>
  %n, %nm, %nv = memopt.batch_norm %c, %g, %b, %m, %v : tensor<2x4x4x4xf32>, tensor<4xf32>
  %r = memopt.relu %n : tensor<2x4x4x4xf32>
  %p = memopt.max_pool2d %r {kernel_size = array<i64: 2, 2>} : tensor<2x4x4x4xf32>
  %f = memopt.reshape %p : tensor<2x4x2x2xf32> -> tensor<2x16xf32>
  %l = memopt.linear %f, %fw : tensor<2x16xf32>, tensor<10x16xf32>
  %loss = memopt.cross_entropy %l, %y : tensor<2x10xf32>, tensor<2xi64>
  return %loss, %nm, %nv : tensor<f32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A value with several uses (a residual connection) gets the sum of its
// gradients; broadcasting is undone with sum_to.
// CHECK-LABEL: func.func @residual
// CHECK:         %[[H:.*]] = memopt.mul %[[X:arg0]], %[[S:arg1]]
// CHECK:         %[[A:.*]] = memopt.add %[[H]], %[[X]]
// CHECK:         %[[DA:.*]] = memopt.mse_loss_backward
// CHECK:         %[[M:.*]] = memopt.mul %[[DA]], %[[S]]
// CHECK:         %[[M2:.*]] = memopt.mul %[[DA]], %[[X]]
// CHECK:         %[[DS:.*]] = memopt.sum_to %[[M2]] : (tensor<3x4xf32>) -> tensor<4xf32>
// CHECK:         %[[DX:.*]] = memopt.add %[[DA]], %[[M]]
// CHECK:         memopt.sgd_update %[[X]], %[[DX]]
// CHECK:         memopt.sgd_update %[[S]], %[[DS]]
func.func @residual(%x: tensor<3x4xf32> {memopt.param}, %s: tensor<4xf32> {memopt.param},
                    %t: tensor<3x4xf32>) -> tensor<f32> {
  %h = memopt.mul %x, %s : tensor<3x4xf32>, tensor<4xf32>
  %a = memopt.add %h, %x : tensor<3x4xf32>, tensor<3x4xf32>
  %l = memopt.mse_loss %a, %t : tensor<3x4xf32>
  return %l : tensor<f32>
}

// -----

// sub: d lhs = dy, d rhs = -dy, negated after sum_to (over rhs's smaller
// shape). div, PyTorch's rule over the saved lhs and rhs: d lhs = dy / rhs,
// d rhs = -(dy / rhs) * lhs / rhs, sharing dy / rhs with d lhs.
// CHECK-LABEL: func.func @sub_div
// CHECK:         %[[D:.*]] = memopt.sub %[[X:arg0]], %[[B:arg1]] : tensor<3x4xf32>, tensor<4xf32>
// CHECK:         %[[Q:.*]] = memopt.div %[[D]], %[[S:arg2]] : tensor<3x4xf32>, tensor<3x1xf32>
// CHECK:         %[[DQ:.*]] = memopt.mse_loss_backward
// CHECK:         %[[T:.*]] = memopt.div %[[DQ]], %[[S]] : tensor<3x4xf32>, tensor<3x1xf32>
// CHECK:         %[[P:.*]] = memopt.mul %[[T]], %[[D]] : tensor<3x4xf32>, tensor<3x4xf32>
// CHECK:         %[[R:.*]] = memopt.div %[[P]], %[[S]] : tensor<3x4xf32>, tensor<3x1xf32>
// CHECK:         %[[RS:.*]] = memopt.sum_to %[[R]] : (tensor<3x4xf32>) -> tensor<3x1xf32>
// CHECK:         %[[DS:.*]] = memopt.mul %[[RS]], %[[M1:.*]] : tensor<3x1xf32>, tensor<f32>
// CHECK:         %[[BS:.*]] = memopt.sum_to %[[T]] : (tensor<3x4xf32>) -> tensor<4xf32>
// CHECK:         %[[DB:.*]] = memopt.mul %[[BS]], %{{.*}} : tensor<4xf32>, tensor<f32>
// CHECK:         memopt.sgd_update %[[X]], %[[T]]
// CHECK:         memopt.sgd_update %[[B]], %[[DB]]
// CHECK:         memopt.sgd_update %[[S]], %[[DS]]
func.func @sub_div(%x: tensor<3x4xf32> {memopt.param}, %b: tensor<4xf32> {memopt.param},
                   %s: tensor<3x1xf32> {memopt.param}, %t: tensor<3x4xf32>) -> tensor<f32> {
  %d = memopt.sub %x, %b : tensor<3x4xf32>, tensor<4xf32>
  %q = memopt.div %d, %s : tensor<3x4xf32>, tensor<3x1xf32>
  %l = memopt.mse_loss %q, %t : tensor<3x4xf32>
  return %l : tensor<f32>
}

// -----

// Attention pieces: matmul with transposes, causal softmax (saves its output),
// dropout (regenerates its mask from the same seed), slices of one projection.
// CHECK-LABEL: func.func @attention
// CHECK:         %[[Q:.*]] = memopt.slice %[[QKV:.*]] {offsets = array<i64: 0, 0>, sizes = array<i64: 4, 8>}
// CHECK:         %[[K:.*]] = memopt.slice %[[QKV]] {offsets = array<i64: 0, 8>, sizes = array<i64: 4, 8>}
// CHECK:         %[[SC:.*]] = memopt.matmul %[[Q]], %[[K]] {transpose_b = true}
// CHECK:         %[[P:.*]] = memopt.softmax %[[SC]] {causal = true}
// CHECK:         memopt.dropout %[[P]] {p = 1.000000e-01 : f64, seed = 42 : i64}
// CHECK:         %[[DD:.*]] = memopt.dropout %{{.*}} {p = 1.000000e-01 : f64, seed = 42 : i64}
// CHECK:         %[[DSC:.*]] = memopt.softmax_backward %[[DD]], %[[P]]
// CHECK-DAG:     memopt.matmul %[[DSC]], %[[K]] :
// CHECK-DAG:     memopt.matmul %[[DSC]], %[[Q]] {transpose_a = true}
// CHECK:         memopt.slice_backward %{{.*}} {offsets = array<i64: 0, 8>, sizes = array<i64: 4, 8>, strides = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<4x16xf32>
// CHECK:         memopt.slice_backward %{{.*}} {offsets = array<i64: 0, 0>, sizes = array<i64: 4, 8>, strides = array<i64: 1, 1>}
func.func @attention(%x: tensor<4x8xf32>, %w: tensor<16x8xf32> {memopt.param},
                     %t: tensor<4x4xf32>) -> tensor<f32> {
  %qkv = memopt.linear %x, %w : tensor<4x8xf32>, tensor<16x8xf32>
  %q = memopt.slice %qkv {offsets = array<i64: 0, 0>, sizes = array<i64: 4, 8>} : tensor<4x16xf32>
  %k = memopt.slice %qkv {offsets = array<i64: 0, 8>, sizes = array<i64: 4, 8>} : tensor<4x16xf32>
  %s = memopt.matmul %q, %k {transpose_b = true} : tensor<4x8xf32>, tensor<4x8xf32>
  %p = memopt.softmax %s {causal = true} : tensor<4x4xf32>
  %d = memopt.dropout %p {p = 0.1 : f64, seed = 42 : i64} : tensor<4x4xf32>
  %l = memopt.mse_loss %d, %t : tensor<4x4xf32>
  return %l : tensor<f32>
}

// -----

// Concat's gradient is a slice per input; embedding's a scatter-add; layer
// norm saves x and gamma.
// CHECK-LABEL: func.func @concat_embedding
// CHECK:         memopt.layer_norm_backward
// CHECK:         memopt.slice %{{.*}} {offsets = array<i64: 0, 0, 0>, sizes = array<i64: 2, 3, 4>, strides = array<i64: 1, 1, 1>}
// CHECK:         memopt.slice %{{.*}} {offsets = array<i64: 0, 0, 4>, sizes = array<i64: 2, 3, 4>, strides = array<i64: 1, 1, 1>}
// CHECK:         memopt.embedding_backward %{{.*}}, %[[IDS:arg1]] : (tensor<2x3x4xf32>, tensor<2x3xi64>) -> tensor<10x4xf32>
func.func @concat_embedding(%table: tensor<10x4xf32> {memopt.param}, %ids: tensor<2x3xi64>,
                            %g: tensor<8xf32> {memopt.param}, %b: tensor<8xf32> {memopt.param},
                            %t: tensor<2x3x8xf32>) -> tensor<f32> {
  %e = memopt.embedding %table, %ids : tensor<10x4xf32>, tensor<2x3xi64>
  %c = memopt.concat %e, %e {axis = -1 : i64} : tensor<2x3x4xf32>, tensor<2x3x4xf32>
  %n = memopt.layer_norm %c, %g, %b : tensor<2x3x8xf32>, tensor<8xf32>
  %l = memopt.mse_loss %n, %t : tensor<2x3x8xf32>
  return %l : tensor<f32>
}
