// RUN: memopt-opt %s -split-input-file -verify-diagnostics

// upsample_nearest2d and embedding: shape rules and attribute constraints.

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

// -----

func.func @embedding_padding_out_of_range(%t: tensor<10x4xf32>, %ids: tensor<2x3xi64>) {
  // expected-error @+1 {{'memopt.embedding' op expected padding_idx in [0, 10), got 10}}
  %0 = memopt.embedding %t, %ids {padding_idx = 10 : i64} : tensor<10x4xf32>, tensor<2x3xi64>
  return
}
