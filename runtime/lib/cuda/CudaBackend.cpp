//===- CudaBackend.cpp - the CUDA backend ---------------------------------===//
//
// Device memory, one stream with cuBLAS and cuDNN bound to it, and a table
// from kernel kind to kernel (the kernels are in the .cu files and Dnn*.cpp).
//
// Memory is what the plan says: the executor makes one allocation for the
// arena, arguments and constants, and each step that needs scratch memory
// (convolutions, multi-block reductions) gets the workspace the compiler
// reserved for it in the arena. prepare() chooses every convolution's
// algorithm once, by timing, among those whose workspace fits the step's
// (as torch.backends.cudnn.benchmark does, but once); cuBLAS runs without
// a workspace. Nothing is allocated while steps run.
//
// Kernels never synchronise with the host. Data errors found on the device
// (an id or label out of range) set a flag that synchronize() checks once,
// when the step's work is done, and report with the step's position.
//
// Input batches for the next step (Executor::prefetchArgument) are copied
// into pinned host memory and from there, on a second stream, into a device
// staging buffer per argument while the current step runs; the next step
// first waits for that copy and moves the batch into the argument's buffer
// on the device, so a captured graph keeps its pointers.
//
// The first run of a plan is captured into a CUDA graph and later runs
// replay it (one launch per step instead of one per kernel), since every
// tensor stays at its address. Plans with dropout (on its own or in fused
// attention) are the exception: its mask depends on the step counter, a
// kernel argument the graph would freeze, so they run kernel by kernel, as does
// a plan whose capture failed (a library call a graph cannot record).
// MEMOPT_CUDA_GRAPHS=0 turns graphs off.
//
//===----------------------------------------------------------------------===//

#include "CudaKernels.h"

#include "memopt/runtime/EnvFlag.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

namespace memopt::runtime {

namespace cuda {

void check(cudaError_t status, const char *what) {
  if (status != cudaSuccess)
    throw Error(
        ErrorCode::KernelFailure,
        runtime::concat("cuda: ", what, ": ", cudaGetErrorString(status)));
}

void check(cublasStatus_t status, const char *what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw Error(
        ErrorCode::KernelFailure,
        runtime::concat("cublas: ", what, ": ", cublasGetStatusString(status)));
}

void check(cudnnStatus_t status, const char *what) {
  if (status != CUDNN_STATUS_SUCCESS)
    throw Error(
        ErrorCode::KernelFailure,
        runtime::concat("cudnn: ", what, ": ", cudnnGetErrorString(status)));
}

void checkLaunch(const char *kernel) { check(cudaGetLastError(), kernel); }

void copyAsync(const KernelCall &call, void *dst, const void *src,
               size_t bytes) {
  if (dst == src || bytes == 0)
    return;
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice,
                        call.cuda.stream),
        "device copy");
}

DeviceTensor deviceTensor(const TensorRef &t) {
  DeviceTensor d;
  d.data = t.data;
  d.dtype = t.dtype;
  if (t.shape->size() > static_cast<size_t>(kMaxRank))
    throw Error(ErrorCode::KernelFailure,
                runtime::concat("cuda: tensors of rank ", t.shape->size(),
                                " are not supported (at most ", kMaxRank, ")"));
  d.rank = static_cast<int>(t.shape->size());
  for (int i = 0; i < d.rank; ++i)
    d.dims[i] = (*t.shape)[i];
  d.numElements = t.numElements;
  return d;
}

} // namespace cuda

namespace {

using cuda::check;
using cuda::KernelCall;

using KernelFn = void (*)(const KernelCall &);

KernelFn lookup(KernelKind kind) {
  switch (kind) {
  case KernelKind::Conv2D:
    return cuda::conv2d;
  case KernelKind::Linear:
    return cuda::linear;
  case KernelKind::MatMul:
    return cuda::matmul;
  case KernelKind::Relu:
  case KernelKind::Gelu:
  case KernelKind::Sigmoid:
  case KernelKind::Tanh:
  case KernelKind::Silu:
  case KernelKind::Exp:
  case KernelKind::Log:
  case KernelKind::Sqrt:
  case KernelKind::Abs:
  case KernelKind::LeakyRelu:
  case KernelKind::Elu:
  case KernelKind::Clamp:
    return cuda::unary;
  case KernelKind::Compare:
    return cuda::compare;
  case KernelKind::Add:
  case KernelKind::Sub:
  case KernelKind::Mul:
  case KernelKind::Div:
  case KernelKind::Maximum:
  case KernelKind::Minimum:
  case KernelKind::MaximumWeight:
    return cuda::binary;
  case KernelKind::ReduceMax:
  case KernelKind::ReduceMin:
    return cuda::reduceExtremum;
  case KernelKind::ReduceExtremumBackward:
    return cuda::reduceExtremumBackward;
  case KernelKind::BatchNorm:
    return cuda::batchNorm;
  case KernelKind::BatchNormInference:
    return cuda::batchNormInference;
  case KernelKind::LayerNorm:
    return cuda::layerNorm;
  case KernelKind::RmsNorm:
    return cuda::rmsNorm;
  case KernelKind::MaxPool2D:
    return cuda::maxPool2D;
  case KernelKind::AvgPool2D:
    return cuda::avgPool2D;
  case KernelKind::GlobalAvgPool2D:
    return cuda::globalAvgPool2D;
  case KernelKind::Softmax:
    return cuda::softmax;
  case KernelKind::Dropout:
    return cuda::dropout;
  case KernelKind::Reshape:
    return cuda::reshape;
  case KernelKind::Transpose:
    return cuda::transpose;
  case KernelKind::Slice:
    return cuda::slice;
  case KernelKind::Concat:
    return cuda::concat;
  case KernelKind::UpsampleNearest2D:
    return cuda::upsampleNearest2D;
  case KernelKind::Embedding:
    return cuda::embedding;
  case KernelKind::CrossEntropy:
    return cuda::crossEntropy;
  case KernelKind::MseLoss:
    return cuda::mseLoss;
  case KernelKind::SumTo:
    return cuda::sumTo;
  case KernelKind::Conv2DBackwardInput:
    return cuda::conv2dBackwardInput;
  case KernelKind::Conv2DBackwardWeight:
    return cuda::conv2dBackwardWeight;
  case KernelKind::ReluBackward:
  case KernelKind::GeluBackward:
  case KernelKind::SigmoidBackward:
  case KernelKind::TanhBackward:
  case KernelKind::SiluBackward:
  case KernelKind::ExpBackward:
  case KernelKind::LogBackward:
  case KernelKind::SqrtBackward:
  case KernelKind::AbsBackward:
  case KernelKind::LeakyReluBackward:
  case KernelKind::EluBackward:
  case KernelKind::ClampBackward:
    return cuda::activationBackward;
  case KernelKind::BatchNormBackward:
    return cuda::batchNormBackward;
  case KernelKind::LayerNormBackward:
    return cuda::layerNormBackward;
  case KernelKind::RmsNormBackward:
    return cuda::rmsNormBackward;
  case KernelKind::MaxPool2DBackward:
    return cuda::maxPool2DBackward;
  case KernelKind::AvgPool2DBackward:
    return cuda::avgPool2DBackward;
  case KernelKind::GlobalAvgPool2DBackward:
    return cuda::globalAvgPool2DBackward;
  case KernelKind::SoftmaxBackward:
    return cuda::softmaxBackward;
  case KernelKind::SliceBackward:
    return cuda::sliceBackward;
  case KernelKind::UpsampleNearest2DBackward:
    return cuda::upsampleNearest2DBackward;
  case KernelKind::EmbeddingBackward:
    return cuda::embeddingBackward;
  case KernelKind::CrossEntropyBackward:
    return cuda::crossEntropyBackward;
  case KernelKind::MseLossBackward:
    return cuda::mseLossBackward;
  case KernelKind::BatchNormAct:
    return cuda::batchNormAct;
  case KernelKind::BatchNormActBackward:
    return cuda::batchNormActBackward;
  case KernelKind::Attention:
    return cuda::attention;
  case KernelKind::AttentionBackward:
    return cuda::attentionBackward;
  case KernelKind::LinearCrossEntropy:
    return cuda::linearCrossEntropy;
  case KernelKind::LinearCrossEntropyBackward:
    return cuda::linearCrossEntropyBackward;
  case KernelKind::LinearCrossEntropyWithGrad:
    return cuda::linearCrossEntropyWithGrad;
  case KernelKind::SgdUpdate:
    return cuda::sgdUpdate;
  case KernelKind::SgdMomentumUpdate:
    return cuda::sgdMomentumUpdate;
  case KernelKind::AdamUpdate:
    return cuda::adamUpdate;
  case KernelKind::Adam8bitUpdate:
    return cuda::adam8bitUpdate;
  case KernelKind::AdafactorUpdate:
    return cuda::adafactorUpdate;
  case KernelKind::ClipCoefficient:
    return cuda::clipCoefficient;
  case KernelKind::SquareSum:
    return cuda::squareSum;
  case KernelKind::Cast:
    return cuda::cast;
  case KernelKind::FoundInf:
    return cuda::foundInf;
  case KernelKind::Unscale:
    return cuda::unscale;
  case KernelKind::UpdateLossScale:
    return cuda::updateLossScale;
  case KernelKind::Select:
    return cuda::select;
  case KernelKind::AllReduce:
  case KernelKind::ReduceScatter:
  case KernelKind::Broadcast:
  case KernelKind::AllGather:
    // The executor runs collectives (Executor::setCollectives).
    break;
  }
  throw Error(ErrorCode::Internal, "cuda: unknown kernel kind");
}

class CudaBackend final : public Backend {
public:
  CudaBackend() {
    int count = 0;
    cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess || count == 0)
      throw Error(ErrorCode::BackendUnavailable,
                  runtime::concat("device 'cuda': no usable GPU (",
                                  status != cudaSuccess
                                      ? cudaGetErrorString(status)
                                      : "no device",
                                  ")"));
    // The calling thread's current device (0 unless the program chose
    // another: one GPU per rank, NCCL's collectives set it first).
    int current = 0;
    check(cudaGetDevice(&current), "cudaGetDevice");
    check(cudaSetDevice(current), "cudaSetDevice");
    try {
      check(cudaStreamCreateWithFlags(&ctx.stream, cudaStreamNonBlocking),
            "cudaStreamCreate");
      check(cublasCreate(&ctx.cublas), "cublasCreate");
      check(cublasSetStream(ctx.cublas, ctx.stream), "cublasSetStream");
      // f16/bf16 GEMMs accumulate in f32 throughout, split-K reductions
      // included, as the CPU backend does.
      check(cublasSetMathMode(
                ctx.cublas,
                static_cast<cublasMath_t>(
                    CUBLAS_DEFAULT_MATH |
                    CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)),
            "cublasSetMathMode");
      ctx.tf32 = envFlag("MEMOPT_CUDA_TF32", false);
      check(cudnnCreate(&ctx.cudnn), "cudnnCreate");
      check(cudnnSetStream(ctx.cudnn, ctx.stream), "cudnnSetStream");
      check(cudaMalloc(reinterpret_cast<void **>(&ctx.errorFlag), sizeof(int)),
            "cudaMalloc");
      check(cudaMemsetAsync(ctx.errorFlag, 0, sizeof(int), ctx.stream),
            "cudaMemset");
      cudaDeviceProp prop{};
      check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
      deviceName = prop.name;
    } catch (...) {
      release();
      throw;
    }
  }

  ~CudaBackend() override { release(); }

  std::string_view name() const override { return "cuda"; }

  void *allocate(size_t bytes, size_t alignment) override {
    if (bytes == 0)
      return nullptr;
    // cudaMalloc returns 256-byte aligned memory.
    if (alignment > 256)
      throw Error(ErrorCode::OutOfMemory,
                  runtime::concat("cuda: alignment ", alignment,
                                  " is above cudaMalloc's 256 bytes"));
    void *p = nullptr;
    cudaError_t status = cudaMalloc(&p, bytes);
    if (status != cudaSuccess) {
      cudaGetLastError(); // Clear the sticky error of a failed allocation.
      throw Error(ErrorCode::OutOfMemory,
                  runtime::concat("cuda: cannot allocate ", bytes,
                                  " bytes: ", cudaGetErrorString(status)));
    }
    stats.bytesInUse += bytes;
    stats.peakBytes = std::max(stats.peakBytes, stats.bytesInUse);
    return p;
  }

  void deallocate(void *ptr, size_t bytes) noexcept override {
    if (!ptr)
      return;
    cudaFree(ptr);
    stats.bytesInUse -= bytes;
  }

  void copyToDevice(void *dst, const void *src, size_t bytes) override {
    if (bytes)
      check(
          cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, ctx.stream),
          "copy to device");
    synchronize();
  }
  void copyToHost(void *dst, const void *src, size_t bytes) override {
    if (bytes)
      check(
          cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, ctx.stream),
          "copy to host");
    synchronize();
  }
  void copyOnDevice(void *dst, const void *src, size_t bytes) override {
    if (bytes && dst != src)
      check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice,
                            ctx.stream),
            "device copy");
  }

  void prepare(const Plan &plan,
               const std::vector<std::vector<TensorRef>> &stepInputs,
               const std::vector<std::vector<TensorRef>> &stepOutputs,
               const std::vector<Workspace> &stepWorkspaces) override {
    // Tensors and workspaces start at multiples of the plan's alignment; a
    // device load of an f64 (or a double partial sum) needs 8 bytes, vector
    // loads 16.
    if (plan.alignment < 16)
      throw Error(ErrorCode::InvalidArgument,
                  runtime::concat("cuda: the plan's alignment is ",
                                  plan.alignment,
                                  " bytes; the GPU needs at least 16 "
                                  "(compile with alignment=16 or more)"));
    // Each convolution's algorithms are timed in its own planned workspace
    // (its contents mean nothing before the step), among those that fit it.
    usesStepCounter = false;
    for (size_t s = 0; s < plan.steps.size(); ++s) {
      const Step &step = plan.steps[s];
      usesStepCounter |= step.readsStepCounter();
      useWorkspace(stepWorkspaces[s]);
      cuda::tuneStep(ctx, step, stepInputs[s], stepOutputs[s],
                     stepWorkspaces[s].bytes);
    }
    useWorkspace({});
    captureFailed = false;
    // cuBLAS runs without a workspace (no GEMM step reserves one), so it
    // never allocates one of its own while a step is captured into a graph.
    check(cublasSetWorkspace(ctx.cublas, nullptr, 0), "cublasSetWorkspace");
    resetGraph();
    synchronize();
  }

  bool stageToDevice(size_t slot, void *dst, const void *src,
                     size_t bytes) override {
    Staging &st = staging[slot];
    if (st.bytes != bytes) {
      releaseStaging(st);
      check(cudaHostAlloc(&st.host, bytes, cudaHostAllocDefault),
            "cudaHostAlloc");
      st.device = allocate(bytes, 256);
      st.bytes = bytes;
      check(cudaEventCreateWithFlags(&st.copied, cudaEventDisableTiming),
            "cudaEventCreate");
      check(cudaEventCreateWithFlags(&st.committed, cudaEventDisableTiming),
            "cudaEventCreate");
      if (!copyStream)
        check(cudaStreamCreateWithFlags(&copyStream, cudaStreamNonBlocking),
              "cudaStreamCreate");
    } else {
      // The pinned buffer is free once its last copy is done.
      check(cudaEventSynchronize(st.copied), "staging copy");
    }
    std::memcpy(st.host, src, bytes);
    // The staging buffer is free once the last commit moved it out.
    check(cudaStreamWaitEvent(copyStream, st.committed, 0), "staging wait");
    check(cudaMemcpyAsync(st.device, st.host, bytes, cudaMemcpyHostToDevice,
                          copyStream),
          "staging copy");
    check(cudaEventRecord(st.copied, copyStream), "cudaEventRecord");
    st.target = dst;
    st.pending = true;
    return true;
  }

  void commitStaged() override {
    for (auto &[slot, st] : staging) {
      if (!st.pending)
        continue;
      check(cudaStreamWaitEvent(ctx.stream, st.copied, 0), "staging wait");
      check(cudaMemcpyAsync(st.target, st.device, st.bytes,
                            cudaMemcpyDeviceToDevice, ctx.stream),
            "staging commit");
      check(cudaEventRecord(st.committed, ctx.stream), "cudaEventRecord");
      st.pending = false;
    }
  }

  void runStep(const std::function<void()> &issue) override {
    if (!graphsEnabled || usesStepCounter || captureFailed) {
      issue();
      return;
    }
    if (graphExec) {
      check(cudaGraphLaunch(graphExec, ctx.stream), "cudaGraphLaunch");
      return;
    }
    cudaGraph_t graph = nullptr;
    check(cudaStreamBeginCapture(ctx.stream, cudaStreamCaptureModeThreadLocal),
          "cudaStreamBeginCapture");
    bool issued = false;
    try {
      issue();
      issued = true;
    } catch (...) {
      // Ends the capture below; the step then runs eagerly, where a real
      // error is thrown again with nothing captured in the way.
    }
    cudaError_t status = cudaStreamEndCapture(ctx.stream, &graph);
    if (issued && status == cudaSuccess)
      status = cudaGraphInstantiate(&graphExec, graph, 0);
    if (graph)
      cudaGraphDestroy(graph);
    if (!issued || status != cudaSuccess) {
      // Nothing of the capture ran. A call the capture could not record
      // (or a failure it hid): run this plan kernel by kernel.
      cudaGetLastError();
      graphExec = nullptr;
      captureFailed = true;
      issue();
      return;
    }
    check(cudaGraphLaunch(graphExec, ctx.stream), "cudaGraphLaunch");
  }

  void execute(const Step &step, const std::vector<TensorRef> &inputs,
               const std::vector<TensorRef> &outputs,
               const StepContext &context) override {
    useWorkspace(context.workspace);
    lookup(step.kernel)(KernelCall{step, inputs, outputs, context, ctx});
  }

  void synchronize() override {
    check(cudaStreamSynchronize(ctx.stream), "step");
    int flag = 0;
    check(cudaMemcpy(&flag, ctx.errorFlag, sizeof flag, cudaMemcpyDeviceToHost),
          "error flag");
    if (flag != 0) {
      // On the step's stream: the next step's kernels must not run before
      // the flag is clear (the stream does not wait for the legacy one).
      check(cudaMemsetAsync(ctx.errorFlag, 0, sizeof(int), ctx.stream),
            "cudaMemset");
      throw Error(
          ErrorCode::KernelFailure,
          runtime::concat("cuda: step #", flag - 1,
                          " read an id or label out of range (or an invalid "
                          "step count); its outputs are not valid"));
    }
  }

  MemoryStats memoryStats() const override { return stats; }

  std::optional<uint64_t> deviceBytesInUse() const override {
    size_t free = 0, total = 0;
    if (cudaMemGetInfo(&free, &total) != cudaSuccess)
      return std::nullopt;
    return static_cast<uint64_t>(total - free);
  }

private:
  /// Points the kernels at the running step's workspace.
  void useWorkspace(const Workspace &workspace) {
    ctx.workspace = workspace.data;
    ctx.workspaceBytes = workspace.bytes;
  }

  void resetGraph() noexcept {
    if (graphExec)
      cudaGraphExecDestroy(graphExec);
    graphExec = nullptr;
  }

  /// Pinned host memory and a device buffer that stage one argument.
  struct Staging {
    void *host = nullptr, *device = nullptr, *target = nullptr;
    size_t bytes = 0;
    cudaEvent_t copied = nullptr, committed = nullptr;
    bool pending = false;
  };

  void releaseStaging(Staging &st) noexcept {
    if (st.copied)
      cudaEventSynchronize(st.copied);
    if (st.host)
      cudaFreeHost(st.host);
    if (st.device)
      deallocate(st.device, st.bytes);
    if (st.copied)
      cudaEventDestroy(st.copied);
    if (st.committed)
      cudaEventDestroy(st.committed);
    st = Staging();
  }

  void release() noexcept {
    if (ctx.stream)
      cudaStreamSynchronize(ctx.stream);
    for (auto &[slot, st] : staging)
      releaseStaging(st);
    staging.clear();
    if (copyStream)
      cudaStreamDestroy(copyStream);
    copyStream = nullptr;
    resetGraph();
    if (ctx.errorFlag)
      cudaFree(ctx.errorFlag);
    if (ctx.cudnn)
      cudnnDestroy(ctx.cudnn);
    if (ctx.cublas)
      cublasDestroy(ctx.cublas);
    if (ctx.stream)
      cudaStreamDestroy(ctx.stream);
    ctx = cuda::CudaContext();
  }

  cuda::CudaContext ctx;
  MemoryStats stats;
  /// Per argument: the staging of prefetched input batches.
  std::map<size_t, Staging> staging;
  /// The stream input batches are copied on.
  cudaStream_t copyStream = nullptr;
  /// The captured step, once the first run has been captured.
  cudaGraphExec_t graphExec = nullptr;
  /// MEMOPT_CUDA_GRAPHS=0 turns graph capture off (read once).
  bool graphsEnabled = envFlag("MEMOPT_CUDA_GRAPHS", true);
  /// Whether a kernel of the plan reads the step counter (dropout).
  bool usesStepCounter = false;
  /// The plan's capture failed once: it runs kernel by kernel.
  bool captureFailed = false;
  std::string deviceName;
};

} // namespace

std::unique_ptr<Backend> createCudaBackend() {
  return std::make_unique<CudaBackend>();
}

bool cudaDeviceAvailable() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

} // namespace memopt::runtime
