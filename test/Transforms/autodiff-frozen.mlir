// RUN: memopt-opt %s --memopt-autodiff=optimizer=adam -split-input-file -verify-diagnostics | FileCheck %s

// Frozen parameters (`memopt.frozen` beside `memopt.param`): no gradient,
// no optimizer state, no update; and what only their weight gradients
// would read is not kept.

// The first layer frozen: no gradient flows into it, so neither its weight
// gradient nor the relu's backward exists, and h (read only by the second
// layer's weight gradient and the frozen layer's backward) is read by one
// backward op. Adam state exists for %w2 alone.
// CHECK-LABEL: func.func @first_layer_frozen
// CHECK-SAME:    (%[[W1:.*]]: tensor<8x4xf32> {memopt.frozen, memopt.param}, %[[W2:.*]]: tensor<2x8xf32> {memopt.param}, %{{.*}}: tensor<3x4xf32>, %{{.*}}: tensor<3x2xf32>, %{{.*}}: tensor<f32> {memopt.optimizer_state}, %[[M:.*]]: tensor<2x8xf32> {memopt.optimizer_state}, %[[V:.*]]: tensor<2x8xf32> {memopt.optimizer_state})
// CHECK-SAME:    -> (tensor<f32>, tensor<2x8xf32> {memopt.updates = 1 : i64}, tensor<2x8xf32> {memopt.updates = 5 : i64}, tensor<2x8xf32> {memopt.updates = 6 : i64}, tensor<f32> {memopt.updates = 4 : i64})
// CHECK-NOT:     memopt.relu_backward
// CHECK:         memopt.adam_update %[[W2]]
// CHECK-NOT:     memopt.adam_update
func.func @first_layer_frozen(%w1: tensor<8x4xf32> {memopt.param, memopt.frozen},
                              %w2: tensor<2x8xf32> {memopt.param},
                              %x: tensor<3x4xf32>, %t: tensor<3x2xf32>) -> tensor<f32> {
  %a = memopt.linear %x, %w1 : tensor<3x4xf32>, tensor<8x4xf32>
  %h = memopt.relu %a : tensor<3x8xf32>
  %y = memopt.linear %h, %w2 : tensor<3x8xf32>, tensor<2x8xf32>
  %l = memopt.mse_loss %y, %t : tensor<3x2xf32>
  return %l : tensor<f32>
}

// -----

// expected-error @+1 {{'func.func' op has every 'memopt.param' argument frozen ('memopt.frozen'): nothing to train}}
func.func @all_frozen(%w: tensor<2x4xf32> {memopt.param, memopt.frozen},
                      %x: tensor<3x4xf32>, %t: tensor<3x2xf32>) -> tensor<f32> {
  %y = memopt.linear %x, %w : tensor<3x4xf32>, tensor<2x4xf32>
  %l = memopt.mse_loss %y, %t : tensor<3x2xf32>
  return %l : tensor<f32>
}

// -----

// expected-error @+1 {{'memopt.frozen' on argument #0 needs 'memopt.param': a frozen argument is a parameter the step does not train}}
func.func @frozen_data(%x: tensor<3x4xf32> {memopt.frozen}, %w: tensor<2x4xf32> {memopt.param},
                       %t: tensor<3x2xf32>) -> tensor<f32> {
  %y = memopt.linear %x, %w : tensor<3x4xf32>, tensor<2x4xf32>
  %l = memopt.mse_loss %y, %t : tensor<3x2xf32>
  return %l : tensor<f32>
}
