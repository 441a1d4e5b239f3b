//===- MemRTOps.td - memrt dialect: kernel calls on arena slices -*- tablegen -*-===//
//
// The runtime-facing dialect: buffer semantics. A lowered step is a func.func
// over memrefs whose body slices one arena at fixed byte offsets and calls
// runtime kernels on those slices. memopt-translate writes it as a plan file
// (docs/plan-format.md).
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_DIALECT_MEMRT_IR_MEMRTOPS_TD
#define MEMOPT_DIALECT_MEMRT_IR_MEMRTOPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def MemRT_Dialect : Dialect {
  let name = "memrt";
  let cppNamespace = "::memopt::memrt";
  let summary = "Kernel calls on slices of one statically planned arena";
  let description = [{
    `memrt` is what `--convert-memopt-to-memrt` produces from a memopt graph:
    every value is a statically shaped memref that is either a function
    argument (parameters, state and data, owned by the caller), a slice of
    the function's single arena at a fixed byte offset, a constant, or a view
    of another buffer; every computation is a `memrt.kernel` call that reads
    its `ins` and writes its `outs`. Nothing is allocated or freed at run
    time: the function attribute `memrt.arena_bytes` is the whole
    intermediate memory of the step.

    Function attributes: `memrt.arena_bytes` (i64, the arena size) and
    `memrt.alignment` (i64, a power of two every slice offset is a multiple
    of). Argument attribute: `memrt.role` = `"param"`, `"state"`,
    `"optimizer_state"` or `"data"`. Result attribute: `memrt.updates = N`,
    the result is the next value of argument `N`.
  }];
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let extraClassDeclaration = [{
    static constexpr ::llvm::StringLiteral kArenaBytesAttrName = "memrt.arena_bytes";
    static constexpr ::llvm::StringLiteral kAlignmentAttrName = "memrt.alignment";
    static constexpr ::llvm::StringLiteral kRoleAttrName = "memrt.role";
    static constexpr ::llvm::StringLiteral kUpdatesAttrName = "memrt.updates";
  }];
}

class MemRT_Op<string mnemonic, list<Trait> traits = []>
    : Op<MemRT_Dialect, mnemonic, traits>;

def MemRT_Buffer : MemRefOf<[F16, BF16, F32, F64, I32, I64, UI8]>;
// A kernel's scratch bytes.
def MemRT_Workspace : MemRefRankOf<[I8], [1]>;

def MemRT_ArenaSliceOp : MemRT_Op<"arena_slice", [Pure]> {
  let summary = "a buffer at a fixed byte offset of the function's arena";
  let description = [{
    Names the bytes `[offset, offset + size)` of the enclosing function's
    arena as a buffer of the result type. The slice must lie inside
    `memrt.arena_bytes` and respect `memrt.alignment`. A 1-D `i8` slice is
    a kernel's workspace.

    ```mlir
    %0 = memrt.arena_slice offset 4096 : memref<8x64x32x32xf32>
    %ws = memrt.arena_slice offset 0 : memref<27648xi8>
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$offset);
  let results = (outs MemRefOf<[F16, BF16, F32, F64, I32, I64, UI8, I8]>:$result);
  let assemblyFormat = "`offset` $offset attr-dict `:` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Bytes the slice covers.
    int64_t getSizeInBytes();
  }];
}

def MemRT_ViewOp : MemRT_Op<"view", [Pure]> {
  let summary = "the same bytes seen with another shape";
  let description = [{
    Reinterprets `source` (same element type and count) with the result's
    shape, without copying: what a `memopt.reshape` lowers to.

    ```mlir
    %1 = memrt.view %0 : memref<8x512x1x1xf32> -> memref<8x512xf32>
    ```
  }];
  let arguments = (ins MemRT_Buffer:$source);
  let results = (outs MemRT_Buffer:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

def MemRT_ConstantOp : MemRT_Op<"constant", [Pure]> {
  let summary = "a read-only buffer holding constant elements";
  let description = [{
    ```mlir
    %c = memrt.constant dense<1.250000e-01> : tensor<f32> -> memref<f32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs MemRT_Buffer:$result);
  let assemblyFormat = "$value attr-dict `->` type($result)";
  let hasVerifier = 1;
}

def MemRT_KernelOp : MemRT_Op<"kernel", [AttrSizedOperandSegments]> {
  let summary = "call a runtime kernel on buffers";
  let description = [{
    Runs the runtime kernel `kernel` (a memopt op name without the dialect
    prefix), reading `ins` and writing `outs`, with `attrs` holding every
    attribute of the op it came from (defaults included) under the memopt
    dialect's names. The optional `workspace`, an `i8` arena slice, is
    scratch memory the kernel may use while it runs (the op's
    WorkspaceOpInterface bytes); its contents mean nothing before or after.

    ```mlir
    memrt.kernel "relu" ins(%0 : memref<8x64xf32>) outs(%1 : memref<8x64xf32>) attrs {}
    memrt.kernel "conv2d" ins(%x, %w : memref<8x3x32x32xf32>, memref<16x3x3x3xf32>)
        outs(%y : memref<8x16x32x32xf32>) workspace(%ws : memref<110592xi8>)
        attrs {dilations = array<i64: 1, 1>, groups = 1 : i64,
               padding = array<i64: 1, 1>, strides = array<i64: 1, 1>}
    ```
  }];
  let arguments = (ins StrAttr:$kernel,
                   Arg<Variadic<MemRT_Buffer>, "read", [MemRead]>:$ins,
                   Arg<Variadic<MemRT_Buffer>, "written", [MemWrite]>:$outs,
                   Arg<Optional<MemRT_Workspace>, "scratch",
                       [MemRead, MemWrite]>:$workspace,
                   DictionaryAttr:$attrs);
  let assemblyFormat = [{
    $kernel (`ins` `(` $ins^ `:` type($ins) `)`)? `outs` `(` $outs `:` type($outs) `)`
    (`workspace` `(` $workspace^ `:` type($workspace) `)`)?
    `attrs` $attrs attr-dict
  }];
  let hasVerifier = 1;
}

#endif // MEMOPT_DIALECT_MEMRT_IR_MEMRTOPS_TD
