//===- NcclCollectives.cpp - Collectives over NCCL ------------------------===//
//
// Each call is issued on the collectives' own stream and waited for before
// it returns, as the MPI implementation blocks: the executor synchronises
// the backend's stream before a collective, so what the step computed is
// in memory, and what the collective wrote is there for the next kernel.
// All-to-alls are grouped point-to-point sends and receives (NCCL has no
// all-to-all of its own); parts of zero bytes are not sent.
//
//===----------------------------------------------------------------------===//

#include "memopt/runtime/NcclCollectives.h"

#include "SliceMean.h"

#include "memopt/runtime/Error.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstdlib>
#include <cstring>
#include <vector>

namespace memopt::runtime {
namespace {

void check(cudaError_t status, const char *what) {
  if (status != cudaSuccess)
    throw Error(ErrorCode::Collective,
                concat("NCCL collectives: ", what,
                       " failed: ", cudaGetErrorString(status)));
}

void check(ncclResult_t status, const char *what) {
  if (status != ncclSuccess)
    throw Error(ErrorCode::Collective, concat("NCCL: ", what, " failed: ",
                                              ncclGetErrorString(status)));
}

class NcclCollectives final : public Collectives {
public:
  NcclCollectives(Collectives &bootstrap, int device)
      : myRank(bootstrap.rank()), worldSize(bootstrap.size()), device(device) {
    int count = 0;
    cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess || count == 0)
      throw Error(ErrorCode::BackendUnavailable,
                  concat("NCCL collectives: no usable GPU (",
                         status != cudaSuccess ? cudaGetErrorString(status)
                                               : "no device",
                         ")"));
    if (device < 0 || device >= count)
      throw Error(ErrorCode::BackendUnavailable,
                  concat("NCCL collectives: rank ", myRank, " needs GPU ",
                         device, " but this machine has ", count,
                         " (NCCL runs one rank per GPU)"));
    check(cudaSetDevice(device), "cudaSetDevice");
    // Rank 0's id reaches every rank through the bootstrap collectives.
    ncclUniqueId id;
    std::memset(&id, 0, sizeof(id));
    if (myRank == 0)
      check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    bootstrap.broadcast(&id, sizeof(id), 0);
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
          "cudaStreamCreate");
    ncclResult_t init = ncclCommInitRank(&comm, worldSize, id, myRank);
    if (init != ncclSuccess) {
      cudaStreamDestroy(stream);
      check(init, "ncclCommInitRank");
    }
  }
  ~NcclCollectives() override {
    ncclCommDestroy(comm);
    cudaStreamDestroy(stream);
  }

  int rank() const override { return myRank; }
  int size() const override { return worldSize; }
  std::string describe() const override {
    int version = 0;
    ncclGetVersion(&version);
    // NCCL_VERSION_CODE: major * 10000 + minor * 100 + patch since 2.9.
    return concat("NCCL ", version / 10000, ".", version / 100 % 100, ".",
                  version % 100);
  }
  bool onDevice() const override { return true; }
  bool overlappable() const override { return true; }

  void allToAll(const void *send, void *recv, size_t bytes) override {
    std::vector<size_t> each(worldSize, bytes), offsets(worldSize);
    for (int k = 0; k < worldSize; ++k)
      offsets[k] = bytes * static_cast<size_t>(k);
    allToAllV(send, each, offsets, recv, each, offsets);
  }

  void allToAllV(const void *send, const std::vector<size_t> &sendBytes,
                 const std::vector<size_t> &sendOffsets, void *recv,
                 const std::vector<size_t> &recvBytes,
                 const std::vector<size_t> &recvOffsets) override {
    onThisThread();
    check(ncclGroupStart(), "ncclGroupStart");
    for (int k = 0; k < worldSize; ++k) {
      if (sendBytes[k])
        check(ncclSend(static_cast<const char *>(send) + sendOffsets[k],
                       sendBytes[k], ncclUint8, k, comm, stream),
              "ncclSend");
      if (recvBytes[k])
        check(ncclRecv(static_cast<char *>(recv) + recvOffsets[k], recvBytes[k],
                       ncclUint8, k, comm, stream),
              "ncclRecv");
    }
    check(ncclGroupEnd(), "ncclGroupEnd");
    wait();
  }

  void allGather(const void *mine, void *all, size_t bytes) override {
    onThisThread();
    check(ncclAllGather(mine, all, bytes, ncclUint8, comm, stream),
          "ncclAllGather");
    wait();
  }

  void broadcast(void *data, size_t bytes, int root) override {
    onThisThread();
    check(ncclBroadcast(data, data, bytes, ncclUint8, root, comm, stream),
          "ncclBroadcast");
    wait();
  }

  void copyLocal(void *dst, const void *src, size_t bytes) override {
    if (!bytes)
      return;
    onThisThread();
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream),
          "cudaMemcpyAsync");
    wait();
  }

  void zeroLocal(void *dst, size_t bytes) override {
    if (!bytes)
      return;
    onThisThread();
    check(cudaMemsetAsync(dst, 0, bytes, stream), "cudaMemsetAsync");
    wait();
  }

  void reduceSlices(const void *slices, void *out, int64_t count, int ranks,
                    DType dtype, bool mean) override {
    if (!isFloatDType(dtype))
      throw Error(
          ErrorCode::InvalidArgument,
          concat("collective: expected a float dtype, got ", dtypeName(dtype)));
    onThisThread();
    check(nccl::reduceSlices(slices, out, count, ranks, dtype, mean, stream),
          "the slices' reduction");
    wait();
  }

private:
  /// The calling thread's current device is the communicator's (the
  /// executor may call from a thread of its own).
  void onThisThread() { check(cudaSetDevice(device), "cudaSetDevice"); }

  /// Blocks until the stream's work is done; NCCL's asynchronous errors
  /// (a peer that failed) are reported, not waited for.
  void wait() {
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    ncclResult_t async = ncclSuccess;
    check(ncclCommGetAsyncError(comm, &async), "ncclCommGetAsyncError");
    check(async, "a collective");
  }

  int myRank, worldSize, device;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
};

} // namespace

std::unique_ptr<Collectives> createNcclCollectives(Collectives &bootstrap,
                                                   int device) {
  return std::make_unique<NcclCollectives>(bootstrap, device);
}

int localDeviceIndex(int rank) {
  if (const char *local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK"))
    return std::atoi(local);
  return rank;
}

} // namespace memopt::runtime
