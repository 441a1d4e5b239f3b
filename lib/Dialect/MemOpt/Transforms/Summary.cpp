//===- Summary.cpp - print parameters, state and op counts ----------------===//
//
// `--memopt-summary`: what a graph holds, per function. Used by users to
// sanity-check a model (parameter counts against the reference architecture)
// and by the tests of the model generator.
//
//===----------------------------------------------------------------------===//

#include "memopt/Dialect/MemOpt/IR/MemOptDialect.h"
#include "memopt/Dialect/MemOpt/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"
#include <map>

#define DEBUG_TYPE "memopt-summary"

namespace memopt {
#define GEN_PASS_DEF_MEMOPTSUMMARY
#include "memopt/Dialect/MemOpt/Transforms/Passes.h.inc"
} // namespace memopt

using namespace mlir;
using namespace memopt;

namespace {

/// Element and byte totals of a group of arguments.
struct ArgGroup {
  int64_t tensors = 0;
  int64_t elements = 0;
  int64_t bytes = 0;

  void add(Type type) {
    ++tensors;
    auto shaped = dyn_cast<ShapedType>(type);
    if (!shaped || !shaped.hasStaticShape())
      return;
    elements += shaped.getNumElements();
    bytes += shaped.getNumElements() *
             llvm::divideCeil(shaped.getElementTypeBitWidth(), 8);
  }
};

struct MemOptSummaryPass
    : public memopt::impl::MemOptSummaryBase<MemOptSummaryPass> {
  using MemOptSummaryBase::MemOptSummaryBase;

  void runOnOperation() override {
    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> out = openOutputFile(file, &error);
    if (!out) {
      getOperation().emitError()
          << "memopt-summary: cannot open '" << file << "': " << error;
      return signalPassFailure();
    }
    getOperation().walk([&](func::FuncOp func) { print(func, out->os()); });
    out->keep();
  }

  static void print(func::FuncOp func, llvm::raw_ostream &os) {
    ArgGroup params, state, optimizerState, data;
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
      Type type = func.getArgument(i).getType();
      if (func.getArgAttr(i, MemOptDialect::kParamAttrName))
        params.add(type);
      else if (func.getArgAttr(i, MemOptDialect::kStateAttrName))
        state.add(type);
      else if (func.getArgAttr(i, MemOptDialect::kOptimizerStateAttrName))
        optimizerState.add(type);
      else
        data.add(type);
    }
    std::map<StringRef, int64_t> opCounts; // sorted by op name
    int64_t ops = 0;
    func.walk([&](Operation *op) {
      if (op == func.getOperation() || op->hasTrait<OpTrait::IsTerminator>())
        return;
      ++ops;
      ++opCounts[op->getName().getStringRef()];
    });

    ArrayRef<Type> results = func.getResultTypes();
    auto loss = results.empty() ? RankedTensorType()
                                : dyn_cast<RankedTensorType>(results.front());
    bool training =
        loss && loss.getRank() == 0 && isa<FloatType>(loss.getElementType());

    os << "func @" << func.getSymName() << "\n";
    auto group = [&](StringRef name, const ArgGroup &g) {
      os << "  " << name << ": " << g.elements << " elements in " << g.tensors
         << " tensors (" << g.bytes << " bytes)\n";
    };
    group("parameters", params);
    group("state", state);
    if (optimizerState.tensors)
      group("optimizer state", optimizerState);
    os << "  data: " << data.tensors << " arguments (" << data.bytes
       << " bytes)\n";
    if (training)
      os << "  kind: training (loss + " << results.size() - 1
         << " more results)\n";
    else
      os << "  kind: inference (" << results.size() << " results)\n";
    os << "  ops: " << ops << "\n";
    for (auto &[name, count] : opCounts)
      os << "    " << name << ": " << count << "\n";
  }
};

} // namespace
