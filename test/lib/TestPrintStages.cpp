//===- TestPrintStages.cpp - print StageChain for FileCheck ---------------===//
//
// `--test-memopt-print-stages`: checkpointing's view of each training step
// (StageChain.h) made visible, so lit tests can pin where the forward pass
// is cut, how wide the cuts are and what each stage's backward reads.
// Test-only: memopt-opt registers it, the product libraries and the plugin
// do not.
//
//===----------------------------------------------------------------------===//

#include "TestPasses.h"
#include "memopt/Analysis/StageChain.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {

struct TestPrintStagesPass
    : public PassWrapper<TestPrintStagesPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestPrintStagesPass)

  StringRef getArgument() const final { return "test-memopt-print-stages"; }
  StringRef getDescription() const final {
    return "Print checkpointing's stage chain of every function: its stages, "
           "cut width, and what each stage's backward reads";
  }

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      if (!func.getBody().hasOneBlock()) {
        func.emitError() << "test-memopt-print-stages: expected a function "
                            "body of one block";
        return signalPassFailure();
      }
      llvm::outs() << "func @" << func.getSymName() << ": ";
      memopt::StageChain::build(func).print(llvm::outs());
    }
    markAllAnalysesPreserved();
  }
};

} // namespace

namespace memopt::test {
void registerTestPrintStagesPass() { PassRegistration<TestPrintStagesPass>(); }
} // namespace memopt::test
