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
