// RUN: memopt-opt %s | memopt-opt | FileCheck %s
// RUN: memopt-opt %s --mlir-print-op-generic | memopt-opt | FileCheck %s
// RUN: memopt-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Valid uses of the memopt argument attributes: `{memopt.param}` marks a
// trainable parameter and `{memopt.state}` non-trainable state; both are unit
// attributes on statically shaped float tensors of any float type and rank.
// Unmarked arguments (data) may have any type. The markers round-trip through
// the custom and the generic form. Misuses are in invalid-func-attrs.mlir.

// CHECK-LABEL: func.func @all_float_types(
// CHECK-SAME: %arg0: tensor<4xf16> {memopt.param}, %arg1: tensor<bf16> {memopt.param}, %arg2: tensor<2x3xf32> {memopt.param}, %arg3: tensor<2x2xf64> {memopt.state}) -> tensor<4xf16> {
// GENERIC: "func.func"() <{arg_attrs = [{memopt.param}, {memopt.param}, {memopt.param}, {memopt.state}], function_type = (tensor<4xf16>, tensor<bf16>, tensor<2x3xf32>, tensor<2x2xf64>) -> tensor<4xf16>, sym_name = "all_float_types"}>
func.func @all_float_types(%w: tensor<4xf16> {memopt.param}, %s: tensor<bf16> {memopt.param},
                           %m: tensor<2x3xf32> {memopt.param}, %v: tensor<2x2xf64> {memopt.state})
    -> tensor<4xf16> {
  return %w : tensor<4xf16>
}

// `= unit` is the same unit attribute and prints in the short form.
// CHECK-LABEL: func.func @explicit_unit(
// CHECK-SAME: %arg0: tensor<8xf32> {memopt.param}, %arg1: tensor<8xf32> {memopt.state})
func.func @explicit_unit(%w: tensor<8xf32> {memopt.param = unit}, %s: tensor<8xf32> {memopt.state = unit}) {
  return
}

// Data arguments carry no marker and may be integer, dynamic or non-tensor;
// attributes of other dialects sit next to the memopt markers.
// CHECK-LABEL: func.func @mixed(
// CHECK-SAME: %arg0: tensor<3xi64>, %arg1: tensor<?x4xf32>, %arg2: f32, %arg3: tensor<4x4xf32> {foo.bar = 1 : i64, memopt.param}, %arg4: tensor<4xf32> {foo.baz, memopt.state})
// GENERIC: "func.func"() <{arg_attrs = [{}, {}, {}, {foo.bar = 1 : i64, memopt.param}, {foo.baz, memopt.state}]
func.func @mixed(%ids: tensor<3xi64>, %dyn: tensor<?x4xf32>, %scale: f32,
                 %w: tensor<4x4xf32> {memopt.param, foo.bar = 1 : i64},
                 %s: tensor<4xf32> {foo.baz, memopt.state}) {
  return
}

// Declarations are verified and printed like definitions.
// CHECK-LABEL: func.func private @declaration(
// CHECK-SAME: tensor<4xf32> {memopt.param}, tensor<4xf32> {memopt.state}, tensor<4xi32>)
// GENERIC: "func.func"() <{arg_attrs = [{memopt.param}, {memopt.state}, {}], function_type = (tensor<4xf32>, tensor<4xf32>, tensor<4xi32>) -> (), sym_name = "declaration", sym_visibility = "private"}>
func.func private @declaration(tensor<4xf32> {memopt.param}, tensor<4xf32> {memopt.state}, tensor<4xi32>)

// A small training step using the markers.
// CHECK-LABEL: func.func @train(
// CHECK-SAME: %arg0: tensor<10x784xf32> {memopt.param}, %arg1: tensor<10xf32> {memopt.param}, %arg2: tensor<64x784xf32>, %arg3: tensor<64xi64>) -> tensor<f32> {
// CHECK-NEXT: %0 = memopt.linear %arg2, %arg0, %arg1 : tensor<64x784xf32>, tensor<10x784xf32>, tensor<10xf32>
// CHECK-NEXT: %1 = memopt.cross_entropy %0, %arg3 : tensor<64x10xf32>, tensor<64xi64>
// CHECK-NEXT: return %1 : tensor<f32>
func.func @train(%w: tensor<10x784xf32> {memopt.param}, %b: tensor<10xf32> {memopt.param},
                 %x: tensor<64x784xf32>, %labels: tensor<64xi64>) -> tensor<f32> {
  %logits = memopt.linear %x, %w, %b : tensor<64x784xf32>, tensor<10x784xf32>, tensor<10xf32>
  %loss = memopt.cross_entropy %logits, %labels : tensor<64x10xf32>, tensor<64xi64>
  return %loss : tensor<f32>
}

// -----

// Optimizer state and result-to-argument updates, as --memopt-autodiff writes them.
// CHECK-LABEL: func.func @updates
// CHECK-SAME:    %{{.*}}: tensor<4xf32> {memopt.param}, %{{.*}}: tensor<4xf32> {memopt.optimizer_state}
// CHECK-SAME:    -> (tensor<4xf32> {memopt.updates = 0 : i64}, tensor<4xf32> {memopt.updates = 1 : i64})
func.func @updates(%p: tensor<4xf32> {memopt.param}, %m: tensor<4xf32> {memopt.optimizer_state})
    -> (tensor<4xf32> {memopt.updates = 0 : i64}, tensor<4xf32> {memopt.updates = 1 : i64}) {
  return %p, %m : tensor<4xf32>, tensor<4xf32>
}
