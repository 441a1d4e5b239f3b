// RUN: memopt-opt %s --memopt-eval-mode | FileCheck %s

// Batch norm uses the running statistics and returns them unchanged; dropout
// is gone.
// CHECK-LABEL: func.func @f
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x4x4xf32>, %[[G:.*]]: tensor<3xf32> {memopt.param}, %[[B:.*]]: tensor<3xf32> {memopt.param}, %[[M:.*]]: tensor<3xf32> {memopt.state}, %[[V:.*]]: tensor<3xf32> {memopt.state}
// CHECK:         %[[N:.*]] = memopt.batch_norm_inference %[[X]], %[[G]], %[[B]], %[[M]], %[[V]] {epsilon = 1.000000e-03 : f64} : tensor<2x3x4x4xf32>, tensor<3xf32>
// CHECK-NOT:     memopt.dropout
// CHECK:         %[[P:.*]] = memopt.global_avg_pool2d %[[N]]
// CHECK:         return %{{.*}}, %[[M]], %[[V]]
func.func @f(%x: tensor<2x3x4x4xf32>, %g: tensor<3xf32> {memopt.param}, %b: tensor<3xf32> {memopt.param},
             %m: tensor<3xf32> {memopt.state}, %v: tensor<3xf32> {memopt.state}, %y: tensor<2xi64>)
    -> (tensor<f32>, tensor<3xf32>, tensor<3xf32>) {
  %n, %nm, %nv = memopt.batch_norm %x, %g, %b, %m, %v {epsilon = 1.0e-3 : f64} : tensor<2x3x4x4xf32>, tensor<3xf32>
  %d = memopt.dropout %n {p = 0.2 : f64} : tensor<2x3x4x4xf32>
  %p = memopt.global_avg_pool2d %d : tensor<2x3x4x4xf32>
  %l = memopt.cross_entropy %p, %y : tensor<2x3xf32>, tensor<2xi64>
  return %l, %nm, %nv : tensor<f32>, tensor<3xf32>, tensor<3xf32>
}

// A fused batch_norm_act (InPlace-ABN) becomes batch norm on the running
// statistics followed by its activation, with the same alpha.
// CHECK-LABEL: func.func @fused
// CHECK-SAME:    (%[[X:.*]]: tensor<4x3xf32>, %[[G:.*]]: tensor<3xf32> {memopt.param}, %[[B:.*]]: tensor<3xf32> {memopt.param}, %[[M:.*]]: tensor<3xf32> {memopt.state}, %[[V:.*]]: tensor<3xf32> {memopt.state}
// CHECK-NEXT:    %[[N:.*]] = memopt.batch_norm_inference %[[X]], %[[G]], %[[B]], %[[M]], %[[V]] : tensor<4x3xf32>, tensor<3xf32>
// CHECK-NEXT:    %[[A:.*]] = memopt.leaky_relu %[[N]] {alpha = 2.000000e-01 : f64} : tensor<4x3xf32>
// CHECK-NEXT:    %[[N2:.*]] = memopt.batch_norm_inference %[[A]], %[[G]], %[[B]], %[[M]], %[[V]] {epsilon = 1.000000e-03 : f64} : tensor<4x3xf32>, tensor<3xf32>
// CHECK-NEXT:    %[[E:.*]] = memopt.elu %[[N2]] {alpha = 5.000000e-01 : f64} : tensor<4x3xf32>
// CHECK-NEXT:    return %[[E]], %[[M]], %[[V]]
func.func @fused(%x: tensor<4x3xf32>, %g: tensor<3xf32> {memopt.param}, %b: tensor<3xf32> {memopt.param},
                 %m: tensor<3xf32> {memopt.state}, %v: tensor<3xf32> {memopt.state})
    -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %a:4 = memopt.batch_norm_act %x, %g, %b, %m, %v {activation = "leaky_relu", alpha = 0.2 : f64}
      : tensor<4x3xf32>, tensor<3xf32>
  %e:4 = memopt.batch_norm_act %a#0, %g, %b, %m, %v {activation = "elu", alpha = 0.5 : f64, epsilon = 1.0e-3 : f64}
      : tensor<4x3xf32>, tensor<3xf32>
  return %e#0, %e#1, %e#2 : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>
}
