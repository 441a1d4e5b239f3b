//===- Passes.td - memopt dialect passes -------------------*- tablegen -*-===//
//
// Passes over training graphs in the memopt dialect.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_DIALECT_MEMOPT_TRANSFORMS_PASSES_TD
#define MEMOPT_DIALECT_MEMOPT_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def MemOptSummary : Pass<"memopt-summary", "mlir::ModuleOp"> {
  let summary = "Print each function's parameters, state, data and op counts";
  let description = [{
    An analysis-only pass: for every function it prints how many parameter,
    state and data elements (and bytes) its arguments hold, whether it is a
    training graph (first result a scalar loss) and how many ops of each kind
    it contains. The IR is left unchanged.

    ```
    func @mlp_train
      parameters: 535818 elements in 6 tensors (2143272 bytes)
      state: 0 elements in 0 tensors (0 bytes)
      data: 2 arguments (200960 bytes)
      kind: training (loss + 0 more results)
      ops: 7
        memopt.cross_entropy: 1
        ...
    ```
  }];
  let options = [
    Option<"file", "file", "std::string", /*default=*/"\"-\"",
           "Where to write the summary ('-' for stdout)">
  ];
}

def MemOptAutodiff : Pass<"memopt-autodiff", "mlir::ModuleOp"> {
  let summary = "Build the backward pass and the optimizer update of training graphs";
  let description = [{
    Turns every training graph (a function whose first result is a scalar
    float loss and that has `memopt.param` arguments) into one training step:
    reverse-mode gradients of the loss with respect to every parameter,
    built from each op's gradient rule (`DifferentiableOpInterface`), summed
    where a value has several uses, followed by the optimizer update with
    PyTorch's exact semantics.

    The step's signature: the original arguments, then the optimizer state
    (`{memopt.optimizer_state}`: one momentum buffer per parameter for
    `momentum`; `exp_avg`, `exp_avg_sq` per parameter and a step count for
    `adam`). Results: the loss, the original further results, the updated
    parameters, then the updated optimizer state. Every result that is the
    next value of an argument carries `{memopt.updates = N}` (batch-norm
    running statistics included).

    `lr` defaults to 0.01 for `sgd` and `momentum` and to 0.001 for `adam`.
    `optimizer=none` applies no update and returns, after the original
    results, the gradient of every parameter (zeros for a parameter the loss
    does not depend on): what gradient checks and users inspecting gradients
    want.
  }];
  let options = [
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"sgd\"",
           "Optimizer: sgd, momentum, adam, or none (return gradients)">,
    Option<"lr", "lr", "double", /*default=*/"-1.0",
           "Learning rate (default: 0.01 for SGD, 0.001 for Adam)">,
    Option<"momentum", "momentum", "double", /*default=*/"0.9",
           "Momentum factor (optimizer=momentum)">,
    Option<"dampening", "dampening", "double", /*default=*/"0.0",
           "Dampening for momentum (optimizer=momentum)">,
    Option<"nesterov", "nesterov", "bool", /*default=*/"false",
           "Nesterov momentum (optimizer=momentum)">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"0.0",
           "L2 penalty added to the gradient, as PyTorch's weight_decay">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "Adam's beta1">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999", "Adam's beta2">,
    Option<"eps", "eps", "double", /*default=*/"1e-8", "Adam's epsilon">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let statistics = [
    Statistic<"numBackwardOps", "backward-ops", "Ops built by gradient rules">
  ];
}

def MemOptEvalMode : Pass<"memopt-eval-mode", "mlir::ModuleOp"> {
  let summary = "Rewrite training graphs for evaluation (PyTorch's eval() + no_grad)";
  let description = [{
    Batch norm normalises with the running statistics
    (`memopt.batch_norm_inference`) and no longer updates them: the results
    that were the new running statistics become the unchanged state.
    Dropout becomes the identity. Run it instead of `--memopt-autodiff` to
    evaluate a model: no backward pass, so the plan keeps no activations for
    one (the `no_grad` of this world).
  }];
  let statistics = [
    Statistic<"numBatchNorms", "batch-norms", "Batch norms switched to running statistics">,
    Statistic<"numDropouts", "dropouts", "Dropouts removed">
  ];
}

def MemOptMicrobatch : Pass<"memopt-microbatch", "mlir::ModuleOp"> {
  let summary = "Split the batch into micro-batches whose gradients accumulate";
  let description = [{
    Runs on a training graph before `--memopt-autodiff`: the forward graph is
    repeated `count` times on consecutive slices of every data argument
    along its leading (batch) dimension, and the loss becomes the mean of
    the micro-batch losses. Differentiating the result gives exactly the
    accumulated gradient of PyTorch's gradient-accumulation loop (the mean
    of the micro-batch means), and one optimizer update follows. Batch-norm
    running statistics are updated once per micro-batch, in order, as
    PyTorch's loop does. For graphs without batch norm or dropout the loss
    and the update equal the full-batch step up to floating-point rounding.
    A micro-batch's backward pass depends only on its own forward pass, so
    `--memopt-schedule` can run them one after the other, which is where the
    memory saving comes from.

    A batch that `count` does not divide is an error, and so is a graph that
    mixes the batch dimension into others in ways the copies cannot follow
    (a reshape or slice across the batch dimension).
  }];
  let options = [
    Option<"count", "count", "int64_t", /*default=*/"1",
           "Number of micro-batches">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

#endif // MEMOPT_DIALECT_MEMOPT_TRANSFORMS_PASSES_TD
