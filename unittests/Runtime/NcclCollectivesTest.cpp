//===- NcclCollectivesTest.cpp - the collectives on a GPU through NCCL ----===//
//
// Needs a GPU: without one every test skips, saying so. One rank (one GPU
// is what a session may have): the collectives' kernels run on device
// memory through NCCL, and the reduction on the GPU gives the CPU's bits
// for every float dtype (several ranks' slices, reduced on one device).
//
//===----------------------------------------------------------------------===//

#include "memopt/runtime/NcclCollectives.h"
#include "memopt/runtime/Collectives.h"
#include "memopt/runtime/Error.h"
#include "memopt/runtime/Half.h"

#include "memopt/Contract/CollectiveShapes.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

using namespace memopt::runtime;

namespace {

/// The bootstrap of a job of one process.
class Alone final : public Collectives {
public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string describe() const override { return "one process"; }
  void allToAll(const void *send, void *recv, size_t bytes) override {
    std::memcpy(recv, send, bytes);
  }
  void allToAllV(const void *send, const std::vector<size_t> &sendBytes,
                 const std::vector<size_t> &sendOffsets, void *recv,
                 const std::vector<size_t> &recvBytes,
                 const std::vector<size_t> &recvOffsets) override {
    (void)sendBytes;
    std::memcpy(static_cast<char *>(recv) + recvOffsets[0],
                static_cast<const char *>(send) + sendOffsets[0], recvBytes[0]);
  }
  void allGather(const void *mine, void *all, size_t bytes) override {
    std::memcpy(all, mine, bytes);
  }
  void broadcast(void *, size_t, int) override {}
};

bool haveGpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

/// Device memory holding `host`'s bytes.
struct DeviceBuffer {
  explicit DeviceBuffer(size_t bytes) : bytes(bytes) {
    EXPECT_EQ(cudaMalloc(&data, bytes ? bytes : 1), cudaSuccess);
  }
  ~DeviceBuffer() { cudaFree(data); }
  template <typename T> void upload(const std::vector<T> &host) {
    ASSERT_EQ(host.size() * sizeof(T), bytes);
    ASSERT_EQ(cudaMemcpy(data, host.data(), bytes, cudaMemcpyHostToDevice),
              cudaSuccess);
  }
  template <typename T> std::vector<T> download() const {
    std::vector<T> host(bytes / sizeof(T));
    EXPECT_EQ(cudaMemcpy(host.data(), data, bytes, cudaMemcpyDeviceToHost),
              cudaSuccess);
    return host;
  }
  void *data = nullptr;
  size_t bytes;
};

class NcclCollectivesTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (!haveGpu())
      GTEST_SKIP() << "no usable GPU: the NCCL collectives run on one";
    nccl = createNcclCollectives(bootstrap, 0);
  }
  Alone bootstrap;
  std::unique_ptr<Collectives> nccl;
};

TEST_F(NcclCollectivesTest, ReductionOnTheGpuGivesTheCpusBits) {
  EXPECT_TRUE(nccl->onDevice());
  // Three ranks' slices of 1000 elements, reduced by the GPU and by the
  // CPU (the base class's reduction), for each float dtype.
  const int ranks = 3;
  const int64_t count = 1000;
  std::vector<float> values(ranks * count);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = 0.37f * static_cast<float>(i % 97) - 11.0f +
                1e-3f * static_cast<float>(i);
  Alone cpu;
  for (DType dtype : {DType::F32, DType::F64, DType::F16, DType::BF16}) {
    for (bool mean : {true, false}) {
      size_t element = dtypeSize(dtype);
      std::vector<unsigned char> host(values.size() * element);
      for (size_t i = 0; i < values.size(); ++i) {
        if (dtype == DType::F32)
          std::memcpy(&host[i * 4], &values[i], 4);
        else if (dtype == DType::F64) {
          double d = values[i];
          std::memcpy(&host[i * 8], &d, 8);
        } else {
          uint16_t h = dtype == DType::F16 ? floatToHalfBits(values[i])
                                           : floatToBFloat16Bits(values[i]);
          std::memcpy(&host[i * 2], &h, 2);
        }
      }
      std::vector<unsigned char> expected(count * element);
      cpu.reduceSlices(host.data(), expected.data(), count, ranks, dtype, mean);
      DeviceBuffer slices(host.size());
      slices.upload(host);
      nccl->reduceSlices(slices.data, slices.data, count, ranks, dtype, mean);
      std::vector<unsigned char> got = slices.download<unsigned char>();
      got.resize(expected.size());
      EXPECT_EQ(got, expected) << dtypeName(dtype) << (mean ? " mean" : " sum");
    }
  }
}

TEST_F(NcclCollectivesTest, OneRankThroughNccl) {
  // all_reduce, reduce_scatter (a tensor by rows and one owned whole),
  // all_gather and broadcast on device memory: with one rank each gives
  // its input back, bit for bit.
  Shape a{6, 2}, b{3};
  std::vector<float> x(12), y(3);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = 0.25f * static_cast<float>(i) - 1.0f;
  for (size_t i = 0; i < y.size(); ++i)
    y[i] = 3.0f + static_cast<float>(i);
  DeviceBuffer dx(48), dy(12), ox(48), oy(12);
  dx.upload(x);
  dy.upload(y);
  TensorRef rx{dx.data, DType::F32, &a, 12}, ry{dy.data, DType::F32, &b, 3},
      sx{ox.data, DType::F32, &a, 12}, sy{oy.data, DType::F32, &b, 3};
  DeviceBuffer workspace(static_cast<size_t>(
      memopt::shapes::allReduceWorkspaceBytes(2, 15, 1, 4)));
  Workspace w{workspace.data, workspace.bytes};
  allReduceMean(*nccl, {rx, ry}, {sx, sy}, w);
  EXPECT_EQ(ox.download<float>(), x);
  EXPECT_EQ(oy.download<float>(), y);
  DeviceBuffer zx(48), zy(12);
  TensorRef tx{zx.data, DType::F32, &a, 12}, ty{zy.data, DType::F32, &b, 3};
  reduceScatterMean(*nccl, {rx, ry}, {-1, 0}, {tx, ty}, w);
  EXPECT_EQ(zx.download<float>(), x);
  EXPECT_EQ(zy.download<float>(), y);
  DeviceBuffer gathered(48);
  TensorRef whole{gathered.data, DType::F32, &a, 12};
  allGatherRows(*nccl, rx, whole);
  EXPECT_EQ(gathered.download<float>(), x);
  DeviceBuffer copy(12);
  TensorRef rc{copy.data, DType::F32, &b, 3};
  broadcastFrom(*nccl, &ry, rc, 0);
  EXPECT_EQ(copy.download<float>(), y);
  // A collective without its planned workspace is refused on a device.
  EXPECT_THROW(allReduceMean(*nccl, {rx, ry}, {sx, sy}, Workspace{}), Error);
}

} // namespace
