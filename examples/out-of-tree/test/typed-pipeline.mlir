// example-opt's own --example-train builds memopt's pipeline from C++ with
// typed options (MemOptPipelineOptions: Optimizer::Adam,
// CheckpointStrategy::Sqrt, inplace) and adds upstream's lowering; the
// result is exactly the same pipeline spelt as text.
// RUN: example-opt %s --example-train > %t.typed.mlir
// RUN: example-opt %s --pass-pipeline='builtin.module(memopt-pipeline{optimizer=adam checkpoint=sqrt inplace=true},convert-scf-to-cf)' > %t.text.mlir
// RUN: diff %t.typed.mlir %t.text.mlir
// RUN: FileCheck %s < %t.typed.mlir

// CHECK-LABEL: func.func @mlp(
// CHECK-SAME:    memopt.arena_bytes
// CHECK:         memopt.adam_update
func.func @mlp(%w1: tensor<32x16xf32> {memopt.param}, %w2: tensor<32x32xf32> {memopt.param},
               %w3: tensor<4x32xf32> {memopt.param}, %x: tensor<8x16xf32>, %y: tensor<8xi64>) -> tensor<f32> {
  %h1 = memopt.linear %x, %w1 : tensor<8x16xf32>, tensor<32x16xf32>
  %a1 = memopt.relu %h1 : tensor<8x32xf32>
  %h2 = memopt.linear %a1, %w2 : tensor<8x32xf32>, tensor<32x32xf32>
  %a2 = memopt.relu %h2 : tensor<8x32xf32>
  %h3 = memopt.linear %a2, %w3 : tensor<8x32xf32>, tensor<4x32xf32>
  %l = memopt.cross_entropy %h3, %y : tensor<8x4xf32>, tensor<8xi64>
  return %l : tensor<f32>
}
