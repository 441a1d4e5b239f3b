// RUN: memopt-opt %s -split-input-file -verify-diagnostics --convert-memopt-to-memrt | FileCheck %s
//
// Declarations are other code's: the conversion leaves them as they are
// (before, it rewrote their tensor signatures to memrefs). Nested modules are
// refused (before, their functions were converted into the outer arena).

// CHECK-LABEL: func.func private @external(tensor<4xf32>) -> tensor<4xf32>
// CHECK-LABEL: func.func @graph(
// CHECK-SAME:    memref<4xf32>
// CHECK:         memrt.kernel "relu"
func.func private @external(tensor<4xf32>) -> tensor<4xf32>
func.func @graph(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = memopt.relu %x : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @outer(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = memopt.relu %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
// expected-error @+1 {{'builtin.module' op cannot be lowered to memrt: nested modules are not supported; run the conversion on the inner module}}
module @inner {
  func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
    %y = memopt.relu %x : tensor<4xf32>
    return %y : tensor<4xf32>
  }
}
