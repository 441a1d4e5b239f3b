// RUN: memopt-opt %s --split-input-file --verify-diagnostics --memopt-data-parallel=ranks=2
// RUN: not memopt-opt %s --split-input-file --memopt-data-parallel="ranks=2 zero=2" 2>&1 | FileCheck %s --check-prefix=RANK-TWO
// RUN: not memopt-opt %s --split-input-file --memopt-data-parallel="ranks=4 zero=3 rank=4" 2>&1 | FileCheck %s --check-prefix=RANK-THREE
// RUN: not memopt-opt %s --split-input-file --memopt-data-parallel="ranks=2 zero=1" 2>&1 | FileCheck %s --check-prefix=RANK
// RUN: not memopt-opt %s --split-input-file --memopt-data-parallel="ranks=2 zero=1 rank=2" 2>&1 | FileCheck %s --check-prefix=RANK2
// RUN: not memopt-opt %s --split-input-file --memopt-data-parallel="ranks=2 zero=7" 2>&1 | FileCheck %s --check-prefix=STAGE
// RUN: not memopt-opt %s --split-input-file --memopt-data-parallel=ranks=0 2>&1 | FileCheck %s --check-prefix=RANKS
// RUN: not memopt-opt %s --split-input-file --memopt-data-parallel="ranks=2 bucket=lots" 2>&1 | FileCheck %s --check-prefix=BUCKET
// RUN: not memopt-opt %s --split-input-file --memopt-data-parallel="ranks=2 zero=1 rank=0 divide=half" 2>&1 | FileCheck %s --check-prefix=DIVIDE
// RUN: not memopt-opt %s --split-input-file --memopt-pipeline="mode=inference ranks=2" 2>&1 | FileCheck %s --check-prefix=INFER

// RANK-THREE: error: memopt-data-parallel: zero=3 builds one rank's step (the ranks own different parameters): rank must be in [0, 4), got 4
// RANK-TWO: error: memopt-data-parallel: zero=2 builds one rank's step (the ranks own different parameters): rank must be in [0, 2), got -1
// RANK: error: memopt-data-parallel: zero=1 builds one rank's step (the ranks own different parameters): rank must be in [0, 2), got -1
// RANK2: error: memopt-data-parallel: zero=1 builds one rank's step (the ranks own different parameters): rank must be in [0, 2), got 2
// STAGE: error: memopt-data-parallel: zero must be 0, 1, 2 or 3, got 7
// RANKS: error: memopt-data-parallel: ranks must be at least 1, got 0
// BUCKET: error: memopt-data-parallel: bucket must be a byte size such as 25MiB, 1048576 or 0, got 'lots'
// DIVIDE: error: memopt-data-parallel: divide must be auto, all, none or a byte size such as 64MiB, got 'half'
// INFER: memopt-pipeline: ranks has no effect with mode=inference (no backward pass)

// A forward graph (autodiff not run, or optimizer=none): no update to find
// the gradients by.
// expected-error @+1 {{memopt-data-parallel: @forward has parameters but no optimizer update (a forward graph, or a step with optimizer=none): nothing to average; run it after --memopt-autodiff with an optimizer}}
func.func @forward(%w: tensor<4xf32> {memopt.param}, %x: tensor<4xf32>) -> tensor<4xf32> {
  %y = memopt.mul %x, %w : tensor<4xf32>, tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A step that already averages its gradients.
func.func @twice(%w: tensor<4xf32> {memopt.param}, %g: tensor<4xf32>) -> tensor<4xf32> {
  %d = memopt.mul %g, %g : tensor<4xf32>, tensor<4xf32>
  // expected-error @+1 {{'memopt.all_reduce' op is already here: memopt-data-parallel runs once, on a step without collectives}}
  %a = memopt.all_reduce %d {ranks = 2 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  %n = memopt.sgd_update %w, %a {lr = 0.1 : f64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %n : tensor<4xf32>
}

// -----

// What zero=2 makes of clipping: the pass has run already.
func.func @clipped_by_parts(%w: tensor<4xf32> {memopt.param}, %g: tensor<4xf32>) -> tensor<4xf32> {
  %d = memopt.mul %g, %g : tensor<4xf32>, tensor<4xf32>
  // expected-error @+1 {{'memopt.square_sum' op is already here: memopt-data-parallel runs once, on a step without collectives}}
  %s = memopt.square_sum %d : (tensor<4xf32>) -> tensor<f64>
  %c = memopt.clip_coefficient %s {max_norm = 1.0 : f64, square_sum = true} : (tensor<f64>) -> tensor<f32>
  %m = memopt.mul %d, %c : tensor<4xf32>, tensor<f32>
  %n = memopt.sgd_update %w, %m {lr = 0.1 : f64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %n : tensor<4xf32>
}

// -----

// A gradient that is an argument, not computed by the step.
func.func @given_gradient(%w: tensor<4xf32> {memopt.param}, %g: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'memopt.sgd_update' op reads a gradient that is an argument of @given_gradient: memopt-data-parallel averages gradients the step computes}}
  %n = memopt.sgd_update %w, %g {lr = 0.1 : f64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %n : tensor<4xf32>
}

// -----

// A graph without parameters is left alone.
func.func @no_params(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = memopt.relu %x : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// The collectives' verifiers.
func.func @bad_ranks(%g: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'memopt.all_reduce' op expected ranks >= 2, got -1}}
  %a = memopt.all_reduce %g {ranks = -1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

func.func @mixed_bucket(%g: tensor<4xf32>, %h: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error @+1 {{'memopt.all_reduce' op expected every operand of element type 'f32' (one packed bucket), operand 1 is 'tensor<4xf16>'}}
  %a:2 = memopt.all_reduce %g, %h {ranks = 2 : i64} : (tensor<4xf32>, tensor<4xf16>) -> (tensor<4xf32>, tensor<4xf16>)
  return %a#0 : tensor<4xf32>
}

// -----

func.func @bad_root(%p: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'memopt.broadcast' op expected root in [0, 2), got -3}}
  %b = memopt.broadcast %p {ranks = 2 : i64, root = -3 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}

// -----

func.func @scatter_owner(%g: tensor<4xf32>, %h: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'memopt.reduce_scatter' op expected owner 1 in [0, 2) or -1 (by rows), got 2}}
  %a = memopt.reduce_scatter %g, %h {owners = array<i64: 0, 2>, rank = 0 : i64, ranks = 2 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

func.func @scatter_results(%g: tensor<4xf32>, %h: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'memopt.reduce_scatter' op expected one result per operand rank 1 owns (1), got 2}}
  %a:2 = memopt.reduce_scatter %g, %h {owners = array<i64: 0, 1>, rank = 1 : i64, ranks = 2 : i64} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %a#0 : tensor<4xf32>
}

// -----

func.func @scatter_owners(%g: tensor<4xf32>, %h: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'memopt.reduce_scatter' op expected one owner per operand, got 1 for 2}}
  %a = memopt.reduce_scatter %g, %h {owners = array<i64: 0>, rank = 0 : i64, ranks = 2 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

func.func @scatter_rank(%g: tensor<4xf32>) {
  // expected-error @+1 {{'memopt.reduce_scatter' op expected rank in [0, 2), got 2}}
  memopt.reduce_scatter %g {owners = array<i64: 0>, rank = 2 : i64, ranks = 2 : i64} : (tensor<4xf32>) -> ()
  return
}

// -----

func.func @scatter_type(%g: tensor<4xf32>, %h: tensor<2xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'memopt.reduce_scatter' op expected result 0 of type 'tensor<2xf32>', got 'tensor<4xf32>'}}
  %a = memopt.reduce_scatter %g, %h {owners = array<i64: 0, 1>, rank = 1 : i64, ranks = 2 : i64} : (tensor<4xf32>, tensor<2xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

func.func @scatter_rows_few(%g: tensor<1x4xf32>) -> tensor<1x4xf32> {
  // expected-error @+1 {{'memopt.reduce_scatter' op expected operand 0, divided by rows (owner -1), to have at least 2 rows, got 'tensor<1x4xf32>'}}
  %a = memopt.reduce_scatter %g {owners = array<i64: -1>, rank = 0 : i64, ranks = 2 : i64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  return %a : tensor<1x4xf32>
}

// -----

func.func @scatter_rows_type(%g: tensor<5x4xf32>) -> tensor<3x4xf32> {
  // Rank 1 of 2 holds rows 3 and 4.
  // expected-error @+1 {{'memopt.reduce_scatter' op expected result 0 of type 'tensor<2x4xf32>', got 'tensor<3x4xf32>'}}
  %a = memopt.reduce_scatter %g {owners = array<i64: -1>, rank = 1 : i64, ranks = 2 : i64} : (tensor<5x4xf32>) -> tensor<3x4xf32>
  return %a : tensor<3x4xf32>
}

// -----

func.func @gather_rows(%r: tensor<3x4xf32>) -> tensor<5x4xf32> {
  // expected-error @+1 {{'memopt.all_gather' op expected rank 1's rows of 'tensor<5x4xf32>', 'tensor<2x4xf32>', got 'tensor<3x4xf32>'}}
  %a = memopt.all_gather %r {rank = 1 : i64, ranks = 2 : i64} : (tensor<3x4xf32>) -> tensor<5x4xf32>
  return %a : tensor<5x4xf32>
}

// -----

func.func @gather_few(%r: tensor<1xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'memopt.all_gather' op expected a result of at least 4 rows, got 'tensor<3xf32>'}}
  %a = memopt.all_gather %r {rank = 0 : i64, ranks = 4 : i64} : (tensor<1xf32>) -> tensor<3xf32>
  return %a : tensor<3xf32>
}

// -----

func.func @gather_rank(%r: tensor<2xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'memopt.all_gather' op expected rank in [0, 2), got -1}}
  %a = memopt.all_gather %r {rank = -1 : i64, ranks = 2 : i64} : (tensor<2xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

func.func @gather_into(%r: tensor<2xf32>, %old: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error @+1 {{'memopt.all_gather' op expected the storage operand of type 'tensor<4xf32>', got 'tensor<4xf16>'}}
  %a = memopt.all_gather %r, %old {rank = 0 : i64, ranks = 2 : i64} : (tensor<2xf32>, tensor<4xf16>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

// expected-error @+1 {{'memopt.sharded' must be a dictionary on a function with arrays 'arguments' and 'owners' of one size (and 'rows'), non-negative}}
func.func @sharded_rows(%p: tensor<4xf32>) -> tensor<4xf32> attributes {memopt.sharded = {arguments = array<i64>, owners = array<i64>, rows = array<i64: -2>}} {
  return %p : tensor<4xf32>
}

// -----

func.func @clip_of_sum(%g: tensor<4xf32>) -> tensor<f32> {
  // expected-error @+1 {{'memopt.clip_coefficient' op with square_sum = true expected one operand, the sum of squares as a 0-d f64 tensor}}
  %c = memopt.clip_coefficient %g {max_norm = 1.0 : f64, square_sum = true} : (tensor<4xf32>) -> tensor<f32>
  return %c : tensor<f32>
}

// -----

func.func @square_sum_type(%g: tensor<4xf32>) -> tensor<f32> {
  // expected-error @+1 {{'memopt.square_sum' op result #0 must be 0D tensor of 64-bit float values, but got 'tensor<f32>'}}
  %s = memopt.square_sum %g : (tensor<4xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
