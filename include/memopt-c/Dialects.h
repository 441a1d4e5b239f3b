/*===- memopt-c/Dialects.h - memopt's MLIR C API ------------------*- C -*-===*\
|*                                                                            *|
|* The dialects and passes of memopt for C (and the Python bindings built on *|
|* C), following upstream's mlir-c conventions: a dialect handle per        *|
|* dialect, and one call that registers every pass so that                   *|
|* mlirParsePassPipeline finds them by name.                                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef MEMOPT_C_DIALECTS_H
#define MEMOPT_C_DIALECTS_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(MemOpt, memopt);
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(MemRT, memrt);

/// Adds every dialect a memopt graph may use (memopt, memrt, func, arith,
/// tensor) to `registry`.
MLIR_CAPI_EXPORTED void mlirMemOptRegisterAllDialects(MlirDialectRegistry registry);

/// Registers memopt's passes, its pipelines (`memopt-pipeline`) and the
/// lowering to memrt with MLIR's global pass registry.
MLIR_CAPI_EXPORTED void mlirRegisterMemOptPasses(void);

#ifdef __cplusplus
}
#endif

#endif /* MEMOPT_C_DIALECTS_H */
