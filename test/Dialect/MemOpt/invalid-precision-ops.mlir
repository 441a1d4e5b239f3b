// RUN: memopt-opt %s -split-input-file -verify-diagnostics

func.func @cast_shape(%x: tensor<4xf32>) -> tensor<5xf16> {
  // expected-error @+1 {{'memopt.cast' op requires the same shape for all operands and results}}
  %h = "memopt.cast"(%x) : (tensor<4xf32>) -> tensor<5xf16>
  return %h : tensor<5xf16>
}

// -----

func.func @cast_int(%x: tensor<4xi32>) -> tensor<4xf16> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of f16, bf16, f32 or f64}}
  %h = "memopt.cast"(%x) : (tensor<4xi32>) -> tensor<4xf16>
  return %h : tensor<4xf16>
}

// -----

func.func @found_nothing() -> tensor<f32> {
  // expected-error @+1 {{expected at least one tensor to check}}
  %f = memopt.found_inf : () -> tensor<f32>
  return %f : tensor<f32>
}

// -----

func.func @unscale_scale(%g: tensor<4xf32>, %s: tensor<1xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{operand #1 must be 0-d tensor of f32}}
  %u = memopt.unscale %g, %s : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  return %u : tensor<4xf32>
}

// -----

func.func @growth(%s: tensor<f32>, %n: tensor<i32>, %f: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{expected 'growth_factor' > 1, got 5.000000e-01}}
  %s1, %n1 = memopt.update_loss_scale %s, %n, %f {backoff_factor = 0.5 : f64, growth_factor = 0.5 : f64, growth_interval = 2000 : i64} : (tensor<f32>, tensor<i32>, tensor<f32>) -> (tensor<f32>, tensor<i32>)
  return %s1 : tensor<f32>
}

// -----

func.func @backoff(%s: tensor<f32>, %n: tensor<i32>, %f: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{expected 'backoff_factor' in (0, 1), got 1.000000e+00}}
  %s1, %n1 = memopt.update_loss_scale %s, %n, %f {backoff_factor = 1.0 : f64, growth_factor = 2.0 : f64, growth_interval = 2000 : i64} : (tensor<f32>, tensor<i32>, tensor<f32>) -> (tensor<f32>, tensor<i32>)
  return %s1 : tensor<f32>
}

// -----

func.func @interval(%s: tensor<f32>, %n: tensor<i32>, %f: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{expected 'growth_interval' >= 1, got 0}}
  %s1, %n1 = memopt.update_loss_scale %s, %n, %f {backoff_factor = 0.5 : f64, growth_factor = 2.0 : f64, growth_interval = 0 : i64} : (tensor<f32>, tensor<i32>, tensor<f32>) -> (tensor<f32>, tensor<i32>)
  return %s1 : tensor<f32>
}

// -----

func.func @skip_type(%p: tensor<4xf32>, %g: tensor<4xf32>, %k: tensor<f16>) -> tensor<4xf32> {
  // expected-error @+1 {{operand #2 must be 0-d tensor of f32}}
  %r = memopt.sgd_update %p, %g, %k {lr = 0.1 : f64} : (tensor<4xf32>, tensor<4xf32>, tensor<f16>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @wider_grad(%p: tensor<4xf16>, %g: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{expected a gradient whose element type 'f16' holds exactly, got 'f32'}}
  %r = memopt.sgd_update %p, %g {lr = 0.1 : f64} : (tensor<4xf16>, tensor<4xf32>) -> tensor<4xf16>
  return %r : tensor<4xf16>
}

// -----

func.func @bf16_grad_f16_param(%p: tensor<4xf16>, %g: tensor<4xbf16>) -> tensor<4xf16> {
  // expected-error @+1 {{expected a gradient whose element type 'f16' holds exactly, got 'bf16'}}
  %r = memopt.sgd_update %p, %g {lr = 0.1 : f64} : (tensor<4xf16>, tensor<4xbf16>) -> tensor<4xf16>
  return %r : tensor<4xf16>
}

// -----

func.func @grad_shape(%p: tensor<4xf32>, %g: tensor<2x2xf16>) -> tensor<4xf32> {
  // expected-error @+1 {{expected the gradient's shape to be the parameter's, got 'tensor<2x2xf16>' for 'tensor<4xf32>'}}
  %r = memopt.sgd_update %p, %g {lr = 0.1 : f64} : (tensor<4xf32>, tensor<2x2xf16>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @scale_without_skip(%p: tensor<4xf32>, %g: tensor<4xf16>, %s: tensor<f32>) -> tensor<4xf32> {
  // expected-error @+1 {{expected a skip flag beside the loss scale (loss scaling always checks for overflow)}}
  %r = "memopt.sgd_update"(%p, %g, %s) <{lr = 0.1 : f64, operandSegmentSizes = array<i32: 1, 1, 0, 1>, weight_decay = 0.0 : f64}> : (tensor<4xf32>, tensor<4xf16>, tensor<f32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @scale_f16_param(%p: tensor<4xf16>, %g: tensor<4xf16>, %f: tensor<f32>) -> (tensor<4xf16>, tensor<4xf16>) {
  // expected-error @+1 {{expected an f32 or f64 parameter beside the loss scale, got 'f16'}}
  %r, %b = memopt.sgd_momentum_update %p, %g, %p, %f unscale(%f) {lr = 0.1 : f64, momentum = 0.9 : f64} : (tensor<4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<f32>, tensor<f32>) -> (tensor<4xf16>, tensor<4xf16>)
  return %r, %b : tensor<4xf16>, tensor<4xf16>
}

// -----

// expected-error @+1 {{'memopt.loss_scale' needs a float 'init_scale'}}
func.func @bad_attr() attributes {memopt.loss_scale = {dynamic = true}} {
  return
}
