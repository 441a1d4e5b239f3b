//===- MemOptBase.td - memopt dialect definition -----------*- tablegen -*-===//
//
// The memopt dialect: training graphs with value semantics. This file holds
// the dialect, the type constraints shared by its ops and the base op classes.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_DIALECT_MEMOPT_IR_MEMOPTBASE_TD
#define MEMOPT_DIALECT_MEMOPT_IR_MEMOPTBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "memopt/Dialect/MemOpt/IR/MemOptInterfaces.td"

def MemOpt_Dialect : Dialect {
  let name = "memopt";
  let cppNamespace = "::memopt";
  let summary = "Training graphs for memory-optimising compilation";
  let description = [{
    The `memopt` dialect represents a neural network's training graph with
    value semantics: every op consumes and produces immutable, statically
    shaped builtin tensors (`tensor<32x3x224x224xf32>`) in NCHW layout. A model
    is a `func.func`; argument attributes say what each argument is:

    * `{memopt.param}`: a trainable parameter (float tensor);
    * `{memopt.state}`: non-trainable state, e.g. batch-norm running
      statistics (float tensor);
    * `{memopt.optimizer_state}`: optimizer state (momentum buffers, Adam's
      moments and step count, the loss scale and its growth counter), added
      by `--memopt-autodiff`; `{memopt.initial_value = 6.5536e4 : f64}` gives
      the value a training run starts it at (zero otherwise);
    * no attribute: data (inputs, labels).

    A result may carry `{memopt.updates = N : i64}`: it is the new value of
    argument `N` (an updated parameter, running statistic or optimizer
    state), which a training loop feeds back as that argument next step.

    A training graph returns the loss (`tensor<f32>`) as its first result;
    further results are passed through (e.g. updated running statistics). A
    function that returns no scalar loss is an inference graph.

    Contract relied on by later passes: no op has side effects or aliases its
    operands; in-place execution, frees and buffer offsets are decided by
    the compiler and made explicit only after bufferisation (`memrt`).
    Ops whose result type follows from their operands implement
    `InferTypeOpInterface`, so the custom form omits result types; the
    generic form always lists them and is verified against the inferred type.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let hasConstantMaterializer = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Argument attribute names understood by the dialect.
    static constexpr ::llvm::StringLiteral kParamAttrName = "memopt.param";
    static constexpr ::llvm::StringLiteral kStateAttrName = "memopt.state";
    static constexpr ::llvm::StringLiteral kOptimizerStateAttrName =
        "memopt.optimizer_state";
    static constexpr ::llvm::StringLiteral kUpdatesAttrName = "memopt.updates";
    /// On one rank's step under ZeRO stage 3: the parameters other ranks
    /// own, which it no longer receives — `{arguments = array<i64: ...>,
    /// owners = array<i64: ...>, rows = array<i64: ...>}`, their argument
    /// numbers in the step --memopt-data-parallel was given, and their
    /// owners; `rows` (optional): the parameters of which the step holds
    /// its rows only (divided among the ranks by rows, CollectiveShapes.h).
    static constexpr ::llvm::StringLiteral kShardedAttrName = "memopt.sharded";
    /// Beside `memopt.param`: a parameter the step does not train (no
    /// gradient, no optimizer state, no update).
    static constexpr ::llvm::StringLiteral kFrozenAttrName = "memopt.frozen";
    /// The value a training run starts an argument the compiler added at
    /// (the loss scale); other added state starts at zero.
    static constexpr ::llvm::StringLiteral kInitialValueAttrName =
        "memopt.initial_value";
    /// On a forward graph: the loss scaling `--memopt-autodiff` builds
    /// (`--memopt-mixed-precision` sets it).
    static constexpr ::llvm::StringLiteral kLossScaleAttrName =
        "memopt.loss_scale";
    /// On an op with a workspace: its planned arena offset
    /// (`--memopt-plan-memory`).
    static constexpr ::llvm::StringLiteral kWorkspaceOffsetAttrName =
        "memopt.workspace_offset";
    /// On a function: the most workspace bytes any op's kernel may reserve
    /// (`--memopt-workspace-limit`); no cap without it.
    static constexpr ::llvm::StringLiteral kWorkspaceLimitAttrName =
        "memopt.workspace_limit";
    /// On a function: the workspace bytes every convolution reserves at
    /// least, for faster cuDNN algorithms (`--memopt-conv-workspace`).
    static constexpr ::llvm::StringLiteral kConvWorkspaceAttrName =
        "memopt.conv_workspace";
    /// On an op: its result 0 is computed in place into the operand this
    /// integer names; the two share one buffer (`--memopt-inplace`).
    static constexpr ::llvm::StringLiteral kInPlaceAttrName = "memopt.inplace";
    /// On an op: it recomputes a forward value for the backward pass
    /// (checkpointing, partition); its FLOPs count as recompute FLOPs.
    static constexpr ::llvm::StringLiteral kRecomputeAttrName =
        "memopt.recompute";
    /// On an op: the planned arena offset of each result, -1 for one
    /// without its own buffer (`--memopt-plan-memory`).
    static constexpr ::llvm::StringLiteral kOffsetsAttrName = "memopt.offsets";
    /// On a function: the planned arena size in bytes, and the max-live
    /// bytes no plan can go below (`--memopt-plan-memory`).
    static constexpr ::llvm::StringLiteral kArenaBytesAttrName =
        "memopt.arena_bytes";
    static constexpr ::llvm::StringLiteral kArenaLowerBoundAttrName =
        "memopt.arena_lower_bound";
  }];
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

// Floating-point element types that graphs compute in. f64 is accepted for
// gradient checks on the CPU runtime.
def MemOpt_FloatElement : AnyTypeOf<[F16, BF16, F32, F64]>;
def MemOpt_IndexElement : AnyTypeOf<[I32, I64]>;

def MemOpt_FloatTensor
    : RankedTensorOf<[F16, BF16, F32, F64], [HasStaticShapePred],
                     "statically shaped tensor of f16, bf16, f32 or f64">;
def MemOpt_IndexTensor
    : RankedTensorOf<[I32, I64], [HasStaticShapePred],
                     "statically shaped tensor of i32 or i64">;
def MemOpt_ScalarF32Tensor
    : RankedTensorOf<[F32], [HasAnyRankOfPred<[0]>], "0-d tensor of f32">;
def MemOpt_ScalarI32Tensor
    : RankedTensorOf<[I32], [HasAnyRankOfPred<[0]>], "0-d tensor of i32">;
// 8-bit codes of block-wise quantised optimizer state
// (memopt.adam8bit_update) and the f32 vector of their blocks' scales.
def MemOpt_CodeTensor
    : RankedTensorOf<[UI8], [HasStaticShapePred],
                     "statically shaped tensor of ui8">;
def MemOpt_F32Vector
    : RankedTensorOf<[F32], [HasStaticShapePred, HasAnyRankOfPred<[1]>],
                     "1-d tensor of f32">;
def MemOpt_ScalarFloatTensor
    : RankedTensorOf<[F16, BF16, F32, F64], [HasAnyRankOfPred<[0]>],
                     "0-d tensor of f16, bf16, f32 or f64">;

//===----------------------------------------------------------------------===//
// Base op classes
//===----------------------------------------------------------------------===//

// Every float attribute of a memopt op (alpha, epsilon, momentum, lr, a
// dropout rate, a loss scale) is finite: the math has no meaning for NaN or
// infinity, and a plan cannot carry them as numbers. The native trait
// `FiniteFloatAttributes` refuses them with the attribute named.
def MemOpt_FiniteFloatAttributes : NativeOpTrait<"FiniteFloatAttributes"> {
  let cppNamespace = "::memopt::OpTrait";
}

class MemOpt_Op<string mnemonic, list<Trait> traits = []>
    : Op<MemOpt_Dialect, mnemonic,
         !listconcat([MemOpt_FiniteFloatAttributes], traits)>;

// Result types are inferred from the operands and attributes
// (InferTypeOpInterface), so the custom form omits them. The written result
// types are checked by the native trait `VerifyInferredResultTypes`, which
// reports one located error saying what was expected
// (`expected result shape 8x64x16x16, got 8x64x15x15`). `refineReturnTypes`
// therefore does not refine: the interface's own verifier would add a second,
// generic error to every shape diagnostic.
def MemOpt_VerifyInferredResultTypes
    : NativeOpTrait<"VerifyInferredResultTypes"> {
  let cppNamespace = "::memopt::OpTrait";
}

def MemOpt_InferResultTypes : TraitList<[
  DeclareOpInterfaceMethods<InferTypeOpInterface, ["refineReturnTypes"]>,
  MemOpt_VerifyInferredResultTypes,
  NativeOpTrait<"InferTypeOpAdaptor", [], [{
      static ::llvm::LogicalResult
      inferReturnTypes(::mlir::MLIRContext *context,
                       std::optional<::mlir::Location> location,
                       Adaptor adaptor,
                       ::llvm::SmallVectorImpl<::mlir::Type> &inferredReturnTypes);
    }], [{
      ::llvm::LogicalResult
      $cppClass::inferReturnTypes(::mlir::MLIRContext *context,
          std::optional<::mlir::Location> location,
          ::mlir::ValueRange operands, ::mlir::DictionaryAttr attributes,
          ::mlir::OpaqueProperties properties, ::mlir::RegionRange regions,
          ::llvm::SmallVectorImpl<::mlir::Type> &inferredReturnTypes) {
        // While the custom form is parsed, inherent attributes are still in
        // the dictionary and defaults are not applied yet: assemble complete
        // properties so the shape rules see what the op will hold.
        $cppClass::Properties props;
        if (properties)
          props = *properties.as<$cppClass::Properties *>();
        if (attributes)
          for (::mlir::NamedAttribute attr : attributes)
            $cppClass::setInherentAttr(props, attr.getName().getValue(),
                                       attr.getValue());
        $cppClass::populateDefaultProperties(
            ::mlir::OperationName($cppClass::getOperationName(), context),
            props);
        $cppClass::Adaptor adaptor(operands, attributes,
                                   ::mlir::OpaqueProperties(&props), regions);
        return $cppClass::inferReturnTypes(context, location, adaptor,
                                           inferredReturnTypes);
      }
      ::llvm::LogicalResult
      $cppClass::refineReturnTypes(::mlir::MLIRContext *,
          std::optional<::mlir::Location>, ::mlir::ValueRange,
          ::mlir::DictionaryAttr, ::mlir::OpaqueProperties,
          ::mlir::RegionRange, ::llvm::SmallVectorImpl<::mlir::Type> &) {
        // Checked by VerifyInferredResultTypes; nothing to refine for static
        // shapes.
        return ::mlir::success();
      }
    }]>
]>;

// Listed in an op's traits when its FLOP count is not CostOpInterface's
// element-wise default; the op then implements `getFlops` (CostModel.cpp).
def MemOpt_FlopModel
    : DeclareOpInterfaceMethods<MemOpt_CostOpInterface, ["getFlops"]>;

// Listed in an op's traits when its kernel needs a planned workspace; the op
// then implements `getWorkspaceBytes` (WorkspaceModel.cpp).
def MemOpt_WorkspaceModel
    : DeclareOpInterfaceMethods<MemOpt_WorkspaceOpInterface>;

// The cost trait a computing op's base class adds: the interface with its
// default, unless the op's own traits declare MemOpt_FlopModel (an op cannot
// list an interface twice).
class MemOpt_CostTraits<list<Trait> traits> {
  list<Trait> ret =
      !if(!empty(!filter(t, traits, !eq(t, MemOpt_FlopModel))),
          [MemOpt_CostOpInterface], []);
}

// Listed in an op's traits when its autocast class is not
// PrecisionOpInterface's default (Follow over every float operand); the op
// then implements both methods (PrecisionModel.cpp).
def MemOpt_PrecisionModel
    : DeclareOpInterfaceMethods<MemOpt_PrecisionOpInterface,
                                ["getPrecisionClass", "getPrecisionOperands"]>;

// The precision trait a forward op's base class adds, like MemOpt_CostTraits.
class MemOpt_PrecisionTraits<list<Trait> traits> {
  list<Trait> ret =
      !if(!empty(!filter(t, traits, !eq(t, MemOpt_PrecisionModel))),
          [MemOpt_PrecisionOpInterface], []);
}

// An op of the forward vocabulary: pure, with inferred result types, a
// gradient rule, a FLOP count and an autocast class.
class MemOpt_ForwardOp<string mnemonic, list<Trait> traits = []>
    : MemOpt_Op<mnemonic, !listconcat([Pure, MemOpt_InferResultTypes,
        DeclareOpInterfaceMethods<MemOpt_DifferentiableOpInterface>],
        MemOpt_CostTraits<traits>.ret, MemOpt_PrecisionTraits<traits>.ret,
        traits)>;

#endif // MEMOPT_DIALECT_MEMOPT_IR_MEMOPTBASE_TD
