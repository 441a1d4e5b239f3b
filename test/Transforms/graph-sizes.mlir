// Sizes are computed in checked arithmetic: a graph whose tensors or FLOPs
// would not fit memopt's int64 counts is refused with a located error by
// every pass and by the lowering, never wrapped into negative bytes.
// RUN: memopt-opt %s -split-input-file -verify-diagnostics --memopt-report=file=%t.json
// RUN: memopt-opt %s -split-input-file -verify-diagnostics --memopt-pipeline -o /dev/null
// RUN: not memopt-opt %s -split-input-file --convert-memopt-to-memrt 2>&1 | FileCheck %s --check-prefix=LOWER
// LOWER: error: 'func.func' op cannot be transformed by convert-memopt-to-memrt: a tensor of 'tensor<2305843009213693952xf32>' is 2^63 bytes or more
// LOWER: error: 'memopt.linear' op cannot be transformed by convert-memopt-to-memrt: a tensor of 'tensor<70368744177664x8xf32>' is 2251799813685248 bytes
// LOWER: error: 'memopt.linear' op cannot be transformed by convert-memopt-to-memrt: the graph's FLOPs total more than 2^59

// 2^61 f32 elements: 2^63 bytes, one past int64.
// expected-error @+1 {{a tensor of 'tensor<2305843009213693952xf32>' is 2^63 bytes or more; memopt takes tensors of at most 2^48 bytes (256 TiB)}}
func.func @wraps(%x: tensor<2305843009213693952xf32>) -> tensor<2305843009213693952xf32> {
  %y = memopt.relu %x : tensor<2305843009213693952xf32>
  return %y : tensor<2305843009213693952xf32>
}

// -----

// 2^51 bytes: fits int64, but past the 2^48-byte bound (sums of many such
// buffers would not).
func.func @too_big(%x: tensor<70368744177664x1xf32>) -> tensor<70368744177664x8xf32> {
  %w = arith.constant dense<1.0> : tensor<8x1xf32>
  // expected-error @+1 {{'memopt.linear' op cannot be transformed by}}
  %h = memopt.linear %x, %w : tensor<70368744177664x1xf32>, tensor<8x1xf32>
  %y = memopt.relu %h : tensor<70368744177664x8xf32>
  return %y : tensor<70368744177664x8xf32>
}

// -----

// 2 x 2^45 x 2^14 = 2^60 FLOPs in one product: over 2^59.
func.func @flops(%x: tensor<1073741824x16384xf32>, %w: tensor<32768x16384xf32>) -> tensor<1073741824x32768xf32> {
  // expected-error @+1 {{the graph's FLOPs total more than 2^59 (5.8e17), more than memopt's cost model counts with}}
  %y = memopt.linear %x, %w : tensor<1073741824x16384xf32>, tensor<32768x16384xf32>
  return %y : tensor<1073741824x32768xf32>
}
