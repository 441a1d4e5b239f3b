//===- MemOptFusedOps.td - ops fused to save memory --------*- tablegen -*-===//
//
// Ops that exist because fusing two ops saves memory, not arithmetic. A
// graph may also use them directly, since each has a gradient rule.
//
// InPlace-ABN (Rota Bulò, Porzi and Kontschieder, "In-Place Activated
// BatchNorm for Memory-Optimized Training of DNNs", CVPR 2018), fused on
// training steps (after --memopt-autodiff): batch norm
// followed by an invertible activation, whose backward rebuilds what it
// needs from the activation's output instead of batch norm's input, so the
// input is never stored and the output may overwrite it.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_DIALECT_MEMOPT_IR_MEMOPTFUSEDOPS_TD
#define MEMOPT_DIALECT_MEMOPT_IR_MEMOPTFUSEDOPS_TD

def MemOpt_BatchNormActOp : MemOpt_ForwardOp<"batch_norm_act",
    [MemOpt_FlopModel, MemOpt_PrecisionModel, MemOpt_InPlaceOpInterface,
     AllTypesMatch<["gamma", "beta", "running_mean", "running_var"]>]> {
  let summary = "training-mode batch norm fused with an invertible activation "
                "(InPlace-ABN)";
  let description = [{
    Computes exactly `memopt.batch_norm` (training mode: batch statistics,
    biased variance for normalising, running statistics updated with the
    unbiased one and `momentum`) followed by an activation `f`:
    `result = f(gamma · (x − mean) · invstd + beta)` with
    `invstd = 1/√(var + epsilon)` per channel. `activation` is
    `"leaky_relu"` (`f(z) = z` for `z ≥ 0`, `alpha·z` otherwise) or `"elu"`
    (`f(z) = z` for `z > 0`, `alpha·(eᶻ − 1)` otherwise), with `alpha > 0`
    so that `f` is invertible: ReLU (slope 0) maps every negative input to
    0, and the backward could not rebuild its input from the output.

    Besides the result and the new running statistics it returns
    `saved_invstd`, the per-channel `invstd` of this batch, which
    `memopt.batch_norm_act_backward` needs. The gradient rule saves the
    result, `gamma`, `beta` and `saved_invstd`, never `x`: the backward
    inverts `f` to get `z = gamma·x̂ + beta` and then `x̂ = (z − beta)/gamma`.
    The kernel computes the statistics before it writes, so the result may
    overwrite `x` (`memopt.inplace = 0`, which the InPlace-ABN fusion sets
    when nothing reads `x` later).

    Limitations of rebuilding from the output: a channel with `gamma = 0`
    has lost `x̂` (its output is constant), so its `grad_gamma` is returned
    as 0 (its `grad_x` is 0 and its `grad_beta` exact, as without fusion);
    a small `|gamma|` loses precision in `x̂` (`(z − beta)/gamma` amplifies
    the rounding of `z`). For `"elu"`, outputs saturated at `−alpha` in the
    working precision (`z` below about −17 in f32) are inverted to a clamped
    `z` (their own gradient is 0; only the batch-statistics terms of
    `grad_x` see the clamped value). Nothing checks `gamma` at compile time.

    ```mlir
    %y, %mean, %var, %invstd = memopt.batch_norm_act %x, %g, %b, %rm, %rv
        {activation = "leaky_relu", alpha = 1.000000e-02 : f64}
        : tensor<8x64x32x32xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$x, MemOpt_FloatTensor:$gamma,
                   MemOpt_FloatTensor:$beta, MemOpt_FloatTensor:$running_mean,
                   MemOpt_FloatTensor:$running_var,
                   DefaultValuedAttr<F64Attr, "1e-05">:$epsilon,
                   DefaultValuedAttr<F64Attr, "0.1">:$momentum,
                   StrAttr:$activation, F64Attr:$alpha);
  let results = (outs MemOpt_FloatTensor:$result,
                 MemOpt_FloatTensor:$new_running_mean,
                 MemOpt_FloatTensor:$new_running_var,
                 MemOpt_FloatTensor:$saved_invstd);
  let assemblyFormat = [{
    $x `,` $gamma `,` $beta `,` $running_mean `,` $running_var attr-dict `:`
    type($x) `,` type($gamma)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The running-statistics operand that result `resultNumber` is the new
    /// value of (null for the result and `saved_invstd`).
    ::mlir::Value getUpdatedState(unsigned resultNumber) {
      if (resultNumber == 1)
        return getRunningMean();
      if (resultNumber == 2)
        return getRunningVar();
      return {};
    }
  }];
}

def MemOpt_BatchNormActBackwardOp
    : MemOpt_GradOp<"batch_norm_act_backward", [MemOpt_FlopModel,
        MemOpt_InPlaceOpInterface, AllTypesMatch<["grad", "output", "grad_x"]>,
        AllTypesMatch<["gamma", "beta", "saved_invstd", "grad_gamma",
                       "grad_beta"]>]> {
  let summary = "gradients of memopt.batch_norm_act, from its output";
  let description = [{
    From the upstream gradient `grad` of a `memopt.batch_norm_act` result,
    that result `output` (`y`), `gamma`, `beta` and the forward op's
    `saved_invstd`, computes the gradients of `x`, `gamma` and `beta`
    without reading `x`. Per element it inverts the activation
    (`z = f⁻¹(y)`), takes `dz = grad · f'(z)` computed from `y`
    (`leaky_relu`: 1 or `alpha`; `elu`: 1 or `y + alpha`) and rebuilds
    `x̂ = (z − beta)/gamma`; per channel, over its `M` elements,
    `grad_beta = Σ dz`, `grad_gamma = Σ dz·x̂` and
    `grad_x = gamma·invstd·(dz − grad_beta/M − x̂·grad_gamma/M)`.
    `activation` and `alpha` are the forward op's. The kernel reduces a
    channel before it writes, so `grad_x` may overwrite `grad` or `output`.
    For `gamma = 0` and saturated ELU outputs see `memopt.batch_norm_act`.

    ```mlir
    %dx, %dg, %db = memopt.batch_norm_act_backward %dy, %y, %g, %b, %invstd
        {activation = "leaky_relu", alpha = 1.000000e-02 : f64}
        : (tensor<8x64x32x32xf32>, tensor<8x64x32x32xf32>, tensor<64xf32>,
           tensor<64xf32>, tensor<64xf32>)
        -> (tensor<8x64x32x32xf32>, tensor<64xf32>, tensor<64xf32>)
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$grad, MemOpt_FloatTensor:$output,
                   MemOpt_FloatTensor:$gamma, MemOpt_FloatTensor:$beta,
                   MemOpt_FloatTensor:$saved_invstd, StrAttr:$activation,
                   F64Attr:$alpha);
  let results = (outs MemOpt_FloatTensor:$grad_x,
                 MemOpt_FloatTensor:$grad_gamma, MemOpt_FloatTensor:$grad_beta);
}

//===----------------------------------------------------------------------===//
// Memory-efficient attention
//===----------------------------------------------------------------------===//

// FlashAttention (Dao et al., NeurIPS 2022; FlashAttention-2, 2023): exact
// attention computed a strip of query rows at a time, saving only the
// per-row log-sum-exp and recomputing the probabilities in the backward
// pass, so attention memory is O(sequence) instead of O(sequence²).
// --memopt-fuse-attention builds it from the matmul → scale → softmax →
// dropout → matmul chain.

def MemOpt_AttentionOp : MemOpt_ForwardOp<"attention",
    [MemOpt_FlopModel, MemOpt_PrecisionModel, MemOpt_WorkspaceModel]> {
  let summary = "memory-efficient scaled dot-product attention";
  let description = [{
    Computes `dropout(softmax(scale · q·kᵀ)) · v` over the two trailing
    dimensions of `q` (`…×Sq×D`), `k` (`…×Sk×D`) and `v` (`…×Sk×Dv`), whose
    leading (batch, head) dimensions must be equal (no broadcasting) except
    that `k` and `v` may have fewer heads (dimension rank − 3) than `q`, a
    divisor of its heads: grouped-query attention, query head `h` reading
    key/value head `h / (q heads / k heads)`, exactly what attention over K
    and V repeated by `repeat_interleave` computes, without the repeats in
    memory (its backward adds each group's gradients into one key/value
    head).
    With `causal = true` query `i` sees keys `j ≤ i` (which needs
    `Sq = Sk`), as `memopt.softmax {causal = true}`. Dropout with `p` and
    `seed` applies exactly the mask `memopt.dropout` would apply to the
    `…×Sq×Sk` probabilities, so the fused op computes what the unfused
    chain computes.

    Besides the `…×Sq×Dv` result it returns `lse`, the `…×Sq` log-sum-exp
    `max + log Σ exp(s − max)` of each row of scaled scores (f32, or f64
    for f64 attention), which `memopt.attention_backward` recomputes the
    probabilities from. The gradient rule saves `q`, `k`, `v`, the result
    and `lse`: linear in the sequence length, never the `Sq×Sk`
    probabilities. The kernels work a strip of query rows at a time; the
    strip is the op's workspace.

    An optional `key_bias` (`L×Sk`, where `L` is `q`'s dimensions before
    its heads, dimension rank − 3; `q` of rank ≥ 3) is added to every
    scaled score of key `j` in row `l` of the leading index, the same for
    every head and query: `softmax(scale · q·kᵀ + key_bias)`, a key-padding
    mask as BERT writes it (`(1 − mask) · finfo.min`, broadcast as
    `B×1×1×Sk`). It takes no gradient (a mask computed from the data); the
    gradient rule refuses one that needs it. A row whose every key the
    bias masks with −inf is NaN, as the unfused softmax's; with
    `safe = true` (`memopt.softmax {safe = true}` fused) it is 0 and its
    `lse` −inf, which the backward pass reads as probabilities 0 (its
    gradients are 0).

    Under mixed precision `q`, `k`, `v` and the result take the low
    precision (matmul's class); the softmax runs in f32 inside the kernel
    and `lse` stays f32.

    ```mlir
    %o, %lse = memopt.attention %q, %k, %v
        {causal = true, scale = 1.250000e-01 : f64, p = 1.000000e-01 : f64, seed = 3 : i64}
        : tensor<4x12x1024x64xf32>, tensor<4x12x1024x64xf32>, tensor<4x12x1024x64xf32>
    // %o : tensor<4x12x1024x64xf32>, %lse : tensor<4x12x1024xf32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$q, MemOpt_FloatTensor:$k,
                   MemOpt_FloatTensor:$v,
                   Optional<MemOpt_FloatTensor>:$key_bias,
                   DefaultValuedAttr<BoolAttr, "false">:$causal,
                   F64Attr:$scale,
                   DefaultValuedAttr<F64Attr, "0.0">:$p,
                   DefaultValuedAttr<I64Attr, "0">:$seed,
                   DefaultValuedAttr<BoolAttr, "false">:$safe);
  let results = (outs MemOpt_FloatTensor:$result, MemOpt_FloatTensor:$lse);
  let assemblyFormat = [{
    $q `,` $k `,` $v (`key_bias` $key_bias^)? attr-dict `:` type($q) `,`
    type($k) `,` type($v) (`,` type($key_bias)^)?
  }];
}

def MemOpt_AttentionBackwardOp
    : MemOpt_GradOp<"attention_backward",
        [MemOpt_FlopModel, MemOpt_WorkspaceModel,
         AllTypesMatch<["q", "grad_q"]>, AllTypesMatch<["k", "grad_k"]>,
         AllTypesMatch<["v", "grad_v"]>]> {
  let summary = "gradients of memopt.attention, probabilities recomputed";
  let description = [{
    From the upstream gradient `grad` of a `memopt.attention` result, its
    operands `q`, `k`, `v`, its result `out` and its `lse`, computes the
    gradients of `q`, `k` and `v`. A strip of query rows at a time it
    recomputes the probabilities `P = exp(scale · q·kᵀ − lse)` (0 where
    masked) and the dropout mask, and then computes what the unfused
    chain's backward ops compute: `dv += (P∘mask)ᵀ·grad`,
    `dP = (grad·vᵀ)∘mask`, `dS = P∘(dP − Σⱼ P·dP)`, `dq = scale · dS·k`,
    `dk += scale · dSᵀ·q`. That is one more `q·kᵀ` product than the
    unfused backward pass. `causal`, `scale`, `p`, `seed` and the optional
    `key_bias` (added to the scaled scores) are the forward op's.

    ```mlir
    %dq, %dk, %dv = memopt.attention_backward %do, %q, %k, %v, %o, %lse
        {causal = true, scale = 1.250000e-01 : f64}
        : (tensor<4x12x1024x64xf32>, tensor<4x12x1024x64xf32>,
           tensor<4x12x1024x64xf32>, tensor<4x12x1024x64xf32>,
           tensor<4x12x1024x64xf32>, tensor<4x12x1024xf32>)
        -> (tensor<4x12x1024x64xf32>, tensor<4x12x1024x64xf32>,
            tensor<4x12x1024x64xf32>)
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$grad, MemOpt_FloatTensor:$q,
                   MemOpt_FloatTensor:$k, MemOpt_FloatTensor:$v,
                   MemOpt_FloatTensor:$out, MemOpt_FloatTensor:$lse,
                   Optional<MemOpt_FloatTensor>:$key_bias,
                   DefaultValuedAttr<BoolAttr, "false">:$causal,
                   F64Attr:$scale,
                   DefaultValuedAttr<F64Attr, "0.0">:$p,
                   DefaultValuedAttr<I64Attr, "0">:$seed);
  let results = (outs MemOpt_FloatTensor:$grad_q, MemOpt_FloatTensor:$grad_k,
                 MemOpt_FloatTensor:$grad_v);
}

//===----------------------------------------------------------------------===//
// Chunked linear + cross-entropy
//===----------------------------------------------------------------------===//

// A language model's last linear layer and its loss in one op (as
// Liger-Kernel's fused linear cross-entropy): the N×V logits and their
// gradient are never held, only a chunk of rows at a time.
// --memopt-fuse-linear-cross-entropy builds it from linear → cross_entropy
// when the vocabulary is large.

def MemOpt_LinearCrossEntropyOp : MemOpt_ForwardOp<"linear_cross_entropy",
    [MemOpt_FlopModel, MemOpt_PrecisionModel, MemOpt_WorkspaceModel]> {
  let summary = "linear layer and mean softmax cross-entropy, chunked";
  let description = [{
    Computes `memopt.cross_entropy(memopt.linear(hidden, weight, bias),
    labels)`: the mean over the `N` rows of `lse_n − logits[n, labels[n]]`
    with `logits = hidden·weightᵀ + bias` (`hidden` `N×H`, `weight` `V×H`,
    PyTorch's layout, so a tied embedding table serves as it is; an optional
    `bias` of `V` elements, added as memopt.linear adds it) and
    `lse_n = log Σ_v exp(logits[n, v])`, without holding the `N×V` logits:
    the kernel computes them `chunk` rows at a time. A label outside
    `[0, V)` is a runtime error.

    Besides the 0-d loss it returns `lse`, the `N` row log-sum-exps (f32,
    or f64 for f64 operands; the loss has that type too), from which
    `memopt.linear_cross_entropy_backward` recomputes each chunk's
    probabilities. The gradient rule saves `hidden`, `weight`, `labels`,
    `lse` and the bias. Under mixed precision `hidden`, `weight` and `bias`
    take the low precision (linear's class) and the softmax and the loss
    stay f32.

    ```mlir
    %loss, %lse = memopt.linear_cross_entropy %h, %wte, %labels {chunk = 64 : i64}
        : tensor<4096x768xf32>, tensor<50257x768xf32>, tensor<4096xi64>
    // %loss : tensor<f32>, %lse : tensor<4096xf32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$hidden, MemOpt_FloatTensor:$weight,
                   MemOpt_IndexTensor:$labels,
                   Optional<MemOpt_FloatTensor>:$bias, I64Attr:$chunk);
  let results = (outs MemOpt_ScalarFloatTensor:$result,
                 MemOpt_FloatTensor:$lse);
  let assemblyFormat = [{
    $hidden `,` $weight `,` $labels (`bias` $bias^)? attr-dict `:`
    type($hidden) `,` type($weight) `,` type($labels) (`,` type($bias)^)?
  }];
}

def MemOpt_LinearCrossEntropyBackwardOp
    : MemOpt_GradOp<"linear_cross_entropy_backward",
        [MemOpt_FlopModel, MemOpt_WorkspaceModel,
         AllTypesMatch<["hidden", "grad_hidden"]>,
         AllTypesMatch<["weight", "grad_weight"]>]> {
  let summary = "gradients of memopt.linear_cross_entropy, chunk by chunk";
  let description = [{
    From the loss's upstream gradient `grad_loss` (0-d), the forward op's
    `hidden`, `weight`, `labels` and `lse`, computes the gradients of
    `hidden` and `weight`. A chunk of rows at a time it recomputes the
    logits and forms `dlogits = grad_loss · (exp(logits − lse) −
    onehot(labels)) / N`, then `grad_hidden = dlogits·weight` and
    `grad_weight += dlogitsᵀ·hidden`: what `cross_entropy_backward` and
    the linear layer's gradients compute, with one more `hidden·weightᵀ`
    product. `chunk` is the forward op's. With the forward op's `bias` (its
    last operand) it also returns `grad_bias`, dlogits summed over the rows.

    ```mlir
    %dh, %dw = memopt.linear_cross_entropy_backward %one, %h, %wte, %labels, %lse {chunk = 64 : i64}
        : (tensor<f32>, tensor<4096x768xf32>, tensor<50257x768xf32>,
           tensor<4096xi64>, tensor<4096xf32>)
        -> (tensor<4096x768xf32>, tensor<50257x768xf32>)
    ```
  }];
  let arguments = (ins MemOpt_ScalarFloatTensor:$grad_loss,
                   MemOpt_FloatTensor:$hidden, MemOpt_FloatTensor:$weight,
                   MemOpt_IndexTensor:$labels, MemOpt_FloatTensor:$lse,
                   Optional<MemOpt_FloatTensor>:$bias, I64Attr:$chunk);
  let results = (outs MemOpt_FloatTensor:$grad_hidden,
                 MemOpt_FloatTensor:$grad_weight,
                 Optional<MemOpt_FloatTensor>:$grad_bias);
}

def MemOpt_LinearCrossEntropyWithGradOp
    : MemOpt_GradOp<"linear_cross_entropy_with_grad",
        [MemOpt_FlopModel, MemOpt_WorkspaceModel,
         AllTypesMatch<["hidden", "grad_hidden"]>,
         AllTypesMatch<["weight", "grad_weight"]>]> {
  let summary = "memopt.linear_cross_entropy and its backward in one pass";
  let description = [{
    What `memopt.linear_cross_entropy` followed by
    `memopt.linear_cross_entropy_backward` on the same `hidden`, `weight`,
    `labels` and `chunk` compute, the loss and both gradients, with the
    logits of each chunk computed once instead of twice: a chunk's
    log-sum-exps and losses, then in place its `dlogits = grad_loss ·
    (exp(logits − lse) − onehot(labels)) / N`, then `grad_hidden`'s rows and
    `grad_weight`'s sum. Same results as the two ops, bit for bit on the CPU
    (the same products and row arithmetic; the log-sum-exp rounded to the
    loss's type before the gradient uses it, as the forward op's output is),
    without the `lse` tensor.

    `--memopt-fuse-loss-gradient` builds it on a training step where the
    backward op's `grad_loss` is known by then and nothing reads the loss
    before the backward op runs; the op takes the backward op's place.
    Its workspace is the backward op's plus the `N` log-sum-exps (which the
    CUDA backend keeps there between its two passes). With a `bias` (the
    last operand) it also returns `grad_bias`.

    ```mlir
    %loss, %dh, %dw = memopt.linear_cross_entropy_with_grad %one, %h, %wte, %labels {chunk = 64 : i64}
        : (tensor<f32>, tensor<4096x768xf32>, tensor<50257x768xf32>,
           tensor<4096xi64>)
        -> (tensor<f32>, tensor<4096x768xf32>, tensor<50257x768xf32>)
    ```
  }];
  let arguments = (ins MemOpt_ScalarFloatTensor:$grad_loss,
                   MemOpt_FloatTensor:$hidden, MemOpt_FloatTensor:$weight,
                   MemOpt_IndexTensor:$labels,
                   Optional<MemOpt_FloatTensor>:$bias, I64Attr:$chunk);
  let results = (outs MemOpt_ScalarFloatTensor:$result,
                 MemOpt_FloatTensor:$grad_hidden,
                 MemOpt_FloatTensor:$grad_weight,
                 Optional<MemOpt_FloatTensor>:$grad_bias);
}

#endif // MEMOPT_DIALECT_MEMOPT_IR_MEMOPTFUSEDOPS_TD
