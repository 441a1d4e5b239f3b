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
#define MEMOPT_KERNEL(KIND, NAME) {KernelKind::KIND, NAME},
#include "memopt/Contract/Kernels.def"
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
  case KernelKind::Silu:
  case KernelKind::Exp:
  case KernelKind::Log:
  case KernelKind::Sqrt:
  case KernelKind::Abs:
  case KernelKind::LeakyRelu:
  case KernelKind::Elu:
  case KernelKind::Clamp:
  case KernelKind::Dropout:
  case KernelKind::Softmax:
  case KernelKind::Reshape:
  case KernelKind::BatchNorm:
  case KernelKind::BatchNormInference:
  case KernelKind::BatchNormAct:
  case KernelKind::LayerNorm:
  case KernelKind::RmsNorm:
    return outputIndex == 0 && inputIndex == 0;
  case KernelKind::Add:
  case KernelKind::Sub:
  case KernelKind::Mul:
  case KernelKind::Div:
  case KernelKind::ReluBackward:
  case KernelKind::GeluBackward:
  case KernelKind::SigmoidBackward:
  case KernelKind::TanhBackward:
  case KernelKind::SiluBackward:
  case KernelKind::ExpBackward:
  case KernelKind::LogBackward:
  case KernelKind::SqrtBackward:
  case KernelKind::AbsBackward:
  case KernelKind::LeakyReluBackward:
  case KernelKind::EluBackward:
  case KernelKind::ClampBackward:
  case KernelKind::SoftmaxBackward:
  case KernelKind::BatchNormBackward:
  case KernelKind::LayerNormBackward:
  case KernelKind::RmsNormBackward:
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
  case KernelKind::Adam8bitUpdate:
    // Outputs: param, codes, absmax, codes, absmax over inputs 0, 2..5.
    return outputIndex == 0 ? inputIndex <= 1
                            : outputIndex <= 4 && inputIndex == outputIndex + 1;
  case KernelKind::AdafactorUpdate:
    // Outputs: param, then the state, over inputs 0, 2, 3.
    return outputIndex == 0 ? inputIndex == 0
                            : outputIndex <= 2 && inputIndex == outputIndex + 1;
  case KernelKind::Unscale:
    return outputIndex == 0 && inputIndex == 0;
  case KernelKind::UpdateLossScale:
    return outputIndex <= 1 && inputIndex == outputIndex;
  case KernelKind::AllReduce:
    // Every input is packed into the workspace before any output is
    // written.
    return inputIndex == outputIndex;
  case KernelKind::Broadcast:
    return inputIndex == 0 && outputIndex == 0;
  case KernelKind::AllGather:
    // Input 1 is storage only: its values are not read.
    return inputIndex == 1 && outputIndex == 0;
  default:
    return false;
  }
}

} // namespace memopt::runtime
