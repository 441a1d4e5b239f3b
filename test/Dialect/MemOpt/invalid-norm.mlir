// RUN: memopt-opt %s -split-input-file -verify-diagnostics

// Normalization ops: batch_norm, layer_norm, rms_norm.

//===----------------------------------------------------------------------===//
// batch_norm
//===----------------------------------------------------------------------===//

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

// -----

//===----------------------------------------------------------------------===//
// layer_norm
//===----------------------------------------------------------------------===//

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

// -----

//===----------------------------------------------------------------------===//
// rms_norm
//===----------------------------------------------------------------------===//

func.func @rms_norm_not_suffix(%x: tensor<4x128x768xf32>, %g: tensor<128xf32>) {
  // expected-error @+1 {{'memopt.rms_norm' op expected gamma's shape (128) to be a non-empty suffix of x's shape (4x128x768)}}
  %0 = memopt.rms_norm %x, %g : tensor<4x128x768xf32>, tensor<128xf32>
  return
}

// -----

func.func @rms_norm_epsilon(%x: tensor<4x768xf32>, %g: tensor<768xf32>) {
  // expected-error @+1 {{'memopt.rms_norm' op expected 'epsilon' > 0, got 0.000000e+00}}
  %0 = memopt.rms_norm %x, %g {epsilon = 0.0 : f64} : tensor<4x768xf32>, tensor<768xf32>
  return
}

// -----

func.func @rms_norm_integer(%x: tensor<4x8xi32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{'memopt.rms_norm' op operand #0 must be}}
  %0 = "memopt.rms_norm"(%x, %g) : (tensor<4x8xi32>, tensor<8xf32>) -> tensor<4x8xi32>
  return
}

// -----

func.func @rms_norm_backward_gamma_grad(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{'memopt.rms_norm_backward' op expected grad_gamma shape 8, got 4x8}}
  %dx, %dg = memopt.rms_norm_backward %dy, %x, %g : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return
}

// -----

func.func @rms_norm_backward_not_suffix(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'memopt.rms_norm_backward' op expected gamma's shape (4) to be a non-empty suffix of x's shape (4x8)}}
  %dx, %dg = memopt.rms_norm_backward %dy, %x, %g : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> (tensor<4x8xf32>, tensor<4xf32>)
  return
}
