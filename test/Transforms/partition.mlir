// RUN: memopt-opt %s -split-input-file --memopt-mixed-precision=precision=bf16 --memopt-autodiff --memopt-partition=remarks=true -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s
// Nested on func.func, the same.
// RUN: memopt-opt %s -split-input-file --memopt-mixed-precision=precision=bf16 --memopt-autodiff --memopt-partition -mlir-print-op-on-diagnostic=false > %t.module.mlir
// RUN: memopt-opt %s -split-input-file --pass-pipeline='builtin.module(memopt-mixed-precision{precision=bf16},memopt-autodiff,func.func(memopt-partition))' -mlir-print-op-on-diagnostic=false > %t.nested.mlir
// RUN: diff %t.module.mlir %t.nested.mlir
// No recomputation allowed: nothing changes.
// RUN: memopt-opt %s -split-input-file --memopt-mixed-precision=precision=bf16 --memopt-autodiff > %t.plain.mlir
// RUN: memopt-opt %s -split-input-file --memopt-mixed-precision=precision=bf16 --memopt-autodiff --memopt-partition=max-recompute=0 > %t.zero.mlir
// RUN: diff %t.plain.mlir %t.zero.mlir
// Bad input.
// RUN: not memopt-opt %s -split-input-file --memopt-autodiff --memopt-inplace --memopt-partition -o /dev/null 2>&1 | FileCheck %s --check-prefix=INPLACE
// RUN: not memopt-opt %s -split-input-file --memopt-partition=max-recompute=-1 -o /dev/null 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not memopt-opt %s -split-input-file --memopt-partition=max-recompute=nan -o /dev/null 2>&1 | FileCheck %s --check-prefix=NAN
// RUN: not memopt-opt %s -split-input-file --memopt-partition=max-recompute=inf -o /dev/null 2>&1 | FileCheck %s --check-prefix=INF

// Under bf16, the backward pass would keep each weight's bf16 copy (and the
// input's) from the forward pass; they are recomputed next to their
// backward use instead, from the f32 arguments kept anyway.
// CHECK: remark: recomputed in the backward pass instead of kept: 1280 bytes, 640 FLOPs
// CHECK: remark: recomputed in the backward pass instead of kept: 512 bytes, 256 FLOPs
// CHECK: remark: memopt-partition: 3 ops recomputed in the backward pass
// CHECK-LABEL: func.func @mlp(
// CHECK:         %[[W2:.*]] = memopt.cast %arg2 : tensor<10x64xf32> to tensor<10x64xbf16>
// CHECK:         memopt.linear %{{.*}}, %[[W2]]
// CHECK:         memopt.cross_entropy_backward
// CHECK:         %[[W2AGAIN:.*]] = memopt.cast %arg2 {memopt.recompute} : tensor<10x64xf32> to tensor<10x64xbf16>
// CHECK-NEXT:    memopt.matmul %{{.*}}, %[[W2AGAIN]]
// CHECK:         %[[XAGAIN:.*]] = memopt.cast %arg4 {memopt.recompute}
// CHECK-NEXT:    memopt.matmul %{{.*}}, %[[XAGAIN]] {transpose_a = true}
func.func @mlp(%w1: tensor<64x32xf32> {memopt.param}, %b1: tensor<64xf32> {memopt.param},
               %w2: tensor<10x64xf32> {memopt.param}, %b2: tensor<10xf32> {memopt.param},
               %x: tensor<8x32xf32>, %y: tensor<8xi64>) -> tensor<f32> {
  %h = memopt.linear %x, %w1, %b1 : tensor<8x32xf32>, tensor<64x32xf32>, tensor<64xf32>
  %r = memopt.relu %h : tensor<8x64xf32>
  %o = memopt.linear %r, %w2, %b2 : tensor<8x64xf32>, tensor<10x64xf32>, tensor<10xf32>
  %l = memopt.cross_entropy %o, %y : tensor<8x10xf32>, tensor<8xi64>
  return %l : tensor<f32>
}

// -----

// An inference graph has no backward pass: nothing to partition.
// CHECK-LABEL: func.func @inference(
// CHECK-NOT:     memopt.recompute
// CHECK:         return
func.func @inference(%x: tensor<8x32xf32>, %w: tensor<16x32xf32>) -> tensor<8x16xf32> {
  %h = memopt.linear %x, %w : tensor<8x32xf32>, tensor<16x32xf32>
  %r = memopt.relu %h : tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// INPLACE: error: 'memopt.relu' op is in place (memopt.inplace): --memopt-partition runs before --memopt-inplace
// NEGATIVE: error: memopt-partition: max-recompute must be a fraction >= 0 of the forward pass's FLOPs, got -1
// NAN: error: memopt-partition: max-recompute must be a fraction >= 0 of the forward pass's FLOPs, got {{nan|NaN}}
// INF: error: memopt-partition: max-recompute must be a fraction >= 0 of the forward pass's FLOPs, got {{inf|INF}}
