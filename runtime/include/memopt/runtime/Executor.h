//===- Executor.h - run a plan's steps on a backend -------------*- C++ -*-===//
//
// The executor turns a validated plan into memory and runs it:
//
//  * one arena of exactly `arena_bytes` bytes, aligned to the plan's
//    alignment (at least 64), holds every `arena` tensor;
//  * every argument gets a buffer of its own outside the arena, owned by the
//    executor: parameters and state persist across steps, data are replaced
//    by the caller before a step (and kept until replaced);
//  * constants are materialised once, outside the arena;
//  * views share their target's bytes.
//
// Every tensor is resolved to a device pointer once, at construction, so a
// step is a loop over backend calls. Caller mistakes (a shape that does not
// match the plan, a buffer of the wrong size, an unset argument) are
// Error(InvalidArgument); a kernel failure is an Error(KernelFailure) naming
// the step and its source location. After a failed step the executor stays
// usable; the arena's contents are unspecified. An executor is not
// thread-safe: use one per thread (plans may be shared).
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_EXECUTOR_H
#define MEMOPT_RUNTIME_EXECUTOR_H

#include "memopt/runtime/Backend.h"
#include "memopt/runtime/Collectives.h"
#include "memopt/runtime/Plan.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

namespace memopt::runtime {

class Executor {
public:
  /// Allocates the plan's memory on `backend`.
  Executor(std::shared_ptr<const Plan> plan, std::unique_ptr<Backend> backend);
  /// Same, with the backend created by name (see createBackend).
  Executor(std::shared_ptr<const Plan> plan, std::string_view device);
  ~Executor();
  Executor(const Executor &) = delete;
  Executor &operator=(const Executor &) = delete;

  const Plan &plan() const { return *planPtr; }
  Backend &backend() { return *backendPtr; }

  /// The size of the one arena: the plan's `arena_bytes`.
  uint64_t arenaBytes() const { return planPtr->arenaBytes; }
  /// Bytes held outside the arena: argument buffers and constants.
  uint64_t persistentBytes() const { return persistent; }
  /// Bytes of the one device allocation: the arena, arguments and
  /// constants, each aligned (so at least arenaBytes() + persistentBytes()).
  uint64_t allocatedBytes() const { return block.bytes; }

  /// Copies a host tensor into argument `index`. `dtype` and `shape` must be
  /// the plan's and `bytes` its byte size.
  void setArgument(size_t index, DType dtype, const Shape &shape,
                   const void *data, size_t bytes);
  /// Same, by argument name.
  void setArgument(std::string_view name, DType dtype, const Shape &shape,
                   const void *data, size_t bytes);
  /// Copies argument `index` (e.g. a parameter after training) to the host;
  /// `bytes` must be its byte size.
  void getArgument(size_t index, void *data, size_t bytes) const;
  /// Whether argument `index` has been set since construction.
  bool isArgumentSet(size_t index) const;

  /// Runs every step once. `stepCounter` is the training step, which
  /// dropout's masks depend on. Every argument must have been set. Same as
  /// start() then finish().
  void run(uint64_t stepCounter);
  /// Issues every step's work and returns; the CPU backend has done it by
  /// then, the CUDA backend may still be running it. Prefetched arguments
  /// (prefetchArgument) take their new values first.
  void start(uint64_t stepCounter);
  /// Waits for the work start() issued and reports device-side errors; the
  /// results are then readable and the updates applicable.
  void finish();
  /// Like setArgument, but the value is for the next start(): between
  /// start() and finish() the copy overlaps the step in flight (on CUDA
  /// from pinned host memory on a second stream, through a device staging
  /// buffer the size of the argument). The data is copied before returning.
  void prefetchArgument(size_t index, DType dtype, const Shape &shape,
                        const void *data, size_t bytes);

  /// Called after every step of `run` with the step's index and its wall
  /// time in seconds (the backend synchronised first), for traces; null to
  /// stop. Timing costs a synchronisation per step, so leave it unset when
  /// not tracing.
  using StepObserver = std::function<void(size_t step, double seconds)>;
  void setStepObserver(StepObserver observer) {
    stepObserver = std::move(observer);
  }

  /// The communication with the other ranks for the plan's collectives
  /// (memopt.all_reduce and the others --memopt-data-parallel places); not
  /// owned, null for none. Throws Error(Collective) when the plan is for
  /// another number of ranks or (reduce_scatter, all_gather) another rank,
  /// Error(BackendUnavailable) when the collectives move another memory
  /// than the backend's (the CPU's need host memory, MPI; CUDA's device
  /// memory, NCCL). A plan with collectives does not start without them.
  void setCollectives(Collectives *collectives);

  /// Whether a collective runs on a thread of its own while the steps after
  /// it compute, until the first step that reads its results, writes memory
  /// it uses (its inputs, results, workspace) or is a collective; then the
  /// step waits for it. Off by default; only where the collectives allow
  /// calls from another thread (Collectives::overlappable), and never while
  /// a step observer times the steps. The results are the same bits.
  void setOverlapCollectives(bool overlap) { overlapCollectives = overlap; }
  /// The steps of the last start() issued while a collective was in flight.
  size_t getStepsBesideCollectives() const { return stepsBesideCollectives; }

  /// Copies result `index` to the host; `bytes` must be its byte size.
  void getResult(size_t index, void *data, size_t bytes) const;

  /// Copies result `result` into argument `argument` on the device (e.g. a
  /// batch norm's updated running statistics into its state argument for
  /// the next step). The two must have the same dtype and shape.
  void copyResultToArgument(size_t result, size_t argument);

  /// Performs the plan's `updates` after a step: copies each listed result
  /// into its argument on the device, as if all were copied at once (a
  /// result that is, or views, another updated argument's buffer is read
  /// before that argument is overwritten). Needs a successful run() since
  /// construction or the previous applyUpdates(), so a failed step (whose
  /// arena contents are unspecified) or a repeated call cannot corrupt the
  /// training state. A plan without updates makes this a no-op.
  void applyUpdates();

  /// The device pointer of a tensor (for backends and tests).
  void *tensorData(int64_t id) const;

private:
  struct DeviceBuffer {
    void *data = nullptr;
    size_t bytes = 0;
  };

  void allocate();
  /// Throws unless `dtype`, `shape` and `bytes` are argument `index`'s and
  /// `data` is not null (setArgument, prefetchArgument).
  void checkArgument(size_t index, DType dtype, const Shape &shape,
                     const void *data, size_t bytes) const;
  void release() noexcept;
  DeviceBuffer allocateBuffer(size_t bytes);
  TensorRef ref(int64_t id) const;

  std::shared_ptr<const Plan> planPtr;
  std::unique_ptr<Backend> backendPtr;
  /// The one allocation: arena, arguments and constants.
  DeviceBuffer block;
  /// Views into `block`.
  DeviceBuffer arena;
  std::vector<DeviceBuffer> argumentBuffers;
  std::vector<DeviceBuffer> constantBuffers;
  std::vector<void *> tensorPointers;
  std::vector<bool> argumentSet;
  /// Whether the results hold a completed run's values not yet applied.
  bool resultsFresh = false;
  std::vector<std::vector<TensorRef>> stepInputs, stepOutputs;
  std::vector<Workspace> stepWorkspaces;
  /// Prefetched values the backend did not stage itself, by argument.
  std::vector<std::pair<size_t, std::vector<uint8_t>>> prefetched;
  /// Arguments staged by the backend, to mark set at the next start().
  std::vector<size_t> staged;
  /// Whether start() issued work finish() has not waited for.
  bool started = false;
  uint64_t persistent = 0;
  StepObserver stepObserver;
  Collectives *collectives = nullptr;
  /// The `ranks` of the plan's collectives (0 when it has none).
  int64_t planRanks = 0;
  /// The rank the plan's reduce_scatter steps are for; -1 if it has none.
  int64_t planRank = -1;
  bool overlapCollectives = false;
  size_t stepsBesideCollectives = 0;
  /// For each collective step, the first later step that must wait for it
  /// (the number of steps: the end); computed at the first overlapped run.
  std::vector<size_t> collectiveWaitBefore;
  void computeCollectiveWaits();
  /// Runs collective step `s` over `collectives`.
  void runCollective(size_t s);
  size_t bufferAlignment = 64;
};

} // namespace memopt::runtime

#endif // MEMOPT_RUNTIME_EXECUTOR_H
