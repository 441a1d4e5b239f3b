// RUN: memopt-opt %s --memopt-autodiff --test-memopt-print-stages -o /dev/null | FileCheck %s
// RUN: memopt-opt %s --memopt-mixed-precision --memopt-autodiff --test-memopt-print-stages -o /dev/null | FileCheck %s --check-prefix=F16

// Checkpointing's stage chain (StageChain.h) of a 3-layer MLP step: a stage
// ends at each single-value boundary the backward pass reads (the ReLU
// outputs, read by relu_backward and the next linear's weight gradient;
// the logits, read by cross_entropy_backward). Weights are the bytes each
// stage's backward reads: a 2x8 f32 activation is 64 bytes, 2x4 logits 32.
// CHECK-LABEL: func @chain: stages 4, width 1, forward ops 6, fixed 0, forward flops 680
// CHECK-NEXT:   stage 0: ops [memopt.linear, memopt.relu], saved 0 values, cut 1 value, weight 64 bytes
// CHECK-NEXT:   stage 1: ops [memopt.linear, memopt.relu], saved 0 values, cut 1 value, weight 64 bytes
// CHECK-NEXT:   stage 2: ops [memopt.linear], saved 0 values, cut 1 value, weight 32 bytes
// CHECK-NEXT:   stage 3: ops [memopt.cross_entropy], saved 0 values, weight 0 bytes

// Under mixed precision the f16 copies of the weights depend on parameters
// only: they are `fixed` (computed once, read anywhere, in no stage). The
// cast of the data is stage 0's and saved (the first weight gradient reads
// it); the f16 activations halve the later stages' weights.
// F16-LABEL: func @chain: stages 4, width 1, forward ops 8, fixed 3,
// F16-NEXT:   stage 0: ops [memopt.cast, memopt.linear, memopt.relu], saved 1 value, cut 1 value, weight 64 bytes
// F16-NEXT:   stage 1: ops [memopt.linear, memopt.relu], saved 0 values, cut 1 value, weight 32 bytes
// F16-NEXT:   stage 2: ops [memopt.linear, memopt.cast], saved 0 values, cut 1 value, weight 32 bytes
// F16-NEXT:   stage 3: ops [memopt.cross_entropy], saved 0 values, weight 0 bytes

func.func @chain(%w1: tensor<8x8xf32> {memopt.param}, %w2: tensor<8x8xf32> {memopt.param},
                 %w3: tensor<4x8xf32> {memopt.param}, %x: tensor<2x8xf32>, %y: tensor<2xi64>) -> tensor<f32> {
  %h1 = memopt.linear %x, %w1 : tensor<2x8xf32>, tensor<8x8xf32>
  %a1 = memopt.relu %h1 : tensor<2x8xf32>
  %h2 = memopt.linear %a1, %w2 : tensor<2x8xf32>, tensor<8x8xf32>
  %a2 = memopt.relu %h2 : tensor<2x8xf32>
  %h3 = memopt.linear %a2, %w3 : tensor<2x8xf32>, tensor<4x8xf32>
  %l = memopt.cross_entropy %h3, %y : tensor<2x4xf32>, tensor<2xi64>
  return %l : tensor<f32>
}
