//===- TestPrintLiveness.cpp - print MemoryAnalysis for FileCheck ---------===//
//
// `--test-memopt-print-liveness`: the memory analysis made visible, as Triton's
// -test-print-allocation does for its allocator. Every number the report
// and the memory passes rely on (sizes, lifetimes, roles, aliases, live
// bytes) can be pinned by a lit test on a small graph.
//
//===----------------------------------------------------------------------===//

#include "memopt/Analysis/MemoryAnalysis.h"
#include "memopt/Dialect/MemOpt/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "llvm/Support/raw_ostream.h"

#define DEBUG_TYPE "test-memopt-print-liveness"

namespace memopt {
#define GEN_PASS_DEF_TESTPRINTLIVENESS
#include "memopt/Dialect/MemOpt/Transforms/Passes.h.inc"
} // namespace memopt

using namespace mlir;
using namespace memopt;

namespace {

struct TestPrintLivenessPass
    : public memopt::impl::TestPrintLivenessBase<TestPrintLivenessPass> {
  using TestPrintLivenessBase::TestPrintLivenessBase;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      if (!func.getBody().hasOneBlock()) {
        func.emitError() << "test-memopt-print-liveness: expected a function body "
                            "of one block";
        return signalPassFailure();
      }
      print(func, llvm::outs());
    }
    markAllAnalysesPreserved();
  }

  static void print(func::FuncOp func, llvm::raw_ostream &os) {
    MemoryAnalysis analysis(func);
    AsmState state(func);
    os << "func @" << func.getSymName() << ": " << analysis.getNumOps()
       << " ops, first backward op " << analysis.getFirstBackwardIndex()
       << ", peak " << analysis.getPeakBytes() << " bytes\n";
    for (const ValueInfo &info : analysis.getValues()) {
      os << "  ";
      if (auto arg = dyn_cast<BlockArgument>(info.value))
        os << "arg/" << arg.getArgNumber();
      else
        os << info.value.getDefiningOp()->getName() << "/" << info.def;
      os << " ";
      info.value.printAsOperand(os, state);
      const ValueInfo &root = *analysis.lookup(info.root);
      os << ": size = " << info.bytes << ", live = [" << root.def << ", "
         << info.end << "], role = " << stringifyValueRole(info.role);
      if (info.isAlias()) {
        os << ", alias of ";
        info.root.printAsOperand(os, state);
      }
      os << "\n";
    }
    for (auto [index, op] : llvm::enumerate(analysis.getOps()))
      os << "  op " << index << " " << op->getName()
         << ": live_bytes = " << analysis.getLiveBytes(index) << "\n";
  }
};

} // namespace
