// RUN: memopt-opt %s -split-input-file -verify-diagnostics

func.func @clamp_crossed_bounds(%x: tensor<8x32xf32>) {
  // expected-error @+1 {{'memopt.clamp' op expected 'min' <= 'max', got min = 1.000000e+00 and max = 0.000000e+00}}
  %0 = memopt.clamp %x {min = 1.0 : f64, max = 0.0 : f64} : tensor<8x32xf32>
  return
}

// -----

func.func @clamp_infinite_bound(%x: tensor<8x32xf32>) {
  // expected-error @+1 {{'memopt.clamp' op attribute 'max' must be a finite number, got inf}}
  %0 = memopt.clamp %x {max = 0x7FF0000000000000 : f64} : tensor<8x32xf32>
  return
}

// -----

func.func @clamp_integer(%x: tensor<8x32xi32>) {
  // expected-error @+1 {{'memopt.clamp' op operand #0 must be statically shaped tensor of f16, bf16, f32 or f64}}
  %0 = memopt.clamp %x {min = 0.0 : f64} : tensor<8x32xi32>
  return
}

// -----

func.func @clamp_backward_crossed_bounds(%g: tensor<4xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{'memopt.clamp_backward' op expected 'min' <= 'max', got min = 6.000000e+00 and max = 0.000000e+00}}
  %0 = memopt.clamp_backward %g, %s {min = 6.0 : f64, max = 0.0 : f64}
      : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @clamp_backward_mismatched(%g: tensor<4xf32>, %s: tensor<4xf16>) {
  // expected-error @+1 {{'memopt.clamp_backward' op failed to verify that all of {grad, saved, result} have same type}}
  %0 = memopt.clamp_backward %g, %s {max = 6.0 : f64}
      : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return
}
