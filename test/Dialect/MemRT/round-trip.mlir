// RUN: memopt-opt %s | memopt-opt | FileCheck %s
// RUN: memopt-opt %s --mlir-print-op-generic | memopt-opt | FileCheck %s

// CHECK-LABEL: func.func @step
// CHECK-SAME:    %[[W:.*]]: memref<4x8xf32> {memrt.role = "param"}
// CHECK-SAME:    %[[X:.*]]: memref<2x8xf32> {memrt.role = "data"}
// CHECK-SAME:    attributes {memrt.alignment = 64 : i64, memrt.arena_bytes = 128 : i64}
// CHECK:         %[[A:.*]] = memrt.arena_slice offset 0 : memref<2x4xf32>
// CHECK:         memrt.kernel "linear" ins(%[[X]], %[[W]] : memref<2x8xf32>, memref<4x8xf32>) outs(%[[A]] : memref<2x4xf32>) attrs {}
// CHECK:         %[[V:.*]] = memrt.view %[[A]] : memref<2x4xf32> -> memref<8xf32>
// CHECK:         %[[C:.*]] = memrt.constant dense<2.000000e+00> : tensor<f32> -> memref<f32>
// CHECK:         %[[B:.*]] = memrt.arena_slice offset 64 : memref<8xf32>
// CHECK:         memrt.kernel "mul" ins(%[[V]], %[[C]] : memref<8xf32>, memref<f32>) outs(%[[B]] : memref<8xf32>) attrs {}
// CHECK:         memrt.kernel "dropout" ins(%[[B]] : memref<8xf32>) outs(%[[B]] : memref<8xf32>) attrs {p = 5.000000e-01 : f64, seed = 3 : i64}
// CHECK:         return %[[B]]
func.func @step(%w: memref<4x8xf32> {memrt.role = "param"}, %x: memref<2x8xf32> {memrt.role = "data"}) -> memref<8xf32>
    attributes {memrt.arena_bytes = 128 : i64, memrt.alignment = 64 : i64} {
  %a = memrt.arena_slice offset 0 : memref<2x4xf32>
  memrt.kernel "linear" ins(%x, %w : memref<2x8xf32>, memref<4x8xf32>) outs(%a : memref<2x4xf32>) attrs {}
  %v = memrt.view %a : memref<2x4xf32> -> memref<8xf32>
  %c = memrt.constant dense<2.0> : tensor<f32> -> memref<f32>
  %b = memrt.arena_slice offset 64 : memref<8xf32>
  memrt.kernel "mul" ins(%v, %c : memref<8xf32>, memref<f32>) outs(%b : memref<8xf32>) attrs {}
  memrt.kernel "dropout" ins(%b : memref<8xf32>) outs(%b : memref<8xf32>) attrs {p = 0.5 : f64, seed = 3 : i64}
  return %b : memref<8xf32>
}

// A kernel's workspace is an i8 arena slice after its outputs.
// CHECK-LABEL: func.func @workspace
// CHECK:         %[[WS:.*]] = memrt.arena_slice offset 256 : memref<1152xi8>
// CHECK:         memrt.kernel "conv2d" ins(%{{.*}}, %{{.*}} : memref<1x2x4x4xf32>, memref<2x2x3x3xf32>) outs(%{{.*}} : memref<1x2x4x4xf32>) workspace(%[[WS]] : memref<1152xi8>) attrs {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, strides = array<i64: 1, 1>}
func.func @workspace(%x: memref<1x2x4x4xf32> {memrt.role = "data"}, %w: memref<2x2x3x3xf32> {memrt.role = "param"}) -> memref<1x2x4x4xf32>
    attributes {memrt.arena_bytes = 1408 : i64, memrt.alignment = 64 : i64} {
  %y = memrt.arena_slice offset 0 : memref<1x2x4x4xf32>
  %ws = memrt.arena_slice offset 256 : memref<1152xi8>
  memrt.kernel "conv2d" ins(%x, %w : memref<1x2x4x4xf32>, memref<2x2x3x3xf32>) outs(%y : memref<1x2x4x4xf32>) workspace(%ws : memref<1152xi8>) attrs {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, strides = array<i64: 1, 1>}
  return %y : memref<1x2x4x4xf32>
}
