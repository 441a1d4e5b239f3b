//===- DnnConv.cpp - convolutions on cuDNN --------------------------------===//
//
// conv2d and its two gradients run cuDNN's legacy convolution API in NCHW
// (cross-correlation, groups, f32 compute; f64 tensors compute in f64).
// f32 convolutions use CUDNN_FMA_MATH: cuDNN's default math type lets
// Ampere and later GPUs compute f32 convolutions in TF32, whose 10-bit
// mantissa would put them far from the CPU reference (MEMOPT_CUDA_TF32=1
// allows it, as PyTorch's torch.backends.cudnn.allow_tf32 does by default).
// f16/bf16 use tensor cores (CUDNN_TENSOR_OP_MATH) with f32 accumulation, like
// the CPU backend, which widens them to f32.
//
// The convolution algorithm of each step is chosen once: tuneStep, at load
// time, times cuDNN's candidates on the step's own buffers and keeps the
// fastest one whose workspace fits the step's planned workspace; steps that
// were not tuned (or whose tuned algorithm needs more workspace than the
// step has) use the first of cuDNN's heuristic candidates that fits, and
// the zero-workspace algorithm as a last resort. The choices live in a
// process-wide cache keyed by the step's address and checked against the
// step's shapes and attributes, so a reused address cannot pick up another
// convolution's algorithm. No kernel allocates: cuDNN only gets the
// step's workspace, a slice of the arena the compiler reserved.
//
//===----------------------------------------------------------------------===//

#include "Bias.h"
#include "DnnCommon.h"

#include "memopt/runtime/EnvFlag.h"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace memopt::runtime::cuda {

namespace {

class FilterDesc {
public:
  FilterDesc() {
    check(cudnnCreateFilterDescriptor(&desc), "cudnnCreateFilterDescriptor");
  }
  ~FilterDesc() { cudnnDestroyFilterDescriptor(desc); }
  FilterDesc(const FilterDesc &) = delete;
  FilterDesc &operator=(const FilterDesc &) = delete;

  /// A K x C/groups x R x S weight.
  void set(const TensorRef &t) {
    toInt(t.numElements, "weight size");
    check(cudnnSetFilter4dDescriptor(
              desc, cudnnType(t.dtype), CUDNN_TENSOR_NCHW,
              toInt(t.dim(0), "dimension"), toInt(t.dim(1), "dimension"),
              toInt(t.dim(2), "dimension"), toInt(t.dim(3), "dimension")),
          "cudnnSetFilter4dDescriptor");
  }
  operator cudnnFilterDescriptor_t() const { return desc; }

private:
  cudnnFilterDescriptor_t desc = nullptr;
};

class ConvDesc {
public:
  ConvDesc() {
    check(cudnnCreateConvolutionDescriptor(&desc),
          "cudnnCreateConvolutionDescriptor");
  }
  ~ConvDesc() { cudnnDestroyConvolutionDescriptor(desc); }
  ConvDesc(const ConvDesc &) = delete;
  ConvDesc &operator=(const ConvDesc &) = delete;
  operator cudnnConvolutionDescriptor_t() const { return desc; }

private:
  cudnnConvolutionDescriptor_t desc = nullptr;
};

enum class ConvOp { Forward, BackwardData, BackwardFilter };

std::optional<ConvOp> convOp(KernelKind kind) {
  switch (kind) {
  case KernelKind::Conv2D:
    return ConvOp::Forward;
  case KernelKind::Conv2DBackwardInput:
    return ConvOp::BackwardData;
  case KernelKind::Conv2DBackwardWeight:
    return ConvOp::BackwardFilter;
  default:
    return std::nullopt;
  }
}

/// A convolution's tensors in forward terms: x (N x C x H x W), w
/// (K x C/groups x R x S), y (N x K x OH x OW). The backward ops read dy as
/// y and write dx as x (backward data) or dw as w (backward filter); see
/// KernelRulesConv.cpp for the operand order.
struct ConvTensors {
  const TensorRef *x, *w, *y;
};

ConvTensors convTensors(ConvOp op, const std::vector<TensorRef> &inputs,
                        const std::vector<TensorRef> &outputs) {
  switch (op) {
  case ConvOp::Forward: // conv2d(input, weight[, bias]) -> output
    return {&inputs[0], &inputs[1], &outputs[0]};
  case ConvOp::BackwardData: // (grad_output, weight) -> grad_input
    return {&outputs[0], &inputs[1], &inputs[0]};
  case ConvOp::BackwardFilter: // (grad_output, input) -> grad_weight
    return {&inputs[1], &outputs[0], &inputs[0]};
  }
  return {nullptr, nullptr, nullptr};
}

/// Everything an algorithm choice depends on: a cached choice is only used
/// for a step with the same signature.
std::vector<int64_t> convSignature(const Step &step, const ConvTensors &t,
                                   bool tf32) {
  const Conv2DAttrs &a = step.get<Conv2DAttrs>();
  // TF32 is part of it: a choice made where TF32 was allowed must not run
  // in a backend that computes in strict f32.
  std::vector<int64_t> s = {static_cast<int64_t>(step.kernel),
                            static_cast<int64_t>(t.x->dtype), tf32};
  for (const TensorRef *r : {t.x, t.w, t.y})
    s.insert(s.end(), r->shape->begin(), r->shape->end());
  s.insert(s.end(), {a.strides[0], a.strides[1], a.padding[0], a.padding[1],
                     a.dilations[0], a.dilations[1], a.groups});
  return s;
}

/// The descriptors of one convolution step.
struct ConvSetup {
  ConvOp op;
  DType dtype;
  ConvTensors t;
  TensorDesc x, y;
  FilterDesc w;
  ConvDesc conv;
  /// The math type a step starts from (and the last resort runs with).
  cudnnMathType_t defaultMath;

  /// `tensors` must have no empty tensor.
  /// Whether f32 may use TF32 tensor cores.
  bool tf32;

  ConvSetup(ConvOp convOp, const Step &step, const ConvTensors &tensors,
            bool allowTf32)
      : op(convOp), dtype(tensors.y->dtype), t(tensors), tf32(allowTf32) {
    const Conv2DAttrs &a = step.get<Conv2DAttrs>();
    x.set(*t.x);
    y.set(*t.y);
    w.set(*t.w);
    check(cudnnSetConvolution2dDescriptor(
              conv, toInt(a.padding[0], "padding"),
              toInt(a.padding[1], "padding"), toInt(a.strides[0], "stride"),
              toInt(a.strides[1], "stride"), toInt(a.dilations[0], "dilation"),
              toInt(a.dilations[1], "dilation"), CUDNN_CROSS_CORRELATION,
              dtype == DType::F64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT),
          "cudnnSetConvolution2dDescriptor");
    check(cudnnSetConvolutionGroupCount(conv, toInt(a.groups, "groups")),
          "cudnnSetConvolutionGroupCount");
    switch (dtype) {
    case DType::F32:
      defaultMath = tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
      break;
    case DType::F16:
    case DType::BF16:
      defaultMath = CUDNN_TENSOR_OP_MATH;
      break;
    default:
      defaultMath = CUDNN_DEFAULT_MATH;
      break;
    }
    setMath(defaultMath);
  }

  void setMath(cudnnMathType_t math) {
    check(cudnnSetConvolutionMathType(conv, math),
          "cudnnSetConvolutionMathType");
  }
};

/// Whether an algorithm reported with math type `math` may run: f32
/// convolutions use TF32 tensor cores only where the context allows it.
bool mathAllowed(const ConvSetup &s, cudnnMathType_t math) {
  return s.dtype != DType::F32 || s.tf32 || math == CUDNN_FMA_MATH;
}

/// One candidate of cuDNN's heuristics or of its timed search, whatever the
/// direction.
struct AlgoPerf {
  int algo;
  cudnnStatus_t status;
  size_t memory;
  cudnnMathType_t math;
  /// Milliseconds (timed searches only).
  float time;
};

template <typename Perf>
std::vector<AlgoPerf> toAlgoPerfs(const Perf *perfs, int count) {
  std::vector<AlgoPerf> out;
  for (int i = 0; i < count; ++i)
    out.push_back({static_cast<int>(perfs[i].algo), perfs[i].status,
                   perfs[i].memory, perfs[i].mathType, perfs[i].time});
  return out;
}

/// cuDNN's heuristic ranking of the algorithms (no timing).
std::vector<AlgoPerf> heuristicAlgos(cudnnHandle_t h, const ConvSetup &s) {
  int count = 0;
  switch (s.op) {
  case ConvOp::Forward: {
    cudnnConvolutionFwdAlgoPerf_t perfs[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    check(cudnnGetConvolutionForwardAlgorithm_v7(
              h, s.x, s.w, s.conv, s.y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
              &count, perfs),
          "cudnnGetConvolutionForwardAlgorithm_v7");
    return toAlgoPerfs(perfs, count);
  }
  case ConvOp::BackwardData: {
    cudnnConvolutionBwdDataAlgoPerf_t
        perfs[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    check(cudnnGetConvolutionBackwardDataAlgorithm_v7(
              h, s.w, s.y, s.conv, s.x, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
              &count, perfs),
          "cudnnGetConvolutionBackwardDataAlgorithm_v7");
    return toAlgoPerfs(perfs, count);
  }
  case ConvOp::BackwardFilter: {
    cudnnConvolutionBwdFilterAlgoPerf_t
        perfs[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    check(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
              h, s.x, s.y, s.conv, s.w, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
              &count, perfs),
          "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
    return toAlgoPerfs(perfs, count);
  }
  }
  return {};
}

/// cuDNN's timed search on the step's buffers (it writes the output),
/// fastest first; algorithms needing more than `wsBytes` are not run.
std::vector<AlgoPerf> timedAlgos(cudnnHandle_t h, const ConvSetup &s, void *ws,
                                 size_t wsBytes) {
  int count = 0;
  void *x = s.t.x->data, *w = s.t.w->data, *y = s.t.y->data;
  switch (s.op) {
  case ConvOp::Forward: {
    cudnnConvolutionFwdAlgoPerf_t perfs[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    check(cudnnFindConvolutionForwardAlgorithmEx(
              h, s.x, x, s.w, w, s.conv, s.y, y,
              CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &count, perfs, ws, wsBytes),
          "cudnnFindConvolutionForwardAlgorithmEx");
    return toAlgoPerfs(perfs, count);
  }
  case ConvOp::BackwardData: {
    cudnnConvolutionBwdDataAlgoPerf_t
        perfs[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    check(cudnnFindConvolutionBackwardDataAlgorithmEx(
              h, s.w, w, s.y, y, s.conv, s.x, x,
              CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &count, perfs, ws,
              wsBytes),
          "cudnnFindConvolutionBackwardDataAlgorithmEx");
    return toAlgoPerfs(perfs, count);
  }
  case ConvOp::BackwardFilter: {
    cudnnConvolutionBwdFilterAlgoPerf_t
        perfs[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    check(cudnnFindConvolutionBackwardFilterAlgorithmEx(
              h, s.x, x, s.y, y, s.conv, s.w, w,
              CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &count, perfs, ws,
              wsBytes),
          "cudnnFindConvolutionBackwardFilterAlgorithmEx");
    return toAlgoPerfs(perfs, count);
  }
  }
  return {};
}

/// cuDNN's timed search with as much workspace as each algorithm asks for
/// (cuDNN allocates it): what the step's planned workspace costs in speed.
/// Only for MEMOPT_CUDNN_LOG, at load time, outside any graph capture.
std::vector<AlgoPerf> unlimitedAlgos(cudnnHandle_t h, const ConvSetup &s) {
  int count = 0;
  switch (s.op) {
  case ConvOp::Forward: {
    cudnnConvolutionFwdAlgoPerf_t perfs[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    check(cudnnFindConvolutionForwardAlgorithm(h, s.x, s.w, s.conv, s.y,
                                               CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                               &count, perfs),
          "cudnnFindConvolutionForwardAlgorithm");
    return toAlgoPerfs(perfs, count);
  }
  case ConvOp::BackwardData: {
    cudnnConvolutionBwdDataAlgoPerf_t
        perfs[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    check(cudnnFindConvolutionBackwardDataAlgorithm(
              h, s.w, s.y, s.conv, s.x, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
              &count, perfs),
          "cudnnFindConvolutionBackwardDataAlgorithm");
    return toAlgoPerfs(perfs, count);
  }
  case ConvOp::BackwardFilter: {
    cudnnConvolutionBwdFilterAlgoPerf_t
        perfs[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    check(cudnnFindConvolutionBackwardFilterAlgorithm(
              h, s.x, s.y, s.conv, s.w, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
              &count, perfs),
          "cudnnFindConvolutionBackwardFilterAlgorithm");
    return toAlgoPerfs(perfs, count);
  }
  }
  return {};
}

/// The workspace `algo` needs with the descriptor's current math type.
cudnnStatus_t algoWorkspace(cudnnHandle_t h, const ConvSetup &s, int algo,
                            size_t *bytes) {
  switch (s.op) {
  case ConvOp::Forward:
    return cudnnGetConvolutionForwardWorkspaceSize(
        h, s.x, s.w, s.conv, s.y, static_cast<cudnnConvolutionFwdAlgo_t>(algo),
        bytes);
  case ConvOp::BackwardData:
    return cudnnGetConvolutionBackwardDataWorkspaceSize(
        h, s.w, s.y, s.conv, s.x,
        static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), bytes);
  case ConvOp::BackwardFilter:
    return cudnnGetConvolutionBackwardFilterWorkspaceSize(
        h, s.x, s.y, s.conv, s.w,
        static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), bytes);
  }
  return CUDNN_STATUS_BAD_PARAM;
}

/// An algorithm, the math type it runs with and its workspace.
struct Choice {
  int algo = 0;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  size_t bytes = 0;
};

struct CacheEntry {
  std::vector<int64_t> signature;
  /// tuneStep's choice.
  std::optional<Choice> tuned;
  /// The heuristic choice for a workspace of `fallbackLimit` bytes.
  std::optional<Choice> fallback;
  size_t fallbackLimit = 0;
};

std::mutex &cacheMutex() {
  static std::mutex m;
  return m;
}

std::unordered_map<const Step *, CacheEntry> &cache() {
  static std::unordered_map<const Step *, CacheEntry> c;
  return c;
}

/// The step's entry (caller holds the mutex), emptied if it was made for
/// another convolution at the same address.
CacheEntry &entryFor(const Step &step, const std::vector<int64_t> &signature) {
  CacheEntry &e = cache()[&step];
  if (e.signature != signature) {
    e = CacheEntry();
    e.signature = signature;
  }
  return e;
}

/// The first heuristic candidate that runs in the backend's workspace, else
/// algorithm 0 (implicit GEMM / ALGO_0: no workspace).
Choice heuristicChoice(const CudaContext &cuda, ConvSetup &s) {
  for (const AlgoPerf &p : heuristicAlgos(cuda.cudnn, s)) {
    if (p.status != CUDNN_STATUS_SUCCESS || !mathAllowed(s, p.math))
      continue;
    s.setMath(p.math);
    size_t bytes = 0;
    if (algoWorkspace(cuda.cudnn, s, p.algo, &bytes) != CUDNN_STATUS_SUCCESS)
      continue;
    if (bytes <= cuda.workspaceBytes)
      return {p.algo, p.math, bytes};
  }
  s.setMath(s.defaultMath);
  size_t bytes = 0;
  check(algoWorkspace(cuda.cudnn, s, 0, &bytes),
        "cudnnGetConvolution*WorkspaceSize");
  if (bytes > cuda.workspaceBytes)
    throw Error(ErrorCode::KernelFailure,
                runtime::concat("no cuDNN convolution algorithm fits the ",
                                cuda.workspaceBytes, "-byte workspace (", bytes,
                                " bytes needed)"));
  return {0, s.defaultMath, bytes};
}

Choice chooseAlgo(const CudaContext &cuda, const Step &step, ConvSetup &s) {
  std::lock_guard<std::mutex> lock(cacheMutex());
  CacheEntry &e = entryFor(step, convSignature(step, s.t, s.tf32));
  if (e.tuned && e.tuned->bytes <= cuda.workspaceBytes)
    return *e.tuned;
  if (e.fallback && e.fallbackLimit == cuda.workspaceBytes)
    return *e.fallback;
  e.fallback = heuristicChoice(cuda, s);
  e.fallbackLimit = cuda.workspaceBytes;
  return *e.fallback;
}

bool anyEmpty(const ConvTensors &t) {
  return t.x->numElements == 0 || t.w->numElements == 0 ||
         t.y->numElements == 0;
}

void runConvolution(const KernelCall &call, ConvOp op) {
  const ConvTensors tensors = convTensors(op, call.inputs, call.outputs);
  if (anyEmpty(tensors)) {
    // An empty sum (no images or no channels): the output is zero, plus
    // conv2d's bias, as on the CPU.
    const TensorRef &out = call.out(0);
    if (out.numElements == 0)
      return;
    check(cudaMemsetAsync(out.data, 0, out.bytes(), call.cuda.stream),
          "cudaMemsetAsync");
    if (op == ConvOp::Forward && call.inputs.size() == 3)
      fillWithBias(call, out, call.in(2), out.dim(2) * out.dim(3));
    return;
  }
  ConvSetup s(op, call.step, tensors, call.cuda.tf32);
  const Choice c = chooseAlgo(call.cuda, call.step, s);
  s.setMath(c.math);
  cudnnHandle_t h = call.cuda.cudnn;
  void *ws = c.bytes ? call.cuda.workspace : nullptr;
  const DType t = s.dtype;
  void *x = s.t.x->data, *w = s.t.w->data, *y = s.t.y->data;
  switch (op) {
  case ConvOp::Forward: {
    // The bias first, accumulated into (cpu/Conv.cpp does the same).
    const Scale *beta = &kZero;
    if (call.inputs.size() == 3) {
      fillWithBias(call, *s.t.y, call.in(2), s.t.y->dim(2) * s.t.y->dim(3));
      beta = &kOne;
    }
    check(
        cudnnConvolutionForward(h, kOne.forType(t), s.x, x, s.w, w, s.conv,
                                static_cast<cudnnConvolutionFwdAlgo_t>(c.algo),
                                ws, c.bytes, beta->forType(t), s.y, y),
        "cudnnConvolutionForward");
    return;
  }
  case ConvOp::BackwardData:
    check(cudnnConvolutionBackwardData(
              h, kOne.forType(t), s.w, w, s.y, y, s.conv,
              static_cast<cudnnConvolutionBwdDataAlgo_t>(c.algo), ws, c.bytes,
              kZero.forType(t), s.x, x),
          "cudnnConvolutionBackwardData");
    return;
  case ConvOp::BackwardFilter:
    check(cudnnConvolutionBackwardFilter(
              h, kOne.forType(t), s.x, x, s.y, y, s.conv,
              static_cast<cudnnConvolutionBwdFilterAlgo_t>(c.algo), ws, c.bytes,
              kZero.forType(t), s.w, w),
          "cudnnConvolutionBackwardFilter");
    return;
  }
}

/// Whether MEMOPT_CUDNN_LOG=1 asks for each convolution's choice on stderr.
bool logChoices() {
  static const bool on = envFlag("MEMOPT_CUDNN_LOG", false);
  return on;
}

std::string dimsOf(const TensorRef &t) {
  std::string out;
  for (int64_t d : *t.shape)
    out += (out.empty() ? "" : "x") + std::to_string(d);
  return out;
}

/// One line per tuned convolution: its shapes, the planned workspace, the
/// choice and its time, and the fastest algorithm with the workspace it
/// would want.
void logChoice(const CudaContext &cuda, const Step &step, ConvSetup &s,
               size_t workspaceLimit, const std::optional<Choice> &best,
               float bestTime) {
  std::string line = runtime::concat(
      "cudnn: ", kernelName(step.kernel), " x ", dimsOf(*s.t.x), " w ",
      dimsOf(*s.t.w), " y ", dimsOf(*s.t.y), " ", dtypeName(s.dtype),
      " workspace ", workspaceLimit, " B: ");
  if (best)
    line += runtime::concat("algo ", best->algo, " math ", best->math, " ",
                            bestTime, " ms ", best->bytes, " B");
  else
    line += "no timed choice";
  for (const AlgoPerf &p : unlimitedAlgos(cuda.cudnn, s)) {
    if (p.status != CUDNN_STATUS_SUCCESS || !mathAllowed(s, p.math))
      continue;
    line += runtime::concat("; unlimited: algo ", p.algo, " math ", p.math, " ",
                            p.time, " ms ", p.memory, " B");
    break;
  }
  s.setMath(s.defaultMath);
  std::fprintf(stderr, "%s\n", line.c_str());
}

} // namespace

void conv2d(const KernelCall &call) { runConvolution(call, ConvOp::Forward); }

void conv2dBackwardInput(const KernelCall &call) {
  runConvolution(call, ConvOp::BackwardData);
}

void conv2dBackwardWeight(const KernelCall &call) {
  runConvolution(call, ConvOp::BackwardFilter);
}

void tuneStep(CudaContext &cuda, const Step &step,
              const std::vector<TensorRef> &inputs,
              const std::vector<TensorRef> &outputs, size_t workspaceLimit) {
  const std::optional<ConvOp> op = convOp(step.kernel);
  if (!op)
    return;
  const ConvTensors tensors = convTensors(*op, inputs, outputs);
  const std::vector<int64_t> signature =
      convSignature(step, tensors, cuda.tf32);
  std::optional<Choice> best;
  float bestTime = 0;
  if (!anyEmpty(tensors)) {
    ConvSetup s(*op, step, tensors, cuda.tf32);
    const size_t scratch =
        cuda.workspace ? std::min(cuda.workspaceBytes, workspaceLimit) : 0;
    for (const AlgoPerf &p : timedAlgos(
             cuda.cudnn, s, scratch ? cuda.workspace : nullptr, scratch)) {
      if (p.status != CUDNN_STATUS_SUCCESS || p.memory > workspaceLimit ||
          !mathAllowed(s, p.math))
        continue;
      s.setMath(p.math);
      size_t bytes = 0;
      if (algoWorkspace(cuda.cudnn, s, p.algo, &bytes) !=
              CUDNN_STATUS_SUCCESS ||
          bytes > workspaceLimit)
        continue;
      best = Choice{p.algo, p.math, std::max(bytes, p.memory)};
      bestTime = p.time;
      break;
    }
    if (logChoices())
      logChoice(cuda, step, s, workspaceLimit, best, bestTime);
  }
  std::lock_guard<std::mutex> lock(cacheMutex());
  CacheEntry &e = entryFor(step, signature);
  e.tuned = best;
  e.fallback.reset();
}

} // namespace memopt::runtime::cuda
