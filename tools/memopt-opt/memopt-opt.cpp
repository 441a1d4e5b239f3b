//===- memopt-opt.cpp - memopt optimizer driver ---------------------------===//
//
// The MlirOptMain driver with memopt's dialects and passes registered:
// `memopt-opt graph.mlir --memopt-summary`.
//
//===----------------------------------------------------------------------===//

#include "memopt/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  memopt::registerAllDialects(registry);
  memopt::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "memopt optimizer driver\n", registry));
}
