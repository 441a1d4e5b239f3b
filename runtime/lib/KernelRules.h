//===- KernelRules.h - per-kernel validation of plan steps ------*- C++ -*-===//
//
// The runtime's copy of the dialect's shape rules (lib/Dialect/MemOpt/IR/
// MemOpt*Ops.cpp), applied to plan steps: arity, dtypes, shapes and
// attributes. A plan that passes them cannot make a kernel index outside
// its buffers, whatever produced the plan. Internal to the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_LIB_KERNELRULES_H
#define MEMOPT_RUNTIME_LIB_KERNELRULES_H

#include "memopt/runtime/Kernel.h"
#include "memopt/runtime/Plan.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace memopt::runtime::detail {

/// Checks one step and returns its typed attributes with defaults filled in.
/// `attrs` is the step's JSON object (possibly empty); `where` names the
/// step in messages (`steps[3] (conv2d at m.mlir:4:7)`). Throws
/// Error(InvalidPlan) with `plan: <where>: <what>`.
KernelAttrs checkStep(KernelKind kind, const nlohmann::json &attrs,
                      const std::vector<const TensorInfo *> &inputs,
                      const std::vector<const TensorInfo *> &outputs,
                      const std::string &where);

} // namespace memopt::runtime::detail

#endif // MEMOPT_RUNTIME_LIB_KERNELRULES_H
