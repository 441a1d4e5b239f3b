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
    if (failed(setByteSizeOnGraphs(getOperation(), "memopt-workspace-limit",
                                   bytes, "4MiB, 65536 or 0",
                                   MemOptDialect::kWorkspaceLimitAttrName)))
      signalPassFailure();
  }
};

} // namespace
