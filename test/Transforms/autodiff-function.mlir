// RUN: memopt-opt %s --memopt-autodiff=function=second | FileCheck %s
// RUN: not memopt-opt %s --memopt-autodiff=function=missing 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not memopt-opt %s --memopt-autodiff=function=inference 2>&1 | FileCheck %s --check-prefix=NOTTRAIN
//
// function= picks the training graph to differentiate; the others stay as
// they are.

// CHECK-LABEL: func.func @first(
// CHECK-NOT:     memopt.sgd_update
// CHECK:         return
// CHECK-LABEL: func.func @second(
// CHECK:         memopt.sgd_update
// CHECK-LABEL: func.func @inference(
// MISSING: error: memopt-autodiff: no function named 'missing'
// NOTTRAIN: error: 'func.func' op is not a training graph (memopt ops ending in a 0-d float loss computed by a memopt op), as function=inference requires
func.func @first(%w: tensor<3x4xf32> {memopt.param}, %x: tensor<2x4xf32>, %y: tensor<2x3xf32>) -> tensor<f32> {
  %h = memopt.linear %x, %w : tensor<2x4xf32>, tensor<3x4xf32>
  %l = memopt.mse_loss %h, %y : tensor<2x3xf32>
  return %l : tensor<f32>
}
func.func @second(%w: tensor<3x4xf32> {memopt.param}, %x: tensor<2x4xf32>, %y: tensor<2x3xf32>) -> tensor<f32> {
  %h = memopt.linear %x, %w : tensor<2x4xf32>, tensor<3x4xf32>
  %l = memopt.mse_loss %h, %y : tensor<2x3xf32>
  return %l : tensor<f32>
}
func.func @inference(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %r = memopt.relu %x : tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}
