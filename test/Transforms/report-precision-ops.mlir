// RUN: memopt-opt %s --memopt-report=file=- -o /dev/null | FileCheck %s

// memopt.found_inf reads every element of every gradient: its cost is their
// total (32 + 100), not the largest tensor's.
// CHECK: "total_flops": 132
func.func @check(%a: tensor<4x8xf32>, %b: tensor<100xf32>) -> tensor<f32> {
  %f = memopt.found_inf %a, %b : (tensor<4x8xf32>, tensor<100xf32>) -> tensor<f32>
  return %f : tensor<f32>
}
