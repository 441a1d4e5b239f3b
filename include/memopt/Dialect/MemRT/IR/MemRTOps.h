//===- MemRTOps.h - memrt operations ----------------------------*- C++ -*-===//
//
// Declares the ops of the memrt dialect (generated from MemRTOps.td).
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_DIALECT_MEMRT_IR_MEMRTOPS_H
#define MEMOPT_DIALECT_MEMRT_IR_MEMRTOPS_H

#include "memopt/Dialect/MemRT/IR/MemRTDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace memopt::memrt {

/// Bytes a statically shaped memref or tensor occupies (sub-byte element
/// types round up to whole bytes per element).
int64_t getSizeInBytes(mlir::ShapedType type);

} // namespace memopt::memrt

#define GET_OP_CLASSES
#include "memopt/Dialect/MemRT/IR/MemRTOps.h.inc"

#endif // MEMOPT_DIALECT_MEMRT_IR_MEMRTOPS_H
