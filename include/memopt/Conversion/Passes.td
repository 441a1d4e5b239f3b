//===- Passes.td - memopt conversion passes ----------------*- tablegen -*-===//
//
// Conversions out of the memopt dialect, one central file as in CIRCT.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_CONVERSION_PASSES_TD
#define MEMOPT_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertMemOptToMemRT : Pass<"convert-memopt-to-memrt", "mlir::ModuleOp"> {
  let summary = "Bufferise memopt graphs onto one arena of memrt kernel calls";
  let description = [{
    Turns every function of memopt ops into a function over memrefs: tensors
    become arena slices at fixed byte offsets, each memopt op a
    `memrt.kernel` call with all its attributes (defaults included),
    `memopt.reshape` a `memrt.view`, tensor constants `memrt.constant`.
    Argument roles (`memopt.param`, `memopt.state`, data) become
    `memrt.role`. An op with a workspace (WorkspaceOpInterface) passes
    its kernel an `i8` arena slice of that size as `workspace`. Ops of any
    other dialect are an error.

    Until the memory planner assigns offsets, every buffer gets its own
    offset (a bump allocation in op order, each offset a multiple of
    `alignment`), and the function's `memrt.arena_bytes` is their sum.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"64",
           "Byte alignment of every arena slice (a power of two)">
  ];
  let dependentDialects = ["::memopt::memrt::MemRTDialect",
                           "::mlir::func::FuncDialect"];
  let statistics = [
    Statistic<"numKernels", "kernels", "Number of memrt.kernel calls created">
  ];
}

#endif // MEMOPT_CONVERSION_PASSES_TD
