// RUN: memopt-opt %s -split-input-file -verify-diagnostics
// A NaN or infinite float attribute is refused, named, by every memopt op:
// before, the plan carried it as JSON null and the runtime quietly used the
// dialect's default instead of the user's value.

func.func @leaky_relu_nan(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'memopt.leaky_relu' op attribute 'alpha' must be a finite number, got nan}}
  %y = "memopt.leaky_relu"(%x) <{alpha = 0x7FF8000000000000 : f64}> : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @elu_inf(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'memopt.elu' op attribute 'alpha' must be a finite number, got inf}}
  %y = "memopt.elu"(%x) <{alpha = 0x7FF0000000000000 : f64}> : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @batch_norm_epsilon(%x: tensor<2x3x4x4xf32>, %g: tensor<3xf32>, %b: tensor<3xf32>,
                              %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<2x3x4x4xf32> {
  // expected-error @+1 {{'memopt.batch_norm' op attribute 'epsilon' must be a finite number, got inf}}
  %y:3 = "memopt.batch_norm"(%x, %g, %b, %m, %v) <{epsilon = 0x7FF0000000000000 : f64, momentum = 1.000000e-01 : f64}> : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return %y#0 : tensor<2x3x4x4xf32>
}

// -----

func.func @sgd_lr(%w: tensor<4xf32>, %g: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'memopt.sgd_update' op attribute 'lr' must be a finite number, got -inf}}
  %y = "memopt.sgd_update"(%w, %g) <{lr = 0xFFF0000000000000 : f64, operandSegmentSizes = array<i32: 1, 1, 0, 0>, weight_decay = 0.0 : f64}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @dropout_p(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'memopt.dropout' op attribute 'p' must be a finite number, got nan}}
  %y = "memopt.dropout"(%x) <{p = 0x7FF8000000000000 : f64, seed = 1 : i64}> : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
