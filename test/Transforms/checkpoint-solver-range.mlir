// Tensors of 2^36 rows beside 64-byte parameters: byte sizes spanning more
// than 2^32 units made Clp's simplex fail an assertion and abort the
// process (ClpPrimalColumnSteepest), or return an assignment breaking the
// model's constraints. The exact model now refuses such a range and the
// pass falls back to the binomial schedule with a remark; nothing aborts.
// RUN: memopt-opt %s "--pass-pipeline=builtin.module(memopt-autodiff,memopt-checkpoint{strategy=optimal solver=ilp},memopt-schedule,memopt-plan-memory)" -o /dev/null 2>&1 | FileCheck %s
// RUN: memopt-opt %s "--pass-pipeline=builtin.module(memopt-autodiff,memopt-checkpoint{strategy=optimal})" -o /dev/null 2>&1 | FileCheck %s
// CHECK: remark: memopt-checkpoint: the exact solver failed (the byte sizes ({{[0-9]+}} in all, common divisor 4) span more than 2^32 units, beyond what the LP solver handles reliably); using the binomial schedule by dynamic programming instead
// CHECK-NOT: error
func.func @fuzz(%p0: tensor<4x4xf32> {memopt.param}, %p1: tensor<4xf32> {memopt.param}, %p2: tensor<8x8xf32> {memopt.param}, %p3: tensor<8x4xf32> {memopt.param}, %x: tensor<68719476736x4xf32>, %t: tensor<68719476736x8xf32>) -> tensor<f32> {
  %v0 = "memopt.linear"(%x, %p0, %p1) : (tensor<68719476736x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<68719476736x4xf32>
  %v1 = "memopt.mul"(%v0, %v0) : (tensor<68719476736x4xf32>, tensor<68719476736x4xf32>) -> tensor<68719476736x4xf32>
  %v2 = "memopt.concat"(%v0, %v1) <{axis = 1 : i64}> : (tensor<68719476736x4xf32>, tensor<68719476736x4xf32>) -> tensor<68719476736x8xf32>
  %v3 = "memopt.linear"(%v2, %p2) : (tensor<68719476736x8xf32>, tensor<8x8xf32>) -> tensor<68719476736x8xf32>
  %v4 = "memopt.matmul"(%v3, %p3) <{transpose_a = false, transpose_b = false}> : (tensor<68719476736x8xf32>, tensor<8x4xf32>) -> tensor<68719476736x4xf32>
  %v5 = "memopt.sub"(%v4, %v4) : (tensor<68719476736x4xf32>, tensor<68719476736x4xf32>) -> tensor<68719476736x4xf32>
  %v6 = "memopt.leaky_relu"(%v5) <{alpha = 0.01 : f64}> : (tensor<68719476736x4xf32>) -> tensor<68719476736x4xf32>
  %v7 = "memopt.softmax"(%v2) <{axis = -1 : i64}> : (tensor<68719476736x8xf32>) -> tensor<68719476736x8xf32>
  %loss = "memopt.mse_loss"(%v7, %t) : (tensor<68719476736x8xf32>, tensor<68719476736x8xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}
