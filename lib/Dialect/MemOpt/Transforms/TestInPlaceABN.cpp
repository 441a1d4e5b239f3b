//===- TestInPlaceABN.cpp - run the InPlace-ABN fusion for tests ----------===//
//
// `--test-memopt-inplace-abn`: calls `fuseInPlaceABN` on every function, so lit
// and the differential tests can exercise the fusion on its own, before it
// is reachable as an option of `--memopt-inplace`.
//
//===----------------------------------------------------------------------===//

#include "memopt/Dialect/MemOpt/Transforms/Passes.h"
#include "memopt/Dialect/MemOpt/Transforms/Transforms.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#define DEBUG_TYPE "test-memopt-inplace-abn"

namespace memopt {
#define GEN_PASS_DEF_TESTINPLACEABN
#include "memopt/Dialect/MemOpt/Transforms/Passes.h.inc"
} // namespace memopt

using namespace mlir;
using namespace memopt;

namespace {

struct TestInPlaceABNPass
    : public memopt::impl::TestInPlaceABNBase<TestInPlaceABNPass> {
  using TestInPlaceABNBase::TestInPlaceABNBase;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      FailureOr<int64_t> fused = fuseInPlaceABN(func);
      if (failed(fused))
        return signalPassFailure();
      numFused += *fused;
    }
  }
};

} // namespace
