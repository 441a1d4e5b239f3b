// RUN: memopt-opt %s --memopt-autodiff --memopt-inplace | FileCheck %s
// RUN: memopt-opt %s --memopt-autodiff --memopt-inplace --memopt-report=file=- -o /dev/null | FileCheck %s --check-prefix=REPORT
// RUN: memopt-opt %s --memopt-autodiff --memopt-inplace --memopt-schedule --memopt-plan-memory -o /dev/null

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
