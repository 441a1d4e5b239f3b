//===- memopt-translate.cpp - memopt translation driver -------------------===//
//
// Translations out of MLIR: `memopt-translate --memrt-to-plan step.mlir`.
//
//===----------------------------------------------------------------------===//

#include "memopt/Target/Plan/PlanEmitter.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  memopt::registerToPlanTranslation();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "memopt translation driver\n"));
}
