//===- CollectivesTest.cpp - all_reduce's arithmetic and order ------------===//
//
// allReduceMean over an in-process group of ranks (one thread each): the
// mean of every element in rank order, the bucket's packing and padding,
// half precision, in place, without a workspace; and checkSameOnEveryRank.
//
//===----------------------------------------------------------------------===//

#include "memopt/runtime/Collectives.h"
#include "memopt/runtime/Backend.h"
#include "memopt/runtime/Executor.h"

#include "memopt/Contract/CollectiveShapes.h"
#include "memopt/runtime/Error.h"
#include "memopt/runtime/Half.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>

using namespace memopt::runtime;

namespace {

/// Waits until `count` threads have arrived (C++17 has no std::barrier).
class Barrier {
public:
  explicit Barrier(int count) : count(count) {}
  void arrive_and_wait() {
    std::unique_lock<std::mutex> lock(mutex);
    int generation = passed;
    if (++waiting == count) {
      waiting = 0;
      ++passed;
      all.notify_all();
      return;
    }
    all.wait(lock, [&] { return passed != generation; });
  }

private:
  std::mutex mutex;
  std::condition_variable all;
  int count, waiting = 0, passed = 0;
};

/// N ranks as threads of one process: each collective publishes every
/// rank's buffers, waits for all, copies, and waits again.
class ThreadGroup {
public:
  explicit ThreadGroup(int size)
      : size(size), sync(size), sends(size), sendBytes(size),
        sendOffsets(size) {}

  class Rank final : public Collectives {
  public:
    Rank(ThreadGroup &group, int rank) : group(group), index(rank) {}
    int rank() const override { return index; }
    int size() const override { return group.size; }
    std::string describe() const override { return "threads"; }
    void allToAll(const void *send, void *recv, size_t bytes) override {
      group.sends[index] = send;
      group.sync.arrive_and_wait();
      for (int k = 0; k < group.size; ++k)
        std::memcpy(static_cast<char *>(recv) + k * bytes,
                    static_cast<const char *>(group.sends[k]) + index * bytes,
                    bytes);
      group.sync.arrive_and_wait();
    }
    void allToAllV(const void *send, const std::vector<size_t> &sendBytes,
                   const std::vector<size_t> &sendOffsets, void *recv,
                   const std::vector<size_t> &recvBytes,
                   const std::vector<size_t> &recvOffsets) override {
      group.sends[index] = send;
      group.sendBytes[index] = &sendBytes;
      group.sendOffsets[index] = &sendOffsets;
      group.sync.arrive_and_wait();
      for (int k = 0; k < group.size; ++k) {
        EXPECT_EQ((*group.sendBytes[k])[index], recvBytes[k]);
        std::memcpy(static_cast<char *>(recv) + recvOffsets[k],
                    static_cast<const char *>(group.sends[k]) +
                        (*group.sendOffsets[k])[index],
                    recvBytes[k]);
      }
      group.sync.arrive_and_wait();
    }
    void allGather(const void *mine, void *all, size_t bytes) override {
      group.sends[index] = mine;
      group.sync.arrive_and_wait();
      for (int k = 0; k < group.size; ++k)
        std::memcpy(static_cast<char *>(all) + k * bytes, group.sends[k],
                    bytes);
      group.sync.arrive_and_wait();
    }

    void broadcast(void *data, size_t bytes, int root) override {
      if (index == root)
        group.sends[index] = data;
      group.sync.arrive_and_wait();
      if (index != root)
        std::memcpy(data, group.sends[root], bytes);
      group.sync.arrive_and_wait();
    }

  private:
    ThreadGroup &group;
    int index;
  };

  /// Runs `body(rank)` on every rank at once.
  void run(const std::function<void(Collectives &)> &body) {
    std::vector<std::thread> threads;
    for (int r = 0; r < size; ++r)
      threads.emplace_back([this, r, &body] {
        Rank rank(*this, r);
        body(rank);
      });
    for (std::thread &t : threads)
      t.join();
  }

private:
  int size;
  Barrier sync;
  std::vector<const void *> sends;
  std::vector<const std::vector<size_t> *> sendBytes, sendOffsets;
};

TensorRef ref(void *data, DType dtype, const Shape &shape) {
  return TensorRef{data, dtype, &shape, numElements(shape)};
}

/// Rank r's value of element i.
float value(int r, int64_t i) {
  return 0.1f * static_cast<float>(i + 1) + 1.7f * static_cast<float>(r) +
         1e-7f * static_cast<float>(i * r);
}

/// What every rank must get for element i: the ranks' values summed in rank
/// order in float, divided once.
float meanInRankOrder(int ranks, int64_t i) {
  float sum = value(0, i);
  for (int r = 1; r < ranks; ++r)
    sum += value(r, i);
  return sum / static_cast<float>(ranks);
}

TEST(CollectivesTest, MeanInRankOrderOverAPaddedBucket) {
  for (int ranks : {2, 3, 4}) {
    ThreadGroup group(ranks);
    // 7 + 3 elements: 10 is padded to a multiple of 3 and of 4.
    Shape a{7}, b{3};
    std::vector<std::vector<float>> results(ranks);
    group.run([&](Collectives &c) {
      std::vector<float> x(7), y(3), outX(7), outY(3);
      for (int64_t i = 0; i < 7; ++i)
        x[i] = value(c.rank(), i);
      for (int64_t i = 0; i < 3; ++i)
        y[i] = value(c.rank(), 7 + i);
      std::vector<unsigned char> workspace(
          memopt::shapes::allReduceWorkspaceBytes(2, 10, ranks, 4));
      allReduceMean(
          c, {ref(x.data(), DType::F32, a), ref(y.data(), DType::F32, b)},
          {ref(outX.data(), DType::F32, a), ref(outY.data(), DType::F32, b)},
          Workspace{workspace.data(), workspace.size()});
      outX.insert(outX.end(), outY.begin(), outY.end());
      results[c.rank()] = outX;
    });
    for (int64_t i = 0; i < 10; ++i) {
      float mean = meanInRankOrder(ranks, i);
      for (int r = 0; r < ranks; ++r)
        EXPECT_EQ(std::memcmp(&results[r][i], &mean, 4), 0)
            << "rank " << r << " element " << i << " of " << ranks;
    }
  }
}

TEST(CollectivesTest, ReduceScatterGivesEachOwnerTheAllReduceBits) {
  // Four tensors (5, 1, 7 and 3 elements) owned by ranks 1, 0, 1 and 0:
  // the last rank of 3 and of 4 owns none, and each owner's part straddles
  // the slices the ranks reduce.
  const std::vector<int64_t> sizes{5, 1, 7, 3}, owners{1, 0, 1, 0};
  for (int ranks : {2, 3, 4}) {
    ThreadGroup group(ranks);
    std::vector<Shape> shapes;
    for (int64_t n : sizes)
      shapes.push_back(Shape{n});
    // Rank r's means, in input order, by element of the whole bucket.
    std::vector<std::vector<std::pair<int64_t, float>>> got(ranks);
    group.run([&](Collectives &c) {
      std::vector<std::vector<float>> in(sizes.size()), out;
      std::vector<TensorRef> inputs, outputs;
      int64_t first = 0;
      std::vector<int64_t> firsts;
      for (size_t t = 0; t < sizes.size(); ++t) {
        for (int64_t i = 0; i < sizes[t]; ++i)
          in[t].push_back(value(c.rank(), first + i));
        firsts.push_back(first);
        first += sizes[t];
        inputs.push_back(ref(in[t].data(), DType::F32, shapes[t]));
      }
      out.reserve(sizes.size());
      std::vector<int64_t> mine;
      for (size_t t = 0; t < sizes.size(); ++t)
        if (owners[t] == c.rank()) {
          out.emplace_back(sizes[t], -1.0f);
          outputs.push_back(ref(out.back().data(), DType::F32, shapes[t]));
          mine.push_back(static_cast<int64_t>(t));
        }
      std::vector<unsigned char> workspace(
          memopt::shapes::reduceScatterWorkspaceBytes(4, 16, ranks, 4));
      reduceScatterMean(c, inputs, owners, outputs,
                        Workspace{workspace.data(), workspace.size()});
      for (size_t k = 0; k < mine.size(); ++k)
        for (int64_t i = 0; i < sizes[mine[k]]; ++i)
          got[c.rank()].push_back({firsts[mine[k]] + i, out[k][i]});
    });
    size_t seen = 0;
    for (int r = 0; r < ranks; ++r) {
      seen += got[r].size();
      for (auto [i, v] : got[r]) {
        float mean = meanInRankOrder(ranks, i);
        EXPECT_EQ(std::memcmp(&v, &mean, 4), 0)
            << "rank " << r << " element " << i << " of " << ranks;
      }
    }
    EXPECT_EQ(seen, 16u) << ranks << " ranks";
    EXPECT_TRUE(got[ranks - 1].empty() || ranks == 2);
  }
}

TEST(CollectivesTest, ReduceScatterOfOneTensorNeedsOneCopy) {
  // 12 elements over 4 ranks, owned by rank 2: sent as it is, the mean
  // received straight into rank 2's result, the workspace one copy.
  EXPECT_EQ(memopt::shapes::reduceScatterWorkspaceBytes(1, 12, 4, 4), 48);
  ThreadGroup group(4);
  Shape s{12};
  std::vector<float> mean(12, -1.0f);
  group.run([&](Collectives &c) {
    std::vector<float> x(12);
    for (int64_t i = 0; i < 12; ++i)
      x[i] = value(c.rank(), i);
    std::vector<unsigned char> workspace(48);
    std::vector<TensorRef> outputs;
    if (c.rank() == 2)
      outputs.push_back(ref(mean.data(), DType::F32, s));
    reduceScatterMean(c, {ref(x.data(), DType::F32, s)}, {2}, outputs,
                      Workspace{workspace.data(), workspace.size()});
  });
  for (int64_t i = 0; i < 12; ++i) {
    float expected = meanInRankOrder(4, i);
    EXPECT_EQ(std::memcmp(&mean[i], &expected, 4), 0) << "element " << i;
  }
}

TEST(CollectivesTest, ReduceScatterByRowsGivesEachRankItsRows) {
  // A 5x2 tensor and a 7x1 divided by rows (owner -1) around 3 elements
  // owned by rank 0: every rank gets its rows (uneven for 2, 3 and 4
  // ranks) with all_reduce's bits. Then one 8x3 tensor alone, whose
  // elements 4 ranks divide: sent as it is, received into the results.
  struct Case {
    std::vector<Shape> shapes;
    std::vector<int64_t> owners;
  };
  const std::vector<Case> cases{{{{5, 2}, {3}, {7, 1}}, {-1, 0, -1}},
                                {{{8, 3}}, {-1}}};
  for (const Case &bucket : cases)
    for (int ranks : {2, 3, 4}) {
      ThreadGroup group(ranks);
      int64_t total = 0;
      for (const Shape &shape : bucket.shapes)
        total += numElements(shape);
      // Per element of the whole bucket, the ranks that received it.
      std::vector<std::vector<std::pair<int64_t, float>>> got(ranks);
      group.run([&](Collectives &c) {
        std::vector<std::vector<float>> in(bucket.shapes.size()), out;
        std::vector<Shape> outShapes;
        std::vector<TensorRef> inputs, outputs;
        std::vector<int64_t> outFirst;
        out.reserve(bucket.shapes.size());
        outShapes.reserve(bucket.shapes.size());
        int64_t first = 0;
        for (size_t t = 0; t < bucket.shapes.size(); ++t) {
          const Shape &shape = bucket.shapes[t];
          int64_t n = numElements(shape);
          for (int64_t i = 0; i < n; ++i)
            in[t].push_back(value(c.rank(), first + i));
          inputs.push_back(ref(in[t].data(), DType::F32, shape));
          if (bucket.owners[t] == -1) {
            int64_t row = n / shape[0];
            Shape rows = shape;
            rows[0] = memopt::shapes::rowSliceRows(shape[0], ranks, c.rank());
            outShapes.push_back(rows);
            outFirst.push_back(first + row * memopt::shapes::rowSliceStart(
                                                 shape[0], ranks, c.rank()));
          } else if (bucket.owners[t] == c.rank()) {
            outShapes.push_back(shape);
            outFirst.push_back(first);
          } else {
            first += n;
            continue;
          }
          out.emplace_back(numElements(outShapes.back()), -1.0f);
          outputs.push_back(
              ref(out.back().data(), DType::F32, outShapes.back()));
          first += n;
        }
        std::vector<unsigned char> workspace(
            memopt::shapes::reduceScatterWorkspaceBytes(
                static_cast<int64_t>(inputs.size()), total, ranks, 4));
        reduceScatterMean(c, inputs, bucket.owners, outputs,
                          Workspace{workspace.data(), workspace.size()});
        for (size_t k = 0; k < out.size(); ++k)
          for (size_t i = 0; i < out[k].size(); ++i)
            got[c.rank()].push_back(
                {outFirst[k] + static_cast<int64_t>(i), out[k][i]});
      });
      std::vector<int> seen(total, 0);
      for (int r = 0; r < ranks; ++r)
        for (auto [i, v] : got[r]) {
          ++seen[i];
          float mean = meanInRankOrder(ranks, i);
          EXPECT_EQ(std::memcmp(&v, &mean, 4), 0)
              << "rank " << r << " element " << i << " of " << ranks;
        }
      for (int64_t i = 0; i < total; ++i)
        EXPECT_EQ(seen[i], 1) << "element " << i << " of " << ranks;
    }
}

TEST(CollectivesTest, AllGatherRowsPutsEveryRanksRowsTogether) {
  // 10 rows of 2 over 4 ranks: 3, 3, 2 and 2 rows.
  const int ranks = 4;
  ThreadGroup group(ranks);
  Shape whole{10, 2};
  std::vector<std::vector<float>> results(ranks);
  group.run([&](Collectives &c) {
    int64_t first = memopt::shapes::rowSliceStart(10, ranks, c.rank());
    Shape rows{memopt::shapes::rowSliceRows(10, ranks, c.rank()), 2};
    std::vector<float> mine;
    for (int64_t i = 2 * first; i < 2 * (first + rows[0]); ++i)
      mine.push_back(static_cast<float>(i));
    std::vector<float> all(20, -1.0f);
    allGatherRows(c, ref(mine.data(), DType::F32, rows),
                  ref(all.data(), DType::F32, whole));
    results[c.rank()] = all;
  });
  for (int r = 0; r < ranks; ++r)
    for (int64_t i = 0; i < 20; ++i)
      EXPECT_EQ(results[r][i], static_cast<float>(i))
          << "rank " << r << " element " << i;
  // Rows that are not the rank's are refused before anything is sent.
  ThreadGroup alone(1);
  alone.run([&](Collectives &c) {
    std::vector<float> mine(6), all(20);
    Shape small{2, 2};
    EXPECT_THROW(allGatherRows(c, ref(mine.data(), DType::F32, small),
                               ref(all.data(), DType::F32, whole)),
                 Error);
  });
}

TEST(CollectivesTest, AllReduceSumIsNotDivided) {
  ThreadGroup group(3);
  Shape scalar{};
  std::vector<double> sums(3);
  group.run([&](Collectives &c) {
    double mine = 0.25 * (c.rank() + 1), sum = 0;
    allReduceSum(c, {ref(&mine, DType::F64, scalar)},
                 {ref(&sum, DType::F64, scalar)}, Workspace{});
    sums[c.rank()] = sum;
  });
  for (double sum : sums)
    EXPECT_EQ(sum, 1.5);
}

TEST(CollectivesTest, OneTensorIsSentAsItIs) {
  // 12 elements over 4 ranks: no packed copy, the workspace is the
  // received slices alone, and the result may be the input's storage.
  EXPECT_EQ(memopt::shapes::allReduceWorkspaceBytes(1, 12, 4, 4), 48);
  EXPECT_EQ(memopt::shapes::allReduceWorkspaceBytes(1, 13, 4, 4), 2 * 64);
  ThreadGroup group(4);
  Shape s{12};
  std::vector<std::vector<float>> results(4);
  group.run([&](Collectives &c) {
    std::vector<float> x(12);
    for (int64_t i = 0; i < 12; ++i)
      x[i] = value(c.rank(), i);
    std::vector<unsigned char> workspace(48);
    allReduceMean(c, {ref(x.data(), DType::F32, s)},
                  {ref(x.data(), DType::F32, s)},
                  Workspace{workspace.data(), workspace.size()});
    results[c.rank()] = x;
  });
  for (int64_t i = 0; i < 12; ++i) {
    float mean = meanInRankOrder(4, i);
    for (int r = 0; r < 4; ++r)
      EXPECT_EQ(std::memcmp(&results[r][i], &mean, 4), 0) << r << " " << i;
  }
}

TEST(CollectivesTest, InPlaceWithoutWorkspaceAndInHalfPrecision) {
  ThreadGroup group(2);
  Shape s{5};
  std::vector<std::vector<uint16_t>> results(2);
  group.run([&](Collectives &c) {
    std::vector<uint16_t> x(5);
    for (int64_t i = 0; i < 5; ++i)
      x[i] = floatToHalfBits(value(c.rank(), i));
    // The output is the input's storage; no workspace: the kernel
    // allocates its buffers.
    allReduceMean(c, {ref(x.data(), DType::F16, s)},
                  {ref(x.data(), DType::F16, s)}, Workspace{});
    results[c.rank()] = x;
  });
  for (int64_t i = 0; i < 5; ++i) {
    float sum = halfBitsToFloat(floatToHalfBits(value(0, i))) +
                halfBitsToFloat(floatToHalfBits(value(1, i)));
    uint16_t mean = floatToHalfBits(sum / 2.0f);
    EXPECT_EQ(results[0][i], mean) << i;
    EXPECT_EQ(results[1][i], mean) << i;
  }
}

TEST(CollectivesTest, BroadcastGivesTheRootsBits) {
  ThreadGroup group(3);
  Shape s{4};
  std::vector<std::vector<float>> results(3);
  group.run([&](Collectives &c) {
    std::vector<float> x(4), y(4, -1.0f);
    for (int64_t i = 0; i < 4; ++i)
      x[i] = value(c.rank(), i);
    // The root copies its input into its output; the others receive (rank
    // 0 without an input, as ZeRO stage 3's ranks that do not hold it).
    TensorRef in = ref(x.data(), DType::F32, s);
    broadcastFrom(c, c.rank() == 0 ? nullptr : &in,
                  ref(y.data(), DType::F32, s), /*root=*/2);
    results[c.rank()] = y;
  });
  for (int r = 0; r < 3; ++r)
    for (int64_t i = 0; i < 4; ++i)
      EXPECT_EQ(results[r][i], value(2, i)) << r << " " << i;
  group.run([&](Collectives &c) {
    float x[4] = {0, 0, 0, 0};
    TensorRef in = ref(x, DType::F32, s);
    EXPECT_THROW(broadcastFrom(c, &in, ref(x, DType::F32, s), /*root=*/3),
                 Error);
  });
}

TEST(CollectivesTest, MixedDTypesAreRefused) {
  ThreadGroup group(1);
  Shape s{2};
  group.run([&](Collectives &c) {
    float f[2] = {1, 2};
    double d[2] = {1, 2};
    EXPECT_THROW(allReduceMean(c,
                               {ref(f, DType::F32, s), ref(d, DType::F64, s)},
                               {ref(f, DType::F32, s), ref(d, DType::F64, s)},
                               Workspace{}),
                 Error);
  });
}

TEST(CollectivesTest, DifferentPlansFailOnEveryRank) {
  ThreadGroup group(3);
  std::vector<std::string> errors(3);
  group.run([&](Collectives &c) {
    try {
      checkSameOnEveryRank(c, c.rank() == 2 ? "plan B" : "plan A", "plan");
    } catch (const Error &e) {
      EXPECT_EQ(e.code(), ErrorCode::Collective);
      errors[c.rank()] = e.what();
    }
  });
  for (const std::string &e : errors)
    EXPECT_NE(e.find("rank 2's (6 bytes) differs from rank 0's"),
              std::string::npos)
        << e;
  group.run([&](Collectives &c) {
    EXPECT_NO_THROW(checkSameOnEveryRank(c, "same plan", "plan"));
  });
}

/// The CPU backend, counting the whole steps issued through runStep (which
/// the CUDA backend captures into a CUDA graph).
class CountingBackend final : public Backend {
public:
  explicit CountingBackend(int &wholeSteps)
      : cpu(createCpuBackend()), wholeSteps(wholeSteps) {}
  std::string_view name() const override { return cpu->name(); }
  void *allocate(size_t bytes, size_t alignment) override {
    return cpu->allocate(bytes, alignment);
  }
  void deallocate(void *ptr, size_t bytes) noexcept override {
    cpu->deallocate(ptr, bytes);
  }
  void copyToDevice(void *dst, const void *src, size_t bytes) override {
    cpu->copyToDevice(dst, src, bytes);
  }
  void copyToHost(void *dst, const void *src, size_t bytes) override {
    cpu->copyToHost(dst, src, bytes);
  }
  void copyOnDevice(void *dst, const void *src, size_t bytes) override {
    cpu->copyOnDevice(dst, src, bytes);
  }
  void prepare(const Plan &plan,
               const std::vector<std::vector<TensorRef>> &stepInputs,
               const std::vector<std::vector<TensorRef>> &stepOutputs,
               const std::vector<Workspace> &stepWorkspaces) override {
    cpu->prepare(plan, stepInputs, stepOutputs, stepWorkspaces);
  }
  void execute(const Step &step, const std::vector<TensorRef> &inputs,
               const std::vector<TensorRef> &outputs,
               const StepContext &context) override {
    cpu->execute(step, inputs, outputs, context);
  }
  void runStep(const std::function<void()> &issue) override {
    ++wholeSteps;
    issue();
  }
  MemoryStats memoryStats() const override { return cpu->memoryStats(); }

private:
  std::unique_ptr<Backend> cpu;
  int &wholeSteps;
};

TEST(CollectivesTest, AStepWithCollectivesIsNotCapturedWhole) {
  // A collective synchronises the backend's stream, which a CUDA graph
  // being captured cannot do: the executor issues such a plan step by step
  // (a plan without collectives still goes through runStep).
  using namespace memopt::runtime::test;
  HostTensor x{DType::F32, {3}, {0, 0, 0}};
  auto plan =
      Plan::parse(singleStepPlan("all_reduce", {{"ranks", 2}, {"sum", false}},
                                 {x}, {{DType::F32, {3}}})
                      .dump());
  ThreadGroup group(2);
  std::vector<int> wholeSteps(2, 0);
  std::vector<std::vector<float>> got(2, std::vector<float>(3));
  group.run([&](Collectives &c) {
    int r = c.rank();
    Executor exec(plan, std::make_unique<CountingBackend>(wholeSteps[r]));
    exec.setCollectives(&c);
    std::vector<float> mine{value(r, 0), value(r, 1), value(r, 2)};
    exec.setArgument(0, DType::F32, {3}, mine.data(), 12);
    exec.run(0);
    exec.getResult(0, got[r].data(), 12);
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(wholeSteps[r], 0) << "rank " << r;
    for (int64_t i = 0; i < 3; ++i)
      EXPECT_EQ(got[r][i], meanInRankOrder(2, i)) << "rank " << r;
  }
  int alone = 0;
  Executor exec(Plan::parse(singleStepPlan("relu", json::object(), {x},
                                           {{DType::F32, {3}}})
                                .dump()),
                std::make_unique<CountingBackend>(alone));
  float zeros[3] = {0, 0, 0};
  exec.setArgument(0, DType::F32, {3}, zeros, sizeof zeros);
  exec.run(0);
  EXPECT_EQ(alone, 1);
}

} // namespace
