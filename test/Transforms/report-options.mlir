// RUN: memopt-opt %s --memopt-report -o /dev/null | FileCheck %s
// RUN: memopt-opt %s --memopt-report=function=second -o /dev/null | FileCheck %s --check-prefix=ONE
// RUN: not memopt-opt %s --memopt-report=function=missing -o /dev/null 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not memopt-opt %s --memopt-report=file=%t.dir/no/such/dir/report.json -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOFILE
// RUN: memopt-opt %s --memopt-report -o - | FileCheck %s --check-prefix=IR

// Several functions with bodies: a JSON array of their reports, in module
// order; declarations are skipped. `function=` picks one, reported as a
// single object.

// @first: argument 16 bytes + relu result 16 = 32; relu costs 4 FLOPs.
// CHECK:      {{^}}[
// CHECK-NEXT:   {
// CHECK-NEXT:     "function": "first",
// CHECK-NEXT:     "parameters": {
// CHECK-NEXT:       "count": 0,
// CHECK-NEXT:       "bytes": 0
// CHECK-NEXT:     },
// CHECK-NEXT:     "gradient_bytes": 0,
// CHECK-NEXT:     "optimizer_state_bytes": 0,
// CHECK-NEXT:     "forward_allocated_bytes": 16,
// CHECK-NEXT:     "saved_for_backward_bytes": 0,
// CHECK-NEXT:     "peak_bytes": 32,
// CHECK-NEXT:     "arena_bytes": null,
// CHECK-NEXT:     "recompute_flops": 0,
// CHECK-NEXT:     "total_flops": 4,
// CHECK-NEXT:     "clipped_gradient_bytes": 0,
// CHECK-NEXT:     "ops": [
// CHECK-NEXT:       {
// CHECK-NEXT:         "index": 0,
// CHECK-NEXT:         "op": "memopt.relu",
// CHECK-NEXT:         "loc": "{{.*}}report-options.mlir:[[@LINE+49]]:8",
// CHECK-NEXT:         "live_bytes": 32
// CHECK-NEXT:       }
// CHECK-NEXT:     ]
// CHECK-NEXT:   },
// @second: weight 2x4 (8 elements, 32 bytes) + input 48 + result 3x2 (24):
// 104 bytes; 2*3*2*4 = 48 FLOPs.
// CHECK-NEXT:   {
// CHECK-NEXT:     "function": "second",
// CHECK-NEXT:     "parameters": {
// CHECK-NEXT:       "count": 8,
// CHECK-NEXT:       "bytes": 32
// CHECK-NEXT:     },
// CHECK-NEXT:     "gradient_bytes": 0,
// CHECK-NEXT:     "optimizer_state_bytes": 0,
// CHECK-NEXT:     "forward_allocated_bytes": 24,
// CHECK-NEXT:     "saved_for_backward_bytes": 0,
// CHECK-NEXT:     "peak_bytes": 104,
// CHECK-NEXT:     "arena_bytes": null,
// CHECK-NEXT:     "recompute_flops": 0,
// CHECK-NEXT:     "total_flops": 48,
// CHECK-NEXT:     "clipped_gradient_bytes": 0,
// CHECK-NEXT:     "ops": [
// CHECK-NEXT:       {
// CHECK-NEXT:         "index": 0,
// CHECK-NEXT:         "op": "memopt.linear",
// CHECK-NEXT:         "loc": "{{.*}}report-options.mlir:[[@LINE+30]]:8",
// CHECK-NEXT:         "live_bytes": 104
// CHECK-NEXT:       }
// CHECK-NEXT:     ]
// CHECK-NEXT:   }
// CHECK-NEXT: ]
// CHECK-EMPTY:

// ONE:      {{^}}{
// ONE-NEXT:   "function": "second",
// ONE:        "peak_bytes": 104,
// ONE:      {{^}}}
// ONE-EMPTY:

// MISSING: error: memopt-report: no function named 'missing'
// NOFILE: error: memopt-report: cannot open '{{.*}}report.json'

// The IR is unchanged.
// IR: func.func @first
// IR: func.func private @external
// IR: func.func @second

func.func @first(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = memopt.relu %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

func.func private @external(tensor<4xf32>) -> tensor<4xf32>

func.func @second(%w: tensor<2x4xf32> {memopt.param}, %x: tensor<3x4xf32>) -> tensor<3x2xf32> {
  %0 = memopt.linear %x, %w : tensor<3x4xf32>, tensor<2x4xf32>
  return %0 : tensor<3x2xf32>
}
