//===- LossTest.cpp - cross_entropy and mse_loss kernels ------------------===//
//
// Mean reductions against double references; cross-entropy stays finite
// with logits of +-1000 and refuses labels outside [0, C).
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

using namespace memopt::runtime;
using namespace memopt::runtime::test;

namespace {

/// log Σ_j exp(logits[i, j]) of an N×C tensor's row i, in double.
double referenceLse(const HostTensor &logits, int64_t i) {
  int64_t c = logits.shape[1];
  double max = -INFINITY, sum = 0;
  for (int64_t j = 0; j < c; ++j)
    max = std::max(max, logits.values[i * c + j]);
  for (int64_t j = 0; j < c; ++j)
    sum += std::exp(logits.values[i * c + j] - max);
  return max + std::log(sum);
}

double referenceCrossEntropy(const HostTensor &logits,
                             const HostTensor &labels) {
  int64_t n = logits.shape[0], c = logits.shape[1];
  double total = 0;
  for (int64_t i = 0; i < n; ++i)
    total += referenceLse(logits, i) -
             logits.values[i * c + static_cast<int64_t>(labels.values[i])];
  return total / n;
}

TEST(CrossEntropyKernelTest, MatchesReference) {
  for (DType dtype : {DType::F32, DType::F64, DType::F16}) {
    for (DType labelType : {DType::I64, DType::I32}) {
      HostTensor logits = randomTensor(dtype, {6, 5}, 41, -4, 4);
      HostTensor labels = randomInts(labelType, {6}, 42, 0, 4);
      double want = roundTo(dtype, referenceCrossEntropy(logits, labels));
      auto got = runOp1("cross_entropy", json::object(), {logits, labels},
                        {dtype, {}});
      Tolerance tol = toleranceFor(dtype);
      EXPECT_TRUE(close(got, {want}, tol.atol, tol.rtol)) << dtypeName(dtype);
    }
  }
}

TEST(CrossEntropyKernelTest, LargeLogitsStayFinite) {
  HostTensor logits{DType::F32, {2, 3}, {1000, -1000, 999, -1000, -1000, 1000}};
  HostTensor labels{DType::I64, {2}, {2, 0}};
  auto got = runOp1("cross_entropy", json::object(), {logits, labels},
                    {DType::F32, {}});
  // Row 0: lse = 1000 + log(1 + e^-1), minus 999. Row 1: 2000 + log(1 +
  // e^-2000).
  double row0 = 1 + std::log1p(std::exp(-1.0)), row1 = 2000;
  EXPECT_NEAR(got[0], (row0 + row1) / 2, 1e-3);
}

/// Non-finite logits give what log-sum-exp means: a row of -inf but the
/// label's finite logit still sums to that logit; a +inf logit makes the
/// log-sum-exp, and so the loss, +inf; a NaN poisons the mean; the gradient
/// of a row with a -inf logit is 0 there.
TEST(CrossEntropyKernelTest, NonFiniteLogits) {
  const double inf = INFINITY;
  HostTensor labels{DType::I64, {1}, {1}};
  auto loss = [&](std::vector<double> row) {
    HostTensor logits{DType::F32, {1, 3}, std::move(row)};
    return runOp1("cross_entropy", json::object(), {logits, labels},
                  {DType::F32, {}})[0];
  };
  EXPECT_NEAR(loss({-inf, 2, -inf}), 0, 1e-7);
  EXPECT_NEAR(loss({-inf, 2, 2}), std::log(2.0), 1e-6);
  EXPECT_EQ(loss({inf, 2, 0}), inf);
  EXPECT_TRUE(std::isnan(loss({std::nan(""), 2, 0})));
  HostTensor logits{DType::F32, {1, 3}, {-inf, 0, 0}};
  HostTensor one{DType::F32, {}, {1}};
  auto grad = runOp1("cross_entropy_backward", json::object(),
                     {one, logits, labels}, {DType::F32, {1, 3}});
  EXPECT_EQ(grad[0], 0);
  EXPECT_NEAR(grad[1], -0.5, 1e-7);
  EXPECT_NEAR(grad[2], 0.5, 1e-7);
}

/// The same in rows long enough for the row maximum's eight lanes and
/// its tail: a NaN or a +inf in any lane or in the tail reaches the loss,
/// and the maximum found in any lane shifts the exponentials (a row whose
/// large logit sits in lane 5 or in the tail neither overflows nor loses
/// the label's probability).
TEST(CrossEntropyKernelTest, NonFiniteAndLargeLogitsInEveryLane) {
  const double inf = INFINITY;
  const int64_t width = 19; // two groups of eight and a tail of three
  HostTensor labels{DType::I64, {1}, {2}};
  auto loss = [&](int64_t at, double value) {
    std::vector<double> row(width, 0.0);
    row[at] = value;
    HostTensor logits{DType::F32, {1, width}, std::move(row)};
    return runOp1("cross_entropy", json::object(), {logits, labels},
                  {DType::F32, {}})[0];
  };
  for (int64_t at : {0, 5, 13, 17, 18}) {
    EXPECT_TRUE(std::isnan(loss(at, std::nan("")))) << "NaN at " << at;
    EXPECT_EQ(loss(at, inf), inf) << "+inf at " << at;
    // log(e^100 + 18) − 0 for a label elsewhere: the shift by the maximum
    // keeps e^100 from overflowing f32's exponential.
    if (at != 2) {
      EXPECT_NEAR(loss(at, 100.0), 100.0, 1e-4) << "100 at " << at;
    }
  }
  // The label's own large logit: loss log(1 + 18 e^-100) ≈ 0.
  EXPECT_NEAR(loss(2, 100.0), 0.0, 1e-6);
}

/// linear_cross_entropy_with_grad computes what linear_cross_entropy and
/// then linear_cross_entropy_backward compute, bit for bit: chunks that
/// divide the rows and that do not, f32 and f64, a grad_loss other than 1,
/// a row whose label's logit is far above the rest.
TEST(LinearCrossEntropyKernelTest, WithGradIsThePairBitForBit) {
  for (DType dtype : {DType::F32, DType::F64})
    for (int64_t chunk : {1, 3, 16}) {
      const int64_t n = 7, width = 5, classes = 11;
      HostTensor h = randomTensor(dtype, {n, width}, 1);
      HostTensor w = randomTensor(dtype, {classes, width}, 2);
      for (int64_t j = 0; j < width; ++j)
        h.values[j] = 6.0; // row 0's logits large
      HostTensor labels{DType::I64, {n}, {0, 3, 10, 1, 1, 7, 4}};
      HostTensor seed{dtype, {}, {0.5}};
      const json attrs{{"chunk", chunk}};
      std::vector<std::vector<double>> forward =
          runOp("linear_cross_entropy", attrs, {h, w, labels},
                {{dtype, {}}, {dtype, {n}}});
      HostTensor lse{dtype, {n}, forward[1]};
      std::vector<std::vector<double>> backward = runOp(
          "linear_cross_entropy_backward", attrs, {seed, h, w, labels, lse},
          {{dtype, {n, width}}, {dtype, {classes, width}}});
      std::vector<std::vector<double>> fused =
          runOp("linear_cross_entropy_with_grad", attrs, {seed, h, w, labels},
                {{dtype, {}}, {dtype, {n, width}}, {dtype, {classes, width}}});
      SCOPED_TRACE(std::string(dtypeName(dtype)) + " chunk " +
                   std::to_string(chunk));
      EXPECT_EQ(fused[0], forward[0]);
      EXPECT_EQ(fused[1], backward[0]);
      EXPECT_EQ(fused[2], backward[1]);
    }
}

/// With a bias (the last input): the loss of logits h·wᵀ + b against a
/// double reference, grad_bias the rows' (softmax − onehot)·grad_loss/N
/// summed, and the fused op the pair bit for bit, in chunks that do not
/// divide the rows.
TEST(LinearCrossEntropyKernelTest, BiasMatchesReferenceAndThePair) {
  for (DType dtype : {DType::F32, DType::F64}) {
    const int64_t n = 7, width = 5, classes = 11;
    HostTensor h = randomTensor(dtype, {n, width}, 1);
    HostTensor w = randomTensor(dtype, {classes, width}, 2);
    HostTensor b = randomTensor(dtype, {classes}, 3, -2, 2);
    HostTensor labels{DType::I64, {n}, {0, 3, 10, 1, 1, 7, 4}};
    HostTensor seed{dtype, {}, {0.5}};
    HostTensor logits{dtype, {n, classes}, {}};
    for (int64_t i = 0; i < n; ++i)
      for (int64_t v = 0; v < classes; ++v) {
        double dot = b.values[v];
        for (int64_t k = 0; k < width; ++k)
          dot += h.values[i * width + k] * w.values[v * width + k];
        logits.values.push_back(dot);
      }
    std::vector<double> wantBias(classes, 0.0);
    for (int64_t i = 0; i < n; ++i) {
      const double lse = referenceLse(logits, i);
      for (int64_t v = 0; v < classes; ++v) {
        double p = std::exp(logits.values[i * classes + v] - lse);
        wantBias[v] += (p - (v == labels.values[i] ? 1 : 0)) * 0.5 / n;
      }
    }
    const json attrs{{"chunk", 3}};
    std::vector<std::vector<double>> forward =
        runOp("linear_cross_entropy", attrs, {h, w, labels, b},
              {{dtype, {}}, {dtype, {n}}});
    HostTensor lse{dtype, {n}, forward[1]};
    std::vector<std::vector<double>> backward = runOp(
        "linear_cross_entropy_backward", attrs, {seed, h, w, labels, lse, b},
        {{dtype, {n, width}}, {dtype, {classes, width}}, {dtype, {classes}}});
    std::vector<std::vector<double>> fused =
        runOp("linear_cross_entropy_with_grad", attrs, {seed, h, w, labels, b},
              {{dtype, {}},
               {dtype, {n, width}},
               {dtype, {classes, width}},
               {dtype, {classes}}});
    SCOPED_TRACE(dtypeName(dtype));
    Tolerance tol = toleranceFor(dtype);
    EXPECT_TRUE(close(forward[0], {referenceCrossEntropy(logits, labels)},
                      tol.atol, tol.rtol));
    EXPECT_TRUE(close(backward[2], wantBias, tol.atol, tol.rtol));
    EXPECT_EQ(fused[0], forward[0]);
    EXPECT_EQ(fused[1], backward[0]);
    EXPECT_EQ(fused[2], backward[1]);
    EXPECT_EQ(fused[3], backward[2]);
  }
}

/// A bias of the wrong length is refused by the kernel's rule.
TEST(LinearCrossEntropyKernelTest, BiasOfTheWrongLengthIsRefused) {
  HostTensor h = randomTensor(DType::F32, {3, 4}, 1);
  HostTensor w = randomTensor(DType::F32, {5, 4}, 2);
  HostTensor b = randomTensor(DType::F32, {4}, 3);
  HostTensor labels{DType::I64, {3}, {0, 4, 1}};
  std::string message = errorOf([&] {
    runOp("linear_cross_entropy", {{"chunk", 2}}, {h, w, labels, b},
          {{DType::F32, {}}, {DType::F32, {3}}});
  });
  EXPECT_NE(message.find("expected bias of shape 5"), std::string::npos)
      << message;
}

/// As its pair, a label outside [0, V) is a kernel failure naming the row.
TEST(LinearCrossEntropyKernelTest, WithGradRefusesALabelOutOfRange) {
  HostTensor h = randomTensor(DType::F32, {3, 4}, 1);
  HostTensor w = randomTensor(DType::F32, {5, 4}, 2);
  HostTensor labels{DType::I64, {3}, {0, 5, 1}};
  HostTensor seed{DType::F32, {}, {1}};
  std::string message = errorOf([&] {
    runOp("linear_cross_entropy_with_grad", {{"chunk", 2}},
          {seed, h, w, labels},
          {{DType::F32, {}}, {DType::F32, {3, 4}}, {DType::F32, {5, 4}}});
  });
  EXPECT_NE(message.find("label"), std::string::npos) << message;
}

TEST(CrossEntropyKernelTest, LabelOutOfRangeIsAnError) {
  HostTensor logits = randomTensor(DType::F32, {3, 4}, 1);
  for (double bad : {4.0, -1.0}) {
    HostTensor labels{DType::I32, {3}, {0, 1, bad}};
    std::string message = errorOf([&] {
      runOp1("cross_entropy", json::object(), {logits, labels},
             {DType::F32, {}});
    });
    EXPECT_NE(message.find("cross_entropy at test.mlir:1:1"), std::string::npos)
        << message;
    EXPECT_NE(message.find("of row 2 is outside [0, 4)"), std::string::npos)
        << message;
  }
}

TEST(MseLossKernelTest, MatchesReference) {
  for (DType dtype : {DType::F32, DType::F64, DType::F16, DType::BF16}) {
    HostTensor p = randomTensor(dtype, {3, 4, 5}, 51);
    HostTensor t = randomTensor(dtype, {3, 4, 5}, 52);
    double sum = 0;
    for (size_t i = 0; i < p.values.size(); ++i)
      sum += (p.values[i] - t.values[i]) * (p.values[i] - t.values[i]);
    double want = roundTo(dtype, sum / p.values.size());
    auto got = runOp1("mse_loss", json::object(), {p, t}, {dtype, {}});
    Tolerance tol = toleranceFor(dtype);
    EXPECT_TRUE(close(got, {want}, tol.atol, tol.rtol)) << dtypeName(dtype);
  }
  HostTensor s{DType::F32, {}, {3}}, u{DType::F32, {}, {1}};
  EXPECT_EQ(runOp1("mse_loss", json::object(), {s, u}, {DType::F32, {}}),
            std::vector<double>{4});
}

} // namespace
