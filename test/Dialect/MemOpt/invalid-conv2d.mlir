// RUN: memopt-opt %s -split-input-file -verify-diagnostics

// conv2d: shape rules and attribute constraints (custom and generic forms).

func.func @conv2d_input_rank(%x: tensor<3x32x32xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @+1 {{'memopt.conv2d' op expected 4-D input (NxCxHxW), got rank 3 ('tensor<3x32x32xf32>')}}
  %0 = memopt.conv2d %x, %w : tensor<3x32x32xf32>, tensor<16x3x3x3xf32>
  return
}

// -----

func.func @conv2d_weight_rank(%x: tensor<8x3x32x32xf32>, %w: tensor<16x3x3xf32>) {
  // expected-error @+1 {{'memopt.conv2d' op expected 4-D weight (Kx(C/groups)xRxS), got rank 3 ('tensor<16x3x3xf32>')}}
  %0 = memopt.conv2d %x, %w : tensor<8x3x32x32xf32>, tensor<16x3x3xf32>
  return
}

// -----

func.func @conv2d_element_type(%x: tensor<8x3x32x32xf32>, %w: tensor<16x3x3x3xf16>) {
  // expected-error @+1 {{'memopt.conv2d' op expected weight element type 'f32' (as input), got 'f16'}}
  %0 = memopt.conv2d %x, %w : tensor<8x3x32x32xf32>, tensor<16x3x3x3xf16>
  return
}

// -----

func.func @conv2d_weight_shape(%x: tensor<8x6x32x32xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @+1 {{'memopt.conv2d' op expected weight shape 16x6x3x3 for 6 input channels and 1 group(s), got 16x3x3x3}}
  %0 = memopt.conv2d %x, %w : tensor<8x6x32x32xf32>, tensor<16x3x3x3xf32>
  return
}

// -----

func.func @conv2d_weight_shape_grouped(%x: tensor<8x6x32x32xf32>, %w: tensor<12x3x3x3xf32>) {
  // expected-error @+1 {{'memopt.conv2d' op expected weight shape 12x2x3x3 for 6 input channels and 3 group(s), got 12x3x3x3}}
  %0 = "memopt.conv2d"(%x, %w) <{groups = 3 : i64}> : (tensor<8x6x32x32xf32>, tensor<12x3x3x3xf32>) -> tensor<8x12x30x30xf32>
  return
}

// -----

func.func @conv2d_groups_input_channels(%x: tensor<8x3x32x32xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @+1 {{'memopt.conv2d' op expected input channels (3) and output channels (16) divisible by groups (2)}}
  %0 = memopt.conv2d %x, %w {groups = 2 : i64} : tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>
  return
}

// -----

func.func @conv2d_groups_output_channels(%x: tensor<8x6x32x32xf32>, %w: tensor<10x2x3x3xf32>) {
  // expected-error @+1 {{'memopt.conv2d' op expected input channels (6) and output channels (10) divisible by groups (3)}}
  %0 = "memopt.conv2d"(%x, %w) {groups = 3 : i64} : (tensor<8x6x32x32xf32>, tensor<10x2x3x3xf32>) -> tensor<8x10x30x30xf32>
  return
}

// -----

func.func @conv2d_groups_zero(%x: tensor<8x6x32x32xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @+1 {{'memopt.conv2d' op expected 'groups' ≥ 1, got 0}}
  %0 = memopt.conv2d %x, %w {groups = 0 : i64} : tensor<8x6x32x32xf32>, tensor<16x3x3x3xf32>
  return
}

// -----

func.func @conv2d_bias_size(%x: tensor<8x3x32x32xf32>, %w: tensor<16x3x3x3xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'memopt.conv2d' op expected bias of 16 elements (output channels), got 8}}
  %0 = memopt.conv2d %x, %w, %b : tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>, tensor<8xf32>
  return
}

// -----

func.func @conv2d_bias_rank(%x: tensor<8x3x32x32xf32>, %w: tensor<16x3x3x3xf32>, %b: tensor<16x1xf32>) {
  // expected-error @+1 {{'memopt.conv2d' op expected bias of rank 1, got rank 2 ('tensor<16x1xf32>')}}
  %0 = memopt.conv2d %x, %w, %b : tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>, tensor<16x1xf32>
  return
}

// -----

func.func @conv2d_bias_element_type(%x: tensor<8x3x32x32xf32>, %w: tensor<16x3x3x3xf32>, %b: tensor<16xf16>) {
  // expected-error @+1 {{'memopt.conv2d' op expected bias element type 'f32' (as input), got 'f16'}}
  %0 = memopt.conv2d %x, %w, %b : tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>, tensor<16xf16>
  return
}

// -----

func.func @conv2d_stride_zero(%x: tensor<8x3x32x32xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @+1 {{'memopt.conv2d' op expected 'strides' values ≥ 1, got [1, 0]}}
  %0 = memopt.conv2d %x, %w {strides = array<i64: 1, 0>} : tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>
  return
}

// -----

func.func @conv2d_padding_length(%x: tensor<8x3x32x32xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @+1 {{'memopt.conv2d' op expected 'padding' to have 2 values, got 3}}
  %0 = memopt.conv2d %x, %w {padding = array<i64: 1, 1, 1>} : tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>
  return
}

// -----

func.func @conv2d_padding_negative(%x: tensor<8x3x32x32xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @+1 {{'memopt.conv2d' op expected 'padding' values ≥ 0, got [-1, 0]}}
  %0 = memopt.conv2d %x, %w {padding = array<i64: -1, 0>} : tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>
  return
}

// -----

func.func @conv2d_dilation_zero(%x: tensor<8x3x32x32xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @+1 {{'memopt.conv2d' op expected 'dilations' values ≥ 1, got [0, 1]}}
  %0 = memopt.conv2d %x, %w {dilations = array<i64: 0, 1>} : tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>
  return
}

// -----

func.func @conv2d_strides_type(%x: tensor<8x3x32x32xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @+1 {{'memopt.conv2d' op attribute 'strides' failed to satisfy constraint: i64 dense array attribute}}
  %0 = memopt.conv2d %x, %w {strides = [1, 1]} : tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>
  return
}

// -----

// The output would be empty: the dilated kernel (5x5) does not fit.
func.func @conv2d_output_empty(%x: tensor<8x3x4x4xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @+1 {{'memopt.conv2d' op input 4x4 with padding [0, 0] is smaller than the dilated kernel 5x5}}
  %0 = memopt.conv2d %x, %w {dilations = array<i64: 2, 2>} : tensor<8x3x4x4xf32>, tensor<16x3x3x3xf32>
  return
}

// -----

func.func @conv2d_output_empty_padded(%x: tensor<8x3x1x8xf32>, %w: tensor<16x3x5x3xf32>) {
  // expected-error @+1 {{'memopt.conv2d' op input 1x8 with padding [1, 1] is smaller than the dilated kernel 5x3}}
  %0 = "memopt.conv2d"(%x, %w) <{padding = array<i64: 1, 1>}> : (tensor<8x3x1x8xf32>, tensor<16x3x5x3xf32>) -> tensor<8x16x1x8xf32>
  return
}

// -----

func.func @conv2d_result_shape(%x: tensor<8x3x32x32xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @+1 {{'memopt.conv2d' op expected result shape 8x16x30x30, got 8x16x31x31}}
  %0 = "memopt.conv2d"(%x, %w) : (tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<8x16x31x31xf32>
  return
}

// -----

func.func @conv2d_result_shape_strided(%x: tensor<8x3x32x32xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @+1 {{'memopt.conv2d' op expected result shape 8x16x16x16, got 8x16x15x15}}
  %0 = "memopt.conv2d"(%x, %w) {padding = array<i64: 1, 1>, strides = array<i64: 2, 2>} : (tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<8x16x15x15xf32>
  return
}

// -----

func.func @conv2d_result_element_type(%x: tensor<8x3x32x32xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @+1 {{'memopt.conv2d' op expected result type 'tensor<8x16x30x30xf32>', got 'tensor<8x16x30x30xf16>'}}
  %0 = "memopt.conv2d"(%x, %w) : (tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<8x16x30x30xf16>
  return
}

// -----

func.func @conv2d_dynamic(%x: tensor<8x3x?x32xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @+1 {{'memopt.conv2d' op expected input to have a static shape, got 'tensor<8x3x?x32xf32>'}}
  %0 = memopt.conv2d %x, %w : tensor<8x3x?x32xf32>, tensor<16x3x3x3xf32>
  return
}

// -----

func.func @conv2d_dynamic_generic(%x: tensor<8x3x?x32xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @+1 {{'memopt.conv2d' op operand #0 must be statically shaped tensor of f16, bf16, f32 or f64}}
  %0 = "memopt.conv2d"(%x, %w) : (tensor<8x3x?x32xf32>, tensor<16x3x3x3xf32>) -> tensor<8x16x30x30xf32>
  return
}

// -----

func.func @conv2d_too_few_operands(%x: tensor<8x3x32x32xf32>) {
  // expected-error @+1 {{'memopt.conv2d' op expected 2 or more operands, but found 1}}
  %0 = "memopt.conv2d"(%x) : (tensor<8x3x32x32xf32>) -> tensor<8x16x30x30xf32>
  return
}

// -----

func.func @conv2d_padding_overflow(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x1x1xf32>) {
  // expected-error @+1 {{'memopt.conv2d' op 'padding' [4611686018427387904, 0] overflows 64-bit sizes}}
  %0 = memopt.conv2d %x, %w {padding = array<i64: 4611686018427387904, 0>} : tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>
  return
}

// -----

func.func @conv2d_dilation_overflow(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>) {
  // expected-error @+1 {{'memopt.conv2d' op 'dilations' [4611686018427387904, 1] overflow 64-bit sizes}}
  %0 = memopt.conv2d %x, %w {dilations = array<i64: 4611686018427387904, 1>} : tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>
  return
}
