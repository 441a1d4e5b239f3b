//===- WorkspaceLimit.cpp - cap every kernel's planned workspace ----------===//
//
// `--memopt-workspace-limit=bytes=B`: records the cap as the functions'
// `memopt.workspace_limit`, which WorkspaceOpInterface's users (the memory
// analysis, the planner, the lowering) apply through getWorkspaceBytes.
//
//===----------------------------------------------------------------------===//

#include "memopt/Dialect/MemOpt/IR/MemOptDialect.h"
#include "memopt/Dialect/MemOpt/Transforms/ForeignIR.h"
#include "memopt/Dialect/MemOpt/Transforms/Passes.h"
#include "memopt/Dialect/MemOpt/Transforms/Transforms.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "memopt-workspace-limit"

namespace memopt {
#define GEN_PASS_DEF_MEMOPTWORKSPACELIMIT
#include "memopt/Dialect/MemOpt/Transforms/Passes.h.inc"
} // namespace memopt

using namespace mlir;
using namespace memopt;

namespace {

struct MemOptWorkspaceLimitPass
    : public memopt::impl::MemOptWorkspaceLimitBase<MemOptWorkspaceLimitPass> {
  using MemOptWorkspaceLimitBase::MemOptWorkspaceLimitBase;

  void runOnOperation() override {
    std::optional<int64_t> limit = parseByteSize(bytes);
    if (!limit) {
      getOperation()->emitError()
          << "memopt-workspace-limit: bytes must be a byte size such as "
             "4MiB, 65536 or 0, got '"
          << bytes << "'";
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> graphs;
    if (failed(collectMemOptGraphs(getOperation(), "memopt-workspace-limit",
                                   graphs)))
      return signalPassFailure();
    Builder b(&getContext());
    for (func::FuncOp func : graphs)
      func->setAttr(MemOptDialect::kWorkspaceLimitAttrName,
                    b.getI64IntegerAttr(*limit));
  }
};

} // namespace
