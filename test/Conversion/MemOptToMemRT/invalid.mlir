// RUN: memopt-opt %s -split-input-file --convert-memopt-to-memrt -verify-diagnostics
// RUN: not memopt-opt %s -split-input-file --convert-memopt-to-memrt=alignment=48 2>&1 | FileCheck %s --check-prefix=ALIGN
// ALIGN: error: convert-memopt-to-memrt: alignment must be a power of two from 1 to 4096, got 48

func.func @unsupported(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tensor.empty' op cannot be lowered to memrt: only memopt ops, tensor arith.constant and func ops are supported}}
  %e = tensor.empty() : tensor<4xf32>
  %y = memopt.add %x, %e : tensor<4xf32>, tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @scalar_constant(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.constant' op cannot be lowered to memrt}}
  %c = arith.constant 1.0 : f32
  return %x : tensor<4xf32>
}
