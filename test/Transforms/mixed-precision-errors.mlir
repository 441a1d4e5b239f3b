// RUN: memopt-opt %s -split-input-file --memopt-mixed-precision -verify-diagnostics
// RUN: not memopt-opt %s --memopt-mixed-precision=precision=fp8 2>&1 | FileCheck %s --check-prefix=PRECISION
// RUN: not memopt-opt %s --memopt-mixed-precision=loss-scale=-3 2>&1 | FileCheck %s --check-prefix=SCALE
// RUN: not memopt-opt %s --memopt-mixed-precision="growth-factor=0.5" 2>&1 | FileCheck %s --check-prefix=GROWTH

// PRECISION: for the --precision option: unknown value 'fp8' (expected fp16 or bf16)
// RUN: not memopt-opt %s --memopt-mixed-precision=precision=fp32 2>&1 | FileCheck %s --check-prefix=FP32
// FP32: for the --precision option: unknown value 'fp32' (expected fp16 or bf16)
// SCALE: loss-scale must be 'dynamic', 'none' or a positive number within f32's range, got '-3'
// GROWTH: expected init-scale > 0, growth-factor > 1, backoff-factor in (0, 1) and growth-interval >= 1

// A training step already has backward ops: the pass runs before autodiff.
func.func @step(%w: tensor<4xf32> {memopt.param}, %g: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'memopt.relu_backward' op has no autocast class: --memopt-mixed-precision runs on the forward graph, before --memopt-autodiff}}
  %d = memopt.relu_backward %g, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %d : tensor<4xf32>
}

// -----

// expected-error @+1 {{argument #0 is f64: --memopt-mixed-precision expects an f32 graph}}
func.func @wide(%x: tensor<4xf64>) -> tensor<4xf64> {
  %r = memopt.relu %x : tensor<4xf64>
  return %r : tensor<4xf64>
}

// -----

// expected-error @+1 {{is already a training step (it has optimizer state)}}
func.func @trained(%w: tensor<4xf32> {memopt.param}, %m: tensor<4xf32> {memopt.optimizer_state}) -> tensor<4xf32> {
  return %w : tensor<4xf32>
}
