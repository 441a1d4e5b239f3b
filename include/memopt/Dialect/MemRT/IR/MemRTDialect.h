//===- MemRTDialect.h - memrt dialect ---------------------------*- C++ -*-===//
//
// Declares the memrt dialect: kernel calls on slices of one planned arena.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_DIALECT_MEMRT_IR_MEMRTDIALECT_H
#define MEMOPT_DIALECT_MEMRT_IR_MEMRTDIALECT_H

#include "mlir/IR/Dialect.h"

#include "memopt/Dialect/MemRT/IR/MemRTOpsDialect.h.inc"

#endif // MEMOPT_DIALECT_MEMRT_IR_MEMRTDIALECT_H
