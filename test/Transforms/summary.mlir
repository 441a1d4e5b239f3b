// RUN: memopt-opt %s -split-input-file --memopt-summary -o /dev/null | FileCheck %s
// The pass is analysis only: the IR comes out unchanged.
// RUN: memopt-opt %s --memopt-summary=file=%t.txt | FileCheck %s --check-prefix=IR
// RUN: FileCheck %s --input-file=%t.txt
// An unwritable file is a located error, not a crash.
// RUN: not memopt-opt %s --memopt-summary=file=%t.missing/dir/x.txt 2>&1 | FileCheck %s --check-prefix=ERR

// CHECK-LABEL: func @train
// CHECK-NEXT:    parameters: 24 elements in 2 tensors (80 bytes)
// CHECK-NEXT:    state: 8 elements in 2 tensors (32 bytes)
// CHECK-NEXT:    data: 2 arguments (64 bytes)
// CHECK-NEXT:    kind: training (loss + 2 more results)
// CHECK-NEXT:    ops: 5
// CHECK-NEXT:      arith.constant: 1
// CHECK-NEXT:      memopt.batch_norm: 1
// CHECK-NEXT:      memopt.linear: 1
// CHECK-NEXT:      memopt.mse_loss: 1
// CHECK-NEXT:      memopt.relu: 1
// IR-LABEL: func.func @train
// IR: memopt.linear
// ERR: error: memopt-summary: cannot open
func.func @train(%w: tensor<4x4xf32> {memopt.param}, %b: tensor<4x2xf16> {memopt.param},
                 %mean: tensor<4xf32> {memopt.state}, %var: tensor<4xf32> {memopt.state},
                 %x: tensor<2x4xf32>, %t: tensor<2x4xf32>)
    -> (tensor<f32>, tensor<4xf32>, tensor<4xf32>) {
  %h = memopt.linear %x, %w : tensor<2x4xf32>, tensor<4x4xf32>
  %g = arith.constant dense<1.0> : tensor<4xf32>
  %n, %m, %v = memopt.batch_norm %h, %g, %g, %mean, %var : tensor<2x4xf32>, tensor<4xf32>
  %r = memopt.relu %n : tensor<2x4xf32>
  %l = memopt.mse_loss %r, %t : tensor<2x4xf32>
  return %l, %m, %v : tensor<f32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A function without a scalar loss is an inference graph.
// CHECK-LABEL: func @infer
// CHECK-NEXT:    parameters: 0 elements in 0 tensors (0 bytes)
// CHECK-NEXT:    state: 0 elements in 0 tensors (0 bytes)
// CHECK-NEXT:    data: 1 arguments (64 bytes)
// CHECK-NEXT:    kind: inference (1 results)
// CHECK-NEXT:    ops: 1
func.func @infer(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %y = memopt.softmax %x : tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// After autodiff the optimizer state has its own line.
// CHECK-LABEL: func @momentum
// CHECK-NEXT:    parameters: 8 elements in 1 tensors (32 bytes)
// CHECK-NEXT:    state: 0 elements in 0 tensors (0 bytes)
// CHECK-NEXT:    optimizer state: 8 elements in 1 tensors (32 bytes)
// CHECK-NEXT:    data: 2 arguments (64 bytes)
// CHECK-NEXT:    kind: training (loss + 2 more results)
func.func @momentum(%w: tensor<2x4xf32> {memopt.param}, %x: tensor<2x4xf32>, %t: tensor<2x4xf32>,
                    %b: tensor<2x4xf32> {memopt.optimizer_state})
    -> (tensor<f32>, tensor<2x4xf32> {memopt.updates = 0 : i64}, tensor<2x4xf32> {memopt.updates = 3 : i64}) {
  %y = memopt.mul %x, %w : tensor<2x4xf32>, tensor<2x4xf32>
  %l = memopt.mse_loss %y, %t : tensor<2x4xf32>
  return %l, %w, %b : tensor<f32>, tensor<2x4xf32>, tensor<2x4xf32>
}
