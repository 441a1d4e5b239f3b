// RUN: memopt-opt %s -split-input-file -verify-diagnostics

// Pooling ops: max_pool2d, avg_pool2d, global_avg_pool2d.

func.func @max_pool2d_padding(%x: tensor<1x1x8x8xf32>) {
  // expected-error @+1 {{'memopt.max_pool2d' op expected 'padding' at most half of 'kernel_size', got padding 2 for kernel 3}}
  %0 = memopt.max_pool2d %x {kernel_size = array<i64: 3, 3>, padding = array<i64: 2, 0>} : tensor<1x1x8x8xf32>
  return
}

// -----

func.func @max_pool2d_missing_kernel(%x: tensor<1x1x8x8xf32>) {
  // expected-error @+1 {{'memopt.max_pool2d' op requires attribute 'kernel_size'}}
  %0 = memopt.max_pool2d %x : tensor<1x1x8x8xf32>
  return
}

// -----

func.func @max_pool2d_kernel_length(%x: tensor<1x1x8x8xf32>) {
  // expected-error @+1 {{'memopt.max_pool2d' op expected 'kernel_size' to have 2 values, got 1}}
  %0 = memopt.max_pool2d %x {kernel_size = array<i64: 2>} : tensor<1x1x8x8xf32>
  return
}

// -----

func.func @max_pool2d_window(%x: tensor<1x1x2x8xf32>) {
  // expected-error @+1 {{'memopt.max_pool2d' op input 2x8 with padding [0, 0] is smaller than the window 3x3}}
  %0 = memopt.max_pool2d %x {kernel_size = array<i64: 3, 3>} : tensor<1x1x2x8xf32>
  return
}

// -----

func.func @max_pool2d_rank(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{'memopt.max_pool2d' op expected 4-D x (NxCxHxW), got rank 3 ('tensor<1x8x8xf32>')}}
  %0 = memopt.max_pool2d %x {kernel_size = array<i64: 2, 2>} : tensor<1x8x8xf32>
  return
}

// -----

func.func @max_pool2d_result_shape(%x: tensor<1x1x8x8xf32>) {
  // expected-error @+1 {{'memopt.max_pool2d' op expected result shape 1x1x4x4, got 1x1x3x3}}
  %0 = "memopt.max_pool2d"(%x) <{kernel_size = array<i64: 2, 2>}> : (tensor<1x1x8x8xf32>) -> tensor<1x1x3x3xf32>
  return
}

// -----

func.func @max_pool2d_padding_overflow(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'memopt.max_pool2d' op expected 'padding' at most half of 'kernel_size', got padding 4611686018427387904 for kernel 2}}
  %0 = memopt.max_pool2d %x {kernel_size = array<i64: 2, 2>, padding = array<i64: 4611686018427387904, 0>} : tensor<1x1x4x4xf32>
  return
}

// -----

func.func @avg_pool2d_padding(%x: tensor<1x1x8x8xf32>) {
  // expected-error @+1 {{'memopt.avg_pool2d' op expected 'padding' at most half of 'kernel_size', got padding 2 for kernel 2}}
  %0 = memopt.avg_pool2d %x {kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 2>} : tensor<1x1x8x8xf32>
  return
}

// -----

func.func @avg_pool2d_missing_kernel_generic(%x: tensor<1x1x8x8xf32>) {
  // expected-error @+1 {{'memopt.avg_pool2d' op requires attribute 'kernel_size'}}
  %0 = "memopt.avg_pool2d"(%x) : (tensor<1x1x8x8xf32>) -> tensor<1x1x4x4xf32>
  return
}

// -----

func.func @avg_pool2d_stride_zero(%x: tensor<1x1x8x8xf32>) {
  // expected-error @+1 {{'memopt.avg_pool2d' op expected 'strides' values ≥ 1, got [0, 2]}}
  %0 = memopt.avg_pool2d %x {kernel_size = array<i64: 2, 2>, strides = array<i64: 0, 2>} : tensor<1x1x8x8xf32>
  return
}

// -----

func.func @avg_pool2d_kernel_zero(%x: tensor<1x1x8x8xf32>) {
  // expected-error @+1 {{'memopt.avg_pool2d' op expected 'kernel_size' values ≥ 1, got [0, 2]}}
  %0 = memopt.avg_pool2d %x {kernel_size = array<i64: 0, 2>} : tensor<1x1x8x8xf32>
  return
}

// -----

func.func @avg_pool2d_result_shape(%x: tensor<1x1x9x9xf32>) {
  // expected-error @+1 {{'memopt.avg_pool2d' op expected result shape 1x1x5x5, got 1x1x4x4}}
  %0 = "memopt.avg_pool2d"(%x) {kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x1x9x9xf32>) -> tensor<1x1x4x4xf32>
  return
}

// -----

func.func @global_avg_pool2d_rank(%x: tensor<8x8x8xf32>) {
  // expected-error @+1 {{'memopt.global_avg_pool2d' op expected 4-D x (NxCxHxW), got rank 3 ('tensor<8x8x8xf32>')}}
  %0 = memopt.global_avg_pool2d %x : tensor<8x8x8xf32>
  return
}

// -----

func.func @global_avg_pool2d_result_shape(%x: tensor<2x8x8x8xf32>) {
  // expected-error @+1 {{'memopt.global_avg_pool2d' op expected result shape 2x8, got 2x8x1x1}}
  %0 = "memopt.global_avg_pool2d"(%x) : (tensor<2x8x8x8xf32>) -> tensor<2x8x1x1xf32>
  return
}
