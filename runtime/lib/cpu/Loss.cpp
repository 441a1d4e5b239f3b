//===- Loss.cpp - cross_entropy and mse_loss on the CPU -------------------===//
//
// Both reduce by the mean, accumulating in double. cross_entropy computes
// log-sum-exp - logit[label] per row with the max subtracted (no overflow
// for large logits); a label outside [0, C) is a kernel failure, as in
// PyTorch, rather than a read out of bounds.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

#include "memopt/runtime/ElementwiseMath.h"

namespace memopt::runtime::cpu {

namespace {

template <typename T> void crossEntropyImpl(const KernelCall &call) {
  const TensorRef &logits = call.in(0), &labels = call.in(1);
  const int64_t n = logits.dim(0), c = logits.dim(1);
  const T *px = logits.as<const T>();
  double total = 0;
  for (int64_t r = 0; r < n; ++r) {
    const int64_t label = loadIndex(labels, r);
    if (label < 0 || label >= c)
      kernelError("label ", label, " of row ", r, " is outside [0, ", c, ")");
    const T *row = px + r * c;
    math::LogSumExp<double> lse;
    for (int64_t j = 0; j < c; ++j)
      lse.add(static_cast<double>(row[j]));
    total += lse.value() - static_cast<double>(row[label]);
  }
  *call.out(0).as<T>() = static_cast<T>(total / static_cast<double>(n));
}

template <typename T> void mseLossImpl(const KernelCall &call) {
  const TensorRef &p = call.in(0);
  const T *pp = p.as<const T>(), *pt = call.in(1).as<const T>();
  double total = 0;
  for (int64_t i = 0; i < p.numElements; ++i) {
    double d = static_cast<double>(pp[i]) - static_cast<double>(pt[i]);
    total += d * d;
  }
  *call.out(0).as<T>() =
      static_cast<T>(total / static_cast<double>(p.numElements));
}

} // namespace

void crossEntropy(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype,
                [&](auto tag) { crossEntropyImpl<decltype(tag)>(call); });
}

void mseLoss(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype,
                [&](auto tag) { mseLossImpl<decltype(tag)>(call); });
}

} // namespace memopt::runtime::cpu
