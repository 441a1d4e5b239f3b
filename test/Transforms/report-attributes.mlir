// RUN: memopt-opt %s --memopt-report -o /dev/null | FileCheck %s

// What later passes mark changes the report: an in-place relu allocates
// nothing and keeps the linear's buffer alive through its own uses; a
// recomputed linear (checkpointing) counts in recompute_flops; the planned
// arena size is reported once the function carries it.
// Arguments: x 64 + w 128 + t 32 = 224 bytes.
//   op 0 linear: + %h 32 = 256;  op 1 relu in place: 256
//   op 2 mse_loss: + %h (used through %a until op 4) + loss 4 = 260
//   op 3 recomputed linear: + 32 = 292;  op 4 mul: + 32 = 324
// Forward allocated: %h 32 + loss 4 (not the in-place relu) = 36, all of it
// still live when the backward pass starts at op 3.
// FLOPs: linear 2*2*4*8 = 128, relu 8, mse_loss 8, linear 128 (recomputed),
// mul 8 = 280.
// CHECK:      "function": "marked",
// CHECK-NEXT: "parameters": {
// CHECK-NEXT:   "count": 32,
// CHECK-NEXT:   "bytes": 128
// CHECK-NEXT: },
// CHECK-NEXT: "gradient_bytes": 0,
// CHECK-NEXT: "optimizer_state_bytes": 0,
// CHECK-NEXT: "forward_allocated_bytes": 36,
// CHECK-NEXT: "saved_for_backward_bytes": 36,
// CHECK-NEXT: "peak_bytes": 324,
// CHECK-NEXT: "arena_bytes": 4096,
// CHECK-NEXT: "recompute_flops": 128,
// CHECK-NEXT: "total_flops": 280,
// CHECK:      "op": "memopt.relu",
// CHECK:      "live_bytes": 256
// CHECK:      "op": "memopt.mse_loss",
// CHECK:      "live_bytes": 260
// CHECK:      "op": "memopt.linear",
// CHECK:      "live_bytes": 292
// CHECK:      "op": "memopt.mul",
// CHECK:      "live_bytes": 324
func.func @marked(%x: tensor<2x8xf32>, %w: tensor<4x8xf32> {memopt.param},
                  %t: tensor<2x4xf32>) -> tensor<f32>
    attributes {memopt.arena_bytes = 4096 : i64} {
  %h = memopt.linear %x, %w : tensor<2x8xf32>, tensor<4x8xf32>
  %a = memopt.relu %h {memopt.inplace = 0 : i64} : tensor<2x4xf32>
  %l = memopt.mse_loss %a, %t : tensor<2x4xf32>
  %r = memopt.linear %x, %w {memopt.recompute} : tensor<2x8xf32>, tensor<4x8xf32>
  %g = memopt.mul %r, %a : tensor<2x4xf32>, tensor<2x4xf32>
  return %l : tensor<f32>
}
