//===- PlanMemory.cpp - a static arena offset for every buffer ------------===//
//
// `--memopt-plan-memory`: lifetimes from MemoryAnalysis (each op's
// workspace living during that op alone), offsets from the ArenaPlanner (best
// of several heuristics), checked by the planner's independent verifier before
// they are written to the IR.
//
//===----------------------------------------------------------------------===//

#include "memopt/Analysis/ArenaPlanner.h"
#include "memopt/Analysis/MemoryAnalysis.h"
#include "memopt/Dialect/MemOpt/IR/MemOptDialect.h"
#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"
#include "memopt/Dialect/MemOpt/Transforms/ForeignIR.h"
#include "memopt/Dialect/MemOpt/Transforms/Passes.h"
#include "memopt/Dialect/MemOpt/Transforms/Transforms.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/ThreadPool.h"

#define DEBUG_TYPE "memopt-plan-memory"

namespace memopt {
#define GEN_PASS_DEF_MEMOPTPLANMEMORY
#include "memopt/Dialect/MemOpt/Transforms/Passes.h.inc"
} // namespace memopt

using namespace mlir;
using namespace memopt;

namespace {

/// Whether the lowering gives `value`'s defining op an arena slice for it
/// (views and in-place results share their operand's).
bool ownsArenaSlice(const ValueInfo &info) {
  return !info.isArgument() && !info.isAlias() && info.bytes != 0 &&
         memopt::ownsArenaSlice(info.value);
}

struct MemOptPlanMemoryPass
    : public memopt::impl::MemOptPlanMemoryBase<MemOptPlanMemoryPass> {
  using MemOptPlanMemoryBase::MemOptPlanMemoryBase;

  void runOnOperation() override {
    if (failed(verifyAlignmentOption(getOperation(), "memopt-plan-memory",
                                     alignment)))
      return signalPassFailure();
    FailureOr<std::optional<int64_t>> parsed =
        parseBudgetOption(getOperation(), "memopt-plan-memory", budget);
    if (failed(parsed))
      return signalPassFailure();
    budgetBytes = *parsed;
    SmallVector<func::FuncOp> graphs;
    if (failed(
            collectMemOptGraphs(getOperation(), "memopt-plan-memory", graphs)))
      return signalPassFailure();
    for (func::FuncOp func : graphs)
      if (failed(plan(func)))
        return signalPassFailure();
  }

  LogicalResult plan(func::FuncOp func) {
    int64_t buffers = 0;
    FailureOr<int64_t> arena = planFunctionMemory(func, alignment, &buffers);
    if (failed(arena))
      return failure();
    numBuffers += buffers;
    if (!budgetBytes)
      return success();
    int64_t step = MemoryAnalysis::getStepBytes(func, *arena, alignment);
    if (step <= *budgetBytes)
      return success();
    int64_t outside = MemoryAnalysis::getPersistentBytes(func);
    return func.emitOpError("needs ")
           << formatByteSize(step) << " for its step (arena " << *arena
           << " bytes, arguments and constants " << outside
           << " bytes, alignment padding " << step - *arena - outside
           << " bytes), more than the budget of "
           << formatByteSize(*budgetBytes)
           << " (checkpointing with strategy=budget fits a training step "
              "into a budget by recomputing activations)";
  }

  std::optional<int64_t> budgetBytes;
};

/// The buffers of the arena: each value that owns an arena slice (its
/// value in `owners`), then each op's workspace, live during that op alone
/// (its op in `workspaceOwners`).
void collectBuffers(const MemoryAnalysis &analysis,
                    SmallVectorImpl<BufferLifetime> &buffers,
                    SmallVectorImpl<Value> &owners,
                    SmallVectorImpl<Operation *> &workspaceOwners) {
  for (const ValueInfo &info : analysis.getValues()) {
    if (!ownsArenaSlice(info))
      continue;
    BufferLifetime buffer;
    buffer.id = owners.size();
    buffer.size = static_cast<uint64_t>(info.bytes);
    buffer.start = info.def;
    buffer.end = std::max(info.def, info.end);
    buffers.push_back(buffer);
    owners.push_back(info.value);
  }
  for (auto [index, op] : llvm::enumerate(analysis.getOps())) {
    int64_t bytes = MemoryAnalysis::getWorkspaceBytes(op);
    if (bytes <= 0)
      continue;
    BufferLifetime buffer;
    buffer.id = buffers.size();
    buffer.size = static_cast<uint64_t>(bytes);
    buffer.start = buffer.end = static_cast<int64_t>(index);
    buffers.push_back(buffer);
    workspaceOwners.push_back(op);
  }
}

} // namespace

bool memopt::ownsArenaSlice(Value root) {
  Operation *def = root.getDefiningOp();
  return def && isa<MemOptDialect>(def->getDialect());
}

int64_t memopt::getArenaLowerBound(func::FuncOp func, int64_t alignment) {
  MemoryAnalysis analysis(func);
  SmallVector<BufferLifetime> buffers;
  SmallVector<Value> owners;
  SmallVector<Operation *> workspaceOwners;
  collectBuffers(analysis, buffers, owners, workspaceOwners);
  return static_cast<int64_t>(
      lowerBound(buffers, static_cast<uint64_t>(alignment)));
}

namespace {
/// What --memopt-plan-memory places in a function (see collectBuffers) and
/// where.
struct PlannedBuffers {
  SmallVector<BufferLifetime> buffers;
  SmallVector<Value> owners;
  SmallVector<Operation *> workspaceOwners;
  ArenaPlan arena;
};
} // namespace

/// The buffers of `func` (analysed as `analysis`) planned as
/// --memopt-plan-memory plans them, the heuristics racing on the context's
/// threads where it has them (the plan is the same either way:
/// ArenaPlanner.h), and checked. A plan over `limit` has no offsets to
/// check (`ArenaPlan::exceedsLimit`).
static FailureOr<PlannedBuffers> planBuffers(func::FuncOp func,
                                             const MemoryAnalysis &analysis,
                                             int64_t alignment,
                                             uint64_t limit) {
  PlannedBuffers planned;
  collectBuffers(analysis, planned.buffers, planned.owners,
                 planned.workspaceOwners);
  PlannerOptions options;
  options.arenaLimit = limit;
  MLIRContext *context = func.getContext();
  if (context->isMultithreadingEnabled())
    options.threadPool = &context->getThreadPool();
  planned.arena =
      planArena(planned.buffers, static_cast<uint64_t>(alignment), options);
  if (planned.arena.exceedsLimit)
    return planned;
  if (llvm::Error error = verifyArenaPlan(planned.buffers, planned.arena)) {
    func.emitOpError("internal error: the arena plan failed verification: ")
        << llvm::toString(std::move(error));
    return failure();
  }
  return planned;
}

static LogicalResult verifySingleBlock(func::FuncOp func) {
  if (func.getBody().hasOneBlock())
    return success();
  return func.emitOpError("memopt-plan-memory expects a single-block function");
}

FailureOr<std::optional<int64_t>>
memopt::planArenaBytes(func::FuncOp func, int64_t alignment, uint64_t limit) {
  if (failed(verifySingleBlock(func)))
    return failure();
  FailureOr<PlannedBuffers> planned =
      planBuffers(func, MemoryAnalysis(func), alignment, limit);
  if (failed(planned))
    return failure();
  if (planned->arena.exceedsLimit)
    return std::optional<int64_t>();
  return std::optional<int64_t>(static_cast<int64_t>(planned->arena.arenaSize));
}

FailureOr<int64_t> memopt::planFunctionMemory(func::FuncOp func,
                                              int64_t alignment,
                                              int64_t *numBuffers) {
  if (failed(verifySingleBlock(func)))
    return failure();
  MemoryAnalysis analysis(func);
  FailureOr<PlannedBuffers> planned = planBuffers(
      func, analysis, alignment, std::numeric_limits<uint64_t>::max());
  if (failed(planned))
    return failure();
  ArrayRef<BufferLifetime> buffers = planned->buffers;
  ArrayRef<Value> owners = planned->owners;
  ArrayRef<Operation *> workspaceOwners = planned->workspaceOwners;
  size_t numValueBuffers = owners.size();
  ArenaPlan &arena = planned->arena;
  if (numBuffers)
    *numBuffers = static_cast<int64_t>(buffers.size());

  // One offset per result; -1 where the result owns no arena slice. A
  // collective with no results here (a reduce-scatter of which this rank
  // owns nothing) is planned too: it runs. Lists by op position, written in
  // block order, under attribute names made once (a 100k-op step sets as
  // many attributes).
  ArrayRef<Operation *> ops = analysis.getOps();
  std::vector<std::optional<SmallVector<int64_t, 1>>> offsets(ops.size());
  for (auto [position, op] : llvm::enumerate(ops))
    if (isa<MemOptDialect>(op->getDialect()) &&
        (op->getNumResults() > 0 || isCollective(op)))
      offsets[position].emplace(op->getNumResults(), -1);
  ArrayRef<uint64_t> valueOffsets(arena.offsets.data(), numValueBuffers);
  for (auto [value, offset] : llvm::zip(owners, valueOffsets)) {
    auto result = cast<OpResult>(value);
    (*offsets[analysis.getIndex(result.getOwner())])[result.getResultNumber()] =
        static_cast<int64_t>(offset);
  }
  Builder b(func.getContext());
  StringAttr offsetsName = b.getStringAttr(MemOptDialect::kOffsetsAttrName);
  StringAttr workspaceName =
      b.getStringAttr(MemOptDialect::kWorkspaceOffsetAttrName);
  for (auto [op, list] : llvm::zip_equal(ops, offsets))
    if (list)
      op->setDiscardableAttr(offsetsName, b.getDenseI64ArrayAttr(*list));
  for (auto [op, offset] :
       llvm::zip(workspaceOwners,
                 ArrayRef<uint64_t>(arena.offsets).drop_front(numValueBuffers)))
    op->setDiscardableAttr(workspaceName,
                           b.getI64IntegerAttr(static_cast<int64_t>(offset)));
  func->setAttr(MemOptDialect::kArenaBytesAttrName,
                b.getI64IntegerAttr(static_cast<int64_t>(arena.arenaSize)));
  func->setAttr(MemOptDialect::kArenaLowerBoundAttrName,
                b.getI64IntegerAttr(static_cast<int64_t>(arena.lowerBound)));
  return static_cast<int64_t>(arena.arenaSize);
}
