//===- memopt-opt.cpp - memopt optimizer driver ---------------------------===//
//
// The MlirOptMain driver with memopt's dialects and passes registered:
// `memopt-opt graph.mlir --memopt-summary`. The input is read here and
// checked for nesting the parser cannot take (InputLimits.h) before
// MlirOptMain parses it; the output file is kept only on success.
// Diagnostics do not print the op they are attached to unless asked
// (-mlir-print-op-on-diagnostic). The
// test-only passes (test/lib) are registered here and nowhere else.
//
//===----------------------------------------------------------------------===//

#include "TestPasses.h"
#include "memopt/InitAll.h"
#include "memopt/Support/InputLimits.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

/// The printer verifies the module again before printing it (to fall back
/// to the generic form on invalid IR), which at 100,000 ops costs a third of
/// the printing. When the module is verified after parsing and after every
/// pass and nothing prints IR mid-pipeline (where a failed pass can leave it
/// invalid), that second verification cannot fail, so it is skipped unless
/// -mlir-print-assume-verified is given explicitly.
static void assumeVerifiedOutput(const mlir::MlirOptMainConfig &config) {
  auto &options = llvm::cl::getRegisteredOptions();
  auto *assume = static_cast<llvm::cl::opt<bool> *>(
      options.lookup("mlir-print-assume-verified"));
  if (!assume || assume->getNumOccurrences() ||
      !config.shouldVerifyOnParsing() || !config.shouldVerifyPasses())
    return;
  for (llvm::StringRef name :
       {"mlir-print-ir-before", "mlir-print-ir-after",
        "mlir-print-ir-before-all", "mlir-print-ir-after-all",
        "mlir-print-ir-after-change", "mlir-print-ir-after-failure"})
    if (llvm::cl::Option *option = options.lookup(name);
        option && option->getNumOccurrences())
      return;
  *assume = true;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::DialectRegistry registry;
  memopt::registerAllDialects(registry);
  memopt::registerAllPasses();
  memopt::test::registerAllTestPasses();
  // A diagnostic shows its location, not the op: the op of a remark or
  // refusal on a training step is often the whole function (100,000 ops).
  // -mlir-print-op-on-diagnostic=true brings the op back.
  mlir::registerMLIRContextCLOptions();
  if (auto *option = static_cast<llvm::cl::opt<bool> *>(
          llvm::cl::getRegisteredOptions().lookup(
              "mlir-print-op-on-diagnostic")))
    option->setInitialValue(false);
  auto [inputFile, outputFile] = mlir::registerAndParseCLIOptions(
      argc, argv, "memopt optimizer driver\n", registry);
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  assumeVerifiedOutput(config);
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, inputFile, outputFile, registry));

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(inputFile, &error);
  if (!input) {
    llvm::errs() << "memopt-opt: error: " << error << "\n";
    return 1;
  }
  // The scan reads the buffer in place; MlirOptMain gets a copy.
  llvm::SourceMgr sources;
  unsigned id = sources.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(input->getMemBufferRef(),
                                       /*RequiresNullTerminator=*/false),
      llvm::SMLoc());
  if (mlir::failed(memopt::checkBracketNesting(sources, id)))
    return 1;
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFile, &error);
  if (!output) {
    llvm::errs() << "memopt-opt: error: " << error << "\n";
    return 1;
  }
  if (mlir::failed(
          mlir::MlirOptMain(output->os(), std::move(input), registry, config)))
    return 1;
  output->keep();
  return 0;
}
