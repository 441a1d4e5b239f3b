// RUN: memopt-opt %s -split-input-file --memopt-autodiff=optimizer=none --memopt-checkpoint=strategy=sqrt | FileCheck %s
// RUN: memopt-opt %s -split-input-file --memopt-autodiff=optimizer=none "--memopt-checkpoint=strategy=optimal solver=dp" | FileCheck %s --check-prefix=DP
// RUN: memopt-opt %s -split-input-file --memopt-autodiff=optimizer=none "--memopt-checkpoint=strategy=optimal solver=dp slots=1" | FileCheck %s --check-prefix=SLOT1

// A chain of nine stages (the linear layer and its tanh are one stage: the
// backward reads only the tanh). sqrt: three segments; the checkpoints are
// the outputs of stages 2 and 5 (%3, %6); the first two segments are
// recomputed whole, the last is stored.

// CHECK-LABEL: func.func @chain
// CHECK:      %[[C3:.*]] = memopt.tanh %2 : tensor<4x8xf32>
// CHECK:      memopt.cross_entropy_backward
// The stored segment reads the original values.
// CHECK:      memopt.tanh_backward %{{.*}}, %8
// CHECK-NEXT: memopt.tanh_backward %{{.*}}, %7
// CHECK-NEXT: memopt.tanh_backward %{{.*}}, %6
// Segment 2 is recomputed from the checkpoint %3 when its backward begins.
// CHECK-NEXT: %[[R4:.*]] = memopt.tanh %[[C3]] {memopt.recompute}
// CHECK-NEXT: %[[R5:.*]] = memopt.tanh %[[R4]] {memopt.recompute}
// CHECK-NEXT: memopt.tanh_backward %{{.*}}, %[[R5]]
// CHECK-NEXT: memopt.tanh_backward %{{.*}}, %[[R4]]
// CHECK-NEXT: memopt.tanh_backward %{{.*}}, %[[C3]]
// Segment 1 from the arguments.
// CHECK-NEXT: %[[R0:.*]] = memopt.linear %arg1, %arg0 {memopt.recompute}
// CHECK-NEXT: %[[R1:.*]] = memopt.tanh %[[R0]] {memopt.recompute}
// CHECK-NEXT: %[[R2:.*]] = memopt.tanh %[[R1]] {memopt.recompute}
// CHECK-NEXT: memopt.tanh_backward %{{.*}}, %[[R2]]
// CHECK-NEXT: memopt.tanh_backward %{{.*}}, %[[R1]]
// CHECK-NEXT: memopt.matmul
// CHECK-NOT:  memopt.recompute

// The binomial schedule within one forward pass: here as many slots as
// segments, every stage recomputed at most once.
// DP-LABEL: func.func @chain
// DP: memopt.tanh %6 {memopt.recompute}
// DP: memopt.tanh %3 {memopt.recompute}
// DP: memopt.linear %arg1, %arg0 {memopt.recompute}
// DP-NOT: memopt.linear %arg1, %arg0 {memopt.recompute}

// One slot: the cut a stage needs is re-derived (advanced) from the nearest
// held checkpoint, so early stages run several times.
// SLOT1-LABEL: func.func @chain
// SLOT1-COUNT-2: memopt.linear %arg1, %arg0 {memopt.recompute}
func.func @chain(%w: tensor<8x8xf32> {memopt.param}, %x: tensor<4x8xf32>, %t: tensor<4xi64>) -> tensor<f32> {
  %0 = memopt.linear %x, %w : tensor<4x8xf32>, tensor<8x8xf32>
  %1 = memopt.tanh %0 : tensor<4x8xf32>
  %2 = memopt.tanh %1 : tensor<4x8xf32>
  %3 = memopt.tanh %2 : tensor<4x8xf32>
  %4 = memopt.tanh %3 : tensor<4x8xf32>
  %5 = memopt.tanh %4 : tensor<4x8xf32>
  %6 = memopt.tanh %5 : tensor<4x8xf32>
  %7 = memopt.tanh %6 : tensor<4x8xf32>
  %8 = memopt.tanh %7 : tensor<4x8xf32>
  %loss = memopt.cross_entropy %8, %t : tensor<4x8xf32>, tensor<4xi64>
  return %loss : tensor<f32>
}

// -----

// Residual blocks: inside a block the input crosses to the add, so only the
// block outputs (%b1, %b2, %b3, %b4) are articulation points and stages are
// whole blocks. Dropout clones keep their seed; a batch-norm clone's running
// statistics are unused and removed, and the step returns the originals'.

// CHECK-LABEL: func.func @residual
// CHECK: %{{[a-z_0-9]+}}, %[[M:[a-z_0-9]+]], %[[V:[a-z_0-9]+]] = memopt.batch_norm %{{.*}}
// CHECK: memopt.dropout {{.*}}{memopt.recompute, p = 1.000000e-01 : f64, seed = 3 : i64}
// CHECK: memopt.batch_norm {{.*}}memopt.recompute
// CHECK: return %{{.*}}, %[[M]], %[[V]],
func.func @residual(%w1: tensor<8x8xf32> {memopt.param}, %w2: tensor<8x8xf32> {memopt.param},
                    %w3: tensor<8x8xf32> {memopt.param}, %w4: tensor<8x8xf32> {memopt.param},
                    %g: tensor<8xf32> {memopt.param}, %b: tensor<8xf32> {memopt.param},
                    %rm: tensor<8xf32> {memopt.state}, %rv: tensor<8xf32> {memopt.state},
                    %x: tensor<4x8xf32>, %t: tensor<4xi64>) -> (tensor<f32>, tensor<8xf32>, tensor<8xf32>) {
  %h1 = memopt.linear %x, %w1 : tensor<4x8xf32>, tensor<8x8xf32>
  %n1, %m1, %v1 = memopt.batch_norm %h1, %g, %b, %rm, %rv : tensor<4x8xf32>, tensor<8xf32>
  %r1 = memopt.relu %n1 : tensor<4x8xf32>
  %a1 = memopt.add %r1, %x : tensor<4x8xf32>, tensor<4x8xf32>
  %b1 = memopt.tanh %a1 : tensor<4x8xf32>
  %h2 = memopt.linear %b1, %w2 : tensor<4x8xf32>, tensor<8x8xf32>
  %d2 = memopt.dropout %h2 {p = 0.1 : f64, seed = 3 : i64} : tensor<4x8xf32>
  %a2 = memopt.add %d2, %b1 : tensor<4x8xf32>, tensor<4x8xf32>
  %b2 = memopt.tanh %a2 : tensor<4x8xf32>
  %h3 = memopt.linear %b2, %w3 : tensor<4x8xf32>, tensor<8x8xf32>
  %r3 = memopt.relu %h3 : tensor<4x8xf32>
  %a3 = memopt.add %r3, %b2 : tensor<4x8xf32>, tensor<4x8xf32>
  %b3 = memopt.tanh %a3 : tensor<4x8xf32>
  %h4 = memopt.linear %b3, %w4 : tensor<4x8xf32>, tensor<8x8xf32>
  %r4 = memopt.relu %h4 : tensor<4x8xf32>
  %a4 = memopt.add %r4, %b3 : tensor<4x8xf32>, tensor<4x8xf32>
  %b4 = memopt.tanh %a4 : tensor<4x8xf32>
  %loss = memopt.cross_entropy %b4, %t : tensor<4x8xf32>, tensor<4xi64>
  return %loss, %m1, %v1 : tensor<f32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// An inference graph has no backward pass: nothing to checkpoint.
// CHECK-LABEL: func.func @inference
// CHECK-NOT: memopt.recompute
func.func @inference(%w: tensor<8x8xf32>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = memopt.linear %x, %w : tensor<4x8xf32>, tensor<8x8xf32>
  %1 = memopt.relu %0 : tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
