//===- BatcherTest.cpp - shuffled batches over epochs ---------------------===//
//
// Coverage (each sample at most once per epoch, all of them when the batch
// size divides the set), drop_last, determinism per seed and epoch, the
// epoch/position bookkeeping and resuming with seek.
//
//===----------------------------------------------------------------------===//

#include "memopt/data/Dataset.h"

#include "DataTestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

using namespace memopt::data;
using namespace memopt::data::test;
using memopt::runtime::ErrorCode;

namespace {

/// Sample i is the pair (i, -i) with label i mod 3: what fill wrote says
/// which sample it was.
class CountingDataset : public Dataset {
public:
  explicit CountingDataset(int64_t n) : Dataset("counting", {2}, 3, n) {}

protected:
  void writeSample(int64_t index, float *out) const override {
    out[0] = static_cast<float>(index);
    out[1] = -static_cast<float>(index);
  }
  int64_t label(int64_t index) const override { return index % 3; }
};

std::vector<int64_t> take(Batcher &b) {
  IndexSpan span = b.nextIndices();
  return std::vector<int64_t>(span.begin(), span.end());
}

TEST(Shuffle, IsAPermutationAndPinned) {
  std::vector<int64_t> order = shuffledOrder(1000, 42);
  std::vector<int64_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> identity(1000);
  std::iota(identity.begin(), identity.end(), 0);
  EXPECT_EQ(sorted, identity);
  EXPECT_NE(order, identity);
  EXPECT_EQ(shuffledOrder(1000, 42), order);
  EXPECT_NE(shuffledOrder(1000, 43), order);
  EXPECT_TRUE(shuffledOrder(0, 1).empty());
  EXPECT_EQ(shuffledOrder(1, 1), std::vector<int64_t>{0});
  // Pinned: the order is part of a run's reproducibility, and must not
  // change with the standard library or a refactoring.
  EXPECT_EQ(shuffledOrder(10, 42),
            (std::vector<int64_t>{1, 7, 9, 0, 3, 8, 4, 2, 5, 6}));
  EXPECT_EQ(epochSeed(42, 0), 6332618229526065668ull);
}

TEST(Batcher, CoversEverySampleOncePerEpoch) {
  CountingDataset ds(12);
  Batcher b(ds, 4, 7);
  EXPECT_EQ(b.batchesPerEpoch(), 3);
  std::vector<std::vector<int64_t>> epochs;
  for (int e = 0; e < 4; ++e) {
    std::vector<int64_t> seen;
    for (int i = 0; i < 3; ++i) {
      std::vector<int64_t> batch = take(b);
      ASSERT_EQ(batch.size(), 4u);
      seen.insert(seen.end(), batch.begin(), batch.end());
    }
    EXPECT_EQ(seen, shuffledOrder(12, epochSeed(7, e)));
    std::vector<int64_t> sorted = seen;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int64_t> identity(12);
    std::iota(identity.begin(), identity.end(), 0);
    EXPECT_EQ(sorted, identity) << "epoch " << e;
    epochs.push_back(seen);
  }
  EXPECT_NE(epochs[0], epochs[1]);
  EXPECT_NE(epochs[1], epochs[2]);
}

TEST(Batcher, DropsTheLastIncompleteBatch) {
  CountingDataset ds(10);
  Batcher b(ds, 3, 1);
  EXPECT_EQ(b.batchesPerEpoch(), 3);
  std::set<int64_t> dropped;
  for (int e = 0; e < 20; ++e) {
    std::set<int64_t> seen;
    for (int i = 0; i < 3; ++i)
      for (int64_t index : take(b))
        EXPECT_TRUE(seen.insert(index).second) << "repeat in epoch " << e;
    EXPECT_EQ(seen.size(), 9u);
    for (int64_t i = 0; i < 10; ++i)
      if (!seen.count(i))
        dropped.insert(i);
  }
  // The dropped sample changes with the epoch's shuffle.
  EXPECT_GT(dropped.size(), 1u);

  CountingDataset exact(4);
  Batcher whole(exact, 4, 1);
  EXPECT_EQ(whole.batchesPerEpoch(), 1);
}

TEST(Batcher, SameSeedSameBatches) {
  CountingDataset ds(50);
  Batcher a(ds, 8, 99), b(ds, 8, 99), c(ds, 8, 100);
  bool differs = false;
  for (int i = 0; i < 30; ++i) {
    std::vector<int64_t> ba = take(a);
    EXPECT_EQ(ba, take(b));
    differs = differs || ba != take(c);
  }
  EXPECT_TRUE(differs);
}

TEST(Batcher, ReportsEpochAndPosition) {
  CountingDataset ds(7);
  Batcher b(ds, 3, 0);
  EXPECT_EQ(b.batchSize(), 3);
  EXPECT_EQ(&b.dataset(), &ds);
  EXPECT_EQ(b.epoch(), 0);
  EXPECT_EQ(b.position(), 0);
  take(b);
  EXPECT_EQ(b.epoch(), 0);
  EXPECT_EQ(b.position(), 1);
  EXPECT_EQ(b.step(), 1);
  take(b);
  EXPECT_EQ(b.epoch(), 1);
  EXPECT_EQ(b.position(), 0);
  EXPECT_EQ(b.step(), 2);
  take(b);
  take(b);
  EXPECT_EQ(b.epoch(), 2);
  EXPECT_EQ(b.step(), 4);
}

TEST(Batcher, SequentialWithoutShuffle) {
  CountingDataset ds(7);
  Batcher b(ds, 2, 5, /*shuffle=*/false);
  EXPECT_EQ(take(b), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(take(b), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(take(b), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(take(b), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(b.epoch(), 1);
}

TEST(Batcher, NextFillsTheBatch) {
  CountingDataset ds(9);
  Batcher b(ds, 4, 11), indices(ds, 4, 11);
  for (int i = 0; i < 5; ++i) {
    std::vector<float> x(8);
    std::vector<int64_t> y(4);
    b.next(x.data(), y.data());
    std::vector<int64_t> expected = take(indices);
    for (int j = 0; j < 4; ++j) {
      EXPECT_EQ(x[2 * j], static_cast<float>(expected[j]));
      EXPECT_EQ(x[2 * j + 1], -static_cast<float>(expected[j]));
      EXPECT_EQ(y[j], expected[j] % 3);
    }
  }
  // A bad call does not consume a batch.
  EXPECT_EQ(b.step(), 5);
  errorOf([&] { b.next(nullptr, nullptr); }, ErrorCode::InvalidArgument);
  EXPECT_EQ(b.step(), 5);
}

TEST(Batcher, SeekResumesWhereACheckpointLeftOff) {
  CountingDataset ds(20);
  Batcher run(ds, 6, 3);
  std::vector<std::vector<int64_t>> batches;
  for (int i = 0; i < 10; ++i)
    batches.push_back(take(run));
  Batcher resumed(ds, 6, 3);
  resumed.seek(2, 1); // step 7 with 3 batches per epoch
  EXPECT_EQ(resumed.step(), 7);
  for (int i = 7; i < 10; ++i)
    EXPECT_EQ(take(resumed), batches[i]) << "step " << i;
  resumed.seek(0, 0);
  EXPECT_EQ(take(resumed), batches[0]);
  std::string msg =
      errorOf([&] { resumed.seek(1, 3); }, ErrorCode::InvalidArgument);
  EXPECT_EQ(msg, "batcher: cannot seek to batch 3 of epoch 1; an epoch has 3 "
                 "batches");
  errorOf([&] { resumed.seek(-1, 0); }, ErrorCode::InvalidArgument);
}

TEST(Batcher, RefusesBadBatchSizes) {
  CountingDataset ds(5);
  EXPECT_EQ(errorOf([&] { Batcher(ds, 6, 0); }, ErrorCode::InvalidArgument),
            "batcher: batch size 6 must be in [1, 5] for counting of 5 "
            "samples (incomplete batches are dropped)");
  errorOf([&] { Batcher(ds, 0, 0); }, ErrorCode::InvalidArgument);
  CountingDataset empty(0);
  errorOf([&] { Batcher(empty, 1, 0); }, ErrorCode::InvalidArgument);
}

} // namespace
