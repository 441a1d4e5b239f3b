// RUN: memopt-opt %s -split-input-file --test-memopt-print-liveness -o /dev/null | FileCheck %s

// `memopt.inplace = N` on an op: its result 0 reuses operand N's buffer, so
// it allocates nothing and its root lives until the alias's last use. An
// alias of an alias (the reshape of %3) resolves to the root.
// Argument 128 bytes.
//   op 0: + %0 = 256;  op 1: %1 is %0's buffer = 256
//   op 2: %0 (used through %1 until op 3) + %2 = 384;  op 3: 384
//   op 4: %2 (through %3 and the returned %4) = 256
// CHECK-LABEL: func @inplace: 5 ops, first backward op 5, peak 384 bytes
// CHECK-NEXT:   arg/0 %arg0: size = 128, live = [-1, 5], role = data
// CHECK-NEXT:   memopt.tanh/0 %0: size = 128, live = [0, 3], role = activation
// CHECK-NEXT:   memopt.relu/1 %1: size = 128, live = [0, 3], role = activation, alias of %0
// CHECK-NEXT:   memopt.sigmoid/2 %2: size = 128, live = [2, 5], role = activation
// CHECK-NEXT:   memopt.add/3 %3: size = 128, live = [2, 5], role = activation, alias of %2
// CHECK-NEXT:   memopt.reshape/4 %4: size = 128, live = [2, 5], role = activation, alias of %2
// CHECK-NEXT:   op 0 memopt.tanh: live_bytes = 256
// CHECK-NEXT:   op 1 memopt.relu: live_bytes = 256
// CHECK-NEXT:   op 2 memopt.sigmoid: live_bytes = 384
// CHECK-NEXT:   op 3 memopt.add: live_bytes = 384
// CHECK-NEXT:   op 4 memopt.reshape: live_bytes = 256
func.func @inplace(%x: tensor<4x8xf32>) -> tensor<32xf32> {
  %0 = memopt.tanh %x : tensor<4x8xf32>
  %1 = memopt.relu %0 {memopt.inplace = 0 : i64} : tensor<4x8xf32>
  %2 = memopt.sigmoid %1 : tensor<4x8xf32>
  %3 = memopt.add %1, %2 {memopt.inplace = 1 : i64} : tensor<4x8xf32>, tensor<4x8xf32>
  %4 = memopt.reshape %3 : tensor<4x8xf32> -> tensor<32xf32>
  return %4 : tensor<32xf32>
}

// -----

// In place on an argument: the updated parameter is written into the
// parameter's own buffer (live for the whole step anyway); only result 0
// aliases, the new momentum buffer gets its own.
// Arguments 96 bytes.
//   op 0: + %0 (32) = 128;  op 1: + %0 %1 (32 + 4) = 132
//   op 2: %2 is %0's buffer = 132
//   op 3: %0 (through %2) %1 %new_momentum_buffer = 164
// CHECK-LABEL: func @update_in_place: 4 ops, first backward op 2, peak 164 bytes
// CHECK-NEXT:   arg/0 %arg0: size = 32, live = [-1, 4], role = param
// CHECK-NEXT:   arg/1 %arg1: size = 32, live = [-1, 4], role = optimizer_state
// CHECK-NEXT:   arg/2 %arg2: size = 32, live = [-1, 4], role = data
// CHECK-NEXT:   memopt.mul/0 %0: size = 32, live = [0, 3], role = activation
// CHECK-NEXT:   memopt.mse_loss/1 %1: size = 4, live = [1, 4], role = activation
// CHECK-NEXT:   memopt.tanh/2 %2: size = 32, live = [0, 3], role = gradient, alias of %0
// CHECK-NEXT:   memopt.sgd_momentum_update/3 %new_param: size = 32, live = [-1, 4], role = optimizer, alias of %arg0
// CHECK-NEXT:   memopt.sgd_momentum_update/3 %new_momentum_buffer: size = 32, live = [3, 4], role = optimizer
// CHECK-NEXT:   op 0 memopt.mul: live_bytes = 128
// CHECK-NEXT:   op 1 memopt.mse_loss: live_bytes = 132
// CHECK-NEXT:   op 2 memopt.tanh: live_bytes = 132
// CHECK-NEXT:   op 3 memopt.sgd_momentum_update: live_bytes = 164
func.func @update_in_place(%p: tensor<8xf32> {memopt.param},
                           %m: tensor<8xf32> {memopt.optimizer_state},
                           %x: tensor<8xf32>)
    -> (tensor<f32>, tensor<8xf32> {memopt.updates = 0 : i64},
        tensor<8xf32> {memopt.updates = 1 : i64}) {
  %y = memopt.mul %x, %p : tensor<8xf32>, tensor<8xf32>
  %l = memopt.mse_loss %y, %x : tensor<8xf32>
  %g = memopt.tanh %y {memopt.inplace = 0 : i64} : tensor<8xf32>
  %p1, %m1 = memopt.sgd_momentum_update %p, %g, %m {lr = 1.0e-01 : f64, momentum = 9.0e-01 : f64, memopt.inplace = 0 : i64}
      : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
  return %l, %p1, %m1 : tensor<f32>, tensor<8xf32>, tensor<8xf32>
}
