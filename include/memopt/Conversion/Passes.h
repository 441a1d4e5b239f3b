//===- Passes.h - memopt conversion passes ----------------------*- C++ -*-===//
//
// Declares the conversions out of the memopt dialect.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_CONVERSION_PASSES_H
#define MEMOPT_CONVERSION_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include "memopt/Dialect/MemRT/IR/MemRTDialect.h"

namespace memopt {

#define GEN_PASS_DECL
#include "memopt/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "memopt/Conversion/Passes.h.inc"

} // namespace memopt

#endif // MEMOPT_CONVERSION_PASSES_H
