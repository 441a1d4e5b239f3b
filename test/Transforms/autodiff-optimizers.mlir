// RUN: memopt-opt %s --memopt-autodiff='optimizer=momentum lr=0.1 momentum=0.8 weight-decay=0.01 nesterov=true' | FileCheck %s --check-prefix=MOMENTUM
// RUN: memopt-opt %s --memopt-autodiff=optimizer=adam | FileCheck %s --check-prefix=ADAM
// RUN: memopt-opt %s --memopt-autodiff=optimizer=adamw | FileCheck %s --check-prefix=ADAMW
// RUN: memopt-opt %s "--memopt-autodiff=optimizer=adamw weight-decay=0" | FileCheck %s --check-prefix=ADAMW0
// RUN: not memopt-opt %s "--memopt-autodiff=optimizer=adamw weight-decay=x" 2>&1 | FileCheck %s --check-prefix=BADWD

// AdamW: Adam's state and step, the decay decoupled, torch.optim.AdamW's
// defaults (lr 0.001, weight decay 0.01) unless given.
// ADAMW-LABEL: func.func @f
// ADAMW:         memopt.adam_update %{{.*}} {decoupled_weight_decay = true, lr = 1.000000e-03 : f64, memopt.inplace = 0 : i64, weight_decay = 1.000000e-02 : f64}
// ADAMW0-LABEL: func.func @f
// ADAMW0:        memopt.adam_update %{{.*}} {decoupled_weight_decay = true, lr = 1.000000e-03 : f64, memopt.inplace = 0 : i64}
// BADWD: error: memopt-autodiff: weight-decay must be a finite number >= 0, got 'x'

// MOMENTUM-LABEL: func.func @f
// MOMENTUM-SAME:    (%[[W:.*]]: tensor<2x3xf32> {memopt.param}, %{{.*}}: tensor<4x3xf32>, %{{.*}}: tensor<4x2xf32>, %[[BUF:.*]]: tensor<2x3xf32> {memopt.optimizer_state})
// MOMENTUM-SAME:    -> (tensor<f32>, tensor<2x3xf32> {memopt.updates = 0 : i64}, tensor<2x3xf32> {memopt.updates = 3 : i64})
// MOMENTUM:         memopt.sgd_momentum_update %[[W]], %{{.*}}, %[[BUF]] {lr = 1.000000e-01 : f64, memopt.inplace = 0 : i64, momentum = 8.000000e-01 : f64, nesterov = true, weight_decay = 1.000000e-02 : f64}

// ADAM-LABEL: func.func @f
// ADAM-SAME:    (%[[W:.*]]: tensor<2x3xf32> {memopt.param}, %{{.*}}: tensor<4x3xf32>, %{{.*}}: tensor<4x2xf32>, %[[STEP:.*]]: tensor<f32> {memopt.optimizer_state}, %[[M:.*]]: tensor<2x3xf32> {memopt.optimizer_state}, %[[V:.*]]: tensor<2x3xf32> {memopt.optimizer_state})
// ADAM-SAME:    -> (tensor<f32>, tensor<2x3xf32> {memopt.updates = 0 : i64}, tensor<2x3xf32> {memopt.updates = 4 : i64}, tensor<2x3xf32> {memopt.updates = 5 : i64}, tensor<f32> {memopt.updates = 3 : i64})
// ADAM:         %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<f32>
// ADAM:         %[[T:.*]] = memopt.add %[[STEP]], %[[ONE]]
// ADAM:         memopt.adam_update %[[W]], %{{.*}}, %[[M]], %[[V]], %[[T]] {lr = 1.000000e-03 : f64, memopt.inplace = 0 : i64}
func.func @f(%w: tensor<2x3xf32> {memopt.param}, %x: tensor<4x3xf32>, %t: tensor<4x2xf32>) -> tensor<f32> {
  %y = memopt.linear %x, %w : tensor<4x3xf32>, tensor<2x3xf32>
  %l = memopt.mse_loss %y, %t : tensor<4x2xf32>
  return %l : tensor<f32>
}
