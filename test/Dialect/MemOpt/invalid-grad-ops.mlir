// RUN: memopt-opt %s -split-input-file -verify-diagnostics

// Backward ops: their verifiers check the forward shape rule of the op they
// differentiate (include/memopt/Contract), so a gradient of an impossible
// forward op is refused as the forward op would be.

func.func @max_pool2d_backward_stride_zero(%g: tensor<1x1x2x2xf32>, %x: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error @+1 {{'memopt.max_pool2d_backward' op expected a 4-D x and two-element window attributes ('kernel_size' and 'strides' ≥ 1, 'padding' ≥ 0)}}
  %r = "memopt.max_pool2d_backward"(%g, %x) <{kernel_size = array<i64: 2, 2>, strides = array<i64: 0, 2>, padding = array<i64: 0, 0>}> : (tensor<1x1x2x2xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  return %r : tensor<1x1x4x4xf32>
}

// -----

func.func @avg_pool2d_backward_window_too_large(%g: tensor<1x1x1x1xf32>) -> tensor<1x1x2x2xf32> {
  // expected-error @+1 {{'memopt.avg_pool2d_backward' op result 2x2 with padding [0, 0] is smaller than the window 3x3}}
  %r = "memopt.avg_pool2d_backward"(%g) <{kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>, padding = array<i64: 0, 0>}> : (tensor<1x1x1x1xf32>) -> tensor<1x1x2x2xf32>
  return %r : tensor<1x1x2x2xf32>
}

// -----

func.func @conv2d_backward_input_groups(%g: tensor<1x4x2x2xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x6x4x4xf32> {
  // expected-error @+1 {{do not form a convolution: expected weight shape 4x6x3x3 for 6 input channels and 1 group(s), got 4x3x3x3}}
  %r = "memopt.conv2d_backward_input"(%g, %w) <{strides = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64}> : (tensor<1x4x2x2xf32>, tensor<4x3x3x3xf32>) -> tensor<1x6x4x4xf32>
  return %r : tensor<1x6x4x4xf32>
}
