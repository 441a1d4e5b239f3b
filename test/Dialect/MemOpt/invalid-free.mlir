// RUN: memopt-opt %s -split-input-file -verify-diagnostics

// memopt.free: what may be freed, and when.

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
