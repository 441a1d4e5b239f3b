//===- DnnBatchNorm.cpp - batch norm on cuDNN -----------------------------===//
//
// Batch norm is cuDNN's spatial batch norm. cuDNN keeps the per-channel
// operands in f32 (f64 for f64 x), so those are the only combinations run
// here; any other (f16 gamma, say) is refused with a clear error rather
// than computed wrongly. The running statistics are not updated in place:
// the inputs are copied into the new_running_* outputs, which cuDNN then
// updates with factor `momentum` (and the unbiased batch variance, as the
// CPU does). The backward recomputes the batch statistics from x.
//
//===----------------------------------------------------------------------===//

#include "DnnCommon.h"

namespace memopt::runtime::cuda {

namespace {

/// x (N x C x ...) as the N x C x inner x 1 tensor cuDNN's spatial batch
/// norm sees, and the 1 x C x 1 x 1 per-channel operands.
struct BatchNormDescs {
  TensorDesc x, param;

  BatchNormDescs(const Step &step, const TensorRef &xt,
                 const TensorRef &gamma) {
    // cuDNN's per-channel type for x's type (cudnnDeriveBNTensorDescriptor).
    const DType required = xt.dtype == DType::F64 ? DType::F64 : DType::F32;
    if (gamma.dtype != required)
      throw Error(
          ErrorCode::KernelFailure,
          runtime::concat(kernelName(step.kernel), " on CUDA: x of dtype ",
                          dtypeName(xt.dtype),
                          " needs gamma, beta and the running statistics in ",
                          dtypeName(required), " (cuDNN's batch norm), got ",
                          dtypeName(gamma.dtype),
                          "; this combination is not supported by the CUDA "
                          "backend"));
    if (xt.numElements == 0)
      return; // Nothing to compute; the descriptors stay unset.
    const int64_t n = xt.dim(0), c = xt.dim(1);
    x.set(xt.dtype, n, c, xt.numElements / (n * c), 1);
    param.set(gamma.dtype, 1, c, 1, 1);
  }
};

} // namespace

/// cuDNN does not document in-place batch norm, so a plan that writes
/// `output` over `input` (which the compiler never does for these kernels)
/// is refused rather than run on an unspecified behaviour.
void refuseAliasing(const TensorRef &output, const TensorRef &input,
                    const char *what) {
  if (output.data == input.data && output.numElements > 0)
    throw Error(ErrorCode::KernelFailure,
                runtime::concat("cuda: ", what,
                                " in place is not supported (cuDNN does not "
                                "document in-place batch norm); give the "
                                "output its own buffer"));
}

void batchNorm(const KernelCall &call) {
  // (x, gamma, beta, running_mean, running_var) ->
  // (y, new_running_mean, new_running_var)
  const TensorRef &x = call.in(0), &gamma = call.in(1);
  const BatchNormAttrs &a = call.step.get<BatchNormAttrs>();
  refuseAliasing(call.out(0), x, "batch_norm");
  BatchNormDescs d(call.step, x, gamma);
  copyAsync(call, call.out(1).data, call.in(3).data, call.in(3).bytes());
  copyAsync(call, call.out(2).data, call.in(4).data, call.in(4).bytes());
  if (x.numElements == 0)
    return;
  check(cudnnBatchNormalizationForwardTraining(
            call.cuda.cudnn, CUDNN_BATCHNORM_SPATIAL, kOne.forType(x.dtype),
            kZero.forType(x.dtype), d.x, x.data, d.x, call.out(0).data, d.param,
            gamma.data, call.in(2).data, a.momentum, call.out(1).data,
            call.out(2).data, a.epsilon, nullptr, nullptr),
        "cudnnBatchNormalizationForwardTraining");
}

void batchNormBackward(const KernelCall &call) {
  // (grad_output, x, gamma) -> (grad_x, grad_gamma, grad_beta)
  const TensorRef &dy = call.in(0), &x = call.in(1), &gamma = call.in(2);
  const double epsilon = call.step.get<NormBackwardAttrs>().epsilon;
  refuseAliasing(call.out(0), dy, "batch_norm_backward");
  refuseAliasing(call.out(0), x, "batch_norm_backward");
  BatchNormDescs d(call.step, x, gamma);
  if (x.numElements == 0)
    return;
  // No saved statistics: cuDNN recomputes the batch mean and inverse
  // standard deviation from x, as the CPU kernel does.
  check(cudnnBatchNormalizationBackward(
            call.cuda.cudnn, CUDNN_BATCHNORM_SPATIAL, kOne.forType(x.dtype),
            kZero.forType(x.dtype), kOne.forType(x.dtype),
            kZero.forType(x.dtype), d.x, x.data, d.x, dy.data, d.x,
            call.out(0).data, d.param, gamma.data, call.out(1).data,
            call.out(2).data, epsilon, nullptr, nullptr),
        "cudnnBatchNormalizationBackward");
}

} // namespace memopt::runtime::cuda
