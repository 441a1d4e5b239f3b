//===- LinearCrossEntropy.cpp - the chunked LM-head loss on the CPU -------===//
//
// linear_cross_entropy(hidden, weight, labels): `chunk` rows at a time, the
// logits hidden·weightᵀ of those rows (a BLAS GEMM into the step's
// workspace), each row's log-sum-exp in double (as cross_entropy computes
// it) and its loss lse − logit[label]; the loss is their mean. The N×V
// logits never exist.
//
// linear_cross_entropy_backward recomputes each chunk's logits, turns them
// in place into dlogits = grad_loss · (exp(logit − lse) − onehot) / N (in
// double, as cross_entropy_backward), and multiplies: grad_hidden's rows =
// dlogits·weight, grad_weight += dlogitsᵀ·hidden.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "Gemm.h"

#include "memopt/Contract/LinearCrossEntropyShapes.h"
#include "memopt/runtime/ElementwiseMath.h"

#include <algorithm>
#include <vector>

namespace memopt::runtime::cpu {

namespace {

/// Rows of `classes` logits: in the planned workspace, as many rows as it
/// holds (at most `chunk` and `rows`), or, for a plan without room for one
/// row, `chunk` rows of the call's own.
template <typename T> class LogitChunk {
public:
  LogitChunk(const KernelCall &call, int64_t rows, int64_t classes,
             int64_t chunk) {
    int64_t most = std::max<int64_t>(1, std::min(chunk, rows));
    size_t rowBytes = static_cast<size_t>(classes) * sizeof(T);
    const Workspace &ws = call.context.workspace;
    if (ws.data && rowBytes > 0 && ws.bytes >= rowBytes &&
        reinterpret_cast<uintptr_t>(ws.data) % alignof(T) == 0) {
      this->rows = std::clamp<int64_t>(ws.bytes / rowBytes, 1, most);
      ptr = static_cast<T *>(ws.data);
      return;
    }
    this->rows = most;
    own.resize(static_cast<size_t>(most * classes));
    ptr = own.data();
  }
  T *data() { return ptr; }
  int64_t rows = 1;

private:
  std::vector<T> own;
  T *ptr = nullptr;
};

/// The labels of rows [0, n), each checked to lie in [0, classes).
std::vector<int64_t> checkedLabels(const TensorRef &labels, int64_t n,
                                   int64_t classes) {
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (int64_t r = 0; r < n; ++r) {
    out[r] = loadIndex(labels, r);
    if (out[r] < 0 || out[r] >= classes)
      kernelError("label ", out[r], " of row ", r, " is outside [0, ", classes,
                  ")");
  }
  return out;
}

template <typename T> void linearCrossEntropyImpl(const KernelCall &call) {
  const TensorRef &th = call.in(0), &tw = call.in(1);
  const int64_t n = th.dim(0), width = th.dim(1), classes = tw.dim(0);
  const std::vector<int64_t> labels = checkedLabels(call.in(2), n, classes);
  LogitChunk<T> chunk(call, n, classes,
                      call.step.get<LinearCrossEntropyAttrs>().chunk);
  const T *h = th.as<const T>(), *w = tw.as<const T>();
  T *lse = call.out(1).as<T>();
  double total = 0;
  for (int64_t r0 = 0; r0 < n; r0 += chunk.rows) {
    const int64_t rows = std::min(n - r0, chunk.rows);
    T *logits = chunk.data();
    if (classes > 0)
      gemm<T>(false, true, rows, classes, width, T(1), h + r0 * width,
              std::max<int64_t>(width, 1), w, std::max<int64_t>(width, 1), T(0),
              logits, classes);
    for (int64_t i = 0; i < rows; ++i) {
      const T *row = logits + i * classes;
      math::LogSumExp<double> sum;
      for (int64_t j = 0; j < classes; ++j)
        sum.add(static_cast<double>(row[j]));
      lse[r0 + i] = static_cast<T>(sum.value());
      total += sum.value() - static_cast<double>(row[labels[r0 + i]]);
    }
  }
  *call.out(0).as<T>() = static_cast<T>(total / static_cast<double>(n));
}

template <typename T>
void linearCrossEntropyBackwardImpl(const KernelCall &call) {
  const TensorRef &th = call.in(1), &tw = call.in(2);
  const int64_t n = th.dim(0), width = th.dim(1), classes = tw.dim(0);
  const std::vector<int64_t> labels = checkedLabels(call.in(3), n, classes);
  LogitChunk<T> chunk(call, n, classes,
                      call.step.get<LinearCrossEntropyAttrs>().chunk);
  const double scale =
      static_cast<double>(*call.in(0).as<const T>()) / static_cast<double>(n);
  const T *h = th.as<const T>(), *w = tw.as<const T>(),
          *lse = call.in(4).as<const T>();
  T *dh = call.out(0).as<T>(), *dw = call.out(1).as<T>();
  const int64_t ld = std::max<int64_t>(width, 1);
  std::fill(dw, dw + call.out(1).numElements, T(0));
  if (classes == 0) {
    std::fill(dh, dh + call.out(0).numElements, T(0));
    return;
  }
  for (int64_t r0 = 0; r0 < n; r0 += chunk.rows) {
    const int64_t rows = std::min(n - r0, chunk.rows);
    T *d = chunk.data();
    gemm<T>(false, true, rows, classes, width, T(1), h + r0 * width, ld, w, ld,
            T(0), d, classes);
    for (int64_t i = 0; i < rows; ++i) {
      T *row = d + i * classes;
      const double l = static_cast<double>(lse[r0 + i]);
      const int64_t label = labels[r0 + i];
      for (int64_t j = 0; j < classes; ++j) {
        double p = math::exp(static_cast<double>(row[j]) - l);
        row[j] = static_cast<T>((p - (j == label ? 1.0 : 0.0)) * scale);
      }
    }
    // grad_hidden's rows = dlogits · weight; grad_weight += dlogitsᵀ · hidden.
    gemm<T>(false, false, rows, width, classes, T(1), d, classes, w, ld, T(0),
            dh + r0 * width, ld);
    gemm<T>(true, false, classes, width, rows, T(1), d, classes, h + r0 * width,
            ld, T(1), dw, ld);
  }
}

} // namespace

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
