//===- Compile.h - compile a memopt graph to a plan in process --*- C++ -*-===//
//
// What memopt-run (and the differential tests) do between reading a graph
// and running it: pick the function, derive argument names and
// initialisers, run the pipeline down to memrt and write the plan JSON.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_DRIVER_COMPILE_H
#define MEMOPT_DRIVER_COMPILE_H

#include "memopt/Analysis/ArgumentInit.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/SourceMgr.h"

#include "mlir/Pass/PassManager.h"

#include <functional>
#include <string>
#include <vector>

namespace memopt {

struct CompileOptions {
  /// The function to compile; empty: the module's only function.
  std::string function;
  /// Arena slice alignment in bytes.
  int64_t alignment = 64;
  /// A textual pass pipeline over the module, run before lowering to memrt
  /// (`memopt-autodiff{optimizer=adam}`); empty for none.
  std::string pipeline;
  /// Or the passes themselves, added to a module pass manager (memopt-run
  /// calls buildMemOptPipeline here); used instead of `pipeline` when set.
  std::function<void(mlir::OpPassManager &)> passes;
};

struct CompiledGraph {
  std::string functionName;
  /// Source-level argument names (`%conv1_w` -> "conv1_w"), or "argN".
  std::vector<std::string> argumentNames;
  /// How to initialise each argument (computed on the memopt graph).
  std::vector<ArgumentInit> argumentInit;
  /// Plan file contents (docs/plan-format.md), arguments named.
  std::string planJson;

  /// Under ZeRO stage 3, the source's parameters this rank's step no longer
  /// receives (other ranks own them), in source order.
  struct ShardedParameter {
    /// Its position among the source's arguments.
    size_t sourceIndex;
    std::string name;
    ArgumentInit init;
    /// The element type's name as the plan writes it ("f32") and the shape.
    std::string dtype;
    std::vector<int64_t> shape;
    int64_t owner;
  };
  std::vector<ShardedParameter> sharded;
  /// Under ZeRO stage 3, the parameters of which this rank's step holds its
  /// rows only (divided among the ranks by rows, CollectiveShapes.h).
  struct RowParameter {
    /// Its plan argument.
    size_t argument;
    /// The whole parameter's shape.
    std::vector<int64_t> shape;
  };
  std::vector<RowParameter> rowParameters;
};

/// Argument names as written in the source (`%images` -> "images"), read
/// back through each block argument's location; "argN" where the source has
/// none or a name repeats.
std::vector<std::string> sourceArgumentNames(mlir::func::FuncOp func,
                                             llvm::SourceMgr &sources);

/// Compiles `module` (memopt dialect) in place down to memrt and writes the
/// plan. Diagnostics go to the context's handler; fails without output.
llvm::FailureOr<CompiledGraph> compileToPlan(mlir::ModuleOp module,
                                             llvm::SourceMgr &sources,
                                             const CompileOptions &options);

} // namespace memopt

#endif // MEMOPT_DRIVER_COMPILE_H
