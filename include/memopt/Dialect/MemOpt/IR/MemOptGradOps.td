//===- MemOptGradOps.td - backward and optimizer ops -------*- tablegen -*-===//
//
// The compiler's own vocabulary for training steps: what --memopt-autodiff
// emits. Gradients reuse forward ops wherever they express the computation
// (linear and matmul gradients are matmuls, add's are sum_to, dropout's is
// dropout with the same seed); the ops here are the computations that have
// no forward counterpart. Result types are written explicitly (the pass
// knows them) and checked against the forward op they differentiate.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_DIALECT_MEMOPT_IR_MEMOPTGRADOPS_TD
#define MEMOPT_DIALECT_MEMOPT_IR_MEMOPTGRADOPS_TD

class MemOpt_GradOp<string mnemonic, list<Trait> traits = []>
    : MemOpt_Op<mnemonic, !listconcat([Pure], MemOpt_CostTraits<traits>.ret,
                                      traits)> {
  let assemblyFormat =
      "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def MemOpt_SumToOp : MemOpt_GradOp<"sum_to"> {
  let summary = "sum a tensor down to a shape it was broadcast from";
  let description = [{
    The adjoint of NumPy broadcasting: sums `x` over every dimension in which
    the result's shape was broadcast to `x`'s (leading dimensions and
    dimensions of size 1). The result's shape must broadcast to `x`'s.

    ```mlir
    %g = memopt.sum_to %dy : (tensor<8x64x32x32xf32>) -> tensor<64x1x1xf32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$x);
  let results = (outs MemOpt_FloatTensor:$result);
}

def MemOpt_Conv2DBackwardInputOp
    : MemOpt_GradOp<"conv2d_backward_input",
      [MemOpt_FlopModel, MemOpt_WorkspaceModel]> {
  let summary = "gradient of conv2d with respect to its input";
  let description = [{
    The transposed convolution of `grad_output` (`N×K×OH×OW`) with `weight`,
    giving the gradient of the `N×C×H×W` input, for a conv2d with the same
    attributes. The result type names the input shape (`H`, `W` are not
    recoverable from `OH`, `OW` when strides do not divide them).

    ```mlir
    %dx = memopt.conv2d_backward_input %dy, %w {padding = array<i64: 1, 1>}
        : (tensor<8x16x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<8x3x32x32xf32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$grad_output,
                   MemOpt_FloatTensor:$weight,
                   DefaultValuedAttr<DenseI64ArrayAttr, Pair11>:$strides,
                   DefaultValuedAttr<DenseI64ArrayAttr, Pair00>:$padding,
                   DefaultValuedAttr<DenseI64ArrayAttr, Pair11>:$dilations,
                   DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs MemOpt_FloatTensor:$result);
}

def MemOpt_Conv2DBackwardWeightOp
    : MemOpt_GradOp<"conv2d_backward_weight",
      [MemOpt_FlopModel, MemOpt_WorkspaceModel]> {
  let summary = "gradient of conv2d with respect to its weight";
  let description = [{
    Correlates the conv2d's `input` with `grad_output`, giving the gradient
    of the `K×(C/groups)×R×S` weight, for a conv2d with the same attributes.

    ```mlir
    %dw = memopt.conv2d_backward_weight %dy, %x {padding = array<i64: 1, 1>}
        : (tensor<8x16x32x32xf32>, tensor<8x3x32x32xf32>) -> tensor<16x3x3x3xf32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$grad_output,
                   MemOpt_FloatTensor:$input,
                   DefaultValuedAttr<DenseI64ArrayAttr, Pair11>:$strides,
                   DefaultValuedAttr<DenseI64ArrayAttr, Pair00>:$padding,
                   DefaultValuedAttr<DenseI64ArrayAttr, Pair11>:$dilations,
                   DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs MemOpt_FloatTensor:$result);
}

// Backward of an element-wise activation: grad · f'(saved), where `saved` is
// the forward input or, when stated, the forward output.
class MemOpt_ActivationBackwardOp<string fwd, string saved, string math>
    : MemOpt_GradOp<fwd # "_backward", [AllTypesMatch<["grad", "saved", "result"]>,
                                        MemOpt_InPlaceOpInterface]> {
  let summary = "gradient of " # fwd;
  let description = [{
    Computes `}] # math # [{` element-wise from the upstream gradient `grad`
    and }] # saved # [{.

    ```mlir
    %dx = memopt.}] # fwd # [{_backward %dy, %s : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$grad, MemOpt_FloatTensor:$saved);
  let results = (outs MemOpt_FloatTensor:$result);
}

def MemOpt_ReluBackwardOp : MemOpt_ActivationBackwardOp<"relu",
    "the forward output `y` (so the input need not be kept)",
    "grad · (y > 0)">;
def MemOpt_GeluBackwardOp : MemOpt_ActivationBackwardOp<"gelu",
    "the forward input `x`", "grad · (Φ(x) + x·φ(x))">;
def MemOpt_SigmoidBackwardOp : MemOpt_ActivationBackwardOp<"sigmoid",
    "the forward output `y`", "grad · y·(1 − y)">;
def MemOpt_TanhBackwardOp : MemOpt_ActivationBackwardOp<"tanh",
    "the forward output `y`", "grad · (1 − y²)">;
def MemOpt_SiluBackwardOp : MemOpt_ActivationBackwardOp<"silu",
    "the forward input `x`", "grad · s·(1 + x·(1 − s)), s = sigmoid(x)">;
def MemOpt_ExpBackwardOp : MemOpt_ActivationBackwardOp<"exp",
    "the forward output `y`", "grad · y">;
def MemOpt_LogBackwardOp : MemOpt_ActivationBackwardOp<"log",
    "the forward input `x`", "grad / x">;
def MemOpt_SqrtBackwardOp : MemOpt_ActivationBackwardOp<"sqrt",
    "the forward output `y`", "grad / (2·y)">;
def MemOpt_AbsBackwardOp : MemOpt_ActivationBackwardOp<"abs",
    "the forward input `x`", "grad · sgn(x) (0 at 0, as PyTorch)">;

def MemOpt_LeakyReluBackwardOp : MemOpt_ActivationBackwardOp<"leaky_relu",
    "`saved`: the forward input, or with `from_output` its output (valid "
    "because `alpha > 0` preserves the sign)",
    "grad · (saved > 0 ? 1 : alpha)"> {
  let arguments = (ins MemOpt_FloatTensor:$grad, MemOpt_FloatTensor:$saved,
                   DefaultValuedAttr<F64Attr, "0.01">:$alpha,
                   DefaultValuedAttr<BoolAttr, "false">:$from_output);
}

def MemOpt_EluBackwardOp : MemOpt_ActivationBackwardOp<"elu",
    "`saved`: the forward input `x` (`grad · (x > 0 ? 1 : alpha·eˣ)`) or, "
    "with `from_output`, its output `y` (`grad · (y > 0 ? 1 : y + alpha)`)",
    "grad · elu'(x)"> {
  let arguments = (ins MemOpt_FloatTensor:$grad, MemOpt_FloatTensor:$saved,
                   DefaultValuedAttr<F64Attr, "1.0">:$alpha,
                   DefaultValuedAttr<BoolAttr, "false">:$from_output);
}

def MemOpt_ClampBackwardOp : MemOpt_ActivationBackwardOp<"clamp",
    "`saved`: the forward input, or its output where both bounds are exact "
    "in the element type (clamp maps `x ≤ min` to `min` and `x ≥ max` to "
    "`max`, so the test reads the same); 0 at a bound and a NaN passing "
    "the gradient, as PyTorch's `hardtanh_backward`",
    "grad · (min < saved < max)"> {
  let arguments = (ins MemOpt_FloatTensor:$grad, MemOpt_FloatTensor:$saved,
                   OptionalAttr<F64Attr>:$min, OptionalAttr<F64Attr>:$max);
  let hasVerifier = 1;
}

def MemOpt_BatchNormBackwardOp
    : MemOpt_GradOp<"batch_norm_backward", [MemOpt_FlopModel]> {
  let summary = "gradients of training-mode batch normalisation";
  let description = [{
    From the upstream gradient of `y`, the forward input `x` and `gamma`,
    computes the gradients of `x`, `gamma` and `beta`. The batch statistics
    are recomputed from `x` (one pass) rather than stored.

    ```mlir
    %dx, %dg, %db = memopt.batch_norm_backward %dy, %x, %g
        : (tensor<8x64x32x32xf32>, tensor<8x64x32x32xf32>, tensor<64xf32>)
        -> (tensor<8x64x32x32xf32>, tensor<64xf32>, tensor<64xf32>)
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$grad_output, MemOpt_FloatTensor:$x,
                   MemOpt_FloatTensor:$gamma,
                   DefaultValuedAttr<F64Attr, "1e-05">:$epsilon);
  let results = (outs MemOpt_FloatTensor:$grad_x,
                 MemOpt_FloatTensor:$grad_gamma, MemOpt_FloatTensor:$grad_beta);
}

def MemOpt_LayerNormBackwardOp
    : MemOpt_GradOp<"layer_norm_backward",
      [MemOpt_FlopModel, MemOpt_WorkspaceModel]> {
  let summary = "gradients of layer normalisation";
  let description = [{
    From the upstream gradient, the forward input `x` and `gamma`, computes
    the gradients of `x`, `gamma` and `beta` (statistics recomputed).

    ```mlir
    %dx, %dg, %db = memopt.layer_norm_backward %dy, %x, %g
        : (tensor<4x128x768xf32>, tensor<4x128x768xf32>, tensor<768xf32>)
        -> (tensor<4x128x768xf32>, tensor<768xf32>, tensor<768xf32>)
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$grad_output, MemOpt_FloatTensor:$x,
                   MemOpt_FloatTensor:$gamma,
                   DefaultValuedAttr<F64Attr, "1e-05">:$epsilon);
  let results = (outs MemOpt_FloatTensor:$grad_x,
                 MemOpt_FloatTensor:$grad_gamma, MemOpt_FloatTensor:$grad_beta);
}

def MemOpt_RmsNormBackwardOp
    : MemOpt_GradOp<"rms_norm_backward",
      [MemOpt_FlopModel, MemOpt_WorkspaceModel]> {
  let summary = "gradients of RMS normalisation";
  let description = [{
    From the upstream gradient, the forward input `x` and `gamma`, computes
    the gradients of `x` and `gamma`, each row's root mean square
    recomputed: with `r = rsqrt(mean(x²) + ε)`, `x̂ = x · r` and
    `g = dy · gamma`, `dx = r · (g − x̂ · mean(g · x̂))` and
    `dgamma = Σ_rows dy · x̂`.

    ```mlir
    %dx, %dg = memopt.rms_norm_backward %dy, %x, %g {epsilon = 1.0e-06 : f64}
        : (tensor<4x1024x4096xf32>, tensor<4x1024x4096xf32>, tensor<4096xf32>)
        -> (tensor<4x1024x4096xf32>, tensor<4096xf32>)
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$grad_output, MemOpt_FloatTensor:$x,
                   MemOpt_FloatTensor:$gamma,
                   DefaultValuedAttr<F64Attr, "1e-06">:$epsilon);
  let results = (outs MemOpt_FloatTensor:$grad_x,
                 MemOpt_FloatTensor:$grad_gamma);
}

def MemOpt_MaxPool2DBackwardOp : MemOpt_GradOp<"max_pool2d_backward"> {
  let summary = "gradient of max pooling";
  let description = [{
    Routes each window's upstream gradient to the position of its maximum in
    the forward input `x` (the first maximum in row-major order, like
    PyTorch), recomputing the argmax instead of storing indices.

    ```mlir
    %dx = memopt.max_pool2d_backward %dy, %x {kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>, strides = array<i64: 2, 2>}
        : (tensor<8x64x16x16xf32>, tensor<8x64x32x32xf32>) -> tensor<8x64x32x32xf32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$grad_output, MemOpt_FloatTensor:$x,
                   DenseI64ArrayAttr:$kernel_size, DenseI64ArrayAttr:$strides,
                   DefaultValuedAttr<DenseI64ArrayAttr, Pair00>:$padding);
  let results = (outs MemOpt_FloatTensor:$result);
}

def MemOpt_MaximumWeightOp : MemOpt_GradOp<"maximum_weight"> {
  let summary = "the share of maximum's gradient its first operand takes";
  let description = [{
    1 where `lhs > rhs`, ½ where they are equal, 0 where `lhs < rhs`, with
    NumPy broadcasting: the derivative of `maximum(lhs, rhs)` by `lhs`
    (`torch.maximum`'s rule). `rhs` takes `1 − weight`; `minimum(a, b)`'s
    gradient is `maximum_weight(b, a)` for `a`. A NaN on either side gives 1.

    ```mlir
    %w = memopt.maximum_weight %a, %b : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$lhs, MemOpt_FloatTensor:$rhs);
  let results = (outs MemOpt_FloatTensor:$result);
}

def MemOpt_ReduceExtremumBackwardOp
    : MemOpt_GradOp<"reduce_extremum_backward"> {
  let summary = "gradient of reduce_max and reduce_min";
  let description = [{
    Spreads each row's upstream gradient (`grad`, `…×1`) evenly over the
    elements of `x` (`…×n`) equal to the forward result `extremum` (`…×1`):
    the row's maximum or minimum (where it is NaN, the row's NaNs).
    The others get 0 (`torch.amax`'s and `torch.amin`'s rule).

    ```mlir
    %dx = memopt.reduce_extremum_backward %dm, %x, %m
        : (tensor<8x128x1xf32>, tensor<8x128x64xf32>, tensor<8x128x1xf32>) -> tensor<8x128x64xf32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$grad, MemOpt_FloatTensor:$x,
                   MemOpt_FloatTensor:$extremum);
  let results = (outs MemOpt_FloatTensor:$result);
}

def MemOpt_AvgPool2DBackwardOp : MemOpt_GradOp<"avg_pool2d_backward"> {
  let summary = "gradient of average pooling";
  let description = [{
    Spreads each window's upstream gradient evenly over the window (padding
    counted, as in the forward op). The result type names the input shape.

    ```mlir
    %dx = memopt.avg_pool2d_backward %dy {kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>, strides = array<i64: 2, 2>}
        : (tensor<8x64x16x16xf32>) -> tensor<8x64x32x32xf32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$grad_output,
                   DenseI64ArrayAttr:$kernel_size, DenseI64ArrayAttr:$strides,
                   DefaultValuedAttr<DenseI64ArrayAttr, Pair00>:$padding);
  let results = (outs MemOpt_FloatTensor:$result);
}

def MemOpt_GlobalAvgPool2DBackwardOp
    : MemOpt_GradOp<"global_avg_pool2d_backward"> {
  let summary = "gradient of global average pooling";
  let description = [{
    Broadcasts the `N×C` upstream gradient divided by `H·W` over the input's
    spatial dimensions.

    ```mlir
    %dx = memopt.global_avg_pool2d_backward %dy : (tensor<8x512xf32>) -> tensor<8x512x7x7xf32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$grad_output);
  let results = (outs MemOpt_FloatTensor:$result);
}

def MemOpt_SoftmaxBackwardOp : MemOpt_GradOp<"softmax_backward",
    [AllTypesMatch<["grad", "output", "result"]>]> {
  let summary = "gradient of softmax";
  let description = [{
    Computes `y · (grad − Σ grad·y)` along `axis` from the forward output
    `y` (masked entries of a causal softmax are 0 in `y` and get 0).

    ```mlir
    %dx = memopt.softmax_backward %dy, %y : (tensor<2x12x64x64xf32>, tensor<2x12x64x64xf32>) -> tensor<2x12x64x64xf32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$grad, MemOpt_FloatTensor:$output,
                   DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs MemOpt_FloatTensor:$result);
}

def MemOpt_SliceBackwardOp : MemOpt_GradOp<"slice_backward"> {
  let summary = "gradient of slice: scatter into zeros";
  let description = [{
    Writes `grad` into a zero tensor of the result type (the sliced input's
    shape) at the positions the slice selected.

    ```mlir
    %dx = memopt.slice_backward %dq {offsets = array<i64: 0, 0, 0>, sizes = array<i64: 2, 64, 768>, strides = array<i64: 1, 1, 1>}
        : (tensor<2x64x768xf32>) -> tensor<2x64x2304xf32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$grad, DenseI64ArrayAttr:$offsets,
                   DenseI64ArrayAttr:$sizes, DenseI64ArrayAttr:$strides);
  let results = (outs MemOpt_FloatTensor:$result);
}

def MemOpt_UpsampleNearest2DBackwardOp
    : MemOpt_GradOp<"upsample_nearest2d_backward"> {
  let summary = "gradient of nearest upsampling: sum over each block";
  let description = [{
    Sums each `scale × scale` block of the upstream gradient.

    ```mlir
    %dx = memopt.upsample_nearest2d_backward %dy {scale = 2 : i64}
        : (tensor<1x512x32x32xf32>) -> tensor<1x512x16x16xf32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$grad, I64Attr:$scale);
  let results = (outs MemOpt_FloatTensor:$result);
}

def MemOpt_EmbeddingBackwardOp : MemOpt_GradOp<"embedding_backward"> {
  let summary = "gradient of embedding: scatter-add rows";
  let description = [{
    Adds the upstream gradient of every looked-up row into a zero table of
    the result type (`V×D`), so ids that repeat accumulate; with
    `padding_idx = p` the positions holding `p` add nothing (row `p` is 0).

    ```mlir
    %dt = memopt.embedding_backward %de, %ids
        : (tensor<4x128x768xf32>, tensor<4x128xi64>) -> tensor<50257x768xf32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$grad, MemOpt_IndexTensor:$ids,
                   OptionalAttr<I64Attr>:$padding_idx);
  let results = (outs MemOpt_FloatTensor:$result);
  let hasVerifier = 1;
}

def MemOpt_CrossEntropyBackwardOp : MemOpt_GradOp<"cross_entropy_backward"> {
  let summary = "gradient of mean softmax cross-entropy";
  let description = [{
    Computes `grad_loss · (softmax(logits) − onehot(labels)) / N`.

    ```mlir
    %dl = memopt.cross_entropy_backward %one, %logits, %labels
        : (tensor<f32>, tensor<64x10xf32>, tensor<64xi64>) -> tensor<64x10xf32>
    ```
  }];
  let arguments = (ins MemOpt_ScalarFloatTensor:$grad_loss,
                   MemOpt_FloatTensor:$logits, MemOpt_IndexTensor:$labels);
  let results = (outs MemOpt_FloatTensor:$result);
}

def MemOpt_MseLossBackwardOp : MemOpt_GradOp<"mse_loss_backward"> {
  let summary = "gradient of mean squared error";
  let description = [{
    Computes `grad_loss · 2·(prediction − target) / numel` (the gradient of
    the prediction; the target's is its negation).

    ```mlir
    %dp = memopt.mse_loss_backward %one, %p, %t
        : (tensor<f32>, tensor<8x10xf32>, tensor<8x10xf32>) -> tensor<8x10xf32>
    ```
  }];
  let arguments = (ins MemOpt_ScalarFloatTensor:$grad_loss,
                   MemOpt_FloatTensor:$prediction, MemOpt_FloatTensor:$target);
  let results = (outs MemOpt_FloatTensor:$result);
}

//===----------------------------------------------------------------------===//
// Optimizers (PyTorch's exact update rules)
//===----------------------------------------------------------------------===//

// The interface's methods are the updates' own accessors (getParam,
// getGrad, getSkip).
defvar MemOpt_OptimizerUpdate = MemOpt_OptimizerUpdateOpInterface;

def MemOpt_SgdUpdateOp : MemOpt_GradOp<"sgd_update",
    [AttrSizedOperandSegments, MemOpt_OptimizerUpdate, AllTypesMatch<["param", "result"]>]> {
  let summary = "torch.optim.SGD step without momentum";
  let description = [{
    `p ← p − lr · (g + weight_decay · p)`.

    Every optimizer op takes an optional `skip` flag after its tensors (a
    0-d f32 tensor, `memopt.found_inf`'s result under dynamic loss scaling):
    when it is nonzero the step is skipped and every result equals its
    operand, as `GradScaler.step` skips `optimizer.step()` after an
    overflow.

    The gradient may be stored in a narrower float type than the parameter
    when the parameter's type holds each of its values exactly (f16 or bf16
    beside f32 or f64, f32 beside f64): `g` is then the gradient widened,
    as `memopt.cast` would widen it, and no wider copy is ever stored.
    Beside a `skip` flag, and for an f32 or f64 parameter, `unscale(%s)`
    names the loss scale the gradient is still multiplied by: `g` is then
    the widened gradient times `1 / s`, computed exactly as `memopt.unscale`
    computes it in the parameter's type. `--memopt-autodiff` folds the cast
    back of a weight's f16 copy and the unscale into the update this way, so
    a mixed-precision step holds each weight gradient once, in f16, and the
    result is bit-identical to casting, unscaling and updating in three ops.

    ```mlir
    %p1 = memopt.sgd_update %p, %g {lr = 1.000000e-01 : f64}
        : (tensor<10x128xf32>, tensor<10x128xf32>) -> tensor<10x128xf32>
    %p2 = memopt.sgd_update %p, %g16, %found unscale(%scale) {lr = 1.000000e-01 : f64}
        : (tensor<10x128xf32>, tensor<10x128xf16>, tensor<f32>, tensor<f32>)
        -> tensor<10x128xf32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$param, MemOpt_FloatTensor:$grad,
                   Optional<MemOpt_ScalarF32Tensor>:$skip,
                   Optional<MemOpt_ScalarF32Tensor>:$loss_scale, F64Attr:$lr,
                   DefaultValuedAttr<F64Attr, "0.0">:$weight_decay);
  let results = (outs MemOpt_FloatTensor:$result);
  let assemblyFormat = [{
    $param `,` $grad (`,` $skip^)? (`unscale` `(` $loss_scale^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
}

def MemOpt_SgdMomentumUpdateOp : MemOpt_GradOp<"sgd_momentum_update",
    [AttrSizedOperandSegments, MemOpt_OptimizerUpdate,
     AllTypesMatch<["param", "new_param"]>,
     AllTypesMatch<["momentum_buffer", "new_momentum_buffer"]>]> {
  let summary = "torch.optim.SGD step with momentum";
  let description = [{
    `d = g + weight_decay · p`; `b ← momentum · b + (1 − dampening) · d`;
    `p ← p − lr · (nesterov ? d + momentum · b : b)`. The buffer starts at
    zero, which equals PyTorch's first step (`b = d`) when dampening is 0.
    The gradient, `skip` and `unscale(%s)` are as in `memopt.sgd_update`.
    The buffer has the parameter's shape and its element type or bf16
    (`state-dtype=bf16`: computed in the parameter's type, stored rounded
    to bf16).

    ```mlir
    %p1, %b1 = memopt.sgd_momentum_update %p, %g, %b {lr = 1.000000e-01 : f64, momentum = 9.000000e-01 : f64}
        : (tensor<10x128xf32>, tensor<10x128xf32>, tensor<10x128xf32>)
        -> (tensor<10x128xf32>, tensor<10x128xf32>)
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$param, MemOpt_FloatTensor:$grad,
                   MemOpt_FloatTensor:$momentum_buffer,
                   Optional<MemOpt_ScalarF32Tensor>:$skip,
                   Optional<MemOpt_ScalarF32Tensor>:$loss_scale, F64Attr:$lr,
                   F64Attr:$momentum,
                   DefaultValuedAttr<F64Attr, "0.0">:$dampening,
                   DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
                   DefaultValuedAttr<BoolAttr, "false">:$nesterov);
  let results = (outs MemOpt_FloatTensor:$new_param,
                 MemOpt_FloatTensor:$new_momentum_buffer);
  let assemblyFormat = [{
    $param `,` $grad `,` $momentum_buffer (`,` $skip^)?
    (`unscale` `(` $loss_scale^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
}

def MemOpt_AdamUpdateOp : MemOpt_GradOp<"adam_update",
    [AttrSizedOperandSegments, MemOpt_OptimizerUpdate,
     AllTypesMatch<["param", "new_param"]>,
     AllTypesMatch<["exp_avg", "exp_avg_sq", "new_exp_avg",
                    "new_exp_avg_sq"]>]> {
  let summary = "torch.optim.Adam (or AdamW) step";
  let description = [{
    With `t` the new step count (1 on the first step):
    `g ← g + weight_decay · p`; `m ← β₁m + (1−β₁)g`; `v ← β₂v + (1−β₂)g²`;
    `p ← p − (lr / (1−β₁ᵗ)) · m / (√v / √(1−β₂ᵗ) + eps)` — PyTorch's
    arithmetic, `eps` outside the square root. With
    `decoupled_weight_decay = true` it is `torch.optim.AdamW`'s step
    instead: the gradient is not decayed, and the parameter is first
    scaled, `p ← p · (1 − lr · weight_decay)`. The gradient, `skip` and
    `unscale(%s)` are as in `memopt.sgd_update`. The moments have the
    parameter's shape and its element type or bf16 (as
    `memopt.sgd_momentum_update`'s buffer).

    ```mlir
    %p1, %m1, %v1 = memopt.adam_update %p, %g, %m, %v, %t {lr = 1.000000e-03 : f64}
        : (tensor<10xf32>, tensor<10xf32>, tensor<10xf32>, tensor<10xf32>, tensor<f32>)
        -> (tensor<10xf32>, tensor<10xf32>, tensor<10xf32>)
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$param, MemOpt_FloatTensor:$grad,
                   MemOpt_FloatTensor:$exp_avg, MemOpt_FloatTensor:$exp_avg_sq,
                   MemOpt_ScalarFloatTensor:$step,
                   Optional<MemOpt_ScalarF32Tensor>:$skip,
                   Optional<MemOpt_ScalarF32Tensor>:$loss_scale, F64Attr:$lr,
                   DefaultValuedAttr<F64Attr, "0.9">:$beta1,
                   DefaultValuedAttr<F64Attr, "0.999">:$beta2,
                   DefaultValuedAttr<F64Attr, "1e-08">:$eps,
                   DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
                   DefaultValuedAttr<BoolAttr, "false">:$decoupled_weight_decay);
  let results = (outs MemOpt_FloatTensor:$new_param,
                 MemOpt_FloatTensor:$new_exp_avg,
                 MemOpt_FloatTensor:$new_exp_avg_sq);
  let assemblyFormat = [{
    $param `,` $grad `,` $exp_avg `,` $exp_avg_sq `,` $step (`,` $skip^)?
    (`unscale` `(` $loss_scale^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
}

def MemOpt_ClipCoefficientOp : MemOpt_GradOp<"clip_coefficient",
    [MemOpt_FlopModel, MemOpt_WorkspaceModel]> {
  let summary = "the factor torch.nn.utils.clip_grad_norm_ scales gradients by";
  let description = [{
    `min(1, max_norm / (‖g‖ + 1e-6))` in f32, where ‖g‖ is the 2-norm of
    all the operands' elements together (`clip_grad_norm_` with
    `norm_type=2`; the sum of squares is accumulated in double). Each
    gradient is then multiplied by it (`memopt.mul`) before its update, so
    gradients whose total norm is at most `max_norm` stay exactly as they
    are. It reads every gradient, so no update can run before the whole
    backward pass has: `--memopt-autodiff=clip-norm=X` emits it. Its CUDA
    kernel sums partial sums in a small planned workspace. With
    `square_sum = true` its one operand is the sum of squares itself, a
    0-d f64 tensor (ZeRO stage 2: the ranks' `memopt.square_sum`s added by
    a `memopt.all_reduce`).

    ```mlir
    %c = memopt.clip_coefficient %g0, %g1 {max_norm = 1.000000e+00 : f64}
        : (tensor<10x128xf32>, tensor<10xf32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Variadic<MemOpt_FloatTensor>:$grads, F64Attr:$max_norm,
                   DefaultValuedAttr<BoolAttr, "false">:$square_sum);
  let results = (outs MemOpt_ScalarF32Tensor:$result);
}

def MemOpt_Adam8bitUpdateOp : MemOpt_GradOp<"adam8bit_update",
    [AttrSizedOperandSegments, MemOpt_OptimizerUpdate,
     AllTypesMatch<["param", "new_param"]>,
     AllTypesMatch<["exp_avg", "exp_avg_sq", "new_exp_avg",
                    "new_exp_avg_sq"]>,
     AllTypesMatch<["exp_avg_absmax", "exp_avg_sq_absmax",
                    "new_exp_avg_absmax", "new_exp_avg_sq_absmax"]>]> {
  let summary = "Adam (or AdamW) step with block-wise 8-bit moments";
  let description = [{
    `memopt.adam_update`'s step (same attributes, same `skip` and
    `unscale(%s)`) with both moments stored as bitsandbytes' 8-bit
    optimizers store them (Dettmers et al., 2022): the flattened tensor is
    cut into blocks of 256 elements, and each element is an 8-bit index
    into a 256-entry code, the dynamic tree map — signed for `exp_avg`,
    unsigned for `exp_avg_sq` — scaled by its block's absolute maximum
    (`*_absmax`, one f32 per block). The step dequantizes both moments,
    updates them and the parameter in f32 exactly as `adam_update` does,
    then stores each block's new absolute maximum and each element's
    nearest code (an `exp_avg` that is not zero keeps its sign). State at
    zero is all-zero codes and maxima.

    ```mlir
    %p1, %m1, %ma1, %v1, %va1 = memopt.adam8bit_update %p, %g, %m, %ma, %v, %va, %t {lr = 1.000000e-03 : f64}
        : (tensor<64x128xf32>, tensor<64x128xf32>, tensor<64x128xui8>,
           tensor<32xf32>, tensor<64x128xui8>, tensor<32xf32>, tensor<f32>)
        -> (tensor<64x128xf32>, tensor<64x128xui8>, tensor<32xf32>,
            tensor<64x128xui8>, tensor<32xf32>)
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$param, MemOpt_FloatTensor:$grad,
                   MemOpt_CodeTensor:$exp_avg,
                   MemOpt_F32Vector:$exp_avg_absmax,
                   MemOpt_CodeTensor:$exp_avg_sq,
                   MemOpt_F32Vector:$exp_avg_sq_absmax,
                   MemOpt_ScalarFloatTensor:$step,
                   Optional<MemOpt_ScalarF32Tensor>:$skip,
                   Optional<MemOpt_ScalarF32Tensor>:$loss_scale, F64Attr:$lr,
                   DefaultValuedAttr<F64Attr, "0.9">:$beta1,
                   DefaultValuedAttr<F64Attr, "0.999">:$beta2,
                   DefaultValuedAttr<F64Attr, "1e-08">:$eps,
                   DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
                   DefaultValuedAttr<BoolAttr, "false">:$decoupled_weight_decay);
  let results = (outs MemOpt_FloatTensor:$new_param,
                 MemOpt_CodeTensor:$new_exp_avg,
                 MemOpt_F32Vector:$new_exp_avg_absmax,
                 MemOpt_CodeTensor:$new_exp_avg_sq,
                 MemOpt_F32Vector:$new_exp_avg_sq_absmax);
  let assemblyFormat = [{
    $param `,` $grad `,` $exp_avg `,` $exp_avg_absmax `,` $exp_avg_sq `,`
    $exp_avg_sq_absmax `,` $step (`,` $skip^)?
    (`unscale` `(` $loss_scale^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
}

def MemOpt_AdafactorUpdateOp : MemOpt_GradOp<"adafactor_update",
    [AttrSizedOperandSegments, MemOpt_OptimizerUpdate, MemOpt_WorkspaceModel,
     AllTypesMatch<["param", "new_param"]>]> {
  let summary = "Adafactor step (transformers.Adafactor, no first moment)";
  let description = [{
    Shazeer & Stern's Adafactor as `transformers.Adafactor` computes it with
    `relative_step=False` (a given `lr`), `warmup_init=False` and no first
    moment (`beta1=None`). With `t` the new step count, `β₂ₜ = 1 − t^decay_rate`
    and `u = g² + eps1`:
    - a parameter of rank ≥ 2 keeps two f32 factors of its second moment:
      `row` (its shape without the last dimension) and `col` (its shape
      without the second-to-last): `row ← β₂ₜ·row + (1−β₂ₜ)·mean(u, -1)`,
      `col ← β₂ₜ·col + (1−β₂ₜ)·mean(u, -2)`, and the update is
      `g · rsqrt(row / mean(row, -1)) · rsqrt(col)`;
    - any other keeps one f32 `v` of its shape: `v ← β₂ₜ·v + (1−β₂ₜ)·u`,
      update `g · rsqrt(v)`.
    The update is divided by `max(1, RMS(update) / clip_threshold)` and
    multiplied by `α = lr · max(eps2, RMS(p))` (`α = lr` without
    `scale_parameter`); then `p ← p − weight_decay·α·p − update`. Each
    parameter's arithmetic runs in f32 (f64 for an f64 parameter), as the
    reference upcasts. The gradient, `skip` and `unscale(%s)` are as in
    `memopt.sgd_update`. The kernels' reductions (the row factor's mean,
    the parameter's and the update's RMS) use a small planned workspace.

    ```mlir
    %p1, %r1, %c1 = memopt.adafactor_update %p, %g, [%r, %c], %t {lr = 1.000000e-03 : f64}
        : (tensor<64x128xf32>, tensor<64x128xf32>, tensor<64xf32>,
           tensor<128xf32>, tensor<f32>)
        -> (tensor<64x128xf32>, tensor<64xf32>, tensor<128xf32>)
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$param, MemOpt_FloatTensor:$grad,
                   Variadic<MemOpt_FloatTensor>:$state,
                   MemOpt_ScalarFloatTensor:$step,
                   Optional<MemOpt_ScalarF32Tensor>:$skip,
                   Optional<MemOpt_ScalarF32Tensor>:$loss_scale, F64Attr:$lr,
                   DefaultValuedAttr<F64Attr, "1e-30">:$eps1,
                   DefaultValuedAttr<F64Attr, "1e-3">:$eps2,
                   DefaultValuedAttr<F64Attr, "1.0">:$clip_threshold,
                   DefaultValuedAttr<F64Attr, "-0.8">:$decay_rate,
                   DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
                   DefaultValuedAttr<BoolAttr, "true">:$scale_parameter);
  let results = (outs MemOpt_FloatTensor:$new_param,
                 Variadic<MemOpt_FloatTensor>:$new_state);
  let assemblyFormat = [{
    $param `,` $grad `,` `[` $state `]` `,` $step (`,` $skip^)?
    (`unscale` `(` $loss_scale^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
}

#endif // MEMOPT_DIALECT_MEMOPT_IR_MEMOPTGRADOPS_TD
