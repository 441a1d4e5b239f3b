// RUN: memopt-opt %s --memopt-schedule --memopt-plan-memory --convert-memopt-to-memrt | FileCheck %s
// The lowering folds nothing: once the arena plan placed %b and %c, folding
// cast(cast(%a)) to %a would make the second relu read a slot the plan has
// already given to %c (here both casts run, each into its own slice).
// CHECK-LABEL: func.func @chain(
// CHECK:         %[[A:.*]] = memrt.arena_slice offset 64 : memref<4xf16>
// CHECK:         memrt.kernel "relu" ins(%arg0 : memref<4xf16>) outs(%[[A]]
// CHECK:         %[[B:.*]] = memrt.arena_slice offset 0 : memref<4xf32>
// CHECK:         memrt.kernel "cast" ins(%[[A]] : memref<4xf16>) outs(%[[B]]
// CHECK:         %[[C:.*]] = memrt.arena_slice offset 64 : memref<4xf16>
// CHECK:         memrt.kernel "cast" ins(%[[B]] : memref<4xf32>) outs(%[[C]]
// CHECK:         memrt.kernel "relu" ins(%[[C]] : memref<4xf16>)
func.func @chain(%x: tensor<4xf16>) -> tensor<4xf16> {
  %a = memopt.relu %x : tensor<4xf16>
  %b = memopt.cast %a : tensor<4xf16> to tensor<4xf32>
  %c = memopt.cast %b : tensor<4xf32> to tensor<4xf16>
  %d = memopt.relu %c : tensor<4xf16>
  return %d : tensor<4xf16>
}
