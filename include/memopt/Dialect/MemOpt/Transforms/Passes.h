//===- Passes.h - memopt dialect passes -------------------------*- C++ -*-===//
//
// Declares the passes over memopt training graphs and their registration.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_DIALECT_MEMOPT_TRANSFORMS_PASSES_H
#define MEMOPT_DIALECT_MEMOPT_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include "memopt/Dialect/MemOpt/Transforms/Pipelines.h"

#include <memory>

namespace memopt {

#define GEN_PASS_DECL
#include "memopt/Dialect/MemOpt/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "memopt/Dialect/MemOpt/Transforms/Passes.h.inc"

} // namespace memopt

#endif // MEMOPT_DIALECT_MEMOPT_TRANSFORMS_PASSES_H
