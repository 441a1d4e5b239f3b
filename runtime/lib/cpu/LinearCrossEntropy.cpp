//===- LinearCrossEntropy.cpp - the chunked LM-head loss on the CPU -------===//
//
// linear_cross_entropy(hidden, weight, labels[, bias]): `chunk` rows at a time,
// the logits hidden·weightᵀ of those rows (a BLAS GEMM into the step's
// workspace), each row's log-sum-exp (RowSoftmax.h, as cross_entropy
// computes it) and its loss lse − logit[label]; the loss is their mean. The N×V
// logits never exist.
//
// linear_cross_entropy_backward recomputes each chunk's logits, turns them
// in place into dlogits = grad_loss · (exp(logit − lse) − onehot) / N (as
// cross_entropy_backward), and multiplies: grad_hidden's rows =
// dlogits·weight, grad_weight += dlogitsᵀ·hidden.
//
// linear_cross_entropy_with_grad does both to each chunk with its logits
// computed once: the same products and row arithmetic, so the same bits
// as the pair (with the same rows per chunk).
//
// With a bias (the ops' last input) each chunk's logits start as the bias,
// as memopt.linear adds it, and the GEMM adds to them; grad_bias sums the
// dlogits over the rows, chunk by chunk in row order, in double.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "Gemm.h"
#include "ParallelFor.h"
#include "RowSoftmax.h"
#include "WorkspaceRows.h"

#include "memopt/Contract/LinearCrossEntropyShapes.h"

#include <algorithm>
#include <vector>

namespace memopt::runtime::cpu {

namespace {

/// The rows a chunk of logits holds at most: the op's `chunk`, at most all
/// `n` rows and at least one.
int64_t chunkRows(const KernelCall &call, int64_t n) {
  return std::max<int64_t>(
      1, std::min(call.step.get<LinearCrossEntropyAttrs>().chunk, n));
}

/// The bias, input `index`, when the call has one; null otherwise.
template <typename T> const T *biasOf(const KernelCall &call, size_t index) {
  return call.inputs.size() > index ? call.in(index).as<const T>() : nullptr;
}

/// The logits of rows [r0, r0 + rows): those rows of hidden (N×H) times
/// weightᵀ (V×H), plus `bias` (V, or null), into `d` (rows×V).
template <typename T>
void chunkLogits(const T *h, const T *w, const T *bias, int64_t r0,
                 int64_t rows, int64_t width, int64_t classes, T *d) {
  const int64_t ld = std::max<int64_t>(width, 1);
  if (bias)
    for (int64_t i = 0; i < rows; ++i)
      std::copy(bias, bias + classes, d + i * classes);
  gemm<T>(false, true, rows, classes, width, T(1), h + r0 * width, ld, w, ld,
          bias ? T(1) : T(0), d, classes);
}

/// grad_bias's running sums: each class's dlogits over the rows so far.
class BiasGradient {
public:
  explicit BiasGradient(int64_t classes, bool wanted)
      : sums(wanted ? static_cast<size_t>(classes) : 0, 0.0) {}
  /// Adds the chunk's `rows` rows of dlogits `d` (rows×V).
  template <typename T> void add(const T *d, int64_t rows) {
    const int64_t classes = static_cast<int64_t>(sums.size());
    parallelRange(classes, rows, [&](int64_t v0, int64_t v1) {
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t v = v0; v < v1; ++v)
          sums[v] += static_cast<double>(d[i * classes + v]);
    });
  }
  template <typename T> void write(T *out) const {
    for (size_t v = 0; v < sums.size(); ++v)
      out[v] = static_cast<T>(sums[v]);
  }

private:
  std::vector<double> sums;
};

/// From the chunk's dlogits `d`: grad_hidden's rows = dlogits · weight;
/// grad_weight += dlogitsᵀ · hidden's rows.
template <typename T>
void multiplyDlogits(const T *d, const T *h, const T *w, int64_t r0,
                     int64_t rows, int64_t width, int64_t classes, T *dh,
                     T *dw) {
  const int64_t ld = std::max<int64_t>(width, 1);
  gemm<T>(false, false, rows, width, classes, T(1), d, classes, w, ld, T(0),
          dh + r0 * width, ld);
  gemm<T>(true, false, classes, width, rows, T(1), d, classes, h + r0 * width,
          ld, T(1), dw, ld);
}

template <typename T> void linearCrossEntropyImpl(const KernelCall &call) {
  const TensorRef &th = call.in(0), &tw = call.in(1);
  const int64_t n = th.dim(0), width = th.dim(1), classes = tw.dim(0);
  const std::vector<int64_t> labels = checkedLabels(call.in(2), n, classes);
  WorkspaceRows<T> chunk(call, classes, chunkRows(call, n));
  const T *h = th.as<const T>(), *w = tw.as<const T>(),
          *bias = biasOf<T>(call, 3);
  T *lse = call.out(1).as<T>();
  double total = 0;
  // Each row's loss, found in parallel and added up in row order.
  std::vector<double> rowLoss(static_cast<size_t>(std::min(n, chunk.rows)));
  for (int64_t r0 = 0; r0 < n; r0 += chunk.rows) {
    const int64_t rows = std::min(n - r0, chunk.rows);
    T *logits = chunk.data();
    if (classes > 0)
      chunkLogits(h, w, bias, r0, rows, width, classes, logits);
    parallelRange(rows, 3 * classes, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const T *row = logits + i * classes;
        const double l = rowLogSumExp(row, classes);
        lse[r0 + i] = static_cast<T>(l);
        rowLoss[i] = l - static_cast<double>(row[labels[r0 + i]]);
      }
    });
    for (int64_t i = 0; i < rows; ++i)
      total += rowLoss[i];
  }
  *call.out(0).as<T>() = static_cast<T>(total / static_cast<double>(n));
}

template <typename T>
void linearCrossEntropyBackwardImpl(const KernelCall &call) {
  const TensorRef &th = call.in(1), &tw = call.in(2);
  const int64_t n = th.dim(0), width = th.dim(1), classes = tw.dim(0);
  const std::vector<int64_t> labels = checkedLabels(call.in(3), n, classes);
  WorkspaceRows<T> chunk(call, classes, chunkRows(call, n));
  const double scale =
      static_cast<double>(*call.in(0).as<const T>()) / static_cast<double>(n);
  const T *h = th.as<const T>(), *w = tw.as<const T>(),
          *lse = call.in(4).as<const T>(), *bias = biasOf<T>(call, 5);
  T *dh = call.out(0).as<T>(), *dw = call.out(1).as<T>();
  std::fill(dw, dw + call.out(1).numElements, T(0));
  BiasGradient db(classes, bias != nullptr);
  if (classes == 0)
    std::fill(dh, dh + call.out(0).numElements, T(0));
  for (int64_t r0 = 0; classes > 0 && r0 < n; r0 += chunk.rows) {
    const int64_t rows = std::min(n - r0, chunk.rows);
    T *d = chunk.data();
    chunkLogits(h, w, bias, r0, rows, width, classes, d);
    parallelRange(rows, 4 * classes, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        T *row = d + i * classes;
        rowSoftmaxGradient(row, classes, static_cast<double>(lse[r0 + i]),
                           labels[r0 + i], scale, row);
      }
    });
    if (bias)
      db.add(d, rows);
    multiplyDlogits(d, h, w, r0, rows, width, classes, dh, dw);
  }
  if (bias)
    db.write(call.out(2).as<T>());
}

/// The step's workspace after the log-sum-exps that
/// linear_cross_entropy_with_grad's workspace starts with
/// (LinearCrossEntropyShapes.h; the CPU does not keep them): where its
/// chunk of logits goes. None when the plan gave less.
template <typename T> Workspace afterLse(const Workspace &ws, int64_t rows) {
  const size_t lse =
      static_cast<size_t>(shapes::linearCrossEntropyLseBytes(rows, sizeof(T)));
  if (!ws.data || ws.bytes <= lse)
    return {};
  return {static_cast<char *>(ws.data) + lse, ws.bytes - lse};
}

template <typename T>
void linearCrossEntropyWithGradImpl(const KernelCall &call) {
  const TensorRef &th = call.in(1), &tw = call.in(2);
  const int64_t n = th.dim(0), width = th.dim(1), classes = tw.dim(0);
  const std::vector<int64_t> labels = checkedLabels(call.in(3), n, classes);
  StepContext context = call.context;
  context.workspace = afterLse<T>(call.context.workspace, n);
  const KernelCall rest{call.step, call.inputs, call.outputs, context};
  WorkspaceRows<T> chunk(rest, classes, chunkRows(call, n));
  const double scale =
      static_cast<double>(*call.in(0).as<const T>()) / static_cast<double>(n);
  const T *h = th.as<const T>(), *w = tw.as<const T>(),
          *bias = biasOf<T>(call, 4);
  T *dh = call.out(1).as<T>(), *dw = call.out(2).as<T>();
  std::fill(dw, dw + call.out(2).numElements, T(0));
  BiasGradient db(classes, bias != nullptr);
  if (classes == 0)
    std::fill(dh, dh + call.out(1).numElements, T(0));
  double total = 0;
  // What linear_cross_entropy and then linear_cross_entropy_backward do to
  // a chunk, with its logits computed once: each row's log-sum-exp and
  // loss, the log-sum-exp rounded to T as the forward op stores it, then
  // the row turned into dlogits in place.
  std::vector<double> rowLoss(static_cast<size_t>(std::min(n, chunk.rows)));
  for (int64_t r0 = 0; classes > 0 && r0 < n; r0 += chunk.rows) {
    const int64_t rows = std::min(n - r0, chunk.rows);
    T *d = chunk.data();
    chunkLogits(h, w, bias, r0, rows, width, classes, d);
    parallelRange(rows, 5 * classes, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        T *row = d + i * classes;
        double logit;
        const double l = rowLossAndGradient(row, classes, rowMax(row, classes),
                                            labels[r0 + i], scale, logit);
        rowLoss[i] = l - logit;
      }
    });
    for (int64_t i = 0; i < rows; ++i)
      total += rowLoss[i];
    if (bias)
      db.add(d, rows);
    multiplyDlogits(d, h, w, r0, rows, width, classes, dh, dw);
  }
  if (bias)
    db.write(call.out(3).as<T>());
  *call.out(0).as<T>() = static_cast<T>(total / static_cast<double>(n));
}

} // namespace

void linearCrossEntropyWithGrad(const KernelCall &call) {
  dispatchFloat(call.out(1).dtype, [&](auto tag) {
    linearCrossEntropyWithGradImpl<decltype(tag)>(call);
  });
}

void linearCrossEntropy(const KernelCall &call) {
  dispatchFloat(call.out(1).dtype,
                [&](auto tag) { linearCrossEntropyImpl<decltype(tag)>(call); });
}

void linearCrossEntropyBackward(const KernelCall &call) {
  dispatchFloat(call.out(0).dtype, [&](auto tag) {
    linearCrossEntropyBackwardImpl<decltype(tag)>(call);
  });
}

} // namespace memopt::runtime::cpu
