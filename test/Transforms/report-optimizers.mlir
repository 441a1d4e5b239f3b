// RUN: memopt-opt %s --memopt-autodiff=optimizer=sgd --memopt-report -o /dev/null | FileCheck %s --check-prefix=SGD
// RUN: memopt-opt %s --memopt-autodiff=optimizer=momentum --memopt-report -o /dev/null | FileCheck %s --check-prefix=MOMENTUM
// RUN: memopt-opt %s --memopt-autodiff=optimizer=adam --memopt-report -o /dev/null | FileCheck %s --check-prefix=ADAM
// RUN: memopt-opt %s --memopt-autodiff=optimizer=none --memopt-report -o /dev/null | FileCheck %s --check-prefix=NONE

// What each optimizer adds to the report of one small training step.
// Parameters: w 4x8 + b 4 = 36 elements, 144 bytes; data x 64 + y 16 bytes.
// Forward: linear 2x4 (32), relu 2x4 (32), loss (4) = 68 bytes allocated;
// the backward pass starts with relu's output (read by both gradients) and
// the loss (returned) live: 36 bytes.
// FLOPs: linear 2*2*4*8 = 128, relu 8, cross_entropy 8; backward:
// cross_entropy_backward 8, relu_backward 8, dw matmul 2*4*8*2 = 128,
// sum_to 8; the updates one per parameter element (36), Adam's step count
// one more.

// Updates write the new parameters in place (memopt.inplace = 0), so with
// sgd the peak is at sum_to (op 7), as without an optimizer: arguments 224 +
// loss 4 + dz 32 + dw 128 + db 16 = 404. Momentum and Adam add their state
// arguments and new state buffers; no new parameter buffers (128 less each
// than with a new buffer per parameter).
// SGD:      "gradient_bytes": 144,
// SGD-NEXT: "optimizer_state_bytes": 0,
// SGD-NEXT: "forward_allocated_bytes": 68,
// SGD-NEXT: "saved_for_backward_bytes": 36,
// SGD-NEXT: "peak_bytes": 404,
// SGD-NEXT: "arena_bytes": null,
// SGD-NEXT: "recompute_flops": 0,
// SGD-NEXT: "total_flops": 332,

// Momentum: one buffer per parameter (144 bytes, an argument); at the first
// update 368 + 4 + 128 + 16 + new w 128 + new buffer 128 = 772.
// MOMENTUM:      "parameters": {
// MOMENTUM-NEXT:   "count": 36,
// MOMENTUM-NEXT:   "bytes": 144
// MOMENTUM-NEXT: },
// MOMENTUM-NEXT: "gradient_bytes": 144,
// MOMENTUM-NEXT: "optimizer_state_bytes": 144,
// MOMENTUM-NEXT: "forward_allocated_bytes": 68,
// MOMENTUM-NEXT: "saved_for_backward_bytes": 36,
// MOMENTUM-NEXT: "peak_bytes": 644,
// MOMENTUM-NEXT: "arena_bytes": null,
// MOMENTUM-NEXT: "recompute_flops": 0,
// MOMENTUM-NEXT: "total_flops": 332,

// Adam: two moments per parameter and the step count: 2 * 144 + 4 = 292
// bytes of state. At the first update: arguments 516 + loss 4 + dw 128 +
// db 16 + new step 4 + three new w-sized values 384 = 1052.
// ADAM:      "gradient_bytes": 144,
// ADAM-NEXT: "optimizer_state_bytes": 292,
// ADAM-NEXT: "forward_allocated_bytes": 68,
// ADAM-NEXT: "saved_for_backward_bytes": 36,
// ADAM-NEXT: "peak_bytes": 924,
// ADAM-NEXT: "arena_bytes": null,
// ADAM-NEXT: "recompute_flops": 0,
// ADAM-NEXT: "total_flops": 333,

// No optimizer: the returned gradients are the parameter gradients. The
// peak is at sum_to (op 7): 224 + 4 + dz 32 + dw 128 + db 16 = 404.
// NONE:      "gradient_bytes": 144,
// NONE-NEXT: "optimizer_state_bytes": 0,
// NONE-NEXT: "forward_allocated_bytes": 68,
// NONE-NEXT: "saved_for_backward_bytes": 36,
// NONE-NEXT: "peak_bytes": 404,
// NONE-NEXT: "arena_bytes": null,
// NONE-NEXT: "recompute_flops": 0,
// NONE-NEXT: "total_flops": 296,

func.func @step(%w: tensor<4x8xf32> {memopt.param}, %b: tensor<4xf32> {memopt.param},
                %x: tensor<2x8xf32>, %y: tensor<2xi64>) -> tensor<f32> {
  %h = memopt.linear %x, %w, %b : tensor<2x8xf32>, tensor<4x8xf32>, tensor<4xf32>
  %a = memopt.relu %h : tensor<2x4xf32>
  %l = memopt.cross_entropy %a, %y : tensor<2x4xf32>, tensor<2xi64>
  return %l : tensor<f32>
}
