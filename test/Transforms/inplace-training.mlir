// RUN: memopt-opt %s -split-input-file --memopt-autodiff --memopt-inplace | FileCheck %s
// RUN: memopt-opt %s -split-input-file --memopt-autodiff --memopt-inplace --memopt-report=file=- -o /dev/null | FileCheck %s --check-prefix=REPORT
// RUN: memopt-opt %s -split-input-file --memopt-autodiff --memopt-inplace --memopt-schedule --memopt-plan-memory -o /dev/null

// In a training step the backward pass reads forward values too:
// * the ReLU after batch norm writes over the BN output (BN's backward reads
//   its input, ReLU's backward its output);
// * GELU's backward reads GELU's input, so GELU may not overwrite it;
// * the residual add writes over the branch, not over the block input the
//   ReLU backward still reads;
// * backward ops overwrite gradients (or saved values) dead after them; the
//   GELU backward writes over %h2, since the upstream gradient is read again.

// CHECK-LABEL: func.func @block
// CHECK:      %[[N:[a-z_0-9]+]], %{{.*}}, %{{.*}} = memopt.batch_norm
// CHECK-NEXT: %[[R:.*]] = memopt.relu %[[N]] {memopt.inplace = 0 : i64}
// CHECK-NEXT: %[[H2:.*]] = memopt.linear %[[R]]
// CHECK-NEXT: %[[G:.*]] = memopt.gelu %[[H2]] : tensor<4x8xf32>
// CHECK-NEXT: %[[S:.*]] = memopt.add %[[G]], %[[R]] {memopt.inplace = 0 : i64}
// CHECK:      memopt.gelu_backward %{{.*}}, %[[H2]] {memopt.inplace = 1 : i64}
// CHECK:      memopt.relu_backward %{{.*}}, %[[R]] {memopt.inplace = 0 : i64}
// The parameters are updated in place, as --memopt-autodiff marks them.
// CHECK:      memopt.sgd_update %arg0, %{{.*}} {lr = {{.*}}, memopt.inplace = 0 : i64}

// REPORT:      "op": "memopt.relu",
// REPORT-NEXT: "loc": "{{.*}}inplace-training.mlir:{{[0-9]+}}:8",
// REPORT-NEXT: "live_bytes": {{[0-9]+}},
// REPORT-NEXT: "inplace_operand": 0
func.func @block(%w1: tensor<8x8xf32> {memopt.param}, %w2: tensor<8x8xf32> {memopt.param},
                 %g: tensor<8xf32> {memopt.param}, %b: tensor<8xf32> {memopt.param},
                 %rm: tensor<8xf32> {memopt.state}, %rv: tensor<8xf32> {memopt.state},
                 %x: tensor<4x8xf32>, %t: tensor<4xi64>) -> (tensor<f32>, tensor<8xf32>, tensor<8xf32>) {
  %h = memopt.linear %x, %w1 : tensor<4x8xf32>, tensor<8x8xf32>
  %n, %m, %v = memopt.batch_norm %h, %g, %b, %rm, %rv : tensor<4x8xf32>, tensor<8xf32>
  %r = memopt.relu %n : tensor<4x8xf32>
  %h2 = memopt.linear %r, %w2 : tensor<4x8xf32>, tensor<8x8xf32>
  %a = memopt.gelu %h2 : tensor<4x8xf32>
  %s = memopt.add %a, %r : tensor<4x8xf32>, tensor<4x8xf32>
  %loss = memopt.cross_entropy %s, %t : tensor<4x8xf32>, tensor<4xi64>
  return %loss, %m, %v : tensor<f32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// Leaky ReLU with a positive slope keeps its output's sign, so its backward
// reads the output (from_output) and the op runs in place over its input.
// With slope 0 the sign is lost: the backward reads the input, which then
// cannot be overwritten.
// CHECK-LABEL: func.func @leaky
// CHECK:      %[[H:.*]] = memopt.linear
// CHECK-NEXT: %[[A:.*]] = memopt.leaky_relu %[[H]] {alpha = 1.000000e-01 : f64, memopt.inplace = 0 : i64}
// CHECK-NEXT: %[[H2:.*]] = memopt.linear %[[A]]
// CHECK-NEXT: %[[Z:.*]] = memopt.leaky_relu %[[H2]] {alpha = 0.000000e+00 : f64} :
// CHECK:      memopt.leaky_relu_backward %{{.*}}, %[[H2]] {alpha = 0.000000e+00 : f64,
// CHECK:      memopt.leaky_relu_backward %{{.*}}, %[[A]] {alpha = 1.000000e-01 : f64, from_output = true
func.func @leaky(%w1: tensor<8x8xf32> {memopt.param}, %w2: tensor<8x8xf32> {memopt.param},
                 %x: tensor<4x8xf32>, %t: tensor<4xi64>) -> tensor<f32> {
  %h = memopt.linear %x, %w1 : tensor<4x8xf32>, tensor<8x8xf32>
  %a = memopt.leaky_relu %h {alpha = 0.1 : f64} : tensor<4x8xf32>
  %h2 = memopt.linear %a, %w2 : tensor<4x8xf32>, tensor<8x8xf32>
  %z = memopt.leaky_relu %h2 {alpha = 0.0 : f64} : tensor<4x8xf32>
  %loss = memopt.cross_entropy %z, %t : tensor<4x8xf32>, tensor<4xi64>
  return %loss : tensor<f32>
}

// -----

// sub's backward reads nothing; div's reads both operands (PyTorch's rule).
// Data normalised before the first parameter needs no gradient, so nothing
// reads %n afterwards and the div overwrites it (the sub may not: %x is an
// argument). In the trained part the div overwrites neither operand (its
// backward reads both), and the sub writes over the quotient, which no
// backward op reads.
// CHECK-LABEL: func.func @sub_div
// CHECK:      %[[N:.*]] = memopt.sub %arg1, %arg2 : tensor<4x8xf32>, tensor<8xf32>
// CHECK-NEXT: %[[Z:.*]] = memopt.div %[[N]], %arg3 {memopt.inplace = 0 : i64}
// CHECK-NEXT: %[[H:.*]] = memopt.linear %[[Z]], %arg0
// CHECK-NEXT: %[[S:.*]] = memopt.sigmoid %[[H]] :
// CHECK-NEXT: %[[Q:.*]] = memopt.div %[[H]], %[[S]] :
// CHECK-NEXT: %{{.*}} = memopt.sub %[[Q]], %[[Z]] {memopt.inplace = 0 : i64}
// CHECK:      memopt.div %{{.*}}, %[[S]]
// CHECK:      memopt.mul %{{.*}}, %[[H]]
func.func @sub_div(%w: tensor<8x8xf32> {memopt.param}, %x: tensor<4x8xf32>,
                   %mu: tensor<8xf32>, %sd: tensor<8xf32>, %t: tensor<4xi64>) -> tensor<f32> {
  %n = memopt.sub %x, %mu : tensor<4x8xf32>, tensor<8xf32>
  %z = memopt.div %n, %sd : tensor<4x8xf32>, tensor<8xf32>
  %h = memopt.linear %z, %w : tensor<4x8xf32>, tensor<8x8xf32>
  %s = memopt.sigmoid %h : tensor<4x8xf32>
  %q = memopt.div %h, %s : tensor<4x8xf32>, tensor<4x8xf32>
  %o = memopt.sub %q, %z : tensor<4x8xf32>, tensor<4x8xf32>
  %loss = memopt.cross_entropy %o, %t : tensor<4x8xf32>, tensor<4xi64>
  return %loss : tensor<f32>
}
