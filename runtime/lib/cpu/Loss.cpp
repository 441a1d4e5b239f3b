//===- Loss.cpp - cross_entropy, mse_loss and their gradients on the CPU --===//
//
// Both reduce by the mean, accumulating in double. cross_entropy computes
// log-sum-exp - logit[label] per row with the max subtracted (no overflow
// for large logits; RowSoftmax.h, shared with linear_cross_entropy); a
// label outside [0, C) is a kernel failure, as in PyTorch, rather than a
// read out of bounds.
//
// The gradients: cross_entropy_backward writes
// grad_loss * (softmax(logits) - onehot(labels)) / N, checking every label
// before writing anything and reducing each row (in double) before writing
// it, so it may overwrite the logits; mse_loss_backward writes
// grad_loss * 2 * (p - t) / numel element by element.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "ParallelFor.h"
#include "RowSoftmax.h"

namespace memopt::runtime::cpu {

namespace {

template <typename T> void crossEntropyImpl(const KernelCall &call) {
  const TensorRef &logits = call.in(0), &labels = call.in(1);
  const int64_t n = logits.dim(0), c = logits.dim(1);
  const std::vector<int64_t> label = checkedLabels(labels, n, c);
  const T *px = logits.as<const T>();
  double total = 0;
  // Each row's loss, found in parallel and added up in row order.
  std::vector<double> rowLoss(static_cast<size_t>(n));
  parallelRange(n, 3 * c, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T *row = px + r * c;
      rowLoss[r] = rowLogSumExp(row, c) - static_cast<double>(row[label[r]]);
    }
  });
  for (int64_t r = 0; r < n; ++r)
    total += rowLoss[r];
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

template <typename T> void crossEntropyBackwardImpl(const KernelCall &call) {
  const TensorRef &logits = call.in(1), &labels = call.in(2);
  const int64_t n = logits.dim(0), c = logits.dim(1);
  const std::vector<int64_t> label = checkedLabels(labels, n, c);
  const double scale =
      static_cast<double>(*call.in(0).as<const T>()) / static_cast<double>(n);
  const T *px = logits.as<const T>();
  T *out = call.out(0).as<T>();
  parallelRange(n, 5 * c, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T *row = px + r * c;
      // One pass for the maximum, which both need.
      const RowExpType<T> max = rowMax(row, c);
      rowSoftmaxGradient(row, c, max, rowLogSumExp(row, c, max), label[r],
                         scale, out + r * c);
    }
  });
}

template <typename T> void mseLossBackwardImpl(const KernelCall &call) {
  const TensorRef &p = call.in(1);
  const T scale =
      static_cast<T>(2 * static_cast<double>(*call.in(0).as<const T>()) /
                     static_cast<double>(p.numElements));
  const T *pp = p.as<const T>(), *pt = call.in(2).as<const T>();
  T *out = call.out(0).as<T>();
  for (int64_t i = 0; i < p.numElements; ++i)
    out[i] = scale * (pp[i] - pt[i]);
}

} // namespace

void crossEntropyBackward(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype, [&](auto tag) {
    crossEntropyBackwardImpl<decltype(tag)>(call);
  });
}

void mseLossBackward(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype,
                [&](auto tag) { mseLossBackwardImpl<decltype(tag)>(call); });
}

void crossEntropy(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype,
                [&](auto tag) { crossEntropyImpl<decltype(tag)>(call); });
}

void mseLoss(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype,
                [&](auto tag) { mseLossImpl<decltype(tag)>(call); });
}

} // namespace memopt::runtime::cpu
