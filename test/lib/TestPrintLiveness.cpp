//===- TestPrintLiveness.cpp - print MemoryAnalysis for FileCheck ---------===//
//
// `--test-memopt-print-liveness`: the memory analysis made visible, as
// upstream's -test-print-liveness and Triton's -test-print-allocation do.
// Every number the report and the memory passes rely on (sizes, lifetimes,
// roles, aliases, live bytes) can be pinned by a lit test on a small graph;
// MemoryAnalysis::print writes them. Test-only: memopt-opt registers it,
// the product libraries and the plugin do not.
//
//===----------------------------------------------------------------------===//

#include "TestPasses.h"
#include "memopt/Analysis/MemoryAnalysis.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {

struct TestPrintLivenessPass
    : public PassWrapper<TestPrintLivenessPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestPrintLivenessPass)

  StringRef getArgument() const final { return "test-memopt-print-liveness"; }
  StringRef getDescription() const final {
    return "Print the memory analysis of every function: one line per "
           "tensor value (size, live range, role, alias), then the live "
           "bytes at each op";
  }

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      if (!func.getBody().hasOneBlock()) {
        func.emitError() << "test-memopt-print-liveness: expected a function "
                            "body of one block";
        return signalPassFailure();
      }
      memopt::MemoryAnalysis(func).print(llvm::outs());
    }
    markAllAnalysesPreserved();
  }
};

} // namespace

namespace memopt::test {
void registerTestPrintLivenessPass() {
  PassRegistration<TestPrintLivenessPass>();
}
} // namespace memopt::test
