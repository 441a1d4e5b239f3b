//===- MatMulBatchesTest.cpp - a broadcasting matmul's batch offsets
//-------===//

#include "MatMulBatches.h"

#include <gtest/gtest.h>

#include <vector>

using namespace memopt::runtime;

namespace {

TensorRef ref(const Shape &shape) {
  TensorRef t;
  t.shape = &shape;
  t.numElements = 1;
  for (int64_t d : shape)
    t.numElements *= d;
  return t;
}

/// offsetsOf(i), which the CPU's parallel batches use, gives what the
/// in-order walk gives, broadcast dimensions included.
TEST(MatMulBatches, OffsetsOfMatchesTheWalk) {
  const Shape a{2, 1, 3, 4, 5}, b{3, 5, 6}, y{2, 3, 3, 4, 6};
  const MatMulBatches batches(ref(a), ref(b), ref(y));
  const int64_t count = 2 * 3 * 3;
  std::vector<std::pair<int64_t, int64_t>> walked;
  batches.forEach(count, [&](int64_t i, int64_t offA, int64_t offB) {
    EXPECT_EQ(i, static_cast<int64_t>(walked.size()));
    walked.push_back({offA, offB});
  });
  ASSERT_EQ(walked.size(), static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    int64_t offA = -1, offB = -1;
    batches.offsetsOf(i, offA, offB);
    EXPECT_EQ(offA, walked[i].first) << "batch " << i;
    EXPECT_EQ(offB, walked[i].second) << "batch " << i;
  }
  // a's dimension of 1 broadcasts: batches 0..2 share a's first matrix
  // block; b broadcasts over the leading 2.
  int64_t offA, offB;
  batches.offsetsOf(count - 1, offA, offB);
  EXPECT_EQ(offA, (1 * 3 + 2) * 20);
  EXPECT_EQ(offB, 2 * 30);
}

} // namespace
