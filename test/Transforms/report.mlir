// RUN: memopt-opt %examples/mlp.mlir --memopt-report -o /dev/null | FileCheck %s --check-prefix=FWD
// RUN: memopt-opt %examples/mlp.mlir --memopt-autodiff --memopt-report -o /dev/null | FileCheck %s --check-prefix=STEP
// RUN: memopt-opt %examples/mlp.mlir --memopt-autodiff --memopt-report=file=%t -o /dev/null
// RUN: FileCheck %s --check-prefix=STEP < %t

// The memory report (DESIGN.md §4) of examples/mlp.mlir, a single function,
// so one JSON object, every field checked.
//
// Parameters: 784*256+256 + 256*128+128 + 128*10+10 = 235146 elements,
// 940584 bytes. Data: images 64x784 f32 (200704) + labels 64 i64 (512).
// Arguments 1141800 bytes, live throughout.
//
// Forward only (no backward op, so nothing saved and no gradients):
//   activations 65536 + 65536 + 32768 + 32768 + 2560 + 4 = 199172 bytes
//   live at op 1 (relu 1): 1141800 + 65536 (h1) + 65536 (a1) = 1272872 (peak)
//   FLOPs: linear 2*64*256*784 = 25690112, relu 16384, linear 2*64*128*256 =
//   4194304, relu 8192, linear 2*64*10*128 = 163840, cross_entropy 640:
//   30073472.
// FWD:      {{^}}{
// FWD-NEXT:   "function": "mlp_train",
// FWD-NEXT:   "parameters": {
// FWD-NEXT:     "count": 235146,
// FWD-NEXT:     "bytes": 940584
// FWD-NEXT:   },
// FWD-NEXT:   "gradient_bytes": 0,
// FWD-NEXT:   "optimizer_state_bytes": 0,
// FWD-NEXT:   "forward_allocated_bytes": 199172,
// FWD-NEXT:   "saved_for_backward_bytes": 0,
// FWD-NEXT:   "peak_bytes": 1272872,
// FWD-NEXT:   "arena_bytes": null,
// FWD-NEXT:   "recompute_flops": 0,
// FWD-NEXT:   "total_flops": 30073472,
// FWD-NEXT:   "clipped_gradient_bytes": 0,
// FWD-NEXT:   "ops": [
// FWD-NEXT:     {
// FWD-NEXT:       "index": 0,
// FWD-NEXT:       "op": "memopt.linear",
// FWD-NEXT:       "loc": "{{.*}}mlp.mlir:12:9",
// FWD-NEXT:       "live_bytes": 1207336
// FWD-NEXT:     },
// FWD-NEXT:     {
// FWD-NEXT:       "index": 1,
// FWD-NEXT:       "op": "memopt.relu",
// FWD-NEXT:       "loc": "{{.*}}mlp.mlir:13:9",
// FWD-NEXT:       "live_bytes": 1272872
// FWD-NEXT:     },
// FWD-NEXT:     {
// FWD-NEXT:       "index": 2,
// FWD-NEXT:       "op": "memopt.linear",
// FWD-NEXT:       "loc": "{{.*}}mlp.mlir:14:9",
// FWD-NEXT:       "live_bytes": 1240104
// FWD-NEXT:     },
// FWD-NEXT:     {
// FWD-NEXT:       "index": 3,
// FWD-NEXT:       "op": "memopt.relu",
// FWD-NEXT:       "loc": "{{.*}}mlp.mlir:15:9",
// FWD-NEXT:       "live_bytes": 1207336
// FWD-NEXT:     },
// FWD-NEXT:     {
// FWD-NEXT:       "index": 4,
// FWD-NEXT:       "op": "memopt.linear",
// FWD-NEXT:       "loc": "{{.*}}mlp.mlir:16:13",
// FWD-NEXT:       "live_bytes": 1177128
// FWD-NEXT:     },
// FWD-NEXT:     {
// FWD-NEXT:       "index": 5,
// FWD-NEXT:       "op": "memopt.cross_entropy",
// FWD-NEXT:       "loc": "{{.*}}mlp.mlir:17:11",
// (The loss over 64 rows: 8 blocks of partial sums, a 64-byte workspace.)
// FWD-NEXT:       "live_bytes": 1144428
// FWD-NEXT:     }
// FWD-NEXT:   ]
// FWD-NEXT: }
// FWD-EMPTY:

// After --memopt-autodiff (sgd): 24 ops, the first backward op is 7 (op 6
// is the loss seed constant).
//   gradient_bytes: one gradient per parameter, the sgd_update operands:
//     940584
//   saved_for_backward_bytes: forward buffers live at op 7: a1 (65536,
//     read by relu_backward at 15), a2 (32768, until 11), logits (2560, read
//     by cross_entropy_backward at 7), loss (4, returned) = 100868
//   Updates run in place over their parameter (memopt.inplace = 0), so they
//   allocate nothing; the peak is at op 17, the last sum_to: arguments
//   1141800 + loss 4 + every gradient 940584 + relu_backward's output
//   65536 (fc1's, read by sum_to) = 2147924. Each update's row is the row
//   it had with a new parameter buffer, less the new parameters so far
//   (op 18: 2885204 - 802816 = 2082388).
//   FLOPs: forward 30073472; backward: cross_entropy_backward 640, dx/dw
//     matmuls 163840 + 163840, sum_to 640, relu_backward 8192, matmuls
//     4194304 + 4194304, sum_to 8192, relu_backward 16384, dw matmul
//     25690112, sum_to 16384, sgd_update 235146 in all: 34691978.
//     Total 64765450.
// STEP:      {{^}}{
// STEP-NEXT:   "function": "mlp_train",
// STEP-NEXT:   "parameters": {
// STEP-NEXT:     "count": 235146,
// STEP-NEXT:     "bytes": 940584
// STEP-NEXT:   },
// STEP-NEXT:   "gradient_bytes": 940584,
// STEP-NEXT:   "optimizer_state_bytes": 0,
// STEP-NEXT:   "forward_allocated_bytes": 199172,
// STEP-NEXT:   "saved_for_backward_bytes": 100868,
// STEP-NEXT:   "peak_bytes": 2147924,
// STEP-NEXT:   "arena_bytes": null,
// STEP-NEXT:   "recompute_flops": 0,
// STEP-NEXT:   "total_flops": 64765450,
// STEP-NEXT:   "clipped_gradient_bytes": 0,
// STEP-NEXT:   "ops": [
// STEP-NEXT:     {
// STEP-NEXT:       "index": 0,
// STEP-NEXT:       "op": "memopt.linear",
// STEP-NEXT:       "loc": "{{.*}}mlp.mlir:12:9",
// STEP-NEXT:       "live_bytes": 1207336
// STEP-NEXT:     },
// STEP-NEXT:     {
// STEP-NEXT:       "index": 1,
// STEP-NEXT:       "op": "memopt.relu",
// STEP-NEXT:       "loc": "{{.*}}mlp.mlir:13:9",
// STEP-NEXT:       "live_bytes": 1272872
// STEP-NEXT:     },
// STEP-NEXT:     {
// STEP-NEXT:       "index": 2,
// STEP-NEXT:       "op": "memopt.linear",
// STEP-NEXT:       "loc": "{{.*}}mlp.mlir:14:9",
// STEP-NEXT:       "live_bytes": 1240104
// STEP-NEXT:     },
// STEP-NEXT:     {
// STEP-NEXT:       "index": 3,
// STEP-NEXT:       "op": "memopt.relu",
// STEP-NEXT:       "loc": "{{.*}}mlp.mlir:15:9",
// STEP-NEXT:       "live_bytes": 1272872
// STEP-NEXT:     },
// STEP-NEXT:     {
// STEP-NEXT:       "index": 4,
// STEP-NEXT:       "op": "memopt.linear",
// STEP-NEXT:       "loc": "{{.*}}mlp.mlir:16:13",
// STEP-NEXT:       "live_bytes": 1242664
// STEP-NEXT:     },
// STEP-NEXT:     {
// STEP-NEXT:       "index": 5,
// STEP-NEXT:       "op": "memopt.cross_entropy",
// STEP-NEXT:       "loc": "{{.*}}mlp.mlir:17:11",
// STEP-NEXT:       "live_bytes": 1242732
// STEP-NEXT:     },
// STEP-NEXT:     {
// STEP-NEXT:       "index": 6,
// STEP-NEXT:       "op": "arith.constant",
// STEP-NEXT:       "loc": "{{.*}}mlp.mlir:18:3",
// STEP-NEXT:       "live_bytes": 1242672
// STEP-NEXT:     },
// STEP-NEXT:     {
// STEP-NEXT:       "index": 7,
// STEP-NEXT:       "op": "memopt.cross_entropy_backward",
// STEP-NEXT:       "loc": "{{.*}}mlp.mlir:17:11",
// STEP-NEXT:       "live_bytes": 1245232
// STEP-NEXT:     },
// STEP-NEXT:     {
// STEP-NEXT:       "index": 8,
// STEP-NEXT:       "op": "memopt.matmul",
// STEP-NEXT:       "loc": "{{.*}}mlp.mlir:16:13",
// STEP-NEXT:       "live_bytes": 1275436
// STEP-NEXT:     },
// STEP-NEXT:     {
// STEP-NEXT:       "index": 9,
// STEP-NEXT:       "op": "memopt.matmul",
// STEP-NEXT:       "loc": "{{.*}}mlp.mlir:16:13",
// STEP-NEXT:       "live_bytes": 1280556
// STEP-NEXT:     },
// STEP-NEXT:     {
// STEP-NEXT:       "index": 10,
// STEP-NEXT:       "op": "memopt.sum_to",
// STEP-NEXT:       "loc": "{{.*}}mlp.mlir:16:13",
// STEP-NEXT:       "live_bytes": 1280596
// STEP-NEXT:     },
// STEP-NEXT:     {
// STEP-NEXT:       "index": 11,
// STEP-NEXT:       "op": "memopt.relu_backward",
// STEP-NEXT:       "loc": "{{.*}}mlp.mlir:15:9",
// STEP-NEXT:       "live_bytes": 1310804
// STEP-NEXT:     },
// STEP-NEXT:     {
// STEP-NEXT:       "index": 12,
// STEP-NEXT:       "op": "memopt.matmul",
// STEP-NEXT:       "loc": "{{.*}}mlp.mlir:14:9",
// STEP-NEXT:       "live_bytes": 1310804
// STEP-NEXT:     },
// STEP-NEXT:     {
// STEP-NEXT:       "index": 13,
// STEP-NEXT:       "op": "memopt.matmul",
// STEP-NEXT:       "loc": "{{.*}}mlp.mlir:14:9",
// STEP-NEXT:       "live_bytes": 1441876
// STEP-NEXT:     },
// STEP-NEXT:     {
// STEP-NEXT:       "index": 14,
// STEP-NEXT:       "op": "memopt.sum_to",
// STEP-NEXT:       "loc": "{{.*}}mlp.mlir:14:9",
// STEP-NEXT:       "live_bytes": 1442388
// STEP-NEXT:     },
// STEP-NEXT:     {
// STEP-NEXT:       "index": 15,
// STEP-NEXT:       "op": "memopt.relu_backward",
// STEP-NEXT:       "loc": "{{.*}}mlp.mlir:13:9",
// STEP-NEXT:       "live_bytes": 1475156
// STEP-NEXT:     },
// STEP-NEXT:     {
// STEP-NEXT:       "index": 16,
// STEP-NEXT:       "op": "memopt.matmul",
// STEP-NEXT:       "loc": "{{.*}}mlp.mlir:12:9",
// STEP-NEXT:       "live_bytes": 2146900
// STEP-NEXT:     },
// STEP-NEXT:     {
// STEP-NEXT:       "index": 17,
// STEP-NEXT:       "op": "memopt.sum_to",
// STEP-NEXT:       "loc": "{{.*}}mlp.mlir:12:9",
// STEP-NEXT:       "live_bytes": 2147924
// STEP-NEXT:     },
// STEP-NEXT:     {
// STEP-NEXT:       "index": 18,
// STEP-NEXT:       "op": "memopt.sgd_update",
// STEP-NEXT:       "loc": "{{.*}}mlp.mlir:7:1",
// STEP-NEXT:       "live_bytes": 2082388,
// STEP-NEXT:       "inplace_operand": 0
// STEP-NEXT:     },
// STEP-NEXT:     {
// STEP-NEXT:       "index": 19,
// STEP-NEXT:       "op": "memopt.sgd_update",
// STEP-NEXT:       "loc": "{{.*}}mlp.mlir:7:1",
// STEP-NEXT:       "live_bytes": 1279572,
// STEP-NEXT:       "inplace_operand": 0
// STEP-NEXT:     },
// STEP-NEXT:     {
// STEP-NEXT:       "index": 20,
// STEP-NEXT:       "op": "memopt.sgd_update",
// STEP-NEXT:       "loc": "{{.*}}mlp.mlir:7:1",
// STEP-NEXT:       "live_bytes": 1278548,
// STEP-NEXT:       "inplace_operand": 0
// STEP-NEXT:     },
// STEP-NEXT:     {
// STEP-NEXT:       "index": 21,
// STEP-NEXT:       "op": "memopt.sgd_update",
// STEP-NEXT:       "loc": "{{.*}}mlp.mlir:7:1",
// STEP-NEXT:       "live_bytes": 1147476,
// STEP-NEXT:       "inplace_operand": 0
// STEP-NEXT:     },
// STEP-NEXT:     {
// STEP-NEXT:       "index": 22,
// STEP-NEXT:       "op": "memopt.sgd_update",
// STEP-NEXT:       "loc": "{{.*}}mlp.mlir:7:1",
// STEP-NEXT:       "live_bytes": 1146964,
// STEP-NEXT:       "inplace_operand": 0
// STEP-NEXT:     },
// STEP-NEXT:     {
// STEP-NEXT:       "index": 23,
// STEP-NEXT:       "op": "memopt.sgd_update",
// STEP-NEXT:       "loc": "{{.*}}mlp.mlir:7:1",
// STEP-NEXT:       "live_bytes": 1141844,
// STEP-NEXT:       "inplace_operand": 0
// STEP-NEXT:     }
// STEP-NEXT:   ]
// STEP-NEXT: }
// STEP-EMPTY:
