// RUN: memopt-opt %s "--memopt-autodiff=optimizer=adam clip-norm=1.5" | FileCheck %s
// RUN: memopt-opt %s "--memopt-autodiff=optimizer=sgd clip-norm=1" --memopt-report -o /dev/null | FileCheck %s --check-prefix=REPORT
// RUN: memopt-opt %s "--memopt-mixed-precision=precision=fp16" "--memopt-autodiff=optimizer=sgd clip-norm=1" | FileCheck %s --check-prefix=FP16
// RUN: not memopt-opt %s "--memopt-autodiff=optimizer=sgd clip-norm=0" 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not memopt-opt %s "--memopt-autodiff=optimizer=sgd clip-norm=x" 2>&1 | FileCheck %s --check-prefix=TEXT
// RUN: not memopt-opt %s "--memopt-autodiff=optimizer=none clip-norm=1" 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: not memopt-opt %s "--memopt-pipeline=mode=eval clip-norm=1" 2>&1 | FileCheck %s --check-prefix=EVAL

// clip_grad_norm_: one factor from both gradients, each gradient multiplied
// by it (in place: the factor's op was its only other reader), then the
// updates, which can only follow the whole backward pass.
// CHECK-LABEL: func.func @f
// CHECK:         %[[DW:.*]] = memopt.matmul
// CHECK:         %[[DB:.*]] = memopt.sum_to
// CHECK:         %[[C:.*]] = memopt.clip_coefficient %[[DW]], %[[DB]] {max_norm = 1.500000e+00 : f64}
// CHECK-NEXT:    %[[DW2:.*]] = memopt.mul %[[DW]], %[[C]] {memopt.inplace = 0 : i64}
// CHECK-NEXT:    %[[DB2:.*]] = memopt.mul %[[DB]], %[[C]] {memopt.inplace = 0 : i64}
// CHECK:         memopt.adam_update %arg0, %[[DW2]]
// CHECK:         memopt.adam_update %arg1, %[[DB2]]

// The report: both gradients held at once, 4096 + 64 f32.
// REPORT: "clipped_gradient_bytes": 16640,

// Under loss scaling the gradients are unscaled first (GradScaler.unscale_
// then clip_grad_norm_), so the factor sees the true norm.
// FP16-LABEL: func.func @f
// FP16:         %[[U:.*]] = memopt.unscale
// FP16:         memopt.clip_coefficient {{.*}}%[[U]]

// ZERO: error: memopt-autodiff: clip-norm must be a finite number > 0, got 0
// TEXT: error: memopt-autodiff: clip-norm must be a finite number > 0, got 'x'
// NONE: error: memopt-autodiff: clip-norm clips the gradients an optimizer applies; optimizer=none applies none
// EVAL: memopt-pipeline: clip-norm has no effect with mode=eval (no backward pass)
func.func @f(%w: tensor<64x64xf32> {memopt.param}, %b: tensor<64xf32> {memopt.param}, %x: tensor<4x64xf32>, %t: tensor<4x64xf32>) -> tensor<f32> {
  %y = memopt.linear %x, %w, %b : tensor<4x64xf32>, tensor<64x64xf32>, tensor<64xf32>
  %l = memopt.mse_loss %y, %t : tensor<4x64xf32>
  return %l : tensor<f32>
}
