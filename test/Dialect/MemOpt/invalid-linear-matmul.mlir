// RUN: memopt-opt %s -split-input-file -verify-diagnostics

// linear and matmul: shape rules and attribute constraints.

//===----------------------------------------------------------------------===//
// linear
//===----------------------------------------------------------------------===//

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

// -----

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

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
