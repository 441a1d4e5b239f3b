//===- MemOptPrecisionOps.td - casts and loss scaling ------*- tablegen -*-===//
//
// The vocabulary of `--memopt-mixed-precision`: element-type casts, and the
// loss-scaling ops `--memopt-autodiff` emits when the forward graph asks
// for loss scaling (PyTorch's GradScaler, as ops of the training step). The
// scale and its growth counter are explicit state of the step, and the
// overflow check feeds the optimizer ops' `skip` operand, so a device plan
// needs no host round trip.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_DIALECT_MEMOPT_IR_MEMOPTPRECISIONOPS_TD
#define MEMOPT_DIALECT_MEMOPT_IR_MEMOPTPRECISIONOPS_TD

def MemOpt_CastOp : MemOpt_Op<"cast", [Pure, SameOperandsAndResultShape,
    DeclareOpInterfaceMethods<MemOpt_DifferentiableOpInterface>,
    MemOpt_CostOpInterface]> {
  let summary = "convert a tensor's elements to another float type";
  let description = [{
    Converts every element of `x` to the result's element type, rounding to
    nearest (ties to even) when narrowing; values beyond f16's range become
    infinities, as `Tensor.to(torch.float16)` does. Its gradient is the cast
    of the upstream gradient back to `x`'s type.

    Casts fold away when they cannot change a value: a cast to the same
    type is its operand, a cast of a constant is a constant, and a cast of
    a cast whose intermediate type holds every value of the source exactly
    (f16 → f32 → f16, bf16 → f32 → f64) is one cast, or none.

    ```mlir
    %h = memopt.cast %x : tensor<8x64x32x32xf32> to tensor<8x64x32x32xf16>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$x);
  let results = (outs MemOpt_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `to` type($result)";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def MemOpt_FoundInfOp : MemOpt_GradOp<"found_inf", [MemOpt_FlopModel]> {
  let summary = "whether any gradient holds an infinity or a NaN";
  let description = [{
    1.0 when some element of some operand is ±inf or NaN, else 0.0: the
    `found_inf` of `torch.cuda.amp.GradScaler`, computed over the scaled
    gradients before they are unscaled. It feeds the optimizer ops' `skip`
    operand and `memopt.update_loss_scale`.

    ```mlir
    %found = memopt.found_inf %g0, %g1
        : (tensor<10x128xf32>, tensor<10xf32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Variadic<MemOpt_FloatTensor>:$values);
  let results = (outs MemOpt_ScalarF32Tensor:$result);
}

def MemOpt_UnscaleOp : MemOpt_GradOp<"unscale",
    [AllTypesMatch<["grad", "result"]>,
     DeclareOpInterfaceMethods<MemOpt_InPlaceOpInterface,
                               ["getInPlaceOperands"]>]> {
  let summary = "divide a scaled gradient by the loss scale";
  let description = [{
    `grad · (1 / scale)`, the reciprocal taken in double and rounded to f32
    once, the product in f32 (GradScaler's `unscale_`). Can run in place on
    `grad`.

    ```mlir
    %g1 = memopt.unscale %g, %scale
        : (tensor<10x128xf32>, tensor<f32>) -> tensor<10x128xf32>
    ```
  }];
  let arguments = (ins MemOpt_FloatTensor:$grad, MemOpt_ScalarF32Tensor:$scale);
  let results = (outs MemOpt_FloatTensor:$result);
}

def MemOpt_UpdateLossScaleOp : MemOpt_GradOp<"update_loss_scale"> {
  let summary = "GradScaler's dynamic loss-scale update";
  let description = [{
    `torch.cuda.amp.GradScaler.update`: after an overflow (`found_inf`
    nonzero) the scale is multiplied by `backoff_factor` and the counter of
    consecutive finite steps resets; otherwise the counter grows and, when it
    reaches `growth_interval`, the scale is multiplied by `growth_factor`
    (unless that overflows f32) and the counter resets.

    ```mlir
    %s1, %n1 = memopt.update_loss_scale %s, %n, %found
        {backoff_factor = 5.000000e-01 : f64, growth_factor = 2.000000e+00 : f64,
         growth_interval = 2000 : i64}
        : (tensor<f32>, tensor<i32>, tensor<f32>) -> (tensor<f32>, tensor<i32>)
    ```
  }];
  let arguments = (ins MemOpt_ScalarF32Tensor:$scale,
                   MemOpt_ScalarI32Tensor:$growth_tracker,
                   MemOpt_ScalarF32Tensor:$found_inf,
                   F64Attr:$growth_factor, F64Attr:$backoff_factor,
                   I64Attr:$growth_interval);
  let results = (outs MemOpt_ScalarF32Tensor:$new_scale,
                 MemOpt_ScalarI32Tensor:$new_growth_tracker);
}

def MemOpt_SelectOp : MemOpt_GradOp<"select",
    [AllTypesMatch<["true_value", "false_value", "result"]>]> {
  let summary = "one of two tensors, chosen by a flag";
  let description = [{
    `true_value` when `condition` is nonzero, else `false_value`. Keeps
    Adam's step count where it was when loss scaling skips a step.

    ```mlir
    %t1 = memopt.select %found, %t, %t_next
        : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins MemOpt_ScalarF32Tensor:$condition,
                   MemOpt_AnyTensor:$true_value, MemOpt_AnyTensor:$false_value);
  let results = (outs MemOpt_AnyTensor:$result);
}

#endif // MEMOPT_DIALECT_MEMOPT_IR_MEMOPTPRECISIONOPS_TD
