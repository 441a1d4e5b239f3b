// RUN: memopt-opt %s -split-input-file -verify-diagnostics

// Element-wise ops: activations (relu, gelu, ...) and add, sub, mul, div.

//===----------------------------------------------------------------------===//
// Element-wise activations
//===----------------------------------------------------------------------===//

func.func @relu_integer(%x: tensor<8x32xi32>) {
  // expected-error @+1 {{'memopt.relu' op operand #0 must be statically shaped tensor of f16, bf16, f32 or f64 of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<8x32xi32>'}}
  %0 = memopt.relu %x : tensor<8x32xi32>
  return
}

// -----

func.func @relu_not_a_tensor(%x: f32) {
  // expected-error @+1 {{custom op 'memopt.relu' invalid kind of type specified: expected builtin.tensor, but found 'f32'}}
  %0 = memopt.relu %x : f32
  return
}

// -----

func.func @relu_unranked(%x: tensor<*xf32>) {
  // expected-error @+1 {{custom op 'memopt.relu' invalid kind of type specified: expected builtin.tensor, but found 'tensor<*xf32>'}}
  %0 = memopt.relu %x : tensor<*xf32>
  return
}

// -----

func.func @relu_unranked_generic(%x: tensor<*xf32>) {
  // expected-error @+1 {{'memopt.relu' op operand #0 must be statically shaped tensor of f16, bf16, f32 or f64}}
  %0 = "memopt.relu"(%x) : (tensor<*xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @relu_result_shape(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'memopt.relu' op expected result shape 4x4, got 4x5}}
  %0 = "memopt.relu"(%x) : (tensor<4x4xf32>) -> tensor<4x5xf32>
  return
}

// -----

func.func @relu_no_operand() {
  // expected-error @+1 {{'memopt.relu' op requires a single operand}}
  %0 = "memopt.relu"() : () -> tensor<4xf32>
  return
}

// -----

func.func @gelu_dynamic(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'memopt.gelu' op expected operand to have a static shape, got 'tensor<?x4xf32>'}}
  %0 = memopt.gelu %x : tensor<?x4xf32>
  return
}

// -----

func.func @gelu_result_element_type(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'memopt.gelu' op expected result type 'tensor<4x4xf32>', got 'tensor<4x4xbf16>'}}
  %0 = "memopt.gelu"(%x) : (tensor<4x4xf32>) -> tensor<4x4xbf16>
  return
}

// -----

func.func @sigmoid_integer(%x: tensor<4xi64>) {
  // expected-error @+1 {{'memopt.sigmoid' op operand #0 must be statically shaped tensor of f16, bf16, f32 or f64}}
  %0 = "memopt.sigmoid"(%x) : (tensor<4xi64>) -> tensor<4xi64>
  return
}

// -----

func.func @sigmoid_result_shape(%x: tensor<2x3xf16>) {
  // expected-error @+1 {{'memopt.sigmoid' op expected result shape 2x3, got 3x2}}
  %0 = "memopt.sigmoid"(%x) : (tensor<2x3xf16>) -> tensor<3x2xf16>
  return
}

// -----

func.func @tanh_result_not_tensor(%x: tensor<4xf32>) {
  // expected-error @+1 {{'memopt.tanh' op result #0 must be statically shaped tensor of f16, bf16, f32 or f64 of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'f32'}}
  %0 = "memopt.tanh"(%x) : (tensor<4xf32>) -> f32
  return
}

// -----

func.func @tanh_result_dynamic(%x: tensor<4xf32>) {
  // expected-error @+1 {{'memopt.tanh' op result #0 must be statically shaped tensor of f16, bf16, f32 or f64}}
  %0 = "memopt.tanh"(%x) : (tensor<4xf32>) -> tensor<?xf32>
  return
}

// -----

func.func @leaky_relu_alpha_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{'memopt.leaky_relu' op attribute 'alpha' failed to satisfy constraint: 64-bit float attribute}}
  %0 = memopt.leaky_relu %x {alpha = 1 : i64} : tensor<4xf32>
  return
}

// -----

func.func @leaky_relu_alpha_f32(%x: tensor<4xf32>) {
  // expected-error @+1 {{'memopt.leaky_relu' op attribute 'alpha' failed to satisfy constraint: 64-bit float attribute}}
  %0 = "memopt.leaky_relu"(%x) {alpha = 0.2 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @leaky_relu_result_shape(%x: tensor<4xf32>) {
  // expected-error @+1 {{'memopt.leaky_relu' op expected result shape 4, got 2x2}}
  %0 = "memopt.leaky_relu"(%x) <{alpha = 2.000000e-01 : f64}> : (tensor<4xf32>) -> tensor<2x2xf32>
  return
}

// -----

func.func @elu_property_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{invalid properties {alpha = 1 : i64} for op memopt.elu: Invalid attribute `alpha` in property conversion: 1 : i64}}
  %0 = "memopt.elu"(%x) <{alpha = 1 : i64}> : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @elu_integer(%x: tensor<4xi32>) {
  // expected-error @+1 {{'memopt.elu' op operand #0 must be statically shaped tensor of f16, bf16, f32 or f64}}
  %0 = memopt.elu %x : tensor<4xi32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// add, sub, mul, div
//===----------------------------------------------------------------------===//

func.func @add_broadcast(%a: tensor<4x3xf32>, %b: tensor<2x3xf32>) {
  // expected-error @+1 {{'memopt.add' op operand shapes 4x3 and 2x3 do not broadcast}}
  %0 = memopt.add %a, %b : tensor<4x3xf32>, tensor<2x3xf32>
  return
}

// -----

func.func @add_integer(%a: tensor<4x3xi32>, %b: tensor<4x3xi32>) {
  // expected-error @+1 {{'memopt.add' op operand #0 must be statically shaped tensor of f16, bf16, f32 or f64}}
  %0 = memopt.add %a, %b : tensor<4x3xi32>, tensor<4x3xi32>
  return
}

// -----

func.func @add_result_shape(%a: tensor<8x1x5xf32>, %b: tensor<3x1xf32>) {
  // expected-error @+1 {{'memopt.add' op expected result shape 8x3x5, got 8x1x5}}
  %0 = "memopt.add"(%a, %b) : (tensor<8x1x5xf32>, tensor<3x1xf32>) -> tensor<8x1x5xf32>
  return
}

// -----

func.func @mul_element_type(%a: tensor<4x3xf32>, %b: tensor<4x3xf16>) {
  // expected-error @+1 {{'memopt.mul' op expected rhs element type 'f32' (as lhs), got 'f16'}}
  %0 = memopt.mul %a, %b : tensor<4x3xf32>, tensor<4x3xf16>
  return
}

// -----

func.func @mul_broadcast_trailing(%a: tensor<2x3x4xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'memopt.mul' op operand shapes 2x3x4 and 3 do not broadcast}}
  %0 = memopt.mul %a, %b : tensor<2x3x4xf32>, tensor<3xf32>
  return
}

// -----

func.func @mul_result_shape(%a: tensor<4x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'memopt.mul' op expected result shape 4x3, got 3}}
  %0 = "memopt.mul"(%a, %b) : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @sub_broadcast(%a: tensor<2x4xf32>, %b: tensor<3x4xf32>) {
  // expected-error @+1 {{'memopt.sub' op operand shapes 2x4 and 3x4 do not broadcast}}
  %0 = memopt.sub %a, %b : tensor<2x4xf32>, tensor<3x4xf32>
  return
}

// -----

func.func @sub_element_type(%a: tensor<4x3xbf16>, %b: tensor<3xf16>) {
  // expected-error @+1 {{'memopt.sub' op expected rhs element type 'bf16' (as lhs), got 'f16'}}
  %0 = memopt.sub %a, %b : tensor<4x3xbf16>, tensor<3xf16>
  return
}

// -----

func.func @sub_result_shape(%a: tensor<3xf32>, %b: tensor<2x1xf32>) {
  // expected-error @+1 {{'memopt.sub' op expected result shape 2x3, got 3}}
  %0 = "memopt.sub"(%a, %b) : (tensor<3xf32>, tensor<2x1xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @div_broadcast_trailing(%a: tensor<5x4xf32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{'memopt.div' op operand shapes 5x4 and 5 do not broadcast}}
  %0 = memopt.div %a, %b : tensor<5x4xf32>, tensor<5xf32>
  return
}

// -----

func.func @div_integer(%a: tensor<4xi64>, %b: tensor<4xi64>) {
  // expected-error @+1 {{'memopt.div' op operand #0 must be statically shaped tensor of f16, bf16, f32 or f64}}
  %0 = "memopt.div"(%a, %b) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return
}

// -----

func.func @div_result_element_type(%a: tensor<4x3xf32>, %b: tensor<f32>) {
  // expected-error @+1 {{'memopt.div' op expected result type 'tensor<4x3xf32>', got 'tensor<4x3xf16>'}}
  %0 = "memopt.div"(%a, %b) : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Sizes that do not fit in 64 bits
//===----------------------------------------------------------------------===//

func.func @operand_too_large(%x: tensor<4611686018427387904x4xf32>) {
  // expected-error @+1 {{'memopt.relu' op expected operand to have fewer than 2^63 elements, got 'tensor<4611686018427387904x4xf32>'}}
  %0 = memopt.relu %x : tensor<4611686018427387904x4xf32>
  return
}

// -----

func.func @broadcast_result_too_large(%a: tensor<4294967296x1xf32>, %b: tensor<4294967296xf32>) {
  // expected-error @+1 {{'memopt.add' op result shape 4294967296x4294967296 has 2^63 elements or more}}
  %0 = memopt.add %a, %b : tensor<4294967296x1xf32>, tensor<4294967296xf32>
  return
}

// -----

func.func @compare_bad_predicate(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'memopt.compare' op expected predicate one of eq, ne, lt, le, gt, ge, got 'neq'}}
  %0 = memopt.compare %x {predicate = "neq", value = 0.0 : f64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @compare_bool(%x: tensor<4xi1>) -> tensor<4xf32> {
  // expected-error @+1 {{'memopt.compare' op operand #0 must be statically shaped tensor of f16, bf16, f32 or f64 of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values or statically shaped tensor of i32 or i64 of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4xi1>'}}
  %0 = memopt.compare %x {predicate = "eq", value = 0.0 : f64} : tensor<4xi1>
  return %0 : tensor<4xf32>
}

// -----

func.func @maximum_no_broadcast(%a: tensor<2x3xf32>, %b: tensor<2xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'memopt.maximum' op operand shapes 2x3 and 2 do not broadcast}}
  %0 = memopt.maximum %a, %b : tensor<2x3xf32>, tensor<2xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @reduce_max_scalar(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'memopt.reduce_max' op expected x of rank at least 1, got a scalar}}
  %0 = memopt.reduce_max %x : tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @maximum_weight_shape(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'memopt.maximum_weight' op expected result shape 2x3, got 3}}
  %0 = memopt.maximum_weight %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @reduce_extremum_backward_shape(%g: tensor<2x1xf32>, %x: tensor<2x3xf32>, %m: tensor<3x1xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'memopt.reduce_extremum_backward' op expected grad and extremum of shape 2x1 (x's 2x3 reduced), got 2x1 and 3x1}}
  %0 = memopt.reduce_extremum_backward %g, %x, %m : (tensor<2x1xf32>, tensor<2x3xf32>, tensor<3x1xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
