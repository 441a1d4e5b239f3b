//===- Transforms.h - the passes' work on one function ----------*- C++ -*-===//
//
// The transformations behind the memory passes, callable on one function
// without a pass manager: checkpointing evaluates candidate plans by running
// the schedule and the arena planner on a scratch copy of the step, and
// compilers embedding memopt can call them directly.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_DIALECT_MEMOPT_TRANSFORMS_TRANSFORMS_H
#define MEMOPT_DIALECT_MEMOPT_TRANSFORMS_TRANSFORMS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <utility>

namespace memopt {

/// `--memopt-schedule` on one single-block function: reorders its ops and
/// inserts the frees. Returns (ops moved, frees inserted).
std::pair<int64_t, int64_t> scheduleFunction(mlir::func::FuncOp func);

/// `--memopt-plan-memory` on one function: writes the offsets and the arena
/// attributes and returns the arena's size in bytes. `numBuffers`, when
/// given, receives the number of buffers placed.
mlir::FailureOr<int64_t> planFunctionMemory(mlir::func::FuncOp func,
                                            int64_t alignment,
                                            int64_t *numBuffers = nullptr);

} // namespace memopt

#endif // MEMOPT_DIALECT_MEMOPT_TRANSFORMS_TRANSFORMS_H
