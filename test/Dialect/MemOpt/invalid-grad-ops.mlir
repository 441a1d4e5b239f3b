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

// -----

// 8-bit Adam: one f32 maximum per 256 elements (64x81 = 5184: 21 blocks).
func.func @adam8bit_absmax_blocks(%p: tensor<64x81xf32>, %m: tensor<64x81xui8>, %a: tensor<20xf32>, %t: tensor<f32>) {
  // expected-error @+1 {{'memopt.adam8bit_update' op expected exp_avg absmax of shape 21 (one per 256 elements), got 20}}
  %r:5 = memopt.adam8bit_update %p, %p, %m, %a, %m, %a, %t {lr = 1.0e-3 : f64} : (tensor<64x81xf32>, tensor<64x81xf32>, tensor<64x81xui8>, tensor<20xf32>, tensor<64x81xui8>, tensor<20xf32>, tensor<f32>) -> (tensor<64x81xf32>, tensor<64x81xui8>, tensor<20xf32>, tensor<64x81xui8>, tensor<20xf32>)
  return
}

// -----

func.func @adam8bit_codes_shape(%p: tensor<64x81xf32>, %m: tensor<81x64xui8>, %a: tensor<21xf32>, %t: tensor<f32>) {
  // expected-error @+1 {{'memopt.adam8bit_update' op expected exp_avg codes of the parameter's shape 64x81, got 81x64}}
  %r:5 = memopt.adam8bit_update %p, %p, %m, %a, %m, %a, %t {lr = 1.0e-3 : f64} : (tensor<64x81xf32>, tensor<64x81xf32>, tensor<81x64xui8>, tensor<21xf32>, tensor<81x64xui8>, tensor<21xf32>, tensor<f32>) -> (tensor<64x81xf32>, tensor<81x64xui8>, tensor<21xf32>, tensor<81x64xui8>, tensor<21xf32>)
  return
}

// -----

func.func @adam8bit_signed_codes(%p: tensor<256xf32>, %m: tensor<256xi8>, %a: tensor<1xf32>, %t: tensor<f32>) {
  // expected-error @+1 {{operand #2 must be statically shaped tensor of ui8}}
  %r:5 = "memopt.adam8bit_update"(%p, %p, %m, %a, %m, %a, %t) <{lr = 1.0e-3 : f64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0, 0>}> : (tensor<256xf32>, tensor<256xf32>, tensor<256xi8>, tensor<1xf32>, tensor<256xi8>, tensor<1xf32>, tensor<f32>) -> (tensor<256xf32>, tensor<256xi8>, tensor<1xf32>, tensor<256xi8>, tensor<1xf32>)
  return
}

// -----

// Adafactor: a matrix keeps row and column factors.
func.func @adafactor_unfactored_matrix(%p: tensor<3x4xf32>, %v: tensor<3x4xf32>, %t: tensor<f32>) {
  // expected-error @+1 {{'memopt.adafactor_update' op expected 2 state tensors (row and column factors) for a parameter of shape 3x4, got 1}}
  %r:2 = memopt.adafactor_update %p, %p, [%v], %t {lr = 1.0e-2 : f64} : (tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<f32>) -> (tensor<3x4xf32>, tensor<3x4xf32>)
  return
}

// -----

func.func @adafactor_column_shape(%p: tensor<2x3x4xf32>, %r: tensor<2x3xf32>, %c: tensor<4xf32>, %t: tensor<f32>) {
  // expected-error @+1 {{'memopt.adafactor_update' op expected the column factor of shape 2x4, got 4}}
  %n:3 = memopt.adafactor_update %p, %p, [%r, %c], %t {lr = 1.0e-2 : f64} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3xf32>, tensor<4xf32>, tensor<f32>) -> (tensor<2x3x4xf32>, tensor<2x3xf32>, tensor<4xf32>)
  return
}

// -----

func.func @adafactor_f16_state(%p: tensor<4xf16>, %v: tensor<4xf16>, %t: tensor<f32>) {
  // expected-error @+1 {{'memopt.adafactor_update' op expected state of element type 'f32' (the step's compute type), got 'tensor<4xf16>'}}
  %r:2 = memopt.adafactor_update %p, %p, [%v], %t {lr = 1.0e-2 : f64} : (tensor<4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<f32>) -> (tensor<4xf16>, tensor<4xf16>)
  return
}

// -----

func.func @adafactor_decay_rate(%p: tensor<4xf32>, %t: tensor<f32>) {
  // expected-error @+1 {{'memopt.adafactor_update' op expected 'decay_rate' < 0 (beta2 = 1 - t^decay_rate)}}
  %r:2 = memopt.adafactor_update %p, %p, [%p], %t {lr = 1.0e-2 : f64, decay_rate = 0.5 : f64} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @adafactor_new_state_type(%p: tensor<4xf32>, %t: tensor<f32>) {
  // expected-error @+1 {{'memopt.adafactor_update' op expected new state of type 'tensor<4xf32>', got 'tensor<4xf64>'}}
  %r:2 = memopt.adafactor_update %p, %p, [%p], %t {lr = 1.0e-2 : f64} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<4xf64>)
  return
}

// -----

func.func @clip_coefficient_max_norm(%g: tensor<4xf32>) -> tensor<f32> {
  // expected-error @+1 {{'memopt.clip_coefficient' op expected 'max_norm' to be a finite number > 0}}
  %c = memopt.clip_coefficient %g {max_norm = 0.0 : f64} : (tensor<4xf32>) -> tensor<f32>
  return %c : tensor<f32>
}

// -----

func.func @clip_coefficient_nothing() -> tensor<f32> {
  // expected-error @+1 {{'memopt.clip_coefficient' op expected at least one gradient}}
  %c = memopt.clip_coefficient {max_norm = 1.0 : f64} : () -> tensor<f32>
  return %c : tensor<f32>
}

// -----

// Optimizer buffers: the parameter's element type, or bf16.
func.func @adam_f16_moments(%p: tensor<4xf32>, %m: tensor<4xf16>, %t: tensor<f32>) {
  // expected-error @+1 {{'memopt.adam_update' op expected exp_avg of the parameter's shape in its element type or bf16, got 'tensor<4xf16>' for 'tensor<4xf32>'}}
  %r:3 = memopt.adam_update %p, %p, %m, %m, %t {lr = 1.0e-3 : f64} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf16>, tensor<4xf16>, tensor<f32>) -> (tensor<4xf32>, tensor<4xf16>, tensor<4xf16>)
  return
}
