// RUN: memopt-opt %s -split-input-file --memopt-schedule | FileCheck %s
// Scheduling twice gives the same result (frees are recomputed).
// RUN: memopt-opt %s -split-input-file --memopt-schedule --memopt-schedule | FileCheck %s

// A free after every buffer's last use; reshape results share their
// operand's buffer, so it dies with its last alias; arguments and returned
// values are never freed.
// CHECK-LABEL: func.func @chain
// CHECK:         %[[A:.*]] = memopt.relu %arg0
// CHECK-NEXT:    %[[R:.*]] = memopt.reshape %[[A]]
// CHECK-NEXT:    %[[B:.*]] = memopt.tanh %[[R]]
// CHECK-NEXT:    memopt.free %[[A]]
// CHECK-NEXT:    %[[C:.*]] = memopt.sigmoid %[[B]]
// CHECK-NEXT:    memopt.free %[[B]]
// CHECK-NEXT:    return %[[C]]
// CHECK-NOT:     memopt.free %arg0
func.func @chain(%x: tensor<4x4xf32>) -> tensor<16xf32> {
  %a = memopt.relu %x : tensor<4x4xf32>
  %r = memopt.reshape %a : tensor<4x4xf32> -> tensor<16xf32>
  %b = memopt.tanh %r : tensor<16xf32>
  %c = memopt.sigmoid %b : tensor<16xf32>
  return %c : tensor<16xf32>
}

// -----

// Among independent ops, the one that frees memory runs first: consuming
// the large %big before producing another large value keeps the peak low.
// CHECK-LABEL: func.func @greedy
// CHECK:         %[[BIG:.*]] = memopt.relu %arg0 : tensor<64x64xf32>
// CHECK-NEXT:    %[[BIG4:.*]] = memopt.reshape %[[BIG]]
// CHECK-NEXT:    %[[SUM:.*]] = memopt.global_avg_pool2d %[[BIG4]]
// CHECK-NEXT:    memopt.free %[[BIG]]
// CHECK-NEXT:    memopt.relu %arg1 : tensor<64x64xf32>
func.func @greedy(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>) -> (tensor<1x1xf32>, tensor<64x64xf32>) {
  %big = memopt.relu %x : tensor<64x64xf32>
  %other = memopt.relu %y : tensor<64x64xf32>
  %big4 = memopt.reshape %big : tensor<64x64xf32> -> tensor<1x1x64x64xf32>
  %sum = memopt.global_avg_pool2d %big4 : tensor<1x1x64x64xf32>
  return %sum, %other : tensor<1x1xf32>, tensor<64x64xf32>
}

// -----

// Unused results are freed right after their definition.
// CHECK-LABEL: func.func @unused
// CHECK:         %[[Y:.*]], %[[M:.*]], %[[V:.*]] = memopt.batch_norm
// CHECK-DAG:     memopt.free %[[M]]
// CHECK-DAG:     memopt.free %[[V]]
func.func @unused(%x: tensor<2x3x2x2xf32>, %g: tensor<3xf32>) -> tensor<2x3x2x2xf32> {
  %y, %m, %v = memopt.batch_norm %x, %g, %g, %g, %g : tensor<2x3x2x2xf32>, tensor<3xf32>
  return %y : tensor<2x3x2x2xf32>
}
