// RUN: memopt-opt %s --convert-memopt-to-memrt | memopt-translate --memrt-to-plan | FileCheck %s

// InPlace-ABN's ops lower like every memopt op: the kernel is the op's name,
// the attributes (the activation as a string) go to the plan, and with
// `memopt.inplace = 0` the fused op's output is x's tensor.

// CHECK:      "steps": [
// CHECK-NEXT:   {"kernel":"relu","inputs":[0],"outputs":[6],
// CHECK-NEXT:   {"kernel":"batch_norm_act","inputs":[6,1,2,3,4],"outputs":[6,7,8,9],"attrs":{"activation":"elu","alpha":0.5,"epsilon":1e-05,"momentum":0.1},
// CHECK-NEXT:   {"kernel":"batch_norm_act_backward","inputs":[5,6,1,2,9],"outputs":[10,11,12],"attrs":{"activation":"elu","alpha":0.5},
// CHECK-NEXT: ],
func.func @f(%x: tensor<4x3xf32>, %g: tensor<3xf32> {memopt.param}, %b: tensor<3xf32> {memopt.param},
             %rm: tensor<3xf32> {memopt.state}, %rv: tensor<3xf32> {memopt.state}, %dy: tensor<4x3xf32>)
    -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %h = memopt.relu %x : tensor<4x3xf32>
  %y:4 = memopt.batch_norm_act %h, %g, %b, %rm, %rv {activation = "elu", alpha = 0.5 : f64, memopt.inplace = 0 : i64}
      : tensor<4x3xf32>, tensor<3xf32>
  %d:3 = memopt.batch_norm_act_backward %dy, %y#0, %g, %b, %y#3 {activation = "elu", alpha = 0.5 : f64}
      : (tensor<4x3xf32>, tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
      -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>)
  return %y#0, %d#0, %d#1, %d#2 : tensor<4x3xf32>, tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>
}
