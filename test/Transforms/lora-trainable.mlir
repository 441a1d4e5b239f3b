// RUN: memopt-opt %s "--memopt-lora=targets=fc.w rank=2 trainable=fc.b" | FileCheck %s

// trainable= keeps a parameter training beside the adapters (PEFT's
// modules_to_save); every other one is frozen.
// CHECK-LABEL: func.func @mlp
// CHECK-SAME:    tensor<6x5xf32> {memopt.frozen, memopt.param}
// CHECK-SAME:    tensor<6xf32> {memopt.param}
// CHECK-SAME:    tensor<6x3xf32> {memopt.frozen, memopt.param}
// CHECK-SAME:    tensor<2x5xf32> {memopt.param}
func.func @mlp(%w: tensor<6x5xf32> {memopt.param} loc("fc.w"),
               %b: tensor<6xf32> {memopt.param} loc("fc.b"),
               %v: tensor<6x3xf32> {memopt.param} loc("proj"),
               %x: tensor<7x5xf32>, %t: tensor<7x3xf32>) -> tensor<f32> {
  %y = memopt.linear %x, %w, %b : tensor<7x5xf32>, tensor<6x5xf32>, tensor<6xf32>
  %z = memopt.matmul %y, %v : tensor<7x6xf32>, tensor<6x3xf32>
  %l = memopt.mse_loss %z, %t : tensor<7x3xf32>
  return %l : tensor<f32>
}
