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

def MemOpt_CostOpInterface : OpInterface<"CostOpInterface"> {
  let cppNamespace = "::memopt";
  let description = [{
    The arithmetic an op performs, in floating-point operations (a
    multiply-add counts two). The memory report totals it per training step
    and checkpointing weighs what it would recompute with it, so the model
    only has to rank ops correctly, not time them: element-wise and data
    movement ops cost one operation per element of the largest tensor they
    read or write (the default), convolutions and matrix products their
    multiply-adds, normalisations about five operations per element. Ops
    whose cost is not the default declare `MemOpt_FlopModel` and implement
    `getFlops` (CostModel.cpp); ops without the interface (constants, frees)
    do no arithmetic worth counting.
  }];
  let methods = [
    InterfaceMethod<[{
        Floating-point operations this op performs once.
      }],
      "int64_t", "getFlops", (ins), /*methodBody=*/"",
      /*defaultImplementation=*/[{
        int64_t largest = 0;
        auto consider = [&](::mlir::Type type) {
          auto shaped = ::llvm::dyn_cast<::mlir::ShapedType>(type);
          if (shaped && shaped.hasStaticShape())
            largest = std::max<int64_t>(largest, shaped.getNumElements());
        };
        for (::mlir::Type type : $_op->getOperandTypes())
          consider(type);
        for (::mlir::Type type : $_op->getResultTypes())
          consider(type);
        return largest;
      }]>,
  ];
}

def MemOpt_InPlaceOpInterface : OpInterface<"InPlaceOpInterface"> {
  let cppNamespace = "::memopt";
  let description = [{
    An op whose kernel may write result 0 over one of its operands: each
    output element depends only on the input elements at the same index (or
    the kernel reads everything it needs before it writes). `--memopt-inplace`
    asks for the candidates and marks the op `memopt.inplace = N` when operand
    N's buffer is dead afterwards in the whole step; the memory analysis, the
    schedule, the planner and the lowering then treat result 0 as living in
    that buffer.

    The default: every operand whose type equals result 0's (so a
    broadcasting operand of `add` is not a candidate).
  }];
  let methods = [
    InterfaceMethod<[{
        Operand indices the kernel can write result 0 over, in order of
        preference.
      }],
      "::llvm::SmallVector<unsigned>", "getInPlaceOperands", (ins),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{
        ::llvm::SmallVector<unsigned> candidates;
        ::mlir::Type result = $_op->getResult(0).getType();
        for (auto [i, operand] : ::llvm::enumerate($_op->getOperands()))
          if (operand.getType() == result)
            candidates.push_back(static_cast<unsigned>(i));
        return candidates;
      }]>,
  ];
}

def MemOpt_PrecisionOpInterface : OpInterface<"PrecisionOpInterface"> {
  let cppNamespace = "::memopt";
  let description = [{
    How `--memopt-mixed-precision` types an op, in the terms of PyTorch's
    autocast lists. `Allow` ops (convolution, linear, matmul) compute in the
    low precision: every precision operand is cast to f16 (or bf16). `Deny`
    ops (softmax, layer norm, losses, reductions) compute in f32: low
    precision operands are cast up. `Follow` ops (element-wise, data
    movement, pooling, batch norm's activation) run in the widest type of
    their precision operands, like PyTorch's type promotion.

    The precision operands are the float operands the class applies to. By
    default every float operand; batch norm names only `x`, so its scale,
    shift and running statistics stay f32 while `x` and `y` follow the
    activations (cuDNN's mixed batch norm).
  }];
  let methods = [
    InterfaceMethod<[{
        The op's autocast class.
      }],
      "::memopt::PrecisionClass", "getPrecisionClass", (ins),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{
        return ::memopt::PrecisionClass::Follow;
      }]>,
    InterfaceMethod<[{
        Indices of the operands whose element type the class decides.
      }],
      "::llvm::SmallVector<unsigned>", "getPrecisionOperands", (ins),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{
        return ::memopt::floatOperandIndices($_op);
      }]>,
  ];
}

def MemOpt_WorkspaceOpInterface : OpInterface<"WorkspaceOpInterface"> {
  let cppNamespace = "::memopt";
  let description = [{
    An op whose kernel needs scratch memory while it runs, beyond its
    operands and results: the im2col matrix of a convolution, the partial
    sums of a parallel reduction. The memory analysis counts it as live
    during the op, `--memopt-plan-memory` reserves it in the arena for that
    op alone (`memopt.workspace_offset`), and the lowering hands it to the
    kernel as a `workspace` buffer, so a backend allocates nothing at run
    time: what cuDNN and cuBLAS workspaces are in PyTorch, here a planned
    slice. Backends use at most the bytes the plan reserves and choose their
    algorithms accordingly (WorkspaceModel.cpp documents each op's model).
    The function attribute `memopt.workspace_limit` (bytes) caps every op's
    reservation, trading kernel speed for memory.
  }];
  let methods = [
    InterfaceMethod<[{
        Scratch bytes the op's kernel uses while it runs (0: none) when the
        plan grants it at most `limit` bytes (INT64_MAX: no cap). A kernel
        that cannot run in less than some minimum returns that minimum even
        above `limit`; one with a path that needs nothing returns 0.
        `memopt::getWorkspaceBytes(op)` applies the enclosing function's
        `memopt.workspace_limit`.
      }],
      "int64_t", "getWorkspaceBytes", (ins "int64_t":$limit)>,
  ];
}

def MemOpt_OptimizerUpdateOpInterface
    : OpInterface<"OptimizerUpdateOpInterface"> {
  let cppNamespace = "::memopt";
  let description = [{
    An optimizer's update of one parameter (`memopt.sgd_update`,
    `memopt.adam_update`, `memopt.adafactor_update`, ...): it reads the
    parameter and its gradient, and its results are the new parameter
    (result 0) and the new optimizer state. The memory analysis counts the
    gradient it consumes as a gradient and its results as optimizer values;
    the schedule runs it as soon as its gradient is final; gradient
    re-checks recognise it. Every update takes the optional `skip` flag and
    loss scale of dynamic loss scaling.
  }];
  let methods = [
    InterfaceMethod<"The parameter before the update.", "::mlir::Value",
                    "getParam">,
    InterfaceMethod<"The gradient the update consumes.", "::mlir::Value",
                    "getGrad">,
    InterfaceMethod<"The skip flag (dynamic loss scaling), or null.",
                    "::mlir::Value", "getSkip">,
  ];
}

#endif // MEMOPT_DIALECT_MEMOPT_IR_MEMOPTINTERFACES_TD
