//===- Dialects.cpp - memopt's MLIR C API ---------------------------------===//

#include "memopt-c/Dialects.h"

#include "memopt/Conversion/Passes.h"
#include "memopt/Dialect/MemOpt/IR/MemOptDialect.h"
#include "memopt/Dialect/MemOpt/Transforms/Passes.h"
#include "memopt/Dialect/MemRT/IR/MemRTDialect.h"
#include "memopt/InitAll.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(MemOpt, memopt, memopt::MemOptDialect)
MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(MemRT, memrt, memopt::memrt::MemRTDialect)

void mlirMemOptRegisterAllDialects(MlirDialectRegistry registry) {
  memopt::registerAllDialects(*unwrap(registry));
}

void mlirRegisterMemOptPasses(void) {
  memopt::registerMemOptPasses();
  memopt::registerMemOptPipelines();
  memopt::registerMemOptConversionPasses();
}
