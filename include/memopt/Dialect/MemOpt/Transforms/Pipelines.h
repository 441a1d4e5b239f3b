//===- Pipelines.h - memopt's pass pipeline as typed C++ -------*- C++ -*-===//
//
// The one place that owns the order of memopt's passes, for training,
// evaluation and inference graphs: `--memopt-pipeline` parses its options
// into MemOptPipelineOptions, memopt-run and embedding compilers fill the
// struct directly and call buildMemOptPipeline (as upstream's
// Bufferization/Pipelines/Passes.h does). The passes, in order:
//
//   memopt-eval-mode (mode=eval) or memopt-microbatch (microbatches > 1),
//   memopt-fuse-attention (fuse-attention),
//   memopt-fuse-linear-cross-entropy (fuse-linear-cross-entropy),
//   memopt-mixed-precision (precision fp16 or bf16), memopt-autodiff
//   (mode=train), memopt-data-parallel (ranks > 1), memopt-workspace-limit
//   (workspace-limit), and when optimize: memopt-checkpoint (checkpoint !=
//   none, or a budget) and memopt-partition (partition) in mode=train,
//   memopt-inplace (inplace or abn), memopt-schedule and memopt-plan-memory
//   (with the budget).
//
// A graph without a scalar loss passes through autodiff, checkpointing and
// partition unchanged, so inference graphs get the remaining stages.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_DIALECT_MEMOPT_TRANSFORMS_PIPELINES_H
#define MEMOPT_DIALECT_MEMOPT_TRANSFORMS_PIPELINES_H

#include "memopt/Dialect/MemOpt/Transforms/PassChoices.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/Twine.h"

#include <string>

namespace memopt {

struct MemOptPipelineOptions
    : public mlir::PassPipelineOptions<MemOptPipelineOptions> {
  Option<Optimizer> optimizer{*this, "optimizer",
                              ::llvm::cl::desc("Optimizer (--memopt-autodiff)"),
                              ::llvm::cl::init(Optimizer::SGD)};
  Option<std::string> lr{
      *this, "lr",
      ::llvm::cl::desc("Learning rate, a finite number > 0 (default: the "
                       "optimizer's)"),
      ::llvm::cl::init("")};
  Option<double> momentum{*this, "momentum",
                          ::llvm::cl::desc("Momentum factor"),
                          ::llvm::cl::init(0.9)};
  Option<std::string> weightDecay{
      *this, "weight-decay",
      ::llvm::cl::desc("Weight decay, a finite number >= 0: L2 penalty, or "
                       "decoupled with adamw and adamw8bit (default: the "
                       "optimizer's, 0 or 0.01 for those)"),
      ::llvm::cl::init("")};
  Option<std::string> stateDtype{
      *this, "state-dtype",
      ::llvm::cl::desc("Element type of the momentum buffers and Adam's "
                       "moments: 'param' or 'bf16'"),
      ::llvm::cl::init("param")};
  Option<std::string> clipNorm{
      *this, "clip-norm",
      ::llvm::cl::desc("Clip the gradients by their global 2-norm to at most "
                       "this (torch.nn.utils.clip_grad_norm_; default: no "
                       "clipping)"),
      ::llvm::cl::init("")};
  Option<int64_t> microbatches{
      *this, "microbatches",
      ::llvm::cl::desc("Micro-batches whose gradients accumulate "
                       "(--memopt-microbatch)"),
      ::llvm::cl::init(1)};
  Option<int64_t> ranks{
      *this, "ranks",
      ::llvm::cl::desc("Data-parallel ranks the step is for: gradients "
                       "averaged across them (--memopt-data-parallel)"),
      ::llvm::cl::init(1)};
  Option<int64_t> zero{
      *this, "zero",
      ::llvm::cl::desc("ZeRO stage with ranks > 1 (--memopt-data-parallel): "
                       "0 replicates the optimizer state, 1 shards it, 2 "
                       "also the averaged gradients, 3 also the parameters"),
      ::llvm::cl::init(0)};
  Option<int64_t> rank{
      *this, "rank",
      ::llvm::cl::desc("With zero >= 1: the rank whose step to build "
                       "(--memopt-data-parallel)"),
      ::llvm::cl::init(-1)};
  Option<std::string> bucket{
      *this, "bucket",
      ::llvm::cl::desc("Most gradient bytes one all-reduce carries with "
                       "ranks > 1 (--memopt-data-parallel)"),
      ::llvm::cl::init("25MiB")};
  Option<std::string> divide{
      *this, "divide",
      ::llvm::cl::desc("With zero >= 1: the parameters divided among the "
                       "ranks by rows, not owned whole: auto, all, none or "
                       "a byte size (--memopt-data-parallel)"),
      ::llvm::cl::init("auto")};
  Option<CheckpointStrategy> checkpoint{
      *this, "checkpoint",
      ::llvm::cl::desc("Checkpointing (--memopt-checkpoint); when not given, "
                       "budget with a budget= and none without"),
      ::llvm::cl::init(CheckpointStrategy::None)};
  Option<std::string> budget{
      *this, "budget",
      ::llvm::cl::desc("Byte budget of the whole step as the runtime allocates "
                       "it, e.g. 512MiB: checkpointing aims at it and the plan "
                       "refuses a step above it"),
      ::llvm::cl::init("")};
  Option<bool> partition{
      *this, "partition",
      ::llvm::cl::desc("Choose what the backward pass keeps by a minimum cut "
                       "and recompute cheap values (--memopt-partition)"),
      ::llvm::cl::init(true)};
  Option<bool> inplace{*this, "inplace",
                       ::llvm::cl::desc("Run ops in place (--memopt-inplace)"),
                       ::llvm::cl::init(false)};
  Option<bool> abn{*this, "abn",
                   ::llvm::cl::desc("InPlace-ABN (--memopt-inplace=abn=true)"),
                   ::llvm::cl::init(false)};
  Option<bool> fuseAttention{
      *this, "fuse-attention",
      ::llvm::cl::desc("Fuse attention chains into memory-efficient "
                       "attention (--memopt-fuse-attention)"),
      ::llvm::cl::init(true)};
  Option<bool> fuseLinearCrossEntropy{
      *this, "fuse-linear-cross-entropy",
      ::llvm::cl::desc("Fuse a large-vocabulary linear → cross_entropy into "
                       "the chunked linear_cross_entropy "
                       "(--memopt-fuse-linear-cross-entropy)"),
      ::llvm::cl::init(true)};
  Option<bool> fuseLossGradient{
      *this, "fuse-loss-gradient",
      ::llvm::cl::desc("Compute linear_cross_entropy and its backward op in "
                       "one op, each chunk's logits once "
                       "(--memopt-fuse-loss-gradient)"),
      ::llvm::cl::init(true)};
  Option<Precision> precision{
      *this, "precision",
      ::llvm::cl::desc("Compute precision (--memopt-mixed-precision)"),
      ::llvm::cl::init(Precision::FP32)};
  Option<std::string> lossScale{
      *this, "loss-scale",
      ::llvm::cl::desc(
          "dynamic, none or a constant (default: dynamic for fp16, "
          "none for bf16)"),
      ::llvm::cl::init("")};
  Option<double> initScale{*this, "init-scale",
                           ::llvm::cl::desc("Initial dynamic loss scale"),
                           ::llvm::cl::init(65536.0)};
  Option<double> growthFactor{
      *this, "growth-factor",
      ::llvm::cl::desc("Loss-scale multiplier after growth-interval finite "
                       "steps"),
      ::llvm::cl::init(2.0)};
  Option<double> backoffFactor{
      *this, "backoff-factor",
      ::llvm::cl::desc("Loss-scale multiplier after an overflow"),
      ::llvm::cl::init(0.5)};
  Option<int64_t> growthInterval{
      *this, "growth-interval",
      ::llvm::cl::desc("Finite steps before the loss scale grows"),
      ::llvm::cl::init(2000)};
  Option<std::string> workspaceLimit{
      *this, "workspace-limit",
      ::llvm::cl::desc("Most workspace bytes any one kernel reserves, e.g. "
                       "4MiB (--memopt-workspace-limit); no cap by default")};
  Option<std::string> convWorkspace{
      *this, "conv-workspace",
      ::llvm::cl::desc("Workspace bytes every convolution reserves at least, "
                       "e.g. 512MiB, so cuDNN may pick faster algorithms "
                       "(--memopt-conv-workspace); one image's im2col "
                       "matrix by default")};
  Option<PipelineMode> mode{
      *this, "mode",
      ::llvm::cl::desc("The step to build; eval runs --memopt-eval-mode "
                       "instead of the backward pass and optimizer; neither "
                       "eval nor inference has micro-batches, autodiff, "
                       "checkpointing, partition or loss scaling"),
      ::llvm::cl::init(PipelineMode::Train)};
  Option<bool> optimize{
      *this, "optimize",
      ::llvm::cl::desc("Checkpointing, partition, in place, schedule and arena "
                       "plan; false: the unoptimised baseline (memopt-run "
                       "--no-optimize)"),
      ::llvm::cl::init(true)};
  Option<int64_t> alignment{*this, "alignment",
                            ::llvm::cl::desc("Arena alignment in bytes"),
                            ::llvm::cl::init(64)};
};

/// Fails, through `error`, on options that have no effect or contradict
/// each other (microbatches < 1, loss-scaling options with fp32, options
/// of the backward pass outside mode=train); the passes
/// check the rest.
llvm::LogicalResult verifyMemOptPipelineOptions(
    const MemOptPipelineOptions &options,
    llvm::function_ref<llvm::LogicalResult(const llvm::Twine &)> error);

/// Adds memopt's passes, in order, to `pm` (anchored on builtin.module,
/// where per-function passes nest on func.func, or on func.func). Call
/// verifyMemOptPipelineOptions first.
void buildMemOptPipeline(mlir::OpPassManager &pm,
                         const MemOptPipelineOptions &options);

/// Registers `--memopt-pipeline` with these options.
void registerMemOptPipelines();

} // namespace memopt

#endif // MEMOPT_DIALECT_MEMOPT_TRANSFORMS_PIPELINES_H
