// RUN: memopt-opt %s -split-input-file --memopt-inplace=remarks=true -verify-diagnostics | FileCheck %s

// An inference chain: every activation runs over the previous op's output.
// The linear layers cannot (they are not element-wise); the input %x is an
// argument and is never overwritten.
// CHECK-LABEL: func.func @chain
// CHECK: %[[H:.*]] = memopt.linear
// CHECK: memopt.relu %[[H]] {memopt.inplace = 0 : i64}
// CHECK: memopt.dropout %{{.*}} {memopt.inplace = 0 : i64
func.func @chain(%w: tensor<8x8xf32>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-remark @+1 {{not in place: operand 0: it is a function argument (parameters, state and inputs are never overwritten)}}
  %t = memopt.tanh %x : tensor<4x8xf32>
  %h = memopt.linear %t, %w : tensor<4x8xf32>, tensor<8x8xf32>
  // expected-remark @+1 {{in place over operand 0: its buffer is dead afterwards}}
  %r = memopt.relu %h : tensor<4x8xf32>
  // expected-remark @+1 {{in place over operand 0: its buffer is dead afterwards}}
  %d = memopt.dropout %r {p = 0.1 : f64, seed = 1 : i64} : tensor<4x8xf32>
  %o = memopt.linear %d, %w : tensor<4x8xf32>, tensor<8x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// A residual block: the block input %r is read again by the add, so the
// first activation of the block may not overwrite it; the add writes over
// its left operand (the branch), never over the broadcast bias.
// CHECK-LABEL: func.func @residual
// CHECK: %[[R:.*]] = memopt.relu %{{.*}} {memopt.inplace = 0 : i64}
// CHECK: %[[T:.*]] = memopt.tanh %[[R]] : tensor<4x8xf32>
// CHECK: memopt.add %{{.*}}, %[[R]] {memopt.inplace = 0 : i64}
// CHECK: memopt.add %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8xf32>
func.func @residual(%w: tensor<8x8xf32>, %bias: tensor<8xf32>, %x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %h = memopt.linear %x, %w : tensor<4x8xf32>, tensor<8x8xf32>
  // expected-remark @+1 {{in place over operand 0}}
  %r = memopt.relu %h : tensor<4x8xf32>
  // expected-remark-re @+1 {{not in place: operand 0: its buffer is read later by 'memopt.add' at {{.*}}inplace.mlir:40:8}}
  %t = memopt.tanh %r : tensor<4x8xf32>
  %u = memopt.linear %t, %w : tensor<4x8xf32>, tensor<8x8xf32>
  // expected-remark @+1 {{in place over operand 0}}
  %s = memopt.add %u, %r : tensor<4x8xf32>, tensor<4x8xf32>
  // expected-remark @+1 {{not in place: operand 0: its buffer is returned by the function}}
  %o = memopt.add %s, %bias : tensor<4x8xf32>, tensor<8xf32>
  return %o, %s : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Two readers of one value: only the last may overwrite it. A constant and
// a returned value are never overwritten.
// CHECK-LABEL: func.func @two_readers
// CHECK: memopt.sigmoid %{{.*}} : tensor<4x8xf32>
// CHECK: memopt.tanh %{{.*}} {memopt.inplace = 0 : i64}
// CHECK: memopt.mul %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32>
func.func @two_readers(%w: tensor<8x8xf32>, %x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %h = memopt.linear %x, %w : tensor<4x8xf32>, tensor<8x8xf32>
  // expected-remark-re @+1 {{not in place: operand 0: its buffer is read later by 'memopt.tanh' at {{.*}}}}
  %a = memopt.sigmoid %h : tensor<4x8xf32>
  // expected-remark @+1 {{in place over operand 0}}
  %b = memopt.tanh %h : tensor<4x8xf32>
  %c = arith.constant dense<2.0> : tensor<4x8xf32>
  // expected-remark @+1 {{not in place: operand 0: its buffer is returned by the function; operand 1: it is a constant}}
  %m = memopt.mul %a, %c : tensor<4x8xf32>, tensor<4x8xf32>
  return %m, %a, %b : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
