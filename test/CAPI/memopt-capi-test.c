/*===- memopt-capi-test.c - memopt's C API, driven from C -----------------===*\
|*                                                                            *|
|* Registers memopt's dialects and passes through the C API, parses a        *|
|* forward graph, runs --memopt-autodiff and --memopt-schedule from a        *|
|* textual pipeline and prints the result (checked by                         *|
|* test/CAPI/capi.test). Exits non-zero on any failure.                        *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "memopt-c/Dialects.h"

#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"

#include <stdio.h>

static void print(MlirStringRef text, void *userData) {
  (void)userData;
  fwrite(text.data, 1, text.length, stdout);
}

static void printError(MlirStringRef text, void *userData) {
  (void)userData;
  fwrite(text.data, 1, text.length, stderr);
}

static const char *kGraph =
    "func.func @mlp(%w: tensor<3x4xf32> {memopt.param}, %x: tensor<2x4xf32>,\n"
    "               %y: tensor<2xi64>) -> tensor<f32> {\n"
    "  %h = memopt.linear %x, %w : tensor<2x4xf32>, tensor<3x4xf32>\n"
    "  %r = memopt.relu %h : tensor<2x3xf32>\n"
    "  %l = memopt.cross_entropy %r, %y : tensor<2x3xf32>, tensor<2xi64>\n"
    "  return %l : tensor<f32>\n"
    "}\n";

int main(void) {
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  mlirMemOptRegisterAllDialects(registry);
  MlirContext ctx = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  mlirRegisterMemOptPasses();

  MlirDialectHandle handle = mlirGetDialectHandle__memopt__();
  MlirStringRef ns = mlirDialectHandleGetNamespace(handle);
  printf("dialect: %.*s\n", (int)ns.length, ns.data);

  MlirModule module =
      mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(kGraph));
  if (mlirModuleIsNull(module)) {
    fprintf(stderr, "memopt-capi-test: the graph did not parse\n");
    return 1;
  }
  MlirPassManager pm = mlirPassManagerCreate(ctx);
  MlirOpPassManager opm = mlirPassManagerGetAsOpPassManager(pm);
  MlirLogicalResult parsed = mlirParsePassPipeline(
      opm,
      mlirStringRefCreateFromCString(
          "builtin.module(memopt-autodiff{optimizer=momentum},memopt-schedule)"),
      printError, NULL);
  if (mlirLogicalResultIsFailure(parsed)) {
    fprintf(stderr, "memopt-capi-test: the pipeline did not parse\n");
    return 1;
  }
  if (mlirLogicalResultIsFailure(
          mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module)))) {
    fprintf(stderr, "memopt-capi-test: the pipeline failed\n");
    return 1;
  }
  mlirOperationPrint(mlirModuleGetOperation(module), print, NULL);
  printf("\n");
  mlirPassManagerDestroy(pm);
  mlirModuleDestroy(module);
  mlirContextDestroy(ctx);
  return 0;
}
