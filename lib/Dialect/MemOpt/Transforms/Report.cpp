//===- Report.cpp - the memory report as JSON -----------------------------===//
//
// `--memopt-report`: DESIGN.md §4's report of every function, from
// MemoryAnalysis. It is what users compare across configurations (does
// checkpointing lower the peak, what does it cost in FLOPs) and what the
// benchmarks record, so field names and meanings are a public contract.
//
//===----------------------------------------------------------------------===//

#include "memopt/Analysis/MemoryAnalysis.h"
#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"
#include "memopt/Dialect/MemOpt/Transforms/ForeignIR.h"
#include "memopt/Dialect/MemOpt/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"

#include <nlohmann/json.hpp>

#define DEBUG_TYPE "memopt-report"

namespace memopt {
#define GEN_PASS_DEF_MEMOPTREPORT
#include "memopt/Dialect/MemOpt/Transforms/Passes.h.inc"
} // namespace memopt

using namespace mlir;
using namespace memopt;

namespace {

using Json = nlohmann::ordered_json;

/// `file:line:col` of the first file location inside `loc` (what a user
/// looks up in the model source), else MLIR's own spelling.
std::string formatLocation(Location loc) {
  if (auto file = loc->findInstanceOf<FileLineColLoc>())
    return (file.getFilename().getValue() + ":" + Twine(file.getLine()) + ":" +
            Twine(file.getColumn()))
        .str();
  std::string text;
  llvm::raw_string_ostream os(text);
  loc.print(os);
  return text;
}

/// The data-flow fields of `op` (graph=true): what it reads (ops by index
/// and which of their results, arguments by number), the bytes of the
/// buffers it allocates (results that are not views or in place; in all
/// and per result), its scratch bytes, FLOPs, whether it is a forward op
/// and whether it may be run again (no memory effects).
void addGraphFields(Json &entry, Operation *op,
                    const MemoryAnalysis &analysis) {
  Json operands = Json::array(), operandResults = Json::array(),
       arguments = Json::array();
  for (Value v : op->getOperands()) {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      arguments.push_back(arg.getArgNumber());
      continue;
    }
    operands.push_back(analysis.getIndex(v.getDefiningOp()));
    operandResults.push_back(cast<OpResult>(v).getResultNumber());
  }
  int64_t bytes = 0;
  Json each = Json::array();
  for (Value result : op->getResults()) {
    const ValueInfo *info = analysis.lookup(result);
    int64_t b =
        info && !info->isAlias() ? MemoryAnalysis::getValueBytes(result) : 0;
    bytes += b;
    each.push_back(b);
  }
  entry["operands"] = std::move(operands);
  entry["operand_results"] = std::move(operandResults);
  entry["arguments"] = std::move(arguments);
  entry["result_bytes"] = bytes;
  entry["result_bytes_each"] = std::move(each);
  entry["workspace_bytes"] = MemoryAnalysis::getWorkspaceBytes(op);
  entry["flops"] = MemoryAnalysis::getFlops(op);
  entry["forward"] = analysis.isForward(op);
  entry["pure"] = isMemoryEffectFree(op) && op->getNumRegions() == 0;
}

Json reportFunction(func::FuncOp func, bool graph) {
  MemoryAnalysis analysis(func);
  Json ops = Json::array();
  for (auto [index, op] : llvm::enumerate(analysis.getOps())) {
    Json entry{{"index", index},
               {"op", op->getName().getStringRef().str()},
               {"loc", formatLocation(op->getLoc())},
               {"live_bytes", analysis.getLiveBytes(index)}};
    // Which operand's buffer the op writes its result over, when in place.
    if (auto inplace = op->getAttrOfType<IntegerAttr>(kInPlaceAttrName))
      entry["inplace_operand"] = inplace.getInt();
    if (op->hasAttr(kRecomputeAttrName))
      entry["recompute"] = true;
    if (graph)
      addGraphFields(entry, op, analysis);
    ops.push_back(std::move(entry));
  }
  Json results = Json::array(), resultNumbers = Json::array();
  if (graph)
    for (Value v : func.getBody().front().getTerminator()->getOperands()) {
      bool arg = isa<BlockArgument>(v);
      results.push_back(arg ? Json(nullptr)
                            : Json(analysis.getIndex(v.getDefiningOp())));
      resultNumbers.push_back(arg ? Json(nullptr)
                                  : Json(cast<OpResult>(v).getResultNumber()));
    }
  std::optional<int64_t> arena = analysis.getArenaBytes();
  Json report{{"function", func.getSymName().str()},
              {"parameters", Json{{"count", analysis.getParameterCount()},
                                  {"bytes", analysis.getParameterBytes()}}},
              {"gradient_bytes", analysis.getGradientBytes()},
              {"optimizer_state_bytes", analysis.getOptimizerStateBytes()},
              {"forward_allocated_bytes", analysis.getForwardAllocatedBytes()},
              {"saved_for_backward_bytes", analysis.getSavedForBackwardBytes()},
              {"peak_bytes", analysis.getPeakBytes()},
              {"arena_bytes", arena ? Json(*arena) : Json(nullptr)},
              {"recompute_flops", analysis.getRecomputeFlops()},
              {"total_flops", analysis.getTotalFlops()},
              {"clipped_gradient_bytes", analysis.getClippedGradientBytes()},
              {"ops", std::move(ops)}};
  // Data-parallel steps: what the collectives carry and hold.
  int64_t ranks = 0, buckets = 0, scatters = 0, broadcasts = 0, gathers = 0,
          largest = 0, workspace = 0;
  // A bucket of gradients (not stage 2's sums of flags and norms).
  auto bucket = [&](Operation *op, ValueRange values, int64_t &count) {
    ++count;
    int64_t bytes = 0;
    for (Value v : values)
      bytes += MemoryAnalysis::getValueBytes(v);
    largest = std::max(largest, bytes);
    workspace = std::max(workspace, MemoryAnalysis::getWorkspaceBytes(op));
  };
  for (Operation *op : analysis.getOps()) {
    if (auto reduce = dyn_cast<AllReduceOp>(op)) {
      ranks = reduce.getRanks();
      if (!reduce.getSum())
        bucket(op, reduce.getValues(), buckets);
    } else if (auto scatter = dyn_cast<ReduceScatterOp>(op)) {
      ranks = scatter.getRanks();
      bucket(op, scatter.getValues(), scatters);
    } else if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
      ranks = broadcast.getRanks();
      ++broadcasts;
    } else if (auto gather = dyn_cast<AllGatherOp>(op)) {
      ranks = gather.getRanks();
      ++gathers;
    }
  }
  if (ranks)
    report["collectives"] = Json{{"ranks", ranks},
                                 {"all_reduce_buckets", buckets},
                                 {"reduce_scatter_buckets", scatters},
                                 {"largest_bucket_bytes", largest},
                                 {"largest_workspace_bytes", workspace},
                                 {"broadcasts", broadcasts},
                                 {"all_gathers", gathers}};
  if (graph) {
    report["arguments_bytes"] = MemoryAnalysis::getPersistentBytes(func);
    report["results"] = std::move(results);
    report["result_numbers"] = std::move(resultNumbers);
  }
  return report;
}

struct MemOptReportPass
    : public memopt::impl::MemOptReportBase<MemOptReportPass> {
  using MemOptReportBase::MemOptReportBase;

  void runOnOperation() override {
    Json reports = Json::array();
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!isMemOptGraph(func) ||
          (!function.empty() && func.getSymName() != function))
        continue;
      if (failed(verifyTransformable(func, "memopt-report")))
        return signalPassFailure();
      reports.push_back(reportFunction(func, graph));
    }
    if (!function.empty() && reports.empty()) {
      getOperation().emitError()
          << "memopt-report: no function named '" << function << "'";
      return signalPassFailure();
    }

    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> out = openOutputFile(file, &error);
    if (!out) {
      getOperation().emitError()
          << "memopt-report: cannot open '" << file << "': " << error;
      return signalPassFailure();
    }
    // One function: its object, as DESIGN.md §4 shows; otherwise an array,
    // so a reader always gets every function. LLVM builds without
    // exceptions: invalid UTF-8 (a location's file name) is replaced rather
    // than thrown on.
    const Json &json = reports.size() == 1 ? reports.front() : reports;
    out->os() << json.dump(2, ' ', /*ensure_ascii=*/false,
                           Json::error_handler_t::replace)
              << "\n";
    out->keep();
    markAllAnalysesPreserved();
  }
};

} // namespace
