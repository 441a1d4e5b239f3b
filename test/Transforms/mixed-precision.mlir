// RUN: memopt-opt %s -split-input-file --memopt-mixed-precision | FileCheck %s
// RUN: memopt-opt %s -split-input-file --memopt-mixed-precision=precision=bf16 | FileCheck %s --check-prefix=BF16

// An MLP: the linear layers compute in f16 on f16 copies of the f32 master
// weights and of the input, each made just before its first user; ReLU
// follows; the loss is f32. One cast per value.
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: memopt.loss_scale = {backoff_factor = 5.000000e-01 : f64, dynamic = true, growth_factor = 2.000000e+00 : f64, growth_interval = 2000 : i64, init_scale = 6.553600e+04 : f64}
// CHECK-NEXT: %[[X:.*]] = memopt.cast %arg3 : tensor<2x8xf32> to tensor<2x8xf16>
// CHECK-NEXT: %[[W1:.*]] = memopt.cast %arg0 : tensor<16x8xf32> to tensor<16x8xf16>
// CHECK-NEXT: %[[B1:.*]] = memopt.cast %arg1 : tensor<16xf32> to tensor<16xf16>
// CHECK-NEXT: %[[H:.*]] = memopt.linear %[[X]], %[[W1]], %[[B1]] : tensor<2x8xf16>, tensor<16x8xf16>, tensor<16xf16>
// CHECK-NEXT: %[[R:.*]] = memopt.relu %[[H]] : tensor<2x16xf16>
// CHECK-NEXT: %[[W2:.*]] = memopt.cast %arg2 : tensor<4x16xf32> to tensor<4x16xf16>
// CHECK-NEXT: %[[O:.*]] = memopt.linear %[[R]], %[[W2]] : tensor<2x16xf16>, tensor<4x16xf16>
// CHECK: %[[O32:.*]] = memopt.cast %[[O]] : tensor<2x4xf16> to tensor<2x4xf32>
// CHECK: %[[L:.*]] = memopt.cross_entropy %[[O32]], %arg4 : tensor<2x4xf32>
// CHECK: return %[[L]] : tensor<f32>
// CHECK-NOT: memopt.cast
// BF16-LABEL: func.func @mlp
// BF16-NOT: memopt.loss_scale
// BF16: memopt.linear %{{.*}} : tensor<2x8xbf16>, tensor<16x8xbf16>, tensor<16xbf16>
func.func @mlp(%w1: tensor<16x8xf32> {memopt.param}, %b1: tensor<16xf32> {memopt.param},
               %w2: tensor<4x16xf32> {memopt.param}, %x: tensor<2x8xf32>,
               %y: tensor<2xi64>) -> tensor<f32> {
  %h = memopt.linear %x, %w1, %b1 : tensor<2x8xf32>, tensor<16x8xf32>, tensor<16xf32>
  %r = memopt.relu %h : tensor<2x16xf32>
  %o = memopt.linear %r, %w2 : tensor<2x16xf32>, tensor<4x16xf32>
  %l = memopt.cross_entropy %o, %y : tensor<2x4xf32>, tensor<2xi64>
  return %l : tensor<f32>
}

// -----

// Batch norm follows its input with only x: gamma, beta and the running
// statistics stay f32, and so do the updated statistics the graph returns.
// The reduction (global average pooling) computes in f32.
// CHECK-LABEL: func.func @conv_bn
// CHECK: %[[C:.*]] = memopt.conv2d %{{.*}}, %{{.*}} {padding = array<i64: 1, 1>} : tensor<2x3x8x8xf16>, tensor<4x3x3x3xf16>
// CHECK: %[[Y:.*]], %[[M:.*]], %[[V:.*]] = memopt.batch_norm %[[C]], %arg1, %arg2, %arg3, %arg4 : tensor<2x4x8x8xf16>, tensor<4xf32>
// CHECK: %[[R:.*]] = memopt.relu %[[Y]] : tensor<2x4x8x8xf16>
// CHECK: %[[R32:.*]] = memopt.cast %[[R]] : tensor<2x4x8x8xf16> to tensor<2x4x8x8xf32>
// CHECK: memopt.global_avg_pool2d %[[R32]] : tensor<2x4x8x8xf32>
// CHECK: return %{{.*}}, %[[M]], %[[V]] : tensor<f32>, tensor<4xf32>, tensor<4xf32>
func.func @conv_bn(%w: tensor<4x3x3x3xf32> {memopt.param}, %g: tensor<4xf32> {memopt.param},
                   %b: tensor<4xf32> {memopt.param}, %rm: tensor<4xf32> {memopt.state},
                   %rv: tensor<4xf32> {memopt.state}, %x: tensor<2x3x8x8xf32>,
                   %t: tensor<2x4xf32>) -> (tensor<f32>, tensor<4xf32>, tensor<4xf32>) {
  %c = memopt.conv2d %x, %w {padding = array<i64: 1, 1>} : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>
  %y, %m, %v = memopt.batch_norm %c, %g, %b, %rm, %rv : tensor<2x4x8x8xf32>, tensor<4xf32>
  %r = memopt.relu %y : tensor<2x4x8x8xf32>
  %p = memopt.global_avg_pool2d %r : tensor<2x4x8x8xf32>
  %l = memopt.mse_loss %p, %t : tensor<2x4xf32>
  return %l, %m, %v : tensor<f32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Attention-like: the residual add of an f32 stream and an f16 product
// promotes to f32; softmax and layer norm compute in f32, and the product
// that reads the softmax casts it back to f16.
// CHECK-LABEL: func.func @block
// CHECK: %[[Q:.*]] = memopt.linear %{{.*}} : tensor<2x4x8xf16>, tensor<8x8xf16>
// CHECK: %[[S:.*]] = memopt.matmul %[[Q]], %[[Q]] {transpose_b = true} : tensor<2x4x8xf16>, tensor<2x4x8xf16>
// CHECK: %[[S32:.*]] = memopt.cast %[[S]] : tensor<2x4x4xf16> to tensor<2x4x4xf32>
// CHECK: %[[P:.*]] = memopt.softmax %[[S32]] {causal = true} : tensor<2x4x4xf32>
// CHECK: %[[P16:.*]] = memopt.cast %[[P]] : tensor<2x4x4xf32> to tensor<2x4x4xf16>
// CHECK: %[[A:.*]] = memopt.matmul %[[P16]], %[[Q]] : tensor<2x4x4xf16>, tensor<2x4x8xf16>
// CHECK: %[[A32:.*]] = memopt.cast %[[A]] : tensor<2x4x8xf16> to tensor<2x4x8xf32>
// CHECK: %[[SUM:.*]] = memopt.add %arg2, %[[A32]] : tensor<2x4x8xf32>, tensor<2x4x8xf32>
// CHECK: memopt.layer_norm %[[SUM]], %arg3, %arg4 : tensor<2x4x8xf32>, tensor<8xf32>
func.func @block(%wq: tensor<8x8xf32> {memopt.param}, %unused: tensor<8xf32> {memopt.param},
                 %x: tensor<2x4x8xf32>, %g: tensor<8xf32> {memopt.param},
                 %b: tensor<8xf32> {memopt.param}, %t: tensor<2x4x8xf32>) -> tensor<f32> {
  %q = memopt.linear %x, %wq : tensor<2x4x8xf32>, tensor<8x8xf32>
  %s = memopt.matmul %q, %q {transpose_b = true} : tensor<2x4x8xf32>, tensor<2x4x8xf32>
  %p = memopt.softmax %s {causal = true} : tensor<2x4x4xf32>
  %a = memopt.matmul %p, %q : tensor<2x4x4xf32>, tensor<2x4x8xf32>
  %sum = memopt.add %x, %a : tensor<2x4x8xf32>, tensor<2x4x8xf32>
  %n = memopt.layer_norm %sum, %g, %b : tensor<2x4x8xf32>, tensor<8xf32>
  %l = memopt.mse_loss %n, %t : tensor<2x4x8xf32>
  return %l : tensor<f32>
}

// -----

// An inference graph keeps its signature (the result is cast back to f32)
// and gets no loss scaling; a cast of a constant folds to a constant, and a
// reshape follows its operand.
// CHECK-LABEL: func.func @inference
// CHECK-NOT: memopt.loss_scale
// CHECK: %[[C:.*]] = arith.constant dense<5.000000e-01> : tensor<4xf16>
// CHECK: %[[H:.*]] = memopt.linear %{{.*}}, %{{.*}}, %[[C]] : tensor<2x8xf16>, tensor<4x8xf16>, tensor<4xf16>
// CHECK: %[[R:.*]] = memopt.reshape %[[H]] : tensor<2x4xf16> -> tensor<8xf16>
// CHECK: %[[O:.*]] = memopt.cast %[[R]] : tensor<8xf16> to tensor<8xf32>
// CHECK: return %[[O]] : tensor<8xf32>
func.func @inference(%w: tensor<4x8xf32>, %x: tensor<2x8xf32>) -> tensor<8xf32> {
  %c = arith.constant dense<0.5> : tensor<4xf32>
  %h = memopt.linear %x, %w, %c : tensor<2x8xf32>, tensor<4x8xf32>, tensor<4xf32>
  %r = memopt.reshape %h : tensor<2x4xf32> -> tensor<8xf32>
  return %r : tensor<8xf32>
}
