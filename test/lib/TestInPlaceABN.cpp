//===- TestInPlaceABN.cpp - run the InPlace-ABN fusion for tests ----------===//
//
// `--test-memopt-inplace-abn`: calls `fuseInPlaceABN` (Transforms.h) on
// every function of a training step built by `--memopt-autodiff`, so lit
// and the differential tests can exercise the fusion on its own, apart
// from the rest of `--memopt-inplace=abn=true`. Test-only: memopt-opt
// registers it, the product libraries and the plugin do not.
//
//===----------------------------------------------------------------------===//

#include "TestPasses.h"
#include "memopt/Dialect/MemOpt/Transforms/Transforms.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace {

struct TestInPlaceABNPass
    : public PassWrapper<TestInPlaceABNPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestInPlaceABNPass)

  StringRef getArgument() const final { return "test-memopt-inplace-abn"; }
  StringRef getDescription() const final {
    return "Fuse batch norm + leaky ReLU/ELU into InPlace-ABN on every "
           "function (fuseInPlaceABN)";
  }

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      FailureOr<int64_t> fused = memopt::fuseInPlaceABN(func);
      if (failed(fused))
        return signalPassFailure();
      numFused += *fused;
    }
  }

  Statistic numFused{this, "fused", "Batch norms fused with their activation"};
};

} // namespace

namespace memopt::test {
void registerTestInPlaceABNPass() { PassRegistration<TestInPlaceABNPass>(); }
} // namespace memopt::test
