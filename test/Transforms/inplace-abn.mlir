// RUN: memopt-opt %s --memopt-autodiff --test-memopt-inplace-abn -split-input-file -verify-diagnostics | FileCheck %s

// InPlace-ABN (fuseInPlaceABN, through the test pass) on training steps
// built by --memopt-autodiff: batch_norm + leaky_relu/elu and their two
// backward ops become batch_norm_act + batch_norm_act_backward, in place
// over x when nothing reads x later; relu is refused with a remark; graphs
// without the backward ops are left alone.

// A conv -> BN -> leaky_relu block: the conv output is read only by the
// batch norm once the backward no longer needs it, so the fused op writes
// over it.
// CHECK-LABEL: func.func @leaky_relu(
// CHECK: %[[H:.*]] = memopt.conv2d
// CHECK-NEXT: %[[Y:.*]], %[[M:.*]], %[[V:.*]], %[[S:.*]] = memopt.batch_norm_act %[[H]], %arg2, %arg3, %arg4, %arg5 {activation = "leaky_relu", alpha = 1.000000e-01 : f64, memopt.inplace = 0 : i64}
// CHECK-NOT: memopt.batch_norm
// CHECK-NOT: memopt.leaky_relu
// CHECK: %[[DX:.*]], %[[DG:.*]], %[[DB:.*]] = memopt.batch_norm_act_backward %{{.*}}, %[[Y]], %arg2, %arg3, %[[S]] {activation = "leaky_relu", alpha = 1.000000e-01 : f64}
// CHECK-NOT: memopt.batch_norm_backward
// CHECK-NOT: memopt.leaky_relu_backward
// CHECK: memopt.conv2d_backward_weight %[[DX]], %arg0
// CHECK: memopt.sgd_update %arg2, %[[DG]]
// CHECK: memopt.sgd_update %arg3, %[[DB]]
// CHECK: return %{{.*}}, %[[M]], %[[V]],
func.func @leaky_relu(%x: tensor<4x3x8x8xf32>, %w: tensor<8x3x3x3xf32> {memopt.param},
                      %g: tensor<8xf32> {memopt.param}, %b: tensor<8xf32> {memopt.param},
                      %rm: tensor<8xf32> {memopt.state}, %rv: tensor<8xf32> {memopt.state},
                      %fc: tensor<10x8xf32> {memopt.param}, %labels: tensor<4xi64>)
    -> (tensor<f32>, tensor<8xf32>, tensor<8xf32>) {
  %h = memopt.conv2d %x, %w {padding = array<i64: 1, 1>} : tensor<4x3x8x8xf32>, tensor<8x3x3x3xf32>
  %y, %m, %v = memopt.batch_norm %h, %g, %b, %rm, %rv : tensor<4x8x8x8xf32>, tensor<8xf32>
  %a = memopt.leaky_relu %y {alpha = 0.1 : f64} : tensor<4x8x8x8xf32>
  %p = memopt.global_avg_pool2d %a : tensor<4x8x8x8xf32>
  %logits = memopt.linear %p, %fc : tensor<4x8xf32>, tensor<10x8xf32>
  %loss = memopt.cross_entropy %logits, %labels : tensor<4x10xf32>, tensor<4xi64>
  return %loss, %m, %v : tensor<f32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// ELU, with non-default epsilon and momentum carried over; the running
// statistics still update their state arguments.
// CHECK-LABEL: func.func @elu(
// CHECK-SAME: -> (tensor<f32>, tensor<6xf32> {memopt.updates = 4 : i64}, tensor<6xf32> {memopt.updates = 5 : i64},
// CHECK: %[[Y:.*]], %[[M:.*]], %[[V:.*]], %[[S:.*]] = memopt.batch_norm_act %{{.*}}, %arg2, %arg3, %arg4, %arg5 {activation = "elu", alpha = 5.000000e-01 : f64, epsilon = 1.000000e-03 : f64, memopt.inplace = 0 : i64, momentum = 2.000000e-01 : f64}
// CHECK: memopt.batch_norm_act_backward %{{.*}}, %[[Y]], %arg2, %arg3, %[[S]] {activation = "elu", alpha = 5.000000e-01 : f64}
// CHECK-NOT: memopt.elu_backward
// CHECK-NOT: memopt.batch_norm_backward
// CHECK: return %{{.*}}, %[[M]], %[[V]],
func.func @elu(%x: tensor<5x4xf32>, %w: tensor<6x4xf32> {memopt.param},
               %g: tensor<6xf32> {memopt.param}, %b: tensor<6xf32> {memopt.param},
               %rm: tensor<6xf32> {memopt.state}, %rv: tensor<6xf32> {memopt.state},
               %t: tensor<5x6xf32>) -> (tensor<f32>, tensor<6xf32>, tensor<6xf32>) {
  %h = memopt.linear %x, %w : tensor<5x4xf32>, tensor<6x4xf32>
  %y, %m, %v = memopt.batch_norm %h, %g, %b, %rm, %rv {epsilon = 1.0e-3 : f64, momentum = 0.2 : f64}
      : tensor<5x6xf32>, tensor<6xf32>
  %a = memopt.elu %y {alpha = 0.5 : f64} : tensor<5x6xf32>
  %loss = memopt.mse_loss %a, %t : tensor<5x6xf32>
  return %loss, %m, %v : tensor<f32>, tensor<6xf32>, tensor<6xf32>
}

// -----

// ReLU is not invertible: nothing is fused, and the batch norm says why.
// CHECK-LABEL: func.func @relu(
// CHECK: memopt.batch_norm %
// CHECK: memopt.relu %
// CHECK: memopt.relu_backward
// CHECK: memopt.batch_norm_backward
// CHECK-NOT: memopt.batch_norm_act
func.func @relu(%x: tensor<5x4xf32>, %w: tensor<6x4xf32> {memopt.param},
                %g: tensor<6xf32> {memopt.param}, %b: tensor<6xf32> {memopt.param},
                %rm: tensor<6xf32> {memopt.state}, %rv: tensor<6xf32> {memopt.state},
                %t: tensor<5x6xf32>) -> tensor<f32> {
  %h = memopt.linear %x, %w : tensor<5x4xf32>, tensor<6x4xf32>
  // expected-remark @+1 {{InPlace-ABN not applied: relu is not invertible: negative inputs map to 0 and cannot be recovered from its output, so the backward could not rebuild its input; InPlace-ABN needs leaky_relu with alpha > 0 or elu}}
  %y, %m, %v = memopt.batch_norm %h, %g, %b, %rm, %rv : tensor<5x6xf32>, tensor<6xf32>
  %a = memopt.relu %y : tensor<5x6xf32>
  %loss = memopt.mse_loss %a, %t : tensor<5x6xf32>
  return %loss : tensor<f32>
}

// -----

// leaky_relu with slope 0 is a ReLU.
// CHECK-LABEL: func.func @leaky_relu_slope_zero(
// CHECK: memopt.batch_norm %
// CHECK: memopt.batch_norm_backward
// CHECK-NOT: memopt.batch_norm_act
func.func @leaky_relu_slope_zero(%x: tensor<5x4xf32>, %w: tensor<6x4xf32> {memopt.param},
                                 %g: tensor<6xf32> {memopt.param}, %b: tensor<6xf32> {memopt.param},
                                 %rm: tensor<6xf32> {memopt.state}, %rv: tensor<6xf32> {memopt.state},
                                 %t: tensor<5x6xf32>) -> tensor<f32> {
  %h = memopt.linear %x, %w : tensor<5x4xf32>, tensor<6x4xf32>
  // expected-remark @+1 {{InPlace-ABN not applied: leaky_relu with alpha = 0 (a relu) is not invertible: negative inputs map to 0 and cannot be recovered from its output, so the backward could not rebuild its input; InPlace-ABN needs leaky_relu with alpha > 0 or elu}}
  %y, %m, %v = memopt.batch_norm %h, %g, %b, %rm, %rv : tensor<5x6xf32>, tensor<6xf32>
  %a = memopt.leaky_relu %y {alpha = 0.0 : f64} : tensor<5x6xf32>
  %loss = memopt.mse_loss %a, %t : tensor<5x6xf32>
  return %loss : tensor<f32>
}

// -----

// A residual block: x (%h) is read again by the add after the batch norm,
// so the fused op keeps its own buffer.
// CHECK-LABEL: func.func @residual(
// CHECK: %[[H:.*]] = memopt.linear
// CHECK: memopt.batch_norm_act %[[H]], %arg2, %arg3, %arg4, %arg5 {activation = "leaky_relu", alpha = 2.000000e-01 : f64}
// CHECK: memopt.add %{{.*}}, %[[H]]
// CHECK: memopt.batch_norm_act_backward
func.func @residual(%x: tensor<5x4xf32>, %w: tensor<6x4xf32> {memopt.param},
                    %g: tensor<6xf32> {memopt.param}, %b: tensor<6xf32> {memopt.param},
                    %rm: tensor<6xf32> {memopt.state}, %rv: tensor<6xf32> {memopt.state},
                    %t: tensor<5x6xf32>) -> tensor<f32> {
  %h = memopt.linear %x, %w : tensor<5x4xf32>, tensor<6x4xf32>
  %y, %m, %v = memopt.batch_norm %h, %g, %b, %rm, %rv : tensor<5x6xf32>, tensor<6xf32>
  %a = memopt.leaky_relu %y {alpha = 0.2 : f64} : tensor<5x6xf32>
  %s = memopt.add %a, %h : tensor<5x6xf32>, tensor<5x6xf32>
  %loss = memopt.mse_loss %s, %t : tensor<5x6xf32>
  return %loss : tensor<f32>
}

// -----

// A reader of x that runs before the batch norm does not prevent writing
// over x; a batch norm on a function argument is fused but never in place
// (arguments belong to the caller).
// CHECK-LABEL: func.func @earlier_reader_and_argument(
// CHECK: %[[H:.*]] = memopt.linear
// CHECK: memopt.sigmoid %[[H]]
// CHECK: memopt.batch_norm_act %[[H]], {{.*}} {activation = "leaky_relu", alpha = 1.000000e-02 : f64, memopt.inplace = 0 : i64}
// CHECK: memopt.batch_norm_act %arg0, {{.*}} {activation = "elu", alpha = 1.000000e+00 : f64} : tensor<5x4xf32>
func.func @earlier_reader_and_argument(%x: tensor<5x4xf32>, %w: tensor<6x4xf32> {memopt.param},
    %g: tensor<6xf32> {memopt.param}, %b: tensor<6xf32> {memopt.param},
    %g2: tensor<4xf32> {memopt.param}, %b2: tensor<4xf32> {memopt.param},
    %rm: tensor<6xf32> {memopt.state}, %rv: tensor<6xf32> {memopt.state},
    %rm2: tensor<4xf32> {memopt.state}, %rv2: tensor<4xf32> {memopt.state},
    %t: tensor<5x6xf32>, %t2: tensor<5x4xf32>) -> tensor<f32> {
  %h = memopt.linear %x, %w : tensor<5x4xf32>, tensor<6x4xf32>
  %q = memopt.sigmoid %h : tensor<5x6xf32>
  %y, %m, %v = memopt.batch_norm %h, %g, %b, %rm, %rv : tensor<5x6xf32>, tensor<6xf32>
  %a = memopt.leaky_relu %y : tensor<5x6xf32>
  %s = memopt.mul %a, %q : tensor<5x6xf32>, tensor<5x6xf32>
  %l1 = memopt.mse_loss %s, %t : tensor<5x6xf32>
  %y2, %m2, %v2 = memopt.batch_norm %x, %g2, %b2, %rm2, %rv2 : tensor<5x4xf32>, tensor<4xf32>
  %a2 = memopt.elu %y2 : tensor<5x4xf32>
  %l2 = memopt.mse_loss %a2, %t2 : tensor<5x4xf32>
  %loss = memopt.add %l1, %l2 : tensor<f32>, tensor<f32>
  return %loss : tensor<f32>
}

// -----

// The batch norm's own output is read by something else (returned): it
// must stay materialised, so nothing is fused (and nothing is said).
// CHECK-LABEL: func.func @output_also_returned(
// CHECK: memopt.batch_norm %
// CHECK: memopt.leaky_relu_backward
// CHECK: memopt.batch_norm_backward
// CHECK-NOT: memopt.batch_norm_act
func.func @output_also_returned(%x: tensor<5x4xf32>, %w: tensor<6x4xf32> {memopt.param},
                                %g: tensor<6xf32> {memopt.param}, %b: tensor<6xf32> {memopt.param},
                                %rm: tensor<6xf32> {memopt.state}, %rv: tensor<6xf32> {memopt.state},
                                %t: tensor<5x6xf32>) -> (tensor<f32>, tensor<5x6xf32>) {
  %h = memopt.linear %x, %w : tensor<5x4xf32>, tensor<6x4xf32>
  %y, %m, %v = memopt.batch_norm %h, %g, %b, %rm, %rv : tensor<5x6xf32>, tensor<6xf32>
  %a = memopt.leaky_relu %y : tensor<5x6xf32>
  %loss = memopt.mse_loss %a, %t : tensor<5x6xf32>
  return %loss, %y : tensor<f32>, tensor<5x6xf32>
}

// -----

// An inference graph (no scalar loss, so no backward ops): unchanged.
// CHECK-LABEL: func.func @inference(
// CHECK-NEXT: memopt.batch_norm %
// CHECK-NEXT: memopt.leaky_relu
// CHECK-NEXT: return
func.func @inference(%x: tensor<5x6xf32>, %g: tensor<6xf32>, %b: tensor<6xf32>,
                     %rm: tensor<6xf32>, %rv: tensor<6xf32>) -> tensor<5x6xf32> {
  %y, %m, %v = memopt.batch_norm %x, %g, %b, %rm, %rv : tensor<5x6xf32>, tensor<6xf32>
  %a = memopt.leaky_relu %y : tensor<5x6xf32>
  return %a : tensor<5x6xf32>
}

// -----

// A step whose activation backward reads the activation's output
// (`from_output`, as after an in-place activation) fuses the same way.
// CHECK-LABEL: func.func @backward_from_output(
// CHECK-NEXT: %[[Y:.*]], %{{.*}}, %{{.*}}, %[[S:.*]] = memopt.batch_norm_act %arg0, %arg1, %arg2, %arg3, %arg4 {activation = "leaky_relu", alpha = 3.000000e-01 : f64}
// CHECK-NEXT: %[[DX:.*]], %[[DG:.*]], %{{.*}} = memopt.batch_norm_act_backward %arg5, %[[Y]], %arg1, %arg2, %[[S]] {activation = "leaky_relu", alpha = 3.000000e-01 : f64}
// CHECK-NEXT: return %[[Y]], %[[DX]], %[[DG]]
func.func @backward_from_output(%x: tensor<4x3xf32>, %g: tensor<3xf32>, %b: tensor<3xf32>,
                                %rm: tensor<3xf32>, %rv: tensor<3xf32>, %da: tensor<4x3xf32>)
    -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<3xf32>) {
  %y, %m, %v = memopt.batch_norm %x, %g, %b, %rm, %rv : tensor<4x3xf32>, tensor<3xf32>
  %a = memopt.leaky_relu %y {alpha = 0.3 : f64} : tensor<4x3xf32>
  %dz = memopt.leaky_relu_backward %da, %a {alpha = 0.3 : f64, from_output = true}
      : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %dx, %dg, %db = memopt.batch_norm_backward %dz, %x, %g
      : (tensor<4x3xf32>, tensor<4x3xf32>, tensor<3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>)
  return %a, %dx, %dg : tensor<4x3xf32>, tensor<4x3xf32>, tensor<3xf32>
}
