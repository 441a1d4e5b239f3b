//===- MemOptInterfaces.td - what passes ask memopt ops ----*- tablegen -*-===//
//
// The knowledge passes need lives on the ops, as interfaces: autodiff and the
// memory passes ask an op for its gradient rule and for exactly the values
// that rule reads, never switch over op names.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_DIALECT_MEMOPT_IR_MEMOPTINTERFACES_TD
#define MEMOPT_DIALECT_MEMOPT_IR_MEMOPTINTERFACES_TD

include "mlir/IR/OpBase.td"

def MemOpt_DifferentiableOpInterface
    : OpInterface<"DifferentiableOpInterface"> {
  let cppNamespace = "::memopt";
  let description = [{
    An op with a gradient rule. `getSavedForBackward` names the op's own
    operands and results that the rule reads: these are the forward values a
    training step must keep (or recompute) until the backward pass reaches
    the op, and `buildGradients` may read no other forward value.
  }];
  let methods = [
    InterfaceMethod<[{
        The operands and results of this op that its gradient rule reads.
      }],
      "::llvm::SmallVector<::mlir::Value>", "getSavedForBackward", (ins)>,
    InterfaceMethod<[{
        Builds, at the builder's insertion point, the gradient of every
        operand `i` with `needed[i]` set, given the gradient of each result
        (`resultGrads[j]`, null when result `j` does not reach the loss).
        Writes one entry per operand into `operandGrads` (null where not
        needed or not differentiable, e.g. labels). Fails with a diagnostic
        when the rule cannot handle this instance.
      }],
      "::llvm::LogicalResult", "buildGradients",
      (ins "::mlir::OpBuilder &":$builder,
           "::llvm::ArrayRef<::mlir::Value>":$resultGrads,
           "::llvm::ArrayRef<bool>":$needed,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>,
  ];
}

#endif // MEMOPT_DIALECT_MEMOPT_IR_MEMOPTINTERFACES_TD
