//===- example-opt.cpp - an out-of-tree mlir-opt with memopt inside -------===//
//
// A compiler of one's own that takes in memopt's dialects and passes from the
// installed package (MemOpt::Transforms, MemOpt::Conversion) next to
// upstream dialects and passes, so one pipeline can mix them:
//   example-opt in.mlir --pass-pipeline='builtin.module(
//       memopt-autodiff{function=step}, func.func(memopt-schedule),
//       convert-scf-to-cf)'
// and `--example-train`, this project's own training pipeline, built from
// C++ through memopt's typed pipeline options (Pipelines.h) rather than
// pipeline text.
//
//===----------------------------------------------------------------------===//

#include "memopt/Dialect/MemOpt/Transforms/Pipelines.h"
#include "memopt/InitAll.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  // memopt's dialects (memopt, memrt, and the func/arith/tensor they use)...
  memopt::registerAllDialects(registry);
  // ...next to this project's own choice of upstream dialects.
  registry.insert<mlir::scf::SCFDialect, mlir::cf::ControlFlowDialect>();

  memopt::registerAllPasses();
  mlir::registerSCFToControlFlowPass();
  // A pipeline of one's own: memopt's, configured as a struct of typed
  // options (enums for the closed choices), then upstream's lowering.
  mlir::PassPipelineRegistration<>(
      "example-train",
      "memopt's training pipeline (Adam, square-root "
      "checkpointing, in place) then convert-scf-to-cf",
      [](mlir::OpPassManager &pm) {
        memopt::MemOptPipelineOptions options;
        options.optimizer = memopt::Optimizer::Adam;
        options.checkpoint = memopt::CheckpointStrategy::Sqrt;
        options.inplace = true;
        memopt::buildMemOptPipeline(pm, options);
        pm.addPass(mlir::createSCFToControlFlowPass());
      });
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "out-of-tree optimizer with memopt\n", registry));
}
