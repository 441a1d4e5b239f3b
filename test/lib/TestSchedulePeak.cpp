//===- TestSchedulePeak.cpp - the scheduler's peak against the analysis ---===//
//
// `--test-memopt-schedule-peak`: schedules every training graph as
// `--memopt-schedule` does and prints the peak the scheduler computed on its
// own tables (scheduleFunction picks between the greedy and program orders
// by it without applying both) next to MemoryAnalysis's peak of the
// scheduled IR, and the arena lower bound the scheduler computes for that
// order without applying it (scheduledArenaLowerBound, which checkpointing
// measures candidates by) next to the planner's bound of the scheduled IR;
// the peak without applying the order (scheduledPeak, which the partition
// measures candidates by) must be the one applying it reports.
// Each pair must agree; a mismatch is an error, so lit tests
// over varied steps (views, in place, mixed precision, checkpointing)
// guard the scheduler's model of lifetimes in release builds, where the
// assertion in scheduleFunction is compiled out.
//
//===----------------------------------------------------------------------===//

#include "TestPasses.h"
#include "memopt/Analysis/MemoryAnalysis.h"
#include "memopt/Dialect/MemOpt/Transforms/Transforms.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {

/// --memopt-plan-memory's default alignment: a buffer that is not a
/// multiple of it makes rounding show.
constexpr int64_t kAlignment = 64;

struct TestSchedulePeakPass
    : public PassWrapper<TestSchedulePeakPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestSchedulePeakPass)

  StringRef getArgument() const final { return "test-memopt-schedule-peak"; }
  StringRef getDescription() const final {
    return "Schedule every function and print the scheduler's peak next to "
           "MemoryAnalysis's; an error where they differ";
  }

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      if (!func.getBody().hasOneBlock()) {
        func.emitError() << "test-memopt-schedule-peak: expected a function "
                            "body of one block";
        return signalPassFailure();
      }
      // The arena bound of the order the scheduler keeps, from its tables
      // on a copy it does not reorder (candidates are measured so).
      FailureOr<int64_t> tableBound, tablePeak;
      {
        auto copy = cast<func::FuncOp>(func->clone());
        tableBound = memopt::scheduledArenaLowerBound(copy, kAlignment);
        tablePeak = memopt::scheduledPeak(copy);
        copy->erase();
      }
      if (failed(tableBound) || failed(tablePeak))
        return signalPassFailure();
      int64_t scheduled = 0;
      if (failed(memopt::scheduleFunction(func, &scheduled)))
        return signalPassFailure();
      int64_t analysed = memopt::MemoryAnalysis(func).getPeakBytes();
      int64_t bound = memopt::getArenaLowerBound(func, kAlignment);
      llvm::outs() << "func @" << func.getSymName() << ": peak " << scheduled
                   << " bytes, analysis " << analysed << " bytes; arena bound "
                   << *tableBound << " bytes, analysis " << bound << " bytes\n";
      if (*tablePeak != scheduled) {
        func.emitError() << "test-memopt-schedule-peak: the peak without "
                            "applying the order, "
                         << *tablePeak << ", differs from the one applied, "
                         << scheduled;
        return signalPassFailure();
      }
      if (scheduled != analysed) {
        func.emitError() << "test-memopt-schedule-peak: the scheduler's peak "
                         << scheduled << " differs from MemoryAnalysis's "
                         << analysed;
        return signalPassFailure();
      }
      if (*tableBound != bound) {
        func.emitError() << "test-memopt-schedule-peak: the scheduler's arena "
                            "bound "
                         << *tableBound << " differs from the planner's "
                         << bound;
        return signalPassFailure();
      }
    }
  }
};

} // namespace

namespace memopt::test {
void registerTestSchedulePeakPass() {
  PassRegistration<TestSchedulePeakPass>();
}
} // namespace memopt::test
