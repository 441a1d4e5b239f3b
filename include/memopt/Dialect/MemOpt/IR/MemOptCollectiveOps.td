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
    rounded once to the element type. Every rank gets the same bits, and a
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
  let arguments = (ins Variadic<MemOpt_FloatTensor>:$values, I64Attr:$ranks);
  let results = (outs Variadic<MemOpt_FloatTensor>:$results);
}

def MemOpt_BroadcastOp : MemOpt_GradOp<"broadcast"> {
  let summary = "one rank's tensor, on every rank";
  let description = [{
    The result is rank `root`'s operand on every one of the `ranks` ranks
    (the other ranks' operands are not read): under ZeRO's sharded optimizer
    state (`--memopt-data-parallel` with `zero=1`) the rank that owns a
    parameter updates it and sends the new value to the others, whose
    operand is then the old parameter, overwritten in place. The bits are
    the root's.

    Like `memopt.all_reduce`, correct because every rank issues the same
    collectives in the same order; `--memopt-schedule` keeps the
    collectives in the order they appear.

    ```mlir
    %w1 = memopt.broadcast %w {ranks = 4 : i64, root = 2 : i64}
        : (tensor<10x128xf32>) -> tensor<10x128xf32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$value, I64Attr:$ranks,
                   I64Attr:$root);
  let results = (outs MemOpt_FloatTensor:$result);
}

#endif // MEMOPT_DIALECT_MEMOPT_IR_MEMOPTCOLLECTIVEOPS_TD
