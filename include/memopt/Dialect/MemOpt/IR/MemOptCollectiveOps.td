//===- MemOptCollectiveOps.td - collectives across ranks ---*- tablegen -*-===//
//
// The ops --memopt-data-parallel places in a training step that runs on N
// ranks (processes, each with its own device and its own share of the
// batch). Value semantics like every memopt op: a collective's results are
// new tensors; the plan gives them, and the collective's staging buffers,
// their own memory.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_DIALECT_MEMOPT_IR_MEMOPTCOLLECTIVEOPS_TD
#define MEMOPT_DIALECT_MEMOPT_IR_MEMOPTCOLLECTIVEOPS_TD

def MemOpt_AllReduceOp
    : MemOpt_GradOp<"all_reduce", [MemOpt_FlopModel, MemOpt_WorkspaceModel]> {
  let summary = "the mean of a bucket of tensors over every rank";
  let description = [{
    Each result is the mean over the `ranks` ranks of the matching operand:
    the gradients of one bucket in data-parallel training (PyTorch
    DistributedDataParallel's all-reduce, divided by the world size). The
    operands share one element type; the kernel packs them into one buffer,
    so a bucket is one collective.

    The sum has a fixed order: element `i` is
    `((x_0[i] + x_1[i]) + ...) + x_{N-1}[i]` over the ranks in order,
    accumulated in f32 (f64 for f64 tensors), then divided by `ranks` and
    rounded once to the element type. With `sum = true` it is not divided:
    the sum over the ranks (ZeRO stage 2's overflow flags and partial
    squared norms, `memopt.square_sum`). Every rank gets the same bits, and a
    run repeated gets the same bits again. Its workspace is two packed
    copies of the bucket (what the rank sends, and the `ranks` slices it
    receives), each padded to a multiple of `ranks` elements; one tensor
    whose elements `ranks` divides is sent as it is, and the workspace is
    then the received slices alone.

    The compiler treats it as a function of its operands; it is correct
    because every rank runs the same plan, so the collectives are issued in
    the same order everywhere (the runtime checks the plans agree before
    the first step).

    ```mlir
    %g0, %g1 = memopt.all_reduce %dw, %db {ranks = 4 : i64}
        : (tensor<10x128xf32>, tensor<10xf32>)
        -> (tensor<10x128xf32>, tensor<10xf32>)
    ```
  }];
  let arguments = (ins Variadic<MemOpt_FloatTensor>:$values, I64Attr:$ranks,
                   DefaultValuedAttr<BoolAttr, "false">:$sum);
  let results = (outs Variadic<MemOpt_FloatTensor>:$results);
}

// Not Pure: a rank that owns none of the bucket's tensors has no results,
// yet must take part (it sends its gradients); nothing may erase it.
def MemOpt_ReduceScatterOp : MemOpt_Op<"reduce_scatter",
    [MemOpt_FlopModel, MemOpt_WorkspaceModel]> {
  let summary = "the mean of a bucket of tensors, each on the rank that owns it";
  let description = [{
    ZeRO stage 2's gradient reduction (`--memopt-data-parallel` with
    `zero=2`): operand `i` is owned by rank `owners[i]`, and this op, in
    rank `rank`'s step, returns the mean over the `ranks` ranks of the
    operands this rank owns, in operand order; no rank keeps the mean of a
    tensor it does not own. Element `i` of a result has exactly
    `memopt.all_reduce`'s bits (the same sum in rank order, in f32, f64
    for f64, divided once).

    An owner of `-1` divides the operand among every rank by rows
    (dimension 0; rank `r` owns `rows / ranks` rows, one more for the first
    `rows % ranks` ranks: a parameter too large to give one rank whole),
    and every rank's result for it is the mean of its rows.

    The kernel packs the bucket by owner and sends each rank the part it
    owns (an all-to-all of unequal parts); each rank receives `ranks`
    copies of its part and reduces them. Its workspace is the packed bucket
    and the received copies. Every rank issues it, also one that owns no
    operand (and so has no result): the op is not `Pure`, and the
    canonicalizer does not erase it.

    ```mlir
    // Rank 1 of 2 owns %db only.
    %gb = memopt.reduce_scatter %dw, %db
        {owners = array<i64: 0, 1>, rank = 1 : i64, ranks = 2 : i64}
        : (tensor<10x128xf32>, tensor<10xf32>) -> tensor<10xf32>
    // %de divided by rows: rank 1 of 4 owns rows 3 to 5.
    %ge = memopt.reduce_scatter %de
        {owners = array<i64: -1>, rank = 1 : i64, ranks = 4 : i64}
        : (tensor<10x128xf32>) -> tensor<3x128xf32>
    ```
  }];
  let arguments = (ins Variadic<MemOpt_FloatTensor>:$values, I64Attr:$ranks,
                   I64Attr:$rank, DenseI64ArrayAttr:$owners);
  let results = (outs Variadic<MemOpt_FloatTensor>:$results);
  let assemblyFormat =
      "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The operands whose mean (or rows of it) this rank receives, in
    /// operand order.
    llvm::SmallVector<mlir::Value> getOwnedValues();
    /// The owner that divides an operand among the ranks by rows.
    static constexpr int64_t kRows = -1;
  }];
}

def MemOpt_SquareSumOp : MemOpt_GradOp<"square_sum",
    [MemOpt_FlopModel, MemOpt_WorkspaceModel]> {
  let summary = "the sum of the squares of every element of its operands";
  let description = [{
    `memopt.clip_coefficient`'s sum of squares over the gradients a rank
    owns, accumulated in f64 in operand order: under ZeRO stage 2 no rank
    holds every gradient, so each sums its own, a `memopt.all_reduce` with
    `sum = true` adds the ranks' sums, and `memopt.clip_coefficient` with
    `square_sum = true` turns the total into the factor.

    ```mlir
    %s = memopt.square_sum %g0, %g1
        : (tensor<10x128xf32>, tensor<10xf32>) -> tensor<f64>
    ```
  }];
  let arguments = (ins Variadic<MemOpt_FloatTensor>:$values);
  let results = (outs 0DTensorOf<[F64]>:$result);
}

// Not Pure: under ZeRO stage 3 the root's result may be unread (its users
// read the argument), yet the others wait for what it sends.
def MemOpt_BroadcastOp : MemOpt_Op<"broadcast", [MemOpt_CostOpInterface]> {
  let summary = "one rank's tensor, on every rank";
  let description = [{
    The result is rank `root`'s operand on every one of the `ranks` ranks
    (the other ranks' operands are not read): under ZeRO's sharded optimizer
    state (`--memopt-data-parallel` with `zero=1`) the rank that owns a
    parameter updates it and sends the new value to the others, whose
    operand is then the old parameter, overwritten in place. The bits are
    the root's. Under ZeRO stage 3 (`zero=3`) only the owner holds a
    parameter: its broadcast reads it, the others' have no operand and
    receive it into their result, before each op that reads it.

    Like `memopt.all_reduce`, correct because every rank issues the same
    collectives in the same order; `--memopt-schedule` keeps the
    collectives in the order they appear.

    ```mlir
    %w1 = memopt.broadcast %w {ranks = 4 : i64, root = 2 : i64}
        : (tensor<10x128xf32>) -> tensor<10x128xf32>
    // On a rank that does not hold it:
    %w2 = memopt.broadcast {ranks = 4 : i64, root = 2 : i64}
        : () -> tensor<10x128xf32>
    ```
  }];
  let arguments = (ins Optional<MemOpt_FloatTensor>:$value, I64Attr:$ranks,
                   I64Attr:$root);
  let results = (outs MemOpt_FloatTensor:$result);
  let assemblyFormat =
      "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

// Not Pure, as the other collectives: every rank issues it.
def MemOpt_AllGatherOp : MemOpt_Op<"all_gather", [MemOpt_CostOpInterface]> {
  let summary = "a tensor divided by rows among the ranks, whole on every rank";
  let description = [{
    The operand is rank `rank`'s rows of the result (dimension 0; rank `r`
    of `ranks` holds `rows / ranks` rows, one more for the first
    `rows % ranks` ranks, in rank order): the result is every rank's rows
    put together, on every rank. ZeRO divides a parameter too large to give
    one rank whole by rows: under stages 1 and 2 each rank updates its rows
    and the new parameter is gathered; under stage 3 every reader of the
    parameter reads a gathered copy. The bits are the holders'.

    The optional second operand, of the result's type, is storage the
    result may take (`memopt.inplace = 1`; its values are not read): the
    old parameter, which the new one overwrites.

    ```mlir
    // Rank 1 of 4 holds rows 3 to 5 of 10.
    %w = memopt.all_gather %rows {rank = 1 : i64, ranks = 4 : i64}
        : (tensor<3x128xf32>) -> tensor<10x128xf32>
    %w1 = memopt.all_gather %rows, %w0 {memopt.inplace = 1 : i64,
                                        rank = 1 : i64, ranks = 4 : i64}
        : (tensor<3x128xf32>, tensor<10x128xf32>) -> tensor<10x128xf32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$value,
                   Optional<MemOpt_FloatTensor>:$into, I64Attr:$ranks,
                   I64Attr:$rank);
  let results = (outs MemOpt_FloatTensor:$result);
  let assemblyFormat =
      "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

#endif // MEMOPT_DIALECT_MEMOPT_IR_MEMOPTCOLLECTIVEOPS_TD
