// The LM-head loss's row work on the CPU (runtime/lib/cpu/RowSoftmax.h), on
// the CPU decoder's logits (1024 rows of 4096 classes, f32, normal with
// standard deviation 3): linear_cross_entropy's rows (maximum, log-sum-exp)
// and linear_cross_entropy_backward's (maximum, softmax gradient), against
// linear_cross_entropy_with_grad's rows (each exponential once), one
// thread, the best of R repeats; the two give the same bits (checked).
// Built and run by bench/cpu_loss_rows.py; prints one JSON object.
#include "cpu/RowSoftmax.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

using namespace memopt::runtime::cpu;

namespace {
double seconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
} // namespace

int main(int argc, char **argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 10;
  const int64_t n = 1024, c = 4096;
  const double scale = 1.0 / static_cast<double>(n);
  std::vector<float> logits(n * c), pair(n * c), fused(n * c);
  std::mt19937 gen(1);
  std::normal_distribution<float> dist(0, 3);
  for (float &v : logits)
    v = dist(gen);
  std::vector<double> pairLoss(n), fusedLoss(n);
  double forward = 1e30, backward = 1e30, oneOp = 1e30;
  for (int r = 0; r < repeats; ++r) {
    pair = logits;
    std::vector<float> lse(n);
    double t = seconds();
    for (int64_t i = 0; i < n; ++i) {
      const float *row = pair.data() + i * c;
      const double l = rowLogSumExp(row, c);
      lse[i] = static_cast<float>(l);
      pairLoss[i] = l - row[i % c];
    }
    forward = std::min(forward, seconds() - t);
    t = seconds();
    for (int64_t i = 0; i < n; ++i) {
      float *row = pair.data() + i * c;
      rowSoftmaxGradient(row, c, static_cast<double>(lse[i]), i % c, scale,
                         row);
    }
    backward = std::min(backward, seconds() - t);
    fused = logits;
    t = seconds();
    for (int64_t i = 0; i < n; ++i) {
      float *row = fused.data() + i * c;
      double logit;
      const double l =
          rowLossAndGradient(row, c, rowMax(row, c), i % c, scale, logit);
      fusedLoss[i] = l - logit;
    }
    oneOp = std::min(oneOp, seconds() - t);
  }
  const bool same =
      !std::memcmp(pair.data(), fused.data(), pair.size() * sizeof(float)) &&
      !std::memcmp(pairLoss.data(), fusedLoss.data(), n * sizeof(double));
  std::printf("{\"rows\":%lld,\"classes\":%lld,\"repeats\":%d,"
              "\"pair_forward_ms\":%.3f,\"pair_backward_ms\":%.3f,"
              "\"with_grad_ms\":%.3f,\"same_bits\":%s}\n",
              static_cast<long long>(n), static_cast<long long>(c), repeats,
              forward * 1e3, backward * 1e3, oneOp * 1e3,
              same ? "true" : "false");
  return same ? 0 : 1;
}
