// RUN: memopt-opt %s -split-input-file "--memopt-lora=targets=fc.w|proj rank=2 alpha=4" | FileCheck %s
// RUN: not memopt-opt %s -split-input-file "--memopt-lora=targets=nothing" 2>&1 | FileCheck %s --check-prefix=NOMATCH
// RUN: not memopt-opt %s -split-input-file "--memopt-lora=targets=(" 2>&1 | FileCheck %s --check-prefix=REGEX
// RUN: not memopt-opt %s -split-input-file "--memopt-lora=targets=fc.w rank=0" 2>&1 | FileCheck %s --check-prefix=RANK
// RUN: not memopt-opt %s -split-input-file "--memopt-lora=targets=fc.w alpha=-1" 2>&1 | FileCheck %s --check-prefix=ALPHA
// RUN: not memopt-opt %s -split-input-file "--memopt-lora=targets=fc.w alpha=-0.001" 2>&1 | FileCheck %s --check-prefix=SMALLALPHA
// RUN: not memopt-opt %s -split-input-file "--memopt-lora" 2>&1 | FileCheck %s --check-prefix=NOTARGETS
// RUN: not memopt-opt %s -split-input-file "--memopt-lora=targets=fc.w|proj trainable=fc.bias" 2>&1 | FileCheck %s --check-prefix=NOKEEP

// A linear weight (out x in) gets A (rank x in) and B (out x rank, starting
// at zero); a matmul weight (in x out) gets A (in x rank) and B (rank x
// out); a transposed one (transpose_b) the linear layout. The update is
// scaled by alpha / rank = 2 and added to the op's result. Every parameter
// is frozen but the adapters (and what trainable= names).
// CHECK-LABEL: func.func @mlp
// CHECK-SAME:    %[[W:[^:]*]]: tensor<6x5xf32> {memopt.frozen, memopt.param}
// CHECK-SAME:    %[[B:[^:]*]]: tensor<6xf32> {memopt.frozen, memopt.param}
// CHECK-SAME:    %[[V:[^:]*]]: tensor<6x3xf32> {memopt.frozen, memopt.param}
// CHECK-SAME:    %[[WA:[^:]*]]: tensor<2x5xf32> {memopt.param}, %[[WB:[^:]*]]: tensor<6x2xf32> {memopt.initial_value = 0.000000e+00 : f64, memopt.param}
// CHECK-SAME:    %[[VA:[^:]*]]: tensor<6x2xf32> {memopt.param}, %[[VB:[^:]*]]: tensor<2x3xf32> {memopt.initial_value = 0.000000e+00 : f64, memopt.param}
// CHECK:         %[[Y:.*]] = memopt.linear %[[X:[^,]*]], %[[W]], %[[B]]
// CHECK-NEXT:    %[[XA:.*]] = memopt.linear %[[X]], %[[WA]] : tensor<7x5xf32>, tensor<2x5xf32>
// CHECK-NEXT:    %[[D:.*]] = memopt.linear %[[XA]], %[[WB]] : tensor<7x2xf32>, tensor<6x2xf32>
// CHECK-NEXT:    %[[S:.*]] = arith.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[DS:.*]] = memopt.mul %[[D]], %[[S]]
// CHECK-NEXT:    %[[Y2:.*]] = memopt.add %[[Y]], %[[DS]]
// CHECK-NEXT:    %[[R:.*]] = memopt.tanh %[[Y2]]
// CHECK-NEXT:    %[[Z:.*]] = memopt.matmul %[[R]], %[[V]]
// CHECK-NEXT:    %[[RA:.*]] = memopt.matmul %[[R]], %[[VA]] : tensor<7x6xf32>, tensor<6x2xf32>
// CHECK-NEXT:    %[[E:.*]] = memopt.matmul %[[RA]], %[[VB]] : tensor<7x2xf32>, tensor<2x3xf32>
// CHECK:         memopt.add %[[Z]], %{{.*}}
func.func @mlp(%w: tensor<6x5xf32> {memopt.param} loc("fc.w"),
               %b: tensor<6xf32> {memopt.param} loc("fc.b"),
               %v: tensor<6x3xf32> {memopt.param} loc("proj"),
               %x: tensor<7x5xf32>, %t: tensor<7x3xf32>) -> tensor<f32> {
  %y = memopt.linear %x, %w, %b : tensor<7x5xf32>, tensor<6x5xf32>, tensor<6xf32>
  %r = memopt.tanh %y : tensor<7x6xf32>
  %z = memopt.matmul %r, %v : tensor<7x6xf32>, tensor<6x3xf32>
  %l = memopt.mse_loss %z, %t : tensor<7x3xf32>
  return %l : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @transposed
// CHECK-SAME:    tensor<3x6xf32> {memopt.frozen, memopt.param}
// CHECK-SAME:    %[[A:[^:]*]]: tensor<2x6xf32> {memopt.param}, %[[B:[^:]*]]: tensor<3x2xf32> {memopt.initial_value
// CHECK:         memopt.matmul %{{.*}} {transpose_b = true}
// CHECK-NEXT:    memopt.linear %{{.*}}, %[[A]] : tensor<7x6xf32>, tensor<2x6xf32>
// CHECK-NEXT:    memopt.linear %{{.*}}, %[[B]] : tensor<7x2xf32>, tensor<3x2xf32>
func.func @transposed(%w: tensor<3x6xf32> {memopt.param} loc("proj"),
                      %x: tensor<7x6xf32>, %t: tensor<7x3xf32>) -> tensor<f32> {
  %z = memopt.matmul %x, %w {transpose_b = true} : tensor<7x6xf32>, tensor<3x6xf32>
  %l = memopt.mse_loss %z, %t : tensor<7x3xf32>
  return %l : tensor<f32>
}

// NOMATCH: error: memopt-lora: targets 'nothing' matched no parameter (the parameters are: fc.w, fc.b, proj)
// REGEX: error: memopt-lora: targets: invalid regular expression '(': parentheses not balanced
// RANK: error: memopt-lora: rank must be >= 1, got 0
// ALPHA: error: memopt-lora: alpha must be a finite number > 0, got -1
// SMALLALPHA: error: memopt-lora: alpha must be a finite number > 0, got -1.000000e-03
// NOTARGETS: error: memopt-lora: targets=<regular expression over parameter names> is required
// NOKEEP: error: memopt-lora: trainable 'fc.bias' matched no parameter of the adapted functions
