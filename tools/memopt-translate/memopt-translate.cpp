//===- memopt-translate.cpp - memopt translation driver -------------------===//
//
// Translations into and out of MLIR:
//   memopt-translate --import-onnx model.onnx -o model.mlir   (ONNX -> memopt)
//   memopt-translate --memrt-to-plan step.mlir                (memrt -> plan)
//
//===----------------------------------------------------------------------===//

#include "memopt/Target/ONNX/ONNXImporter.h"
#include "memopt/Target/Plan/PlanEmitter.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  memopt::registerToPlanTranslation();
  memopt::registerFromONNXTranslation();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "memopt translation driver\n"));
}
