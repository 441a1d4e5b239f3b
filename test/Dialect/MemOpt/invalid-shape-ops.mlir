// RUN: memopt-opt %s -split-input-file -verify-diagnostics

// Shape ops: reshape, transpose, slice, concat.

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
