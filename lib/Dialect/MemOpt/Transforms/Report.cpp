//===- Report.cpp - the memory report as JSON -----------------------------===//
//
// `--memopt-report`: DESIGN.md §4's report of every function, from
// MemoryAnalysis. It is what users compare across configurations (does
// checkpointing lower the peak, what does it cost in FLOPs) and what the
// benchmarks record, so field names and meanings are a public contract.
//
//===----------------------------------------------------------------------===//

#include "memopt/Dialect/MemOpt/Transforms/ForeignIR.h"
#include "memopt/Analysis/MemoryAnalysis.h"
#include "memopt/Dialect/MemOpt/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
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

Json reportFunction(func::FuncOp func) {
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
    ops.push_back(std::move(entry));
  }
  std::optional<int64_t> arena = analysis.getArenaBytes();
  return Json{{"function", func.getSymName().str()},
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
              {"ops", std::move(ops)}};
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
      reports.push_back(reportFunction(func));
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
