//===- ConvWorkspace.cpp - larger workspaces for faster convolutions ------===//
//
// `--memopt-conv-workspace=bytes=B`: records B as the functions'
// `memopt.conv_workspace`, the workspace every convolution reserves at
// least (WorkspaceModel.cpp), which the memory analysis, the planner and the
// lowering apply through getWorkspaceBytes.
//
//===----------------------------------------------------------------------===//

#include "memopt/Dialect/MemOpt/IR/MemOptDialect.h"
#include "memopt/Dialect/MemOpt/Transforms/ForeignIR.h"
#include "memopt/Dialect/MemOpt/Transforms/Passes.h"
#include "memopt/Dialect/MemOpt/Transforms/Transforms.h"

#define DEBUG_TYPE "memopt-conv-workspace"

namespace memopt {
#define GEN_PASS_DEF_MEMOPTCONVWORKSPACE
#include "memopt/Dialect/MemOpt/Transforms/Passes.h.inc"
} // namespace memopt

using namespace mlir;
using namespace memopt;

namespace {

struct MemOptConvWorkspacePass
    : public memopt::impl::MemOptConvWorkspaceBase<MemOptConvWorkspacePass> {
  using MemOptConvWorkspaceBase::MemOptConvWorkspaceBase;

  void runOnOperation() override {
    if (failed(setByteSizeOnGraphs(getOperation(), "memopt-conv-workspace",
                                   bytes, "512MiB, 65536 or 0",
                                   MemOptDialect::kConvWorkspaceAttrName)))
      signalPassFailure();
  }
};

} // namespace
