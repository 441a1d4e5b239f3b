// RUN: memopt-opt %s --inline | FileCheck %s
// RUN: memopt-opt %s --inline --symbol-dce --memopt-autodiff | FileCheck %s --check-prefix=TRAIN
//
// memopt ops inline (DialectInlinerInterface): a model split into functions
// becomes one graph, which the passes then train (autodiff refuses a
// called function, so inline first).

func.func private @block(%x: tensor<2x4xf32>, %w: tensor<4x4xf32>) -> tensor<2x4xf32> {
  %h = memopt.linear %x, %w : tensor<2x4xf32>, tensor<4x4xf32>
  %r = memopt.relu %h : tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @model(
// CHECK-NOT:     call
// CHECK:         memopt.linear
// CHECK:         memopt.relu
// CHECK:         memopt.linear
// CHECK:         memopt.relu
// CHECK:         memopt.mse_loss
// TRAIN-NOT:     func.func private @block
// TRAIN-LABEL:   func.func @model(
// TRAIN:         memopt.sgd_update
func.func @model(%w1: tensor<4x4xf32> {memopt.param}, %w2: tensor<4x4xf32> {memopt.param},
                 %x: tensor<2x4xf32>, %y: tensor<2x4xf32>) -> tensor<f32> {
  %a = func.call @block(%x, %w1) : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %b = func.call @block(%a, %w2) : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %l = memopt.mse_loss %b, %y : tensor<2x4xf32>
  return %l : tensor<f32>
}
