// A training step's plan says which results become which arguments next step,
// and gives optimizer state its own role.
// RUN: memopt-opt %s --memopt-autodiff=optimizer=momentum --convert-memopt-to-memrt | memopt-translate --memrt-to-plan | FileCheck %s

// CHECK:      "arguments": [
// CHECK-NEXT:   {"name":"arg0","role":"param","tensor":0},
// CHECK-NEXT:   {"name":"arg1","role":"param","tensor":1},
// CHECK-NEXT:   {"name":"arg2","role":"state","tensor":2},
// CHECK-NEXT:   {"name":"arg3","role":"state","tensor":3},
// CHECK-NEXT:   {"name":"arg4","role":"data","tensor":4},
// CHECK-NEXT:   {"name":"arg5","role":"data","tensor":5},
// CHECK-NEXT:   {"name":"arg6","role":"optimizer_state","tensor":6},
// CHECK-NEXT:   {"name":"arg7","role":"optimizer_state","tensor":7}
// CHECK-NEXT: ],
// Loss, new running mean and var, new weight and gamma, then their buffers.
// CHECK:      "updates": [
// CHECK-NEXT:   {"result":1,"argument":2},
// CHECK-NEXT:   {"result":2,"argument":3},
// CHECK-NEXT:   {"result":3,"argument":0},
// CHECK-NEXT:   {"result":4,"argument":1},
// CHECK-NEXT:   {"result":5,"argument":6},
// CHECK-NEXT:   {"result":6,"argument":7}
// CHECK-NEXT: ]
func.func @step(%w: tensor<4x3xf32> {memopt.param}, %g: tensor<4xf32> {memopt.param},
                %m: tensor<4xf32> {memopt.state}, %v: tensor<4xf32> {memopt.state},
                %x: tensor<2x3xf32>, %t: tensor<2x4xf32>)
    -> (tensor<f32>, tensor<4xf32>, tensor<4xf32>) {
  %h = memopt.linear %x, %w : tensor<2x3xf32>, tensor<4x3xf32>
  %n, %nm, %nv = memopt.batch_norm %h, %g, %g, %m, %v : tensor<2x4xf32>, tensor<4xf32>
  %l = memopt.mse_loss %n, %t : tensor<2x4xf32>
  return %l, %nm, %nv : tensor<f32>, tensor<4xf32>, tensor<4xf32>
}
