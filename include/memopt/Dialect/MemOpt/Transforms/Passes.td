//===- Passes.td - memopt dialect passes -------------------*- tablegen -*-===//
//
// Passes over training graphs in the memopt dialect.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_DIALECT_MEMOPT_TRANSFORMS_PASSES_TD
#define MEMOPT_DIALECT_MEMOPT_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def MemOptSummary : Pass<"memopt-summary", "mlir::ModuleOp"> {
  let summary = "Print each function's parameters, state, data and op counts";
  let description = [{
    An analysis-only pass: for every function it prints how many parameter,
    state and data elements (and bytes) its arguments hold, whether it is a
    training graph (first result a scalar loss) and how many ops of each kind
    it contains. The IR is left unchanged.

    ```
    func @mlp_train
      parameters: 535818 elements in 6 tensors (2143272 bytes)
      state: 0 elements in 0 tensors (0 bytes)
      data: 2 arguments (200960 bytes)
      kind: training (loss + 0 more results)
      ops: 7
        memopt.cross_entropy: 1
        ...
    ```
  }];
  let options = [
    Option<"file", "file", "std::string", /*default=*/"\"-\"",
           "Where to write the summary ('-' for stdout)">
  ];
}

#endif // MEMOPT_DIALECT_MEMOPT_TRANSFORMS_PASSES_TD
