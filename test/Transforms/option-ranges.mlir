// Hyperparameters outside their range are errors naming the option; before,
// lr=nan or a negative lr silently became the default rate, weight-decay=nan
// became 0, and loss-scale=1e39 compiled a step whose f32 loss scale was inf.
// RUN: not memopt-opt %s --memopt-autodiff=lr=nan -o /dev/null 2>&1 | FileCheck %s --check-prefix=LR
// RUN: not memopt-opt %s --memopt-autodiff=lr=-0.5 -o /dev/null 2>&1 | FileCheck %s --check-prefix=NEG
// RUN: not memopt-opt %s --memopt-autodiff=lr=inf -o /dev/null 2>&1 | FileCheck %s --check-prefix=INF
// RUN: not memopt-opt %s "--memopt-autodiff=optimizer=momentum momentum=1.5" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MOM
// RUN: not memopt-opt %s --memopt-autodiff=weight-decay=nan -o /dev/null 2>&1 | FileCheck %s --check-prefix=WD
// RUN: not memopt-opt %s "--memopt-autodiff=optimizer=adam eps=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=EPS
// RUN: not memopt-opt %s --memopt-mixed-precision=loss-scale=1e39 -o /dev/null 2>&1 | FileCheck %s --check-prefix=SCALE
// RUN: not memopt-run %s --device=cpu --steps=1 --lr=nan 2>&1 | FileCheck %s --check-prefix=LR
// lr=-1 was the option's default, and so meant "the usual rate" when typed:
// an lr not given is now the only way to ask for it.
// RUN: not memopt-opt %s --memopt-autodiff=lr=-1 -o /dev/null 2>&1 | FileCheck %s --check-prefix=MINUS1
// RUN: not memopt-opt %s --memopt-pipeline=lr=-1 -o /dev/null 2>&1 | FileCheck %s --check-prefix=MINUS1
// RUN: not memopt-run %s --device=cpu --steps=1 --lr=-1 2>&1 | FileCheck %s --check-prefix=MINUS1
// RUN: not memopt-opt %s --memopt-autodiff=lr=fast -o /dev/null 2>&1 | FileCheck %s --check-prefix=WORD
// MINUS1: error: memopt-autodiff: lr must be a finite number > 0, got -1
// WORD: error: memopt-autodiff: lr must be a finite number > 0, got 'fast'
// Pipeline options for a pass the pipeline would not run are errors.
// RUN: not memopt-opt %s --memopt-pipeline=microbatches=0 -o /dev/null 2>&1 | FileCheck %s --check-prefix=PMB
// RUN: not memopt-opt %s "--memopt-pipeline=growth-interval=-1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PFP32
// RUN: not memopt-opt %s --memopt-autodiff "--memopt-checkpoint=strategy=optimal solver=dp slots=-3" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SLOTS
// PMB: error: memopt-pipeline: microbatches must be at least 1, got 0
// PFP32: error: memopt-pipeline: growth-interval applies to precision=fp16 or bf16
// SLOTS: error: memopt-checkpoint: slots must be a count >= 0 (or -1, the default: the fewest within one forward pass), got -3
// memopt-run names a misspelt choice as unknown.
// RUN: not memopt-run %s --no-optimize --checkpoint=inf 2>&1 | FileCheck %s --check-prefix=CHOICE
// CHOICE: memopt-run: for the --checkpoint option: unknown value 'inf' (expected none, sqrt, budget or optimal)
// The default (no lr: the optimizer's usual rate) and in-range values pass.
// RUN: memopt-opt %s --memopt-autodiff -o /dev/null
// RUN: memopt-opt %s "--memopt-autodiff=lr=0.5 weight-decay=0.01" -o /dev/null
// LR: error: memopt-autodiff: lr must be a finite number > 0, got nan
// NEG: error: memopt-autodiff: lr must be a finite number > 0, got -0.5
// INF: error: memopt-autodiff: lr must be a finite number > 0, got inf
// MOM: error: memopt-autodiff: momentum must be in [0, 1), got 1.5
// WD: error: memopt-autodiff: weight-decay must be a finite number >= 0, got nan
// EPS: error: memopt-autodiff: eps must be a finite number > 0, got 0
// SCALE: error: memopt-mixed-precision: loss-scale must be 'dynamic', 'none' or a positive number within f32's range, got '1e39'
func.func @step(%w: tensor<4x3xf32> {memopt.param}, %x: tensor<2x3xf32>, %t: tensor<2x4xf32>) -> tensor<f32> {
  %h = memopt.linear %x, %w : tensor<2x3xf32>, tensor<4x3xf32>
  %l = memopt.mse_loss %h, %t : tensor<2x4xf32>
  return %l : tensor<f32>
}
