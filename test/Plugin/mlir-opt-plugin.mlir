// REQUIRES: plugin
// memopt inside upstream mlir-opt: MemOptPlugin.so registers the dialects
// and the passes, which then mix with upstream's in one pipeline and give
// exactly what memopt-opt gives.
//
// RUN: %upstream_mlir_opt --load-dialect-plugin=%memopt_plugin --load-pass-plugin=%memopt_plugin %s --pass-pipeline='builtin.module(canonicalize,memopt-pipeline{checkpoint=sqrt inplace=true},cse)' > %t.upstream.mlir
// RUN: memopt-opt %s --pass-pipeline='builtin.module(canonicalize,memopt-pipeline{checkpoint=sqrt inplace=true},cse)' > %t.own.mlir
// RUN: diff %t.upstream.mlir %t.own.mlir
// RUN: FileCheck %s < %t.upstream.mlir
//
// The plugin brings memopt's passes and no test passes (those live in
// test/lib, linked by memopt-opt alone); upstream's test-print-liveness is
// still its own.
// RUN: %upstream_mlir_opt --load-pass-plugin=%memopt_plugin --help | FileCheck %s --check-prefix=HELP
// RUN: %upstream_mlir_opt --load-pass-plugin=%memopt_plugin --help | FileCheck %s --check-prefix=NOTEST
// HELP-DAG: --test-print-liveness {{.*}}Print the contents of a constructed liveness information
// HELP-DAG: --memopt-autodiff
// NOTEST-NOT: --test-memopt-
//
// Foreign IR refusals work under mlir-opt too, where every upstream dialect
// is registered.
// RUN: %upstream_mlir_opt --load-dialect-plugin=%memopt_plugin --load-pass-plugin=%memopt_plugin %S/Inputs/scf-capture.mlir --pass-pipeline='builtin.module(memopt-autodiff)' -verify-diagnostics

// CHECK-LABEL: func.func @step(
// CHECK-SAME:    memopt.arena_bytes
// CHECK:         memopt.sgd_update
func.func @step(%w: tensor<16x8xf32> {memopt.param}, %b: tensor<16xf32> {memopt.param},
                %x: tensor<4x8xf32>, %y: tensor<4xi64>) -> tensor<f32> {
  %h = memopt.linear %x, %w, %b : tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>
  %r = memopt.relu %h : tensor<4x16xf32>
  %l = memopt.cross_entropy %r, %y : tensor<4x16xf32>, tensor<4xi64>
  return %l : tensor<f32>
}
