//===- InitAll.h - register memopt dialects and passes ----------*- C++ -*-===//
//
// One place that knows every dialect and pass memopt's tools need, so
// memopt-opt, memopt-run and embedders register the same set.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_INITALL_H
#define MEMOPT_INITALL_H

#include "memopt/Conversion/Passes.h"
#include "memopt/Dialect/MemOpt/IR/MemOptDialect.h"
#include "memopt/Dialect/MemOpt/Transforms/Passes.h"
#include "memopt/Dialect/MemRT/IR/MemRTDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace memopt {

/// Adds the dialects a memopt graph may contain to `registry`.
inline void registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<MemOptDialect, memrt::MemRTDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::tensor::TensorDialect>();
  // func.call inlines (with memopt's own DialectInlinerInterface).
  mlir::func::registerInlinerExtension(registry);
}

/// Registers memopt's passes (and the core MLIR transforms pipelines mix in)
/// with the global pass registry.
inline void registerAllPasses() {
  registerMemOptPasses();
  registerMemOptPipelines();
  registerMemOptConversionPasses();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerInliner();
  mlir::registerSymbolDCE();
}

} // namespace memopt

#endif // MEMOPT_INITALL_H
