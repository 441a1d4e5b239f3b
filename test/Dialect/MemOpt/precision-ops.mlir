// RUN: memopt-opt %s -split-input-file | memopt-opt -split-input-file | FileCheck %s
// RUN: memopt-opt %s -split-input-file --canonicalize | FileCheck %s --check-prefix=CANON

// The cast and loss-scaling ops round-trip.
// CHECK-LABEL: func.func @ops
// CHECK: memopt.cast %arg0 : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK: memopt.found_inf %arg0, %{{.*}} : (tensor<4x8xf32>, tensor<4x8xf16>) -> tensor<f32>
// CHECK: memopt.unscale %arg0, %arg1 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
// CHECK: memopt.update_loss_scale %arg1, %arg2, %{{.*}} {backoff_factor = 5.000000e-01 : f64, growth_factor = 2.000000e+00 : f64, growth_interval = 2000 : i64} : (tensor<f32>, tensor<i32>, tensor<f32>) -> (tensor<f32>, tensor<i32>)
// CHECK: memopt.select %{{.*}}, %arg1, %arg1 : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK: memopt.sgd_update %arg0, %{{.*}}, %{{.*}} {lr = 1.000000e-01 : f64} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
func.func @ops(%g: tensor<4x8xf32>, %s: tensor<f32>, %n: tensor<i32>)
    -> (tensor<4x8xf32>, tensor<f32>, tensor<i32>, tensor<f32>) {
  %h = memopt.cast %g : tensor<4x8xf32> to tensor<4x8xf16>
  %f = memopt.found_inf %g, %h : (tensor<4x8xf32>, tensor<4x8xf16>) -> tensor<f32>
  %u = memopt.unscale %g, %s : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %s1, %n1 = memopt.update_loss_scale %s, %n, %f {backoff_factor = 0.5 : f64, growth_factor = 2.0 : f64, growth_interval = 2000 : i64} : (tensor<f32>, tensor<i32>, tensor<f32>) -> (tensor<f32>, tensor<i32>)
  %t = memopt.select %f, %s, %s : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<f32>
  %p = memopt.sgd_update %g, %u, %f {lr = 0.1 : f64} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %p, %s1, %n1, %t : tensor<4x8xf32>, tensor<f32>, tensor<i32>, tensor<f32>
}

// -----

// An update reads a gradient narrower than its parameter (widened exactly)
// and, beside its skip flag, the loss scale it divides the gradient by.
// CHECK-LABEL: func.func @fused_updates
// CHECK: memopt.sgd_update %arg0, %arg1 {lr = 1.000000e-01 : f64} : (tensor<4x8xf32>, tensor<4x8xbf16>) -> tensor<4x8xf32>
// CHECK: memopt.sgd_momentum_update %arg0, %arg2, %arg0, %arg3 unscale(%arg4) {{.*}} : (tensor<4x8xf32>, tensor<4x8xf16>, tensor<4x8xf32>, tensor<f32>, tensor<f32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK: memopt.adam_update %arg5, %arg2, %arg5, %arg5, %arg4, %arg3 unscale(%arg4) {lr = 1.000000e-03 : f64} : (tensor<4x8xf64>, tensor<4x8xf16>, tensor<4x8xf64>, tensor<4x8xf64>, tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<4x8xf64>, tensor<4x8xf64>, tensor<4x8xf64>)
func.func @fused_updates(%p: tensor<4x8xf32>, %gb: tensor<4x8xbf16>, %gh: tensor<4x8xf16>, %f: tensor<f32>, %s: tensor<f32>, %q: tensor<4x8xf64>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf64>) {
  %a = memopt.sgd_update %p, %gb {lr = 0.1 : f64} : (tensor<4x8xf32>, tensor<4x8xbf16>) -> tensor<4x8xf32>
  %b, %bb = memopt.sgd_momentum_update %p, %gh, %p, %f unscale(%s) {lr = 0.1 : f64, momentum = 0.9 : f64} : (tensor<4x8xf32>, tensor<4x8xf16>, tensor<4x8xf32>, tensor<f32>, tensor<f32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  %c:3 = memopt.adam_update %q, %gh, %q, %q, %s, %f unscale(%s) {lr = 1.0e-3 : f64} : (tensor<4x8xf64>, tensor<4x8xf16>, tensor<4x8xf64>, tensor<4x8xf64>, tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<4x8xf64>, tensor<4x8xf64>, tensor<4x8xf64>)
  return %a, %b, %c#0 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf64>
}

// -----

// Casts that cannot change a value fold: to the same type, and back
// through a type that holds every value exactly (f16 -> f32 -> f16).
// CANON-LABEL: func.func @exact_round_trip
// CANON-NEXT: return %arg0, %arg0 : tensor<4xf16>, tensor<4xf16>
func.func @exact_round_trip(%x: tensor<4xf16>) -> (tensor<4xf16>, tensor<4xf16>) {
  %a = memopt.cast %x : tensor<4xf16> to tensor<4xf32>
  %b = memopt.cast %a : tensor<4xf32> to tensor<4xf16>
  %c = memopt.cast %x : tensor<4xf16> to tensor<4xf16>
  return %b, %c : tensor<4xf16>, tensor<4xf16>
}

// -----

// An exact intermediate collapses into one cast (bf16 -> f32 -> f64 is
// bf16 -> f64). A lossy one stays: f32 -> f16 -> f32 rounds.
// CANON-LABEL: func.func @chains
// CANON-NEXT: %[[W:.*]] = memopt.cast %arg0 : tensor<4xbf16> to tensor<4xf64>
// CANON-NEXT: %[[N:.*]] = memopt.cast %arg1 : tensor<4xf32> to tensor<4xf16>
// CANON-NEXT: %[[B:.*]] = memopt.cast %[[N]] : tensor<4xf16> to tensor<4xf32>
// CANON-NEXT: return %[[W]], %[[B]]
func.func @chains(%x: tensor<4xbf16>, %y: tensor<4xf32>) -> (tensor<4xf64>, tensor<4xf32>) {
  %a = memopt.cast %x : tensor<4xbf16> to tensor<4xf32>
  %b = memopt.cast %a : tensor<4xf32> to tensor<4xf64>
  %c = memopt.cast %y : tensor<4xf32> to tensor<4xf16>
  %d = memopt.cast %c : tensor<4xf16> to tensor<4xf32>
  return %b, %d : tensor<4xf64>, tensor<4xf32>
}

// -----

// A cast of a constant is a constant, rounded as the kernel rounds: 65520
// is past f16's largest finite value (65504) and becomes +inf; 1e-8 is
// below half the smallest subnormal and becomes 0.
// CANON-LABEL: func.func @constant
// CANON-NEXT: %[[C:.*]] = arith.constant dense<[1.000000e+00, 0x7C00, 0.000000e+00, 3.000000e+00]> : tensor<4xf16>
// CANON-NEXT: return %[[C]]
func.func @constant() -> tensor<4xf16> {
  %c = arith.constant dense<[1.0, 65520.0, 1.0e-8, 3.0]> : tensor<4xf32>
  %h = memopt.cast %c : tensor<4xf32> to tensor<4xf16>
  return %h : tensor<4xf16>
}
