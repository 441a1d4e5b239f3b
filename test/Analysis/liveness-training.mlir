// RUN: memopt-opt %s -split-input-file --memopt-autodiff --test-memopt-print-liveness -o /dev/null | FileCheck %s

// The memory analysis on training steps built by --memopt-autodiff: forward
// values the backward pass reads stay live into it, gradients live until
// their update, updated parameters to the end.

// After autodiff (sgd):
//   0 %0 = linear   1 %1 = relu   2 %2 = cross_entropy   3 %cst (seed)
//   4 %3 = cross_entropy_backward(%cst, %1)   5 %4 = relu_backward(%3, %1)
//   6 %5 = matmul(%4, x)   7 %6 = sum_to(%4)   8, 9: sgd_update
// The seed constant computes nothing, so the first backward op is 4.
// Arguments 224 bytes; then, live at each op:
//   3: %1 %2 %cst (32 + 4 + 4)           = 264
//   4: %1 %2 %cst %3 (32 + 4 + 4 + 32)   = 296
//   5: %1 %2 %3 %4 (32 + 4 + 32 + 32)    = 324
//   6: %2 %4 %5 (4 + 32 + 128)           = 388
//   7: %2 %4 %5 %6 (4 + 32 + 128 + 16)   = 404
//   8: %2 %5 %6 (4 + 128 + 16); %7 is written in place over w (alias),
//      so the peak (404) is at op 7; op 8 holds 372
//   9: %2 %6 %7 %8 (4 + 16 + 128 + 16)   = 388
// CHECK-LABEL: func @mlp: 10 ops, first backward op 4, peak 404 bytes
// CHECK-NEXT:   arg/0 %arg0: size = 128, live = [-1, 10], role = param
// CHECK-NEXT:   arg/1 %arg1: size = 16, live = [-1, 10], role = param
// CHECK-NEXT:   arg/2 %arg2: size = 64, live = [-1, 10], role = data
// CHECK-NEXT:   arg/3 %arg3: size = 16, live = [-1, 10], role = data
// CHECK-NEXT:   memopt.linear/0 %0: size = 32, live = [0, 1], role = activation
// CHECK-NEXT:   memopt.relu/1 %1: size = 32, live = [1, 5], role = activation
// CHECK-NEXT:   memopt.cross_entropy/2 %2: size = 4, live = [2, 10], role = activation
// CHECK-NEXT:   arith.constant/3 %cst: size = 4, live = [3, 4], role = gradient
// CHECK-NEXT:   memopt.cross_entropy_backward/4 %3: size = 32, live = [4, 5], role = gradient
// CHECK-NEXT:   memopt.relu_backward/5 %4: size = 32, live = [5, 7], role = gradient
// CHECK-NEXT:   memopt.matmul/6 %5: size = 128, live = [6, 8], role = gradient
// CHECK-NEXT:   memopt.sum_to/7 %6: size = 16, live = [7, 9], role = gradient
// CHECK-NEXT:   memopt.sgd_update/8 %7: size = 128, live = [-1, 10], role = optimizer, alias of %arg0
// CHECK-NEXT:   memopt.sgd_update/9 %8: size = 16, live = [-1, 10], role = optimizer, alias of %arg1
// CHECK-NEXT:   op 0 memopt.linear: live_bytes = 256
// CHECK-NEXT:   op 1 memopt.relu: live_bytes = 288
// CHECK-NEXT:   op 2 memopt.cross_entropy: live_bytes = 260
// CHECK-NEXT:   op 3 arith.constant: live_bytes = 264
// CHECK-NEXT:   op 4 memopt.cross_entropy_backward: live_bytes = 296
// CHECK-NEXT:   op 5 memopt.relu_backward: live_bytes = 324
// CHECK-NEXT:   op 6 memopt.matmul: live_bytes = 388
// CHECK-NEXT:   op 7 memopt.sum_to: live_bytes = 404
// CHECK-NEXT:   op 8 memopt.sgd_update: live_bytes = 372
// CHECK-NEXT:   op 9 memopt.sgd_update: live_bytes = 244
func.func @mlp(%w: tensor<4x8xf32> {memopt.param}, %b: tensor<4xf32> {memopt.param},
               %x: tensor<2x8xf32>, %y: tensor<2xi64>) -> tensor<f32> {
  %h = memopt.linear %x, %w, %b : tensor<2x8xf32>, tensor<4x8xf32>, tensor<4xf32>
  %a = memopt.relu %h : tensor<2x4xf32>
  %l = memopt.cross_entropy %a, %y : tensor<2x4xf32>, tensor<2xi64>
  return %l : tensor<f32>
}

// -----

// Reshapes on both sides: forward views of arguments allocate nothing, and
// the weight gradient's reshape back to the parameter's shape is a view of
// the matmul's result, which therefore lives until the update reads it.
// After autodiff:
//   0 %0 = reshape w   1 %1 = reshape x   2 %2 = tanh   3 %3 = linear
//   4 %4 = cross_entropy   5 %cst   6 %5 = cross_entropy_backward(%cst, %3)
//   7 %6 = matmul(%5, %2)   8 %7 = reshape %6   9 %8 = sgd_update(w, %7)
// Arguments 176 bytes; then:
//   2: %2 (64) = 240;  3: %2 %3 (64 + 24) = 264;  4: + %4 (4) = 268
//   5: + %cst (4) = 272;  6: %2 %3 %4 %cst %5 (64 + 24 + 4 + 4 + 24) = 296
//   7: %2 %4 %5 %6 (64 + 4 + 24 + 96) = 364;  8: %4 %6 (4 + 96) = 276
//   9: %4 %6 %8 (4 + 96 + 96) = 372
// CHECK-LABEL: func @flatten: 10 ops, first backward op 6, peak 364 bytes
// CHECK-NEXT:   arg/0 %arg0: size = 96, live = [-1, 10], role = param
// CHECK-NEXT:   arg/1 %arg1: size = 64, live = [-1, 10], role = data
// CHECK-NEXT:   arg/2 %arg2: size = 16, live = [-1, 10], role = data
// CHECK-NEXT:   memopt.reshape/0 %0: size = 96, live = [-1, 10], role = activation, alias of %arg0
// CHECK-NEXT:   memopt.reshape/1 %1: size = 64, live = [-1, 10], role = activation, alias of %arg1
// CHECK-NEXT:   memopt.tanh/2 %2: size = 64, live = [2, 7], role = activation
// CHECK-NEXT:   memopt.linear/3 %3: size = 24, live = [3, 6], role = activation
// CHECK-NEXT:   memopt.cross_entropy/4 %4: size = 4, live = [4, 10], role = activation
// CHECK-NEXT:   arith.constant/5 %cst: size = 4, live = [5, 6], role = gradient
// CHECK-NEXT:   memopt.cross_entropy_backward/6 %5: size = 24, live = [6, 7], role = gradient
// CHECK-NEXT:   memopt.matmul/7 %6: size = 96, live = [7, 9], role = gradient
// CHECK-NEXT:   memopt.reshape/8 %7: size = 96, live = [7, 9], role = gradient, alias of %6
// CHECK-NEXT:   memopt.sgd_update/9 %8: size = 96, live = [-1, 10], role = optimizer, alias of %arg0
// CHECK-NEXT:   op 0 memopt.reshape: live_bytes = 176
// CHECK-NEXT:   op 1 memopt.reshape: live_bytes = 176
// CHECK-NEXT:   op 2 memopt.tanh: live_bytes = 240
// CHECK-NEXT:   op 3 memopt.linear: live_bytes = 264
// CHECK-NEXT:   op 4 memopt.cross_entropy: live_bytes = 268
// CHECK-NEXT:   op 5 arith.constant: live_bytes = 272
// CHECK-NEXT:   op 6 memopt.cross_entropy_backward: live_bytes = 296
// CHECK-NEXT:   op 7 memopt.matmul: live_bytes = 364
// CHECK-NEXT:   op 8 memopt.reshape: live_bytes = 276
// CHECK-NEXT:   op 9 memopt.sgd_update: live_bytes = 276
func.func @flatten(%w: tensor<24xf32> {memopt.param}, %x: tensor<2x2x4xf32>,
                   %y: tensor<2xi64>) -> tensor<f32> {
  %w2 = memopt.reshape %w : tensor<24xf32> -> tensor<3x8xf32>
  %f = memopt.reshape %x : tensor<2x2x4xf32> -> tensor<2x8xf32>
  %t = memopt.tanh %f : tensor<2x8xf32>
  %h = memopt.linear %t, %w2 : tensor<2x8xf32>, tensor<3x8xf32>
  %l = memopt.cross_entropy %h, %y : tensor<2x3xf32>, tensor<2xi64>
  return %l : tensor<f32>
}
