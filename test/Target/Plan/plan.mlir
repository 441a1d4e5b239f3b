// RUN: memopt-opt %s --convert-memopt-to-memrt --mlir-print-debuginfo | memopt-translate --memrt-to-plan | FileCheck %s
// The output is valid JSON.
// RUN: memopt-opt %s --convert-memopt-to-memrt | memopt-translate --memrt-to-plan | %python -c "import json,sys; p=json.load(sys.stdin); assert p['version'] == 2 and len(p['steps']) == 4, p"

// CHECK:      {
// CHECK-NEXT:   "format": "memopt-plan",
// CHECK-NEXT:   "version": 2,
// CHECK-NEXT:   "function": "step",
// CHECK-NEXT:   "arena_bytes": 256,
// CHECK-NEXT:   "alignment": 64,
// CHECK-NEXT:   "tensors": [
// CHECK-NEXT:     {"id":0,"dtype":"f32","shape":[4,8],"storage":"argument","argument":0},
// CHECK-NEXT:     {"id":1,"dtype":"f32","shape":[3,8],"storage":"argument","argument":1},
// CHECK-NEXT:     {"id":2,"dtype":"i64","shape":[3],"storage":"argument","argument":2},
// CHECK-NEXT:     {"id":3,"dtype":"f32","shape":[3,4],"storage":"arena","offset":0,"live":[0,1]},
// CHECK-NEXT:     {"id":4,"dtype":"f32","shape":[12],"storage":"view","of":3},
// CHECK-NEXT:     {"id":5,"dtype":"f32","shape":[],"storage":"constant","values":[0.5]},
// CHECK-NEXT:     {"id":6,"dtype":"f32","shape":[12],"storage":"arena","offset":64,"live":[1,2]},
// CHECK-NEXT:     {"id":7,"dtype":"f32","shape":[3,4],"storage":"view","of":6},
// CHECK-NEXT:     {"id":8,"dtype":"f32","shape":[3,4],"storage":"arena","offset":128,"live":[2,3]},
// CHECK-NEXT:     {"id":9,"dtype":"f32","shape":[],"storage":"arena","offset":192,"live":[3,4]}
// CHECK-NEXT:   ],
// CHECK-NEXT:   "arguments": [
// CHECK-NEXT:     {"name":"arg0","role":"param","tensor":0},
// CHECK-NEXT:     {"name":"arg1","role":"data","tensor":1},
// CHECK-NEXT:     {"name":"arg2","role":"data","tensor":2}
// CHECK-NEXT:   ],
// CHECK-NEXT:   "results": [9],
// CHECK-NEXT:   "steps": [
// CHECK-NEXT:     {"kernel":"linear","inputs":[1,0],"outputs":[3],"attrs":{},"loc":"{{.*}}plan.mlir:38:8"},
// CHECK-NEXT:     {"kernel":"mul","inputs":[4,5],"outputs":[6],"attrs":{},"loc":"{{.*}}plan.mlir:41:8"},
// CHECK-NEXT:     {"kernel":"softmax","inputs":[7],"outputs":[8],"attrs":{"axis":1,"causal":false,"safe":false},"loc":"{{.*}}"},
// CHECK-NEXT:     {"kernel":"cross_entropy","inputs":[8,2],"outputs":[9],"attrs":{},"loc":"{{.*}}"}
// CHECK-NEXT:   ],
// CHECK-NEXT:   "updates": []
// CHECK-NEXT: }
func.func @step(%w: tensor<4x8xf32> {memopt.param}, %x: tensor<3x8xf32>, %l: tensor<3xi64>) -> tensor<f32> {
  %h = memopt.linear %x, %w : tensor<3x8xf32>, tensor<4x8xf32>
  %f = memopt.reshape %h : tensor<3x4xf32> -> tensor<12xf32>
  %c = arith.constant dense<0.5> : tensor<f32>
  %m = memopt.mul %f, %c : tensor<12xf32>, tensor<f32>
  %r = memopt.reshape %m : tensor<12xf32> -> tensor<3x4xf32>
  %s = memopt.softmax %r {axis = 1 : i64} : tensor<3x4xf32>
  %loss = memopt.cross_entropy %s, %l : tensor<3x4xf32>, tensor<3xi64>
  return %loss : tensor<f32>
}
