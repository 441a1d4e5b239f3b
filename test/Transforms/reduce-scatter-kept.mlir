// RUN: memopt-opt %s --canonicalize | FileCheck %s

// A reduce-scatter of which this rank owns nothing has no results, and
// still runs (it sends the rank's gradients to their owners): it is not
// Pure, so the canonicalizer keeps it.
// CHECK-LABEL: func.func @owns_nothing(
// CHECK:         memopt.reduce_scatter %arg0 {owners = array<i64: 0>, rank = 1 : i64, ranks = 2 : i64} : (tensor<4xf32>) -> ()
func.func @owns_nothing(%g: tensor<4xf32>) {
  memopt.reduce_scatter %g {owners = array<i64: 0>, rank = 1 : i64, ranks = 2 : i64} : (tensor<4xf32>) -> ()
  return
}

// Its results unread, likewise.
// CHECK-LABEL: func.func @unread(
// CHECK:         memopt.reduce_scatter
func.func @unread(%g: tensor<4xf32>) {
  %a = memopt.reduce_scatter %g {owners = array<i64: 1>, rank = 1 : i64, ranks = 2 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return
}
