//===- Plan.h - a parsed and validated plan file ----------------*- C++ -*-===//
//
// The in-memory form of a plan file (docs/plan-format.md, version 1). A Plan
// from parse() or loadFile() is validated: parsing checks everything the
// format's "Validation" section lists plus each step's shapes, dtypes and
// attributes against the kernel's rules, so that executing a loaded plan
// can never read or write outside a buffer. Every refusal is an Error with
// code InvalidPlan whose message names the entry (`plan: tensors[4]: ...`,
// `plan: steps[3] (conv2d): ...`).
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_PLAN_H
#define MEMOPT_RUNTIME_PLAN_H

#include "memopt/runtime/DType.h"
#include "memopt/runtime/Kernel.h"
#include "memopt/runtime/Shape.h"

#include "memopt/Contract/PlanFormat.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace memopt::runtime {

enum class StorageKind { Arena, Argument, View, Constant };
std::string_view storageKindName(StorageKind kind);

struct TensorInfo {
  int64_t id = 0;
  DType dtype = DType::F32;
  Shape shape;
  StorageKind storage = StorageKind::Arena;
  /// Arena: the byte offset in the arena.
  uint64_t offset = 0;
  /// Arena, version 2: the steps during which the slice holds this tensor
  /// (inclusive; `liveLast` = number of steps means until after the step).
  /// Version 1 plans get [0, steps], which is why their slices may not
  /// overlap.
  int64_t liveFirst = 0;
  int64_t liveLast = -1;
  /// Argument: the index into Plan::arguments.
  int64_t argument = -1;
  /// View: the tensor whose bytes this one reinterprets.
  int64_t viewOf = -1;
  /// Constant: every element, encoded in `dtype` (a splat is expanded).
  std::vector<uint8_t> constantData;

  /// Filled in by validation: the element count, the byte size and the
  /// non-view tensor whose storage this tensor ultimately uses (itself
  /// unless it is a view).
  int64_t numElements = 0;
  uint64_t bytes = 0;
  int64_t root = 0;
};

/// `param`, `state`, `data` and `optimizer_state` (numbered as the C API's
/// memopt_role). Everything but data persists across steps.
enum class ArgumentRole { Param, State, Data, OptimizerState };
std::string_view argumentRoleName(ArgumentRole role);

struct ArgumentInfo {
  std::string name;
  ArgumentRole role = ArgumentRole::Data;
  int64_t tensor = 0;
};

/// An `updates` entry: result `result` is the next value of argument
/// `argument` (Executor::applyUpdates copies it after a step).
struct UpdateInfo {
  int64_t result = 0;
  int64_t argument = 0;
};

struct Step {
  KernelKind kernel = KernelKind::Relu;
  std::vector<int64_t> inputs;
  std::vector<int64_t> outputs;
  /// Validated attributes, defaults filled in (see Kernel.h).
  KernelAttrs attrs;
  /// Source location for messages; empty when the plan gave none.
  std::string loc;
  /// Recomputes a forward value for the backward pass (checkpointing).
  bool recompute = false;
  /// Scratch bytes the kernel may use while it runs, at this arena offset
  /// (the compiler's WorkspaceOpInterface reservation); 0 bytes: none.
  uint64_t workspaceOffset = 0;
  uint64_t workspaceBytes = 0;

  template <typename AttrsT> const AttrsT &get() const {
    return std::get<AttrsT>(attrs);
  }

  /// Whether the kernel reads the training step counter: dropout, and
  /// attention with dropout, draw their masks from it. A backend that
  /// replays recorded work (a CUDA graph) must not freeze such a step.
  bool readsStepCounter() const {
    if (std::holds_alternative<DropoutAttrs>(attrs))
      return true;
    if (const auto *a = std::get_if<AttentionAttrs>(&attrs))
      return a->p > 0;
    return false;
  }
};

class Plan {
public:
  /// Parses and validates plan JSON; throws Error(InvalidPlan) naming the
  /// offending entry.
  static std::shared_ptr<const Plan> parse(std::string_view json);
  /// Reads and parses a plan file; a file that cannot be read is an
  /// Error(Io) naming the path.
  static std::shared_ptr<const Plan> loadFile(const std::string &path);

  int64_t version = kPlanVersion;
  std::string function;
  uint64_t arenaBytes = 0;
  uint64_t alignment = 1;
  std::vector<TensorInfo> tensors;
  std::vector<ArgumentInfo> arguments;
  std::vector<int64_t> results;
  std::vector<Step> steps;
  /// Validated: indices in range, matching dtype and shape, no data
  /// argument, no argument twice.
  std::vector<UpdateInfo> updates;

  const TensorInfo &tensor(int64_t id) const { return tensors.at(id); }
  const TensorInfo &argumentTensor(size_t index) const {
    return tensors.at(arguments.at(index).tensor);
  }
  const TensorInfo &resultTensor(size_t index) const {
    return tensors.at(results.at(index));
  }
  /// The index of the argument called `name`, or -1.
  int64_t findArgument(std::string_view name) const;

  /// `steps[3] (conv2d at model.mlir:4:7)`: how messages name a step.
  std::string describeStep(size_t index) const;
};

/// Bytes of arena tensors live at each step (from their live ranges; every
/// arena tensor at every step for a version 1 plan), plus the step's
/// workspace: what the arena holds while step i runs. Index `steps.size()` is
/// after the last step.
std::vector<uint64_t> liveArenaBytesPerStep(const Plan &plan);

} // namespace memopt::runtime

#endif // MEMOPT_RUNTIME_PLAN_H
