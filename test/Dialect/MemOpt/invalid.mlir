// RUN: memopt-opt %s -split-input-file -verify-diagnostics

// Every shape rule and attribute constraint of the memopt ops, in the custom
// form (where the rules run while the op is parsed, to infer its result
// types) and in the generic form (where they verify the written result
// types). Operand and result type constraints (element type, static shape)
// are reported by the verifier in both forms.

//===----------------------------------------------------------------------===//
// conv2d
//===----------------------------------------------------------------------===//

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

//===----------------------------------------------------------------------===//
// linear
//===----------------------------------------------------------------------===//

// -----

func.func @linear_weight_rank(%x: tensor<8x16xf32>, %w: tensor<32xf32>) {
  // expected-error @+1 {{'memopt.linear' op expected 2-D weight (OxI), got rank 1 ('tensor<32xf32>')}}
  %0 = memopt.linear %x, %w : tensor<8x16xf32>, tensor<32xf32>
  return
}

// -----

func.func @linear_weight_shape(%x: tensor<8x16xf32>, %w: tensor<32x15xf32>) {
  // expected-error @+1 {{'memopt.linear' op expected weight shape 32x16 for 16 input features, got 32x15}}
  %0 = memopt.linear %x, %w : tensor<8x16xf32>, tensor<32x15xf32>
  return
}

// -----

func.func @linear_bias_size(%x: tensor<8x16xf32>, %w: tensor<32x16xf32>, %b: tensor<16xf32>) {
  // expected-error @+1 {{'memopt.linear' op expected bias of 32 elements (output features), got 16}}
  %0 = memopt.linear %x, %w, %b : tensor<8x16xf32>, tensor<32x16xf32>, tensor<16xf32>
  return
}

// -----

func.func @linear_scalar_input(%x: tensor<f32>, %w: tensor<32x16xf32>) {
  // expected-error @+1 {{'memopt.linear' op expected input of rank ≥ 1, got a scalar}}
  %0 = memopt.linear %x, %w : tensor<f32>, tensor<32x16xf32>
  return
}

// -----

func.func @linear_element_type(%x: tensor<8x16xbf16>, %w: tensor<32x16xf32>) {
  // expected-error @+1 {{'memopt.linear' op expected weight element type 'bf16' (as input), got 'f32'}}
  %0 = memopt.linear %x, %w : tensor<8x16xbf16>, tensor<32x16xf32>
  return
}

// -----

func.func @linear_result_shape(%x: tensor<4x8x16xf32>, %w: tensor<32x16xf32>) {
  // expected-error @+1 {{'memopt.linear' op expected result shape 4x8x32, got 8x32}}
  %0 = "memopt.linear"(%x, %w) : (tensor<4x8x16xf32>, tensor<32x16xf32>) -> tensor<8x32xf32>
  return
}

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

// -----

func.func @matmul_rank(%a: tensor<8xf32>, %b: tensor<8x4xf32>) {
  // expected-error @+1 {{'memopt.matmul' op expected operands of rank ≥ 2, got 'tensor<8xf32>' and 'tensor<8x4xf32>'}}
  %0 = memopt.matmul %a, %b : tensor<8xf32>, tensor<8x4xf32>
  return
}

// -----

func.func @matmul_contraction(%a: tensor<2x8x5xf32>, %b: tensor<2x8x4xf32>) {
  // expected-error @+1 {{'memopt.matmul' op expected contracted dimensions to agree, got 5 (a) and 8 (b)}}
  %0 = memopt.matmul %a, %b : tensor<2x8x5xf32>, tensor<2x8x4xf32>
  return
}

// -----

func.func @matmul_contraction_transposed(%a: tensor<2x8x5xf32>, %b: tensor<2x8x4xf32>) {
  // expected-error @+1 {{'memopt.matmul' op expected contracted dimensions to agree, got 8 (a, transposed) and 4 (b, transposed)}}
  %0 = memopt.matmul %a, %b {transpose_a = true, transpose_b = true} : tensor<2x8x5xf32>, tensor<2x8x4xf32>
  return
}

// -----

func.func @matmul_batch(%a: tensor<2x8x5xf32>, %b: tensor<3x5x4xf32>) {
  // expected-error @+1 {{'memopt.matmul' op batch dimensions 2 and 3 do not broadcast}}
  %0 = memopt.matmul %a, %b : tensor<2x8x5xf32>, tensor<3x5x4xf32>
  return
}

// -----

func.func @matmul_element_type(%a: tensor<8x5xf32>, %b: tensor<5x4xf64>) {
  // expected-error @+1 {{'memopt.matmul' op expected b element type 'f32' (as a), got 'f64'}}
  %0 = memopt.matmul %a, %b : tensor<8x5xf32>, tensor<5x4xf64>
  return
}

// -----

func.func @matmul_result_shape(%a: tensor<8x5xf32>, %b: tensor<5x4xf32>) {
  // expected-error @+1 {{'memopt.matmul' op expected result shape 8x4, got 8x5}}
  %0 = "memopt.matmul"(%a, %b) <{transpose_a = false, transpose_b = false}> : (tensor<8x5xf32>, tensor<5x4xf32>) -> tensor<8x5xf32>
  return
}

// -----

func.func @matmul_transpose_type(%a: tensor<8x5xf32>, %b: tensor<5x4xf32>) {
  // expected-error @+1 {{'memopt.matmul' op attribute 'transpose_a' failed to satisfy constraint: bool attribute}}
  %0 = memopt.matmul %a, %b {transpose_a = 1 : i64} : tensor<8x5xf32>, tensor<5x4xf32>
  return
}

//===----------------------------------------------------------------------===//
// Element-wise activations
//===----------------------------------------------------------------------===//

// -----

func.func @relu_integer(%x: tensor<8x32xi32>) {
  // expected-error @+1 {{'memopt.relu' op operand #0 must be statically shaped tensor of f16, bf16, f32 or f64 of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<8x32xi32>'}}
  %0 = memopt.relu %x : tensor<8x32xi32>
  return
}

// -----

func.func @relu_not_a_tensor(%x: f32) {
  // expected-error @+1 {{custom op 'memopt.relu' invalid kind of type specified: expected builtin.tensor, but found 'f32'}}
  %0 = memopt.relu %x : f32
  return
}

// -----

func.func @relu_unranked(%x: tensor<*xf32>) {
  // expected-error @+1 {{custom op 'memopt.relu' invalid kind of type specified: expected builtin.tensor, but found 'tensor<*xf32>'}}
  %0 = memopt.relu %x : tensor<*xf32>
  return
}

// -----

func.func @relu_unranked_generic(%x: tensor<*xf32>) {
  // expected-error @+1 {{'memopt.relu' op operand #0 must be statically shaped tensor of f16, bf16, f32 or f64}}
  %0 = "memopt.relu"(%x) : (tensor<*xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @relu_result_shape(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'memopt.relu' op expected result shape 4x4, got 4x5}}
  %0 = "memopt.relu"(%x) : (tensor<4x4xf32>) -> tensor<4x5xf32>
  return
}

// -----

func.func @relu_no_operand() {
  // expected-error @+1 {{'memopt.relu' op requires a single operand}}
  %0 = "memopt.relu"() : () -> tensor<4xf32>
  return
}

// -----

func.func @gelu_dynamic(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'memopt.gelu' op expected operand to have a static shape, got 'tensor<?x4xf32>'}}
  %0 = memopt.gelu %x : tensor<?x4xf32>
  return
}

// -----

func.func @gelu_result_element_type(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'memopt.gelu' op expected result type 'tensor<4x4xf32>', got 'tensor<4x4xbf16>'}}
  %0 = "memopt.gelu"(%x) : (tensor<4x4xf32>) -> tensor<4x4xbf16>
  return
}

// -----

func.func @sigmoid_integer(%x: tensor<4xi64>) {
  // expected-error @+1 {{'memopt.sigmoid' op operand #0 must be statically shaped tensor of f16, bf16, f32 or f64}}
  %0 = "memopt.sigmoid"(%x) : (tensor<4xi64>) -> tensor<4xi64>
  return
}

// -----

func.func @sigmoid_result_shape(%x: tensor<2x3xf16>) {
  // expected-error @+1 {{'memopt.sigmoid' op expected result shape 2x3, got 3x2}}
  %0 = "memopt.sigmoid"(%x) : (tensor<2x3xf16>) -> tensor<3x2xf16>
  return
}

// -----

func.func @tanh_result_not_tensor(%x: tensor<4xf32>) {
  // expected-error @+1 {{'memopt.tanh' op result #0 must be statically shaped tensor of f16, bf16, f32 or f64 of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'f32'}}
  %0 = "memopt.tanh"(%x) : (tensor<4xf32>) -> f32
  return
}

// -----

func.func @tanh_result_dynamic(%x: tensor<4xf32>) {
  // expected-error @+1 {{'memopt.tanh' op result #0 must be statically shaped tensor of f16, bf16, f32 or f64}}
  %0 = "memopt.tanh"(%x) : (tensor<4xf32>) -> tensor<?xf32>
  return
}

// -----

func.func @leaky_relu_alpha_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{'memopt.leaky_relu' op attribute 'alpha' failed to satisfy constraint: 64-bit float attribute}}
  %0 = memopt.leaky_relu %x {alpha = 1 : i64} : tensor<4xf32>
  return
}

// -----

func.func @leaky_relu_alpha_f32(%x: tensor<4xf32>) {
  // expected-error @+1 {{'memopt.leaky_relu' op attribute 'alpha' failed to satisfy constraint: 64-bit float attribute}}
  %0 = "memopt.leaky_relu"(%x) {alpha = 0.2 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @leaky_relu_result_shape(%x: tensor<4xf32>) {
  // expected-error @+1 {{'memopt.leaky_relu' op expected result shape 4, got 2x2}}
  %0 = "memopt.leaky_relu"(%x) <{alpha = 2.000000e-01 : f64}> : (tensor<4xf32>) -> tensor<2x2xf32>
  return
}

// -----

func.func @elu_property_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{invalid properties {alpha = 1 : i64} for op memopt.elu: Invalid attribute `alpha` in property conversion: 1 : i64}}
  %0 = "memopt.elu"(%x) <{alpha = 1 : i64}> : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @elu_integer(%x: tensor<4xi32>) {
  // expected-error @+1 {{'memopt.elu' op operand #0 must be statically shaped tensor of f16, bf16, f32 or f64}}
  %0 = memopt.elu %x : tensor<4xi32>
  return
}

//===----------------------------------------------------------------------===//
// add, sub, mul, div
//===----------------------------------------------------------------------===//

// -----

func.func @add_broadcast(%a: tensor<4x3xf32>, %b: tensor<2x3xf32>) {
  // expected-error @+1 {{'memopt.add' op operand shapes 4x3 and 2x3 do not broadcast}}
  %0 = memopt.add %a, %b : tensor<4x3xf32>, tensor<2x3xf32>
  return
}

// -----

func.func @add_integer(%a: tensor<4x3xi32>, %b: tensor<4x3xi32>) {
  // expected-error @+1 {{'memopt.add' op operand #0 must be statically shaped tensor of f16, bf16, f32 or f64}}
  %0 = memopt.add %a, %b : tensor<4x3xi32>, tensor<4x3xi32>
  return
}

// -----

func.func @add_result_shape(%a: tensor<8x1x5xf32>, %b: tensor<3x1xf32>) {
  // expected-error @+1 {{'memopt.add' op expected result shape 8x3x5, got 8x1x5}}
  %0 = "memopt.add"(%a, %b) : (tensor<8x1x5xf32>, tensor<3x1xf32>) -> tensor<8x1x5xf32>
  return
}

// -----

func.func @mul_element_type(%a: tensor<4x3xf32>, %b: tensor<4x3xf16>) {
  // expected-error @+1 {{'memopt.mul' op expected rhs element type 'f32' (as lhs), got 'f16'}}
  %0 = memopt.mul %a, %b : tensor<4x3xf32>, tensor<4x3xf16>
  return
}

// -----

func.func @mul_broadcast_trailing(%a: tensor<2x3x4xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'memopt.mul' op operand shapes 2x3x4 and 3 do not broadcast}}
  %0 = memopt.mul %a, %b : tensor<2x3x4xf32>, tensor<3xf32>
  return
}

// -----

func.func @mul_result_shape(%a: tensor<4x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'memopt.mul' op expected result shape 4x3, got 3}}
  %0 = "memopt.mul"(%a, %b) : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @sub_broadcast(%a: tensor<2x4xf32>, %b: tensor<3x4xf32>) {
  // expected-error @+1 {{'memopt.sub' op operand shapes 2x4 and 3x4 do not broadcast}}
  %0 = memopt.sub %a, %b : tensor<2x4xf32>, tensor<3x4xf32>
  return
}

// -----

func.func @sub_element_type(%a: tensor<4x3xbf16>, %b: tensor<3xf16>) {
  // expected-error @+1 {{'memopt.sub' op expected rhs element type 'bf16' (as lhs), got 'f16'}}
  %0 = memopt.sub %a, %b : tensor<4x3xbf16>, tensor<3xf16>
  return
}

// -----

func.func @sub_result_shape(%a: tensor<3xf32>, %b: tensor<2x1xf32>) {
  // expected-error @+1 {{'memopt.sub' op expected result shape 2x3, got 3}}
  %0 = "memopt.sub"(%a, %b) : (tensor<3xf32>, tensor<2x1xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @div_broadcast_trailing(%a: tensor<5x4xf32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{'memopt.div' op operand shapes 5x4 and 5 do not broadcast}}
  %0 = memopt.div %a, %b : tensor<5x4xf32>, tensor<5xf32>
  return
}

// -----

func.func @div_integer(%a: tensor<4xi64>, %b: tensor<4xi64>) {
  // expected-error @+1 {{'memopt.div' op operand #0 must be statically shaped tensor of f16, bf16, f32 or f64}}
  %0 = "memopt.div"(%a, %b) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return
}

// -----

func.func @div_result_element_type(%a: tensor<4x3xf32>, %b: tensor<f32>) {
  // expected-error @+1 {{'memopt.div' op expected result type 'tensor<4x3xf32>', got 'tensor<4x3xf16>'}}
  %0 = "memopt.div"(%a, %b) : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf16>
  return
}

//===----------------------------------------------------------------------===//
// batch_norm
//===----------------------------------------------------------------------===//

// -----

func.func @batch_norm_gamma_size(%x: tensor<8x64x4x4xf32>, %g: tensor<32xf32>) {
  // expected-error @+1 {{'memopt.batch_norm' op expected per-channel operands of 64 elements (x's dimension 1), got 32}}
  %0:3 = memopt.batch_norm %x, %g, %g, %g, %g : tensor<8x64x4x4xf32>, tensor<32xf32>
  return
}

// -----

func.func @batch_norm_gamma_rank(%x: tensor<8x64xf32>, %g: tensor<1x64xf32>) {
  // expected-error @+1 {{'memopt.batch_norm' op expected gamma of rank 1, got rank 2 ('tensor<1x64xf32>')}}
  %0:3 = memopt.batch_norm %x, %g, %g, %g, %g : tensor<8x64xf32>, tensor<1x64xf32>
  return
}

// -----

func.func @batch_norm_x_rank(%x: tensor<64xf32>, %g: tensor<64xf32>) {
  // expected-error @+1 {{'memopt.batch_norm' op expected x of rank ≥ 2 (NxCx...), got rank 1}}
  %0:3 = memopt.batch_norm %x, %g, %g, %g, %g : tensor<64xf32>, tensor<64xf32>
  return
}

// -----

func.func @batch_norm_momentum(%x: tensor<8x64x4x4xf32>, %g: tensor<64xf32>) {
  // expected-error @+1 {{'memopt.batch_norm' op expected 'momentum' in [0, 1], got 1.500000e+00}}
  %0:3 = memopt.batch_norm %x, %g, %g, %g, %g {momentum = 1.5 : f64} : tensor<8x64x4x4xf32>, tensor<64xf32>
  return
}

// -----

func.func @batch_norm_momentum_negative(%x: tensor<8x64xf32>, %g: tensor<64xf32>) {
  // expected-error @+1 {{'memopt.batch_norm' op expected 'momentum' in [0, 1], got -1.000000e-01}}
  %0:3 = "memopt.batch_norm"(%x, %g, %g, %g, %g) <{epsilon = 1.000000e-05 : f64, momentum = -1.000000e-01 : f64}> : (tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>)
  return
}

// -----

func.func @batch_norm_epsilon(%x: tensor<8x64x4x4xf32>, %g: tensor<64xf32>) {
  // expected-error @+1 {{'memopt.batch_norm' op expected 'epsilon' > 0, got 0.000000e+00}}
  %0:3 = memopt.batch_norm %x, %g, %g, %g, %g {epsilon = 0.0 : f64} : tensor<8x64x4x4xf32>, tensor<64xf32>
  return
}

// -----

// Training-mode batch statistics need more than one value per channel
// (PyTorch raises the same error).
func.func @batch_norm_single_value(%x: tensor<1x64x1x1xf32>, %g: tensor<64xf32>) {
  // expected-error @+1 {{'memopt.batch_norm' op expected more than 1 value per channel for the batch statistics, got x of shape 1x64x1x1}}
  %0:3 = memopt.batch_norm %x, %g, %g, %g, %g : tensor<1x64x1x1xf32>, tensor<64xf32>
  return
}

// -----

func.func @batch_norm_stats_type(%x: tensor<8x64xf32>, %g: tensor<64xf32>, %h: tensor<64xf16>) {
  // expected-error @+1 {{'memopt.batch_norm' op failed to verify that all of {gamma, beta, running_mean, running_var} have same type}}
  %0:3 = "memopt.batch_norm"(%x, %g, %g, %h, %g) : (tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf16>, tensor<64xf32>) -> (tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>)
  return
}

// -----

func.func @batch_norm_result_shape(%x: tensor<8x64xf32>, %g: tensor<64xf32>) {
  // expected-error @+1 {{'memopt.batch_norm' op expected result #2 shape 64, got 32}}
  %0:3 = "memopt.batch_norm"(%x, %g, %g, %g, %g) : (tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<8x64xf32>, tensor<64xf32>, tensor<32xf32>)
  return
}

// -----

func.func @batch_norm_one_result(%x: tensor<8x64xf32>, %g: tensor<64xf32>) {
  // expected-error @+1 {{'memopt.batch_norm' op expected 3 results}}
  %0 = "memopt.batch_norm"(%x, %g, %g, %g, %g) : (tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  return
}

//===----------------------------------------------------------------------===//
// layer_norm
//===----------------------------------------------------------------------===//

// -----

func.func @layer_norm_not_suffix(%x: tensor<4x128x768xf32>, %g: tensor<128xf32>) {
  // expected-error @+1 {{'memopt.layer_norm' op expected gamma's shape (128) to be a non-empty suffix of x's shape (4x128x768)}}
  %0 = memopt.layer_norm %x, %g, %g : tensor<4x128x768xf32>, tensor<128xf32>
  return
}

// -----

func.func @layer_norm_not_suffix_2d(%x: tensor<4x128x768xf32>, %g: tensor<768x128xf32>) {
  // expected-error @+1 {{'memopt.layer_norm' op expected gamma's shape (768x128) to be a non-empty suffix of x's shape (4x128x768)}}
  %0 = memopt.layer_norm %x, %g, %g : tensor<4x128x768xf32>, tensor<768x128xf32>
  return
}

// -----

func.func @layer_norm_scalar_gamma(%x: tensor<4x768xf32>, %g: tensor<f32>) {
  // expected-error @+1 {{'memopt.layer_norm' op expected gamma's shape (scalar) to be a non-empty suffix of x's shape (4x768)}}
  %0 = memopt.layer_norm %x, %g, %g : tensor<4x768xf32>, tensor<f32>
  return
}

// -----

func.func @layer_norm_gamma_longer(%x: tensor<768xf32>, %g: tensor<4x768xf32>) {
  // expected-error @+1 {{'memopt.layer_norm' op expected gamma's shape (4x768) to be a non-empty suffix of x's shape (768)}}
  %0 = memopt.layer_norm %x, %g, %g : tensor<768xf32>, tensor<4x768xf32>
  return
}

// -----

func.func @layer_norm_epsilon(%x: tensor<4x768xf32>, %g: tensor<768xf32>) {
  // expected-error @+1 {{'memopt.layer_norm' op expected 'epsilon' > 0, got -1.000000e-05}}
  %0 = memopt.layer_norm %x, %g, %g {epsilon = -1.0e-5 : f64} : tensor<4x768xf32>, tensor<768xf32>
  return
}

// -----

func.func @layer_norm_beta_type(%x: tensor<4x768xf32>, %g: tensor<768xf32>, %b: tensor<768xf16>) {
  // expected-error @+1 {{'memopt.layer_norm' op failed to verify that all of {gamma, beta} have same type}}
  %0 = "memopt.layer_norm"(%x, %g, %b) : (tensor<4x768xf32>, tensor<768xf32>, tensor<768xf16>) -> tensor<4x768xf32>
  return
}

//===----------------------------------------------------------------------===//
// max_pool2d, avg_pool2d, global_avg_pool2d
//===----------------------------------------------------------------------===//

// -----

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

//===----------------------------------------------------------------------===//
// softmax, dropout
//===----------------------------------------------------------------------===//

// -----

func.func @softmax_causal_not_square(%x: tensor<2x4x8xf32>) {
  // expected-error @+1 {{'memopt.softmax' op 'causal' needs the softmax over the last axis of square trailing dimensions (...xTxT), got 'tensor<2x4x8xf32>' with axis -1}}
  %0 = memopt.softmax %x {causal = true} : tensor<2x4x8xf32>
  return
}

// -----

func.func @softmax_causal_axis(%x: tensor<2x4x4xf32>) {
  // expected-error @+1 {{'memopt.softmax' op 'causal' needs the softmax over the last axis of square trailing dimensions (...xTxT), got 'tensor<2x4x4xf32>' with axis 1}}
  %0 = memopt.softmax %x {axis = 1 : i64, causal = true} : tensor<2x4x4xf32>
  return
}

// -----

func.func @softmax_causal_rank1(%x: tensor<4xf32>) {
  // expected-error @+1 {{'memopt.softmax' op 'causal' needs the softmax over the last axis of square trailing dimensions (...xTxT), got 'tensor<4xf32>' with axis -1}}
  %0 = "memopt.softmax"(%x) <{axis = -1 : i64, causal = true}> : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @softmax_axis(%x: tensor<2x4x4xf32>) {
  // expected-error @+1 {{'memopt.softmax' op expected 'axis' in [-3, 3) for rank 3, got 3}}
  %0 = memopt.softmax %x {axis = 3 : i64} : tensor<2x4x4xf32>
  return
}

// -----

func.func @softmax_axis_negative(%x: tensor<2x4x4xf32>) {
  // expected-error @+1 {{'memopt.softmax' op expected 'axis' in [-3, 3) for rank 3, got -4}}
  %0 = memopt.softmax %x {axis = -4 : i64} : tensor<2x4x4xf32>
  return
}

// -----

func.func @softmax_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{'memopt.softmax' op expected x of rank ≥ 1, got a scalar}}
  %0 = memopt.softmax %x : tensor<f32>
  return
}

// -----

func.func @dropout_p_one(%x: tensor<4xf32>) {
  // expected-error @+1 {{'memopt.dropout' op expected 'p' in [0, 1), got 1.000000e+00}}
  %0 = memopt.dropout %x {p = 1.0 : f64} : tensor<4xf32>
  return
}

// -----

func.func @dropout_p_negative(%x: tensor<4xf32>) {
  // expected-error @+1 {{'memopt.dropout' op expected 'p' in [0, 1), got -1.000000e-01}}
  %0 = "memopt.dropout"(%x) <{p = -1.000000e-01 : f64, seed = 0 : i64}> : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @dropout_p_nan(%x: tensor<4xf32>) {
  // expected-error @+1 {{'memopt.dropout' op expected 'p' in [0, 1), got nan}}
  %0 = memopt.dropout %x {p = 0x7FF8000000000000 : f64} : tensor<4xf32>
  return
}

// -----

func.func @dropout_seed_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{'memopt.dropout' op attribute 'seed' failed to satisfy constraint: 64-bit signless integer attribute}}
  %0 = memopt.dropout %x {seed = 1.0 : f64} : tensor<4xf32>
  return
}

// -----

func.func @dropout_result_shape(%x: tensor<4xf32>) {
  // expected-error @+1 {{'memopt.dropout' op expected result shape 4, got 5}}
  %0 = "memopt.dropout"(%x) : (tensor<4xf32>) -> tensor<5xf32>
  return
}

//===----------------------------------------------------------------------===//
// reshape, transpose, slice, concat
//===----------------------------------------------------------------------===//

// -----

func.func @reshape_element_count(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'memopt.reshape' op cannot reshape 4x6 (24 elements) to 5x5 (25 elements)}}
  %0 = memopt.reshape %x : tensor<4x6xf32> -> tensor<5x5xf32>
  return
}

// -----

func.func @reshape_element_count_generic(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'memopt.reshape' op cannot reshape 4x6 (24 elements) to 4x5 (20 elements)}}
  %0 = "memopt.reshape"(%x) : (tensor<4x6xf32>) -> tensor<4x5xf32>
  return
}

// -----

func.func @reshape_element_type(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'memopt.reshape' op expected result element type 'f32' (as the operand), got 'i32'}}
  %0 = memopt.reshape %x : tensor<4x6xf32> -> tensor<24xi32>
  return
}

// -----

func.func @reshape_dynamic(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'memopt.reshape' op result #0 must be statically shaped tensor of f16, bf16, f32, f64, i32 or i64}}
  %0 = memopt.reshape %x : tensor<4x6xf32> -> tensor<?xf32>
  return
}

// -----

func.func @reshape_too_large(%x: tensor<4611686018427387904x4xf32>) {
  // expected-error @+1 {{'memopt.reshape' op expected fewer than 2^63 elements, got 'tensor<4611686018427387904x4xf32>' -> 'tensor<4xf32>'}}
  %0 = memopt.reshape %x : tensor<4611686018427387904x4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @transpose_duplicate(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'memopt.transpose' op expected 'permutation' to be a permutation of [0, 2), got [0, 0]}}
  %0 = memopt.transpose %x {permutation = array<i64: 0, 0>} : tensor<4x6xf32>
  return
}

// -----

func.func @transpose_length(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'memopt.transpose' op expected 'permutation' to be a permutation of [0, 2), got [1, 0, 2]}}
  %0 = memopt.transpose %x {permutation = array<i64: 1, 0, 2>} : tensor<4x6xf32>
  return
}

// -----

func.func @transpose_out_of_range(%x: tensor<4x6xi64>) {
  // expected-error @+1 {{'memopt.transpose' op expected 'permutation' to be a permutation of [0, 2), got [-1, 0]}}
  %0 = memopt.transpose %x {permutation = array<i64: -1, 0>} : tensor<4x6xi64>
  return
}

// -----

func.func @transpose_missing_permutation(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'memopt.transpose' op requires attribute 'permutation'}}
  %0 = memopt.transpose %x : tensor<4x6xf32>
  return
}

// -----

func.func @transpose_result_shape(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'memopt.transpose' op expected result shape 6x4, got 4x6}}
  %0 = "memopt.transpose"(%x) <{permutation = array<i64: 1, 0>}> : (tensor<4x6xf32>) -> tensor<4x6xf32>
  return
}

// -----

func.func @slice_out_of_bounds(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'memopt.slice' op slice of dimension 0 reaches index 4 but the dimension has size 4}}
  %0 = memopt.slice %x {offsets = array<i64: 2, 0>, sizes = array<i64: 3, 6>} : tensor<4x6xf32>
  return
}

// -----

func.func @slice_strided_out_of_bounds(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'memopt.slice' op slice of dimension 1 reaches index 7 but the dimension has size 6}}
  %0 = memopt.slice %x {offsets = array<i64: 0, 1>, sizes = array<i64: 4, 3>, strides = array<i64: 1, 3>} : tensor<4x6xf32>
  return
}

// -----

func.func @slice_size_zero(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'memopt.slice' op expected 'sizes' values ≥ 1, got [0, 3]}}
  %0 = memopt.slice %x {offsets = array<i64: 0, 0>, sizes = array<i64: 0, 3>} : tensor<4x6xf32>
  return
}

// -----

func.func @slice_offsets_length(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'memopt.slice' op expected 'offsets' to have 2 values, got 1}}
  %0 = memopt.slice %x {offsets = array<i64: 0>, sizes = array<i64: 1, 3>} : tensor<4x6xf32>
  return
}

// -----

func.func @slice_offset_negative(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'memopt.slice' op expected 'offsets' values ≥ 0, got [0, -1]}}
  %0 = memopt.slice %x {offsets = array<i64: 0, -1>, sizes = array<i64: 1, 3>} : tensor<4x6xf32>
  return
}

// -----

func.func @slice_stride_zero(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'memopt.slice' op expected 'strides' values ≥ 1, got [1, 0]}}
  %0 = memopt.slice %x {offsets = array<i64: 0, 0>, sizes = array<i64: 1, 3>, strides = array<i64: 1, 0>} : tensor<4x6xf32>
  return
}

// -----

func.func @slice_missing_offsets(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'memopt.slice' op requires attribute 'offsets'}}
  %0 = memopt.slice %x {sizes = array<i64: 1, 3>} : tensor<4x6xf32>
  return
}

// -----

func.func @slice_missing_sizes(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'memopt.slice' op requires attribute 'sizes'}}
  %0 = "memopt.slice"(%x) <{offsets = array<i64: 0, 0>}> : (tensor<4x6xf32>) -> tensor<1x3xf32>
  return
}

// -----

func.func @slice_result_shape(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'memopt.slice' op expected result shape 1x3, got 1x4}}
  %0 = "memopt.slice"(%x) <{offsets = array<i64: 0, 0>, sizes = array<i64: 1, 3>}> : (tensor<4x6xf32>) -> tensor<1x4xf32>
  return
}

// -----

func.func @slice_offset_overflow(%x: tensor<4xf32>) {
  // expected-error @+1 {{'memopt.slice' op slice of dimension 0 reaches an index beyond 2^63 but the dimension has size 4}}
  %0 = memopt.slice %x {offsets = array<i64: 9223372036854775807>, sizes = array<i64: 2>} : tensor<4xf32>
  return
}

// -----

func.func @slice_stride_overflow(%x: tensor<4xf32>) {
  // expected-error @+1 {{'memopt.slice' op slice of dimension 0 reaches an index beyond 2^63 but the dimension has size 4}}
  %0 = memopt.slice %x {offsets = array<i64: 1>, sizes = array<i64: 2>, strides = array<i64: 9223372036854775807>} : tensor<4xf32>
  return
}

// -----

func.func @concat_mismatched_dims(%a: tensor<2x3xf32>, %b: tensor<3x3xf32>) {
  // expected-error @+1 {{'memopt.concat' op expected input #1 to match input #0 (2x3) in every dimension but 1, got 3x3}}
  %0 = memopt.concat %a, %b {axis = 1 : i64} : tensor<2x3xf32>, tensor<3x3xf32>
  return
}

// -----

func.func @concat_third_input(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+1 {{'memopt.concat' op expected input #2 to match input #0 (2x3) in every dimension but 0, got 2x4}}
  %0 = memopt.concat %a, %a, %b {axis = -2 : i64} : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @concat_rank(%a: tensor<2x3xf32>, %b: tensor<2x3x1xf32>) {
  // expected-error @+1 {{'memopt.concat' op expected input #1 to match input #0 (2x3) in every dimension but 0, got 2x3x1}}
  %0 = memopt.concat %a, %b {axis = 0 : i64} : tensor<2x3xf32>, tensor<2x3x1xf32>
  return
}

// -----

func.func @concat_element_type(%a: tensor<2x3xf32>, %b: tensor<2x3xf16>) {
  // expected-error @+1 {{'memopt.concat' op expected input #1 element type 'f32' (as input #0), got 'f16'}}
  %0 = memopt.concat %a, %b {axis = 0 : i64} : tensor<2x3xf32>, tensor<2x3xf16>
  return
}

// -----

func.func @concat_axis(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'memopt.concat' op expected 'axis' in [-2, 2) for rank 2, got 2}}
  %0 = memopt.concat %a, %a {axis = 2 : i64} : tensor<2x3xf32>, tensor<2x3xf32>
  return
}

// -----

func.func @concat_missing_axis(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'memopt.concat' op requires attribute 'axis'}}
  %0 = memopt.concat %a, %a : tensor<2x3xf32>, tensor<2x3xf32>
  return
}

// -----

func.func @concat_no_inputs() {
  // expected-error @+1 {{'memopt.concat' op expected at least one input}}
  %0 = "memopt.concat"() <{axis = 0 : i64}> : () -> tensor<2x3xf32>
  return
}

// -----

func.func @concat_result_shape(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) {
  // expected-error @+1 {{'memopt.concat' op expected result shape 2x6, got 4x3}}
  %0 = "memopt.concat"(%a, %b) {axis = -1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @concat_overflow(%x: tensor<4611686018427387904xf32>) {
  // expected-error @+1 {{'memopt.concat' op concatenated dimension 0 overflows 64-bit sizes}}
  %0 = memopt.concat %x, %x, %x {axis = 0 : i64} : tensor<4611686018427387904xf32>, tensor<4611686018427387904xf32>, tensor<4611686018427387904xf32>
  return
}

//===----------------------------------------------------------------------===//
// upsample_nearest2d, embedding
//===----------------------------------------------------------------------===//

// -----

func.func @upsample_scale_zero(%x: tensor<1x2x4x4xf32>) {
  // expected-error @+1 {{'memopt.upsample_nearest2d' op expected 'scale' ≥ 1, got 0}}
  %0 = memopt.upsample_nearest2d %x {scale = 0 : i64} : tensor<1x2x4x4xf32>
  return
}

// -----

func.func @upsample_missing_scale(%x: tensor<1x2x4x4xf32>) {
  // expected-error @+1 {{'memopt.upsample_nearest2d' op requires attribute 'scale'}}
  %0 = memopt.upsample_nearest2d %x : tensor<1x2x4x4xf32>
  return
}

// -----

func.func @upsample_rank(%x: tensor<2x4x4xf32>) {
  // expected-error @+1 {{'memopt.upsample_nearest2d' op expected 4-D x (NxCxHxW), got rank 3 ('tensor<2x4x4xf32>')}}
  %0 = memopt.upsample_nearest2d %x {scale = 2 : i64} : tensor<2x4x4xf32>
  return
}

// -----

func.func @upsample_result_shape(%x: tensor<1x2x4x4xf32>) {
  // expected-error @+1 {{'memopt.upsample_nearest2d' op expected result shape 1x2x8x8, got 1x2x8x4}}
  %0 = "memopt.upsample_nearest2d"(%x) <{scale = 2 : i64}> : (tensor<1x2x4x4xf32>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @upsample_overflow(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'memopt.upsample_nearest2d' op upsampling 4x4 by 4611686018427387904 overflows 64-bit sizes}}
  %0 = memopt.upsample_nearest2d %x {scale = 4611686018427387904 : i64} : tensor<1x1x4x4xf32>
  return
}

// -----

func.func @embedding_float_ids(%t: tensor<10x4xf32>, %ids: tensor<3xf32>) {
  // expected-error @+1 {{'memopt.embedding' op operand #1 must be statically shaped tensor of i32 or i64 of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<3xf32>'}}
  %0 = memopt.embedding %t, %ids : tensor<10x4xf32>, tensor<3xf32>
  return
}

// -----

func.func @embedding_i16_ids(%t: tensor<10x4xf32>, %ids: tensor<3xi16>) {
  // expected-error @+1 {{'memopt.embedding' op operand #1 must be statically shaped tensor of i32 or i64}}
  %0 = "memopt.embedding"(%t, %ids) : (tensor<10x4xf32>, tensor<3xi16>) -> tensor<3x4xf32>
  return
}

// -----

func.func @embedding_table_rank(%t: tensor<10x4x2xf32>, %ids: tensor<3xi64>) {
  // expected-error @+1 {{'memopt.embedding' op expected 2-D table (VxD), got rank 3 ('tensor<10x4x2xf32>')}}
  %0 = memopt.embedding %t, %ids : tensor<10x4x2xf32>, tensor<3xi64>
  return
}

// -----

func.func @embedding_integer_table(%t: tensor<10x4xi64>, %ids: tensor<3xi64>) {
  // expected-error @+1 {{'memopt.embedding' op operand #0 must be statically shaped tensor of f16, bf16, f32 or f64}}
  %0 = memopt.embedding %t, %ids : tensor<10x4xi64>, tensor<3xi64>
  return
}

// -----

func.func @embedding_result_shape(%t: tensor<10x4xf32>, %ids: tensor<3xi64>) {
  // expected-error @+1 {{'memopt.embedding' op expected result shape 3x4, got 3x10}}
  %0 = "memopt.embedding"(%t, %ids) : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<3x10xf32>
  return
}

// -----

func.func @embedding_result_too_large(%t: tensor<10x4294967296xf32>, %ids: tensor<4294967296xi64>) {
  // expected-error @+1 {{'memopt.embedding' op result shape 4294967296x4294967296 has 2^63 elements or more}}
  %0 = memopt.embedding %t, %ids : tensor<10x4294967296xf32>, tensor<4294967296xi64>
  return
}

//===----------------------------------------------------------------------===//
// cross_entropy, mse_loss
//===----------------------------------------------------------------------===//

// -----

func.func @cross_entropy_label_count(%l: tensor<8x10xf32>, %y: tensor<4xi64>) {
  // expected-error @+1 {{'memopt.cross_entropy' op expected 8 labels (one per row of logits), got 4}}
  %0 = memopt.cross_entropy %l, %y : tensor<8x10xf32>, tensor<4xi64>
  return
}

// -----

func.func @cross_entropy_labels_rank(%l: tensor<8x10xf32>, %y: tensor<8x1xi64>) {
  // expected-error @+1 {{'memopt.cross_entropy' op expected 1-D labels (N), got rank 2 ('tensor<8x1xi64>')}}
  %0 = memopt.cross_entropy %l, %y : tensor<8x10xf32>, tensor<8x1xi64>
  return
}

// -----

func.func @cross_entropy_logits_rank(%l: tensor<10xf32>, %y: tensor<10xi64>) {
  // expected-error @+1 {{'memopt.cross_entropy' op expected 2-D logits (NxC), got rank 1 ('tensor<10xf32>')}}
  %0 = memopt.cross_entropy %l, %y : tensor<10xf32>, tensor<10xi64>
  return
}

// -----

func.func @cross_entropy_float_labels(%l: tensor<8x10xf32>, %y: tensor<8xf32>) {
  // expected-error @+1 {{'memopt.cross_entropy' op operand #1 must be statically shaped tensor of i32 or i64}}
  %0 = memopt.cross_entropy %l, %y : tensor<8x10xf32>, tensor<8xf32>
  return
}

// -----

func.func @cross_entropy_result_rank(%l: tensor<8x10xf32>, %y: tensor<8xi64>) {
  // expected-error @+1 {{'memopt.cross_entropy' op result #0 must be 0-d tensor of f16, bf16, f32 or f64}}
  %0 = "memopt.cross_entropy"(%l, %y) : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<8xf32>
  return
}

// -----

func.func @cross_entropy_result_type(%l: tensor<8x10xf32>, %y: tensor<8xi64>) {
  // expected-error @+1 {{'memopt.cross_entropy' op expected result type 'tensor<f32>', got 'tensor<f16>'}}
  %0 = "memopt.cross_entropy"(%l, %y) : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f16>
  return
}

// -----

func.func @mse_loss_target_type(%p: tensor<8x10xf32>, %t: tensor<8x10xf16>) {
  // expected-error @+1 {{'memopt.mse_loss' op failed to verify that all of {prediction, target} have same type}}
  %0 = "memopt.mse_loss"(%p, %t) : (tensor<8x10xf32>, tensor<8x10xf16>) -> tensor<f32>
  return
}

// -----

func.func @mse_loss_target_shape(%p: tensor<8x10xf32>, %t: tensor<10x8xf32>) {
  // expected-error @+1 {{'memopt.mse_loss' op failed to verify that all of {prediction, target} have same type}}
  %0 = "memopt.mse_loss"(%p, %t) : (tensor<8x10xf32>, tensor<10x8xf32>) -> tensor<f32>
  return
}

// -----

func.func @mse_loss_result_rank(%p: tensor<8x10xf32>) {
  // expected-error @+1 {{'memopt.mse_loss' op result #0 must be 0-d tensor of f16, bf16, f32 or f64}}
  %0 = "memopt.mse_loss"(%p, %p) : (tensor<8x10xf32>, tensor<8x10xf32>) -> tensor<1xf32>
  return
}

// -----

func.func @mse_loss_result_type(%p: tensor<8x10xf32>) {
  // expected-error @+1 {{'memopt.mse_loss' op expected result type 'tensor<f32>', got 'tensor<f64>'}}
  %0 = "memopt.mse_loss"(%p, %p) : (tensor<8x10xf32>, tensor<8x10xf32>) -> tensor<f64>
  return
}

// -----

func.func @mse_loss_integer(%p: tensor<8x10xi32>) {
  // expected-error @+1 {{'memopt.mse_loss' op operand #0 must be statically shaped tensor of f16, bf16, f32 or f64}}
  %0 = memopt.mse_loss %p, %p : tensor<8x10xi32>
  return
}

//===----------------------------------------------------------------------===//
// Sizes that do not fit in 64 bits
//===----------------------------------------------------------------------===//

// -----

func.func @operand_too_large(%x: tensor<4611686018427387904x4xf32>) {
  // expected-error @+1 {{'memopt.relu' op expected operand to have fewer than 2^63 elements, got 'tensor<4611686018427387904x4xf32>'}}
  %0 = memopt.relu %x : tensor<4611686018427387904x4xf32>
  return
}

// -----

func.func @broadcast_result_too_large(%a: tensor<4294967296x1xf32>, %b: tensor<4294967296xf32>) {
  // expected-error @+1 {{'memopt.add' op result shape 4294967296x4294967296 has 2^63 elements or more}}
  %0 = memopt.add %a, %b : tensor<4294967296x1xf32>, tensor<4294967296xf32>
  return
}

// -----

func.func @use_after_free(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = memopt.relu %x : tensor<4xf32>
  // expected-error @+1 {{'memopt.free' op frees a value that is used later, by memopt.tanh}}
  memopt.free %a : tensor<4xf32>
  %b = memopt.tanh %a : tensor<4xf32>
  return %b : tensor<4xf32>
}

// -----

func.func @free_argument(%x: tensor<4xf32>) {
  // expected-error @+1 {{'memopt.free' op cannot free a function argument: it belongs to the caller}}
  memopt.free %x : tensor<4xf32>
  return
}
