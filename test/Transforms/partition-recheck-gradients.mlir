// RUN: memopt-opt %s --memopt-mixed-precision --memopt-autodiff --memopt-partition=remarks=true --memopt-schedule -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s
// Without loss scaling nothing waits for an overflow check: nothing to do.
// RUN: memopt-opt %s --memopt-mixed-precision=loss-scale=none --memopt-autodiff --memopt-partition=remarks=true -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=NOSCALE
// Within no recompute budget, nothing either.
// RUN: memopt-opt %s --memopt-mixed-precision --memopt-autodiff --memopt-partition=max-recompute=0 | FileCheck %s --check-prefix=ZERO

// Under dynamic loss scaling every update waits for memopt.found_inf, so
// each weight gradient would be held until all are computed. The output
// layer's (10 x 2048 f16, 40 KiB) is computed first, from 2 x 10 and
// 2 x 2048 values (8 KiB): it is checked by a found_inf of its own when
// computed, freed, and computed again right before its update; the flags
// are added. fc1's would save more, but it is computed last, and its
// recomputation does not fit the 5% bound.
// CHECK: remark: memopt-partition: gradient checked for overflow when computed and computed again for its update (40960 bytes not held, 81920 FLOPs)
// CHECK-LABEL: func.func @wide(
// CHECK:         %[[G:.*]] = memopt.matmul %[[DY:.*]], %[[H:.*]] {transpose_a = true} : tensor<2x10xf16>, tensor<2x2048xf16>
// CHECK-NEXT:    %[[F1:.*]] = memopt.found_inf %[[G]] : (tensor<10x2048xf16>) -> tensor<f32>
// CHECK-NEXT:    memopt.free %[[G]]
// CHECK:         %[[REST:.*]] = memopt.found_inf %{{.*}} : (tensor<2048x1024xf16>, tensor<2048xf16>, tensor<10xf16>) -> tensor<f32>
// CHECK:         %[[ANY:.*]] = memopt.add %[[REST]], %[[F1]]
// CHECK:         %[[AGAIN:.*]] = memopt.matmul %[[DY]], %[[H]] {memopt.recompute, transpose_a = true}
// CHECK:         memopt.sgd_update %arg2, %[[AGAIN]], %[[ANY]] unscale(
// CHECK:         memopt.update_loss_scale %{{.*}}, %{{.*}}, %[[ANY]]

// NOSCALE-NOT: gradient checked for overflow
// NOSCALE-LABEL: func.func @wide(
// NOSCALE-NOT: memopt.found_inf

// ZERO-LABEL: func.func @wide(
// ZERO-COUNT-1: memopt.found_inf
// ZERO-NOT: memopt.found_inf
// ZERO-NOT: memopt.recompute
func.func @wide(%w1: tensor<2048x1024xf32> {memopt.param},
                %b1: tensor<2048xf32> {memopt.param},
                %w2: tensor<10x2048xf32> {memopt.param},
                %b2: tensor<10xf32> {memopt.param},
                %x: tensor<2x1024xf32>, %y: tensor<2xi64>) -> tensor<f32> {
  %0 = memopt.linear %x, %w1, %b1 : tensor<2x1024xf32>, tensor<2048x1024xf32>, tensor<2048xf32>
  %1 = memopt.relu %0 : tensor<2x2048xf32>
  %2 = memopt.linear %1, %w2, %b2 : tensor<2x2048xf32>, tensor<10x2048xf32>, tensor<10xf32>
  %3 = memopt.cross_entropy %2, %y : tensor<2x10xf32>, tensor<2xi64>
  return %3 : tensor<f32>
}
