//===- SyntheticTest.cpp - the seeded synthetic task ----------------------===//
//
// Determinism bit for bit, balanced labels, the N(0, 1) prototypes and
// 0.5 N(0, 1) noise, and that the task is learnable (a nearest-class-mean
// classifier fitted on one half gets the other half right).
//
//===----------------------------------------------------------------------===//

#include "memopt/data/Dataset.h"

#include "DataTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <numeric>

using namespace memopt::data;
using namespace memopt::data::test;
using memopt::runtime::ErrorCode;
using memopt::runtime::Shape;

namespace {

struct Batch {
  std::vector<float> x;
  std::vector<int64_t> y;
};

Batch all(const Dataset &ds) {
  std::vector<int64_t> indices(ds.size());
  std::iota(indices.begin(), indices.end(), 0);
  Batch b{std::vector<float>(ds.size() * ds.sampleElements()),
          std::vector<int64_t>(ds.size())};
  ds.fill(indices, b.x.data(), b.y.data());
  return b;
}

TEST(Synthetic, SameSeedSameDataBitForBit) {
  SyntheticDataset a({3, 4, 4}, 5, 40, 1234);
  SyntheticDataset b({3, 4, 4}, 5, 40, 1234);
  EXPECT_EQ(a.sampleShape(), (Shape{3, 4, 4}));
  EXPECT_EQ(a.sampleElements(), 48);
  EXPECT_EQ(a.numClasses(), 5);
  EXPECT_EQ(a.size(), 40);
  EXPECT_EQ(a.name(), "synthetic");
  Batch ba = all(a), bb = all(b);
  EXPECT_EQ(ba.y, bb.y);
  ASSERT_EQ(ba.x.size(), bb.x.size());
  EXPECT_EQ(std::memcmp(ba.x.data(), bb.x.data(), ba.x.size() * 4), 0);

  Batch other = all(SyntheticDataset({3, 4, 4}, 5, 40, 1235));
  EXPECT_NE(std::memcmp(ba.x.data(), other.x.data(), ba.x.size() * 4), 0);
  EXPECT_NE(ba.y, other.y);
}

TEST(Synthetic, RandomAccessMatchesTheWholeSet) {
  SyntheticDataset ds({7}, 3, 20, 9);
  Batch b = all(ds);
  std::vector<float> x(2 * 7);
  std::vector<int64_t> y(2);
  ds.fill(std::vector<int64_t>{13, 2}, x.data(), y.data());
  EXPECT_EQ(std::memcmp(x.data(), &b.x[13 * 7], 7 * 4), 0);
  EXPECT_EQ(std::memcmp(x.data() + 7, &b.x[2 * 7], 7 * 4), 0);
  EXPECT_EQ(y[0], b.y[13]);
  EXPECT_EQ(y[1], b.y[2]);
}

TEST(Synthetic, LabelsAreBalancedAndShuffled) {
  SyntheticDataset ds({2}, 4, 103, 5);
  std::vector<int> counts(4);
  bool sorted = true;
  for (int64_t i = 0; i < ds.size(); ++i) {
    int64_t label = ds.labelAt(i);
    ASSERT_GE(label, 0);
    ASSERT_LT(label, 4);
    ++counts[label];
    sorted = sorted && label == i % 4;
  }
  EXPECT_EQ(counts, (std::vector<int>{26, 26, 26, 25}));
  EXPECT_FALSE(sorted);
}

TEST(Synthetic, PrototypesAreStandardNormalAndNoiseHalfThat) {
  constexpr int kElements = 512, kClasses = 4, kSamples = 400;
  SyntheticDataset ds({kElements}, kClasses, kSamples, 77);
  Batch b = all(ds);
  // Class means over 100 samples estimate the prototypes (error ~0.05).
  std::vector<double> mean(kClasses * kElements), n(kClasses);
  for (int s = 0; s < kSamples; ++s) {
    n[b.y[s]] += 1;
    for (int i = 0; i < kElements; ++i)
      mean[b.y[s] * kElements + i] += b.x[s * kElements + i];
  }
  double sum = 0, sumSq = 0;
  for (int c = 0; c < kClasses; ++c)
    for (int i = 0; i < kElements; ++i) {
      double m = mean[c * kElements + i] /= n[c];
      sum += m;
      sumSq += m * m;
    }
  double count = kClasses * kElements;
  EXPECT_NEAR(sum / count, 0.0, 0.1);
  EXPECT_NEAR(std::sqrt(sumSq / count - (sum / count) * (sum / count)), 1.0,
              0.1);
  double noiseSq = 0;
  for (int s = 0; s < kSamples; ++s)
    for (int i = 0; i < kElements; ++i) {
      double d = b.x[s * kElements + i] - mean[b.y[s] * kElements + i];
      noiseSq += d * d;
    }
  EXPECT_NEAR(std::sqrt(noiseSq / (kSamples * kElements)), 0.5, 0.03);
}

TEST(Synthetic, IsLearnable) {
  constexpr int kElements = 16, kClasses = 10, kSamples = 1000;
  SyntheticDataset ds({kElements}, kClasses, kSamples, 3);
  Batch b = all(ds);
  std::vector<double> mean(kClasses * kElements), n(kClasses);
  for (int s = 0; s < kSamples / 2; ++s) {
    n[b.y[s]] += 1;
    for (int i = 0; i < kElements; ++i)
      mean[b.y[s] * kElements + i] += b.x[s * kElements + i];
  }
  for (int c = 0; c < kClasses; ++c)
    for (int i = 0; i < kElements; ++i)
      mean[c * kElements + i] /= n[c];
  int correct = 0;
  for (int s = kSamples / 2; s < kSamples; ++s) {
    int best = 0;
    double bestDistance = INFINITY;
    for (int c = 0; c < kClasses; ++c) {
      double d = 0;
      for (int i = 0; i < kElements; ++i) {
        double e = b.x[s * kElements + i] - mean[c * kElements + i];
        d += e * e;
      }
      if (d < bestDistance) {
        bestDistance = d;
        best = c;
      }
    }
    correct += best == b.y[s];
  }
  EXPECT_GE(correct, 0.95 * kSamples / 2);
}

TEST(Synthetic, PrototypesAreNotHeldInMemory) {
  // 1000 ImageNet-sized classes cost nothing until a sample is drawn (a
  // prototype table would be 600 MB), and prototypes stay the same per class.
  SyntheticDataset large({3, 224, 224}, 1000, 4, 1);
  SyntheticDataset huge({1 << 20, 1 << 12}, 2, 4, 1);
  EXPECT_EQ(huge.sampleElements(), int64_t(1) << 32);
  SyntheticDataset small({64}, 2, 200, 3);
  std::vector<float> a(64), b(64);
  int64_t first = -1, second = -1;
  for (int64_t i = 0; i < small.size() && second < 0; ++i)
    if (small.labelAt(i) == 0)
      (first < 0 ? first : second) = i;
  ASSERT_GE(second, 0);
  int64_t idx[] = {first, second};
  int64_t labels[2];
  std::vector<float> both(128);
  small.fill(IndexSpan(idx, 2), both.data(), labels);
  // Same class: samples differ only by noise of scale 0.5, so they correlate.
  double dot = 0, na = 0, nb = 0;
  for (int i = 0; i < 64; ++i) {
    dot += both[i] * both[64 + i];
    na += both[i] * both[i];
    nb += both[64 + i] * both[64 + i];
  }
  EXPECT_GT(dot / std::sqrt(na * nb), 0.5);
}

TEST(Synthetic, RefusesBadArguments) {
  auto error = [](Shape shape, int64_t classes, int64_t samples) {
    return errorOf([&] { SyntheticDataset(shape, classes, samples, 1); },
                   ErrorCode::InvalidArgument);
  };
  EXPECT_NE(error({}, 2, 4).find("sample shape scalar"), std::string::npos);
  EXPECT_NE(error({3, 0}, 2, 4).find("sample shape 3x0"), std::string::npos);
  EXPECT_NE(error({3, -1}, 2, 4).find("sample shape"), std::string::npos);
  EXPECT_EQ(error({3}, 0, 4), "synthetic: 0 classes; need at least 1");
  EXPECT_NE(error({3}, 2, 0).find("synthetic: 0 samples"), std::string::npos);
  EXPECT_NE(error({int64_t(1) << 62, 8}, 2, 4).find("sample shape"),
            std::string::npos);
}

} // namespace
