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
    `adam` and `adamw`; for `adam8bit` and `adamw8bit`, each moment as ui8
    codes and f32 block maxima for parameters of 4096 elements or more
    (`memopt.adam8bit_update`) and as `adam` keeps it for smaller ones; for
    `adafactor`, the row and column factors of each parameter of rank 2 or
    more and the second moment of the others, then a step count). Results: the loss, the original further results, the updated
    parameters, then the updated optimizer state. Every result that is the
    next value of an argument carries `{memopt.updates = N}` (batch-norm
    running statistics included).

    `lr` defaults to 0.01 for `sgd` and `momentum` and to 0.001 for the
    others. `clip-norm=X` clips the gradients by their global 2-norm first,
    as `torch.nn.utils.clip_grad_norm_(params, X)` between `backward()` and
    `step()` (after `GradScaler.unscale_` under loss scaling): one
    `memopt.clip_coefficient` reads every gradient and each is multiplied by
    it, so every gradient is held until the backward pass ends and no update
    runs inside it. `adafactor` is `transformers.Adafactor` with a given `lr`
    (`relative_step=False`, no first moment, `clip-threshold`, `decay-rate`
    and `scale-parameter` as its `clip_threshold`, `decay_rate` and
    `scale_parameter`).
    `optimizer=none` applies no update and returns, after the original
    results, the gradient of every parameter (zeros for a parameter the loss
    does not depend on): what gradient checks and users inspecting gradients
    want.

    `function=NAME` differentiates that function only, and it is an error if
    it is not a training graph; other functions are left alone.
  }];
  let options = [
    Option<"optimizer", "optimizer", "::memopt::Optimizer",
           /*default=*/"::memopt::Optimizer::SGD",
           "Optimizer (none: return the gradients)">,
    Option<"lr", "lr", "std::string", /*default=*/"\"\"",
           "Learning rate, a finite number > 0 (default: 0.01 for SGD, "
           "0.001 for Adam)">,
    Option<"momentum", "momentum", "double", /*default=*/"0.9",
           "Momentum factor (optimizer=momentum)">,
    Option<"dampening", "dampening", "double", /*default=*/"0.0",
           "Dampening for momentum (optimizer=momentum)">,
    Option<"nesterov", "nesterov", "bool", /*default=*/"false",
           "Nesterov momentum (optimizer=momentum)">,
    Option<"weightDecay", "weight-decay", "std::string", /*default=*/"\"\"",
           "PyTorch's weight_decay, a finite number >= 0: the L2 penalty "
           "added to the gradient, or with adamw and adamw8bit the "
           "decoupled decay (default 0; 0.01 for those, as "
           "torch.optim.AdamW); adafactor's weight_decay">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "Adam's beta1">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999", "Adam's beta2">,
    Option<"eps", "eps", "double", /*default=*/"1e-8", "Adam's epsilon">,
    Option<"stateDtype", "state-dtype", "std::string", /*default=*/"\"param\"",
           "Element type of the momentum buffers and Adam's moments "
           "(momentum, adam, adamw): 'param' (the parameter's) or 'bf16'">,
    Option<"clipNorm", "clip-norm", "std::string", /*default=*/"\"\"",
           "Clip the gradients by their global 2-norm to at most this, a "
           "finite number > 0 (torch.nn.utils.clip_grad_norm_); default: "
           "no clipping">,
    Option<"clipThreshold", "clip-threshold", "double", /*default=*/"1.0",
           "Adafactor's clip_threshold: the update's RMS is clipped to it">,
    Option<"decayRate", "decay-rate", "double", /*default=*/"-0.8",
           "Adafactor's decay_rate (< 0): beta2 at step t is 1 - t^rate">,
    Option<"scaleParameter", "scale-parameter", "bool", /*default=*/"true",
           "Adafactor's scale_parameter: lr is relative to each "
           "parameter's RMS">,
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "Differentiate only this function (it must be a training graph); "
           "default: every training graph">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let statistics = [
    Statistic<"numBackwardOps", "backward-ops", "Ops built by gradient rules">
  ];
}

def MemOptCheckpoint : Pass<"memopt-checkpoint"> {
  let summary = "Recompute saved activations from checkpoints (sqrt, budget, optimal)";
  let description = [{
    Rematerialisation on the training step `--memopt-autodiff` built: forward
    values the backward pass would keep are dropped and recomputed, right
    before the backward needs them, from a few kept checkpoints. Recomputed
    ops are clones marked `memopt.recompute`; the memory report counts their
    FLOPs as `recompute_flops`. Clones are exact: the loss and the updated
    parameters stay bit-identical (dropout regenerates its mask from its
    seed; a batch-norm clone's running statistics are discarded, so they
    update once).

    The forward pass is cut into a chain of stages at its articulation
    points: op boundaries that a single forward value crosses (every op
    boundary of a chain, a ResNet's block outputs); where too few exist to
    split the chain in about sqrt(ops) places, at the narrowest boundaries
    that do (an unrolled LSTM's h and c).

    * `strategy=sqrt` (Chen et al. 2016): checkpoints split the chain into
      `segments` segments of equal saved bytes (default: the square root of
      the stage count); each segment but the last is recomputed once, whole,
      from its checkpoint. At most one extra forward pass of FLOPs.
    * `strategy=budget budget=<bytes>`: the least recomputation that fits
      the whole step (arguments, constants and the planned arena:
      parameters, data, optimizer state, activations, gradients) in the budget, e.g.
      `budget=512MiB`, `budget=2GiB`, `budget=1000000`. The candidates are
      a fixed family: none; the whole chain's binomial schedule at every
      slot count, from the memory floor (no slots but the step's inputs,
      where that recomputes at most 32,768 stages) to every cut held;
      binomial and sqrt schedules over a growing prefix of the chain; sqrt
      segments at every count. Each is checkpointed, scheduled and planned
      on a scratch copy and measured: a binary search over the slot count
      finds the most slots that fit, then the first other candidate with
      less recompute that fits, in order of recompute FLOPs, wins. A budget
      no candidate meets is an error naming the smallest budget that fits
      (accepted; one byte less refused). The family does not depend on the
      budget, so a smaller budget never gets a larger peak.
    * `strategy=optimal`: the least memory whose recomputation stays within
      one forward pass. On a chain of ops, the binomial (Revolve) schedule
      with the fewest checkpoint slots, by dynamic programming. On other
      graphs, an exact 0-1 model of which forward values to keep and which
      to recompute, solved with COIN-OR CBC (`solver=ilp` forces it,
      `solver=dp` the binomial schedule over the stage chain); when the
      solver reaches `time-limit` seconds, the better (measured) of its best
      solution so far and the binomial schedule is used, with a remark.
      Graphs of more than 2000 forward ops get the binomial schedule, with a
      remark.

    Run `--memopt-schedule` afterwards (the default pipeline does): it runs
    recomputation on demand, as late as the backward pass allows.

    Runs on a `builtin.module` (each memopt graph in it) or nested on each
    `func.func`, where the pass manager runs functions in parallel:
    `--pass-pipeline='builtin.module(func.func(memopt-checkpoint))'`. The result is the
    same either way; other functions and declarations are left alone.
  }];
  let options = [
    Option<"strategy", "strategy", "::memopt::CheckpointStrategy",
           /*default=*/"::memopt::CheckpointStrategy::Sqrt",
           "Which values to recompute",
           "::memopt::choices(::memopt::CheckpointStrategy::Sqrt, "
           "::memopt::CheckpointStrategy::Budget, "
           "::memopt::CheckpointStrategy::Optimal)">,
    Option<"budget", "budget", "std::string", /*default=*/"\"\"",
           "Byte budget of the whole step for strategy=budget (bytes, or "
           "with a unit: KiB, MiB, GiB, KB, MB, GB)">,
    Option<"segments", "segments", "int64_t", /*default=*/"0",
           "Segments for strategy=sqrt (0: the square root of the stage "
           "count)">,
    Option<"solver", "solver", "::memopt::CheckpointSolver",
           /*default=*/"::memopt::CheckpointSolver::Auto",
           "How strategy=optimal solves">,
    Option<"slots", "slots", "int64_t", /*default=*/"-1",
           "solver=dp: exactly this many checkpoint slots (Revolve's "
           "classic knob; fewer slots, more recomputation), instead of the "
           "fewest within one forward pass (-1, the default)">,
    Option<"timeLimit", "time-limit", "double", /*default=*/"2.0",
           "Seconds the exact solver may take before the best schedule so "
           "far is used">,
    Option<"alignment", "alignment", "int64_t", /*default=*/"64",
           "Arena alignment candidates are measured with (as "
           "--memopt-plan-memory's)">,
    Option<"measureInPlace", "measure-inplace", "bool", /*default=*/"false",
           "Measure the candidates with --memopt-inplace applied, as a "
           "pipeline that runs it later does">,
    Option<"measurePartition", "measure-partition", "bool",
           /*default=*/"false",
           "Measure the candidates with the argument copies (f16 casts of "
           "weights) recomputed next to their backward use, as "
           "--memopt-partition after it does; under dynamic loss scaling "
           "also with weight gradients rechecked as it will: without limit "
           "under a budget, else within step-recompute">,
    Option<"stepRecompute", "step-recompute", "double", /*default=*/"0",
           "With measure-partition: the --memopt-partition step-recompute "
           "the candidates are measured with">
  ];
  let statistics = [
    Statistic<"numStages", "stages", "Stages of the forward chains">,
    Statistic<"numRecomputed", "recomputed-ops", "Ops cloned for recomputation">,
    Statistic<"numCandidates", "candidates", "Schedules measured for strategy=budget">
  ];
}

def MemOptPartition : Pass<"memopt-partition"> {
  let summary = "Choose what the backward pass keeps by a minimum cut; recompute cheap values";
  let description = [{
    Decides which forward values cross into the backward pass. Left alone,
    every forward value a gradient rule reads is kept until its last
    backward use; many are cheap to compute again from values kept anyway
    (the f16 copy of each weight under mixed precision, a cast, an
    activation, a reshape). As torch.compile's min-cut partitioner, the pass
    keeps the set of values of least total bytes from which everything the
    backward pass reads can be recomputed by cheap ops, and clones those ops
    into the backward pass (marked `memopt.recompute`, so
    `--memopt-schedule` runs each just before its first use).

    The flow network has, per forward value, an edge of its bytes (keeping
    it); arguments and constants cost nothing to keep; ops that are not
    cheap are never recomputed; each data dependence and each value the
    backward pass reads is an infinite edge. Cheap ops: memopt ops with one
    result and no memory effects that do at most two FLOPs per element of
    their largest tensor (casts, element-wise ops and activations, reshape,
    transpose, slice, concat, embedding lookups). The minimum cut is
    Boost.Graph's push-relabel maximum flow.

    Recomputed FLOPs stay within `max-recompute` (a fraction of the forward
    pass's FLOPs, default 0.05): while the cut exceeds it, the most
    expensive recomputed op is kept instead and the cut solved again.

    A smaller saved set does not always lower the step's peak (a recomputed
    value and its input may both be live in the backward pass). The pass
    therefore measures three candidates as the step will run (on a scratch
    copy: the clones, `--memopt-inplace` when `measure-inplace=true`,
    `--memopt-schedule`, `--memopt-plan-memory`): the cut over every cheap
    op, the cut over copies of arguments only (casts of parameters and
    inputs), and no recomputation. It applies the one of least peak, then
    fewest bytes kept, then fewest FLOPs recomputed: the peak never rises.

    Under dynamic loss scaling every parameter gradient is held until
    `memopt.found_inf` has read them all. A weight gradient at least four
    times the bytes its op reads (a linear layer's at a small batch) can
    instead be checked by a `memopt.found_inf` of its own when computed,
    freed, and computed again (`memopt.recompute`) right before its update;
    the flags are added (nonzero when any is). The pass measures that too,
    largest savings first within what is left of `max-recompute`, and
    applies it when the peak falls. Two things ask for more:
    `step-recompute=F` lets rechecks take the step's recomputed FLOPs,
    checkpointing's included, up to F forward passes, when the step gets
    smaller (`--memopt-pipeline` sets 1 with `checkpoint=optimal`, whose
    contract is the least memory within one forward pass of
    recomputation); a `budget` the best candidate does not fit rechecks the
    fewest gradients that make the step fit, whatever they cost (at most
    the weight gradients' own FLOPs once more), or all of them when even
    that does not fit. The
    step computes the same bits, as recomputed ops are pure and
    deterministic. It runs after `--memopt-autodiff` (and after
    `--memopt-checkpoint`, whose clones it treats as backward ops), before
    `--memopt-inplace`. With `remarks=true` each recomputed op gets a remark
    with its bytes and FLOPs.

    Runs on a `builtin.module` (each memopt graph in it) or nested on each
    `func.func`, where the pass manager runs functions in parallel:
    `--pass-pipeline='builtin.module(func.func(memopt-partition))'`. The
    result is the same either way; other functions and declarations are left
    alone.
  }];
  let options = [
    Option<"maxRecompute", "max-recompute", "double", /*default=*/"0.05",
           "Most recomputed FLOPs, as a fraction of the forward pass's">,
    Option<"stepRecompute", "step-recompute", "double", /*default=*/"0",
           "Under dynamic loss scaling, rechecked gradients may take the "
           "step's recomputed FLOPs (checkpointing's included) up to this "
           "fraction of the forward pass's, beyond max-recompute, when "
           "that makes the step smaller (0: max-recompute alone)">,
    Option<"measureInPlace", "measure-inplace", "bool", /*default=*/"false",
           "Measure the candidates with --memopt-inplace applied, as a "
           "pipeline that runs it next does">,
    Option<"budget", "budget", "std::string", /*default=*/"\"\"",
           "Never choose a candidate whose step, as the runtime allocates "
           "it, needs more than this many bytes (the pipeline's budget); "
           "the saved set as it is always stays a candidate">,
    Option<"alignment", "alignment", "int64_t", /*default=*/"64",
           "Arena alignment candidates are measured with (as "
           "--memopt-plan-memory's)">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark for every recomputed op">
  ];
  let statistics = [
    Statistic<"numRecomputed", "recomputed", "Ops cloned into the backward pass">,
    Statistic<"numRecheckedGradients", "rechecked-gradients",
              "Gradients checked when computed and computed again for their update">
  ];
}

def MemOptInPlace : Pass<"memopt-inplace"> {
  let summary = "Run ops in place over operands that are dead afterwards";
  let description = [{
    `ReLU(inplace=True)`, decided from the whole training step. An op whose
    kernel can write its result over an operand (`InPlaceOpInterface`:
    element-wise activations and their backward ops, `add`, `sub`, `mul` and
    `div` over a same-shaped operand, `dropout`, `batch_norm_inference`) is
    marked `memopt.inplace = N` when operand N's buffer is dead once the op
    has read it:

    * the buffer is not a function argument (parameters, state and inputs
      are never overwritten) and not a constant;
    * no other op reads the buffer (through the operand, a view of it or an
      earlier in-place result in it) later in the block — the backward pass
      and the function's return included.

    So a ReLU after a convolution or a batch norm runs in place (neither's
    backward reads its output), while a value a residual `add` reads later,
    a value the backward pass reads, or a value with two later readers is
    left alone. The memory analysis, the report, the schedule (which keeps
    every other reader of the buffer before the in-place op), the planner and
    the lowering all honour the aliasing. Decisions follow the block order,
    so run the pass after `--memopt-autodiff` and `--memopt-checkpoint` and
    before `--memopt-schedule`.

    `abn=true` first applies InPlace-ABN (Rota Bulò et al. 2018) to the
    training step: a `batch_norm` whose output only a `leaky_relu` (slope >
    0) or `elu` reads, together with their backward ops, becomes
    `memopt.batch_norm_act` + `memopt.batch_norm_act_backward`, which rebuild
    the normalised input from the output (invert the activation, then the
    affine transform), so the batch-norm input is never kept and the fused
    output may overwrite it. A batch norm followed by `relu` (or a slope of
    0) is not fused, with a remark: ReLU maps every negative input to 0, so
    its input cannot be rebuilt from its output.

    `remarks=true` explains every decision as a remark on the op:

    ```
    model.mlir:7:8: remark: in place over operand 0: its buffer is dead afterwards
    model.mlir:9:8: remark: not in place: operand 0: its buffer is read later by 'memopt.add' at model.mlir:12:8
    ```

    Runs on a `builtin.module` (each memopt graph in it) or nested on each
    `func.func`, where the pass manager runs functions in parallel:
    `--pass-pipeline='builtin.module(func.func(memopt-inplace))'`. The result is the
    same either way; other functions and declarations are left alone.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark for every decision: in place, or why not">,
    Option<"abn", "abn", "bool", /*default=*/"false",
           "First fuse batch norm + leaky ReLU/ELU and their backward ops "
           "into InPlace-ABN (memopt.batch_norm_act), whose backward "
           "rebuilds what it needs from the output">
  ];
  let statistics = [
    Statistic<"numInPlace", "in-place", "Ops marked memopt.inplace">,
    Statistic<"numFused", "abn-fused", "Batch norms fused into InPlace-ABN">
  ];
}

def MemOptSchedule : Pass<"memopt-schedule"> {
  let summary = "Memory-aware op order and a memopt.free after every last use";
  let description = [{
    Reorders the ops of each function (respecting every data dependence)
    with a greedy list scheduler that, among the ops ready to run, picks the
    one that frees the most bytes net of what it allocates (ties: original
    order), then inserts `memopt.free` after the last use of every buffer
    that is neither an argument nor returned. Reshape results share their
    operand's buffer, so a buffer dies only with its last alias.

    Optimizer updates run as soon as their gradient is final (the
    optimizer-in-backward trick): the gradient dies at once, so gradient
    memory falls from the size of all parameters to a few of them. Updates
    are ordinary data dependences, so anything global a step waits on (a
    gradient norm, a finite-check) orders them correctly without special
    cases.

    Recomputation (ops marked `memopt.recompute` by `--memopt-checkpoint`)
    runs on demand: such an op is scheduled only when nothing else can run,
    the earliest in the block first, so a recomputed value lives only from
    just before the backward op that needs it.

    The transformed step computes bit-identical results: only the order
    changes.

    It runs on a `builtin.module` (every memopt graph in it) or nested on
    each `func.func`, where the pass manager schedules functions in parallel:
    `--pass-pipeline='builtin.module(func.func(memopt-schedule))'`.
    Functions without memopt ops and declarations are left alone; a memopt
    graph that mixes in ops with regions, calls or other dialects' ops is
    refused with an error at that op.
  }];
  let statistics = [
    Statistic<"numFrees", "frees", "memopt.free ops inserted">,
    Statistic<"numMoved", "moved", "Ops whose position changed">
  ];
}

def MemOptPlanMemory : Pass<"memopt-plan-memory"> {
  let summary = "Static arena: an offset for every buffer";
  let description = [{
    Gives every buffer an op creates (results owning their storage; views and
    in-place results share their operand's) a byte offset in one arena, such
    that buffers live at the same time never overlap. Lifetimes come from the
    memory analysis in the current op order (run `--memopt-schedule` first to
    free at last use). Several packing heuristics run, as in XLA's heap
    simulator (greedy by size with best fit, by lifetime start, by size ×
    lifetime, by longest lifetime) and the smallest arena wins; an
    independent checker verifies every plan.

    An op with a workspace (WorkspaceOpInterface: convolutions, the losses'
    and layer norm's multi-block reductions) gets a buffer of that many
    bytes that lives during the op alone.

    Results: `memopt.offsets` on each op (one per result, -1 for a result
    without its own buffer), `memopt.workspace_offset` on each op with a
    workspace and, on the function, `memopt.arena_bytes` and
    `memopt.arena_lower_bound` (the max-live bytes no plan can go below).
    `--convert-memopt-to-memrt` places buffers at these offsets.

    Runs on a `builtin.module` (each memopt graph in it) or nested on each
    `func.func`, where the pass manager runs functions in parallel:
    `--pass-pipeline='builtin.module(func.func(memopt-plan-memory))'`. The result is the
    same either way; other functions and declarations are left alone.

    With `budget=<bytes>` the pass is also the budget's last check: a step
    that needs more than the budget, counted as the runtime allocates it
    (the arena, every argument and every constant, each at max(64,
    alignment) bytes), is refused with the bytes it needs, so a budget is
    met or refused whatever else the pipeline did (`--memopt-checkpoint`
    with `strategy=budget` is what makes a step smaller to fit one).
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"64",
           "Byte alignment of every offset (a power of two, at most 4096)">,
    Option<"budget", "budget", "std::string", /*default=*/"\"\"",
           "Refuse a step needing more than this many bytes as the runtime "
           "allocates it (e.g. 512MiB); no limit by default">
  ];
  let statistics = [
    Statistic<"numBuffers", "buffers", "Buffers placed">
  ];
}

def MemOptWorkspaceLimit : Pass<"memopt-workspace-limit"> {
  let summary = "Cap the workspace every kernel may reserve";
  let description = [{
    Sets `memopt.workspace_limit` on every function: the most scratch bytes
    any one op's kernel reserves in the arena (WorkspaceOpInterface). Below
    an op's full need its kernel takes a path that needs less: convolutions
    build their im2col matrix a chunk of output rows at a time (at least one
    row, which is kept even above the cap) and cuDNN picks among the
    algorithms that fit; the losses and layer norm's backward reduce in
    fewer blocks. The memory analysis, the report, checkpointing's budgets
    and the planner all see the capped sizes. Run it before any of them
    (`--memopt-pipeline` does, with `workspace-limit=`).

    ```sh
    memopt-opt step.mlir --memopt-workspace-limit=bytes=4MiB --memopt-plan-memory
    ```

    Runs on a `builtin.module` (each memopt graph in it) or nested on each
    `func.func`, where the pass manager runs functions in parallel:
    `--pass-pipeline='builtin.module(func.func(memopt-workspace-limit))'`. The result is the
    same either way; other functions and declarations are left alone.
  }];
  let options = [
    Option<"bytes", "bytes", "std::string", /*default=*/"\"\"",
           "The cap, e.g. 4MiB, 65536 or 0 (required)">
  ];
}

def MemOptConvWorkspace : Pass<"memopt-conv-workspace"> {
  let summary = "Give every convolution a larger workspace for faster algorithms";
  let description = [{
    Sets `memopt.conv_workspace` on every function: each convolution
    (forward and both gradients) reserves at least these bytes of workspace
    in the arena, instead of the one image's im2col matrix it reserves by
    default, so that cuDNN may choose among its faster algorithms, most of
    which want hundreds of MiB at ImageNet sizes (MEMOPT_CUDNN_LOG=1 shows
    what each convolution chose and what the fastest would want). The
    workspace lives only while its op runs, and the memory analysis, the
    report, checkpointing's budgets and the planner all count it, so the
    plan stays the measured peak. `--memopt-workspace-limit` still caps it.
    Run it before any of those (`--memopt-pipeline` does, with
    `conv-workspace=`).

    ```sh
    memopt-opt step.mlir --memopt-conv-workspace=bytes=512MiB --memopt-plan-memory
    ```

    Runs on a `builtin.module` (each memopt graph in it) or nested on each
    `func.func`. Other functions and declarations are left alone.
  }];
  let options = [
    Option<"bytes", "bytes", "std::string", /*default=*/"\"\"",
           "The bytes each convolution reserves at least, e.g. 512MiB (required)">
  ];
}

def MemOptEvalMode : Pass<"memopt-eval-mode", "mlir::ModuleOp"> {
  let summary = "Rewrite training graphs for evaluation (PyTorch's eval() + no_grad)";
  let description = [{
    Batch norm normalises with the running statistics
    (`memopt.batch_norm_inference`) and no longer updates them: the results
    that were the new running statistics become the unchanged state. A fused
    `memopt.batch_norm_act` becomes `memopt.batch_norm_inference` followed
    by its activation.
    Dropout becomes the identity, and `memopt.attention` loses its
    dropout (`p = 0`). Run it instead of `--memopt-autodiff` to
    evaluate a model: no backward pass, so the plan keeps no activations for
    one (the `no_grad` of this world).
  }];
  let statistics = [
    Statistic<"numBatchNorms", "batch-norms", "Batch norms switched to running statistics">,
    Statistic<"numDropouts", "dropouts", "Dropouts removed">
  ];
}

def MemOptMicrobatch : Pass<"memopt-microbatch"> {
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

    Runs on a `builtin.module` (each memopt graph in it) or nested on each
    `func.func`, where the pass manager runs functions in parallel:
    `--pass-pipeline='builtin.module(func.func(memopt-microbatch))'`. The result is the
    same either way; other functions and declarations are left alone.
  }];
  let options = [
    Option<"count", "count", "int64_t", /*default=*/"1",
           "Number of micro-batches">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def MemOptLora : Pass<"memopt-lora", "mlir::ModuleOp"> {
  let summary = "Freeze chosen weights and train low-rank adapters beside "
                "them (LoRA)";
  let description = [{
    Hu et al.'s LoRA, on the forward graph (before `--memopt-autodiff`):
    every parameter whose name matches `targets` (the whole name; a
    parameter is named by its `loc("name")`, as imported graphs and
    memopt-run name them, else by its SSA name in the source file it was
    parsed from, `%h_0_attn_c_attn_w`, else `arg<N>`) takes adapters: each
    op it is the weight of gains a trainable low-rank update. Every other
    parameter of that function is frozen (`memopt.frozen`: no gradient, no
    optimizer state) unless `trainable` names it, as PEFT trains only the
    adapters (and its `modules_to_save`):

    ```mlir
    %y = memopt.linear %x, %w, %b : ...
    // becomes
    %y  = memopt.linear %x, %w, %b : ...
    %xa = memopt.linear %x, %w.lora_A : ...      // rank × in
    %d  = memopt.linear %xa, %w.lora_B : ...     // out × rank
    %y2 = memopt.add %y, memopt.mul(%d, alpha / rank)
    ```

    `A` starts as `torch.nn.Linear` initialises a weight (PEFT's
    `kaiming_uniform_(a=√5)`), `B` at zero (`memopt.initial_value = 0`), so
    the adapted graph computes what the original did until it trains. The
    adapters are parameters named `<weight>.lora_A` and `<weight>.lora_B`
    (what `memopt-run --save-weights` writes). A matmul weight (`x·W`, W
    in × out) takes `(x·A)·B` with A in × rank and B rank × out;
    `transpose_b` takes the linear form. Targets read by anything but a
    linear's weight or a matmul's right operand, or not 2-D, are refused
    with an error at the use; so are targets that match no parameter.
  }];
  let options = [
    Option<"rank", "rank", "int64_t", /*default=*/"8",
           "Rank r of the adapters (>= 1)">,
    Option<"alpha", "alpha", "double", /*default=*/"16.0",
           "LoRA's alpha: the update is scaled by alpha / rank">,
    Option<"targets", "targets", "std::string", /*default=*/"\"\"",
           "Regular expression over parameter names (the whole name): the "
           "weights to freeze and adapt (required)">,
    Option<"trainable", "trainable", "std::string", /*default=*/"\"\"",
           "Regular expression over parameter names: parameters besides "
           "the adapters that keep training (default: none)">,
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "Adapt only this function; default: every function">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def MemOptFuseAttention : Pass<"memopt-fuse-attention"> {
  let summary = "Fuse matmul → scale → softmax → dropout → matmul chains "
                "into memory-efficient attention";
  let description = [{
    Runs on the forward graph, before `--memopt-autodiff` (and before
    `--memopt-mixed-precision`, which it lets treat attention as one
    matmul-class op). Every chain

    ```mlir
    %s = memopt.matmul %q, %k {transpose_b = true}   // or %q, transpose(%k)
    %t = memopt.mul %s, %c                           // optional: or %c·%s, %s / %c
    %u = memopt.add %t, %mask                        // optional: a causal mask, a key bias
    %p = memopt.softmax %u {axis = -1, causal = ...}
    %d = memopt.dropout %p {p, seed}                 // optional
    %o = memopt.matmul %d, %v
    ```

    with `%c` a constant splat (the 1/√d scale; it may instead multiply
    `%q` or `%k` beforehand, as a `memopt.mul` by a constant read only
    there), `%mask` a constant causal mask (0 on and below the diagonal,
    −inf or at most −1e30 above it, in every leading slice, without
    broadcasting the scores to a larger shape: how both of PyTorch's
    exporters write SDPA's `is_causal`, `masked_fill(~tril, -inf)` and an
    additive mask buffer; the attention is then causal, the hidden keys'
    probabilities exactly 0 both ways for finite scores) or a key bias
    (`…×1×1×Sk` from the data, not from a parameter: BERT's key-padding
    mask, then the attention's `key_bias`), or both, and every
    intermediate read only by the next op becomes

    ```mlir
    %o, %lse = memopt.attention %q, %k, %v {causal, scale, p, seed}
    ```

    whose backward pass recomputes the probabilities from the saved
    per-row log-sum-exp instead of keeping the `…×Sq×Sk` probabilities and
    their dropout (FlashAttention). Where q, k and v come from does not
    matter: one fused projection sliced into heads or three separate ones.
    The fused op computes what the chain computes: the same dropout mask,
    the softmax in the same precision; products are rounded in another
    order, so results agree to rounding (1e-5 relative in f32), not bit for
    bit.

    Left alone, with a reason under `remarks=true`: a softmax on a matmul
    or feeding one whose chain differs — an intermediate read elsewhere
    (after autodiff the backward pass reads them), a scale that is not a
    constant splat, an additive mask or bias on the scores other than a
    constant causal mask or a key bias (a bias computed from a parameter, a
    constant −10000, which does not hide a key exactly), a softmax not
    over the last axis, a transposed first operand or `v`, or q, k and v
    whose batch dimensions broadcast instead of matching.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark for every fused chain and for every attention-like "
           "chain that is not fused, with the reason">
  ];
  let statistics = [
    Statistic<"numFused", "fused", "Attention chains fused">,
    Statistic<"numNearMisses", "near-misses",
              "Attention-like chains left unfused">
  ];
}

def MemOptFuseLinearCrossEntropy : Pass<"memopt-fuse-linear-cross-entropy"> {
  let summary = "Fuse a large-vocabulary linear → cross_entropy into the "
                "chunked memopt.linear_cross_entropy";
  let description = [{
    Runs on the forward graph, before `--memopt-autodiff` (and before
    `--memopt-mixed-precision`). A language model's head and loss,

    ```mlir
    %l = memopt.linear %h, %w : tensor<4x1024x768xf32>, tensor<50257x768xf32>
    %r = memopt.reshape %l : tensor<4x1024x50257xf32> -> tensor<4096x50257xf32>
    %loss = memopt.cross_entropy %r, %labels : tensor<4096x50257xf32>, tensor<4096xi64>
    ```

    (the linear layer with or without a bias, or `memopt.matmul %h, %w
    {transpose_b = true}` with a 2-D weight, or a matmul by
    `memopt.transpose %w` of a `V×H` weight as the ONNX exporters write a
    linear layer, either matmul with or without an `add` of a bias over the
    classes; the reshape only when the logits have leading dimensions to
    merge) becomes

    ```mlir
    %h2 = memopt.reshape %h : tensor<4x1024x768xf32> -> tensor<4096x768xf32>
    %loss, %lse = memopt.linear_cross_entropy %h2, %w, %labels {chunk = 80 : i64}
    ```

    (a bias becomes the fused op's last operand, `bias %b`) when the
    vocabulary has at least `min-classes` classes: the step then
    never holds the `N×V` logits nor their gradient, only `chunk` rows at a
    time (by default the rows whose f32 logits fill 16 MiB). The loss and
    gradients agree with the unfused ops' to rounding.

    Left alone, with a reason under `remarks=true`: logits read by anything
    but the loss, biased logits read by more than the loss, a weight
    stored `H×V` (matmul without `transpose_b`, not a transpose of a `V×H`
    weight), a batched weight, a reshape that mixes the vocabulary
    into the rows, and vocabularies below `min-classes`.
  }];
  let options = [
    Option<"minClasses", "min-classes", "int64_t", /*default=*/"4096",
           "Fuse only heads with at least this many classes">,
    Option<"chunk", "chunk", "int64_t", /*default=*/"0",
           "Rows per chunk (0: the rows whose f32 logits fill 16 MiB)">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark for every fused loss and for every linear → "
           "cross_entropy left alone, with the reason">
  ];
  let statistics = [
    Statistic<"numFused", "fused", "Linear + cross-entropy pairs fused">,
    Statistic<"numNearMisses", "near-misses",
              "Linear + cross-entropy pairs left unfused">
  ];
}

def MemOptFuseLossGradient : Pass<"memopt-fuse-loss-gradient"> {
  let summary = "Compute the LM-head loss and its gradient in one op "
                "(memopt.linear_cross_entropy_with_grad)";
  let description = [{
    Runs on a training step, after `--memopt-autodiff` (in the pipeline
    after checkpointing and `--memopt-partition`, before the schedule). A
    chunked LM-head loss and its backward op,

    ```mlir
    %loss, %lse = memopt.linear_cross_entropy %h, %w, %labels {chunk = 1024 : i64} : ...
    ...
    %dh, %dw = memopt.linear_cross_entropy_backward %one, %h, %w, %labels, %lse {chunk = 1024 : i64} : ...
    ```

    become, in the backward op's place,

    ```mlir
    %loss, %dh, %dw = memopt.linear_cross_entropy_with_grad %one, %h, %w, %labels {chunk = 1024 : i64} : ...
    ```

    which computes each chunk's logits once instead of twice (one of the
    head's four GEMMs and one pass of exponentials fewer). The loss and
    gradients are the pair's, bit for bit on the CPU backend. No tensor
    lives longer: the backward op read `hidden`, `weight` and `labels`
    anyway, the gradients are born where they were, and the `N`
    log-sum-exps are no longer stored.

    Left alone, with a reason under `remarks=true`: a backward op whose
    log-sum-exps another op also reads or that takes other operands than
    its forward op, and a loss read before the backward op (an op of the
    forward pass on the loss, say).
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark for every fused pair and every backward op left "
           "alone, with the reason">
  ];
  let statistics = [
    Statistic<"numFused", "fused", "Loss and gradient pairs fused">,
    Statistic<"numNearMisses", "near-misses",
              "linear_cross_entropy_backward ops left unfused">
  ];
}

def MemOptDataParallel : Pass<"memopt-data-parallel"> {
  let summary = "Make a training step one rank's step of data-parallel "
                "training: gradients averaged across ranks in buckets";
  let description = [{
    Runs on a training step, right after `--memopt-autodiff`. The graph's
    batch is the per-rank batch (as with PyTorch DistributedDataParallel,
    each of the `ranks` processes runs the step on its own share of the
    global batch). Every parameter gradient is replaced, for everything that
    reads it on the way to its update (the update itself, the loss-scale
    overflow check, clipping's norm, unscaling), by its mean over the
    ranks: `memopt.all_reduce` ops over buckets of gradients of at most
    `bucket` bytes each (one element type per bucket), in the order the
    gradients become final, each bucket's collective placed right after its
    last gradient. A gradient that the backward pass also reads (the
    gradient of a parameter added to an activation of its own shape) stays
    local there. Every rank then applies the same update to the same
    parameters, so they stay equal without being exchanged.

    `zero=0`: every rank keeps all optimizer state. `zero=1` (ZeRO stage 1,
    as PyTorch's ZeroRedundancyOptimizer partitions it): each parameter is
    owned by one rank (the largest first, each to the rank with the fewest
    parameter bytes so far); rank `rank`'s step keeps the optimizer state
    and the update of the parameters it owns only, and every new parameter
    is sent from its owner to all ranks (`memopt.broadcast`, in argument
    order, in place). The steps of the ranks then differ, so `rank` names
    the one to build. The parameters are bit-identical to `zero=0`'s.
    `zero=2` (ZeRO stage 2) also shards the averaged gradients: each bucket
    is a `memopt.reduce_scatter` whose results are the means of the
    gradients this rank owns only; what the step computed for other ranks'
    updates is removed; the overflow check and clipping's squared norm are
    this rank's part, summed over the ranks (`memopt.all_reduce` with
    `sum = true`, `memopt.square_sum`, `memopt.clip_coefficient` with
    `square_sum = true`). The averages are bit-identical to `zero=0`'s; the
    clipping factor may differ in its last bit (the squared norm is added in
    another order). `zero=3` (ZeRO stage 3) also shards the parameters:
    other ranks' parameters are no longer arguments (the function's
    `memopt.sharded` attribute records which went to which owner), every op
    that reads a parameter reads a copy received from its owner right
    before it (`memopt.broadcast`, without an operand where the rank does
    not hold it), and the new parameters stay with their owners.

    Under ZeRO a parameter too large to balance the ranks whole (by default,
    `divide=auto`, one larger than half of a rank's even share of all
    parameter bytes; `divide=<bytes>`: at least that large; `all`; `none`)
    is divided among all ranks by rows (dimension 0, the first
    `rows % ranks` ranks one row more) if its update works element by
    element (SGD, momentum, Adam) and it has a row per rank: each rank
    updates its rows from its rows of the gradient (the reduce-scatter's
    owner `-1`; under stage 1 taken from the average) and of the optimizer
    state (those arguments become its rows). Under stages 1 and 2 the new
    parameter is gathered over the old (`memopt.all_gather`, in place);
    under stage 3 the argument is the rank's rows, every reader reads a
    gathered copy, and `memopt.sharded`'s `rows` lists it. `ranks=1` leaves the step unchanged. A step whose gradients do
    not reach an optimizer update (optimizer=none), that already holds
    collectives, or where a gradient is an argument is refused with a
    located error.
  }];
  let options = [
    Option<"ranks", "ranks", "int64_t", /*default=*/"1",
           "Number of ranks (processes) the step is for">,
    Option<"zero", "zero", "int64_t", /*default=*/"0",
           "ZeRO stage: 0 replicates optimizer state on every rank, 1 "
           "shards it by parameter, 2 also the averaged gradients, 3 also "
           "the parameters">,
    Option<"rank", "rank", "int64_t", /*default=*/"-1",
           "With zero >= 1: the rank whose step to build, in [0, ranks)">,
    Option<"bucket", "bucket", "std::string", /*default=*/"\"25MiB\"",
           "Most bytes of gradients one all-reduce carries (PyTorch DDP's "
           "bucket_cap_mb), e.g. 25MiB; 0 puts each gradient in its own">,
    Option<"divide", "divide", "std::string", /*default=*/"\"auto\"",
           "With zero >= 1: the parameters divided among the ranks by rows "
           "instead of owned whole: auto (those larger than half a rank's "
           "even share), all, none, or a byte size (those at least that "
           "large)">
  ];
  let statistics = [
    Statistic<"numBuckets", "buckets", "memopt.all_reduce ops placed">,
    Statistic<"numGradients", "gradients", "Gradients averaged across ranks">,
    Statistic<"numOwned", "owned", "Parameters this rank updates (zero>=1)">,
    Statistic<"numDivided", "divided",
              "Parameters divided among the ranks by rows (zero>=1)">,
    Statistic<"numGathers", "gathers",
              "Parameter copies received before their readers (zero=3)">
  ];
}

def MemOptMixedPrecision : Pass<"memopt-mixed-precision"> {
  let summary = "FP16 (or BF16) compute with FP32 master weights and loss "
                "scaling";
  let description = [{
    Autocast as a graph rewrite. Runs on the forward graph, before
    `--memopt-autodiff`, which then derives a backward pass in the same
    precisions (the gradient of a cast is the cast back). Each op's class
    comes from `PrecisionOpInterface`, after PyTorch's autocast lists:

    * **allow** (convolution, linear, matmul): every float operand, weights
      included, is cast to `precision`; the kernels accumulate in f32.
    * **deny** (softmax, layer norm, losses, global average pooling): low
      precision operands are cast to f32, so the loss is f32.
    * **follow** (everything else): the widest type of the inputs. Batch
      norm follows with `x` only: its scale, shift and running statistics
      stay f32.

    Activations between allow ops therefore live, and are saved for
    backward, in the low precision, while parameters (the master weights),
    the gradients handed to the optimizer and the optimizer state stay f32.
    One cast is made per value and type, casts of constants fold to
    constants, and the function's signature is unchanged.

    Training graphs get loss scaling (`memopt.loss_scale` on the function,
    consumed by `--memopt-autodiff`): `loss-scale=dynamic` (the default for
    fp16) follows `torch.cuda.amp.GradScaler`: the backward pass starts from
    the scale, `memopt.found_inf` checks the scaled gradients, they are
    unscaled, an inf or NaN skips every optimizer update and multiplies the
    scale by `backoff-factor`, and `growth-interval` finite steps in a row
    multiply it by `growth-factor`. The scale and the counter are optimizer
    state of the step. `loss-scale=<number>` scales by a constant (updates
    are still skipped on overflow); `loss-scale=none` (the default for bf16)
    does not scale.

    Errors: a graph that already has backward ops (run this pass before
    autodiff), an op without an autocast class, f64 tensors, bad options.

    Runs on a `builtin.module` (each memopt graph in it) or nested on each
    `func.func`, where the pass manager runs functions in parallel:
    `--pass-pipeline='builtin.module(func.func(memopt-mixed-precision))'`. The result is the
    same either way; other functions and declarations are left alone.
  }];
  let options = [
    Option<"precision", "precision", "::memopt::Precision",
           /*default=*/"::memopt::Precision::FP16", "Low precision",
           "::memopt::choices(::memopt::Precision::FP16, "
           "::memopt::Precision::BF16)">,
    Option<"lossScale", "loss-scale", "std::string", /*default=*/"\"\"",
           "dynamic, none or a constant scale (default: dynamic for fp16, "
           "none for bf16)">,
    Option<"initScale", "init-scale", "double", /*default=*/"65536.0",
           "Initial dynamic loss scale">,
    Option<"growthFactor", "growth-factor", "double", /*default=*/"2.0",
           "Scale multiplier after growth-interval finite steps">,
    Option<"backoffFactor", "backoff-factor", "double", /*default=*/"0.5",
           "Scale multiplier after an overflow">,
    Option<"growthInterval", "growth-interval", "int64_t", /*default=*/"2000",
           "Consecutive finite steps before the scale grows">
  ];
  let statistics = [
    Statistic<"numCasts", "casts", "Casts inserted">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def MemOptReport : Pass<"memopt-report", "mlir::ModuleOp"> {
  let summary = "Write the memory report (JSON) of every function";
  let description = [{
    An analysis-only pass (DESIGN.md §4): for every function with a body it
    measures, in the current op order, the bytes each op has live and the
    totals users compare across configurations, and writes them as JSON,
    sizes in bytes. A module with exactly one such function gives one
    object; any other number gives an array of objects, in module order.

    ```json
    {"function": "mlp_train",
     "parameters": {"count": 235146, "bytes": 940584},
     "gradient_bytes": 940584, "optimizer_state_bytes": 0,
     "forward_allocated_bytes": 199172, "saved_for_backward_bytes": 100868,
     "peak_bytes": 2885204, "arena_bytes": null,
     "recompute_flops": 0, "total_flops": 64765450,
     "ops": [{"index": 0, "op": "memopt.linear",
              "loc": "examples/mlp.mlir:12:9", "live_bytes": 1207336}, ...]}
    ```

    (`examples/mlp.mlir` after `--memopt-autodiff`.)

    Every tensor lives from the op that defines it through its last use (a
    `memopt.free` counts as one; returned values to the end); arguments for
    the whole step; reshapes and results marked `memopt.inplace` share
    their operand's buffer. Forward ops are those the loss (result 0)
    depends on, backward ops the rest. `gradient_bytes` are the gradients
    the optimizer updates consume (or that `optimizer=none` returns), 0
    before `--memopt-autodiff`. `arena_bytes` is the function's
    `memopt.arena_bytes` once the planner has set it, else null.
    `recompute_flops` counts ops marked `memopt.recompute`. FLOPs follow
    `CostOpInterface`. An op entry also has `"inplace_operand": N` when the
    op writes its result over operand N's buffer (`memopt.inplace`) and
    `"recompute": true` when it recomputes a forward value (checkpointing).
    `function=<name>` restricts the report to one
    function (memopt-run's `--report` uses it). The IR is left unchanged.

    `graph=true` adds the step's data-flow graph, for planners outside
    memopt (`bench/checkmate_milp.py` builds Checkmate's MILP from it): per
    op `operands` (indices of the ops whose results it reads) and
    `operand_results` (which result of each), `arguments` (numbers of the
    arguments it reads), `result_bytes` (the buffers it allocates: results
    that are neither views nor in place) and `result_bytes_each` (per
    result), its
    `workspace_bytes` and `flops`, `forward`, and `pure` (no memory effects,
    no regions: it may be run again); per function `arguments_bytes` (the
    arguments and constants, outside the arena), `results` (the op each
    returned value comes from, null for an argument) and `result_numbers`
    (which of its results).
  }];
  let options = [
    Option<"file", "file", "std::string", /*default=*/"\"-\"",
           "Where to write the report ('-' for stdout)">,
    Option<"graph", "graph", "bool", /*default=*/"false",
           "Add each op's operands, allocated bytes, workspace, FLOPs and "
           "purity (the data-flow graph)">,
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "Report only this function (default: every function)">
  ];
}

#endif // MEMOPT_DIALECT_MEMOPT_TRANSFORMS_PASSES_TD
