//===- Kernel.cpp - kernel names and in-place rules -----------------------===//
//
// The mapping between plan-file kernel names and KernelKind, and which
// kernels may run in place.
//
//===----------------------------------------------------------------------===//

#include "memopt/runtime/Kernel.h"

namespace memopt::runtime {

namespace {
struct KernelEntry {
  KernelKind kind;
  std::string_view name;
};

constexpr KernelEntry kKernels[] = {
    {KernelKind::Conv2D, "conv2d"},
    {KernelKind::Linear, "linear"},
    {KernelKind::MatMul, "matmul"},
    {KernelKind::Relu, "relu"},
    {KernelKind::Gelu, "gelu"},
    {KernelKind::Sigmoid, "sigmoid"},
    {KernelKind::Tanh, "tanh"},
    {KernelKind::LeakyRelu, "leaky_relu"},
    {KernelKind::Elu, "elu"},
    {KernelKind::Add, "add"},
    {KernelKind::Sub, "sub"},
    {KernelKind::Mul, "mul"},
    {KernelKind::Div, "div"},
    {KernelKind::BatchNorm, "batch_norm"},
    {KernelKind::BatchNormInference, "batch_norm_inference"},
    {KernelKind::LayerNorm, "layer_norm"},
    {KernelKind::MaxPool2D, "max_pool2d"},
    {KernelKind::AvgPool2D, "avg_pool2d"},
    {KernelKind::GlobalAvgPool2D, "global_avg_pool2d"},
    {KernelKind::Softmax, "softmax"},
    {KernelKind::Dropout, "dropout"},
    {KernelKind::Reshape, "reshape"},
    {KernelKind::Transpose, "transpose"},
    {KernelKind::Slice, "slice"},
    {KernelKind::Concat, "concat"},
    {KernelKind::UpsampleNearest2D, "upsample_nearest2d"},
    {KernelKind::Embedding, "embedding"},
    {KernelKind::CrossEntropy, "cross_entropy"},
    {KernelKind::MseLoss, "mse_loss"},
    {KernelKind::SumTo, "sum_to"},
    {KernelKind::Conv2DBackwardInput, "conv2d_backward_input"},
    {KernelKind::Conv2DBackwardWeight, "conv2d_backward_weight"},
    {KernelKind::ReluBackward, "relu_backward"},
    {KernelKind::GeluBackward, "gelu_backward"},
    {KernelKind::SigmoidBackward, "sigmoid_backward"},
    {KernelKind::TanhBackward, "tanh_backward"},
    {KernelKind::LeakyReluBackward, "leaky_relu_backward"},
    {KernelKind::EluBackward, "elu_backward"},
    {KernelKind::BatchNormBackward, "batch_norm_backward"},
    {KernelKind::LayerNormBackward, "layer_norm_backward"},
    {KernelKind::MaxPool2DBackward, "max_pool2d_backward"},
    {KernelKind::AvgPool2DBackward, "avg_pool2d_backward"},
    {KernelKind::GlobalAvgPool2DBackward, "global_avg_pool2d_backward"},
    {KernelKind::SoftmaxBackward, "softmax_backward"},
    {KernelKind::SliceBackward, "slice_backward"},
    {KernelKind::UpsampleNearest2DBackward, "upsample_nearest2d_backward"},
    {KernelKind::EmbeddingBackward, "embedding_backward"},
    {KernelKind::CrossEntropyBackward, "cross_entropy_backward"},
    {KernelKind::MseLossBackward, "mse_loss_backward"},
    {KernelKind::BatchNormAct, "batch_norm_act"},
    {KernelKind::BatchNormActBackward, "batch_norm_act_backward"},
    {KernelKind::SgdUpdate, "sgd_update"},
    {KernelKind::SgdMomentumUpdate, "sgd_momentum_update"},
    {KernelKind::AdamUpdate, "adam_update"},
    {KernelKind::Cast, "cast"},
    {KernelKind::FoundInf, "found_inf"},
    {KernelKind::Unscale, "unscale"},
    {KernelKind::UpdateLossScale, "update_loss_scale"},
    {KernelKind::Select, "select"},
};
} // namespace

std::string_view kernelName(KernelKind kind) {
  for (const KernelEntry &e : kKernels)
    if (e.kind == kind)
      return e.name;
  return "?";
}

std::optional<KernelKind> lookupKernel(std::string_view name) {
  for (const KernelEntry &e : kKernels)
    if (e.name == name)
      return e.kind;
  return std::nullopt;
}

const std::vector<KernelKind> &allKernelKinds() {
  static const std::vector<KernelKind> kinds = [] {
    std::vector<KernelKind> v;
    for (const KernelEntry &e : kKernels)
      v.push_back(e.kind);
    return v;
  }();
  return kinds;
}

bool kernelAllowsInPlace(KernelKind kind, size_t outputIndex,
                         size_t inputIndex) {
  switch (kind) {
  case KernelKind::Relu:
  case KernelKind::Gelu:
  case KernelKind::Sigmoid:
  case KernelKind::Tanh:
  case KernelKind::LeakyRelu:
  case KernelKind::Elu:
  case KernelKind::Dropout:
  case KernelKind::Softmax:
  case KernelKind::Reshape:
  case KernelKind::BatchNorm:
  case KernelKind::BatchNormInference:
  case KernelKind::BatchNormAct:
  case KernelKind::LayerNorm:
    return outputIndex == 0 && inputIndex == 0;
  case KernelKind::Add:
  case KernelKind::Sub:
  case KernelKind::Mul:
  case KernelKind::Div:
  case KernelKind::ReluBackward:
  case KernelKind::GeluBackward:
  case KernelKind::SigmoidBackward:
  case KernelKind::TanhBackward:
  case KernelKind::LeakyReluBackward:
  case KernelKind::EluBackward:
  case KernelKind::SoftmaxBackward:
  case KernelKind::BatchNormBackward:
  case KernelKind::LayerNormBackward:
  case KernelKind::BatchNormActBackward:
    return outputIndex == 0 && inputIndex <= 1;
  case KernelKind::CrossEntropyBackward:
    return outputIndex == 0 && inputIndex == 1;
  case KernelKind::MseLossBackward:
    return outputIndex == 0 && (inputIndex == 1 || inputIndex == 2);
  case KernelKind::SgdUpdate:
    return outputIndex == 0 && inputIndex <= 1;
  case KernelKind::SgdMomentumUpdate:
    return outputIndex <= 1 && inputIndex <= 2;
  case KernelKind::AdamUpdate:
    return outputIndex <= 2 && inputIndex <= 3;
  case KernelKind::Unscale:
    return outputIndex == 0 && inputIndex == 0;
  case KernelKind::UpdateLossScale:
    return outputIndex <= 1 && inputIndex == outputIndex;
  default:
    return false;
  }
}

} // namespace memopt::runtime
