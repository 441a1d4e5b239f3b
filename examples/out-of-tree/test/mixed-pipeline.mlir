// example-opt is this project's own mlir-opt: memopt's passes and upstream's
// run in one pipeline over a module that holds a memopt training graph next
// to an upstream scf function, which memopt's passes leave alone.
// RUN: example-opt %s --pass-pipeline='builtin.module(memopt-autodiff{function=step},func.func(memopt-schedule),convert-scf-to-cf)' | FileCheck %s

// CHECK-LABEL: func.func @step(
// CHECK:         memopt.linear
// CHECK:         memopt.cross_entropy
// CHECK:         memopt.sgd_update
// CHECK:         memopt.free
// CHECK:         return
// CHECK-LABEL: func.func @sum_to(
// CHECK-NOT:     scf.for
// CHECK:         cf.cond_br
// CHECK-NOT:     memopt.
// CHECK:         return
func.func @step(%w: tensor<4x8xf32> {memopt.param}, %b: tensor<4xf32> {memopt.param},
                %x: tensor<16x8xf32>, %y: tensor<16xi64>) -> tensor<f32> {
  %o = memopt.linear %x, %w, %b : tensor<16x8xf32>, tensor<4x8xf32>, tensor<4xf32>
  %l = memopt.cross_entropy %o, %y : tensor<16x4xf32>, tensor<16xi64>
  return %l : tensor<f32>
}

func.func @sum_to(%n: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %c0) -> (index) {
    %next = arith.addi %acc, %i : index
    scf.yield %next : index
  }
  return %s : index
}
