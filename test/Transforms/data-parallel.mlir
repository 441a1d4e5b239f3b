// RUN: memopt-opt %s --split-input-file --memopt-autodiff=optimizer=adam --memopt-data-parallel="ranks=2 zero=1 rank=1 bucket=0 divide=none" | FileCheck %s --check-prefix=ZERO1
// RUN: memopt-opt %s --split-input-file --memopt-autodiff=optimizer=adam --memopt-data-parallel="ranks=2 zero=1 rank=0 bucket=0 divide=none" | FileCheck %s --check-prefix=ZERO0
// RUN: memopt-opt %s --split-input-file --memopt-autodiff --memopt-data-parallel="ranks=2 bucket=0" | FileCheck %s --check-prefix=EACH
// RUN: memopt-opt %s --split-input-file --memopt-autodiff --memopt-data-parallel=ranks=4 | FileCheck %s --check-prefix=ONE
// RUN: memopt-opt %s --split-input-file --memopt-autodiff --memopt-data-parallel="ranks=2 bucket=200" | FileCheck %s --check-prefix=CAP
// RUN: memopt-opt %s --split-input-file --memopt-autodiff --memopt-data-parallel=ranks=1 | FileCheck %s --check-prefix=NONE
// RUN: memopt-opt %s --split-input-file --memopt-autodiff=optimizer=adam --memopt-data-parallel="ranks=2 zero=1 rank=1 divide=none" --memopt-report=file=- -o /dev/null | FileCheck %s --check-prefix=REPORT
// RUN: memopt-opt %s --split-input-file --memopt-autodiff="clip-norm=1.0" --memopt-data-parallel="ranks=2 bucket=0" | FileCheck %s --check-prefix=CLIP
// RUN: memopt-opt %s --split-input-file --memopt-mixed-precision=precision=fp16 --memopt-autodiff --memopt-data-parallel="ranks=2 bucket=0" | FileCheck %s --check-prefix=FP16
// RUN: memopt-opt %s --split-input-file --memopt-mixed-precision=precision=fp16 --memopt-autodiff="optimizer=adam clip-norm=1.0" --memopt-data-parallel="ranks=2 zero=2 rank=1 bucket=100 divide=none" | FileCheck %s --check-prefix=ZERO2
// RUN: memopt-opt %s --split-input-file --memopt-autodiff=optimizer=adam --memopt-data-parallel="ranks=4 zero=2 rank=3 divide=none" --memopt-report=file=- -o /dev/null | FileCheck %s --check-prefix=REPORT2
// RUN: memopt-opt %s --split-input-file --memopt-autodiff=optimizer=adam --memopt-data-parallel="ranks=2 zero=3 rank=1 bucket=100 divide=none" | FileCheck %s --check-prefix=ZERO3
// RUN: memopt-opt %s --split-input-file --memopt-autodiff=optimizer=adam --memopt-data-parallel="ranks=2 zero=1 rank=1 bucket=0" | FileCheck %s --check-prefix=ROWS1
// RUN: memopt-opt %s --split-input-file --memopt-mixed-precision=precision=fp16 --memopt-autodiff="optimizer=adam clip-norm=1.0" --memopt-data-parallel="ranks=2 zero=2 rank=1 bucket=100" | FileCheck %s --check-prefix=ROWS2
// RUN: memopt-opt %s --split-input-file --memopt-autodiff=optimizer=adam --memopt-data-parallel="ranks=2 zero=3 rank=1 bucket=0" | FileCheck %s --check-prefix=ROWS3
// RUN: memopt-opt %s --split-input-file --memopt-autodiff=optimizer=adam --memopt-data-parallel="ranks=4 zero=3 rank=3 divide=all" | FileCheck %s --check-prefix=ALL

// --memopt-data-parallel: every parameter gradient is averaged over the
// ranks (memopt.all_reduce) before anything on its way to the update reads
// it, in buckets of at most `bucket` bytes, each right after its last
// gradient is made.

// bucket=0: one all_reduce per gradient, right after it; the updates read
// the averages.
// EACH-LABEL: func.func @mlp(
// EACH:         %[[DW2:.*]] = memopt.matmul %{{.*}}, %{{.*}} {transpose_a = true} : tensor<2x3xf32>, tensor<2x8xf32>
// EACH-NEXT:    %[[AW2:.*]] = memopt.all_reduce %[[DW2]] {ranks = 2 : i64} : (tensor<3x8xf32>) -> tensor<3x8xf32>
// EACH-NEXT:    %[[DB2:.*]] = memopt.sum_to
// EACH-NEXT:    %[[AB2:.*]] = memopt.all_reduce %[[DB2]] {ranks = 2 : i64} : (tensor<3xf32>) -> tensor<3xf32>
// EACH:         %[[DW1:.*]] = memopt.matmul %{{.*}}, %arg4 {transpose_a = true}
// EACH-NEXT:    %[[AW1:.*]] = memopt.all_reduce %[[DW1]]
// EACH-NEXT:    %[[DB1:.*]] = memopt.sum_to
// EACH-NEXT:    %[[AB1:.*]] = memopt.all_reduce %[[DB1]]
// EACH-NEXT:    memopt.sgd_update %arg0, %[[AW1]]
// EACH-NEXT:    memopt.sgd_update %arg1, %[[AB1]]
// EACH-NEXT:    memopt.sgd_update %arg2, %[[AW2]]
// EACH-NEXT:    memopt.sgd_update %arg3, %[[AB2]]

// The default 25 MiB: one bucket of every f32 gradient, after the last.
// ONE-LABEL: func.func @mlp(
// ONE:         %[[DB1:.*]] = memopt.sum_to %{{.*}} : (tensor<2x8xf32>) -> tensor<8xf32>
// ONE-NEXT:    %[[A:.*]]:4 = memopt.all_reduce %{{.*}}, %{{.*}}, %{{.*}}, %[[DB1]] {ranks = 4 : i64} : (tensor<3x8xf32>, tensor<3xf32>, tensor<8x4xf32>, tensor<8xf32>)
// ONE-NEXT:    memopt.sgd_update %arg0, %[[A]]#2
// ONE-COUNT-1: memopt.all_reduce

// 200 bytes: the head's 96 + 12 bytes, then the first layer's 128 + 32.
// CAP-LABEL: func.func @mlp(
// CAP:         memopt.all_reduce %{{.*}}, %{{.*}} {ranks = 2 : i64} : (tensor<3x8xf32>, tensor<3xf32>)
// CAP:         memopt.all_reduce %{{.*}}, %{{.*}} {ranks = 2 : i64} : (tensor<8x4xf32>, tensor<8xf32>)

// The report of rank 1's step: one bucket of the 268 gradient bytes, its
// workspace two copies (268 padded to 272), four broadcasts, and Adam's
// moments of the two parameters it owns (2 x (32 + 96)) plus the step count.
// REPORT:      "optimizer_state_bytes": 260,
// REPORT:      "collectives": {
// REPORT-NEXT:   "ranks": 2,
// REPORT-NEXT:   "all_reduce_buckets": 1,
// REPORT-NEXT:   "reduce_scatter_buckets": 0,
// REPORT-NEXT:   "largest_bucket_bytes": 268,
// REPORT-NEXT:   "largest_workspace_bytes": 544,
// REPORT-NEXT:   "broadcasts": 4,
// REPORT-NEXT:   "all_gathers": 0
// REPORT-NEXT: }

// ranks=1 changes nothing.
// NONE-LABEL: func.func @mlp(
// NONE-NOT:    memopt.all_reduce

// Clipping's norm and the clipped products read the averages.
// CLIP-LABEL: func.func @mlp(
// CLIP:         %[[A:.*]] = memopt.all_reduce
// CLIP:         memopt.clip_coefficient %{{.*}}, %{{.*}}, %[[A]],

// fp16: the half-precision gradients are averaged; the overflow check and
// the updates read the averages, so every rank skips the same steps.
// FP16-LABEL: func.func @mlp(
// FP16:         %[[A:.*]] = memopt.all_reduce %{{.*}} {ranks = 2 : i64} : (tensor<8xf16>) -> tensor<8xf16>
// FP16:         %[[F:.*]] = memopt.found_inf %{{.*}}, %[[A]], %{{.*}}, %{{.*}} :
// FP16:         memopt.sgd_update %arg1, %[[A]], %[[F]] unscale
// zero=1: the parameters are owned largest first by the least loaded rank:
// w1 (128 bytes) rank 0, w2 (96) rank 1, b1 (32) rank 1, b2 (12) rank 0.
// Rank 1 keeps the Adam moments of b1 and w2 only (the step count stays),
// updates those two, and every parameter is broadcast from its owner in
// argument order, in place; the results that update arguments follow the
// arguments that remain.
// ZERO1-LABEL: func.func @mlp(
// ZERO1-SAME:    %arg6: tensor<f32> {memopt.optimizer_state}, %arg7: tensor<8xf32> {memopt.optimizer_state}, %arg8: tensor<8xf32> {memopt.optimizer_state}, %arg9: tensor<3x8xf32> {memopt.optimizer_state}, %arg10: tensor<3x8xf32> {memopt.optimizer_state})
// ZERO1-SAME:    tensor<8xf32> {memopt.updates = 7 : i64}, tensor<8xf32> {memopt.updates = 8 : i64}, tensor<3x8xf32> {memopt.updates = 9 : i64}, tensor<3x8xf32> {memopt.updates = 10 : i64}, tensor<f32> {memopt.updates = 6 : i64})
// ZERO1-NOT:     memopt.adam_update %arg0
// ZERO1:         %[[B1:.*]], %{{.*}}, %{{.*}} = memopt.adam_update %arg1,
// ZERO1:         %[[W2:.*]], %{{.*}}, %{{.*}} = memopt.adam_update %arg2,
// ZERO1-NEXT:    %[[P0:.*]] = memopt.broadcast %arg0 {memopt.inplace = 0 : i64, ranks = 2 : i64, root = 0 : i64}
// ZERO1-NEXT:    %[[P1:.*]] = memopt.broadcast %[[B1]] {memopt.inplace = 0 : i64, ranks = 2 : i64, root = 1 : i64}
// ZERO1-NEXT:    %[[P2:.*]] = memopt.broadcast %[[W2]] {memopt.inplace = 0 : i64, ranks = 2 : i64, root = 1 : i64}
// ZERO1-NEXT:    %[[P3:.*]] = memopt.broadcast %arg3 {memopt.inplace = 0 : i64, ranks = 2 : i64, root = 0 : i64}
// ZERO1-NEXT:    return %{{.*}}, %[[P0]], %[[P1]], %[[P2]], %[[P3]],
// zero=2, rank 1 (w2 and b1, as above), fp16, clipping, 100-byte buckets:
// each bucket is a reduce_scatter whose results are rank 1's gradients'
// averages only; nothing is computed for the other rank's updates; the
// overflow flag and the squared norm are this rank's part, summed over
// the ranks.
// ZERO2-LABEL: func.func @mlp(
// ZERO2:         %[[DW2:.*]] = memopt.matmul %{{.*}}, %{{.*}} {transpose_a = true} : tensor<2x3xf16>, tensor<2x8xf16>
// ZERO2-NEXT:    %[[DB2:.*]] = memopt.sum_to
// ZERO2-NEXT:    %[[W2:.*]] = memopt.reduce_scatter %[[DW2]], %[[DB2]] {owners = array<i64: 1, 0>, rank = 1 : i64, ranks = 2 : i64} : (tensor<3x8xf16>, tensor<3xf16>) -> tensor<3x8xf16>
// ZERO2:         %[[B1:.*]] = memopt.reduce_scatter %{{.*}}, %{{.*}} {owners = array<i64: 0, 1>, rank = 1 : i64, ranks = 2 : i64} : (tensor<8x4xf16>, tensor<8xf16>) -> tensor<8xf16>
// ZERO2-NEXT:    %[[B1W:.*]] = memopt.cast %[[B1]] : tensor<8xf16> to tensor<8xf32>
// ZERO2-NEXT:    %[[F:.*]] = memopt.found_inf %[[B1]], %[[W2]] :
// ZERO2-NEXT:    %[[ANY:.*]] = memopt.all_reduce %[[F]] {ranks = 2 : i64, sum = true} : (tensor<f32>) -> tensor<f32>
// ZERO2-NEXT:    %[[UB1:.*]] = memopt.unscale %[[B1W]], %arg6
// ZERO2-NEXT:    %[[UW2:.*]] = memopt.unscale %{{.*}}, %arg6
// ZERO2-NEXT:    %[[S:.*]] = memopt.square_sum %[[UB1]], %[[UW2]] : (tensor<8xf32>, tensor<3x8xf32>) -> tensor<f64>
// ZERO2-NEXT:    %[[T:.*]] = memopt.all_reduce %[[S]] {ranks = 2 : i64, sum = true} : (tensor<f64>) -> tensor<f64>
// ZERO2-NEXT:    %[[C:.*]] = memopt.clip_coefficient %[[T]] {max_norm = 1.000000e+00 : f64, square_sum = true} : (tensor<f64>) -> tensor<f32>
// ZERO2-NOT:     memopt.unscale
// ZERO2:         memopt.adam_update %arg1, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ANY]]
// ZERO2-NEXT:    memopt.adam_update %arg2,
// ZERO2-NEXT:    memopt.update_loss_scale %arg6, %arg7, %[[ANY]]
// ZERO2-NEXT:    memopt.broadcast %arg0 {memopt.inplace = 0 : i64, ranks = 2 : i64, root = 0 : i64}
// The report of rank 3 of 4 (w1 rank 0, w2 rank 1, b1 rank 2, b2 rank 3):
// its one gradient's average and moments, the bucket's workspace as an
// all-reduce's (268 bytes padded to 272, twice).
// REPORT2:      "gradient_bytes": 12,
// REPORT2:      "optimizer_state_bytes": 28,
// REPORT2:      "collectives": {
// REPORT2-NEXT:   "ranks": 4,
// REPORT2-NEXT:   "all_reduce_buckets": 0,
// REPORT2-NEXT:   "reduce_scatter_buckets": 1,
// REPORT2-NEXT:   "largest_bucket_bytes": 268,
// REPORT2-NEXT:   "largest_workspace_bytes": 544,
// REPORT2-NEXT:   "broadcasts": 4,
// REPORT2-NEXT:   "all_gathers": 0
// zero=3, rank 1 (w2 and b1): w1 and b2 are no longer its arguments (nor
// their state or results); every op that reads a parameter reads a copy
// from its owner received right before it (the owner's own copy from its
// argument, the others' with no operand); the updates read the rank's own
// arguments, and nothing is broadcast at the end.
// ZERO3-LABEL: func.func @mlp(
// ZERO3-SAME:    %arg0: tensor<8xf32> {memopt.param}, %arg1: tensor<3x8xf32> {memopt.param}, %arg2: tensor<2x4xf32>, %arg3: tensor<2xi64>
// ZERO3-SAME:    -> (tensor<f32>, tensor<8xf32> {memopt.updates = 0 : i64}, tensor<3x8xf32> {memopt.updates = 1 : i64}
// ZERO3-SAME:    memopt.sharded = {arguments = array<i64: 0, 3>, owners = array<i64: 0, 0>}
// ZERO3-NEXT:    %[[W1:.*]] = memopt.broadcast {ranks = 2 : i64, root = 0 : i64} : () -> tensor<8x4xf32>
// ZERO3-NEXT:    %[[B1:.*]] = memopt.broadcast %arg0 {ranks = 2 : i64, root = 1 : i64} : (tensor<8xf32>) -> tensor<8xf32>
// ZERO3-NEXT:    memopt.linear %arg2, %[[W1]], %[[B1]]
// ZERO3:         %[[W2:.*]] = memopt.broadcast %arg1 {ranks = 2 : i64, root = 1 : i64}
// ZERO3-NEXT:    %[[B2:.*]] = memopt.broadcast {ranks = 2 : i64, root = 0 : i64} : () -> tensor<3xf32>
// ZERO3-NEXT:    memopt.linear %{{.*}}, %[[W2]], %[[B2]]
// The backward's read of w2 gets a copy of its own.
// ZERO3:         %[[W2B:.*]] = memopt.broadcast %arg1 {ranks = 2 : i64, root = 1 : i64}
// ZERO3-NEXT:    memopt.matmul %{{.*}}, %[[W2B]] :
// ZERO3:         memopt.reduce_scatter %{{.*}} {owners = array<i64: 0>, rank = 1 : i64, ranks = 2 : i64} : (tensor<3xf32>) -> ()
// ZERO3:         memopt.adam_update %arg0,
// ZERO3-NEXT:    memopt.adam_update %arg1,
// ZERO3-NOT:     memopt.broadcast
// ZERO3:         return

// Divided by rows (divide=auto: a parameter larger than half a rank's even
// share, here w1 (128 of 268 bytes) and w2 (96)): zero=1, rank 1 updates
// rows 4-7 of w1 and row 2 of w2, from its rows of the averaged gradients
// and of the state (those arguments are its rows), and gathers the new
// parameters over the old.
// ROWS1-LABEL: func.func @mlp(
// ROWS1-SAME:    %arg7: tensor<4x4xf32> {memopt.optimizer_state}, %arg8: tensor<4x4xf32> {memopt.optimizer_state}, %arg9: tensor<1x8xf32> {memopt.optimizer_state}, %arg10: tensor<1x8xf32> {memopt.optimizer_state}, %arg11: tensor<3xf32> {memopt.optimizer_state}, %arg12: tensor<3xf32> {memopt.optimizer_state})
// ROWS1:         %[[DW1:.*]] = memopt.all_reduce %{{.*}} {ranks = 2 : i64} : (tensor<8x4xf32>) -> tensor<8x4xf32>
// ROWS1:         %[[G1:.*]] = memopt.slice %[[DW1]] {offsets = array<i64: 4, 0>, sizes = array<i64: 4, 4>} : tensor<8x4xf32>
// ROWS1-NEXT:    %[[P1:.*]] = memopt.slice %arg0 {offsets = array<i64: 4, 0>, sizes = array<i64: 4, 4>} : tensor<8x4xf32>
// ROWS1-NEXT:    %[[W1:.*]], %{{.*}}, %{{.*}} = memopt.adam_update %[[P1]], %[[G1]], %arg7, %arg8, %{{.*}} {lr = 1.000000e-03 : f64, memopt.inplace = 0 : i64} : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<f32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>)
// ROWS1:         %[[P2:.*]] = memopt.slice %arg2 {offsets = array<i64: 2, 0>, sizes = array<i64: 1, 8>} : tensor<3x8xf32>
// ROWS1-NEXT:    %[[W2:.*]], %{{.*}}, %{{.*}} = memopt.adam_update %[[P2]]
// ROWS1:         %[[N1:.*]] = memopt.all_gather %[[W1]], %arg0 {memopt.inplace = 1 : i64, rank = 1 : i64, ranks = 2 : i64} : (tensor<4x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
// ROWS1-NEXT:    %[[N2:.*]] = memopt.broadcast %arg1 {memopt.inplace = 0 : i64, ranks = 2 : i64, root = 0 : i64}
// ROWS1-NEXT:    %[[N3:.*]] = memopt.all_gather %[[W2]], %arg2 {memopt.inplace = 1 : i64, rank = 1 : i64, ranks = 2 : i64} : (tensor<1x8xf32>, tensor<3x8xf32>) -> tensor<3x8xf32>
// ROWS1-NEXT:    %[[N4:.*]] = memopt.broadcast %{{.*}} {memopt.inplace = 0 : i64, ranks = 2 : i64, root = 1 : i64}
// ROWS1-NEXT:    return %{{.*}}, %[[N1]], %[[N2]], %[[N3]], %[[N4]],

// zero=2 with fp16 and clipping: the reduce-scatter gives rank 1 its rows
// (owner -1), and what lies between them and the update (the widening
// cast, unscaling, clipping's product) works on them; the overflow check
// and the squared norm read them as the rank's part.
// ROWS2-LABEL: func.func @mlp(
// ROWS2:         %[[S2:.*]]:2 = memopt.reduce_scatter %{{.*}}, %{{.*}} {owners = array<i64: -1, 1>, rank = 1 : i64, ranks = 2 : i64} : (tensor<3x8xf16>, tensor<3xf16>) -> (tensor<1x8xf16>, tensor<3xf16>)
// ROWS2:         %[[W2C:.*]] = memopt.cast %[[S2]]#0 : tensor<1x8xf16> to tensor<1x8xf32>
// ROWS2:         %[[S1:.*]] = memopt.reduce_scatter %{{.*}}, %{{.*}} {owners = array<i64: -1, 0>, rank = 1 : i64, ranks = 2 : i64} : (tensor<8x4xf16>, tensor<8xf16>) -> tensor<4x4xf16>
// ROWS2-NEXT:    %[[W1C:.*]] = memopt.cast %[[S1]] : tensor<4x4xf16> to tensor<4x4xf32>
// ROWS2-NEXT:    memopt.found_inf %[[S1]], %[[S2]]#0, %[[S2]]#1 : (tensor<4x4xf16>, tensor<1x8xf16>, tensor<3xf16>) -> tensor<f32>
// ROWS2:         %[[U1:.*]] = memopt.unscale %[[W1C]], %arg6 : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
// ROWS2-NEXT:    %[[U2:.*]] = memopt.unscale %[[W2C]], %arg6 : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
// ROWS2:         memopt.square_sum %[[U1]], %[[U2]], %{{.*}} : (tensor<4x4xf32>, tensor<1x8xf32>, tensor<3xf32>) -> tensor<f64>
// ROWS2:         %[[C1:.*]] = memopt.mul %[[U1]], %{{.*}} {memopt.inplace = 0 : i64} : tensor<4x4xf32>, tensor<f32>
// ROWS2:         %[[P1:.*]] = memopt.slice %arg0 {offsets = array<i64: 4, 0>, sizes = array<i64: 4, 4>} : tensor<8x4xf32>
// ROWS2-NEXT:    memopt.adam_update %[[P1]], %[[C1]], %arg9, %arg10,
// ROWS2:         memopt.all_gather %{{.*}}, %arg0 {memopt.inplace = 1 : i64, rank = 1 : i64, ranks = 2 : i64}

// zero=3: the arguments of w1 and w2 are rank 1's rows (memopt.sharded's
// rows: 0 and 2), every reader reads a gathered copy, the update reads and
// returns the rows.
// ROWS3-LABEL: func.func @mlp(
// ROWS3-SAME:    %arg0: tensor<4x4xf32> {memopt.param}, %arg1: tensor<1x8xf32> {memopt.param}, %arg2: tensor<3xf32> {memopt.param}
// ROWS3-SAME:    -> (tensor<f32>, tensor<4x4xf32> {memopt.updates = 0 : i64}, tensor<1x8xf32> {memopt.updates = 1 : i64}, tensor<3xf32> {memopt.updates = 2 : i64}
// ROWS3-SAME:    memopt.sharded = {arguments = array<i64: 1>, owners = array<i64: 0>, rows = array<i64: 0, 2>}
// ROWS3-NEXT:    %[[W1:.*]] = memopt.all_gather %arg0 {rank = 1 : i64, ranks = 2 : i64} : (tensor<4x4xf32>) -> tensor<8x4xf32>
// ROWS3-NEXT:    %[[B1:.*]] = memopt.broadcast {ranks = 2 : i64, root = 0 : i64} : () -> tensor<8xf32>
// ROWS3-NEXT:    memopt.linear %arg3, %[[W1]], %[[B1]]
// ROWS3:         %[[G1:.*]] = memopt.reduce_scatter %{{.*}} {owners = array<i64: -1>, rank = 1 : i64, ranks = 2 : i64} : (tensor<8x4xf32>) -> tensor<4x4xf32>
// ROWS3:         memopt.adam_update %arg0, %[[G1]], %arg6, %arg7,
// ROWS3-NOT:     memopt.all_gather
// ROWS3:         return

// divide=all at 4 ranks: every parameter with a row per rank is divided;
// w2 and b2 (3 rows) are not, ranks 0 and 1 own them whole. Rank 3 holds
// rows 6 and 7 of w1 and b1.
// ALL-LABEL: func.func @mlp(
// ALL-SAME:    %arg0: tensor<2x4xf32> {memopt.param}, %arg1: tensor<2xf32> {memopt.param}
// ALL-SAME:    memopt.sharded = {arguments = array<i64: 2, 3>, owners = array<i64: 0, 1>, rows = array<i64: 0, 1>}
// Rank 0, the other half.
// ZERO0-LABEL: func.func @mlp(
// ZERO0:         memopt.adam_update %arg0,
// ZERO0:         memopt.adam_update %arg3,
// ZERO0-NEXT:    memopt.broadcast %{{.*}} {memopt.inplace = 0 : i64, ranks = 2 : i64, root = 0 : i64} : (tensor<8x4xf32>)
// ZERO0-NEXT:    memopt.broadcast %arg1 {memopt.inplace = 0 : i64, ranks = 2 : i64, root = 1 : i64}
func.func @mlp(%w1: tensor<8x4xf32> {memopt.param}, %b1: tensor<8xf32> {memopt.param},
               %w2: tensor<3x8xf32> {memopt.param}, %b2: tensor<3xf32> {memopt.param},
               %x: tensor<2x4xf32>, %labels: tensor<2xi64>) -> tensor<f32> {
  %h = memopt.linear %x, %w1, %b1 : tensor<2x4xf32>, tensor<8x4xf32>, tensor<8xf32>
  %a = memopt.relu %h : tensor<2x8xf32>
  %y = memopt.linear %a, %w2, %b2 : tensor<2x8xf32>, tensor<3x8xf32>, tensor<3xf32>
  %loss = memopt.cross_entropy %y, %labels : tensor<2x3xf32>, tensor<2xi64>
  return %loss : tensor<f32>
}

// -----

// A parameter added to an activation of its shape: its gradient is also
// the activation's, which the backward pass reads on, locally; only the
// update reads the average.
// EACH-LABEL: func.func @shared_gradient(
// EACH:         %[[G:.*]] = memopt.mse_loss_backward
// EACH:         %[[A:.*]] = memopt.all_reduce %[[G]]
// EACH:         memopt.relu_backward %[[G]],
// EACH:         memopt.sgd_update %arg1, %[[A]]
// Under zero=2 (b is rank 1's, w rank 0's), rank 1 keeps b's average.
// ZERO2-LABEL: func.func @shared_gradient(
// ZERO2:         %[[G:.*]] = memopt.mse_loss_backward
// ZERO2:         %[[A:.*]] = memopt.reduce_scatter %[[G]], %{{.*}} {owners = array<i64: 1, 0>, rank = 1 : i64, ranks = 2 : i64}
// ZERO2:         memopt.found_inf %[[A]] :
func.func @shared_gradient(%w: tensor<2x4xf32> {memopt.param}, %b: tensor<2x4xf32> {memopt.param},
                           %x: tensor<2x4xf32>, %t: tensor<2x4xf32>) -> tensor<f32> {
  %h = memopt.mul %x, %w : tensor<2x4xf32>, tensor<2x4xf32>
  %a = memopt.relu %h : tensor<2x4xf32>
  %y = memopt.add %a, %b : tensor<2x4xf32>, tensor<2x4xf32>
  %loss = "memopt.mse_loss"(%y, %t) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Two steps in one module: each function's `memopt.sharded` is its own.
// ZERO3-LABEL: func.func @first(
// ZERO3-SAME:    memopt.sharded = {arguments = array<i64: 0>, owners = array<i64: 0>}
// ZERO3-LABEL: func.func @second(
// ZERO3-SAME:    memopt.sharded = {arguments = array<i64: 0>, owners = array<i64: 0>}
func.func @first(%w: tensor<8x4xf32> {memopt.param}, %b: tensor<4xf32> {memopt.param},
                 %x: tensor<2x8xf32>, %t: tensor<2x4xf32>) -> tensor<f32> {
  %y = memopt.matmul %x, %w : tensor<2x8xf32>, tensor<8x4xf32>
  %z = memopt.add %y, %b : tensor<2x4xf32>, tensor<4xf32>
  %loss = "memopt.mse_loss"(%z, %t) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}
func.func @second(%w: tensor<8x4xf32> {memopt.param}, %b: tensor<4xf32> {memopt.param},
                  %x: tensor<2x8xf32>, %t: tensor<2x4xf32>) -> tensor<f32> {
  %y = memopt.matmul %x, %w : tensor<2x8xf32>, tensor<8x4xf32>
  %z = memopt.add %y, %b : tensor<2x4xf32>, tensor<4xf32>
  %loss = "memopt.mse_loss"(%z, %t) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}
