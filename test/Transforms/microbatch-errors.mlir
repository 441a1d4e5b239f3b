// RUN: memopt-opt %s -split-input-file --memopt-microbatch=count=2 -verify-diagnostics
// RUN: not memopt-opt %s -split-input-file --memopt-microbatch=count=0 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: memopt-microbatch: count must be at least 1, got 0

// expected-error @+1 {{batch of 3 (data argument #1, dimension 0) is not divisible by count=2}}
func.func @odd(%w: tensor<2x4xf32> {memopt.param}, %x: tensor<3x4xf32>, %t: tensor<3x2xf32>) -> tensor<f32> {
  %h = memopt.linear %x, %w : tensor<3x4xf32>, tensor<2x4xf32>
  %l = memopt.mse_loss %h, %t : tensor<3x2xf32>
  return %l : tensor<f32>
}

// -----

func.func @across_batch(%w: tensor<2x8xf32> {memopt.param}, %x: tensor<4x2xf32>) -> tensor<f32> {
  // expected-error @+1 {{'memopt.reshape' op cannot be split into 2 micro-batches: its result 'tensor<1x8xf32>' does not keep the batch in the leading dimension}}
  %f = memopt.reshape %x : tensor<4x2xf32> -> tensor<1x8xf32>
  %h = memopt.linear %f, %w : tensor<1x8xf32>, tensor<2x8xf32>
  %l = memopt.mse_loss %h, %h : tensor<1x2xf32>
  return %l : tensor<f32>
}

// -----

func.func @slices_batch(%w: tensor<2x2xf32> {memopt.param}, %x: tensor<4x2xf32>) -> tensor<f32> {
  // expected-error @+1 {{'memopt.slice' op cannot be split into 2 micro-batches: it slices the batch dimension}}
  %s = memopt.slice %x {offsets = array<i64: 1, 0>, sizes = array<i64: 2, 2>} : tensor<4x2xf32>
  %h = memopt.linear %s, %w : tensor<2x2xf32>, tensor<2x2xf32>
  %l = memopt.mse_loss %h, %h : tensor<2x2xf32>
  return %l : tensor<f32>
}
