// RUN: memopt-opt %s --memopt-schedule -split-input-file -verify-diagnostics
// The error is located at the in-place op and the exit status is non-zero.
// RUN: not memopt-opt %s --memopt-schedule -split-input-file -o /dev/null 2>&1 | FileCheck %s

// An in-place write whose overwritten contents are still read by an op that
// needs its result: no order runs the reader both before and after it.
// CHECK: schedule-errors.mlir:[[@LINE+4]]:8: error: 'memopt.relu' op cannot be scheduled
func.func @inplace_reader_depends_on_it(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = memopt.relu %a : tensor<4xf32>
  // expected-error @+1 {{cannot be scheduled: its in-place write conflicts with a reader of the buffer it overwrites that depends on it}}
  %1 = memopt.relu %0 {memopt.inplace = 0 : i64} : tensor<4xf32>
  %2 = memopt.add %0, %1 : tensor<4xf32>, tensor<4xf32>
  return %2 : tensor<4xf32>
}
