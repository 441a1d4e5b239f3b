//===- PassChoices.h - the closed choices of memopt's options ---*- C++ -*-===//
//
// Every option of memopt's passes, pipeline and tools whose value is one of
// a fixed set of names is one of these enums, with its names in one table
// (Support/Choice.h): the passes' ODS options, MemOptPipelineOptions and
// memopt-run's flags all parse and print through it.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_DIALECT_MEMOPT_TRANSFORMS_PASSCHOICES_H
#define MEMOPT_DIALECT_MEMOPT_TRANSFORMS_PASSCHOICES_H

#include "memopt/Support/Choice.h"

namespace memopt {

/// What the step does with the gradients (`--memopt-autodiff=optimizer=`).
enum class Optimizer {
  SGD,
  Momentum,
  Adam,
  AdamW,
  Adam8bit,
  AdamW8bit,
  Adafactor,
  None
};

inline llvm::ArrayRef<Choice<Optimizer>> getChoices(Optimizer) {
  static constexpr Choice<Optimizer> table[] = {
      {Optimizer::SGD, "sgd", "Stochastic gradient descent"},
      {Optimizer::Momentum, "momentum", "SGD with momentum (PyTorch's)"},
      {Optimizer::Adam, "adam", "Adam (L2 weight decay, PyTorch's)"},
      {Optimizer::AdamW, "adamw", "AdamW (decoupled weight decay, PyTorch's)"},
      {Optimizer::Adam8bit, "adam8bit",
       "Adam with block-wise 8-bit moments (bitsandbytes')"},
      {Optimizer::AdamW8bit, "adamw8bit",
       "AdamW with block-wise 8-bit moments (bitsandbytes')"},
      {Optimizer::Adafactor, "adafactor",
       "Adafactor (transformers', factored second moments, no first moment)"},
      {Optimizer::None, "none", "No update: return the gradients"}};
  return table;
}

/// The precision convolutions and matrix products compute in.
enum class Precision { FP32, FP16, BF16 };

inline llvm::ArrayRef<Choice<Precision>> getChoices(Precision) {
  static constexpr Choice<Precision> table[] = {
      {Precision::FP32, "fp32", "Single precision throughout"},
      {Precision::FP16, "fp16", "IEEE half precision, f32 master weights"},
      {Precision::BF16, "bf16", "bfloat16, f32 master weights"}};
  return table;
}

/// Which values `--memopt-checkpoint` recomputes.
enum class CheckpointStrategy { None, Sqrt, Budget, Optimal };

inline llvm::ArrayRef<Choice<CheckpointStrategy>>
getChoices(CheckpointStrategy) {
  static constexpr Choice<CheckpointStrategy> table[] = {
      {CheckpointStrategy::None, "none", "No checkpointing"},
      {CheckpointStrategy::Sqrt, "sqrt",
       "About sqrt(stages) segments, one extra forward pass at most"},
      {CheckpointStrategy::Budget, "budget",
       "The least recomputation that fits the budget"},
      {CheckpointStrategy::Optimal, "optimal",
       "The least memory within one extra forward pass"}};
  return table;
}

/// How `strategy=optimal` solves.
enum class CheckpointSolver { Auto, DP, ILP };

inline llvm::ArrayRef<Choice<CheckpointSolver>> getChoices(CheckpointSolver) {
  static constexpr Choice<CheckpointSolver> table[] = {
      {CheckpointSolver::Auto, "auto",
       "Dynamic programming on chains, the exact model on other graphs"},
      {CheckpointSolver::DP, "dp",
       "The binomial schedule over the stage chain"},
      {CheckpointSolver::ILP, "ilp", "The exact 0-1 model (CBC)"}};
  return table;
}

/// What step `--memopt-pipeline` builds.
enum class PipelineMode { Train, Eval, Inference };

inline llvm::ArrayRef<Choice<PipelineMode>> getChoices(PipelineMode) {
  static constexpr Choice<PipelineMode> table[] = {
      {PipelineMode::Train, "train",
       "The training step: backward pass and optimizer"},
      {PipelineMode::Eval, "eval",
       "Evaluation: running statistics, no dropout, no backward pass"},
      {PipelineMode::Inference, "inference", "The graph as it is"}};
  return table;
}

} // namespace memopt

MEMOPT_CHOICE_PARSER(memopt::Optimizer)
MEMOPT_CHOICE_PARSER(memopt::Precision)
MEMOPT_CHOICE_PARSER(memopt::CheckpointStrategy)
MEMOPT_CHOICE_PARSER(memopt::CheckpointSolver)
MEMOPT_CHOICE_PARSER(memopt::PipelineMode)

#endif // MEMOPT_DIALECT_MEMOPT_TRANSFORMS_PASSCHOICES_H
