// RUN: memopt-opt %s --memopt-autodiff --memopt-report=graph=true -o /dev/null | FileCheck %s
// RUN: memopt-opt %s --memopt-autodiff --memopt-report -o /dev/null | FileCheck %s --check-prefix=PLAIN

// graph=true adds the data-flow graph: what each op reads (ops by index,
// and which of their results, arguments by number), the bytes it allocates
// (a reshape is a view: 0), in all and per result,
// its workspace, FLOPs, whether it is forward and may be run again, and
// which op each returned value comes from.
// CHECK:        "index": 0,
// CHECK-NEXT:   "op": "memopt.linear",
// CHECK:        "operands": [],
// CHECK-NEXT:   "operand_results": [],
// CHECK-NEXT:   "arguments": [
// CHECK-NEXT:     2,
// CHECK-NEXT:     0
// CHECK-NEXT:   ],
// CHECK-NEXT:   "result_bytes": 512,
// CHECK-NEXT:   "result_bytes_each": [
// CHECK-NEXT:     512
// CHECK-NEXT:   ],
// CHECK-NEXT:   "workspace_bytes": 0,
// CHECK-NEXT:   "flops": 8192,
// CHECK-NEXT:   "forward": true,
// CHECK-NEXT:   "pure": true
// CHECK:        "index": 1,
// CHECK-NEXT:   "op": "memopt.reshape",
// CHECK:        "operands": [
// CHECK-NEXT:     0
// CHECK-NEXT:   ],
// CHECK:        "result_bytes": 0,
// The loss (op 3) and the update (op 9); the arguments and constants.
// CHECK:      "arguments_bytes": 3140,
// CHECK-NEXT: "results": [
// CHECK-NEXT:   3,
// CHECK-NEXT:   9
// CHECK-NEXT: ],
// CHECK-NEXT: "result_numbers": [
// CHECK-NEXT:   0,
// CHECK-NEXT:   0
// CHECK-NEXT: ]

// PLAIN-NOT: "result_bytes"
// PLAIN-NOT: "arguments_bytes"
func.func @step(%w: tensor<16x32xf32> {memopt.param}, %y: tensor<8xi64>,
                %x: tensor<8x32xf32>) -> tensor<f32> {
  %h = memopt.linear %x, %w : tensor<8x32xf32>, tensor<16x32xf32>
  %r = memopt.reshape %h : tensor<8x16xf32> -> tensor<128xf32>
  %b = memopt.reshape %r : tensor<128xf32> -> tensor<8x16xf32>
  %l = memopt.cross_entropy %b, %y : tensor<8x16xf32>, tensor<8xi64>
  return %l : tensor<f32>
}
