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
    {KernelKind::Mul, "mul"},
    {KernelKind::BatchNorm, "batch_norm"},
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

bool kernelAllowsInPlace(KernelKind kind, size_t inputIndex) {
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
  case KernelKind::LayerNorm:
    return inputIndex == 0;
  case KernelKind::Add:
  case KernelKind::Mul:
    return inputIndex <= 1;
  default:
    return false;
  }
}

} // namespace memopt::runtime
