//===- Executor.cpp - run a plan's steps on a backend ---------------------===//
//
// Memory layout and the step loop of Executor.h. All checks of caller input
// happen here, before any backend call, so backends can trust what they get.
//
//===----------------------------------------------------------------------===//

#include "memopt/runtime/Executor.h"

#include <chrono>

#include "memopt/runtime/Error.h"

#include <algorithm>
#include <future>
#include <new>
#include <optional>

namespace memopt::runtime {

namespace {
std::string describeArgument(const Plan &plan, size_t index) {
  const ArgumentInfo &a = plan.arguments[index];
  return concat("argument ", index, " '", a.name, "' (",
                argumentRoleName(a.role), ")");
}

std::string describeType(DType dtype, const Shape &shape) {
  return concat(dtypeName(dtype), " of shape ", formatShape(shape));
}
} // namespace

namespace {

/// A collective step's `ranks` and, for one built for a single rank
/// (reduce_scatter, all_gather), that `rank`.
struct CollectiveRanks {
  int64_t ranks;
  std::optional<int64_t> rank;
};

/// Those of `step`, or nullopt for a step that is not a collective (the
/// executor runs collectives over its Collectives, not the backend).
std::optional<CollectiveRanks> collectiveRanksOf(const Step &step) {
  switch (step.kernel) {
  case KernelKind::AllReduce:
    return CollectiveRanks{std::get<AllReduceAttrs>(step.attrs).ranks, {}};
  case KernelKind::Broadcast:
    return CollectiveRanks{std::get<BroadcastAttrs>(step.attrs).ranks, {}};
  case KernelKind::ReduceScatter: {
    const auto &a = std::get<ReduceScatterAttrs>(step.attrs);
    return CollectiveRanks{a.ranks, a.rank};
  }
  case KernelKind::AllGather: {
    const auto &a = std::get<AllGatherAttrs>(step.attrs);
    return CollectiveRanks{a.ranks, a.rank};
  }
  default:
    return std::nullopt;
  }
}

bool isCollective(const Step &step) {
  return collectiveRanksOf(step).has_value();
}

} // namespace

Executor::Executor(std::shared_ptr<const Plan> plan,
                   std::unique_ptr<Backend> backend)
    : planPtr(std::move(plan)), backendPtr(std::move(backend)) {
  if (!planPtr)
    throw Error(ErrorCode::InvalidArgument, "executor: no plan given");
  if (!backendPtr)
    throw Error(ErrorCode::InvalidArgument, "executor: no backend given");
  bufferAlignment =
      static_cast<size_t>(std::max<uint64_t>(64, planPtr->alignment));
  for (const Step &step : planPtr->steps) {
    std::optional<CollectiveRanks> collective = collectiveRanksOf(step);
    if (!collective)
      continue;
    if (collective->rank) {
      if (planRank >= 0 && *collective->rank != planRank)
        throw Error(ErrorCode::InvalidPlan,
                    concat("plan: its collectives are rank ", planRank,
                           "'s and rank ", *collective->rank, "'s"));
      planRank = *collective->rank;
    }
    if (planRanks && collective->ranks != planRanks)
      throw Error(ErrorCode::InvalidPlan,
                  concat("plan: its collectives are for ", planRanks,
                         " and for ", collective->ranks, " ranks"));
    planRanks = collective->ranks;
  }
  try {
    allocate();
  } catch (...) {
    release();
    throw;
  }
}

Executor::Executor(std::shared_ptr<const Plan> plan, std::string_view device)
    : Executor(std::move(plan), createBackend(device)) {}

Executor::~Executor() { release(); }

Executor::DeviceBuffer Executor::allocateBuffer(size_t bytes) {
  DeviceBuffer buffer;
  buffer.data = backendPtr->allocate(bytes, bufferAlignment);
  buffer.bytes = bytes;
  return buffer;
}

void Executor::allocate() {
  const Plan &plan = *planPtr;
  // One device allocation holds the arena (exactly the planned size), every
  // argument and every constant, each at an aligned offset: the step's
  // memory is one block the size of the plan, allocated once.
  auto alignUp = [&](size_t n) {
    return (n + bufferAlignment - 1) / bufferAlignment * bufferAlignment;
  };
  // The block ends where its last buffer ends (no trailing padding).
  size_t total = static_cast<size_t>(plan.arenaBytes);
  std::vector<size_t> argumentOffsets, constantOffsets;
  auto place = [&](size_t bytes) {
    size_t offset = alignUp(total);
    total = offset + bytes;
    return offset;
  };
  for (size_t i = 0; i < plan.arguments.size(); ++i)
    argumentOffsets.push_back(
        place(static_cast<size_t>(plan.argumentTensor(i).bytes)));
  for (const TensorInfo &t : plan.tensors)
    if (t.storage == StorageKind::Constant)
      constantOffsets.push_back(place(t.constantData.size()));
  block = allocateBuffer(total);
  auto at = [&](size_t offset) -> void * {
    return block.data ? static_cast<char *>(block.data) + offset : nullptr;
  };
  arena = {at(0), static_cast<size_t>(plan.arenaBytes)};

  argumentBuffers.reserve(plan.arguments.size());
  for (size_t i = 0; i < plan.arguments.size(); ++i) {
    size_t bytes = static_cast<size_t>(plan.argumentTensor(i).bytes);
    argumentBuffers.push_back({at(argumentOffsets[i]), bytes});
    persistent += bytes;
  }
  argumentSet.assign(plan.arguments.size(), false);

  tensorPointers.assign(plan.tensors.size(), nullptr);
  constantBuffers.reserve(constantOffsets.size());
  for (const TensorInfo &t : plan.tensors) {
    switch (t.storage) {
    case StorageKind::Arena:
      tensorPointers[t.id] = static_cast<char *>(arena.data) + t.offset;
      break;
    case StorageKind::Argument:
      tensorPointers[t.id] = argumentBuffers[t.argument].data;
      break;
    case StorageKind::Constant: {
      DeviceBuffer buffer{at(constantOffsets[constantBuffers.size()]),
                          t.constantData.size()};
      constantBuffers.push_back(buffer);
      persistent += buffer.bytes;
      backendPtr->copyToDevice(buffer.data, t.constantData.data(),
                               t.constantData.size());
      tensorPointers[t.id] = buffer.data;
      break;
    }
    case StorageKind::View:
      break; // Resolved below through the root.
    }
  }
  for (const TensorInfo &t : plan.tensors)
    if (t.storage == StorageKind::View)
      tensorPointers[t.id] = tensorPointers[t.root];

  stepInputs.resize(plan.steps.size());
  stepOutputs.resize(plan.steps.size());
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    for (int64_t id : plan.steps[s].inputs)
      stepInputs[s].push_back(ref(id));
    for (int64_t id : plan.steps[s].outputs)
      stepOutputs[s].push_back(ref(id));
  }
  stepWorkspaces.assign(plan.steps.size(), Workspace{});
  for (size_t s = 0; s < plan.steps.size(); ++s)
    if (const Step &step = plan.steps[s]; step.workspaceBytes > 0)
      stepWorkspaces[s] = {static_cast<char *>(arena.data) +
                               step.workspaceOffset,
                           static_cast<size_t>(step.workspaceBytes)};
  backendPtr->prepare(plan, stepInputs, stepOutputs, stepWorkspaces);
}

void Executor::release() noexcept {
  if (!backendPtr)
    return;
  constantBuffers.clear();
  argumentBuffers.clear();
  arena = {};
  if (block.data)
    backendPtr->deallocate(block.data, block.bytes);
  block = {};
}

TensorRef Executor::ref(int64_t id) const {
  const TensorInfo &t = planPtr->tensors[id];
  TensorRef r;
  r.data = tensorPointers[id];
  r.dtype = t.dtype;
  r.shape = &t.shape;
  r.numElements = t.numElements;
  return r;
}

void *Executor::tensorData(int64_t id) const {
  if (id < 0 || id >= static_cast<int64_t>(tensorPointers.size()))
    throw Error(ErrorCode::InvalidArgument,
                concat("executor: ", id, " is not a tensor id"));
  return tensorPointers[id];
}

void Executor::checkArgument(size_t index, DType dtype, const Shape &shape,
                             const void *data, size_t bytes) const {
  const Plan &plan = *planPtr;
  if (index >= plan.arguments.size())
    throw Error(ErrorCode::InvalidArgument,
                concat("executor: argument index ", index,
                       " out of range (the plan has ", plan.arguments.size(),
                       " arguments)"));
  const TensorInfo &t = plan.argumentTensor(index);
  if (dtype != t.dtype || shape != t.shape)
    throw Error(ErrorCode::InvalidArgument,
                concat("executor: ", describeArgument(plan, index), " expects ",
                       describeType(t.dtype, t.shape), ", got ",
                       describeType(dtype, shape)));
  if (bytes != t.bytes)
    throw Error(ErrorCode::InvalidArgument,
                concat("executor: ", describeArgument(plan, index), " needs ",
                       t.bytes, " bytes, got a buffer of ", bytes));
  if (!data)
    throw Error(ErrorCode::InvalidArgument,
                concat("executor: ", describeArgument(plan, index),
                       ": data is a null pointer"));
}

void Executor::setArgument(size_t index, DType dtype, const Shape &shape,
                           const void *data, size_t bytes) {
  checkArgument(index, dtype, shape, data, bytes);
  backendPtr->copyToDevice(argumentBuffers[index].data, data, bytes);
  argumentSet[index] = true;
}

void Executor::setArgument(std::string_view name, DType dtype,
                           const Shape &shape, const void *data, size_t bytes) {
  int64_t index = planPtr->findArgument(name);
  if (index < 0)
    throw Error(
        ErrorCode::InvalidArgument,
        concat("executor: the plan has no argument named '", name, "'"));
  setArgument(static_cast<size_t>(index), dtype, shape, data, bytes);
}

void Executor::getArgument(size_t index, void *data, size_t bytes) const {
  const Plan &plan = *planPtr;
  if (index >= plan.arguments.size())
    throw Error(ErrorCode::InvalidArgument,
                concat("executor: argument index ", index,
                       " out of range (the plan has ", plan.arguments.size(),
                       " arguments)"));
  const TensorInfo &t = plan.argumentTensor(index);
  if (bytes != t.bytes)
    throw Error(ErrorCode::InvalidArgument,
                concat("executor: ", describeArgument(plan, index), " has ",
                       t.bytes, " bytes, got a buffer of ", bytes));
  if (!data)
    throw Error(ErrorCode::InvalidArgument,
                "executor: destination is a null pointer");
  if (!argumentSet[index])
    throw Error(ErrorCode::InvalidArgument,
                concat("executor: ", describeArgument(plan, index),
                       " has not been set"));
  backendPtr->copyToHost(data, argumentBuffers[index].data, bytes);
}

bool Executor::isArgumentSet(size_t index) const {
  return index < argumentSet.size() && argumentSet[index];
}

void Executor::prefetchArgument(size_t index, DType dtype, const Shape &shape,
                                const void *data, size_t bytes) {
  checkArgument(index, dtype, shape, data, bytes);
  if (backendPtr->stageToDevice(index, argumentBuffers[index].data, data,
                                bytes)) {
    staged.push_back(index);
    return;
  }
  const auto *p = static_cast<const uint8_t *>(data);
  prefetched.emplace_back(index, std::vector<uint8_t>(p, p + bytes));
}

void Executor::run(uint64_t stepCounter) {
  start(stepCounter);
  finish();
}

void Executor::finish() {
  if (!started)
    throw Error(ErrorCode::InvalidArgument,
                "executor: finish() without a start()");
  started = false;
  backendPtr->synchronize();
  resultsFresh = true;
}

void Executor::setCollectives(Collectives *c) {
  if (c && planRanks && c->size() != planRanks)
    throw Error(ErrorCode::Collective,
                concat("executor: the plan averages gradients over ", planRanks,
                       " ranks but the job has ", c->size()));
  // The collectives move the tensors where the backend keeps them: host
  // memory (MPI) for the CPU, device memory (NCCL) for CUDA.
  if (c && planRanks && c->onDevice() != (backendPtr->name() != "cpu"))
    throw Error(ErrorCode::BackendUnavailable,
                concat("executor: the ", backendPtr->name(),
                       " backend keeps its tensors in ",
                       backendPtr->name() == "cpu" ? "host" : "device",
                       " memory but the collectives (", c->describe(),
                       ") move ", c->onDevice() ? "device" : "host",
                       " memory; data-parallel steps on CUDA need NCCL "
                       "(MemOptRuntimeNccl)"));
  if (c && planRank >= 0 && c->rank() != planRank)
    throw Error(ErrorCode::Collective,
                concat("executor: the plan is rank ", planRank,
                       "'s step (reduce_scatter, all_gather), run on rank ",
                       c->rank()));
  collectives = c;
}

void Executor::start(uint64_t stepCounter) {
  const Plan &plan = *planPtr;
  if (started)
    throw Error(ErrorCode::InvalidArgument,
                "executor: start() while a step is in flight (call finish())");
  if (planRanks && !collectives)
    throw Error(ErrorCode::Collective,
                concat("executor: the plan averages gradients over ", planRanks,
                       " ranks (memopt.all_reduce); run it on that many "
                       "ranks (mpirun -np ",
                       planRanks, " memopt-run --ranks=", planRanks, ")"));
  // Prefetched values become the arguments' now, before any of the step's
  // work.
  backendPtr->commitStaged();
  for (size_t index : staged)
    argumentSet[index] = true;
  staged.clear();
  for (auto &[index, bytes] : prefetched) {
    backendPtr->copyToDevice(argumentBuffers[index].data, bytes.data(),
                             bytes.size());
    argumentSet[index] = true;
  }
  prefetched.clear();
  for (size_t i = 0; i < plan.arguments.size(); ++i)
    if (!argumentSet[i])
      throw Error(
          ErrorCode::InvalidArgument,
          concat("executor: ", describeArgument(plan, i), " has not been set"));
  resultsFresh = false;
  const uint64_t rank =
      collectives ? static_cast<uint64_t>(collectives->rank()) : 0;
  // Overlapped collectives: at most one in flight, on a thread of its own,
  // so the ranks still issue them in the plan's order.
  const bool overlap = overlapCollectives && collectives &&
                       collectives->overlappable() && !stepObserver;
  if (overlap && collectiveWaitBefore.empty())
    computeCollectiveWaits();
  std::future<void> inFlight;
  size_t inFlightStep = 0;
  auto waitForCollective = [&]() {
    if (!inFlight.valid())
      return;
    try {
      inFlight.get();
    } catch (const Error &e) {
      throw Error(e.code(),
                  concat(plan.describeStep(inFlightStep), ": ", e.what()));
    } catch (const std::exception &e) {
      throw Error(ErrorCode::Internal, concat(plan.describeStep(inFlightStep),
                                              ": internal error: ", e.what()));
    }
  };
  stepsBesideCollectives = 0;
  auto issueStep = [&](size_t s) {
    if (inFlight.valid() && s >= collectiveWaitBefore[inFlightStep])
      waitForCollective();
    stepsBesideCollectives += inFlight.valid();
    StepContext context;
    context.stepCounter = stepCounter;
    context.stepIndex = s;
    context.rank = rank;
    context.workspace = stepWorkspaces[s];
    auto start = std::chrono::steady_clock::now();
    try {
      if (isCollective(plan.steps[s])) {
        // A collective reads what the kernels before it wrote: on a device,
        // their stream must have finished (the collective waits for its
        // own).
        backendPtr->synchronize();
        if (overlap) {
          inFlightStep = s;
          inFlight =
              std::async(std::launch::async, [this, s] { runCollective(s); });
        } else {
          runCollective(s);
        }
      } else {
        backendPtr->execute(plan.steps[s], stepInputs[s], stepOutputs[s],
                            context);
      }
      if (stepObserver) {
        backendPtr->synchronize();
        stepObserver(s, std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - start)
                            .count());
      }
    } catch (const Error &e) {
      throw Error(e.code(), concat(plan.describeStep(s), ": ", e.what()));
    } catch (const std::bad_alloc &) {
      throw Error(ErrorCode::OutOfMemory,
                  concat(plan.describeStep(s), ": out of memory"));
    } catch (const std::exception &e) {
      throw Error(ErrorCode::Internal,
                  concat(plan.describeStep(s), ": internal error: ", e.what()));
    }
  };
  try {
    if (stepObserver || planRanks) {
      // Timing each kernel needs them one by one; a collective waits for
      // the backend's stream, which a captured CUDA graph cannot do.
      for (size_t s = 0; s < plan.steps.size(); ++s)
        issueStep(s);
    } else {
      backendPtr->runStep([&]() {
        for (size_t s = 0; s < plan.steps.size(); ++s)
          issueStep(s);
      });
    }
    waitForCollective();
  } catch (...) {
    // A step failed while a collective was in flight: it still reads and
    // writes the arena, so it ends before the error goes on.
    if (inFlight.valid())
      inFlight.wait();
    throw;
  }
  started = true;
}

void Executor::runCollective(size_t s) {
  const Step &step = planPtr->steps[s];
  switch (step.kernel) {
  case KernelKind::AllReduce:
    (std::get<AllReduceAttrs>(step.attrs).sum ? allReduceSum : allReduceMean)(
        *collectives, stepInputs[s], stepOutputs[s], stepWorkspaces[s]);
    return;
  case KernelKind::ReduceScatter:
    reduceScatterMean(*collectives, stepInputs[s],
                      std::get<ReduceScatterAttrs>(step.attrs).owners,
                      stepOutputs[s], stepWorkspaces[s]);
    return;
  case KernelKind::Broadcast:
    broadcastFrom(*collectives,
                  stepInputs[s].empty() ? nullptr : &stepInputs[s][0],
                  stepOutputs[s][0], std::get<BroadcastAttrs>(step.attrs).root);
    return;
  case KernelKind::AllGather:
    allGatherRows(*collectives, stepInputs[s][0], stepOutputs[s][0]);
    return;
  default:
    throw Error(ErrorCode::Internal,
                concat("executor: '", kernelName(step.kernel),
                       "' is not a collective"));
  }
}

namespace {

/// A byte range of memory a step touches.
struct Bytes {
  uintptr_t begin, end;
  bool overlaps(const Bytes &other) const {
    return begin < other.end && other.begin < end;
  }
};

void addRange(std::vector<Bytes> &ranges, const void *data, size_t bytes) {
  if (data && bytes)
    ranges.push_back({reinterpret_cast<uintptr_t>(data),
                      reinterpret_cast<uintptr_t>(data) + bytes});
}

bool anyOverlap(const std::vector<Bytes> &a, const std::vector<Bytes> &b) {
  for (const Bytes &x : a)
    for (const Bytes &y : b)
      if (x.overlaps(y))
        return true;
  return false;
}

} // namespace

void Executor::computeCollectiveWaits() {
  const Plan &plan = *planPtr;
  const size_t n = plan.steps.size();
  std::vector<std::vector<Bytes>> reads(n), writes(n);
  for (size_t s = 0; s < n; ++s) {
    for (const TensorRef &t : stepInputs[s])
      addRange(reads[s], t.data, t.bytes());
    for (const TensorRef &t : stepOutputs[s])
      addRange(writes[s], t.data, t.bytes());
    addRange(writes[s], stepWorkspaces[s].data, stepWorkspaces[s].bytes);
  }
  collectiveWaitBefore.assign(n, n);
  for (size_t c = 0; c < n; ++c) {
    if (!isCollective(plan.steps[c]))
      continue;
    // What the collective reads and writes must stay as it is until it
    // is done: nothing after it may write there, nor read what it writes.
    std::vector<Bytes> busy = reads[c];
    busy.insert(busy.end(), writes[c].begin(), writes[c].end());
    for (size_t s = c + 1; s < n; ++s)
      if (isCollective(plan.steps[s]) || anyOverlap(reads[s], writes[c]) ||
          anyOverlap(writes[s], busy)) {
        collectiveWaitBefore[c] = s;
        break;
      }
  }
}

void Executor::getResult(size_t index, void *data, size_t bytes) const {
  const Plan &plan = *planPtr;
  if (index >= plan.results.size())
    throw Error(ErrorCode::InvalidArgument,
                concat("executor: result index ", index,
                       " out of range (the plan has ", plan.results.size(),
                       " results)"));
  const TensorInfo &t = plan.resultTensor(index);
  if (bytes != t.bytes)
    throw Error(ErrorCode::InvalidArgument,
                concat("executor: result ", index, " (",
                       describeType(t.dtype, t.shape), ") has ", t.bytes,
                       " bytes, got a buffer of ", bytes));
  if (!data)
    throw Error(ErrorCode::InvalidArgument,
                "executor: destination is a null pointer");
  backendPtr->copyToHost(data, tensorPointers[t.id], bytes);
}

void Executor::copyResultToArgument(size_t result, size_t argument) {
  const Plan &plan = *planPtr;
  if (result >= plan.results.size())
    throw Error(ErrorCode::InvalidArgument,
                concat("executor: result index ", result, " out of range"));
  if (argument >= plan.arguments.size())
    throw Error(ErrorCode::InvalidArgument,
                concat("executor: argument index ", argument, " out of range"));
  const TensorInfo &from = plan.resultTensor(result);
  const TensorInfo &to = plan.argumentTensor(argument);
  if (from.dtype != to.dtype || from.shape != to.shape)
    throw Error(ErrorCode::InvalidArgument,
                concat("executor: result ", result, " (",
                       describeType(from.dtype, from.shape),
                       ") does not match ", describeArgument(plan, argument),
                       " (", describeType(to.dtype, to.shape), ")"));
  if (tensorPointers[from.id] != argumentBuffers[argument].data)
    backendPtr->copyOnDevice(argumentBuffers[argument].data,
                             tensorPointers[from.id], from.bytes);
  argumentSet[argument] = true;
}

void Executor::applyUpdates() {
  const Plan &plan = *planPtr;
  if (plan.updates.empty())
    return;
  if (!resultsFresh)
    throw Error(ErrorCode::InvalidArgument,
                "executor: applyUpdates needs a successful run() since the "
                "executor was created or the updates were last applied");
  // A source is a device pointer to `bytes` bytes. Arena and constant
  // sources are never written here; a source inside an argument buffer that
  // another update overwrites is first copied aside, so every update reads
  // the values the step produced.
  std::vector<const void *> sources;
  std::vector<DeviceBuffer> staged;
  auto releaseStaged = [&]() noexcept {
    for (DeviceBuffer &b : staged)
      backendPtr->deallocate(b.data, b.bytes);
  };
  try {
    for (const UpdateInfo &u : plan.updates) {
      const TensorInfo &from = plan.resultTensor(u.result);
      const void *src = tensorPointers[from.id];
      const TensorInfo &root = plan.tensors[from.root];
      bool clobbered = false;
      if (root.storage == StorageKind::Argument)
        for (const UpdateInfo &other : plan.updates)
          if (other.argument == root.argument && &other != &u)
            clobbered = true;
      if (clobbered) {
        staged.push_back(allocateBuffer(static_cast<size_t>(from.bytes)));
        backendPtr->copyOnDevice(staged.back().data, src, from.bytes);
        src = staged.back().data;
      }
      sources.push_back(src);
    }
    for (size_t i = 0; i < plan.updates.size(); ++i) {
      const UpdateInfo &u = plan.updates[i];
      void *dst = argumentBuffers[u.argument].data;
      if (sources[i] != dst)
        backendPtr->copyOnDevice(dst, sources[i],
                                 plan.resultTensor(u.result).bytes);
      argumentSet[u.argument] = true;
    }
    backendPtr->synchronize();
  } catch (...) {
    releaseStaged();
    throw;
  }
  releaseStaged();
  resultsFresh = false;
}

} // namespace memopt::runtime
