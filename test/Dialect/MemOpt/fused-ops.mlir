// RUN: memopt-opt %s | memopt-opt | FileCheck %s
// RUN: memopt-opt %s --mlir-print-op-generic | memopt-opt | FileCheck %s
// RUN: memopt-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// The fused ops of MemOptFusedOps.td (InPlace-ABN) print in their custom
// form and re-parse to the same text, directly and through the generic form.
// batch_norm_act infers its four result types; the backward op writes them.

// CHECK-LABEL: func.func @batch_norm_act(
// CHECK-NEXT: %result, %new_running_mean, %new_running_var, %saved_invstd = memopt.batch_norm_act %arg0, %arg1, %arg2, %arg3, %arg4 {activation = "leaky_relu", alpha = 1.000000e-02 : f64} : tensor<8x64x32x32xf32>, tensor<64xf32>{{$}}
// CHECK-NEXT: %result_0, %new_running_mean_1, %new_running_var_2, %saved_invstd_3 = memopt.batch_norm_act %arg0, %arg1, %arg2, %arg3, %arg4 {activation = "elu", alpha = 1.000000e+00 : f64, epsilon = 1.000000e-03 : f64, momentum = 2.000000e-01 : f64} : tensor<8x64x32x32xf32>, tensor<64xf32>{{$}}
// CHECK-NEXT: return %result, %new_running_mean, %new_running_var, %saved_invstd, %result_0 : tensor<8x64x32x32xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<8x64x32x32xf32>

// GENERIC-LABEL: sym_name = "batch_norm_act"
// GENERIC: %{{.*}}:4 = "memopt.batch_norm_act"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{activation = "leaky_relu", alpha = 1.000000e-02 : f64, epsilon = 1.000000e-05 : f64, momentum = 1.000000e-01 : f64}> : (tensor<8x64x32x32xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<8x64x32x32xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
func.func @batch_norm_act(%x: tensor<8x64x32x32xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>,
                          %m: tensor<64xf32>, %v: tensor<64xf32>)
    -> (tensor<8x64x32x32xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<8x64x32x32xf32>) {
  %y, %nm, %nv, %invstd = memopt.batch_norm_act %x, %g, %b, %m, %v
      {activation = "leaky_relu", alpha = 0.01 : f64} : tensor<8x64x32x32xf32>, tensor<64xf32>
  %e:4 = memopt.batch_norm_act %x, %g, %b, %m, %v
      {activation = "elu", alpha = 1.0 : f64, epsilon = 1.0e-3 : f64, momentum = 0.2 : f64}
      : tensor<8x64x32x32xf32>, tensor<64xf32>
  return %y, %nm, %nv, %invstd, %e#0
      : tensor<8x64x32x32xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<8x64x32x32xf32>
}

// Mixed precision: statistics, gamma, beta and saved_invstd in f32, x in
// bf16, as for batch_norm; a rank-2 input (BatchNorm1d).
// CHECK-LABEL: func.func @batch_norm_act_mixed(
// CHECK-NEXT: %result, %new_running_mean, %new_running_var, %saved_invstd = memopt.batch_norm_act %arg0, %arg1, %arg1, %arg1, %arg1 {activation = "elu", alpha = 5.000000e-01 : f64} : tensor<8x64x4x4xbf16>, tensor<64xf32>{{$}}
// CHECK-NEXT: %result_0, %new_running_mean_1, %new_running_var_2, %saved_invstd_3 = memopt.batch_norm_act %arg2, %arg3, %arg3, %arg3, %arg3 {activation = "leaky_relu", alpha = 2.000000e-01 : f64} : tensor<4x3xf32>, tensor<3xf32>{{$}}
// CHECK-NEXT: return %result, %saved_invstd, %result_0 : tensor<8x64x4x4xbf16>, tensor<64xf32>, tensor<4x3xf32>
func.func @batch_norm_act_mixed(%x: tensor<8x64x4x4xbf16>, %g: tensor<64xf32>, %x2: tensor<4x3xf32>,
                                %g2: tensor<3xf32>)
    -> (tensor<8x64x4x4xbf16>, tensor<64xf32>, tensor<4x3xf32>) {
  %y:4 = memopt.batch_norm_act %x, %g, %g, %g, %g {activation = "elu", alpha = 0.5 : f64}
      : tensor<8x64x4x4xbf16>, tensor<64xf32>
  %z:4 = memopt.batch_norm_act %x2, %g2, %g2, %g2, %g2 {activation = "leaky_relu", alpha = 0.2 : f64}
      : tensor<4x3xf32>, tensor<3xf32>
  return %y#0, %y#3, %z#0 : tensor<8x64x4x4xbf16>, tensor<64xf32>, tensor<4x3xf32>
}

// CHECK-LABEL: func.func @batch_norm_act_backward(
// CHECK-NEXT: %grad_x, %grad_gamma, %grad_beta = memopt.batch_norm_act_backward %arg0, %arg1, %arg2, %arg3, %arg4 {activation = "leaky_relu", alpha = 1.000000e-02 : f64} : (tensor<8x64x32x32xf32>, tensor<8x64x32x32xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<8x64x32x32xf32>, tensor<64xf32>, tensor<64xf32>){{$}}
// CHECK-NEXT: %grad_x_0, %grad_gamma_1, %grad_beta_2 = memopt.batch_norm_act_backward %arg0, %arg1, %arg2, %arg3, %arg4 {activation = "elu", alpha = 1.000000e+00 : f64} : (tensor<8x64x32x32xf32>, tensor<8x64x32x32xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<8x64x32x32xf32>, tensor<64xf32>, tensor<64xf32>){{$}}
// CHECK-NEXT: return %grad_x, %grad_gamma, %grad_beta_2 : tensor<8x64x32x32xf32>, tensor<64xf32>, tensor<64xf32>

// GENERIC-LABEL: sym_name = "batch_norm_act_backward"
// GENERIC: %{{.*}}:3 = "memopt.batch_norm_act_backward"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{activation = "leaky_relu", alpha = 1.000000e-02 : f64}> : (tensor<8x64x32x32xf32>, tensor<8x64x32x32xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<8x64x32x32xf32>, tensor<64xf32>, tensor<64xf32>)
func.func @batch_norm_act_backward(%dy: tensor<8x64x32x32xf32>, %y: tensor<8x64x32x32xf32>,
                                   %g: tensor<64xf32>, %b: tensor<64xf32>, %invstd: tensor<64xf32>)
    -> (tensor<8x64x32x32xf32>, tensor<64xf32>, tensor<64xf32>) {
  %0:3 = memopt.batch_norm_act_backward %dy, %y, %g, %b, %invstd
      {activation = "leaky_relu", alpha = 0.01 : f64}
      : (tensor<8x64x32x32xf32>, tensor<8x64x32x32xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
      -> (tensor<8x64x32x32xf32>, tensor<64xf32>, tensor<64xf32>)
  %1:3 = memopt.batch_norm_act_backward %dy, %y, %g, %b, %invstd
      {activation = "elu", alpha = 1.0 : f64}
      : (tensor<8x64x32x32xf32>, tensor<8x64x32x32xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
      -> (tensor<8x64x32x32xf32>, tensor<64xf32>, tensor<64xf32>)
  return %0#0, %0#1, %1#2 : tensor<8x64x32x32xf32>, tensor<64xf32>, tensor<64xf32>
}

// In place over x: `memopt.inplace` names operand 0, whose type is the
// result's.
// CHECK-LABEL: func.func @batch_norm_act_inplace(
// CHECK: memopt.batch_norm_act %0, %arg1, %arg1, %arg1, %arg1 {activation = "leaky_relu", alpha = 1.000000e-01 : f64, memopt.inplace = 0 : i64}
func.func @batch_norm_act_inplace(%x: tensor<4x8x2x2xf32>, %g: tensor<8xf32>) -> tensor<4x8x2x2xf32> {
  %h = memopt.relu %x : tensor<4x8x2x2xf32>
  %y:4 = memopt.batch_norm_act %h, %g, %g, %g, %g {activation = "leaky_relu", alpha = 0.1 : f64, memopt.inplace = 0 : i64}
      : tensor<4x8x2x2xf32>, tensor<8xf32>
  return %y#0 : tensor<4x8x2x2xf32>
}

// Attention infers its result and log-sum-exp (f32 for f16 attention);
// the backward op writes its types.
// CHECK-LABEL: func.func @attention(
// CHECK-NEXT: %result, %lse = memopt.attention %arg0, %arg1, %arg2 {causal = true, p = 1.000000e-01 : f64, scale = 1.250000e-01 : f64, seed = 3 : i64} : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>{{$}}
// CHECK-NEXT: %result_0, %lse_1 = memopt.attention %arg3, %arg4, %arg5 {scale = 5.000000e-01 : f64} : tensor<3x8xf16>, tensor<5x8xf16>, tensor<5x2xf16>{{$}}
// CHECK-NEXT: %grad_q, %grad_k, %grad_v = memopt.attention_backward %result, %arg0, %arg1, %arg2, %result, %lse {causal = true, p = 1.000000e-01 : f64, scale = 1.250000e-01 : f64, seed = 3 : i64} : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16xf32>) -> (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>)
// CHECK-NEXT: return %result, %lse_1 : tensor<2x4x16x8xf32>, tensor<3xf32>
// GENERIC-LABEL: sym_name = "attention"
// GENERIC: "memopt.attention"(%{{.*}}, %{{.*}}, %{{.*}}) <{causal = true, p = 1.000000e-01 : f64, safe = false, scale = 1.250000e-01 : f64, seed = 3 : i64}> : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> (tensor<2x4x16x8xf32>, tensor<2x4x16xf32>)
func.func @attention(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>, %v: tensor<2x4x16x8xf32>,
                     %hq: tensor<3x8xf16>, %hk: tensor<5x8xf16>, %hv: tensor<5x2xf16>)
    -> (tensor<2x4x16x8xf32>, tensor<3xf32>) {
  %o, %lse = memopt.attention %q, %k, %v {causal = true, scale = 0.125 : f64, p = 0.1 : f64, seed = 3 : i64}
      : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>
  %ho, %hlse = memopt.attention %hq, %hk, %hv {scale = 0.5 : f64}
      : tensor<3x8xf16>, tensor<5x8xf16>, tensor<5x2xf16>
  %g:3 = memopt.attention_backward %o, %q, %k, %v, %o, %lse
      {causal = true, scale = 0.125 : f64, p = 0.1 : f64, seed = 3 : i64}
      : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>,
         tensor<2x4x16x8xf32>, tensor<2x4x16xf32>)
      -> (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>)
  return %o, %hlse : tensor<2x4x16x8xf32>, tensor<3xf32>
}

// The chunked LM-head loss: an f32 loss and row log-sum-exps for f16
// operands.
// CHECK-LABEL: func.func @linear_cross_entropy(
// CHECK-NEXT: %result, %lse = memopt.linear_cross_entropy %arg0, %arg1, %arg2 {chunk = 4 : i64} : tensor<16x8xf16>, tensor<100x8xf16>, tensor<16xi64>{{$}}
// CHECK-NEXT: %grad_hidden, %grad_weight = memopt.linear_cross_entropy_backward %result, %arg0, %arg1, %arg2, %lse {chunk = 4 : i64} : (tensor<f32>, tensor<16x8xf16>, tensor<100x8xf16>, tensor<16xi64>, tensor<16xf32>) -> (tensor<16x8xf16>, tensor<100x8xf16>)
// CHECK-NEXT: return %result : tensor<f32>
func.func @linear_cross_entropy(%h: tensor<16x8xf16>, %w: tensor<100x8xf16>, %l: tensor<16xi64>) -> tensor<f32> {
  %loss, %lse = memopt.linear_cross_entropy %h, %w, %l {chunk = 4 : i64} : tensor<16x8xf16>, tensor<100x8xf16>, tensor<16xi64>
  %dh, %dw = memopt.linear_cross_entropy_backward %loss, %h, %w, %l, %lse {chunk = 4 : i64}
      : (tensor<f32>, tensor<16x8xf16>, tensor<100x8xf16>, tensor<16xi64>, tensor<16xf32>) -> (tensor<16x8xf16>, tensor<100x8xf16>)
  return %loss : tensor<f32>
}

// With a bias (the last operand): the backward op returns grad_bias too.
// CHECK-LABEL: func.func @linear_cross_entropy_bias(
// CHECK-NEXT: %result, %lse = memopt.linear_cross_entropy %arg0, %arg1, %arg2 bias %arg3 {chunk = 4 : i64} : tensor<16x8xf32>, tensor<100x8xf32>, tensor<16xi64>, tensor<100xf32>{{$}}
// CHECK-NEXT: %grad_hidden, %grad_weight, %grad_bias = memopt.linear_cross_entropy_backward %result, %arg0, %arg1, %arg2, %lse, %arg3 {chunk = 4 : i64} : (tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>, tensor<16xi64>, tensor<16xf32>, tensor<100xf32>) -> (tensor<16x8xf32>, tensor<100x8xf32>, tensor<100xf32>)
// CHECK-NEXT: %result_0, %grad_hidden_1, %grad_weight_2, %grad_bias_3 = memopt.linear_cross_entropy_with_grad %result, %arg0, %arg1, %arg2, %arg3 {chunk = 4 : i64} : (tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>, tensor<16xi64>, tensor<100xf32>) -> (tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>, tensor<100xf32>)
func.func @linear_cross_entropy_bias(%h: tensor<16x8xf32>, %w: tensor<100x8xf32>, %l: tensor<16xi64>, %b: tensor<100xf32>) -> tensor<100xf32> {
  %loss, %lse = memopt.linear_cross_entropy %h, %w, %l bias %b {chunk = 4 : i64} : tensor<16x8xf32>, tensor<100x8xf32>, tensor<16xi64>, tensor<100xf32>
  %dh, %dw, %db = memopt.linear_cross_entropy_backward %loss, %h, %w, %l, %lse, %b {chunk = 4 : i64}
      : (tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>, tensor<16xi64>, tensor<16xf32>, tensor<100xf32>) -> (tensor<16x8xf32>, tensor<100x8xf32>, tensor<100xf32>)
  %loss2, %dh2, %dw2, %db2 = memopt.linear_cross_entropy_with_grad %loss, %h, %w, %l, %b {chunk = 4 : i64}
      : (tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>, tensor<16xi64>, tensor<100xf32>) -> (tensor<f32>, tensor<16x8xf32>, tensor<100x8xf32>, tensor<100xf32>)
  return %db : tensor<100xf32>
}

// The pair in one op: f16 operands, an f32 loss and grad_loss.
// CHECK-LABEL: func.func @linear_cross_entropy_with_grad(
// CHECK-NEXT: %result, %grad_hidden, %grad_weight = memopt.linear_cross_entropy_with_grad %arg3, %arg0, %arg1, %arg2 {chunk = 4 : i64} : (tensor<f32>, tensor<16x8xf16>, tensor<100x8xf16>, tensor<16xi64>) -> (tensor<f32>, tensor<16x8xf16>, tensor<100x8xf16>)
// CHECK-NEXT: return %result, %grad_hidden, %grad_weight
func.func @linear_cross_entropy_with_grad(%h: tensor<16x8xf16>, %w: tensor<100x8xf16>, %l: tensor<16xi64>, %g: tensor<f32>)
    -> (tensor<f32>, tensor<16x8xf16>, tensor<100x8xf16>) {
  %loss, %dh, %dw = memopt.linear_cross_entropy_with_grad %g, %h, %w, %l {chunk = 4 : i64}
      : (tensor<f32>, tensor<16x8xf16>, tensor<100x8xf16>, tensor<16xi64>) -> (tensor<f32>, tensor<16x8xf16>, tensor<100x8xf16>)
  return %loss, %dh, %dw : tensor<f32>, tensor<16x8xf16>, tensor<100x8xf16>
}
