// RUN: memopt-opt %s | FileCheck %s
// RUN: memopt-opt %s | memopt-opt | FileCheck %s

// Every op written only in the generic form, as other tools emit it: operands
// and result types spelled out, inherent attributes as properties `<{...}>`
// (defaulted ones may be left out) or in a plain attribute dictionary
// `{...}`. The written result types are verified against the inferred ones,
// and everything prints in the custom form.

"builtin.module"() ({

// CHECK-LABEL: func.func @conv_linear_matmul(
// CHECK-SAME: %arg0: tensor<8x3x32x32xf32>, %arg1: tensor<16x3x3x3xf32>, %arg2: tensor<16xf32>, %arg3: tensor<8x8x9x9xbf16>, %arg4: tensor<4x2x3x3xbf16>, %arg5: tensor<4x128x768xf32>, %arg6: tensor<64x768xf32>, %arg7: tensor<2x12x64x32xf32>)
// CHECK-NEXT: %0 = memopt.conv2d %arg0, %arg1 : tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>{{$}}
// CHECK-NEXT: %1 = memopt.conv2d %arg0, %arg1, %arg2 {padding = array<i64: 1, 1>, strides = array<i64: 2, 2>} : tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>{{$}}
// CHECK-NEXT: %2 = memopt.conv2d %arg0, %arg1, %arg2 {padding = array<i64: 1, 1>} : tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>{{$}}
// CHECK-NEXT: %3 = memopt.conv2d %arg3, %arg4 {dilations = array<i64: 2, 2>, groups = 4 : i64} : tensor<8x8x9x9xbf16>, tensor<4x2x3x3xbf16>{{$}}
// CHECK-NEXT: %4 = memopt.linear %arg5, %arg6 : tensor<4x128x768xf32>, tensor<64x768xf32>{{$}}
// CHECK-NEXT: %5 = memopt.matmul %arg7, %arg7 {transpose_b = true} : tensor<2x12x64x32xf32>, tensor<2x12x64x32xf32>{{$}}
// CHECK-NEXT: return %0, %1, %2, %3, %4, %5 : tensor<8x16x30x30xf32>, tensor<8x16x16x16xf32>, tensor<8x16x32x32xf32>, tensor<8x4x5x5xbf16>, tensor<4x128x64xf32>, tensor<2x12x64x64xf32>
"func.func"() <{function_type = (tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>, tensor<8x8x9x9xbf16>, tensor<4x2x3x3xbf16>, tensor<4x128x768xf32>, tensor<64x768xf32>, tensor<2x12x64x32xf32>) -> (tensor<8x16x30x30xf32>, tensor<8x16x16x16xf32>, tensor<8x16x32x32xf32>, tensor<8x4x5x5xbf16>, tensor<4x128x64xf32>, tensor<2x12x64x64xf32>), sym_name = "conv_linear_matmul"}> ({
^bb0(%x: tensor<8x3x32x32xf32>, %w: tensor<16x3x3x3xf32>, %b: tensor<16xf32>, %xg: tensor<8x8x9x9xbf16>, %wg: tensor<4x2x3x3xbf16>, %s: tensor<4x128x768xf32>, %wl: tensor<64x768xf32>, %q: tensor<2x12x64x32xf32>):
  // No properties at all: every attribute takes its default.
  %0 = "memopt.conv2d"(%x, %w) : (tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<8x16x30x30xf32>
  // All properties, as the generic printer writes them.
  %1 = "memopt.conv2d"(%x, %w, %b) <{dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, strides = array<i64: 2, 2>}> : (tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<8x16x16x16xf32>
  // Inherent attributes in a plain attribute dictionary.
  %2 = "memopt.conv2d"(%x, %w, %b) {padding = array<i64: 1, 1>, groups = 1 : i64} : (tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<8x16x32x32xf32>
  // Some properties only: (9 - 2*2 - 1) / 1 + 1 = 5.
  %3 = "memopt.conv2d"(%xg, %wg) <{groups = 4 : i64, dilations = array<i64: 2, 2>}> : (tensor<8x8x9x9xbf16>, tensor<4x2x3x3xbf16>) -> tensor<8x4x5x5xbf16>
  %4 = "memopt.linear"(%s, %wl) : (tensor<4x128x768xf32>, tensor<64x768xf32>) -> tensor<4x128x64xf32>
  %5 = "memopt.matmul"(%q, %q) <{transpose_a = false, transpose_b = true}> : (tensor<2x12x64x32xf32>, tensor<2x12x64x32xf32>) -> tensor<2x12x64x64xf32>
  "func.return"(%0, %1, %2, %3, %4, %5) : (tensor<8x16x30x30xf32>, tensor<8x16x16x16xf32>, tensor<8x16x32x32xf32>, tensor<8x4x5x5xbf16>, tensor<4x128x64xf32>, tensor<2x12x64x64xf32>) -> ()
}) : () -> ()

// CHECK-LABEL: func.func @elementwise(
// CHECK-NEXT: %0 = memopt.relu %arg0 : tensor<4x16xf16>{{$}}
// CHECK-NEXT: %1 = memopt.gelu %0 : tensor<4x16xf16>{{$}}
// CHECK-NEXT: %2 = memopt.sigmoid %1 : tensor<4x16xf16>{{$}}
// CHECK-NEXT: %3 = memopt.tanh %2 : tensor<4x16xf16>{{$}}
// CHECK-NEXT: %4 = memopt.leaky_relu %3 : tensor<4x16xf16>{{$}}
// CHECK-NEXT: %5 = memopt.leaky_relu %4 {alpha = 2.000000e-01 : f64} : tensor<4x16xf16>{{$}}
// CHECK-NEXT: %6 = memopt.elu %5 : tensor<4x16xf16>{{$}}
// CHECK-NEXT: %7 = memopt.elu %6 {alpha = 5.000000e-01 : f64} : tensor<4x16xf16>{{$}}
// CHECK-NEXT: %8 = memopt.add %7, %arg1 : tensor<4x16xf16>, tensor<16xf16>{{$}}
// CHECK-NEXT: %9 = memopt.mul %arg2, %arg3 : tensor<4x1x3xf64>, tensor<5x1xf64>{{$}}
// CHECK-NEXT: %10 = memopt.sub %arg1, %8 : tensor<16xf16>, tensor<4x16xf16>{{$}}
// CHECK-NEXT: %11 = memopt.div %9, %arg3 : tensor<4x5x3xf64>, tensor<5x1xf64>{{$}}
// CHECK-NEXT: return %10, %11 : tensor<4x16xf16>, tensor<4x5x3xf64>
"func.func"() <{function_type = (tensor<4x16xf16>, tensor<16xf16>, tensor<4x1x3xf64>, tensor<5x1xf64>) -> (tensor<4x16xf16>, tensor<4x5x3xf64>), sym_name = "elementwise"}> ({
^bb0(%x: tensor<4x16xf16>, %bias: tensor<16xf16>, %c: tensor<4x1x3xf64>, %d: tensor<5x1xf64>):
  %0 = "memopt.relu"(%x) : (tensor<4x16xf16>) -> tensor<4x16xf16>
  %1 = "memopt.gelu"(%0) : (tensor<4x16xf16>) -> tensor<4x16xf16>
  %2 = "memopt.sigmoid"(%1) : (tensor<4x16xf16>) -> tensor<4x16xf16>
  %3 = "memopt.tanh"(%2) : (tensor<4x16xf16>) -> tensor<4x16xf16>
  %4 = "memopt.leaky_relu"(%3) <{alpha = 1.000000e-02 : f64}> : (tensor<4x16xf16>) -> tensor<4x16xf16>
  %5 = "memopt.leaky_relu"(%4) {alpha = 2.000000e-01 : f64} : (tensor<4x16xf16>) -> tensor<4x16xf16>
  %6 = "memopt.elu"(%5) : (tensor<4x16xf16>) -> tensor<4x16xf16>
  %7 = "memopt.elu"(%6) <{alpha = 5.000000e-01 : f64}> : (tensor<4x16xf16>) -> tensor<4x16xf16>
  %8 = "memopt.add"(%7, %bias) : (tensor<4x16xf16>, tensor<16xf16>) -> tensor<4x16xf16>
  %9 = "memopt.mul"(%c, %d) : (tensor<4x1x3xf64>, tensor<5x1xf64>) -> tensor<4x5x3xf64>
  %10 = "memopt.sub"(%bias, %8) : (tensor<16xf16>, tensor<4x16xf16>) -> tensor<4x16xf16>
  %11 = "memopt.div"(%9, %d) : (tensor<4x5x3xf64>, tensor<5x1xf64>) -> tensor<4x5x3xf64>
  "func.return"(%10, %11) : (tensor<4x16xf16>, tensor<4x5x3xf64>) -> ()
}) : () -> ()

// CHECK-LABEL: func.func @norms_pools(
// CHECK-NEXT: %result, %new_running_mean, %new_running_var = memopt.batch_norm %arg0, %arg1, %arg1, %arg1, %arg1 : tensor<8x64x32x32xbf16>, tensor<64xf32>{{$}}
// CHECK-NEXT: %result_0, %new_running_mean_1, %new_running_var_2 = memopt.batch_norm %arg0, %arg1, %arg1, %arg1, %arg1 {epsilon = 1.000000e-03 : f64, momentum = 1.000000e-02 : f64} : tensor<8x64x32x32xbf16>, tensor<64xf32>{{$}}
// CHECK-NEXT: %0 = memopt.layer_norm %arg2, %arg3, %arg3 : tensor<4x128x768xf32>, tensor<768xf32>{{$}}
// CHECK-NEXT: %1 = memopt.layer_norm %arg2, %arg4, %arg4 {epsilon = 1.000000e-03 : f64} : tensor<4x128x768xf32>, tensor<128x768xf32>{{$}}
// CHECK-NEXT: %2 = memopt.max_pool2d %result {kernel_size = array<i64: 2, 2>} : tensor<8x64x32x32xbf16>{{$}}
// CHECK-NEXT: %3 = memopt.max_pool2d %result {kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, strides = array<i64: 2, 2>} : tensor<8x64x32x32xbf16>{{$}}
// CHECK-NEXT: %4 = memopt.avg_pool2d %result {kernel_size = array<i64: 3, 3>} : tensor<8x64x32x32xbf16>{{$}}
// CHECK-NEXT: %5 = memopt.avg_pool2d %result {kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, strides = array<i64: 1, 1>} : tensor<8x64x32x32xbf16>{{$}}
// CHECK-NEXT: %6 = memopt.global_avg_pool2d %result : tensor<8x64x32x32xbf16>{{$}}
// CHECK-NEXT: return %new_running_mean, %new_running_var, %result_0, %0, %1, %2, %3, %4, %5, %6 : tensor<64xf32>, tensor<64xf32>, tensor<8x64x32x32xbf16>, tensor<4x128x768xf32>, tensor<4x128x768xf32>, tensor<8x64x16x16xbf16>, tensor<8x64x16x16xbf16>, tensor<8x64x10x10xbf16>, tensor<8x64x32x32xbf16>, tensor<8x64xbf16>
"func.func"() <{function_type = (tensor<8x64x32x32xbf16>, tensor<64xf32>, tensor<4x128x768xf32>, tensor<768xf32>, tensor<128x768xf32>) -> (tensor<64xf32>, tensor<64xf32>, tensor<8x64x32x32xbf16>, tensor<4x128x768xf32>, tensor<4x128x768xf32>, tensor<8x64x16x16xbf16>, tensor<8x64x16x16xbf16>, tensor<8x64x10x10xbf16>, tensor<8x64x32x32xbf16>, tensor<8x64xbf16>), sym_name = "norms_pools"}> ({
^bb0(%x: tensor<8x64x32x32xbf16>, %c: tensor<64xf32>, %t: tensor<4x128x768xf32>, %g1: tensor<768xf32>, %g2: tensor<128x768xf32>):
  %bn:3 = "memopt.batch_norm"(%x, %c, %c, %c, %c) : (tensor<8x64x32x32xbf16>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<8x64x32x32xbf16>, tensor<64xf32>, tensor<64xf32>)
  %bn2:3 = "memopt.batch_norm"(%x, %c, %c, %c, %c) {epsilon = 1.000000e-03 : f64, momentum = 1.000000e-02 : f64} : (tensor<8x64x32x32xbf16>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<8x64x32x32xbf16>, tensor<64xf32>, tensor<64xf32>)
  %ln = "memopt.layer_norm"(%t, %g1, %g1) <{epsilon = 1.000000e-05 : f64}> : (tensor<4x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<4x128x768xf32>
  %ln2 = "memopt.layer_norm"(%t, %g2, %g2) <{epsilon = 1.000000e-03 : f64}> : (tensor<4x128x768xf32>, tensor<128x768xf32>, tensor<128x768xf32>) -> tensor<4x128x768xf32>
  %p0 = "memopt.max_pool2d"(%bn#0) <{kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>}> : (tensor<8x64x32x32xbf16>) -> tensor<8x64x16x16xbf16>
  %p1 = "memopt.max_pool2d"(%bn#0) {kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, strides = array<i64: 2, 2>} : (tensor<8x64x32x32xbf16>) -> tensor<8x64x16x16xbf16>
  %p2 = "memopt.avg_pool2d"(%bn#0) <{kernel_size = array<i64: 3, 3>}> : (tensor<8x64x32x32xbf16>) -> tensor<8x64x10x10xbf16>
  %p3 = "memopt.avg_pool2d"(%bn#0) <{kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, strides = array<i64: 1, 1>}> : (tensor<8x64x32x32xbf16>) -> tensor<8x64x32x32xbf16>
  %p4 = "memopt.global_avg_pool2d"(%bn#0) : (tensor<8x64x32x32xbf16>) -> tensor<8x64xbf16>
  "func.return"(%bn#1, %bn#2, %bn2#0, %ln, %ln2, %p0, %p1, %p2, %p3, %p4) : (tensor<64xf32>, tensor<64xf32>, tensor<8x64x32x32xbf16>, tensor<4x128x768xf32>, tensor<4x128x768xf32>, tensor<8x64x16x16xbf16>, tensor<8x64x16x16xbf16>, tensor<8x64x10x10xbf16>, tensor<8x64x32x32xbf16>, tensor<8x64xbf16>) -> ()
}) : () -> ()

// CHECK-LABEL: func.func @attention_and_movement(
// CHECK-NEXT: %0 = memopt.softmax %arg0 {causal = true} : tensor<2x12x64x64xf32>{{$}}
// CHECK-NEXT: %1 = memopt.softmax %arg0 {axis = 1 : i64} : tensor<2x12x64x64xf32>{{$}}
// CHECK-NEXT: %2 = memopt.dropout %0 {p = 1.000000e-01 : f64, seed = 7 : i64} : tensor<2x12x64x64xf32>{{$}}
// CHECK-NEXT: %3 = memopt.dropout %1 : tensor<2x12x64x64xf32>{{$}}
// CHECK-NEXT: %4 = memopt.transpose %2 {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x12x64x64xf32>{{$}}
// CHECK-NEXT: %5 = memopt.reshape %4 : tensor<2x64x12x64xf32> -> tensor<2x64x768xf32>{{$}}
// CHECK-NEXT: %6 = memopt.slice %arg1 {offsets = array<i64: 0, 0, 768>, sizes = array<i64: 2, 64, 768>} : tensor<2x64x2304xf32>{{$}}
// CHECK-NEXT: %7 = memopt.slice %arg1 {offsets = array<i64: 0, 1, 0>, sizes = array<i64: 2, 32, 768>, strides = array<i64: 1, 2, 3>} : tensor<2x64x2304xf32>{{$}}
// CHECK-NEXT: %8 = memopt.concat %5, %6, %7 {axis = -2 : i64} : tensor<2x64x768xf32>, tensor<2x64x768xf32>, tensor<2x32x768xf32>{{$}}
// CHECK-NEXT: %9 = memopt.concat %3 {axis = 0 : i64} : tensor<2x12x64x64xf32>{{$}}
// CHECK-NEXT: %10 = memopt.upsample_nearest2d %9 {scale = 2 : i64} : tensor<2x12x64x64xf32>{{$}}
// CHECK-NEXT: return %8, %10 : tensor<2x160x768xf32>, tensor<2x12x128x128xf32>
"func.func"() <{function_type = (tensor<2x12x64x64xf32>, tensor<2x64x2304xf32>) -> (tensor<2x160x768xf32>, tensor<2x12x128x128xf32>), sym_name = "attention_and_movement"}> ({
^bb0(%s: tensor<2x12x64x64xf32>, %qkv: tensor<2x64x2304xf32>):
  %0 = "memopt.softmax"(%s) <{axis = -1 : i64, causal = true}> : (tensor<2x12x64x64xf32>) -> tensor<2x12x64x64xf32>
  %1 = "memopt.softmax"(%s) {axis = 1 : i64} : (tensor<2x12x64x64xf32>) -> tensor<2x12x64x64xf32>
  %2 = "memopt.dropout"(%0) <{p = 1.000000e-01 : f64, seed = 7 : i64}> : (tensor<2x12x64x64xf32>) -> tensor<2x12x64x64xf32>
  %3 = "memopt.dropout"(%1) : (tensor<2x12x64x64xf32>) -> tensor<2x12x64x64xf32>
  %4 = "memopt.transpose"(%2) {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x12x64x64xf32>) -> tensor<2x64x12x64xf32>
  %5 = "memopt.reshape"(%4) : (tensor<2x64x12x64xf32>) -> tensor<2x64x768xf32>
  %6 = "memopt.slice"(%qkv) <{offsets = array<i64: 0, 0, 768>, sizes = array<i64: 2, 64, 768>}> : (tensor<2x64x2304xf32>) -> tensor<2x64x768xf32>
  %7 = "memopt.slice"(%qkv) <{offsets = array<i64: 0, 1, 0>, sizes = array<i64: 2, 32, 768>, strides = array<i64: 1, 2, 3>}> : (tensor<2x64x2304xf32>) -> tensor<2x32x768xf32>
  %8 = "memopt.concat"(%5, %6, %7) <{axis = -2 : i64}> : (tensor<2x64x768xf32>, tensor<2x64x768xf32>, tensor<2x32x768xf32>) -> tensor<2x160x768xf32>
  %9 = "memopt.concat"(%3) {axis = 0 : i64} : (tensor<2x12x64x64xf32>) -> tensor<2x12x64x64xf32>
  %10 = "memopt.upsample_nearest2d"(%9) <{scale = 2 : i64}> : (tensor<2x12x64x64xf32>) -> tensor<2x12x128x128xf32>
  "func.return"(%8, %10) : (tensor<2x160x768xf32>, tensor<2x12x128x128xf32>) -> ()
}) : () -> ()

// CHECK-LABEL: func.func @train(
// CHECK-SAME: %arg0: tensor<100x32xf32> {memopt.param}, %arg1: tensor<10x32xf32> {memopt.param}, %arg2: tensor<8xi64>, %arg3: tensor<8xi32>, %arg4: tensor<8x10xf64>, %arg5: tensor<8x10xf64>) -> (tensor<f32>, tensor<f64>)
// CHECK-NEXT: %0 = memopt.embedding %arg0, %arg2 : tensor<100x32xf32>, tensor<8xi64>{{$}}
// CHECK-NEXT: %1 = memopt.embedding %arg0, %arg3 : tensor<100x32xf32>, tensor<8xi32>{{$}}
// CHECK-NEXT: %2 = memopt.add %0, %1 : tensor<8x32xf32>, tensor<8x32xf32>{{$}}
// CHECK-NEXT: %3 = memopt.linear %2, %arg1 : tensor<8x32xf32>, tensor<10x32xf32>{{$}}
// CHECK-NEXT: %4 = memopt.cross_entropy %3, %arg2 : tensor<8x10xf32>, tensor<8xi64>{{$}}
// CHECK-NEXT: %5 = memopt.mse_loss %arg4, %arg5 : tensor<8x10xf64>{{$}}
// CHECK-NEXT: return %4, %5 : tensor<f32>, tensor<f64>
"func.func"() <{arg_attrs = [{memopt.param}, {memopt.param}, {}, {}, {}, {}], function_type = (tensor<100x32xf32>, tensor<10x32xf32>, tensor<8xi64>, tensor<8xi32>, tensor<8x10xf64>, tensor<8x10xf64>) -> (tensor<f32>, tensor<f64>), sym_name = "train"}> ({
^bb0(%table: tensor<100x32xf32>, %w: tensor<10x32xf32>, %ids: tensor<8xi64>, %ids32: tensor<8xi32>, %y: tensor<8x10xf64>, %t: tensor<8x10xf64>):
  %0 = "memopt.embedding"(%table, %ids) : (tensor<100x32xf32>, tensor<8xi64>) -> tensor<8x32xf32>
  %1 = "memopt.embedding"(%table, %ids32) : (tensor<100x32xf32>, tensor<8xi32>) -> tensor<8x32xf32>
  %2 = "memopt.add"(%0, %1) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %3 = "memopt.linear"(%2, %w) : (tensor<8x32xf32>, tensor<10x32xf32>) -> tensor<8x10xf32>
  %4 = "memopt.cross_entropy"(%3, %ids) : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
  %5 = "memopt.mse_loss"(%y, %t) : (tensor<8x10xf64>, tensor<8x10xf64>) -> tensor<f64>
  "func.return"(%4, %5) : (tensor<f32>, tensor<f64>) -> ()
}) : () -> ()

}) : () -> ()
