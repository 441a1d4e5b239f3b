// RUN: memopt-opt %s --allow-unregistered-dialect -split-input-file -verify-diagnostics --memopt-schedule
// RUN: memopt-opt %s --allow-unregistered-dialect -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(func.func(memopt-schedule))'
// RUN: not memopt-opt %s --allow-unregistered-dialect -split-input-file --memopt-autodiff 2>&1 | FileCheck %s --check-prefix=AUTODIFF
// RUN: not memopt-opt %s --allow-unregistered-dialect -split-input-file --memopt-inplace 2>&1 | FileCheck %s --check-prefix=INPLACE
//
// Graphs that mix in IR memopt's passes do not model are refused at the op,
// never transformed: before, --memopt-schedule put memopt.free %v before a
// read of %v inside a region, reordered calls and freed non-tensors, and
// --memopt-autodiff built no gradient through a region that captured a value.

// A value read inside a region without being the op's operand.
func.func @captured(%x: tensor<4xf32>, %w: tensor<4xf32> {memopt.param}) -> tensor<f32> {
  %y = memopt.mul %x, %w : tensor<4xf32>, tensor<4xf32>
  // expected-error @+1 {{'test.region' op is not supported by memopt-schedule in a memopt graph: it has regions, whose captured values and effects memopt's liveness, scheduling and gradients do not model}}
  %z = "test.region"() ({
    %r = memopt.relu %y : tensor<4xf32>
    "test.yield"(%r) : (tensor<4xf32>) -> ()
  }) : () -> tensor<4xf32>
  %l = memopt.mse_loss %z, %x : tensor<4xf32>
  return %l : tensor<f32>
}
// AUTODIFF: 'test.region' op is not supported by memopt-autodiff in a memopt graph: it has regions
// INPLACE: 'test.region' op is not supported by memopt-inplace in a memopt graph: it has regions

// -----

// A call may have side effects: its order is not the scheduler's to change.
func.func private @log(tensor<4xf32>)
func.func @calls(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = memopt.relu %x : tensor<4xf32>
  // expected-error @+1 {{'func.call' op is not supported by memopt-schedule in a memopt graph: calls may have side effects and are not differentiated}}
  func.call @log(%a) : (tensor<4xf32>) -> ()
  %b = memopt.sigmoid %x : tensor<4xf32>
  func.call @log(%b) : (tensor<4xf32>) -> ()
  return %b : tensor<4xf32>
}
// AUTODIFF: 'func.call' op is not supported by memopt-autodiff
// INPLACE: 'func.call' op is not supported by memopt-inplace

// -----

// A memref (or scalar) is not a tensor memopt owns: no memopt.free for it.
// expected-error @+1 {{'func.func' op cannot be transformed by memopt-schedule: argument 1 has type 'memref<4xf32>'; memopt graphs take ranked tensors}}
func.func @memref_arg(%x: tensor<4xf32>, %m: memref<4xf32>) -> tensor<4xf32> {
  %a = memopt.relu %x : tensor<4xf32>
  return %a : tensor<4xf32>
}
// AUTODIFF: argument 1 has type 'memref<4xf32>'
// INPLACE: argument 1 has type 'memref<4xf32>'

// -----

// Another dialect's op inside a graph.
func.func @foreign_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = memopt.relu %x : tensor<4xf32>
  // expected-error @+1 {{'arith.addf' op is not supported by memopt-schedule in a memopt graph: memopt's passes transform memopt ops, tensor arith.constant and func.return only}}
  %b = arith.addf %a, %a : tensor<4xf32>
  return %b : tensor<4xf32>
}
// AUTODIFF: 'arith.addf' op is not supported by memopt-autodiff
// INPLACE: 'arith.addf' op is not supported by memopt-inplace

// -----

// A training graph something calls keeps its signature: autodiff refuses
// (before, it rewrote the signature under the caller). The other passes
// keep signatures and transform it.
// AUTODIFF: error: 'func.func' op is called, and --memopt-autodiff would change its signature under its callers; differentiate a function nothing calls
// INPLACE-NOT: @step{{.*}} error
func.func @step(%w: tensor<3x4xf32> {memopt.param}, %x: tensor<2x4xf32>, %y: tensor<2x3xf32>) -> tensor<f32> {
  %h = memopt.linear %x, %w : tensor<2x4xf32>, tensor<3x4xf32>
  %l = memopt.mse_loss %h, %y : tensor<2x3xf32>
  return %l : tensor<f32>
}
func.func @driver(%w: tensor<3x4xf32>, %x: tensor<2x4xf32>, %y: tensor<2x3xf32>) -> tensor<f32> {
  %l = func.call @step(%w, %x, %y) : (tensor<3x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
