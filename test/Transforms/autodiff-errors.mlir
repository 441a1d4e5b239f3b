// RUN: memopt-opt %s -split-input-file --memopt-autodiff -verify-diagnostics
// RUN: not memopt-opt %s --memopt-autodiff=optimizer=lion 2>&1 | FileCheck %s --check-prefix=OPT
// OPT: for the --optimizer option: unknown value 'lion' (expected sgd, momentum, adam, adamw, adam8bit, adamw8bit, adafactor or none)

// expected-error @+1 {{has a scalar loss but no 'memopt.param' arguments: nothing to train}}
func.func @no_params(%x: tensor<4xf32>, %t: tensor<4xf32>) -> tensor<f32> {
  %l = memopt.mse_loss %x, %t : tensor<4xf32>
  return %l : tensor<f32>
}

// -----

// expected-error @+1 {{loss does not depend on any parameter}}
func.func @independent(%p: tensor<4xf32> {memopt.param}, %x: tensor<4xf32>, %t: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) {
  %r = memopt.relu %p : tensor<4xf32>
  %l = memopt.mse_loss %x, %t : tensor<4xf32>
  return %l, %r : tensor<f32>, tensor<4xf32>
}

// -----

func.func @no_rule(%p: tensor<4xf32> {memopt.param}, %t: tensor<4xf32>) -> tensor<f32> {
  // expected-error @+1 {{'arith.addf' op is not supported by memopt-autodiff in a memopt graph: memopt's passes transform memopt ops, tensor arith.constant and func.return only}}
  %s = arith.addf %p, %p : tensor<4xf32>
  %l = memopt.mse_loss %s, %t : tensor<4xf32>
  return %l : tensor<f32>
}

// -----

// expected-error @+1 {{is already a training step (it has optimizer state); run --memopt-autodiff on the forward graph}}
func.func @twice(%p: tensor<4xf32> {memopt.param}, %b: tensor<4xf32> {memopt.optimizer_state}, %t: tensor<4xf32>) -> tensor<f32> {
  %l = memopt.mse_loss %p, %t : tensor<4xf32>
  return %l : tensor<f32>
}

// -----

// A parameter the loss ignores is left unchanged, with a warning.
// expected-warning @+1 {{parameter #1 does not affect the loss; it is left unchanged}}
func.func @unused(%p: tensor<4xf32> {memopt.param}, %q: tensor<4xf32> {memopt.param}, %t: tensor<4xf32>) -> tensor<f32> {
  %l = memopt.mse_loss %p, %t : tensor<4xf32>
  return %l : tensor<f32>
}

// -----

// Inference graphs are left alone.
func.func @inference(%p: tensor<4xf32> {memopt.param}) -> tensor<4xf32> {
  %r = memopt.relu %p : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A key bias computed from a parameter would need a gradient the fused
// attention does not write: refused, never trained as if it were zero.
func.func @key_bias_from_parameter(%q: tensor<1x2x3x4xf32> {memopt.param}, %b: tensor<1x3xf32> {memopt.param},
                                   %t: tensor<1x2x3x4xf32>) -> tensor<f32> {
  // expected-error @+1 {{'memopt.attention' op the gradient of key_bias is not implemented: the key bias must not depend on a parameter (a key-padding mask from the data needs none)}}
  %o, %l = memopt.attention %q, %q, %q key_bias %b {scale = 0.5 : f64} : tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x3xf32>
  %loss = memopt.mse_loss %o, %t : tensor<1x2x3x4xf32>
  return %loss : tensor<f32>
}
