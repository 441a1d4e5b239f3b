// memopt-schedule nests under func.func (the pass manager then schedules a
// module's functions in parallel) and gives the same result as on the
// module; functions that are not memopt graphs are left alone either way.
// RUN: memopt-opt %s --pass-pipeline='builtin.module(func.func(memopt-schedule))' > %t.nested.mlir
// RUN: memopt-opt %s --pass-pipeline='builtin.module(memopt-schedule)' > %t.module.mlir
// RUN: diff %t.nested.mlir %t.module.mlir
// RUN: FileCheck %s < %t.nested.mlir

// CHECK-LABEL: func.func @first(
// CHECK:         %[[A:.*]] = memopt.relu %arg0
// CHECK-NEXT:    %[[B:.*]] = memopt.sigmoid %[[A]]
// CHECK-NEXT:    memopt.free %[[A]]
// CHECK-NEXT:    return %[[B]]
// CHECK-LABEL: func.func @second(
// CHECK:         memopt.tanh
// CHECK-NEXT:    memopt.gelu
// CHECK-NEXT:    memopt.free
// CHECK-LABEL: func.func private @declared(
func.func @first(%x: tensor<8xf32>) -> tensor<8xf32> {
  %a = memopt.relu %x : tensor<8xf32>
  %b = memopt.sigmoid %a : tensor<8xf32>
  return %b : tensor<8xf32>
}
func.func @second(%x: tensor<8xf32>) -> tensor<8xf32> {
  %a = memopt.tanh %x : tensor<8xf32>
  %b = memopt.gelu %a : tensor<8xf32>
  return %b : tensor<8xf32>
}
func.func private @declared(tensor<8xf32>) -> tensor<8xf32>
