//===- KernelRules.cpp - per-kernel validation of plan steps --------------===//
//
// One rule per kernel, mirroring the dialect's verifier: the plan must say
// exactly what the compiler would have inferred. Messages read like the
// compiler's (`expected output 0 shape 8x64x56x56, got 8x64x55x55`) and are
// prefixed with the step (`plan: steps[3] (conv2d): ...`).
//
// This file holds checkStep, which picks each kernel's rule, and the
// message helpers the rules share; the rules are in KernelRules*.cpp by op
// family and their validation context, Rules, in KernelRulesImpl.h.
//
//===----------------------------------------------------------------------===//

#include "KernelRules.h"

#include "KernelRulesImpl.h"

using nlohmann::json;

namespace memopt::runtime::detail {

std::string formatInts(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string describe(const TensorInfo &t) {
  return concat(formatShape(t.shape), " ", dtypeName(t.dtype));
}

KernelAttrs checkStep(KernelKind kind, const json &attrs,
                      const std::vector<const TensorInfo *> &inputs,
                      const std::vector<const TensorInfo *> &outputs,
                      const std::string &where) {
  Rules r(kind, attrs, inputs, outputs, where);
  switch (kind) {
  case KernelKind::Conv2D:
    return conv2d(r);
  case KernelKind::Linear:
    return linear(r);
  case KernelKind::MatMul:
    return matmul(r);
  case KernelKind::Relu:
  case KernelKind::Gelu:
  case KernelKind::Sigmoid:
  case KernelKind::Tanh:
  case KernelKind::Silu:
  case KernelKind::Exp:
  case KernelKind::Log:
  case KernelKind::Sqrt:
  case KernelKind::Abs:
    return unary(r, std::nullopt);
  case KernelKind::LeakyRelu:
    return unary(r, 0.01);
  case KernelKind::Elu:
    return unary(r, 1.0);
  case KernelKind::Clamp:
    return clamp(r, /*backward=*/false);
  case KernelKind::Compare:
    return compare(r);
  case KernelKind::Add:
  case KernelKind::Sub:
  case KernelKind::Mul:
  case KernelKind::Div:
  case KernelKind::Maximum:
  case KernelKind::Minimum:
  case KernelKind::MaximumWeight:
    return binary(r);
  case KernelKind::ReduceMax:
  case KernelKind::ReduceMin:
    return reduceExtremum(r);
  case KernelKind::ReduceExtremumBackward:
    return reduceExtremumBackward(r);
  case KernelKind::BatchNorm:
    return batchNorm(r);
  case KernelKind::BatchNormInference:
    return batchNormInference(r);
  case KernelKind::LayerNorm:
    return layerNorm(r, /*rms=*/false);
  case KernelKind::RmsNorm:
    return layerNorm(r, /*rms=*/true);
  case KernelKind::MaxPool2D:
  case KernelKind::AvgPool2D:
    return pool2d(r);
  case KernelKind::GlobalAvgPool2D:
    return globalAvgPool2d(r);
  case KernelKind::Softmax:
    return softmax(r);
  case KernelKind::Dropout:
    return dropout(r);
  case KernelKind::Reshape:
    return reshape(r);
  case KernelKind::Transpose:
    return transpose(r);
  case KernelKind::Slice:
    return slice(r);
  case KernelKind::Concat:
    return concatRule(r);
  case KernelKind::UpsampleNearest2D:
    return upsample(r);
  case KernelKind::Embedding:
    return embedding(r);
  case KernelKind::CrossEntropy:
    return crossEntropy(r);
  case KernelKind::MseLoss:
    return mseLoss(r);
  case KernelKind::SumTo:
    return sumTo(r);
  case KernelKind::Conv2DBackwardInput:
    return conv2dBackwardInput(r);
  case KernelKind::Conv2DBackwardWeight:
    return conv2dBackwardWeight(r);
  case KernelKind::ReluBackward:
  case KernelKind::GeluBackward:
  case KernelKind::SigmoidBackward:
  case KernelKind::TanhBackward:
  case KernelKind::SiluBackward:
  case KernelKind::ExpBackward:
  case KernelKind::LogBackward:
  case KernelKind::SqrtBackward:
  case KernelKind::AbsBackward:
    return activationBackward(r, std::nullopt);
  case KernelKind::LeakyReluBackward:
    return activationBackward(r, 0.01);
  case KernelKind::EluBackward:
    return activationBackward(r, 1.0);
  case KernelKind::ClampBackward:
    return clamp(r, /*backward=*/true);
  case KernelKind::BatchNormBackward:
    return normBackward(r, NormRule::Batch);
  case KernelKind::LayerNormBackward:
    return normBackward(r, NormRule::Layer);
  case KernelKind::RmsNormBackward:
    return normBackward(r, NormRule::Rms);
  case KernelKind::MaxPool2DBackward:
    return maxPool2dBackward(r);
  case KernelKind::AvgPool2DBackward:
    return avgPool2dBackward(r);
  case KernelKind::GlobalAvgPool2DBackward:
    return globalAvgPool2dBackward(r);
  case KernelKind::SoftmaxBackward:
    return softmaxBackward(r);
  case KernelKind::SliceBackward:
    return sliceBackward(r);
  case KernelKind::UpsampleNearest2DBackward:
    return upsampleBackward(r);
  case KernelKind::EmbeddingBackward:
    return embeddingBackward(r);
  case KernelKind::CrossEntropyBackward:
    return crossEntropyBackward(r);
  case KernelKind::MseLossBackward:
    return mseLossBackward(r);
  case KernelKind::BatchNormAct:
    return batchNormAct(r);
  case KernelKind::BatchNormActBackward:
    return batchNormActBackward(r);
  case KernelKind::Attention:
    return attention(r);
  case KernelKind::AttentionBackward:
    return attentionBackward(r);
  case KernelKind::LinearCrossEntropy:
    return linearCrossEntropy(r);
  case KernelKind::LinearCrossEntropyBackward:
    return linearCrossEntropyBackward(r);
  case KernelKind::LinearCrossEntropyWithGrad:
    return linearCrossEntropyWithGrad(r);
  case KernelKind::SgdUpdate:
    return sgdUpdate(r);
  case KernelKind::SgdMomentumUpdate:
    return sgdMomentumUpdate(r);
  case KernelKind::AdamUpdate:
    return adamUpdate(r);
  case KernelKind::Adam8bitUpdate:
    return adam8bitUpdate(r);
  case KernelKind::AdafactorUpdate:
    return adafactorUpdate(r);
  case KernelKind::ClipCoefficient:
    return clipCoefficient(r);
  case KernelKind::SquareSum:
    return squareSum(r);
  case KernelKind::Cast:
    return cast(r);
  case KernelKind::FoundInf:
    return foundInf(r);
  case KernelKind::Unscale:
    return unscale(r);
  case KernelKind::UpdateLossScale:
    return updateLossScale(r);
  case KernelKind::Select:
    return selectRule(r);
  case KernelKind::AllReduce:
    return allReduce(r);
  case KernelKind::ReduceScatter:
    return reduceScatter(r);
  case KernelKind::Broadcast:
    return broadcast(r);
  case KernelKind::AllGather:
    return allGather(r);
  }
  r.error("internal error: no rule for kernel '", kernelName(kind), "'");
}

} // namespace memopt::runtime::detail
