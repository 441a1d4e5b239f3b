//===- RowSoftmax.h - a row's log-sum-exp and softmax gradient --*- C++ -*-===//
//
// Internal to the CPU backend: cross_entropy and linear_cross_entropy,
// forward and backward, share these. A row's maximum first, then each
// exp(x − max): the difference is exact for the elements that matter, so
// exp runs in the element type's precision (f32 for f32, f16 and bf16, a
// chunk at a time through VectorMath.h; exp in double for f64), and the sum
// and the log-sum-exp are kept in double (eight interleaved partial sums,
// element j in sum j mod 8, added pairwise at the end: a fixed order that
// vectorises). A gradient from a saved log-sum-exp l is exp(x − max) ·
// exp(max − l), the second factor once per row in double.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_LIB_CPU_ROWSOFTMAX_H
#define MEMOPT_RUNTIME_LIB_CPU_ROWSOFTMAX_H

#include "VectorMath.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace memopt::runtime::cpu {

/// The precision exp runs in for elements of type T.
template <typename T>
using RowExpType = std::conditional_t<std::is_same_v<T, double>, double, float>;

/// The row's maximum; NaN if an element is NaN, -inf for an empty row.
/// Eight running maxima (element j in lane j mod 8), so that the compiler
/// keeps them in vector registers: one chain through the whole row would
/// be a float reduction it may not reorder. A maximum is exact in any
/// order; only the sign of a zero maximum can differ, and x − max, the
/// only use of it, is the same then.
template <typename T> RowExpType<T> rowMax(const T *row, int64_t c) {
  using E = RowExpType<T>;
  constexpr int kLanes = 8;
  E lane[kLanes];
  int32_t nan[kLanes];
  for (int k = 0; k < kLanes; ++k) {
    lane[k] = -std::numeric_limits<E>::infinity();
    nan[k] = 0;
  }
  const int64_t whole = c - c % kLanes;
  for (int64_t j = 0; j < whole; j += kLanes)
    for (int k = 0; k < kLanes; ++k) {
      const E x = static_cast<E>(row[j + k]);
      nan[k] |= x != x;
      lane[k] = x > lane[k] ? x : lane[k];
    }
  for (int64_t j = whole; j < c; ++j) {
    const E x = static_cast<E>(row[j]);
    nan[0] |= x != x;
    lane[0] = x > lane[0] ? x : lane[0];
  }
  E max = lane[0];
  int32_t anyNan = nan[0];
  for (int k = 1; k < kLanes; ++k) {
    max = lane[k] > max ? lane[k] : max;
    anyNan |= nan[k];
  }
  return anyNan ? std::numeric_limits<E>::quiet_NaN() : max;
}

/// Calls f(j0, e, m) for consecutive chunks of the row (f32 compute):
/// e[j] = exp(row[j0 + j] − max) for j < m, a chunk at a time
/// (VectorMath.h). `dst` of a caller may be `row`: a chunk is read before f
/// runs.
template <typename T, typename F>
void forEachExpChunk(const T *row, int64_t c, float max, F &&f) {
  float e[vec::kChunk];
  for (int64_t j0 = 0; j0 < c; j0 += vec::kChunk) {
    const int64_t m = std::min(vec::kChunk, c - j0);
    for (int64_t j = 0; j < m; ++j)
      e[j] = static_cast<float>(row[j0 + j]) - max;
    vec::exp(e, e, m);
    f(j0, static_cast<const float *>(e), m);
  }
}

/// Adds a chunk's exponentials `e[0..m)` into the eight partial sums
/// (element j of the chunk into sum j mod 8; chunks start at multiples of
/// kChunk, a multiple of 8, so that is the row's element's index mod 8).
inline void addExpChunk(double (&part)[8], const float *e, int64_t m) {
  int64_t j = 0;
  for (; j + 8 <= m; j += 8)
    for (int k = 0; k < 8; ++k)
      part[k] += static_cast<double>(e[j + k]);
  for (; j < m; ++j)
    part[j % 8] += static_cast<double>(e[j]);
}

/// The eight partial sums added pairwise, in a fixed order.
inline double sumPartials(const double (&part)[8]) {
  return ((part[0] + part[1]) + (part[2] + part[3])) +
         ((part[4] + part[5]) + (part[6] + part[7]));
}

/// log Σ exp(row[j]) given the row's maximum `max` (rowMax): -inf for an
/// empty or all -inf row, +inf where an element is +inf, NaN where one is
/// NaN.
template <typename T>
double rowLogSumExp(const T *row, int64_t c, RowExpType<T> max) {
  using E = RowExpType<T>;
  if (!std::isfinite(max))
    return static_cast<double>(max);
  double part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  if constexpr (std::is_same_v<E, double>) {
    for (int64_t j = 0; j < c; ++j)
      part[j % 8] += std::exp(static_cast<E>(row[j]) - max);
  } else {
    forEachExpChunk(row, c, max, [&](int64_t, const float *e, int64_t m) {
      addExpChunk(part, e, m);
    });
  }
  return static_cast<double>(max) + std::log(sumPartials(part));
}

template <typename T> double rowLogSumExp(const T *row, int64_t c) {
  return rowLogSumExp(row, c, rowMax(row, c));
}

/// dst[j0 + j] = scale · (e[j] · k − [j0 + j == label]) for j < m: the
/// softmax gradient of a chunk of a row from its exponentials e[j] =
/// exp(x − max) and k = exp(max − lse). p − 0 is p, so only the label's
/// element subtracts: the loop stays free of the comparison and
/// vectorises. `dst + j0` may be `e` (the label's e is read first).
template <typename T>
void expsToGradient(const float *e, int64_t j0, int64_t m, double k,
                    int64_t label, double scale, T *dst) {
  const bool hasLabel = label >= j0 && label < j0 + m;
  const double pLabel = hasLabel ? static_cast<double>(e[label - j0]) * k : 0.0;
  for (int64_t j = 0; j < m; ++j)
    dst[j0 + j] = static_cast<T>(static_cast<double>(e[j]) * k * scale);
  if (hasLabel)
    dst[label] = static_cast<T>((pLabel - 1.0) * scale);
}

/// dst[j] = scale · (softmax(row)[j] − [j == label]), with softmax(row)[j] =
/// exp(row[j] − lse), given the row's maximum `max` (rowMax). `dst` may be
/// `row`.
template <typename T>
void rowSoftmaxGradient(const T *row, int64_t c, RowExpType<T> max, double lse,
                        int64_t label, double scale, T *dst) {
  using E = RowExpType<T>;
  const double k = std::exp(static_cast<double>(max) - lse);
  if constexpr (std::is_same_v<E, double>) {
    for (int64_t j = 0; j < c; ++j) {
      const double p = std::exp(static_cast<E>(row[j]) - max) * k;
      dst[j] = static_cast<T>((p - (j == label ? 1.0 : 0.0)) * scale);
    }
  } else {
    forEachExpChunk(row, c, max, [&](int64_t j0, const float *e, int64_t m) {
      expsToGradient(e, j0, m, k, label, scale, dst);
    });
  }
}

/// rowLogSumExp(row, c, max) followed by rowSoftmaxGradient(row, c, max,
/// lse rounded to T, label, scale, row) with each exponential evaluated
/// once instead of twice: the first pass keeps exp(row[j] − max) in the row
/// (the logits are not needed after it), the second scales them. The same
/// bits as the two calls (the same exponentials, sum and products; an f32
/// row holds its exponentials exactly). Sets `logit` to row[label] as it
/// was. In f64, or with a non-finite maximum, it makes the two calls.
template <typename T>
double rowLossAndGradient(T *row, int64_t c, RowExpType<T> max, int64_t label,
                          double scale, double &logit) {
  logit = static_cast<double>(row[label]);
  if constexpr (std::is_same_v<T, float>) {
    if (std::isfinite(max)) {
      double part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      forEachExpChunk(row, c, max, [&](int64_t j0, const float *e, int64_t m) {
        addExpChunk(part, e, m);
        std::copy_n(e, m, row + j0);
      });
      const double lse = static_cast<double>(max) + std::log(sumPartials(part));
      const double k = std::exp(static_cast<double>(max) -
                                static_cast<double>(static_cast<T>(lse)));
      expsToGradient(row, 0, c, k, label, scale, row);
      return lse;
    }
  }
  const double lse = rowLogSumExp(row, c, max);
  rowSoftmaxGradient(row, c, max, static_cast<double>(static_cast<T>(lse)),
                     label, scale, row);
  return lse;
}

template <typename T>
void rowSoftmaxGradient(const T *row, int64_t c, double lse, int64_t label,
                        double scale, T *dst) {
  rowSoftmaxGradient(row, c, rowMax(row, c), lse, label, scale, dst);
}

} // namespace memopt::runtime::cpu

#endif // MEMOPT_RUNTIME_LIB_CPU_ROWSOFTMAX_H
