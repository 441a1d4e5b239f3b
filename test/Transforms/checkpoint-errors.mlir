// Bad options and impossible budgets are located errors with a non-zero exit.
// RUN: not memopt-opt %s --memopt-autodiff --memopt-checkpoint=strategy=foo 2>&1 | FileCheck %s --check-prefix=STRATEGY
// STRATEGY: for the --strategy option: unknown value 'foo' (expected sqrt, budget or optimal)
// RUN: not memopt-opt %s --memopt-autodiff --memopt-checkpoint=strategy=none 2>&1 | FileCheck %s --check-prefix=NONE
// NONE: for the --strategy option: unknown value 'none' (expected sqrt, budget or optimal)
// RUN: not memopt-opt %s --memopt-autodiff --memopt-checkpoint=strategy=budget 2>&1 | FileCheck %s --check-prefix=NOBUDGET
// NOBUDGET: error: memopt-checkpoint: strategy=budget needs budget=<bytes>, e.g. budget=512MiB
// RUN: not memopt-opt %s --memopt-autodiff "--memopt-checkpoint=strategy=budget budget=12xB" 2>&1 | FileCheck %s --check-prefix=UNIT
// UNIT: error: memopt-checkpoint: invalid budget '12xB' (expected a positive byte count such as 1073741824, 512MiB or 2GiB)
// RUN: not memopt-opt %s --memopt-autodiff "--memopt-checkpoint=strategy=budget budget=-5" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: error: memopt-checkpoint: invalid budget '-5'
// RUN: not memopt-opt %s --memopt-autodiff "--memopt-checkpoint=strategy=sqrt budget=1GiB" 2>&1 | FileCheck %s --check-prefix=ONLYBUDGET
// ONLYBUDGET: error: memopt-checkpoint: budget= applies to strategy=budget only
// RUN: not memopt-opt %s --memopt-autodiff "--memopt-checkpoint=strategy=optimal solver=cplex" 2>&1 | FileCheck %s --check-prefix=SOLVER
// SOLVER: for the --solver option: unknown value 'cplex' (expected auto, dp or ilp)
// RUN: not memopt-opt %s --memopt-autodiff "--memopt-checkpoint=strategy=sqrt slots=2" 2>&1 | FileCheck %s --check-prefix=SLOTS
// SLOTS: error: memopt-checkpoint: slots= applies to strategy=optimal solver=dp only
// RUN: not memopt-opt %s --memopt-autodiff "--memopt-checkpoint=strategy=optimal segments=4" 2>&1 | FileCheck %s --check-prefix=SEGMENTS
// SEGMENTS: error: memopt-checkpoint: segments= applies to strategy=sqrt only
// RUN: not memopt-opt %s --memopt-autodiff "--memopt-checkpoint=strategy=optimal time-limit=0" 2>&1 | FileCheck %s --check-prefix=TIME
// TIME: error: memopt-checkpoint: time-limit must be positive seconds
// RUN: not memopt-opt %s --memopt-autodiff "--memopt-checkpoint=strategy=optimal measure-partition=true step-recompute=-0.5" 2>&1 | FileCheck %s --check-prefix=STEP
// STEP: error: memopt-checkpoint: step-recompute must be a fraction >= 0 of the forward pass's FLOPs, got -0.5
// RUN: not memopt-opt %s --memopt-autodiff "--memopt-checkpoint=strategy=optimal step-recompute=nan" 2>&1 | FileCheck %s --check-prefix=STEPNAN
// STEPNAN: error: memopt-checkpoint: step-recompute must be a fraction >= 0 of the forward pass's FLOPs, got {{nan|NaN}}
// RUN: not memopt-opt %s --memopt-autodiff --memopt-checkpoint --memopt-checkpoint 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: error: 'memopt.tanh' op is already recomputed: run --memopt-checkpoint once, on the step --memopt-autodiff built
//
// A budget below what any schedule reaches names the smallest that fits,
// and writes nothing.
// RUN: not memopt-opt %s --memopt-autodiff "--memopt-checkpoint=strategy=budget budget=512" -o %t.out 2>&1 | FileCheck %s --check-prefix=SMALL
// RUN: not test -e %t.out
// SMALL: [[@LINE+2]]:1: error: 'func.func' op cannot fit the training step in a budget of 512 bytes: the smallest any checkpoint schedule reaches is [[MIN:[0-9]+]] bytes (the planned arena, arguments and constants, each at 64-byte alignment, as the runtime allocates them); use budget=[[MIN]] or more
// (Inputs/budget_sweep.py checks that the budget the error names is met.)
func.func @chain(%w: tensor<8x8xf32> {memopt.param}, %x: tensor<4x8xf32>, %t: tensor<4xi64>) -> tensor<f32> {
  %0 = memopt.linear %x, %w : tensor<4x8xf32>, tensor<8x8xf32>
  %1 = memopt.tanh %0 : tensor<4x8xf32>
  %2 = memopt.tanh %1 : tensor<4x8xf32>
  %3 = memopt.tanh %2 : tensor<4x8xf32>
  %4 = memopt.tanh %3 : tensor<4x8xf32>
  %5 = memopt.tanh %4 : tensor<4x8xf32>
  %6 = memopt.tanh %5 : tensor<4x8xf32>
  %loss = memopt.cross_entropy %6, %t : tensor<4x8xf32>, tensor<4xi64>
  return %loss : tensor<f32>
}
