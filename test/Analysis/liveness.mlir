// RUN: memopt-opt %s -split-input-file --test-memopt-print-liveness -o /dev/null | FileCheck %s

// The memory analysis on forward graphs: sizes (numel x element bytes),
// lifetimes [def, last use] in op indices (arguments from -1 to the end,
// returned values to the end = number of ops), roles, reshape aliases and
// memopt.free. Numbers are checked by hand in the comments.

// Arguments: 128 + 16 + 64 + 16 = 224 bytes, live at every op.
// op 0: + %0 (32)             = 256
// op 1: + %0, %1 (32 + 32)    = 288 (the peak)
// op 2: + %1, %2 (32 + 4)     = 260
// CHECK-LABEL: func @forward_only: 3 ops, first backward op 3, peak 288 bytes
// CHECK-NEXT:   arg/0 %arg0: size = 128, live = [-1, 3], role = param
// CHECK-NEXT:   arg/1 %arg1: size = 16, live = [-1, 3], role = param
// CHECK-NEXT:   arg/2 %arg2: size = 64, live = [-1, 3], role = data
// CHECK-NEXT:   arg/3 %arg3: size = 16, live = [-1, 3], role = data
// CHECK-NEXT:   memopt.linear/0 %0: size = 32, live = [0, 1], role = activation
// CHECK-NEXT:   memopt.relu/1 %1: size = 32, live = [1, 2], role = activation
// CHECK-NEXT:   memopt.cross_entropy/2 %2: size = 4, live = [2, 3], role = activation
// CHECK-NEXT:   op 0 memopt.linear: live_bytes = 256
// CHECK-NEXT:   op 1 memopt.relu: live_bytes = 288
// CHECK-NEXT:   op 2 memopt.cross_entropy: live_bytes = 260
func.func @forward_only(%w: tensor<4x8xf32> {memopt.param}, %b: tensor<4xf32> {memopt.param},
                        %x: tensor<2x8xf32>, %y: tensor<2xi64>) -> tensor<f32> {
  %h = memopt.linear %x, %w, %b : tensor<2x8xf32>, tensor<4x8xf32>, tensor<4xf32>
  %a = memopt.relu %h : tensor<2x4xf32>
  %l = memopt.cross_entropy %a, %y : tensor<2x4xf32>, tensor<2xi64>
  return %l : tensor<f32>
}

// -----

// Reshapes allocate nothing: a view of an argument lives as long as the
// argument; %1's buffer lives until the last use of its views %2 and %4
// (op 7), and %3's until its view %6 is used (op 7). %5 is never used: it
// lives only at its own op. No scalar loss: every op is forward.
// Argument 96 bytes.
// op 0: 96; op 1, 2: + %1 = 192; op 3, 4: + %3 = 288;
// op 5: + %5 = 384; op 6: 288; op 7: + %7 = 384.
// CHECK-LABEL: func @views: 8 ops, first backward op 8, peak 384 bytes
// CHECK-NEXT:   arg/0 %arg0: size = 96, live = [-1, 8], role = data
// CHECK-NEXT:   memopt.reshape/0 %0: size = 96, live = [-1, 8], role = activation, alias of %arg0
// CHECK-NEXT:   memopt.relu/1 %1: size = 96, live = [1, 7], role = activation
// CHECK-NEXT:   memopt.reshape/2 %2: size = 96, live = [1, 7], role = activation, alias of %1
// CHECK-NEXT:   memopt.tanh/3 %3: size = 96, live = [3, 7], role = activation
// CHECK-NEXT:   memopt.reshape/4 %4: size = 96, live = [1, 7], role = activation, alias of %1
// CHECK-NEXT:   memopt.sigmoid/5 %5: size = 96, live = [5, 5], role = activation
// CHECK-NEXT:   memopt.reshape/6 %6: size = 96, live = [3, 7], role = activation, alias of %3
// CHECK-NEXT:   memopt.add/7 %7: size = 96, live = [7, 8], role = activation
// CHECK-NEXT:   op 0 memopt.reshape: live_bytes = 96
// CHECK-NEXT:   op 1 memopt.relu: live_bytes = 192
// CHECK-NEXT:   op 2 memopt.reshape: live_bytes = 192
// CHECK-NEXT:   op 3 memopt.tanh: live_bytes = 288
// CHECK-NEXT:   op 4 memopt.reshape: live_bytes = 288
// CHECK-NEXT:   op 5 memopt.sigmoid: live_bytes = 384
// CHECK-NEXT:   op 6 memopt.reshape: live_bytes = 288
// CHECK-NEXT:   op 7 memopt.add: live_bytes = 384
func.func @views(%x: tensor<2x3x4xf32>) -> tensor<24xf32> {
  %0 = memopt.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %1 = memopt.relu %0 : tensor<6x4xf32>
  %2 = memopt.reshape %1 : tensor<6x4xf32> -> tensor<2x12xf32>
  %3 = memopt.tanh %2 : tensor<2x12xf32>
  %4 = memopt.reshape %2 : tensor<2x12xf32> -> tensor<24xf32>
  %5 = memopt.sigmoid %3 : tensor<2x12xf32>
  %6 = memopt.reshape %3 : tensor<2x12xf32> -> tensor<24xf32>
  %7 = memopt.add %4, %6 : tensor<24xf32>, tensor<24xf32>
  return %7 : tensor<24xf32>
}

// -----

// A memopt.free is the last use of what it frees (it is an op with an index
// of its own); freeing a view ends its root's buffer. Argument 32 bytes.
// op 0: + %0 = 64; op 1, 2: + %0, %1 = 96; op 3, 4: + %1, %2 = 96;
// op 5: + %2 = 64; op 6, 7: + %2, %4 = 96; op 8: + %4, %5 = 96.
// CHECK-LABEL: func @frees: 9 ops, first backward op 9, peak 96 bytes
// CHECK-NEXT:   arg/0 %arg0: size = 32, live = [-1, 9], role = data
// CHECK-NEXT:   memopt.relu/0 %0: size = 32, live = [0, 2], role = activation
// CHECK-NEXT:   memopt.tanh/1 %1: size = 32, live = [1, 4], role = activation
// CHECK-NEXT:   memopt.sigmoid/3 %2: size = 32, live = [3, 7], role = activation
// CHECK-NEXT:   memopt.reshape/5 %3: size = 32, live = [3, 7], role = activation, alias of %2
// CHECK-NEXT:   memopt.relu/6 %4: size = 32, live = [6, 9], role = activation
// CHECK-NEXT:   memopt.tanh/8 %5: size = 32, live = [8, 8], role = activation
// CHECK-NEXT:   op 0 memopt.relu: live_bytes = 64
// CHECK-NEXT:   op 1 memopt.tanh: live_bytes = 96
// CHECK-NEXT:   op 2 memopt.free: live_bytes = 96
// CHECK-NEXT:   op 3 memopt.sigmoid: live_bytes = 96
// CHECK-NEXT:   op 4 memopt.free: live_bytes = 96
// CHECK-NEXT:   op 5 memopt.reshape: live_bytes = 64
// CHECK-NEXT:   op 6 memopt.relu: live_bytes = 96
// CHECK-NEXT:   op 7 memopt.free: live_bytes = 96
// CHECK-NEXT:   op 8 memopt.tanh: live_bytes = 96
func.func @frees(%x: tensor<8xf32>) -> tensor<2x4xf32> {
  %0 = memopt.relu %x : tensor<8xf32>
  %1 = memopt.tanh %0 : tensor<8xf32>
  memopt.free %0 : tensor<8xf32>
  %2 = memopt.sigmoid %1 : tensor<8xf32>
  memopt.free %1 : tensor<8xf32>
  %3 = memopt.reshape %2 : tensor<8xf32> -> tensor<2x4xf32>
  %4 = memopt.relu %3 : tensor<2x4xf32>
  memopt.free %3 : tensor<2x4xf32>
  %5 = memopt.tanh %4 : tensor<2x4xf32>
  return %4 : tensor<2x4xf32>
}

// -----

// Several results, state and a loss that does not use all of them: the
// running statistics are results of a forward op (the loss depends on the
// batch norm), returned, so they live to the end.
// Arguments: 384 + 4 x 12 + 384 = 816 bytes.
// op 0: + %result, %new_running_mean, %new_running_var (384 + 12 + 12) = 1224
// op 1: + the same and the loss %0 (4)                               = 1228
// CHECK-LABEL: func @batch_norm: 2 ops, first backward op 2, peak 1228 bytes
// CHECK-NEXT:   arg/0 %arg0: size = 384, live = [-1, 2], role = data
// CHECK-NEXT:   arg/1 %arg1: size = 12, live = [-1, 2], role = param
// CHECK-NEXT:   arg/2 %arg2: size = 12, live = [-1, 2], role = param
// CHECK-NEXT:   arg/3 %arg3: size = 12, live = [-1, 2], role = state
// CHECK-NEXT:   arg/4 %arg4: size = 12, live = [-1, 2], role = state
// CHECK-NEXT:   arg/5 %arg5: size = 384, live = [-1, 2], role = data
// CHECK-NEXT:   memopt.batch_norm/0 %result: size = 384, live = [0, 1], role = activation
// CHECK-NEXT:   memopt.batch_norm/0 %new_running_mean: size = 12, live = [0, 2], role = activation
// CHECK-NEXT:   memopt.batch_norm/0 %new_running_var: size = 12, live = [0, 2], role = activation
// CHECK-NEXT:   memopt.mse_loss/1 %0: size = 4, live = [1, 2], role = activation
// CHECK-NEXT:   op 0 memopt.batch_norm: live_bytes = 1224
// CHECK-NEXT:   op 1 memopt.mse_loss: live_bytes = 1228
func.func @batch_norm(%x: tensor<2x3x4x4xf32>, %g: tensor<3xf32> {memopt.param},
                      %b: tensor<3xf32> {memopt.param}, %rm: tensor<3xf32> {memopt.state},
                      %rv: tensor<3xf32> {memopt.state}, %t: tensor<2x3x4x4xf32>)
    -> (tensor<f32>, tensor<3xf32> {memopt.updates = 3 : i64},
        tensor<3xf32> {memopt.updates = 4 : i64}) {
  %y, %m, %v = memopt.batch_norm %x, %g, %b, %rm, %rv : tensor<2x3x4x4xf32>, tensor<3xf32>
  %l = memopt.mse_loss %y, %t : tensor<2x3x4x4xf32>
  return %l, %m, %v : tensor<f32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// Element sizes: f16 is 2 bytes, i32 4, i64 8; a 0-d tensor is one element.
// A value the loss does not depend on is not forward, even before autodiff,
// but it starts no backward pass: it reads no forward value.
// Arguments: 16 + 24 + 8 + 40 + 32 = 120 bytes.
// op 0: + %0 (12) = 132; op 1: + %0, %1 (2) = 134; op 2: + %1, %2 (32) = 154.
// CHECK-LABEL: func @element_types: 3 ops, first backward op 3, peak 154 bytes
// CHECK-NEXT:   arg/0 %arg0: size = 16, live = [-1, 3], role = data
// CHECK-NEXT:   arg/1 %arg1: size = 24, live = [-1, 3], role = param
// CHECK-NEXT:   arg/2 %arg2: size = 8, live = [-1, 3], role = data
// CHECK-NEXT:   arg/3 %arg3: size = 40, live = [-1, 3], role = param
// CHECK-NEXT:   arg/4 %arg4: size = 32, live = [-1, 3], role = data
// CHECK-NEXT:   memopt.linear/0 %0: size = 12, live = [0, 1], role = activation
// CHECK-NEXT:   memopt.cross_entropy/1 %1: size = 2, live = [1, 3], role = activation
// CHECK-NEXT:   memopt.embedding/2 %2: size = 32, live = [2, 3], role = gradient
// CHECK-NEXT:   op 0 memopt.linear: live_bytes = 132
// CHECK-NEXT:   op 1 memopt.cross_entropy: live_bytes = 134
// CHECK-NEXT:   op 2 memopt.embedding: live_bytes = 154
func.func @element_types(%x: tensor<2x4xf16>, %w: tensor<3x4xf16> {memopt.param},
                         %labels: tensor<2xi32>, %table: tensor<5x4xf16> {memopt.param},
                         %ids: tensor<2x2xi64>) -> (tensor<f16>, tensor<2x2x4xf16>) {
  %h = memopt.linear %x, %w : tensor<2x4xf16>, tensor<3x4xf16>
  %l = memopt.cross_entropy %h, %labels : tensor<2x3xf16>, tensor<2xi32>
  %e = memopt.embedding %table, %ids : tensor<5x4xf16>, tensor<2x2xi64>
  return %l, %e : tensor<f16>, tensor<2x2x4xf16>
}
