//===- CpuBackend.cpp - the CPU backend -----------------------------------===//
//
// Host memory and a table from kernel kind to kernel. The reference
// backend: always built, run by every test, fast where it matters (f32 GEMMs
// and convolutions' products go through oneDNN, f64 ones through OpenBLAS).
//
// Mixed storage precisions are handled here, once, rather than in every
// kernel: a float kernel runs in one compute type (f64 if any float operand
// is f64, else f32), and operands stored in another float type are
// converted into temporaries before and results converted back after.
// Because inputs are converted before any output is written, in-place steps
// stay correct.
//
//===----------------------------------------------------------------------===//

#include "Convert.h"
#include "CpuKernels.h"

#include "memopt/runtime/BlasCore.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>

namespace memopt::runtime {

namespace {

using cpu::KernelCall;

struct KernelEntry {
  void (*fn)(const KernelCall &);
  /// Whether float operands are brought to one compute type first.
  bool computesInFloat;
  /// Runs first, on the step's own tensors; true when it did the whole step
  /// (an optimizer step skipped by its `skip` operand).
  bool (*prologue)(const KernelCall &) = nullptr;
  /// An input the kernel reads in its own dtype, never widened (an
  /// optimizer's gradient, which may be narrower than its parameter), or -1.
  int nativeInput = -1;
};

KernelEntry lookup(KernelKind kind) {
  switch (kind) {
  case KernelKind::Conv2D:
    return {cpu::conv2d, true};
  case KernelKind::Linear:
    return {cpu::linear, true};
  case KernelKind::MatMul:
    return {cpu::matmul, true};
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
    return {cpu::unary, true};
  case KernelKind::Compare:
    return {cpu::compare, false};
  case KernelKind::Add:
  case KernelKind::Sub:
  case KernelKind::Mul:
  case KernelKind::Div:
  case KernelKind::Maximum:
  case KernelKind::Minimum:
  case KernelKind::MaximumWeight:
    return {cpu::binary, true};
  case KernelKind::ReduceMax:
  case KernelKind::ReduceMin:
    return {cpu::reduceExtremum, true};
  case KernelKind::ReduceExtremumBackward:
    return {cpu::reduceExtremumBackward, true};
  case KernelKind::BatchNorm:
    return {cpu::batchNorm, true};
  case KernelKind::BatchNormInference:
    return {cpu::batchNormInference, true};
  case KernelKind::LayerNorm:
    return {cpu::layerNorm, true};
  case KernelKind::RmsNorm:
    return {cpu::rmsNorm, true};
  case KernelKind::MaxPool2D:
    return {cpu::maxPool2d, true};
  case KernelKind::AvgPool2D:
    return {cpu::avgPool2d, true};
  case KernelKind::GlobalAvgPool2D:
    return {cpu::globalAvgPool2d, true};
  case KernelKind::Softmax:
    return {cpu::softmax, true};
  case KernelKind::Dropout:
    return {cpu::dropout, true};
  case KernelKind::CrossEntropy:
    return {cpu::crossEntropy, true};
  case KernelKind::MseLoss:
    return {cpu::mseLoss, true};
  case KernelKind::Reshape:
    return {cpu::reshape, false};
  case KernelKind::Transpose:
    return {cpu::transpose, false};
  case KernelKind::Slice:
    return {cpu::slice, false};
  case KernelKind::Concat:
    return {cpu::concat, false};
  case KernelKind::UpsampleNearest2D:
    return {cpu::upsampleNearest2d, false};
  case KernelKind::Embedding:
    return {cpu::embedding, false};
  case KernelKind::SumTo:
    return {cpu::sumTo, true};
  case KernelKind::Conv2DBackwardInput:
    return {cpu::conv2dBackwardInput, true};
  case KernelKind::Conv2DBackwardWeight:
    return {cpu::conv2dBackwardWeight, true};
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
    return {cpu::activationBackward, true};
  case KernelKind::BatchNormBackward:
    return {cpu::batchNormBackward, true};
  case KernelKind::LayerNormBackward:
    return {cpu::layerNormBackward, true};
  case KernelKind::RmsNormBackward:
    return {cpu::rmsNormBackward, true};
  case KernelKind::BatchNormAct:
    return {cpu::batchNormAct, true};
  case KernelKind::BatchNormActBackward:
    return {cpu::batchNormActBackward, true};
  case KernelKind::Attention:
    return {cpu::attention, true};
  case KernelKind::AttentionBackward:
    return {cpu::attentionBackward, true};
  case KernelKind::LinearCrossEntropy:
    return {cpu::linearCrossEntropy, true};
  case KernelKind::LinearCrossEntropyBackward:
    return {cpu::linearCrossEntropyBackward, true};
  case KernelKind::LinearCrossEntropyWithGrad:
    return {cpu::linearCrossEntropyWithGrad, true};
  case KernelKind::MaxPool2DBackward:
    return {cpu::maxPool2dBackward, true};
  case KernelKind::AvgPool2DBackward:
    return {cpu::avgPool2dBackward, true};
  case KernelKind::GlobalAvgPool2DBackward:
    return {cpu::globalAvgPool2dBackward, true};
  case KernelKind::SoftmaxBackward:
    return {cpu::softmaxBackward, true};
  case KernelKind::SliceBackward:
    return {cpu::sliceBackward, false};
  case KernelKind::UpsampleNearest2DBackward:
    return {cpu::upsampleNearest2dBackward, true};
  case KernelKind::EmbeddingBackward:
    return {cpu::embeddingBackward, true};
  case KernelKind::CrossEntropyBackward:
    return {cpu::crossEntropyBackward, true};
  case KernelKind::MseLossBackward:
    return {cpu::mseLossBackward, true};
  case KernelKind::SgdUpdate:
    return {cpu::sgdUpdate, true, cpu::skipOptimizerStep, 1};
  case KernelKind::SgdMomentumUpdate:
    return {cpu::sgdMomentumUpdate, true, cpu::skipOptimizerStep, 1};
  case KernelKind::AdamUpdate:
    return {cpu::adamUpdate, true, cpu::skipOptimizerStep, 1};
  case KernelKind::Adam8bitUpdate:
    return {cpu::adam8bitUpdate, true, cpu::skipOptimizerStep, 1};
  case KernelKind::AdafactorUpdate:
    return {cpu::adafactorUpdate, true, cpu::skipOptimizerStep, 1};
  case KernelKind::ClipCoefficient:
    return {cpu::clipCoefficient, false};
  case KernelKind::SquareSum:
    return {cpu::squareSum, false};
  // Each operand in its own dtype: a cast converts directly (rounding
  // once), found_inf tests f16/bf16 bit patterns.
  case KernelKind::Cast:
    return {cpu::cast, false};
  case KernelKind::FoundInf:
    return {cpu::foundInf, false};
  case KernelKind::Unscale:
    return {cpu::unscale, false};
  case KernelKind::UpdateLossScale:
    return {cpu::updateLossScale, false};
  case KernelKind::Select:
    return {cpu::select, false};
  case KernelKind::AllReduce:
  case KernelKind::ReduceScatter:
  case KernelKind::Broadcast:
  case KernelKind::AllGather:
    // The executor runs collectives (Executor::setCollectives).
    break;
  }
  throw Error(ErrorCode::Internal,
              concat("CPU backend has no kernel '", kernelName(kind), "'"));
}

/// A heap buffer for a converted operand.
struct Scratch {
  std::unique_ptr<char[]> bytes;
  TensorRef ref;
};

class CpuBackend final : public Backend {
public:
  std::string_view name() const override { return "cpu"; }

  void *allocate(size_t bytes, size_t alignment) override {
    if (bytes == 0)
      return nullptr;
    void *p = nullptr;
    if (alignment < sizeof(void *))
      alignment = sizeof(void *);
    if (posix_memalign(&p, alignment, bytes) != 0 || !p)
      throw Error(ErrorCode::OutOfMemory,
                  concat("cpu: cannot allocate ", bytes, " bytes"));
    stats.bytesInUse += bytes;
    stats.peakBytes = std::max(stats.peakBytes, stats.bytesInUse);
    return p;
  }

  void deallocate(void *ptr, size_t bytes) noexcept override {
    if (!ptr)
      return;
    std::free(ptr);
    stats.bytesInUse -= bytes;
  }

  void copyToDevice(void *dst, const void *src, size_t bytes) override {
    if (bytes)
      std::memcpy(dst, src, bytes);
  }
  void copyToHost(void *dst, const void *src, size_t bytes) override {
    if (bytes)
      std::memcpy(dst, src, bytes);
  }
  void copyOnDevice(void *dst, const void *src, size_t bytes) override {
    if (bytes)
      std::memmove(dst, src, bytes);
  }

  void execute(const Step &step, const std::vector<TensorRef> &inputs,
               const std::vector<TensorRef> &outputs,
               const StepContext &context) override {
    KernelEntry entry = lookup(step.kernel);
    if (entry.prologue &&
        entry.prologue(KernelCall{step, inputs, outputs, context}))
      return;
    if (!entry.computesInFloat)
      return entry.fn(KernelCall{step, inputs, outputs, context});

    DType compute = DType::F32;
    bool mixed = false;
    auto converted = [&](const std::vector<TensorRef> *list, size_t i) {
      return list != &inputs || static_cast<int>(i) != entry.nativeInput;
    };
    for (const auto *list : {&inputs, &outputs})
      for (size_t i = 0; i < list->size(); ++i)
        if ((*list)[i].dtype == DType::F64 && converted(list, i))
          compute = DType::F64;
    for (const auto *list : {&inputs, &outputs})
      for (size_t i = 0; i < list->size(); ++i)
        if (isFloatDType((*list)[i].dtype) && (*list)[i].dtype != compute &&
            converted(list, i))
          mixed = true;
    if (!mixed)
      return entry.fn(KernelCall{step, inputs, outputs, context});

    std::vector<Scratch> scratch;
    scratch.reserve(inputs.size() + outputs.size());
    auto widen = [&](const TensorRef &t, bool load) {
      if (!isFloatDType(t.dtype) || t.dtype == compute)
        return t;
      Scratch s;
      s.bytes.reset(new char[t.numElements * dtypeSize(compute)]);
      s.ref = t;
      s.ref.data = s.bytes.get();
      s.ref.dtype = compute;
      if (load)
        cpu::convertFloats(t.data, t.dtype, s.ref.data, compute, t.numElements);
      scratch.push_back(std::move(s));
      return scratch.back().ref;
    };
    std::vector<TensorRef> in, out;
    for (size_t i = 0; i < inputs.size(); ++i)
      in.push_back(converted(&inputs, i) ? widen(inputs[i], true) : inputs[i]);
    for (const TensorRef &t : outputs)
      out.push_back(widen(t, false));
    entry.fn(KernelCall{step, in, out, context});
    for (size_t i = 0; i < outputs.size(); ++i)
      if (out[i].data != outputs[i].data)
        cpu::convertFloats(out[i].data, compute, outputs[i].data,
                           outputs[i].dtype, outputs[i].numElements);
  }

  MemoryStats memoryStats() const override { return stats; }

private:
  MemoryStats stats;
};

} // namespace

std::unique_ptr<Backend> createCpuBackend() {
  // Once a process: OpenBLAS on its generic kernels makes every f64 GEMM
  // several times slower, and only the program's environment can fix it.
  static const bool warned = [] {
    if (auto core = betterBlasCore())
      std::fprintf(stderr,
                   "memopt: OpenBLAS runs its generic %s kernels on this CPU "
                   "(f64 matrix products several times slower); start the "
                   "program with OPENBLAS_CORETYPE=%s\n",
                   blasCoreName().c_str(), core->c_str());
    return true;
  }();
  (void)warned;
  return std::make_unique<CpuBackend>();
}

} // namespace memopt::runtime
