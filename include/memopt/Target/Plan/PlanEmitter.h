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

namespace memopt {

/// Writes `func` (lowered to memrt) as a plan. Emits a located diagnostic and
/// fails, writing nothing, on anything a plan cannot express.
llvm::LogicalResult emitPlan(mlir::func::FuncOp func, llvm::raw_ostream &os);

/// Writes the single memrt function of `module` (the one carrying
/// `memrt.arena_bytes`), or the one named `functionName` when non-empty.
llvm::LogicalResult emitPlan(mlir::ModuleOp module, llvm::raw_ostream &os,
                             llvm::StringRef functionName = "");

/// Registers `--memrt-to-plan` with mlir-translate style drivers.
void registerToPlanTranslation();

} // namespace memopt

#endif // MEMOPT_TARGET_PLAN_PLANEMITTER_H
