//===- PlanEmitter.h - memrt function -> plan file --------------*- C++ -*-===//
//
// Writes a lowered (memrt) function as a plan file, version 1
// (docs/plan-format.md), the input of the MLIR-independent runtime.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_TARGET_PLAN_PLANEMITTER_H
#define MEMOPT_TARGET_PLAN_PLANEMITTER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace memopt {

/// How a plan is written.
struct PlanEmitOptions {
  /// The arguments' names, in order (the source's, as compileToPlan finds
  /// them); arguments past the end are named `argN`.
  llvm::ArrayRef<std::string> argumentNames;
  /// One line of JSON (for a runtime in the same process) instead of one
  /// line per tensor, argument and step (for files that diff and grep well).
  bool compact = false;
};

/// Writes `func` (lowered to memrt) as a plan. Emits a located diagnostic and
/// fails, writing nothing, on anything a plan cannot express.
llvm::LogicalResult emitPlan(mlir::func::FuncOp func, llvm::raw_ostream &os,
                             const PlanEmitOptions &options = {});

/// Writes the single memrt function of `module` (the one carrying
/// `memrt.arena_bytes`), or the one named `functionName` when non-empty.
llvm::LogicalResult emitPlan(mlir::ModuleOp module, llvm::raw_ostream &os,
                             llvm::StringRef functionName = "",
                             const PlanEmitOptions &options = {});

/// Registers `--memrt-to-plan` with mlir-translate style drivers.
void registerToPlanTranslation();

} // namespace memopt

#endif // MEMOPT_TARGET_PLAN_PLANEMITTER_H
