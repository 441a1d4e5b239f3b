// RUN: memopt-opt %s --allow-unregistered-dialect -split-input-file --memopt-autodiff --memopt-inplace --memopt-schedule --memopt-plan-memory | FileCheck %s
// RUN: memopt-opt %s --allow-unregistered-dialect -split-input-file --memopt-pipeline | FileCheck %s --check-prefix=PIPE
//
// Functions that are not memopt graphs, and declarations, are left alone by
// every pass; a float scalar returned by a function that computes no loss
// does not make it a training graph.

// CHECK-LABEL: func.func private @decl(tensor<4xf32>) -> tensor<f32>
// CHECK-LABEL: func.func @unrelated(
// CHECK-NEXT:    %[[C:.*]] = call @decl(%arg0)
// CHECK-NEXT:    %[[S:.*]] = "test.region"(%[[C]]) ({
// CHECK:         return %[[S]] : tensor<f32>
// CHECK-LABEL: func.func @passthrough(%arg0: tensor<f32>) -> tensor<f32>
// CHECK-NEXT:    return %arg0 : tensor<f32>
// CHECK-LABEL: func.func @train(
// CHECK:         memopt.sgd_update
// PIPE-LABEL: func.func private @decl(tensor<4xf32>) -> tensor<f32>
// PIPE-LABEL: func.func @unrelated(
// PIPE-NOT:     memopt.free
// PIPE:         return
// PIPE-LABEL: func.func @passthrough(%arg0: tensor<f32>) -> tensor<f32>
// PIPE-NEXT:    return %arg0
// PIPE-LABEL: func.func @train(
// PIPE-SAME:    memopt.arena_bytes
func.func private @decl(tensor<4xf32>) -> tensor<f32>
func.func @unrelated(%x: tensor<4xf32>) -> tensor<f32> {
  %c = func.call @decl(%x) : (tensor<4xf32>) -> tensor<f32>
  %s = "test.region"(%c) ({
    "test.yield"() : () -> ()
  }) : (tensor<f32>) -> tensor<f32>
  return %s : tensor<f32>
}
func.func @passthrough(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}
func.func @train(%w: tensor<3x4xf32> {memopt.param}, %x: tensor<2x4xf32>, %y: tensor<2x3xf32>) -> tensor<f32> {
  %h = memopt.linear %x, %w : tensor<2x4xf32>, tensor<3x4xf32>
  %l = memopt.mse_loss %h, %y : tensor<2x3xf32>
  return %l : tensor<f32>
}
