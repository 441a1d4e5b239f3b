//===- Dnn.cpp - convolution and batch norm on cuDNN, GEMMs on cuBLAS -----===//
//
// conv2d and its two gradients run cuDNN's legacy convolution API in NCHW
// (cross-correlation, groups, f32 compute; f64 tensors compute in f64).
// f32 convolutions use CUDNN_FMA_MATH: cuDNN's default math type lets
// Ampere and later GPUs compute f32 convolutions in TF32, whose 10-bit
// mantissa would put them far from the CPU reference. f16/bf16 use tensor
// cores (CUDNN_TENSOR_OP_MATH) with f32 accumulation, like the CPU backend,
// which widens them to f32.
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
// Batch norm is cuDNN's spatial batch norm. cuDNN keeps the per-channel
// operands in f32 (f64 for f64 x), so those are the only combinations run
// here; any other (f16 gamma, say) is refused with a clear error rather
// than computed wrongly. The running statistics are not updated in place:
// the inputs are copied into the new_running_* outputs, which cuDNN then
// updates with factor `momentum` (and the unbiased batch variance, as the
// CPU does). The backward recomputes the batch statistics from x.
//
// linear and matmul are row-major GEMMs on cuBLAS (cublasGemmEx, f32
// compute, or f64 for f64 tensors): C = A * B row-major is C^T = B^T * A^T
// column-major, so the operands are passed swapped. matmul mirrors
// cpu/Linear.cpp: one GEMM when b has no batch and a is not transposed, one
// strided-batched GEMM when every broadcast batch advances each operand by a
// constant stride, else one GEMM per batch. Biases (linear, conv2d) are
// broadcast into the output first and accumulated into with beta = 1, as on
// the CPU (Bias.h).
//
// Pooling lives in Pool.cu (its own kernels, not cuDNN).
//
//===----------------------------------------------------------------------===//

#include "Bias.h"
#include "CudaKernels.h"
#include "MatMulBatches.h"

#include <algorithm>
#include <climits>
#include <mutex>
#include <optional>
#include <unordered_map>

namespace memopt::runtime::cuda {

namespace {

//===----------------------------------------------------------------------===//
// Common helpers
//===----------------------------------------------------------------------===//

/// `v` as a cuDNN/cuBLAS int; larger tensors are refused.
int toInt(int64_t v, const char *what) {
  if (v < 0 || v > INT_MAX)
    throw Error(
        ErrorCode::KernelFailure,
        runtime::concat(what, " (", v,
                        ") exceeds the 32-bit range of cuDNN and cuBLAS"));
  return static_cast<int>(v);
}

cudnnDataType_t cudnnType(DType t) {
  switch (t) {
  case DType::F32:
    return CUDNN_DATA_FLOAT;
  case DType::F64:
    return CUDNN_DATA_DOUBLE;
  case DType::F16:
    return CUDNN_DATA_HALF;
  case DType::BF16:
    return CUDNN_DATA_BFLOAT16;
  default:
    break;
  }
  throw Error(ErrorCode::Internal,
              runtime::concat("cuDNN called with dtype ", dtypeName(t)));
}

/// cuDNN's scaling factors: double for f64 tensors, float otherwise.
struct Scale {
  float f;
  double d;
  explicit Scale(double v) : f(static_cast<float>(v)), d(v) {}
  const void *forType(DType t) const {
    return t == DType::F64 ? static_cast<const void *>(&d)
                           : static_cast<const void *>(&f);
  }
};

const Scale kOne(1.0), kZero(0.0);

class TensorDesc {
public:
  TensorDesc() {
    check(cudnnCreateTensorDescriptor(&desc), "cudnnCreateTensorDescriptor");
  }
  ~TensorDesc() { cudnnDestroyTensorDescriptor(desc); }
  TensorDesc(const TensorDesc &) = delete;
  TensorDesc &operator=(const TensorDesc &) = delete;

  /// An NCHW tensor of `dtype`.
  void set(DType dtype, int64_t n, int64_t c, int64_t h, int64_t w) {
    toInt(n * c * h * w, "tensor size");
    check(cudnnSetTensor4dDescriptor(
              desc, CUDNN_TENSOR_NCHW, cudnnType(dtype), toInt(n, "dimension"),
              toInt(c, "dimension"), toInt(h, "dimension"),
              toInt(w, "dimension")),
          "cudnnSetTensor4dDescriptor");
  }
  /// A rank-4 tensor as it is.
  void set(const TensorRef &t) {
    set(t.dtype, t.dim(0), t.dim(1), t.dim(2), t.dim(3));
  }
  operator cudnnTensorDescriptor_t() const { return desc; }

private:
  cudnnTensorDescriptor_t desc = nullptr;
};

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

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

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
/// KernelRules.cpp for the operand order.
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
std::vector<int64_t> convSignature(const Step &step, const ConvTensors &t) {
  const Conv2DAttrs &a = step.get<Conv2DAttrs>();
  std::vector<int64_t> s = {static_cast<int64_t>(step.kernel),
                            static_cast<int64_t>(t.x->dtype)};
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
  ConvSetup(ConvOp convOp, const Step &step, const ConvTensors &tensors)
      : op(convOp), dtype(tensors.y->dtype), t(tensors) {
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
      defaultMath = CUDNN_FMA_MATH; // No TF32.
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

/// Whether an algorithm reported with math type `math` computes as the CPU
/// reference does: f32 convolutions must not use TF32 tensor cores.
bool mathAllowed(DType dtype, cudnnMathType_t math) {
  return dtype != DType::F32 || math == CUDNN_FMA_MATH;
}

/// One candidate of cuDNN's heuristics or of its timed search, whatever the
/// direction.
struct AlgoPerf {
  int algo;
  cudnnStatus_t status;
  size_t memory;
  cudnnMathType_t math;
};

template <typename Perf>
std::vector<AlgoPerf> toAlgoPerfs(const Perf *perfs, int count) {
  std::vector<AlgoPerf> out;
  for (int i = 0; i < count; ++i)
    out.push_back({static_cast<int>(perfs[i].algo), perfs[i].status,
                   perfs[i].memory, perfs[i].mathType});
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
    if (p.status != CUDNN_STATUS_SUCCESS || !mathAllowed(s.dtype, p.math))
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
  CacheEntry &e = entryFor(step, convSignature(step, s.t));
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
  ConvSetup s(op, call.step, tensors);
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

//===----------------------------------------------------------------------===//
// Batch norm
//===----------------------------------------------------------------------===//

/// x (N x C x ...) as the N x C x inner x 1 tensor cuDNN's spatial batch
/// norm sees, and the 1 x C x 1 x 1 per-channel operands.
struct BatchNormDescs {
  TensorDesc x, param;

  BatchNormDescs(const Step &step, const TensorRef &xt,
                 const TensorRef &gamma) {
    // cuDNN's per-channel type for x's type (cudnnDeriveBNTensorDescriptor).
    const DType required = xt.dtype == DType::F64 ? DType::F64 : DType::F32;
    if (gamma.dtype != required)
      throw Error(
          ErrorCode::KernelFailure,
          runtime::concat(kernelName(step.kernel), " on CUDA: x of dtype ",
                          dtypeName(xt.dtype),
                          " needs gamma, beta and the running statistics in ",
                          dtypeName(required), " (cuDNN's batch norm), got ",
                          dtypeName(gamma.dtype),
                          "; this combination is not supported by the CUDA "
                          "backend"));
    if (xt.numElements == 0)
      return; // Nothing to compute; the descriptors stay unset.
    const int64_t n = xt.dim(0), c = xt.dim(1);
    x.set(xt.dtype, n, c, xt.numElements / (n * c), 1);
    param.set(gamma.dtype, 1, c, 1, 1);
  }
};

//===----------------------------------------------------------------------===//
// GEMM
//===----------------------------------------------------------------------===//

cudaDataType_t cudaType(DType t) {
  switch (t) {
  case DType::F32:
    return CUDA_R_32F;
  case DType::F64:
    return CUDA_R_64F;
  case DType::F16:
    return CUDA_R_16F;
  case DType::BF16:
    return CUDA_R_16BF;
  default:
    break;
  }
  throw Error(ErrorCode::Internal,
              runtime::concat("cuBLAS called with dtype ", dtypeName(t)));
}

/// The operand layout of a row-major C (m x n) = op(A) (m x k) * op(B)
/// (k x n), with leading dimensions (elements per stored row) lda, ldb and
/// n for C.
struct Gemm {
  DType dtype;
  bool transA, transB;
  int64_t m, n, k, lda, ldb;

  cublasComputeType_t compute() const {
    return dtype == DType::F64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
  }
  /// Row-major op(A) is column-major op(A)^T: the swapped call below
  /// computes C^T = op(B)^T * op(A)^T, each operand transposed iff the
  /// row-major one is.
  cublasOperation_t opA() const { return transA ? CUBLAS_OP_T : CUBLAS_OP_N; }
  cublasOperation_t opB() const { return transB ? CUBLAS_OP_T : CUBLAS_OP_N; }
};

void gemm(const KernelCall &call, const Gemm &g, const void *a, const void *b,
          const Scale &beta, void *c) {
  const cudaDataType_t t = cudaType(g.dtype);
  check(cublasGemmEx(call.cuda.cublas, g.opB(), g.opA(), toInt(g.n, "GEMM N"),
                     toInt(g.m, "GEMM M"), toInt(g.k, "GEMM K"),
                     kOne.forType(g.dtype), b, t, toInt(g.ldb, "GEMM ldb"), a,
                     t, toInt(g.lda, "GEMM lda"), beta.forType(g.dtype), c, t,
                     toInt(g.n, "GEMM ldc"), g.compute(), CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx");
}

void gemmStridedBatched(const KernelCall &call, const Gemm &g, const void *a,
                        int64_t strideA, const void *b, int64_t strideB,
                        void *c, int64_t batch) {
  const cudaDataType_t t = cudaType(g.dtype);
  check(cublasGemmStridedBatchedEx(
            call.cuda.cublas, g.opB(), g.opA(), toInt(g.n, "GEMM N"),
            toInt(g.m, "GEMM M"), toInt(g.k, "GEMM K"), kOne.forType(g.dtype),
            b, t, toInt(g.ldb, "GEMM ldb"), strideB, a, t,
            toInt(g.lda, "GEMM lda"), strideA, kZero.forType(g.dtype), c, t,
            toInt(g.n, "GEMM ldc"), g.m * g.n, toInt(batch, "GEMM batch"),
            g.compute(), CUBLAS_GEMM_DEFAULT),
        "cublasGemmStridedBatchedEx");
}

/// Whether the odometer over `shape` moves an operand with per-dimension
/// strides `strides` by a constant `step` per batch (0 for a broadcast
/// operand), as cublasGemmStridedBatchedEx needs.
bool uniformStride(const std::vector<int64_t> &shape,
                   const std::vector<int64_t> &strides, int64_t &step) {
  step = 0;
  bool found = false;
  int64_t inner = 1; // Batches per index of dimension d.
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] != 1) {
      if (!found) {
        step = strides[d];
        found = true;
      } else if (strides[d] != step * inner) {
        return false;
      }
    }
    inner *= shape[d];
  }
  return true;
}

} // namespace

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

void conv2d(const KernelCall &call) { runConvolution(call, ConvOp::Forward); }

void conv2dBackwardInput(const KernelCall &call) {
  runConvolution(call, ConvOp::BackwardData);
}

void conv2dBackwardWeight(const KernelCall &call) {
  runConvolution(call, ConvOp::BackwardFilter);
}

/// cuDNN does not document in-place batch norm, so a plan that writes
/// `output` over `input` (which the compiler never does for these kernels)
/// is refused rather than run on an unspecified behaviour.
void refuseAliasing(const TensorRef &output, const TensorRef &input,
                    const char *what) {
  if (output.data == input.data && output.numElements > 0)
    throw Error(ErrorCode::KernelFailure,
                runtime::concat("cuda: ", what,
                                " in place is not supported (cuDNN does not "
                                "document in-place batch norm); give the "
                                "output its own buffer"));
}

void batchNorm(const KernelCall &call) {
  // (x, gamma, beta, running_mean, running_var) ->
  // (y, new_running_mean, new_running_var)
  const TensorRef &x = call.in(0), &gamma = call.in(1);
  const BatchNormAttrs &a = call.step.get<BatchNormAttrs>();
  refuseAliasing(call.out(0), x, "batch_norm");
  BatchNormDescs d(call.step, x, gamma);
  copyAsync(call, call.out(1).data, call.in(3).data, call.in(3).bytes());
  copyAsync(call, call.out(2).data, call.in(4).data, call.in(4).bytes());
  if (x.numElements == 0)
    return;
  check(cudnnBatchNormalizationForwardTraining(
            call.cuda.cudnn, CUDNN_BATCHNORM_SPATIAL, kOne.forType(x.dtype),
            kZero.forType(x.dtype), d.x, x.data, d.x, call.out(0).data, d.param,
            gamma.data, call.in(2).data, a.momentum, call.out(1).data,
            call.out(2).data, a.epsilon, nullptr, nullptr),
        "cudnnBatchNormalizationForwardTraining");
}

void batchNormBackward(const KernelCall &call) {
  // (grad_output, x, gamma) -> (grad_x, grad_gamma, grad_beta)
  const TensorRef &dy = call.in(0), &x = call.in(1), &gamma = call.in(2);
  const double epsilon = call.step.get<NormBackwardAttrs>().epsilon;
  refuseAliasing(call.out(0), dy, "batch_norm_backward");
  refuseAliasing(call.out(0), x, "batch_norm_backward");
  BatchNormDescs d(call.step, x, gamma);
  if (x.numElements == 0)
    return;
  // No saved statistics: cuDNN recomputes the batch mean and inverse
  // standard deviation from x, as the CPU kernel does.
  check(cudnnBatchNormalizationBackward(
            call.cuda.cudnn, CUDNN_BATCHNORM_SPATIAL, kOne.forType(x.dtype),
            kZero.forType(x.dtype), kOne.forType(x.dtype),
            kZero.forType(x.dtype), d.x, x.data, d.x, dy.data, d.x,
            call.out(0).data, d.param, gamma.data, call.out(1).data,
            call.out(2).data, epsilon, nullptr, nullptr),
        "cudnnBatchNormalizationBackward");
}

void linear(const KernelCall &call) {
  // (input ... x I, weight O x I[, bias O]) -> ... x O: y = x * W^T + b.
  const TensorRef &x = call.in(0), &w = call.in(1), &y = call.out(0);
  const int64_t inFeatures = w.dim(1), outFeatures = w.dim(0);
  if (y.numElements == 0)
    return;
  const int64_t rows = y.numElements / outFeatures;
  const bool hasBias = call.inputs.size() == 3;
  if (hasBias)
    fillWithBias(call, y, call.in(2), 1);
  if (inFeatures == 0) {
    // An empty product: y is the bias, or zero.
    if (!hasBias)
      check(cudaMemsetAsync(y.data, 0, y.bytes(), call.cuda.stream),
            "cudaMemsetAsync");
    return;
  }
  Gemm g{y.dtype,     false,      true,       rows,
         outFeatures, inFeatures, inFeatures, inFeatures};
  gemm(call, g, x.data, w.data, hasBias ? kOne : kZero, y.data);
}

void matmul(const KernelCall &call) {
  const TensorRef &a = call.in(0), &b = call.in(1), &y = call.out(0);
  const MatMulAttrs &attrs = call.step.get<MatMulAttrs>();
  const size_t ra = a.rank(), rb = b.rank(), ry = y.rank();
  const int64_t m = y.dim(ry - 2), n = y.dim(ry - 1);
  const int64_t k = attrs.transposeA ? a.dim(ra - 2) : a.dim(ra - 1);
  const int64_t lda = a.dim(ra - 1), ldb = b.dim(rb - 1);
  if (y.numElements == 0)
    return;
  if (k == 0) {
    check(cudaMemsetAsync(y.data, 0, y.bytes(), call.cuda.stream),
          "cudaMemsetAsync");
    return;
  }
  const int64_t matA = a.dim(ra - 2) * a.dim(ra - 1);
  const int64_t matB = b.dim(rb - 2) * b.dim(rb - 1);
  const int64_t batchA = a.numElements / matA, batchB = b.numElements / matB;
  const int64_t batch = y.numElements / (m * n);
  const size_t elem = dtypeSize(y.dtype);
  const char *pa = static_cast<const char *>(a.data);
  const char *pb = static_cast<const char *>(b.data);
  char *py = static_cast<char *>(y.data);

  if (batchB == 1 && !attrs.transposeA) {
    // Rows of every batch of a are contiguous: one (batch*M) x K GEMM.
    Gemm g{y.dtype, false, attrs.transposeB, batchA * m, n, k, lda, ldb};
    gemm(call, g, pa, pb, kZero, py);
    return;
  }

  const MatMulBatches batches(a, b, y);
  const Gemm g{y.dtype, attrs.transposeA, attrs.transposeB, m, n, k, lda, ldb};
  int64_t stepA = 0, stepB = 0;
  if (uniformStride(batches.shape, batches.strideA, stepA) &&
      uniformStride(batches.shape, batches.strideB, stepB)) {
    gemmStridedBatched(call, g, pa, stepA, pb, stepB, py, batch);
    return;
  }
  batches.forEach(batch, [&](int64_t i, int64_t offA, int64_t offB) {
    gemm(call, g, pa + offA * elem, pb + offB * elem, kZero,
         py + i * m * n * elem);
  });
}

void tuneStep(CudaContext &cuda, const Step &step,
              const std::vector<TensorRef> &inputs,
              const std::vector<TensorRef> &outputs, size_t workspaceLimit) {
  const std::optional<ConvOp> op = convOp(step.kernel);
  if (!op)
    return;
  const ConvTensors tensors = convTensors(*op, inputs, outputs);
  const std::vector<int64_t> signature = convSignature(step, tensors);
  std::optional<Choice> best;
  if (!anyEmpty(tensors)) {
    ConvSetup s(*op, step, tensors);
    const size_t scratch =
        cuda.workspace ? std::min(cuda.workspaceBytes, workspaceLimit) : 0;
    for (const AlgoPerf &p : timedAlgos(
             cuda.cudnn, s, scratch ? cuda.workspace : nullptr, scratch)) {
      if (p.status != CUDNN_STATUS_SUCCESS || p.memory > workspaceLimit ||
          !mathAllowed(s.dtype, p.math))
        continue;
      s.setMath(p.math);
      size_t bytes = 0;
      if (algoWorkspace(cuda.cudnn, s, p.algo, &bytes) !=
              CUDNN_STATUS_SUCCESS ||
          bytes > workspaceLimit)
        continue;
      best = Choice{p.algo, p.math, std::max(bytes, p.memory)};
      break;
    }
  }
  std::lock_guard<std::mutex> lock(cacheMutex());
  CacheEntry &e = entryFor(step, signature);
  e.tuned = best;
  e.fallback.reset();
}

} // namespace memopt::runtime::cuda
