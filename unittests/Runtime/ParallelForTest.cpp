//===- ParallelForTest.cpp - the CPU kernels' own threads
//------------------===//

#include "cpu/ParallelFor.h"

#include "memopt/runtime/CpuThreads.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace memopt::runtime;
using namespace memopt::runtime::cpu;

namespace {

TEST(ParallelFor, RunsEveryPartOnce) {
  for (int parts : {0, 1, 2, 3, 7}) {
    std::vector<std::atomic<int>> runs(parts);
    parallelFor(parts, [&](int i) { ++runs[i]; });
    for (int i = 0; i < parts; ++i)
      EXPECT_EQ(runs[i].load(), 1) << "part " << i << " of " << parts;
  }
}

TEST(ParallelFor, PartZeroRunsOnTheCaller) {
  std::thread::id caller = std::this_thread::get_id(), zero;
  parallelFor(3, [&](int i) {
    if (i == 0)
      zero = std::this_thread::get_id();
  });
  EXPECT_EQ(zero, caller);
}

TEST(ParallelFor, AWorkersExceptionReachesTheCaller) {
  EXPECT_THROW(parallelFor(3,
                           [](int i) {
                             if (i == 2)
                               throw std::runtime_error("part 2");
                           }),
               std::runtime_error);
  // The pool still works afterwards.
  std::atomic<int> sum{0};
  parallelFor(4, [&](int i) { sum += i; });
  EXPECT_EQ(sum.load(), 6);
}

/// A part that splits again runs its own parts itself, in order.
TEST(ParallelFor, NestedCallsRunSerially) {
  std::atomic<int> inner{0};
  parallelFor(2, [&](int) {
    std::vector<int> order;
    parallelFor(3, [&](int j) { order.push_back(j); });
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
    inner += static_cast<int>(order.size());
  });
  EXPECT_EQ(inner.load(), 6);
}

TEST(ParallelFor, SplitRangeCoversInOrder) {
  for (int64_t n : {0, 1, 5, 64, 65}) {
    for (int parts : {1, 2, 3, 8}) {
      int64_t next = 0;
      for (int i = 0; i < parts; ++i) {
        int64_t begin, end;
        splitRange(n, parts, i, begin, end);
        EXPECT_EQ(begin, next);
        EXPECT_LE(end - begin, n / parts + 1);
        EXPECT_GE(end - begin, n / parts);
        next = end;
      }
      EXPECT_EQ(next, n);
    }
  }
}

/// parallelRange splits only work worth a thread, and never more parts
/// than threads.
TEST(ParallelFor, RangeSplitsByWorkAndThreads) {
  const int saved = cpuThreads();
  setCpuThreads(2);
  std::atomic<int> calls{0};
  parallelRange(100, 1, [&](int64_t b, int64_t e) {
    ++calls;
    EXPECT_EQ(b, 0);
    EXPECT_EQ(e, 100);
  });
  EXPECT_EQ(calls.load(), 1) << "too little work for a second thread";
  calls = 0;
  std::atomic<int64_t> covered{0};
  parallelRange(100, kMinElementsPerPart, [&](int64_t b, int64_t e) {
    ++calls;
    covered += e - b;
  });
  if (kernelThreads() >= 2) {
    EXPECT_EQ(calls.load(), 2);
  }
  EXPECT_EQ(covered.load(), 100);
  setCpuThreads(saved);
}

} // namespace
