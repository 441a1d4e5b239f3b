// RUN: memopt-opt %s -split-input-file -verify-diagnostics

// Misuses of the memopt argument attributes and of the memopt attribute
// namespace on ops. Valid uses are in func-attrs.mlir.

// expected-error @+1 {{argument #0 marked 'memopt.param' must be a statically shaped float tensor, got 'tensor<4xi64>'}}
func.func @param_on_integer(%x: tensor<4xi64> {memopt.param}) {
  return
}

// -----

// expected-error @+1 {{argument #1 marked 'memopt.param' must be a statically shaped float tensor, got 'tensor<?x4xf32>'}}
func.func @param_on_dynamic(%w: tensor<4xf32> {memopt.param}, %x: tensor<?x4xf32> {memopt.param}) {
  return
}

// -----

// expected-error @+1 {{argument #0 marked 'memopt.state' must be a statically shaped float tensor, got 'tensor<*xf32>'}}
func.func @state_on_unranked(%x: tensor<*xf32> {memopt.state}) {
  return
}

// -----

// expected-error @+1 {{argument #0 marked 'memopt.state' must be a statically shaped float tensor, got 'f32'}}
func.func @state_on_scalar(%x: f32 {memopt.state}) {
  return
}

// -----

// expected-error @+1 {{argument #0 marked 'memopt.param' must be a statically shaped float tensor, got 'tensor<4xi32>'}}
func.func private @param_on_integer_declaration(tensor<4xi32> {memopt.param})

// -----

// expected-error @+1 {{'memopt.param' on argument #0 must be a unit attribute, got 1 : i64}}
func.func @param_with_value(%x: tensor<4xf32> {memopt.param = 1}) {
  return
}

// -----

// expected-error @+1 {{'memopt.state' on argument #2 must be a unit attribute, got false}}
func.func @state_false(%a: tensor<4xf32>, %b: tensor<4xf32>, %x: tensor<4xf32> {memopt.state = false}) {
  return
}

// -----

// expected-error @+1 {{argument #0 cannot be both 'memopt.param' and 'memopt.state'}}
func.func @param_and_state(%x: tensor<4xf32> {memopt.param, memopt.state}) {
  return
}

// -----

// expected-error @+1 {{unknown memopt argument attribute 'memopt.foo' on argument #0 (expected 'memopt.param', 'memopt.frozen', 'memopt.state' or 'memopt.optimizer_state')}}
func.func @unknown_argument_attribute(%x: tensor<4xf32> {memopt.foo}) {
  return
}

// -----

func.func @unknown_op_attribute(%x: tensor<4xf32>) {
  // expected-error @+1 {{unknown memopt attribute 'memopt.bar'}}
  %0 = memopt.relu %x {memopt.bar} : tensor<4xf32>
  return
}

// -----

func.func @unknown_op_attribute_generic(%x: tensor<4xf32>) {
  // expected-error @+1 {{unknown memopt attribute 'memopt.bar'}}
  %0 = "memopt.relu"(%x) {memopt.bar = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

// The markers belong on arguments, not on the function itself.
// expected-error @+1 {{unknown memopt attribute 'memopt.param'}}
func.func @param_on_function(%x: tensor<4xf32>) attributes {memopt.param} {
  return
}

// -----

// expected-error @+1 {{unknown memopt attribute 'memopt.state'}}
module attributes {memopt.state} {
}

// -----

// expected-error @+1 {{'memopt.param' is not valid on result #0; the only memopt result attribute is 'memopt.updates'}}
func.func @result_attr(%x: tensor<4xf32>) -> (tensor<4xf32> {memopt.param}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{result #0 updates argument #0, which is data, not a parameter or state}}
func.func @updates_data(%x: tensor<4xf32>) -> (tensor<4xf32> {memopt.updates = 0 : i64}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{'memopt.updates' on result #0 names argument #3, but there are 1}}
func.func @updates_out_of_range(%x: tensor<4xf32> {memopt.param}) -> (tensor<4xf32> {memopt.updates = 3 : i64}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{result #0 of type 'tensor<4xf32>' cannot update argument #0 of type 'tensor<2xf32>'}}
func.func @updates_type(%p: tensor<2xf32> {memopt.param}, %x: tensor<4xf32>) -> (tensor<4xf32> {memopt.updates = 0 : i64}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{argument #0 cannot be both 'memopt.param' and 'memopt.optimizer_state'}}
func.func @param_and_opt_state(%x: tensor<4xf32> {memopt.param, memopt.optimizer_state}) {
  return
}

// -----

// expected-error @+1 {{'memopt.workspace_limit' must be a non-negative integer on a function, got -1 : i64}}
func.func @negative_workspace_limit() attributes {memopt.workspace_limit = -1 : i64} {
  return
}

// -----

func.func @workspace_offset_without_workspace(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'memopt.workspace_offset' must be a non-negative integer on an op with a workspace, got 0 : i64}}
  %y = memopt.relu %x {memopt.workspace_offset = 0 : i64} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// expected-error @+1 {{'memopt.frozen' on argument #0 must be a unit attribute on a function argument, got 1 : i64}}
func.func @frozen_not_unit(%w: tensor<4xf32> {memopt.param, memopt.frozen = 1}) {
  return
}
