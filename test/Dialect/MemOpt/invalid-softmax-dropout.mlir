// RUN: memopt-opt %s -split-input-file -verify-diagnostics

// softmax and dropout: axis, causal mask, probability and seed constraints.

func.func @softmax_causal_not_square(%x: tensor<2x4x8xf32>) {
  // expected-error @+1 {{'memopt.softmax' op 'causal' needs the softmax over the last axis of square trailing dimensions (...xTxT), got shape 2x4x8 with axis -1}}
  %0 = memopt.softmax %x {causal = true} : tensor<2x4x8xf32>
  return
}

// -----

func.func @softmax_causal_axis(%x: tensor<2x4x4xf32>) {
  // expected-error @+1 {{'memopt.softmax' op 'causal' needs the softmax over the last axis of square trailing dimensions (...xTxT), got shape 2x4x4 with axis 1}}
  %0 = memopt.softmax %x {axis = 1 : i64, causal = true} : tensor<2x4x4xf32>
  return
}

// -----

func.func @softmax_causal_rank1(%x: tensor<4xf32>) {
  // expected-error @+1 {{'memopt.softmax' op 'causal' needs the softmax over the last axis of square trailing dimensions (...xTxT), got shape 4 with axis -1}}
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
