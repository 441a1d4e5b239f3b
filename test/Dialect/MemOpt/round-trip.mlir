// RUN: memopt-opt %s | memopt-opt | FileCheck %s
// RUN: memopt-opt %s --mlir-print-op-generic | memopt-opt | FileCheck %s
// RUN: memopt-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Every op of the memopt dialect prints in its custom form and re-parses to
// the same text, directly and through the generic form. Result types are
// inferred: the custom form never writes them, so the `return` lines check
// the inferred types. Attributes equal to their defaults are not printed.

//===----------------------------------------------------------------------===//
// conv2d
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @conv2d(
// CHECK-SAME: %arg0: tensor<8x3x32x32xf32>, %arg1: tensor<16x3x3x3xf32>, %arg2: tensor<16xf32>) -> (tensor<8x16x30x30xf32>, tensor<8x16x16x16xf32>) {
// CHECK-NEXT: %0 = memopt.conv2d %arg0, %arg1 : tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>{{$}}
// CHECK-NEXT: %1 = memopt.conv2d %arg0, %arg1, %arg2 {padding = array<i64: 1, 1>, strides = array<i64: 2, 2>} : tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>{{$}}
// CHECK-NEXT: return %0, %1 : tensor<8x16x30x30xf32>, tensor<8x16x16x16xf32>

// GENERIC-LABEL: sym_name = "conv2d"
// GENERIC: %{{.*}} = "memopt.conv2d"(%{{.*}}, %{{.*}}) <{dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, strides = array<i64: 1, 1>}> : (tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<8x16x30x30xf32>
// GENERIC: %{{.*}} = "memopt.conv2d"(%{{.*}}, %{{.*}}, %{{.*}}) <{dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, strides = array<i64: 2, 2>}> : (tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<8x16x16x16xf32>
func.func @conv2d(%x: tensor<8x3x32x32xf32>, %w: tensor<16x3x3x3xf32>, %b: tensor<16xf32>)
    -> (tensor<8x16x30x30xf32>, tensor<8x16x16x16xf32>) {
  %0 = memopt.conv2d %x, %w : tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>
  %1 = memopt.conv2d %x, %w, %b {padding = array<i64: 1, 1>, strides = array<i64: 2, 2>}
      : tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>
  return %0, %1 : tensor<8x16x30x30xf32>, tensor<8x16x16x16xf32>
}

// Attributes written with their default values are elided.
// CHECK-LABEL: func.func @conv2d_defaults(
// CHECK-NEXT: %0 = memopt.conv2d %arg0, %arg1 : tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>{{$}}
// CHECK-NOT: dilations
// CHECK-NOT: groups
// CHECK-NOT: padding
// CHECK-NOT: strides
// CHECK: return %0 : tensor<8x16x30x30xf32>
func.func @conv2d_defaults(%x: tensor<8x3x32x32xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<8x16x30x30xf32> {
  %0 = memopt.conv2d %x, %w {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, strides = array<i64: 1, 1>}
      : tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>
  return %0 : tensor<8x16x30x30xf32>
}

// Grouped, dilated, asymmetric convolution in bf16:
// OH = (17 + 2*2 - 2*(3-1) - 1) / 2 + 1 = 9, OW = (20 + 2*1 - 1*(5-1) - 1) / 5 + 1 = 4.
// CHECK-LABEL: func.func @conv2d_grouped(
// CHECK-NEXT: %0 = memopt.conv2d %arg0, %arg1, %arg2 {dilations = array<i64: 2, 1>, groups = 4 : i64, padding = array<i64: 2, 1>, strides = array<i64: 2, 5>} : tensor<2x8x17x20xbf16>, tensor<12x2x3x5xbf16>, tensor<12xbf16>{{$}}
// CHECK-NEXT: return %0 : tensor<2x12x9x4xbf16>
func.func @conv2d_grouped(%x: tensor<2x8x17x20xbf16>, %w: tensor<12x2x3x5xbf16>, %b: tensor<12xbf16>)
    -> tensor<2x12x9x4xbf16> {
  %0 = memopt.conv2d %x, %w, %b {groups = 4 : i64, strides = array<i64: 2, 5>, padding = array<i64: 2, 1>, dilations = array<i64: 2, 1>}
      : tensor<2x8x17x20xbf16>, tensor<12x2x3x5xbf16>, tensor<12xbf16>
  return %0 : tensor<2x12x9x4xbf16>
}

//===----------------------------------------------------------------------===//
// linear, matmul
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @linear(
// CHECK-NEXT: %0 = memopt.linear %arg0, %arg1, %arg2 : tensor<64x784xf32>, tensor<512x784xf32>, tensor<512xf32>{{$}}
// CHECK-NEXT: %1 = memopt.linear %arg0, %arg1 : tensor<64x784xf32>, tensor<512x784xf32>{{$}}
// CHECK-NEXT: %2 = memopt.linear %arg3, %arg4 : tensor<4x128x768xf16>, tensor<3072x768xf16>{{$}}
// CHECK-NEXT: return %0, %1, %2 : tensor<64x512xf32>, tensor<64x512xf32>, tensor<4x128x3072xf16>
func.func @linear(%x: tensor<64x784xf32>, %w: tensor<512x784xf32>, %b: tensor<512xf32>,
                  %s: tensor<4x128x768xf16>, %w2: tensor<3072x768xf16>)
    -> (tensor<64x512xf32>, tensor<64x512xf32>, tensor<4x128x3072xf16>) {
  %0 = memopt.linear %x, %w, %b : tensor<64x784xf32>, tensor<512x784xf32>, tensor<512xf32>
  %1 = memopt.linear %x, %w : tensor<64x784xf32>, tensor<512x784xf32>
  %2 = memopt.linear %s, %w2 : tensor<4x128x768xf16>, tensor<3072x768xf16>
  return %0, %1, %2 : tensor<64x512xf32>, tensor<64x512xf32>, tensor<4x128x3072xf16>
}

// CHECK-LABEL: func.func @matmul(
// CHECK-NEXT: %0 = memopt.matmul %arg0, %arg1 {transpose_b = true} : tensor<2x12x64x32xf32>, tensor<2x12x64x32xf32>{{$}}
// CHECK-NEXT: %1 = memopt.matmul %arg0, %arg1 {transpose_a = true} : tensor<2x12x64x32xf32>, tensor<2x12x64x32xf32>{{$}}
// CHECK-NEXT: %2 = memopt.matmul %arg2, %arg3 : tensor<5x1x4x3xf32>, tensor<6x3x7xf32>{{$}}
// CHECK-NEXT: %3 = memopt.matmul %arg4, %arg5 {transpose_a = true, transpose_b = true} : tensor<3x4xf32>, tensor<7x3xf32>{{$}}
// CHECK-NEXT: %4 = memopt.matmul %arg4, %arg6 : tensor<3x4xf32>, tensor<2x5x4x2xf32>{{$}}
// CHECK-NEXT: return %0, %1, %2, %3, %4 : tensor<2x12x64x64xf32>, tensor<2x12x32x32xf32>, tensor<5x6x4x7xf32>, tensor<4x7xf32>, tensor<2x5x3x2xf32>
func.func @matmul(%a: tensor<2x12x64x32xf32>, %b: tensor<2x12x64x32xf32>, %c: tensor<5x1x4x3xf32>,
                  %d: tensor<6x3x7xf32>, %e: tensor<3x4xf32>, %f: tensor<7x3xf32>, %g: tensor<2x5x4x2xf32>)
    -> (tensor<2x12x64x64xf32>, tensor<2x12x32x32xf32>, tensor<5x6x4x7xf32>, tensor<4x7xf32>, tensor<2x5x3x2xf32>) {
  %0 = memopt.matmul %a, %b {transpose_b = true} : tensor<2x12x64x32xf32>, tensor<2x12x64x32xf32>
  // transpose_b = false is the default and disappears.
  %1 = memopt.matmul %a, %b {transpose_a = true, transpose_b = false} : tensor<2x12x64x32xf32>, tensor<2x12x64x32xf32>
  // Batch dimensions 5x1 and 6 broadcast to 5x6.
  %2 = memopt.matmul %c, %d : tensor<5x1x4x3xf32>, tensor<6x3x7xf32>
  %3 = memopt.matmul %e, %f {transpose_a = true, transpose_b = true} : tensor<3x4xf32>, tensor<7x3xf32>
  // A rank-2 operand broadcasts against batch dimensions 2x5.
  %4 = memopt.matmul %e, %g : tensor<3x4xf32>, tensor<2x5x4x2xf32>
  return %0, %1, %2, %3, %4 : tensor<2x12x64x64xf32>, tensor<2x12x32x32xf32>, tensor<5x6x4x7xf32>, tensor<4x7xf32>, tensor<2x5x3x2xf32>
}

//===----------------------------------------------------------------------===//
// Element-wise ops
//===----------------------------------------------------------------------===//

// GENERIC-LABEL: sym_name = "activations"
// GENERIC: %{{.*}} = "memopt.relu"(%{{.*}}) : (tensor<8x64xf16>) -> tensor<8x64xf16>
// GENERIC: %{{.*}} = "memopt.leaky_relu"(%{{.*}}) <{alpha = 1.000000e-02 : f64}> : (tensor<8x64xf16>) -> tensor<8x64xf16>

// CHECK-LABEL: func.func @activations(
// CHECK-NEXT: %0 = memopt.relu %arg0 : tensor<8x64xf16>{{$}}
// CHECK-NEXT: %1 = memopt.gelu %0 : tensor<8x64xf16>{{$}}
// CHECK-NEXT: %2 = memopt.sigmoid %1 : tensor<8x64xf16>{{$}}
// CHECK-NEXT: %3 = memopt.tanh %2 : tensor<8x64xf16>{{$}}
// CHECK-NEXT: %4 = memopt.leaky_relu %3 : tensor<8x64xf16>{{$}}
// CHECK-NEXT: %5 = memopt.leaky_relu %4 {alpha = 2.000000e-01 : f64} : tensor<8x64xf16>{{$}}
// CHECK-NEXT: %6 = memopt.leaky_relu %5 : tensor<8x64xf16>{{$}}
// CHECK-NEXT: %7 = memopt.elu %6 : tensor<8x64xf16>{{$}}
// CHECK-NEXT: %8 = memopt.elu %7 {alpha = 5.000000e-01 : f64} : tensor<8x64xf16>{{$}}
// CHECK-NEXT: %9 = memopt.elu %8 : tensor<8x64xf16>{{$}}
// CHECK-NEXT: return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<8x64xf16>, tensor<8x64xf16>, tensor<8x64xf16>, tensor<8x64xf16>, tensor<8x64xf16>, tensor<8x64xf16>, tensor<8x64xf16>, tensor<8x64xf16>, tensor<8x64xf16>, tensor<8x64xf16>
func.func @activations(%x: tensor<8x64xf16>)
    -> (tensor<8x64xf16>, tensor<8x64xf16>, tensor<8x64xf16>, tensor<8x64xf16>, tensor<8x64xf16>,
        tensor<8x64xf16>, tensor<8x64xf16>, tensor<8x64xf16>, tensor<8x64xf16>, tensor<8x64xf16>) {
  %0 = memopt.relu %x : tensor<8x64xf16>
  %1 = memopt.gelu %0 : tensor<8x64xf16>
  %2 = memopt.sigmoid %1 : tensor<8x64xf16>
  %3 = memopt.tanh %2 : tensor<8x64xf16>
  %4 = memopt.leaky_relu %3 : tensor<8x64xf16>
  %5 = memopt.leaky_relu %4 {alpha = 0.2 : f64} : tensor<8x64xf16>
  // The default alpha (0.01) is elided.
  %6 = memopt.leaky_relu %5 {alpha = 1.000000e-02 : f64} : tensor<8x64xf16>
  %7 = memopt.elu %6 : tensor<8x64xf16>
  %8 = memopt.elu %7 {alpha = 0.5 : f64} : tensor<8x64xf16>
  // The default alpha (1.0) is elided.
  %9 = memopt.elu %8 {alpha = 1.0 : f64} : tensor<8x64xf16>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9
      : tensor<8x64xf16>, tensor<8x64xf16>, tensor<8x64xf16>, tensor<8x64xf16>, tensor<8x64xf16>,
        tensor<8x64xf16>, tensor<8x64xf16>, tensor<8x64xf16>, tensor<8x64xf16>, tensor<8x64xf16>
}

// GENERIC-LABEL: sym_name = "binary"
// GENERIC: %{{.*}} = "memopt.sub"(%{{.*}}, %{{.*}}) : (tensor<64x1x1xf32>, tensor<8x64x32x32xf32>) -> tensor<8x64x32x32xf32>
// GENERIC: %{{.*}} = "memopt.div"(%{{.*}}, %{{.*}}) : (tensor<4x1x3xf64>, tensor<5x1xf64>) -> tensor<4x5x3xf64>

// CHECK-LABEL: func.func @binary(
// CHECK-NEXT: %0 = memopt.add %arg0, %arg1 : tensor<8x64x32x32xf32>, tensor<64x1x1xf32>{{$}}
// CHECK-NEXT: %1 = memopt.mul %arg2, %arg3 : tensor<4x1x3xf64>, tensor<5x1xf64>{{$}}
// CHECK-NEXT: %2 = memopt.mul %arg4, %arg2 : tensor<f64>, tensor<4x1x3xf64>{{$}}
// CHECK-NEXT: %3 = memopt.add %arg0, %arg0 : tensor<8x64x32x32xf32>, tensor<8x64x32x32xf32>{{$}}
// CHECK-NEXT: %4 = memopt.sub %arg1, %arg0 : tensor<64x1x1xf32>, tensor<8x64x32x32xf32>{{$}}
// CHECK-NEXT: %5 = memopt.div %arg2, %arg3 : tensor<4x1x3xf64>, tensor<5x1xf64>{{$}}
// CHECK-NEXT: %6 = memopt.div %arg2, %arg4 : tensor<4x1x3xf64>, tensor<f64>{{$}}
// CHECK-NEXT: %7 = memopt.sub %arg5, %arg5 : tensor<2x3xbf16>, tensor<2x3xbf16>{{$}}
// CHECK-NEXT: %8 = memopt.div %arg5, %7 : tensor<2x3xbf16>, tensor<2x3xbf16>{{$}}
// CHECK-NEXT: return %0, %1, %2, %3, %4, %5, %6, %8 : tensor<8x64x32x32xf32>, tensor<4x5x3xf64>, tensor<4x1x3xf64>, tensor<8x64x32x32xf32>, tensor<8x64x32x32xf32>, tensor<4x5x3xf64>, tensor<4x1x3xf64>, tensor<2x3xbf16>
func.func @binary(%a: tensor<8x64x32x32xf32>, %b: tensor<64x1x1xf32>, %c: tensor<4x1x3xf64>,
                  %d: tensor<5x1xf64>, %s: tensor<f64>, %h: tensor<2x3xbf16>)
    -> (tensor<8x64x32x32xf32>, tensor<4x5x3xf64>, tensor<4x1x3xf64>, tensor<8x64x32x32xf32>,
        tensor<8x64x32x32xf32>, tensor<4x5x3xf64>, tensor<4x1x3xf64>, tensor<2x3xbf16>) {
  %0 = memopt.add %a, %b : tensor<8x64x32x32xf32>, tensor<64x1x1xf32>
  // Both operands broadcast: 4x1x3 and 5x1 give 4x5x3.
  %1 = memopt.mul %c, %d : tensor<4x1x3xf64>, tensor<5x1xf64>
  // A 0-d operand broadcasts against anything.
  %2 = memopt.mul %s, %c : tensor<f64>, tensor<4x1x3xf64>
  %3 = memopt.add %a, %a : tensor<8x64x32x32xf32>, tensor<8x64x32x32xf32>
  // sub and div broadcast like add and mul, on either side.
  %4 = memopt.sub %b, %a : tensor<64x1x1xf32>, tensor<8x64x32x32xf32>
  %5 = memopt.div %c, %d : tensor<4x1x3xf64>, tensor<5x1xf64>
  %6 = memopt.div %c, %s : tensor<4x1x3xf64>, tensor<f64>
  %7 = memopt.sub %h, %h : tensor<2x3xbf16>, tensor<2x3xbf16>
  %8 = memopt.div %h, %7 : tensor<2x3xbf16>, tensor<2x3xbf16>
  return %0, %1, %2, %3, %4, %5, %6, %8
      : tensor<8x64x32x32xf32>, tensor<4x5x3xf64>, tensor<4x1x3xf64>, tensor<8x64x32x32xf32>,
        tensor<8x64x32x32xf32>, tensor<4x5x3xf64>, tensor<4x1x3xf64>, tensor<2x3xbf16>
}

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

// silu and its backward.
// CHECK-LABEL: func.func @silu(
// CHECK-NEXT: %0 = memopt.silu %arg0 : tensor<4x8xf32>{{$}}
// CHECK-NEXT: %1 = memopt.silu_backward %0, %arg0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
func.func @silu(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = memopt.silu %x : tensor<4x8xf32>
  %d = memopt.silu_backward %y, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %d : tensor<4x8xf32>
}

// exp, log, sqrt and abs, and their backward ops.
// CHECK-LABEL: func.func @unary_math(
// CHECK-NEXT: %0 = memopt.exp %arg0 : tensor<4x8xf32>{{$}}
// CHECK-NEXT: %1 = memopt.log %0 : tensor<4x8xf32>{{$}}
// CHECK-NEXT: %2 = memopt.sqrt %1 : tensor<4x8xf32>{{$}}
// CHECK-NEXT: %3 = memopt.abs %2 : tensor<4x8xf32>{{$}}
// CHECK-NEXT: %4 = memopt.exp_backward %3, %0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %5 = memopt.log_backward %4, %arg0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %6 = memopt.sqrt_backward %5, %2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %7 = memopt.abs_backward %6, %arg0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
func.func @unary_math(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = memopt.exp %x : tensor<4x8xf32>
  %l = memopt.log %e : tensor<4x8xf32>
  %s = memopt.sqrt %l : tensor<4x8xf32>
  %a = memopt.abs %s : tensor<4x8xf32>
  %de = memopt.exp_backward %a, %e : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %dl = memopt.log_backward %de, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %ds = memopt.sqrt_backward %dl, %s : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %da = memopt.abs_backward %ds, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %da : tensor<4x8xf32>
}

// RMS norm: the default epsilon (1e-6) is elided; its backward prints in
// the functional form of the gradient ops, its results named.
// GENERIC-LABEL: sym_name = "rms_norms"
// GENERIC: "memopt.rms_norm"(%{{.*}}, %{{.*}}) <{epsilon = 9.9999999999999995E-7 : f64}> : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
// CHECK-LABEL: func.func @rms_norms(
// CHECK-NEXT: %0 = memopt.rms_norm %arg0, %arg1 : tensor<4x16xf32>, tensor<16xf32>{{$}}
// CHECK-NEXT: %1 = memopt.rms_norm %arg0, %arg1 {epsilon = 1.000000e-05 : f64} : tensor<4x16xf32>, tensor<16xf32>{{$}}
// CHECK-NEXT: %grad_x, %grad_gamma = memopt.rms_norm_backward %arg0, %arg0, %arg1 {epsilon = 1.000000e-05 : f64} : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<16xf32>) -> (tensor<4x16xf32>, tensor<16xf32>)
func.func @rms_norms(%x: tensor<4x16xf32>, %g: tensor<16xf32>)
    -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<16xf32>) {
  %a = memopt.rms_norm %x, %g {epsilon = 1.0e-6 : f64} : tensor<4x16xf32>, tensor<16xf32>
  %b = memopt.rms_norm %x, %g {epsilon = 1.0e-5 : f64} : tensor<4x16xf32>, tensor<16xf32>
  %dx, %dg = memopt.rms_norm_backward %x, %x, %g {epsilon = 1.0e-5 : f64}
      : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<16xf32>) -> (tensor<4x16xf32>, tensor<16xf32>)
  return %a, %b, %dx, %dg : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<16xf32>
}

// GENERIC-LABEL: sym_name = "norms"
// GENERIC: %{{.*}}:3 = "memopt.batch_norm"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{epsilon = 1.000000e-05 : f64, momentum = 1.000000e-01 : f64}> : (tensor<8x64x32x32xbf16>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<8x64x32x32xbf16>, tensor<64xf32>, tensor<64xf32>)

// Batch norm keeps its statistics in f32 while x is bf16 (mixed precision).
// CHECK-LABEL: func.func @norms(
// CHECK-NEXT: %result, %new_running_mean, %new_running_var = memopt.batch_norm %arg0, %arg1, %arg2, %arg3, %arg4 : tensor<8x64x32x32xbf16>, tensor<64xf32>{{$}}
// CHECK-NEXT: %result_0, %new_running_mean_1, %new_running_var_2 = memopt.batch_norm %arg0, %arg1, %arg2, %arg3, %arg4 {epsilon = 1.000000e-03 : f64, momentum = 1.000000e-02 : f64} : tensor<8x64x32x32xbf16>, tensor<64xf32>{{$}}
// CHECK-NEXT: %result_3, %new_running_mean_4, %new_running_var_5 = memopt.batch_norm %arg10, %arg11, %arg11, %arg11, %arg11 : tensor<4x3xf32>, tensor<3xf32>{{$}}
// CHECK-NEXT: %0 = memopt.layer_norm %arg5, %arg6, %arg7 : tensor<4x128x768xf32>, tensor<768xf32>{{$}}
// CHECK-NEXT: %1 = memopt.layer_norm %arg5, %arg8, %arg9 {epsilon = 1.000000e-03 : f64} : tensor<4x128x768xf32>, tensor<128x768xf32>{{$}}
// CHECK-NEXT: return %result, %new_running_mean, %new_running_var, %result_0, %new_running_mean_1, %new_running_var_2, %result_3, %0, %1 : tensor<8x64x32x32xbf16>, tensor<64xf32>, tensor<64xf32>, tensor<8x64x32x32xbf16>, tensor<64xf32>, tensor<64xf32>, tensor<4x3xf32>, tensor<4x128x768xf32>, tensor<4x128x768xf32>
func.func @norms(%x: tensor<8x64x32x32xbf16>, %g: tensor<64xf32>, %b: tensor<64xf32>, %m: tensor<64xf32>,
                 %v: tensor<64xf32>, %t: tensor<4x128x768xf32>, %lg: tensor<768xf32>, %lb: tensor<768xf32>,
                 %g2: tensor<128x768xf32>, %b2: tensor<128x768xf32>, %x2: tensor<4x3xf32>, %g3: tensor<3xf32>)
    -> (tensor<8x64x32x32xbf16>, tensor<64xf32>, tensor<64xf32>, tensor<8x64x32x32xbf16>, tensor<64xf32>,
        tensor<64xf32>, tensor<4x3xf32>, tensor<4x128x768xf32>, tensor<4x128x768xf32>) {
  %y, %nm, %nv = memopt.batch_norm %x, %g, %b, %m, %v : tensor<8x64x32x32xbf16>, tensor<64xf32>
  %y2:3 = memopt.batch_norm %x, %g, %b, %m, %v {epsilon = 1.0e-3 : f64, momentum = 0.01 : f64}
      : tensor<8x64x32x32xbf16>, tensor<64xf32>
  // Rank-2 input (BatchNorm1d); the default epsilon and momentum are elided.
  %y3:3 = memopt.batch_norm %x2, %g3, %g3, %g3, %g3 {epsilon = 1.0e-5 : f64, momentum = 0.1 : f64}
      : tensor<4x3xf32>, tensor<3xf32>
  // Normalised over the last dimension, then over the last two.
  %z = memopt.layer_norm %t, %lg, %lb : tensor<4x128x768xf32>, tensor<768xf32>
  %z2 = memopt.layer_norm %t, %g2, %b2 {epsilon = 1.0e-3 : f64} : tensor<4x128x768xf32>, tensor<128x768xf32>
  return %y, %nm, %nv, %y2#0, %y2#1, %y2#2, %y3#0, %z, %z2
      : tensor<8x64x32x32xbf16>, tensor<64xf32>, tensor<64xf32>, tensor<8x64x32x32xbf16>, tensor<64xf32>,
        tensor<64xf32>, tensor<4x3xf32>, tensor<4x128x768xf32>, tensor<4x128x768xf32>
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

// GENERIC-LABEL: sym_name = "pooling"
// GENERIC: %{{.*}} = "memopt.max_pool2d"(%{{.*}}) <{kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>}> : (tensor<8x64x112x112xf32>) -> tensor<8x64x56x56xf32>

// CHECK-LABEL: func.func @pooling(
// CHECK-NEXT: %0 = memopt.max_pool2d %arg0 {kernel_size = array<i64: 2, 2>} : tensor<8x64x112x112xf32>{{$}}
// CHECK-NEXT: %1 = memopt.max_pool2d %arg0 {kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, strides = array<i64: 2, 2>} : tensor<8x64x112x112xf32>{{$}}
// CHECK-NEXT: %2 = memopt.avg_pool2d %arg0 {kernel_size = array<i64: 3, 3>} : tensor<8x64x112x112xf32>{{$}}
// CHECK-NEXT: %3 = memopt.avg_pool2d %arg0 {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<8x64x112x112xf32>{{$}}
// CHECK-NEXT: %4 = memopt.avg_pool2d %arg0 {kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, strides = array<i64: 1, 1>} : tensor<8x64x112x112xf32>{{$}}
// CHECK-NEXT: %5 = memopt.max_pool2d %arg0 {kernel_size = array<i64: 2, 3>, padding = array<i64: 1, 0>, strides = array<i64: 3, 1>} : tensor<8x64x112x112xf32>{{$}}
// CHECK-NEXT: %6 = memopt.global_avg_pool2d %arg0 : tensor<8x64x112x112xf32>{{$}}
// CHECK-NEXT: return %0, %1, %2, %3, %4, %5, %6 : tensor<8x64x56x56xf32>, tensor<8x64x56x56xf32>, tensor<8x64x37x37xf32>, tensor<8x64x56x56xf32>, tensor<8x64x112x112xf32>, tensor<8x64x38x110xf32>, tensor<8x64xf32>
func.func @pooling(%x: tensor<8x64x112x112xf32>)
    -> (tensor<8x64x56x56xf32>, tensor<8x64x56x56xf32>, tensor<8x64x37x37xf32>, tensor<8x64x56x56xf32>,
        tensor<8x64x112x112xf32>, tensor<8x64x38x110xf32>, tensor<8x64xf32>) {
  // Strides default to the kernel size.
  %0 = memopt.max_pool2d %x {kernel_size = array<i64: 2, 2>} : tensor<8x64x112x112xf32>
  %1 = memopt.max_pool2d %x {kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, strides = array<i64: 2, 2>}
      : tensor<8x64x112x112xf32>
  %2 = memopt.avg_pool2d %x {kernel_size = array<i64: 3, 3>} : tensor<8x64x112x112xf32>
  // Zero padding is the default and disappears; explicit strides stay.
  %3 = memopt.avg_pool2d %x {kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>, strides = array<i64: 2, 2>}
      : tensor<8x64x112x112xf32>
  %4 = memopt.avg_pool2d %x {kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, strides = array<i64: 1, 1>}
      : tensor<8x64x112x112xf32>
  // OH = (112 + 2 - 2) / 3 + 1 = 38, OW = (112 - 3) / 1 + 1 = 110.
  %5 = memopt.max_pool2d %x {kernel_size = array<i64: 2, 3>, padding = array<i64: 1, 0>, strides = array<i64: 3, 1>}
      : tensor<8x64x112x112xf32>
  %6 = memopt.global_avg_pool2d %x : tensor<8x64x112x112xf32>
  return %0, %1, %2, %3, %4, %5, %6
      : tensor<8x64x56x56xf32>, tensor<8x64x56x56xf32>, tensor<8x64x37x37xf32>, tensor<8x64x56x56xf32>,
        tensor<8x64x112x112xf32>, tensor<8x64x38x110xf32>, tensor<8x64xf32>
}

//===----------------------------------------------------------------------===//
// softmax, dropout
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @softmax_dropout(
// CHECK-NEXT: %0 = memopt.softmax %arg0 : tensor<2x12x64x64xf32>{{$}}
// CHECK-NEXT: %1 = memopt.softmax %arg0 {axis = 1 : i64} : tensor<2x12x64x64xf32>{{$}}
// CHECK-NEXT: %2 = memopt.softmax %arg0 {causal = true} : tensor<2x12x64x64xf32>{{$}}
// CHECK-NEXT: %3 = memopt.softmax %arg0 : tensor<2x12x64x64xf32>{{$}}
// CHECK-NEXT: %4 = memopt.softmax %arg0 {axis = 3 : i64, causal = true} : tensor<2x12x64x64xf32>{{$}}
// CHECK-NEXT: %5 = memopt.dropout %arg0 : tensor<2x12x64x64xf32>{{$}}
// CHECK-NEXT: %6 = memopt.dropout %arg0 {p = 1.000000e-01 : f64, seed = 7 : i64} : tensor<2x12x64x64xf32>{{$}}
// CHECK-NEXT: %7 = memopt.dropout %arg0 : tensor<2x12x64x64xf32>{{$}}
// CHECK-NEXT: %8 = memopt.dropout %arg0 {p = 0.000000e+00 : f64} : tensor<2x12x64x64xf32>{{$}}
// CHECK-NEXT: %9 = memopt.softmax %arg0 {safe = true} : tensor<2x12x64x64xf32>{{$}}
// CHECK-NEXT: return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 :
func.func @softmax_dropout(%s: tensor<2x12x64x64xf32>)
    -> (tensor<2x12x64x64xf32>, tensor<2x12x64x64xf32>, tensor<2x12x64x64xf32>, tensor<2x12x64x64xf32>,
        tensor<2x12x64x64xf32>, tensor<2x12x64x64xf32>, tensor<2x12x64x64xf32>, tensor<2x12x64x64xf32>,
        tensor<2x12x64x64xf32>, tensor<2x12x64x64xf32>) {
  %0 = memopt.softmax %s : tensor<2x12x64x64xf32>
  %1 = memopt.softmax %s {axis = 1 : i64} : tensor<2x12x64x64xf32>
  %2 = memopt.softmax %s {causal = true} : tensor<2x12x64x64xf32>
  // axis = -1 and causal = false are the defaults.
  %3 = memopt.softmax %s {axis = -1 : i64, causal = false} : tensor<2x12x64x64xf32>
  // The last axis written as a non-negative index is kept as written.
  %4 = memopt.softmax %s {axis = 3 : i64, causal = true} : tensor<2x12x64x64xf32>
  %5 = memopt.dropout %s : tensor<2x12x64x64xf32>
  %6 = memopt.dropout %s {p = 1.000000e-01 : f64, seed = 7 : i64} : tensor<2x12x64x64xf32>
  // p = 0.5 and seed = 0 are the defaults.
  %7 = memopt.dropout %s {p = 0.5 : f64, seed = 0 : i64} : tensor<2x12x64x64xf32>
  %8 = memopt.dropout %s {p = 0.0 : f64} : tensor<2x12x64x64xf32>
  // A fully masked row is 0 (PyTorch's _safe_softmax), not NaN.
  %9 = memopt.softmax %s {safe = true, causal = false} : tensor<2x12x64x64xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9
      : tensor<2x12x64x64xf32>, tensor<2x12x64x64xf32>, tensor<2x12x64x64xf32>, tensor<2x12x64x64xf32>,
        tensor<2x12x64x64xf32>, tensor<2x12x64x64xf32>, tensor<2x12x64x64xf32>, tensor<2x12x64x64xf32>,
        tensor<2x12x64x64xf32>, tensor<2x12x64x64xf32>
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

// GENERIC-LABEL: sym_name = "movement"
// GENERIC: %{{.*}} = "memopt.reshape"(%{{.*}}) : (tensor<8x512x7x7xf32>) -> tensor<8x25088xf32>
// GENERIC: %{{.*}} = "memopt.slice"(%{{.*}}) <{offsets = array<i64: 0, 0, 768>, sizes = array<i64: 2, 64, 768>}> : (tensor<2x64x2304xf32>) -> tensor<2x64x768xf32>

// CHECK-LABEL: func.func @movement(
// CHECK-NEXT: %0 = memopt.reshape %arg0 : tensor<8x512x7x7xf32> -> tensor<8x25088xf32>{{$}}
// CHECK-NEXT: %1 = memopt.reshape %arg3 : tensor<4x6xi64> -> tensor<24xi64>{{$}}
// CHECK-NEXT: %2 = memopt.reshape %arg4 : tensor<f32> -> tensor<1x1xf32>{{$}}
// CHECK-NEXT: %3 = memopt.transpose %arg1 {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x64x12x64xf32>{{$}}
// CHECK-NEXT: %4 = memopt.transpose %arg3 {permutation = array<i64: 1, 0>} : tensor<4x6xi64>{{$}}
// CHECK-NEXT: %5 = memopt.slice %arg2 {offsets = array<i64: 0, 0, 768>, sizes = array<i64: 2, 64, 768>} : tensor<2x64x2304xf32>{{$}}
// CHECK-NEXT: %6 = memopt.slice %arg2 {offsets = array<i64: 1, 1, 3>, sizes = array<i64: 1, 32, 256>, strides = array<i64: 1, 2, 9>} : tensor<2x64x2304xf32>{{$}}
// CHECK-NEXT: %7 = memopt.slice %arg3 {offsets = array<i64: 1, 0>, sizes = array<i64: 2, 3>, strides = array<i64: 1, 1>} : tensor<4x6xi64>{{$}}
// CHECK-NEXT: return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<8x25088xf32>, tensor<24xi64>, tensor<1x1xf32>, tensor<2x12x64x64xf32>, tensor<6x4xi64>, tensor<2x64x768xf32>, tensor<1x32x256xf32>, tensor<2x3xi64>
func.func @movement(%x: tensor<8x512x7x7xf32>, %q: tensor<2x64x12x64xf32>, %qkv: tensor<2x64x2304xf32>,
                    %ids: tensor<4x6xi64>, %s: tensor<f32>)
    -> (tensor<8x25088xf32>, tensor<24xi64>, tensor<1x1xf32>, tensor<2x12x64x64xf32>, tensor<6x4xi64>,
        tensor<2x64x768xf32>, tensor<1x32x256xf32>, tensor<2x3xi64>) {
  %0 = memopt.reshape %x : tensor<8x512x7x7xf32> -> tensor<8x25088xf32>
  %1 = memopt.reshape %ids : tensor<4x6xi64> -> tensor<24xi64>
  %2 = memopt.reshape %s : tensor<f32> -> tensor<1x1xf32>
  %3 = memopt.transpose %q {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x64x12x64xf32>
  %4 = memopt.transpose %ids {permutation = array<i64: 1, 0>} : tensor<4x6xi64>
  %5 = memopt.slice %qkv {offsets = array<i64: 0, 0, 768>, sizes = array<i64: 2, 64, 768>} : tensor<2x64x2304xf32>
  // Every ninth column from 3: the last one read is 3 + 255 * 9 = 2298.
  %6 = memopt.slice %qkv {offsets = array<i64: 1, 1, 3>, sizes = array<i64: 1, 32, 256>, strides = array<i64: 1, 2, 9>}
      : tensor<2x64x2304xf32>
  // Strides are optional rather than defaulted: unit strides are kept.
  %7 = memopt.slice %ids {offsets = array<i64: 1, 0>, sizes = array<i64: 2, 3>, strides = array<i64: 1, 1>}
      : tensor<4x6xi64>
  return %0, %1, %2, %3, %4, %5, %6, %7
      : tensor<8x25088xf32>, tensor<24xi64>, tensor<1x1xf32>, tensor<2x12x64x64xf32>, tensor<6x4xi64>,
        tensor<2x64x768xf32>, tensor<1x32x256xf32>, tensor<2x3xi64>
}

// CHECK-LABEL: func.func @concat(
// CHECK-NEXT: %0 = memopt.concat %arg0, %arg1, %arg2 {axis = 1 : i64} : tensor<8x64x28x28xf32>, tensor<8x32x28x28xf32>, tensor<8x16x28x28xf32>{{$}}
// CHECK-NEXT: %1 = memopt.concat %arg3, %arg4, %arg5 {axis = -1 : i64} : tensor<2x3xi32>, tensor<2x5xi32>, tensor<2x1xi32>{{$}}
// CHECK-NEXT: %2 = memopt.concat %arg0, %arg0, %arg0 {axis = -4 : i64} : tensor<8x64x28x28xf32>, tensor<8x64x28x28xf32>, tensor<8x64x28x28xf32>{{$}}
// CHECK-NEXT: %3 = memopt.concat %arg0 {axis = 0 : i64} : tensor<8x64x28x28xf32>{{$}}
// CHECK-NEXT: return %0, %1, %2, %3 : tensor<8x112x28x28xf32>, tensor<2x9xi32>, tensor<24x64x28x28xf32>, tensor<8x64x28x28xf32>
func.func @concat(%a: tensor<8x64x28x28xf32>, %b: tensor<8x32x28x28xf32>, %c: tensor<8x16x28x28xf32>,
                  %d: tensor<2x3xi32>, %e: tensor<2x5xi32>, %f: tensor<2x1xi32>)
    -> (tensor<8x112x28x28xf32>, tensor<2x9xi32>, tensor<24x64x28x28xf32>, tensor<8x64x28x28xf32>) {
  %0 = memopt.concat %a, %b, %c {axis = 1 : i64}
      : tensor<8x64x28x28xf32>, tensor<8x32x28x28xf32>, tensor<8x16x28x28xf32>
  %1 = memopt.concat %d, %e, %f {axis = -1 : i64} : tensor<2x3xi32>, tensor<2x5xi32>, tensor<2x1xi32>
  %2 = memopt.concat %a, %a, %a {axis = -4 : i64}
      : tensor<8x64x28x28xf32>, tensor<8x64x28x28xf32>, tensor<8x64x28x28xf32>
  %3 = memopt.concat %a {axis = 0 : i64} : tensor<8x64x28x28xf32>
  return %0, %1, %2, %3 : tensor<8x112x28x28xf32>, tensor<2x9xi32>, tensor<24x64x28x28xf32>, tensor<8x64x28x28xf32>
}

// CHECK-LABEL: func.func @upsample_embedding(
// CHECK-NEXT: %0 = memopt.upsample_nearest2d %arg0 {scale = 2 : i64} : tensor<1x512x16x8xf32>{{$}}
// CHECK-NEXT: %1 = memopt.upsample_nearest2d %arg0 {scale = 3 : i64} : tensor<1x512x16x8xf32>{{$}}
// CHECK-NEXT: %2 = memopt.embedding %arg1, %arg2 : tensor<50257x768xbf16>, tensor<4x128xi64>{{$}}
// CHECK-NEXT: %3 = memopt.embedding %arg1, %arg3 : tensor<50257x768xbf16>, tensor<7xi32>{{$}}
// CHECK-NEXT: return %0, %1, %2, %3 : tensor<1x512x32x16xf32>, tensor<1x512x48x24xf32>, tensor<4x128x768xbf16>, tensor<7x768xbf16>
func.func @upsample_embedding(%x: tensor<1x512x16x8xf32>, %wte: tensor<50257x768xbf16>, %ids: tensor<4x128xi64>,
                              %ids32: tensor<7xi32>)
    -> (tensor<1x512x32x16xf32>, tensor<1x512x48x24xf32>, tensor<4x128x768xbf16>, tensor<7x768xbf16>) {
  %0 = memopt.upsample_nearest2d %x {scale = 2 : i64} : tensor<1x512x16x8xf32>
  %1 = memopt.upsample_nearest2d %x {scale = 3 : i64} : tensor<1x512x16x8xf32>
  %2 = memopt.embedding %wte, %ids : tensor<50257x768xbf16>, tensor<4x128xi64>
  %3 = memopt.embedding %wte, %ids32 : tensor<50257x768xbf16>, tensor<7xi32>
  return %0, %1, %2, %3 : tensor<1x512x32x16xf32>, tensor<1x512x48x24xf32>, tensor<4x128x768xbf16>, tensor<7x768xbf16>
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

// GENERIC-LABEL: sym_name = "losses"
// GENERIC: %{{.*}} = "memopt.cross_entropy"(%{{.*}}, %{{.*}}) : (tensor<64x10xf32>, tensor<64xi64>) -> tensor<f32>
// GENERIC: %{{.*}} = "memopt.mse_loss"(%{{.*}}, %{{.*}}) : (tensor<8x1x64x64xf64>, tensor<8x1x64x64xf64>) -> tensor<f64>

// CHECK-LABEL: func.func @losses(
// CHECK-NEXT: %0 = memopt.cross_entropy %arg0, %arg1 : tensor<64x10xf32>, tensor<64xi64>{{$}}
// CHECK-NEXT: %1 = memopt.cross_entropy %arg2, %arg3 : tensor<64x10xf16>, tensor<64xi32>{{$}}
// CHECK-NEXT: %2 = memopt.mse_loss %arg4, %arg5 : tensor<8x1x64x64xf64>{{$}}
// CHECK-NEXT: return %0, %1, %2 : tensor<f32>, tensor<f16>, tensor<f64>
func.func @losses(%logits: tensor<64x10xf32>, %labels: tensor<64xi64>, %l16: tensor<64x10xf16>,
                  %labels32: tensor<64xi32>, %y: tensor<8x1x64x64xf64>, %t: tensor<8x1x64x64xf64>)
    -> (tensor<f32>, tensor<f16>, tensor<f64>) {
  %0 = memopt.cross_entropy %logits, %labels : tensor<64x10xf32>, tensor<64xi64>
  %1 = memopt.cross_entropy %l16, %labels32 : tensor<64x10xf16>, tensor<64xi32>
  %2 = memopt.mse_loss %y, %t : tensor<8x1x64x64xf64>
  return %0, %1, %2 : tensor<f32>, tensor<f16>, tensor<f64>
}

//===----------------------------------------------------------------------===//
// A training graph with parameter and state arguments
//===----------------------------------------------------------------------===//

// GENERIC-LABEL: "func.func"() <{arg_attrs = [{memopt.param}, {memopt.param}, {memopt.param}, {memopt.param}, {memopt.state}, {memopt.state}, {memopt.param}, {}, {}]
// GENERIC-SAME: sym_name = "train"

// CHECK-LABEL: func.func @train(
// CHECK-SAME: %arg0: tensor<32x16xf32> {memopt.param}, %arg1: tensor<32xf32> {memopt.param}, %arg2: tensor<32xf32> {memopt.param}, %arg3: tensor<32xf32> {memopt.param}, %arg4: tensor<32xf32> {memopt.state}, %arg5: tensor<32xf32> {memopt.state}, %arg6: tensor<10x32xf32> {memopt.param}, %arg7: tensor<8x16xf32>, %arg8: tensor<8xi64>) -> (tensor<f32>, tensor<32xf32>, tensor<32xf32>) {
// CHECK-NEXT: %0 = memopt.linear %arg7, %arg0, %arg1 : tensor<8x16xf32>, tensor<32x16xf32>, tensor<32xf32>{{$}}
// CHECK-NEXT: %result, %new_running_mean, %new_running_var = memopt.batch_norm %0, %arg2, %arg3, %arg4, %arg5 : tensor<8x32xf32>, tensor<32xf32>{{$}}
// CHECK-NEXT: %1 = memopt.relu %result : tensor<8x32xf32>{{$}}
// CHECK-NEXT: %2 = memopt.dropout %1 {p = 2.500000e-01 : f64, seed = 3 : i64} : tensor<8x32xf32>{{$}}
// CHECK-NEXT: %3 = memopt.linear %2, %arg6 : tensor<8x32xf32>, tensor<10x32xf32>{{$}}
// CHECK-NEXT: %4 = memopt.cross_entropy %3, %arg8 : tensor<8x10xf32>, tensor<8xi64>{{$}}
// CHECK-NEXT: return %4, %new_running_mean, %new_running_var : tensor<f32>, tensor<32xf32>, tensor<32xf32>
func.func @train(%w1: tensor<32x16xf32> {memopt.param}, %b1: tensor<32xf32> {memopt.param},
                 %g: tensor<32xf32> {memopt.param}, %beta: tensor<32xf32> {memopt.param},
                 %mean: tensor<32xf32> {memopt.state}, %var: tensor<32xf32> {memopt.state},
                 %w2: tensor<10x32xf32> {memopt.param}, %x: tensor<8x16xf32>, %labels: tensor<8xi64>)
    -> (tensor<f32>, tensor<32xf32>, tensor<32xf32>) {
  %h = memopt.linear %x, %w1, %b1 : tensor<8x16xf32>, tensor<32x16xf32>, tensor<32xf32>
  %n:3 = memopt.batch_norm %h, %g, %beta, %mean, %var : tensor<8x32xf32>, tensor<32xf32>
  %a = memopt.relu %n#0 : tensor<8x32xf32>
  %d = memopt.dropout %a {p = 0.25 : f64, seed = 3 : i64} : tensor<8x32xf32>
  %logits = memopt.linear %d, %w2 : tensor<8x32xf32>, tensor<10x32xf32>
  %loss = memopt.cross_entropy %logits, %labels : tensor<8x10xf32>, tensor<8xi64>
  return %loss, %n#1, %n#2 : tensor<f32>, tensor<32xf32>, tensor<32xf32>
}

// -----

// CHECK-LABEL: func.func @compare(
// CHECK-NEXT: %0 = memopt.compare %arg0 {predicate = "ne", value = 0.000000e+00 : f64} : tensor<2x8xi64>{{$}}
// CHECK-NEXT: %1 = memopt.compare %arg1 {predicate = "le", value = 2.500000e-01 : f64} : tensor<4xf16>{{$}}
// CHECK-NEXT: return %0, %1 : tensor<2x8xf32>, tensor<4xf32>
func.func @compare(%ids: tensor<2x8xi64>, %x: tensor<4xf16>) -> (tensor<2x8xf32>, tensor<4xf32>) {
  %0 = memopt.compare %ids {predicate = "ne", value = 0.0 : f64} : tensor<2x8xi64>
  %1 = memopt.compare %x {predicate = "le", value = 0.25 : f64} : tensor<4xf16>
  return %0, %1 : tensor<2x8xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @extrema(
// CHECK-NEXT: %0 = memopt.maximum %arg0, %arg1 : tensor<2x3xf32>, tensor<3xf32>{{$}}
// CHECK-NEXT: %1 = memopt.minimum %0, %arg0 : tensor<2x3xf32>, tensor<2x3xf32>{{$}}
// CHECK-NEXT: %2 = memopt.reduce_max %1 : tensor<2x3xf32>{{$}}
// CHECK-NEXT: %3 = memopt.reduce_min %arg0 : tensor<2x3xf32>{{$}}
// CHECK-NEXT: %4 = memopt.maximum_weight %arg0, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>{{$}}
// CHECK-NEXT: %5 = memopt.reduce_extremum_backward %2, %arg0, %3 : (tensor<2x1xf32>, tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>{{$}}
func.func @extrema(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = memopt.maximum %a, %b : tensor<2x3xf32>, tensor<3xf32>
  %1 = memopt.minimum %0, %a : tensor<2x3xf32>, tensor<2x3xf32>
  %2 = memopt.reduce_max %1 : tensor<2x3xf32>
  %3 = memopt.reduce_min %a : tensor<2x3xf32>
  %4 = memopt.maximum_weight %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %5 = memopt.reduce_extremum_backward %2, %a, %3 : (tensor<2x1xf32>, tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  return %4, %5 : tensor<2x3xf32>, tensor<2x3xf32>
}

// CHECK-LABEL: func.func @padded_embedding(
// CHECK-NEXT: %0 = memopt.embedding %arg0, %arg1 {padding_idx = 0 : i64} : tensor<10x4xf32>, tensor<2x3xi64>{{$}}
func.func @padded_embedding(%t: tensor<10x4xf32>, %ids: tensor<2x3xi64>) -> tensor<2x3x4xf32> {
  %0 = memopt.embedding %t, %ids {padding_idx = 0 : i64} : tensor<10x4xf32>, tensor<2x3xi64>
  return %0 : tensor<2x3x4xf32>
}
