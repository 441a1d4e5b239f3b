//===- MemOptPlugin.cpp - memopt as a plugin of upstream mlir-opt ---------===//
//
// A shared library that upstream `mlir-opt` (and any MlirOptMain tool built
// on libMLIR.so) loads:
//
//   mlir-opt --load-dialect-plugin=MemOptPlugin.so \
//            --load-pass-plugin=MemOptPlugin.so \
//            --pass-pipeline='builtin.module(memopt-autodiff,memopt-schedule)'
//
// The dialect entry point registers the dialects a memopt graph uses; the
// pass entry point registers memopt's passes, pipelines and conversion
// (not upstream's own passes, which the host already has).
//
//===----------------------------------------------------------------------===//

#include "memopt/Conversion/Passes.h"
#include "memopt/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Compiler.h"

extern "C" LLVM_ATTRIBUTE_WEAK mlir::DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "MemOpt", LLVM_VERSION_STRING,
          [](mlir::DialectRegistry *registry) {
            memopt::registerAllDialects(*registry);
          }};
}

extern "C" LLVM_ATTRIBUTE_WEAK mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "MemOptPasses", LLVM_VERSION_STRING, []() {
            memopt::registerMemOptPasses();
            memopt::registerMemOptPipelines();
            memopt::registerMemOptConversionPasses();
          }};
}
