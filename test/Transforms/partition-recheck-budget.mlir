// RUN: memopt-opt %s --memopt-mixed-precision --memopt-autodiff --memopt-partition=remarks=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=BOUND
// RUN: memopt-opt %s --memopt-mixed-precision --memopt-autodiff "--memopt-partition=step-recompute=1 remarks=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=STEP
// RUN: memopt-opt %s --memopt-mixed-precision --memopt-autodiff "--memopt-partition=budget=1KiB remarks=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BUDGET
// RUN: memopt-opt %s --memopt-mixed-precision --memopt-autodiff "--memopt-partition=budget=100000 remarks=true" --memopt-schedule --memopt-plan-memory=budget=100000 -o /dev/null 2>&1 | FileCheck %s --check-prefix=FIT
// RUN: not memopt-opt %s --memopt-mixed-precision --memopt-autodiff --memopt-partition=step-recompute=-1 -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD

// Four 64 x 64 layers at batch 8: each weight gradient (8 KiB in f16) is
// four times what it is computed from, but recomputing one (65,536 FLOPs)
// exceeds 5% of the forward pass, so within max-recompute nothing is
// rechecked and every f16 gradient waits for the overflow check.
// BOUND-NOT: gradient checked for overflow
// BOUND: memopt-partition: 5 ops recomputed in the backward pass ({{[0-9]+}} FLOPs, bound 14092), {{.*}} step peak 103884 bytes

// step-recompute=1 (what --memopt-pipeline gives checkpoint=optimal): the
// step may recompute up to one forward pass, and rechecking every gradient
// lowers the peak.
// STEP-COUNT-4: gradient checked for overflow when computed and computed again for its update (8192 bytes not held, 65536 FLOPs)
// STEP: memopt-partition: 5 ops recomputed in the backward pass (275456 FLOPs, bound 281856), {{.*}} step peak 85584 bytes

// A budget no step fits: every gradient is rechecked, the smallest step,
// which the plan's refusal then names.
// BUDGET-COUNT-4: gradient checked for overflow when computed and computed again for its update (8192 bytes not held, 65536 FLOPs)
// BUDGET: memopt-partition: 5 ops recomputed in the backward pass (275456 FLOPs, gradients rechecked to fit the budget), {{.*}} step peak 85584 bytes

// A budget two rechecks meet: the fewest gradients that fit (the largest
// savings first), and the plan accepts the budget.
// FIT-COUNT-2: gradient checked for overflow when computed and computed again
// FIT-NOT: gradient checked for overflow
// FIT: memopt-partition: 5 ops recomputed in the backward pass (144384 FLOPs, gradients rechecked to fit the budget), {{.*}} step peak 97872 bytes
// FIT-NOT: error

// BAD: error: memopt-partition: step-recompute must be a fraction >= 0 of the forward pass's FLOPs, got -1
func.func @mlp_train(
    %fc1_w: tensor<64x64xf32> {memopt.param},
    %fc1_b: tensor<64xf32> {memopt.param},
    %fc2_w: tensor<64x64xf32> {memopt.param},
    %fc2_b: tensor<64xf32> {memopt.param},
    %fc3_w: tensor<64x64xf32> {memopt.param},
    %fc3_b: tensor<64xf32> {memopt.param},
    %out_w: tensor<64x64xf32> {memopt.param},
    %out_b: tensor<64xf32> {memopt.param},
    %input: tensor<8x64xf32>,
    %labels: tensor<8xi64>
) -> tensor<f32> {
  %0 = "memopt.linear"(%input, %fc1_w, %fc1_b) : (tensor<8x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  %1 = "memopt.relu"(%0) : (tensor<8x64xf32>) -> tensor<8x64xf32>
  %2 = "memopt.linear"(%1, %fc2_w, %fc2_b) : (tensor<8x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  %3 = "memopt.relu"(%2) : (tensor<8x64xf32>) -> tensor<8x64xf32>
  %4 = "memopt.linear"(%3, %fc3_w, %fc3_b) : (tensor<8x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  %5 = "memopt.relu"(%4) : (tensor<8x64xf32>) -> tensor<8x64xf32>
  %6 = "memopt.linear"(%5, %out_w, %out_b) : (tensor<8x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  %7 = "memopt.cross_entropy"(%6, %labels) : (tensor<8x64xf32>, tensor<8xi64>) -> tensor<f32>
  return %7 : tensor<f32>
}
