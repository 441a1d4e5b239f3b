//===- Backend.h - the device interface of the executor ---------*- C++ -*-===//
//
// A backend owns device memory and runs one plan step at a time on tensors
// the executor has already resolved to device pointers. The executor does
// all bookkeeping (the arena, argument buffers, constants, validation of
// caller input), so a backend is just memory, copies and kernels: the CPU
// backend is always built, the CUDA backend (cuDNN/cuBLAS) when nvcc is.
//
// Backends are created by name through createBackend(); the set is fixed at
// build time (no static-initialiser registration, which static libraries
// silently drop).
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_BACKEND_H
#define MEMOPT_RUNTIME_BACKEND_H

#include "memopt/runtime/DType.h"
#include "memopt/runtime/Plan.h"
#include "memopt/runtime/Shape.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memopt::runtime {

/// A tensor as a kernel sees it: device memory plus the plan's type.
struct TensorRef {
  void *data = nullptr;
  DType dtype = DType::F32;
  const Shape *shape = nullptr;
  int64_t numElements = 0;

  size_t bytes() const {
    return static_cast<size_t>(numElements) * dtypeSize(dtype);
  }
  size_t rank() const { return shape->size(); }
  int64_t dim(size_t i) const { return (*shape)[i]; }
  template <typename T> T *as() const { return static_cast<T *>(data); }
};

/// What a step needs besides its tensors.
/// A step's planned scratch memory: `bytes` at `data`, inside the arena
/// (null and 0 when the plan reserves none).
struct Workspace {
  void *data = nullptr;
  size_t bytes = 0;
};

struct StepContext {
  /// The caller's training-step counter (dropout's mask depends on it).
  uint64_t stepCounter = 0;
  /// The step's index in the plan, for messages.
  size_t stepIndex = 0;
  /// This process's rank in a data-parallel job (0 otherwise). The CPU
  /// dropout masks (dropout, attention) are those of the rank's rows of the
  /// global batch: element i of a tensor of n elements is element
  /// rank·n + i of the mask, as if one process ran the whole batch; the
  /// CUDA backend's masks are the same.
  uint64_t rank = 0;
  /// The step's workspace. A kernel uses at most these bytes; with too few
  /// it takes a path that needs less (a slower algorithm), or, on the CPU,
  /// allocates the rest for the call.
  Workspace workspace;
};

/// Bytes a backend currently holds and the most it has held at once.
struct MemoryStats {
  uint64_t bytesInUse = 0;
  uint64_t peakBytes = 0;
};

class Backend {
public:
  virtual ~Backend();

  /// The device name this backend was created for (`cpu`, `cuda`).
  virtual std::string_view name() const = 0;

  /// Device memory of exactly `bytes` bytes aligned to `alignment` (a power
  /// of two); throws Error(OutOfMemory). `bytes` may be 0 (returns null).
  virtual void *allocate(size_t bytes, size_t alignment) = 0;
  virtual void deallocate(void *ptr, size_t bytes) noexcept = 0;

  virtual void copyToDevice(void *dst, const void *src, size_t bytes) = 0;
  virtual void copyToHost(void *dst, const void *src, size_t bytes) = 0;
  virtual void copyOnDevice(void *dst, const void *src, size_t bytes) = 0;

  /// Called once per plan before the first step, with every step's
  /// tensors at their final addresses: a place for per-plan set-up such as
  /// algorithm selection and workspace allocation.
  virtual void
  prepare(const Plan & /*plan*/,
          const std::vector<std::vector<TensorRef>> & /*stepInputs*/,
          const std::vector<std::vector<TensorRef>> & /*stepOutputs*/,
          const std::vector<Workspace> & /*stepWorkspaces*/) {}

  /// Runs one validated step. `inputs` and `outputs` follow the step's
  /// order. Throws Error(KernelFailure) for bad data (an id out of range);
  /// the executor adds the step's name and location to the message.
  virtual void execute(const Step &step, const std::vector<TensorRef> &inputs,
                       const std::vector<TensorRef> &outputs,
                       const StepContext &context) = 0;

  /// Starts copying `bytes` from host `src` towards the device buffer `dst`
  /// for the next step, overlapping the work in flight; the copy must land
  /// in `dst` only when commitStaged() is called (before that step's work).
  /// `slot` identifies the destination (the argument index) so a backend
  /// can keep a staging buffer per destination. `src` may be reused as soon
  /// as this returns. Returns false when the backend does not stage (the
  /// executor then copies at the next step, synchronously).
  virtual bool stageToDevice(size_t /*slot*/, void * /*dst*/,
                             const void * /*src*/, size_t /*bytes*/) {
    return false;
  }
  /// Orders every staged copy before the work issued next.
  virtual void commitStaged() {}

  /// Runs one whole step: `issue` calls execute() for every step of the
  /// plan. The default just calls it; the CUDA backend captures the first
  /// call's work into a CUDA graph and replays the graph on later calls
  /// (the plan's tensors never move), so `issue` must issue the same work
  /// every time.
  virtual void runStep(const std::function<void()> &issue) { issue(); }

  /// Waits for all work issued so far.
  virtual void synchronize() {}

  virtual MemoryStats memoryStats() const = 0;

  /// Bytes in use on the whole device as the driver reports them
  /// (cudaMemGetInfo: every process and context included), for backends
  /// that can measure it; nothing otherwise.
  virtual std::optional<uint64_t> deviceBytesInUse() const {
    return std::nullopt;
  }
};

/// Creates the backend for a device name: `cpu`, `cuda`, or `auto` (CUDA
/// when it was built and a GPU is present, else CPU). Throws
/// Error(BackendUnavailable) for unknown names and for `cuda` in a build
/// without the CUDA backend.
std::unique_ptr<Backend> createBackend(std::string_view device);

/// The device names createBackend accepts in this build.
std::vector<std::string> availableBackends();

/// The CPU backend (also reachable as createBackend("cpu")).
std::unique_ptr<Backend> createCpuBackend();

} // namespace memopt::runtime

#endif // MEMOPT_RUNTIME_BACKEND_H
