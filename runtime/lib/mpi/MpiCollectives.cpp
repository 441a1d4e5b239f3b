//===- MpiCollectives.cpp - Collectives over MPI --------------------------===//

#include "memopt/runtime/MpiCollectives.h"

#include "memopt/runtime/Error.h"

#include <mpi.h>

#include <climits>
#include <cstdlib>
#include <vector>

namespace memopt::runtime {
namespace {

[[noreturn]] void fail(const char *what, int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(rc, text, &length) != MPI_SUCCESS)
    length = 0;
  throw Error(ErrorCode::Collective, concat("MPI: ", what, " failed: ",
                                            length ? std::string(text, length)
                                                   : concat("error ", rc)));
}

void check(const char *what, int rc) {
  if (rc != MPI_SUCCESS)
    fail(what, rc);
}

/// MPI counts are ints: a slice of 2 GiB or more is refused, not truncated.
int byteCount(size_t bytes, const char *what) {
  if (bytes > static_cast<size_t>(INT_MAX))
    throw Error(ErrorCode::Collective,
                concat("MPI: ", what, " of ", bytes,
                       " bytes per rank is over MPI's 2 GiB count; use a "
                       "smaller --memopt-data-parallel bucket"));
  return static_cast<int>(bytes);
}

class MpiCollectives final : public Collectives {
public:
  MpiCollectives() {
    int initialized = 0;
    check("MPI_Initialized", MPI_Initialized(&initialized));
    int provided = MPI_THREAD_SINGLE;
    if (!initialized) {
      // One thread at a time calls MPI's functions: the program's, or the
      // executor's collective in flight beside the computation (the
      // kernels' OpenMP threads never do).
      check(
          "MPI_Init_thread",
          MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided));
      ownsMpi = true;
    } else {
      check("MPI_Query_thread", MPI_Query_thread(&provided));
    }
    serialized = provided >= MPI_THREAD_SERIALIZED;
    check("MPI_Comm_dup", MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    check("MPI_Comm_set_errhandler",
          MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    check("MPI_Comm_rank", MPI_Comm_rank(comm, &myRank));
    check("MPI_Comm_size", MPI_Comm_size(comm, &worldSize));
  }
  ~MpiCollectives() override {
    MPI_Comm_free(&comm);
    if (ownsMpi)
      MPI_Finalize();
  }

  int rank() const override { return myRank; }
  bool overlappable() const override { return serialized; }
  int size() const override { return worldSize; }
  std::string describe() const override {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    if (MPI_Get_library_version(version, &length) != MPI_SUCCESS)
      return "MPI";
    std::string text(version, length);
    // Open MPI's first line: "Open MPI v4.1.4, package: ...".
    text = text.substr(0, text.find_first_of(",\n"));
    return concat("MPI (", text, ")");
  }

  void allToAll(const void *send, void *recv, size_t bytes) override {
    int count = byteCount(bytes, "all-to-all");
    check("MPI_Alltoall",
          MPI_Alltoall(send, count, MPI_BYTE, recv, count, MPI_BYTE, comm));
  }
  void allToAllV(const void *send, const std::vector<size_t> &sendBytes,
                 const std::vector<size_t> &sendOffsets, void *recv,
                 const std::vector<size_t> &recvBytes,
                 const std::vector<size_t> &recvOffsets) override {
    std::vector<int> counts[4];
    const std::vector<size_t> *sizes[4] = {&sendBytes, &sendOffsets, &recvBytes,
                                           &recvOffsets};
    for (int v = 0; v < 4; ++v) {
      if (sizes[v]->size() != static_cast<size_t>(worldSize))
        throw Error(ErrorCode::Internal,
                    concat("MPI: all-to-all of ", sizes[v]->size(),
                           " parts over ", worldSize, " ranks"));
      for (size_t bytes : *sizes[v])
        counts[v].push_back(byteCount(bytes, "all-to-all"));
    }
    check("MPI_Alltoallv",
          MPI_Alltoallv(send, counts[0].data(), counts[1].data(), MPI_BYTE,
                        recv, counts[2].data(), counts[3].data(), MPI_BYTE,
                        comm));
  }
  void allGather(const void *mine, void *all, size_t bytes) override {
    int count = byteCount(bytes, "all-gather");
    check("MPI_Allgather",
          MPI_Allgather(mine, count, MPI_BYTE, all, count, MPI_BYTE, comm));
  }

  void broadcast(void *data, size_t bytes, int root) override {
    int count = byteCount(bytes, "broadcast");
    check("MPI_Bcast", MPI_Bcast(data, count, MPI_BYTE, root, comm));
  }

private:
  MPI_Comm comm = MPI_COMM_NULL;
  int myRank = 0, worldSize = 1;
  bool ownsMpi = false;
  /// Whether MPI allows calls from any one thread at a time.
  bool serialized = false;
};

} // namespace

std::unique_ptr<Collectives> createMpiCollectives() {
  return std::make_unique<MpiCollectives>();
}

void abortMpiJob(int code) {
  int initialized = 0;
  if (MPI_Initialized(&initialized) == MPI_SUCCESS && initialized)
    MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

} // namespace memopt::runtime
