//===- Pipeline.cpp - the default memory pipeline as one pass ------------===//
//
// `--memopt-pipeline`: the passes memopt-run applies, in the order they must
// run, as one registered pipeline with the options a user picks, so other
// compilers embed memopt's pipeline with one textual entry:
//
//   memopt-microbatch (count > 1), memopt-mixed-precision (precision fp16
//   or bf16), memopt-autodiff, memopt-checkpoint
//   (checkpoint != none), memopt-partition (partition, on by default),
//   memopt-inplace (inplace or abn), memopt-schedule, memopt-plan-memory
//
// A graph without a scalar loss passes through autodiff and checkpointing
// unchanged, so inference graphs get the in-place, schedule and plan stages.
//
//===----------------------------------------------------------------------===//

#include "memopt/Dialect/MemOpt/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace memopt {
namespace {

struct PipelineOptions : public PassPipelineOptions<PipelineOptions> {
  Option<std::string> optimizer{
      *this, "optimizer",
      llvm::cl::desc("sgd, momentum, adam or none (--memopt-autodiff)"),
      llvm::cl::init("sgd")};
  Option<std::string> lr{
      *this, "lr",
      llvm::cl::desc("Learning rate, a finite number > 0 (default: the "
                     "optimizer's)"),
      llvm::cl::init("")};
  Option<double> momentum{*this, "momentum", llvm::cl::desc("Momentum factor"),
                          llvm::cl::init(0.9)};
  Option<double> weightDecay{*this, "weight-decay",
                             llvm::cl::desc("L2 penalty"), llvm::cl::init(0.0)};
  Option<int64_t> microbatches{
      *this, "microbatches",
      llvm::cl::desc("Micro-batches whose gradients accumulate "
                     "(--memopt-microbatch)"),
      llvm::cl::init(1)};
  Option<std::string> checkpoint{
      *this, "checkpoint",
      llvm::cl::desc("none, sqrt, budget or optimal (--memopt-checkpoint); "
                     "budget when only budget= is given"),
      llvm::cl::init("")};
  Option<std::string> budget{
      *this, "budget",
      llvm::cl::desc("Byte budget of the whole step as the runtime allocates "
                     "it, e.g. 512MiB: checkpointing aims at it and the plan "
                     "refuses a step above it"),
      llvm::cl::init("")};
  Option<bool> partition{
      *this, "partition",
      llvm::cl::desc("Choose what the backward pass keeps by a minimum cut "
                     "and recompute cheap values (--memopt-partition)"),
      llvm::cl::init(true)};
  Option<bool> inplace{*this, "inplace",
                       llvm::cl::desc("Run ops in place (--memopt-inplace)"),
                       llvm::cl::init(false)};
  Option<bool> abn{*this, "abn",
                   llvm::cl::desc("InPlace-ABN (--memopt-inplace=abn=true)"),
                   llvm::cl::init(false)};
  Option<std::string> precision{
      *this, "precision",
      llvm::cl::desc("fp32, fp16 or bf16 (--memopt-mixed-precision)"),
      llvm::cl::init("fp32")};
  Option<std::string> lossScale{
      *this, "loss-scale",
      llvm::cl::desc("dynamic, none or a constant (default: dynamic for fp16, "
                     "none for bf16)"),
      llvm::cl::init("")};
  Option<double> initScale{*this, "init-scale",
                           llvm::cl::desc("Initial dynamic loss scale"),
                           llvm::cl::init(65536.0)};
  Option<double> growthFactor{
      *this, "growth-factor",
      llvm::cl::desc("Loss-scale multiplier after growth-interval finite "
                     "steps"),
      llvm::cl::init(2.0)};
  Option<double> backoffFactor{
      *this, "backoff-factor",
      llvm::cl::desc("Loss-scale multiplier after an overflow"),
      llvm::cl::init(0.5)};
  Option<int64_t> growthInterval{
      *this, "growth-interval",
      llvm::cl::desc("Finite steps before the loss scale grows"),
      llvm::cl::init(2000)};
  Option<std::string> workspaceLimit{
      *this, "workspace-limit",
      llvm::cl::desc("Most workspace bytes any one kernel reserves, e.g. "
                     "4MiB (--memopt-workspace-limit); no cap by default")};
  Option<int64_t> alignment{*this, "alignment",
                            llvm::cl::desc("Arena alignment in bytes"),
                            llvm::cl::init(64)};
};

/// Where the per-function passes go: nested on func.func under a module
/// (the pass manager then runs a module's functions in parallel), else on
/// `pm` itself. The result is the same either way.
OpPassManager &functionPasses(OpPassManager &pm) {
  if (pm.getOpAnchorName() == ModuleOp::getOperationName())
    return pm.nest<func::FuncOp>();
  return pm;
}

void buildPipeline(OpPassManager &pm, const PipelineOptions &options) {
  OpPassManager &forward = functionPasses(pm);
  if (options.microbatches > 1) {
    MemOptMicrobatchOptions microbatch;
    microbatch.count = options.microbatches;
    forward.addPass(createMemOptMicrobatch(microbatch));
  }
  if (options.precision != "fp32") {
    // An unknown precision is the pass's own error.
    MemOptMixedPrecisionOptions mixed;
    mixed.precision = options.precision;
    mixed.lossScale = options.lossScale;
    mixed.initScale = options.initScale;
    mixed.growthFactor = options.growthFactor;
    mixed.backoffFactor = options.backoffFactor;
    mixed.growthInterval = options.growthInterval;
    forward.addPass(createMemOptMixedPrecision(mixed));
  }
  MemOptAutodiffOptions autodiff;
  autodiff.optimizer = options.optimizer;
  autodiff.lr = options.lr;
  autodiff.momentum = options.momentum;
  autodiff.weightDecay = options.weightDecay;
  pm.addPass(createMemOptAutodiff(autodiff));
  // Before checkpointing: its budgets measure the capped workspaces.
  if (!options.workspaceLimit.empty()) {
    MemOptWorkspaceLimitOptions limit;
    limit.bytes = options.workspaceLimit;
    pm.addPass(createMemOptWorkspaceLimit(limit));
  }
  OpPassManager &backward = functionPasses(pm);
  std::string strategy = options.checkpoint;
  if (strategy.empty())
    strategy = options.budget.empty() ? "none" : "budget";
  if (strategy != "none") {
    MemOptCheckpointOptions checkpoint;
    checkpoint.strategy = strategy;
    // The other strategies do not aim at a budget; the plan checks it.
    if (strategy == "budget")
      checkpoint.budget = options.budget;
    checkpoint.alignment = options.alignment;
    checkpoint.measureInPlace = options.inplace || options.abn;
    backward.addPass(createMemOptCheckpoint(checkpoint));
  }
  if (options.partition) {
    MemOptPartitionOptions partition;
    partition.measureInPlace = options.inplace || options.abn;
    partition.budget = options.budget;
    partition.alignment = options.alignment;
    backward.addPass(createMemOptPartition(partition));
  }
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

/// Options the passes cannot check themselves, because the pipeline would
/// not run the pass they belong to: an option without effect is an error.
LogicalResult
verifyPipelineOptions(const PipelineOptions &options,
                      function_ref<LogicalResult(const Twine &)> error) {
  if (options.microbatches < 1)
    return error("memopt-pipeline: microbatches must be at least 1, got " +
                 Twine(static_cast<int64_t>(options.microbatches)));
  if (options.precision == "fp32")
    for (auto [name, given] :
         {std::make_pair("loss-scale", options.lossScale.hasValue()),
          std::make_pair("init-scale", options.initScale.hasValue()),
          std::make_pair("growth-factor", options.growthFactor.hasValue()),
          std::make_pair("backoff-factor", options.backoffFactor.hasValue()),
          std::make_pair("growth-interval", options.growthInterval.hasValue())})
      if (given)
        return error(Twine("memopt-pipeline: ") + name +
                     " applies to precision=fp16 or bf16 (f32 gradients "
                     "need no loss scaling)");
  return success();
}

} // namespace

void registerMemOptPipelines() {
  registerPassPipeline(
      "memopt-pipeline",
      "The default memory pipeline: micro-batching, mixed precision, "
      "autodiff, checkpointing, in place, schedule and arena plan, with their "
      "options",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> error) {
        PipelineOptions options;
        if (failed(options.parseFromString(text)) ||
            failed(verifyPipelineOptions(options, error)))
          return failure();
        buildPipeline(pm, options);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> describe) {
        describe(PipelineOptions());
      });
}

} // namespace memopt
