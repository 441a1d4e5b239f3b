//===- MemOptOps.td - memopt forward ops -------------------*- tablegen -*-===//
//
// The forward-op vocabulary of DESIGN.md §2. Names, operand order and
// attribute names are a public contract: the generic form of every op must
// parse. An optional operand (a bias) is always the single trailing one.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_DIALECT_MEMOPT_IR_MEMOPTOPS_TD
#define MEMOPT_DIALECT_MEMOPT_IR_MEMOPTOPS_TD

include "memopt/Dialect/MemOpt/IR/MemOptBase.td"

def MemOpt_AnyTensor
    : RankedTensorOf<[F16, BF16, F32, F64, I32, I64], [HasStaticShapePred],
                     "statically shaped tensor of f16, bf16, f32, f64, i32 or i64">;

defvar Pair11 = "{1, 1}";
defvar Pair00 = "{0, 0}";

//===----------------------------------------------------------------------===//
// Convolution, linear, matmul
//===----------------------------------------------------------------------===//

def MemOpt_Conv2DOp : MemOpt_ForwardOp<"conv2d",
    [MemOpt_FlopModel, MemOpt_PrecisionModel, MemOpt_WorkspaceModel]> {
  let summary = "2-D convolution (cross-correlation), NCHW";
  let description = [{
    Cross-correlates an `N×C×H×W` input with a `K×(C/groups)×R×S` weight and
    adds an optional bias of `K` elements, as `torch.nn.functional.conv2d`.
    `padding` is symmetric: `[ph, pw]` rows on top and bottom, columns on left
    and right. The result is `N×K×OH×OW` with
    `OH = (H + 2·ph − dh·(R−1) − 1) / sh + 1` (likewise `OW`).

    ```mlir
    %y = memopt.conv2d %x, %w, %b {padding = array<i64: 1, 1>, strides = array<i64: 2, 2>}
        : tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>
    // %y : tensor<8x16x16x16xf32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$input, MemOpt_FloatTensor:$weight,
                   Optional<MemOpt_FloatTensor>:$bias,
                   DefaultValuedAttr<DenseI64ArrayAttr, Pair11>:$strides,
                   DefaultValuedAttr<DenseI64ArrayAttr, Pair00>:$padding,
                   DefaultValuedAttr<DenseI64ArrayAttr, Pair11>:$dilations,
                   DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs MemOpt_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` type($input) `,` type($weight)
    (`,` type($bias)^)?
  }];
}

def MemOpt_LinearOp : MemOpt_ForwardOp<"linear",
    [MemOpt_FlopModel, MemOpt_PrecisionModel]> {
  let summary = "fully connected layer: x·Wᵀ + b";
  let description = [{
    Multiplies the trailing dimension of `input` (`…×I`) by the transpose of
    `weight` (`O×I`, PyTorch's layout) and adds an optional bias of `O`
    elements, as `torch.nn.functional.linear`. The result is `…×O`.

    ```mlir
    %y = memopt.linear %x, %w, %b : tensor<64x784xf32>, tensor<512x784xf32>, tensor<512xf32>
    // %y : tensor<64x512xf32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$input, MemOpt_FloatTensor:$weight,
                   Optional<MemOpt_FloatTensor>:$bias);
  let results = (outs MemOpt_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` type($input) `,` type($weight)
    (`,` type($bias)^)?
  }];
}

def MemOpt_MatMulOp : MemOpt_ForwardOp<"matmul",
    [MemOpt_FlopModel, MemOpt_PrecisionModel]> {
  let summary = "batched matrix product with broadcasting batch dimensions";
  let description = [{
    Computes `a·b` over the two trailing dimensions (`…×M×K` times `…×K×N`,
    after optional transposition of either operand's trailing two
    dimensions); leading batch dimensions broadcast as in NumPy. Both
    operands have rank ≥ 2.

    ```mlir
    %s = memopt.matmul %q, %k {transpose_b = true}
        : tensor<2x12x64x64xf32>, tensor<2x12x64x64xf32>
    // %s : tensor<2x12x64x64xf32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$a, MemOpt_FloatTensor:$b,
                   DefaultValuedAttr<BoolAttr, "false">:$transpose_a,
                   DefaultValuedAttr<BoolAttr, "false">:$transpose_b);
  let results = (outs MemOpt_FloatTensor:$result);
  let assemblyFormat = "$a `,` $b attr-dict `:` type($a) `,` type($b)";
}

//===----------------------------------------------------------------------===//
// Element-wise activations
//===----------------------------------------------------------------------===//

class MemOpt_UnaryOp<string mnemonic, string pytorch, list<Trait> traits = []>
    : MemOpt_ForwardOp<mnemonic, !listconcat([MemOpt_InPlaceOpInterface],
                                             traits)> {
  let summary = "element-wise " # mnemonic;
  let description = [{
    Applies }] # pytorch # [{ element-wise; the result has the operand's type.

    ```mlir
    %y = memopt.}] # mnemonic # [{ %x : tensor<8x64x32x32xf32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$x);
  let results = (outs MemOpt_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
}

def MemOpt_ReluOp : MemOpt_UnaryOp<"relu", "`max(x, 0)` (`torch.relu`)">;
def MemOpt_GeluOp
    : MemOpt_UnaryOp<"gelu", "the exact GELU `x·Φ(x)` (`torch.nn.functional.gelu`)">;
def MemOpt_SigmoidOp
    : MemOpt_UnaryOp<"sigmoid", "the logistic function `1/(1+e^(−x))`">;
def MemOpt_TanhOp : MemOpt_UnaryOp<"tanh", "the hyperbolic tangent">;
def MemOpt_SiluOp : MemOpt_UnaryOp<"silu",
    "SiLU, `x·sigmoid(x)` (`torch.nn.functional.silu`; its gradient rule keeps x alone)">;
// exp and log run in f32 under mixed precision (autocast's fp32 list).
def MemOpt_ExpOp
    : MemOpt_UnaryOp<"exp", "`e^x` (`torch.exp`)", [MemOpt_PrecisionModel]>;
def MemOpt_LogOp
    : MemOpt_UnaryOp<"log", "the natural logarithm (`torch.log`; NaN below 0, −inf at 0)",
                     [MemOpt_PrecisionModel]>;
def MemOpt_SqrtOp
    : MemOpt_UnaryOp<"sqrt", "the square root (`torch.sqrt`; NaN below 0)">;
def MemOpt_AbsOp : MemOpt_UnaryOp<"abs", "`|x|` (`torch.abs`)">;

def MemOpt_LeakyReluOp : MemOpt_UnaryOp<"leaky_relu",
    "`x` for `x ≥ 0` and `alpha·x` otherwise (`torch.nn.LeakyReLU`)"> {
  let arguments = (ins MemOpt_FloatTensor:$x,
                   DefaultValuedAttr<F64Attr, "0.01">:$alpha);
}

def MemOpt_EluOp : MemOpt_UnaryOp<"elu",
    "`x` for `x > 0` and `alpha·(e^x − 1)` otherwise (`torch.nn.ELU`)"> {
  let arguments = (ins MemOpt_FloatTensor:$x,
                   DefaultValuedAttr<F64Attr, "1.0">:$alpha);
}

def MemOpt_ClampOp : MemOpt_UnaryOp<"clamp",
    "`min(max(x, min), max)` (`torch.clamp`; `F.relu6` is `[0, 6]`, "
    "`F.hardtanh` `[-1, 1]`), a NaN passed through. A bound left out does "
    "not clamp; `min ≤ max`"> {
  let arguments = (ins MemOpt_FloatTensor:$x, OptionalAttr<F64Attr>:$min,
                   OptionalAttr<F64Attr>:$max);
  let hasVerifier = 1;
}

def MemOpt_CompareOp : MemOpt_ForwardOp<"compare"> {
  let summary = "element-wise comparison with a constant, as 0/1 in f32";
  let description = [{
    `x predicate value` element-wise: 1 where it holds, 0 where it does not,
    as f32 of `x`'s shape, for `x` of a float or an index type (compared in
    double: exact for every float and integer below 2^53). `predicate` is
    one of `eq`, `ne`, `lt`, `le`, `gt`, `ge`; a NaN compares unequal to
    everything (`torch.eq`, `ne`, `lt`, … and their `.float()`). A mask from
    the data, `ids != pad_id`, is one: its 0/1 floats are what the ONNX
    importer holds booleans as. Its gradient is 0 (a step function).

    ```mlir
    %m = memopt.compare %ids {predicate = "ne", value = 0.0 : f64} : tensor<8x128xi64>
    // %m : tensor<8x128xf32>
    ```
  }];
  let arguments = (ins AnyTypeOf<[MemOpt_FloatTensor, MemOpt_IndexTensor]>:$x,
                   StrAttr:$predicate, F64Attr:$value);
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Broadcasting binary ops
//===----------------------------------------------------------------------===//

class MemOpt_BinaryOp<string mnemonic, string what, string formula = "",
                      string details = "">
    : MemOpt_ForwardOp<mnemonic, [MemOpt_InPlaceOpInterface]> {
  let summary = "element-wise " # what # " with NumPy broadcasting";
  let description = [{
    Computes the element-wise }] # what # [{ of `lhs` and `rhs`}] # formula
      # [{, which have the
    same element type. Shapes broadcast as in NumPy: aligned from the
    trailing dimension, each pair of sizes equal or one of them 1.}] # details
      # [{

    ```mlir
    %y = memopt.}] # mnemonic # [{ %a, %b : tensor<8x64x32x32xf32>, tensor<64x1x1xf32>
    // %y : tensor<8x64x32x32xf32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$lhs, MemOpt_FloatTensor:$rhs);
  let results = (outs MemOpt_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
}

def MemOpt_AddOp : MemOpt_BinaryOp<"add", "sum">;
def MemOpt_SubOp : MemOpt_BinaryOp<"sub", "difference", " (`lhs - rhs`)">;
def MemOpt_MulOp : MemOpt_BinaryOp<"mul", "product">;
def MemOpt_DivOp : MemOpt_BinaryOp<"div", "quotient", " (`lhs / rhs`)", [{
    Division follows IEEE 754 like `torch.div`: a zero divisor gives ±inf, or
    NaN for `0 / 0`.}]>;
def MemOpt_MaximumOp : MemOpt_BinaryOp<"maximum", "maximum",
    " (`torch.maximum`)", [{
    A NaN in either operand gives NaN. The gradient is `torch.maximum`'s:
    all of `grad` to the larger operand, half to each where they are equal.}]>;
def MemOpt_MinimumOp : MemOpt_BinaryOp<"minimum", "minimum",
    " (`torch.minimum`)", [{
    A NaN in either operand gives NaN. The gradient is `torch.minimum`'s:
    all of `grad` to the smaller operand, half to each where they are
    equal.}]>;

//===----------------------------------------------------------------------===//
// Reductions to the largest or smallest element
//===----------------------------------------------------------------------===//

class MemOpt_ReduceExtremumOp<string mnemonic, string what, string torch>
    : MemOpt_ForwardOp<mnemonic> {
  let summary = "the " # what # " along the last dimension";
  let description = [{
    The }] # what # [{ of each row along the last dimension of `x`, kept as
    a dimension of size 1 (`torch.}] # torch # [{(x, dim=-1, keepdim=True)`).
    A NaN in a row gives NaN. The gradient is `torch.}] # torch # [{`'s:
    `grad` split evenly among the elements equal to the result (`x.}] #
    !if(!eq(torch, "amax"), "max", "min") # [{()` splits the same way;
    `x.}] # !if(!eq(torch, "amax"), "max", "min") # [{(dim).values` gives it
    all to one of them, which differs only where a row ties). Reductions over
    other or several dimensions move them last with `transpose` and flatten
    them with `reshape` first.

    ```mlir
    %m = memopt.}] # mnemonic # [{ %x : tensor<8x128x64xf32>
    // %m : tensor<8x128x1xf32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$x);
  let results = (outs MemOpt_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
}

def MemOpt_ReduceMaxOp
    : MemOpt_ReduceExtremumOp<"reduce_max", "largest element", "amax">;
def MemOpt_ReduceMinOp
    : MemOpt_ReduceExtremumOp<"reduce_min", "smallest element", "amin">;

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

def MemOpt_BatchNormOp : MemOpt_ForwardOp<"batch_norm",
    [MemOpt_FlopModel, MemOpt_PrecisionModel,
     AllTypesMatch<["gamma", "beta", "running_mean", "running_var"]>]> {
  let summary = "batch normalisation in training mode";
  let description = [{
    Normalises `x` (`N×C×…`) per channel with the batch statistics, scales by
    `gamma` and shifts by `beta`, as `torch.nn.functional.batch_norm` with
    `training=True`. It also returns the updated running statistics:
    `new_mean = (1 − momentum)·running_mean + momentum·mean` and likewise the
    variance, updated with the unbiased batch variance (PyTorch's rule). The
    normalisation uses the biased variance and `epsilon`. The four per-channel
    operands share one type, which may differ in precision from `x` (mixed
    precision keeps statistics in f32).

    ```mlir
    %y, %mean, %var = memopt.batch_norm %x, %g, %b, %rm, %rv
        : tensor<8x64x32x32xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$x, MemOpt_FloatTensor:$gamma,
                   MemOpt_FloatTensor:$beta, MemOpt_FloatTensor:$running_mean,
                   MemOpt_FloatTensor:$running_var,
                   DefaultValuedAttr<F64Attr, "1e-05">:$epsilon,
                   DefaultValuedAttr<F64Attr, "0.1">:$momentum);
  let results = (outs MemOpt_FloatTensor:$result,
                 MemOpt_FloatTensor:$new_running_mean,
                 MemOpt_FloatTensor:$new_running_var);
  let assemblyFormat = [{
    $x `,` $gamma `,` $beta `,` $running_mean `,` $running_var attr-dict `:`
    type($x) `,` type($gamma)
  }];
  let extraClassDeclaration = [{
    /// The running-statistics operand that result `resultNumber` is the new
    /// value of (null for `y`).
    ::mlir::Value getUpdatedState(unsigned resultNumber) {
      if (resultNumber == 1)
        return getRunningMean();
      if (resultNumber == 2)
        return getRunningVar();
      return {};
    }
  }];
}

def MemOpt_BatchNormInferenceOp : MemOpt_Op<"batch_norm_inference", [Pure,
    MemOpt_FlopModel, MemOpt_PrecisionModel, MemOpt_InPlaceOpInterface,
    AllTypesMatch<["x", "result"]>,
    AllTypesMatch<["gamma", "beta", "running_mean", "running_var"]>]> {
  let summary = "batch normalisation in evaluation mode";
  let description = [{
    Normalises `x` per channel with the running statistics instead of the
    batch's, as `torch.nn.functional.batch_norm` with `training=False`:
    `(x − running_mean) / √(running_var + epsilon) · gamma + beta`. What
    `--memopt-eval-mode` turns `memopt.batch_norm` into.

    ```mlir
    %y = memopt.batch_norm_inference %x, %g, %b, %rm, %rv
        : tensor<8x64x32x32xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$x, MemOpt_FloatTensor:$gamma,
                   MemOpt_FloatTensor:$beta, MemOpt_FloatTensor:$running_mean,
                   MemOpt_FloatTensor:$running_var,
                   DefaultValuedAttr<F64Attr, "1e-05">:$epsilon);
  let results = (outs MemOpt_FloatTensor:$result);
  let assemblyFormat = [{
    $x `,` $gamma `,` $beta `,` $running_mean `,` $running_var attr-dict `:`
    type($x) `,` type($gamma)
  }];
  let hasVerifier = 1;
}

def MemOpt_LayerNormOp : MemOpt_ForwardOp<"layer_norm",
    [MemOpt_FlopModel, MemOpt_PrecisionModel, AllTypesMatch<["gamma", "beta"]>]> {
  let summary = "layer normalisation over the trailing dimensions";
  let description = [{
    Normalises `x` over its trailing dimensions given by the shape of `gamma`
    (PyTorch's `normalized_shape`), then scales by `gamma` and shifts by
    `beta`, as `torch.nn.functional.layer_norm`.

    ```mlir
    %y = memopt.layer_norm %x, %g, %b : tensor<4x128x768xf32>, tensor<768xf32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$x, MemOpt_FloatTensor:$gamma,
                   MemOpt_FloatTensor:$beta,
                   DefaultValuedAttr<F64Attr, "1e-05">:$epsilon);
  let results = (outs MemOpt_FloatTensor:$result);
  let assemblyFormat =
      "$x `,` $gamma `,` $beta attr-dict `:` type($x) `,` type($gamma)";
}

def MemOpt_RmsNormOp : MemOpt_ForwardOp<"rms_norm",
    [MemOpt_FlopModel, MemOpt_PrecisionModel]> {
  let summary = "RMS normalisation over the trailing dimensions";
  let description = [{
    Divides `x` by the root mean square of its trailing dimensions given by
    the shape of `gamma`, then scales by `gamma`:
    `x · rsqrt(mean(x²) + epsilon) · gamma`, as `torch.nn.functional.rms_norm`
    and LLaMA's `RMSNorm` (no mean subtracted, no shift).

    Its gradient rule saves `x` and `gamma` only: the backward recomputes
    each row's root mean square, so neither the normalised rows nor a
    per-row statistic are kept. The ONNX importer recognises the exporters'
    chain `x · 1/sqrt(mean(x^2) + eps) · w` as this op.

    ```mlir
    %y = memopt.rms_norm %x, %g {epsilon = 1.0e-06 : f64}
        : tensor<4x1024x4096xf32>, tensor<4096xf32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$x, MemOpt_FloatTensor:$gamma,
                   DefaultValuedAttr<F64Attr, "1e-06">:$epsilon);
  let results = (outs MemOpt_FloatTensor:$result);
  let assemblyFormat = "$x `,` $gamma attr-dict `:` type($x) `,` type($gamma)";
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

class MemOpt_Pool2DOp<string mnemonic, string what>
    : MemOpt_ForwardOp<mnemonic> {
  let summary = "2-D " # what # " pooling, NCHW";
  let description = [{
    Pools `x` (`N×C×H×W`) with windows of `kernel_size`, moved by `strides`
    (default: `kernel_size`), after symmetric `padding` of at most half the
    window, as `torch.nn.functional.}] # mnemonic # [{`. Output sizes round
    down: `OH = (H + 2·ph − kh) / sh + 1`.

    ```mlir
    %y = memopt.}] # mnemonic # [{ %x {kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, strides = array<i64: 2, 2>}
        : tensor<8x64x112x112xf32>
    // %y : tensor<8x64x56x56xf32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$x, DenseI64ArrayAttr:$kernel_size,
                   OptionalAttr<DenseI64ArrayAttr>:$strides,
                   DefaultValuedAttr<DenseI64ArrayAttr, Pair00>:$padding);
  let results = (outs MemOpt_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
  let extraClassDeclaration = [{
    /// The window strides: `strides` when given, else `kernel_size`.
    ::llvm::ArrayRef<int64_t> getEffectiveStrides() {
      return getStrides() ? *getStrides() : getKernelSize();
    }
  }];
}

def MemOpt_MaxPool2DOp : MemOpt_Pool2DOp<"max_pool2d", "max">;
def MemOpt_AvgPool2DOp : MemOpt_Pool2DOp<"avg_pool2d", "average"> {
  // PyTorch's default count_include_pad=True: padded zeros count in the mean.
}

def MemOpt_GlobalAvgPool2DOp : MemOpt_ForwardOp<"global_avg_pool2d",
    [MemOpt_PrecisionModel]> {
  let summary = "mean over the spatial dimensions";
  let description = [{
    Averages `x` (`N×C×H×W`) over `H` and `W`, giving `N×C`, as
    `torch.nn.AdaptiveAvgPool2d(1)` followed by `flatten(1)`.

    ```mlir
    %y = memopt.global_avg_pool2d %x : tensor<8x512x7x7xf32>
    // %y : tensor<8x512xf32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$x);
  let results = (outs MemOpt_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
}

//===----------------------------------------------------------------------===//
// Softmax and dropout
//===----------------------------------------------------------------------===//

def MemOpt_SoftmaxOp : MemOpt_ForwardOp<"softmax", [MemOpt_PrecisionModel]> {
  let summary = "softmax along an axis, optionally causally masked";
  let description = [{
    Computes `exp(x − max) / Σ exp(x − max)` along `axis` (negative values
    count from the back). With `causal = true` (attention scores) entries
    `j > i` of the two trailing dimensions are masked to zero probability;
    this needs `axis` to be the last dimension and the trailing two
    dimensions to be square.

    A row whose every entry is −inf (every key masked) is NaN, as
    `torch.softmax`'s; with `safe = true` it is 0, as PyTorch's
    `_safe_softmax` inside `F.scaled_dot_product_attention` (the exporters
    write it as `Where(IsNaN(P), 0, P)`). Its gradient is then 0.

    ```mlir
    %p = memopt.softmax %s {causal = true} : tensor<2x12x64x64xf32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$x,
                   DefaultValuedAttr<I64Attr, "-1">:$axis,
                   DefaultValuedAttr<BoolAttr, "false">:$causal,
                   DefaultValuedAttr<BoolAttr, "false">:$safe);
  let results = (outs MemOpt_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
}

def MemOpt_DropoutOp
    : MemOpt_ForwardOp<"dropout", [MemOpt_InPlaceOpInterface]> {
  let summary = "inverted dropout with a seeded mask";
  let description = [{
    Zeroes each element with probability `p` and scales the others by
    `1/(1 − p)`, as `torch.nn.functional.dropout` in training mode. The mask
    is a pure function of `seed`, the training step and the element index, so
    it can be regenerated (for backward or recomputation) instead of stored.

    ```mlir
    %y = memopt.dropout %x {p = 1.000000e-01 : f64, seed = 7 : i64} : tensor<4x128x768xf32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$x,
                   DefaultValuedAttr<F64Attr, "0.5">:$p,
                   DefaultValuedAttr<I64Attr, "0">:$seed);
  let results = (outs MemOpt_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def MemOpt_ReshapeOp : MemOpt_Op<"reshape", [Pure, MemOpt_PrecisionOpInterface,
    DeclareOpInterfaceMethods<MemOpt_DifferentiableOpInterface>]> {
  let summary = "reinterpret a tensor with a new shape";
  let description = [{
    Returns `x`'s elements in row-major order with the result type's shape;
    the element count and type are unchanged. Needs no copy at runtime.

    ```mlir
    %f = memopt.reshape %x : tensor<8x512x7x7xf32> -> tensor<8x25088xf32>
    ```
  }];
  let arguments = (ins MemOpt_AnyTensor:$x);
  let results = (outs MemOpt_AnyTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
}

def MemOpt_TransposeOp : MemOpt_ForwardOp<"transpose"> {
  let summary = "permute dimensions";
  let description = [{
    Result dimension `i` is `x`'s dimension `permutation[i]`, as
    `torch.permute`.

    ```mlir
    %y = memopt.transpose %x {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x64x12x64xf32>
    // %y : tensor<2x12x64x64xf32>
    ```
  }];
  let arguments = (ins MemOpt_AnyTensor:$x, DenseI64ArrayAttr:$permutation);
  let results = (outs MemOpt_AnyTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
}

def MemOpt_SliceOp : MemOpt_ForwardOp<"slice"> {
  let summary = "strided slice with static offsets and sizes";
  let description = [{
    Takes `sizes[d]` elements of dimension `d` starting at `offsets[d]` every
    `strides[d]` (default 1), as `x[o:o+s*st:st]` in PyTorch. Every selected
    index must lie inside `x`.

    ```mlir
    %q = memopt.slice %qkv {offsets = array<i64: 0, 0, 0>, sizes = array<i64: 2, 64, 768>}
        : tensor<2x64x2304xf32>
    // %q : tensor<2x64x768xf32>
    ```
  }];
  let arguments = (ins MemOpt_AnyTensor:$x, DenseI64ArrayAttr:$offsets,
                   DenseI64ArrayAttr:$sizes,
                   OptionalAttr<DenseI64ArrayAttr>:$strides);
  let results = (outs MemOpt_AnyTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
  let extraClassDeclaration = [{
    /// The strides, defaulting to 1 in every dimension.
    ::llvm::SmallVector<int64_t> getEffectiveStrides() {
      if (getStrides())
        return ::llvm::SmallVector<int64_t>(*getStrides());
      return ::llvm::SmallVector<int64_t>(getSizes().size(), 1);
    }
  }];
}

def MemOpt_ConcatOp : MemOpt_ForwardOp<"concat"> {
  let summary = "concatenate tensors along an axis";
  let description = [{
    Joins one or more tensors of the same rank and element type along `axis`
    (negative values count from the back); all other dimensions must agree.

    ```mlir
    %y = memopt.concat %a, %b {axis = 1 : i64} : tensor<8x64x28x28xf32>, tensor<8x32x28x28xf32>
    // %y : tensor<8x96x28x28xf32>
    ```
  }];
  let arguments = (ins Variadic<MemOpt_AnyTensor>:$inputs, I64Attr:$axis);
  let results = (outs MemOpt_AnyTensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs)";
}

def MemOpt_UpsampleNearest2DOp : MemOpt_ForwardOp<"upsample_nearest2d"> {
  let summary = "nearest-neighbour upsampling by an integer factor";
  let description = [{
    Repeats every pixel of `x` (`N×C×H×W`) `scale × scale` times, giving
    `N×C×(scale·H)×(scale·W)`, as `torch.nn.Upsample(scale_factor=scale)`.

    ```mlir
    %y = memopt.upsample_nearest2d %x {scale = 2 : i64} : tensor<1x512x16x16xf32>
    // %y : tensor<1x512x32x32xf32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$x, I64Attr:$scale);
  let results = (outs MemOpt_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
}

def MemOpt_EmbeddingOp : MemOpt_ForwardOp<"embedding"> {
  let summary = "look up rows of a table";
  let description = [{
    Gathers row `ids[i…]` of `table` (`V×D`) for every id, giving `ids`'s
    shape followed by `D`, as `torch.nn.functional.embedding`. An id outside
    `[0, V)` is a runtime error. With `padding_idx = p` (`nn.Embedding`'s,
    in `[0, V)`) row `p` takes no gradient: the positions holding `p` add
    nothing to it, as PyTorch's backward.

    ```mlir
    %e = memopt.embedding %wte, %ids : tensor<50257x768xf32>, tensor<4x128xi64>
    // %e : tensor<4x128x768xf32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$table, MemOpt_IndexTensor:$ids,
                   OptionalAttr<I64Attr>:$padding_idx);
  let results = (outs MemOpt_FloatTensor:$result);
  let assemblyFormat = "$table `,` $ids attr-dict `:` type($table) `,` type($ids)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

def MemOpt_CrossEntropyOp : MemOpt_ForwardOp<"cross_entropy",
    [MemOpt_PrecisionModel, MemOpt_WorkspaceModel]> {
  let summary = "softmax cross-entropy with class labels, mean reduction";
  let description = [{
    Computes `mean_n(−log softmax(logits[n])[labels[n]])` for `N×C` logits
    and `N` integer labels, as `torch.nn.functional.cross_entropy`. The
    result is a 0-d tensor of the logits' element type. A label outside
    `[0, C)` is a runtime error.

    ```mlir
    %loss = memopt.cross_entropy %logits, %labels : tensor<64x10xf32>, tensor<64xi64>
    // %loss : tensor<f32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$logits, MemOpt_IndexTensor:$labels);
  let results = (outs MemOpt_ScalarFloatTensor:$result);
  let assemblyFormat =
      "$logits `,` $labels attr-dict `:` type($logits) `,` type($labels)";
}

def MemOpt_MseLossOp
    : MemOpt_ForwardOp<"mse_loss",
      [MemOpt_PrecisionModel, MemOpt_WorkspaceModel, AllTypesMatch<["prediction", "target"]>]> {
  let summary = "mean squared error, mean reduction";
  let description = [{
    Computes `mean((prediction − target)²)` over all elements, as
    `torch.nn.functional.mse_loss`. Both operands have the same type.

    ```mlir
    %loss = memopt.mse_loss %y, %t : tensor<8x1x64x64xf32>
    // %loss : tensor<f32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$prediction,
                   MemOpt_FloatTensor:$target);
  let results = (outs MemOpt_ScalarFloatTensor:$result);
  let assemblyFormat = "$prediction `,` $target attr-dict `:` type($prediction)";
}

def MemOpt_FreeOp : MemOpt_Op<"free", [MemoryEffects<[MemFree]>]> {
  let summary = "the end of a value's buffer lifetime";
  let description = [{
    Marks the point after which the buffer holding `value` (and every value
    aliasing it, such as reshape results) is dead and may be reused.
    `--memopt-schedule` places one after every buffer's last use; the memory
    analysis and the planner end lifetimes there. The value must not be used
    after it. Freeing a function argument is an error: arguments belong to
    the caller.

    ```mlir
    memopt.free %activation : tensor<8x64x32x32xf32>
    ```
  }];
  let arguments = (ins MemOpt_AnyTensor:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
  let hasVerifier = 1;
}

include "memopt/Dialect/MemOpt/IR/MemOptGradOps.td"
include "memopt/Dialect/MemOpt/IR/MemOptFusedOps.td"
include "memopt/Dialect/MemOpt/IR/MemOptPrecisionOps.td"
include "memopt/Dialect/MemOpt/IR/MemOptCollectiveOps.td"

#endif // MEMOPT_DIALECT_MEMOPT_IR_MEMOPTOPS_TD
