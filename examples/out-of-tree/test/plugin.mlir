// REQUIRES: plugin
// The installed MemOptPlugin.so (MEMOPT_PLUGIN in MemOptConfig.cmake) loads
// into upstream mlir-opt.
// RUN: %upstream_mlir_opt --load-dialect-plugin=%memopt_plugin --load-pass-plugin=%memopt_plugin %S/Inputs/mlp.mlir --pass-pipeline='builtin.module(memopt-pipeline{checkpoint=sqrt})' | FileCheck %s
// CHECK-LABEL: func.func @step(
// CHECK-SAME:    memopt.arena_bytes
// CHECK:         memopt.sgd_update
