//===- Pipeline.cpp - memopt's pass pipeline -----------------------------===//
//
// buildMemOptPipeline and `--memopt-pipeline` (Pipelines.h): the one place
// that owns the order of memopt's passes.
//
//===----------------------------------------------------------------------===//

#include "memopt/Dialect/MemOpt/Transforms/Pipelines.h"

#include "memopt/Dialect/MemOpt/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace memopt {
namespace {

/// Where the per-function passes go: nested on func.func under a module
/// (the pass manager then runs a module's functions in parallel), else on
/// `pm` itself. The result is the same either way.
OpPassManager &functionPasses(OpPassManager &pm) {
  if (pm.getOpAnchorName() == ModuleOp::getOperationName())
    return pm.nest<func::FuncOp>();
  return pm;
}

} // namespace

void buildMemOptPipeline(OpPassManager &pm,
                         const MemOptPipelineOptions &options) {
  bool train = options.mode == PipelineMode::Train,
       eval = options.mode == PipelineMode::Eval;
  OpPassManager &forward = functionPasses(pm);
  if (eval) {
    forward.addPass(createMemOptEvalMode());
  } else if (train && options.microbatches > 1) {
    MemOptMicrobatchOptions microbatch;
    microbatch.count = options.microbatches;
    forward.addPass(createMemOptMicrobatch(microbatch));
  }
  // Before mixed precision, which then sees attention as one matmul-class
  // op, and before autodiff, which gives it its own backward op. Like the
  // precision, part of what the step computes, not of how it is stored: the
  // unoptimised baseline (optimize=false) computes the same.
  if (options.fuseAttention)
    forward.addPass(createMemOptFuseAttention());
  if (options.fuseLinearCrossEntropy)
    forward.addPass(createMemOptFuseLinearCrossEntropy());
  if (options.precision != Precision::FP32) {
    // Evaluation and inference have no backward pass to scale.
    MemOptMixedPrecisionOptions mixed;
    mixed.precision = options.precision;
    mixed.lossScale =
        train ? std::string(options.lossScale) : std::string("none");
    mixed.initScale = options.initScale;
    mixed.growthFactor = options.growthFactor;
    mixed.backoffFactor = options.backoffFactor;
    mixed.growthInterval = options.growthInterval;
    forward.addPass(createMemOptMixedPrecision(mixed));
  }
  if (train) {
    MemOptAutodiffOptions autodiff;
    autodiff.optimizer = options.optimizer;
    autodiff.lr = options.lr;
    autodiff.momentum = options.momentum;
    autodiff.weightDecay = options.weightDecay;
    autodiff.clipNorm = options.clipNorm;
    autodiff.stateDtype = options.stateDtype;
    pm.addPass(createMemOptAutodiff(autodiff));
    // Right after autodiff, whose gradients and updates it recognises.
    if (options.ranks > 1) {
      MemOptDataParallelOptions parallel;
      parallel.ranks = options.ranks;
      parallel.zero = options.zero;
      parallel.rank = options.rank;
      parallel.bucket = options.bucket;
      parallel.divide = options.divide;
      pm.addPass(createMemOptDataParallel(parallel));
    }
  }
  // Before checkpointing: its budgets measure the capped workspaces.
  if (!options.convWorkspace.empty()) {
    MemOptConvWorkspaceOptions conv;
    conv.bytes = options.convWorkspace;
    pm.addPass(createMemOptConvWorkspace(conv));
  }
  if (!options.workspaceLimit.empty()) {
    MemOptWorkspaceLimitOptions limit;
    limit.bytes = options.workspaceLimit;
    pm.addPass(createMemOptWorkspaceLimit(limit));
  }
  if (!options.optimize)
    return;
  OpPassManager &backward = functionPasses(pm);
  CheckpointStrategy strategy = options.checkpoint;
  if (!options.checkpoint.hasValue() && !options.budget.empty())
    strategy = CheckpointStrategy::Budget;
  // strategy=optimal promises the least memory within one forward pass of
  // recomputation: gradient rechecks may use what checkpointing leaves of
  // it.
  double stepRecompute = strategy == CheckpointStrategy::Optimal ? 1.0 : 0.0;
  if (strategy != CheckpointStrategy::None && train) {
    MemOptCheckpointOptions checkpoint;
    checkpoint.strategy = strategy;
    // The other strategies do not aim at a budget; the plan checks it.
    if (strategy == CheckpointStrategy::Budget)
      checkpoint.budget = options.budget;
    checkpoint.alignment = options.alignment;
    checkpoint.measureInPlace = options.inplace || options.abn;
    checkpoint.measurePartition = options.partition;
    checkpoint.stepRecompute = stepRecompute;
    backward.addPass(createMemOptCheckpoint(checkpoint));
  }
  if (options.partition && train) {
    MemOptPartitionOptions partition;
    partition.measureInPlace = options.inplace || options.abn;
    partition.budget = options.budget;
    partition.alignment = options.alignment;
    partition.stepRecompute = stepRecompute;
    backward.addPass(createMemOptPartition(partition));
  }
  // After checkpointing and the partition, which decide what the backward
  // keeps from the pair.
  if (options.fuseLossGradient && train)
    backward.addPass(createMemOptFuseLossGradient());
  if (options.inplace || options.abn) {
    MemOptInPlaceOptions inplace;
    inplace.abn = options.abn;
    backward.addPass(createMemOptInPlace(inplace));
  }
  backward.addPass(createMemOptSchedule());
  MemOptPlanMemoryOptions plan;
  plan.alignment = options.alignment;
  // Met or refused, whatever the strategy: the plan is the last check.
  plan.budget = options.budget;
  backward.addPass(createMemOptPlanMemory(plan));
}

LogicalResult
verifyMemOptPipelineOptions(const MemOptPipelineOptions &options,
                            function_ref<LogicalResult(const Twine &)> error) {
  if (options.microbatches < 1)
    return error("memopt-pipeline: microbatches must be at least 1, got " +
                 Twine(static_cast<int64_t>(options.microbatches)));
  if (options.ranks < 1)
    return error("memopt-pipeline: ranks must be at least 1, got " +
                 Twine(static_cast<int64_t>(options.ranks)));
  bool train = options.mode == PipelineMode::Train;
  StringRef mode = stringifyChoice<PipelineMode>(options.mode);
  if (options.precision == Precision::FP32 || !train)
    for (auto [name, given] :
         {std::make_pair("loss-scale", options.lossScale.hasValue()),
          std::make_pair("init-scale", options.initScale.hasValue()),
          std::make_pair("growth-factor", options.growthFactor.hasValue()),
          std::make_pair("backoff-factor", options.backoffFactor.hasValue()),
          std::make_pair("growth-interval", options.growthInterval.hasValue())})
      if (given)
        return error(Twine("memopt-pipeline: ") + name +
                     (!train ? " has no effect with mode=" + mode +
                                   " (no backward pass to scale)"
                             : Twine(" applies to precision=fp16 or bf16 "
                                     "(f32 gradients need no loss scaling)")));
  if (train)
    return success();
  for (auto [name, given] :
       {std::make_pair("microbatches", options.microbatches.hasValue()),
        std::make_pair("checkpoint", options.checkpoint.hasValue()),
        std::make_pair("ranks", options.ranks.hasValue()),
        std::make_pair("zero", options.zero.hasValue()),
        std::make_pair("rank", options.rank.hasValue()),
        std::make_pair("bucket", options.bucket.hasValue()),
        std::make_pair("divide", options.divide.hasValue()),
        std::make_pair("optimizer", options.optimizer.hasValue()),
        std::make_pair("lr", options.lr.hasValue()),
        std::make_pair("momentum", options.momentum.hasValue()),
        std::make_pair("weight-decay", options.weightDecay.hasValue()),
        std::make_pair("clip-norm", options.clipNorm.hasValue()),
        std::make_pair("state-dtype", options.stateDtype.hasValue())})
    if (given)
      return error(Twine("memopt-pipeline: ") + name +
                   " has no effect with mode=" + mode + " (no backward pass)");
  return success();
}

void registerMemOptPipelines() {
  registerPassPipeline(
      "memopt-pipeline",
      "The default memory pipeline: micro-batching, mixed precision, "
      "autodiff, checkpointing, in place, schedule and arena plan, with their "
      "options",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> error) {
        MemOptPipelineOptions options;
        if (failed(options.parseFromString(text)) ||
            failed(verifyMemOptPipelineOptions(options, error)))
          return failure();
        buildMemOptPipeline(pm, options);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> describe) {
        describe(MemOptPipelineOptions());
      });
}

} // namespace memopt
