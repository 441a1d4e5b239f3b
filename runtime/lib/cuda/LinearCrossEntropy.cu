//===- LinearCrossEntropy.cu - the chunked LM-head loss on the GPU --------===//
//
// linear_cross_entropy(hidden NxH, weight VxH, labels N) and its backward
// op as cpu/LinearCrossEntropy.cpp computes them, never holding the NxV
// logits: `rows` rows at a time, cuBLAS writes the logits of those rows,
// hidden_chunk·weightᵀ, into the step's workspace in the compute type (f32,
// or f64 for f64 tensors; f16 and bf16 products accumulate in f32 and are
// stored in f32), and this file's kernels reduce them. `rows` is the step's
// `chunk`, at most N, fewer when the workspace the compiler reserved holds
// fewer rows (memopt/Contract/LinearCrossEntropyShapes.h), at least one.
//
// Forward, per chunk: one block per row takes the log-sum-exp of its logits
// in double (math::LogSumExp, as cross_entropy does) into `lse`. The loss
// also needs every row's logit at its label, and there is no room to keep
// N of them, so once all chunks are done it is computed from `lse`: one
// warp per row recomputes logit[label] as the dot product of hidden's row
// and weight's row `label` (in double, whose products of f32, f16 or bf16
// values are exact), and the rows' lse − logit[label] are summed
// deterministically: blocks write partial sums to the workspace, free
// again by then, and one more kernel adds them in order (one block does it
// all when the workspace holds fewer than two doubles). Labels outside
// [0, V) set the backend's error flag there.
//
// Backward, per chunk: the logits again (the same GEMM shapes as the
// forward pass), then one block per row turns them in place into
// dlogits = grad_loss·(exp(logit − lse) − onehot(label))/N, computed in
// double as the CPU does and stored in the dtype of hidden and weight,
// since cublasGemmEx takes both operands of a product in one type: f32 and
// f64 over their own logits; f16 and bf16 into the first half of each
// row's f32 bytes, a matrix with leading dimension 2V. Writing element j
// there overwrites the f32 logit j/2 of the same row, so the block reads a
// stretch of the row, waits at a barrier and only then writes it: every
// logit a write can reach has been read. Then grad_hidden's rows =
// dlogits·weight and grad_weight += dlogitsᵀ·hidden_chunk (beta 0 for the
// first chunk, 1 after).
//
// linear_cross_entropy_with_grad (the pair fused by
// --memopt-fuse-loss-gradient) does both per chunk on one GEMM's logits:
// log-sum-exps, then dlogits in place and the two gradient GEMMs, and the
// loss from the log-sum-exps at the end; the pair's kernels and GEMM shapes,
// so the pair's bits, with one GEMM and one pass over the logits fewer.
//
// With a bias (the ops' last input, V elements of weight's dtype) each
// chunk's logits start as the bias, widened to the compute type
// (fillWithBias, as linear's output starts), and the logits GEMM adds to
// them (beta 1); the loss's
// logit[label] adds bias[label] to the dot product, and grad_bias, the
// column sums of the chunk's dlogits, is one thread per class summing the
// chunk's rows in double and adding the sum to grad_bias in its own dtype
// (overwritten by the first chunk), as grad_weight accumulates.
//
// Precision: the CPU widens f16 and bf16 operands to f32 and keeps them
// there; here their dlogits are rounded to the tensor dtype before the two
// GEMMs, as PyTorch's f16 cross-entropy gradients are (in f16, magnitudes
// below about 6e-8, e.g. (p − onehot)/N for large N without loss scaling,
// flush to zero), and grad_weight accumulates across chunks in its own
// dtype, rounded once per chunk rather than once at the end. For every
// dtype, the loss's logit[label] is the dot product rather than the GEMM's
// logit that lse was taken over, and lse enters the loss rounded to its
// dtype: rounding-level differences, relative to lse rather than to the
// loss (visible only for a loss near 0).
//
// cuBLAS: the workspace's bytes after the chunk's rows, when they hold
// memopt::shapes::kGemmScratchBytes from a 256-byte boundary on (the
// compiler reserves that much after the rows unless a cap leaves no room),
// are cuBLAS's workspace for this step's GEMMs; without one cuBLAS runs them
// several times slower (bench/gpu/lce_gemm.cu). The handle gets no
// workspace again after the step.
//
// Memory: the workspace only. A plan with no room for one row of logits
// (the compiler always reserves at least one row when N and V are not 0)
// gets min(chunk, N) rows with cudaMallocAsync on the stream, freed on the
// stream after the step's last use: the one allocation these kernels may
// make, for plans the compiler did not produce.
//
//===----------------------------------------------------------------------===//

#include "Bias.h"
#include "Device.cuh"
#include "DnnCommon.h"

#include "memopt/Contract/LinearCrossEntropyShapes.h"
#include "memopt/runtime/ElementwiseMath.h"

#include <algorithm>

namespace memopt::runtime::cuda {

namespace {

/// Threads of a block that owns one row of logits.
constexpr int kRowThreads = 256;
/// Warps per block (and rows at a time) of the loss kernel.
constexpr int kLossWarps = kThreads / 32;
/// Threads of the loss kernel when it runs as a single block.
constexpr int kSingleBlockThreads = 1024;
/// The most blocks whose partial sums the loss kernel writes.
constexpr int64_t kMaxLossBlocks = 1024;
/// The most blocks of a launch over rows (each loops over the rest).
constexpr int64_t kMaxRowBlocks = 65535 * 8;

unsigned rowBlocks(int64_t rows) {
  return static_cast<unsigned>(std::clamp<int64_t>(rows, 1, kMaxRowBlocks));
}

/// Row-major C (m x n, leading dimension ldc) = alpha · op(A) (m x k) ·
/// op(B) (k x n) + beta · C, with A and B of dtype `ab` and C of dtype
/// `c`; f32 compute (f64 for f64 operands). cuBLAS is column-major, where
/// the row-major C is Cᵀ = op(B)ᵀ · op(A)ᵀ, so the operands are passed
/// swapped, each transposed iff the row-major one is (as in DnnGemm.cpp).
struct Gemm {
  DType ab, c;
  bool transA, transB;
  int64_t m, n, k, lda, ldb, ldc;
};

void gemm(const KernelCall &call, const Gemm &g, const void *a, const void *b,
          const Scale &beta, void *c) {
  const cudaDataType_t tab = cudaType(g.ab), tc = cudaType(g.c);
  const cublasComputeType_t compute = gemmCompute(g.ab, call.cuda);
  check(cublasGemmEx(call.cuda.cublas, g.transB ? CUBLAS_OP_T : CUBLAS_OP_N,
                     g.transA ? CUBLAS_OP_T : CUBLAS_OP_N, toInt(g.n, "GEMM N"),
                     toInt(g.m, "GEMM M"), toInt(g.k, "GEMM K"),
                     kOne.forType(g.ab), b, tab, toInt(g.ldb, "GEMM ldb"), a,
                     tab, toInt(g.lda, "GEMM lda"), beta.forType(g.ab), c, tc,
                     toInt(g.ldc, "GEMM ldc"), compute, CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx");
}

/// Where the logits of a chunk live: the step's workspace when it holds at
/// least one row (as many rows as it holds, at most `chunk` and `n`), else
/// min(chunk, n) rows from cudaMallocAsync on the stream, which release()
/// (or, on an error, the destructor) frees on the stream.
class LogitChunk {
public:
  LogitChunk(const KernelCall &call, int64_t n, int64_t classes,
             size_t computeBytes, int64_t chunk)
      : stream(call.cuda.stream) {
    const int64_t most = std::max<int64_t>(1, std::min(chunk, n));
    rowBytes = static_cast<size_t>(classes) * computeBytes;
    if (rowBytes == 0 || n == 0) {
      // No logits to hold: every row in one pass, no memory.
      rows = std::max<int64_t>(n, 1);
      data = call.cuda.workspace;
      bytes = call.cuda.workspace ? call.cuda.workspaceBytes : 0;
      return;
    }
    if (call.cuda.workspace && call.cuda.workspaceBytes >= rowBytes) {
      rows = std::clamp<int64_t>(
          static_cast<int64_t>(call.cuda.workspaceBytes / rowBytes), 1, most);
      data = call.cuda.workspace;
      bytes = call.cuda.workspaceBytes;
      return;
    }
    rows = most;
    bytes = static_cast<size_t>(most) * rowBytes;
    check(cudaMallocAsync(&data, bytes, stream), "cudaMallocAsync");
    owned = true;
  }
  ~LogitChunk() {
    if (owned)
      cudaFreeAsync(data, stream);
  }
  LogitChunk(const LogitChunk &) = delete;
  LogitChunk &operator=(const LogitChunk &) = delete;

  void release() {
    if (owned) {
      owned = false;
      check(cudaFreeAsync(data, stream), "cudaFreeAsync");
    }
  }

  /// The workspace's bytes after the rows, from a kGemmScratchAlignment
  /// boundary, when they hold kGemmScratchBytes (else null).
  void *gemmScratch() const {
    if (owned || !data)
      return nullptr;
    const uintptr_t begin = reinterpret_cast<uintptr_t>(data);
    const uintptr_t end = begin + bytes;
    const uintptr_t align = memopt::shapes::kGemmScratchAlignment;
    const uintptr_t start =
        (begin + static_cast<uintptr_t>(rows) * rowBytes + align - 1) / align *
        align;
    if (start > end || end - start < memopt::shapes::kGemmScratchBytes)
      return nullptr;
    return reinterpret_cast<void *>(start);
  }

  /// Rows per chunk.
  int64_t rows = 1;
  /// Bytes of one row of logits.
  size_t rowBytes = 0;
  /// The memory (null when there is none) and its size, which may exceed
  /// rows x V elements (the whole workspace).
  void *data = nullptr;
  size_t bytes = 0;

private:
  cudaStream_t stream;
  bool owned = false;
};

/// Gives cuBLAS the chunk's GEMM scratch for the step's GEMMs, and none
/// again afterwards (the other GEMM steps have no workspace).
class GemmScratch {
public:
  GemmScratch(const KernelCall &call, const LogitChunk &chunk)
      : handle(call.cuda.cublas) {
    if (void *p = chunk.gemmScratch()) {
      check(cublasSetWorkspace(handle, p, memopt::shapes::kGemmScratchBytes),
            "cublasSetWorkspace");
      set = true;
    }
  }
  ~GemmScratch() {
    if (set)
      cublasSetWorkspace(handle, nullptr, 0);
  }
  GemmScratch(const GemmScratch &) = delete;
  GemmScratch &operator=(const GemmScratch &) = delete;

private:
  cublasHandle_t handle;
  bool set = false;
};

/// The merge of every thread's log-sum-exp, in thread 0 (other threads get
/// an unspecified value): lanes merge by shuffles, then thread 0 merges the
/// warps in order, so the result does not depend on timing. Every thread of
/// the block must call it.
__device__ inline math::LogSumExp<double>
blockLogSumExp(math::LogSumExp<double> acc) {
  __shared__ double maxes[32], sums[32];
  for (int o = 16; o > 0; o >>= 1) {
    math::LogSumExp<double> other;
    other.max = __shfl_xor_sync(kFullMask, acc.max, o);
    other.sum = __shfl_xor_sync(kFullMask, acc.sum, o);
    acc.merge(other);
  }
  if ((threadIdx.x & 31) == 0) {
    maxes[threadIdx.x >> 5] = acc.max;
    sums[threadIdx.x >> 5] = acc.sum;
  }
  __syncthreads();
  math::LogSumExp<double> total;
  if (threadIdx.x == 0)
    for (unsigned w = 0; w < blockDim.x / 32; ++w) {
      math::LogSumExp<double> part;
      part.max = maxes[w];
      part.sum = sums[w];
      total.merge(part);
    }
  __syncthreads();
  return total;
}

/// lse[r0 + i] = log-sum-exp of row i of the chunk's logits (`rows` rows of
/// `classes` elements of T, f32 or f64), one block per row, in double.
template <typename T>
__global__ void chunkLseKernel(const T *logits, int64_t rows, int64_t classes,
                               void *lse, DType lseType, int64_t r0) {
  for (int64_t i = blockIdx.x; i < rows; i += gridDim.x) {
    const T *row = logits + i * classes;
    math::LogSumExp<double> acc;
    for (int64_t j = threadIdx.x; j < classes; j += blockDim.x)
      acc.add(static_cast<double>(row[j]));
    acc = blockLogSumExp(acc);
    if (threadIdx.x == 0)
      storeDouble(lse, lseType, r0 + i, acc.value());
  }
}

/// The sum over rows of lse[r] − hidden[r]·weight[label_r], one warp per
/// row, in double: block totals to `partials`, or, when that is null (one
/// block), their mean to `loss`. Rows with a bad label raise the error
/// flag and add nothing.
__global__ void lossKernel(const void *hidden, const void *weight, DType dtype,
                           const void *bias, const void *labels,
                           DType labelType, const void *lse, DType lseType,
                           int64_t n, int64_t width, int64_t classes,
                           double *partials, void *loss, DType lossType,
                           int *flag, int code) {
  const int lane = threadIdx.x & 31, warpsPerBlock = blockDim.x / 32;
  const int64_t warps = int64_t(gridDim.x) * warpsPerBlock;
  double total = 0; // Lane 0's sum over its warp's rows.
  for (int64_t r = int64_t(blockIdx.x) * warpsPerBlock + (threadIdx.x >> 5);
       r < n; r += warps) {
    const int64_t label = loadIndex(labels, labelType, r);
    if (label < 0 || label >= classes) {
      if (lane == 0)
        raiseError(flag, code);
      continue;
    }
    double dot = 0;
    for (int64_t k = lane; k < width; k += 32)
      dot += __dmul_rn(loadDouble(hidden, dtype, r * width + k),
                       loadDouble(weight, dtype, label * width + k));
    dot = warpSum(dot);
    if (bias)
      dot += loadDouble(bias, dtype, label);
    if (lane == 0)
      total += loadDouble(lse, lseType, r) - dot;
  }
  total = blockSum(lane == 0 ? total : 0.0);
  if (threadIdx.x != 0)
    return;
  if (partials)
    partials[blockIdx.x] = total;
  else
    storeDouble(loss, lossType, 0, total / static_cast<double>(n));
}

/// grad_bias[v] (+)= the sum over the chunk's `rows` rows of dlogits[i, v]
/// (elements of `type`, rows `ld` elements apart), one thread per class,
/// the rows in order in double; `first` overwrites.
__global__ void biasGradientKernel(const void *dlogits, DType type, int64_t ld,
                                   int64_t rows, int64_t classes, void *db,
                                   DType dbType, bool first) {
  MEMOPT_GRID_STRIDE(v, classes) {
    double sum = 0;
    for (int64_t i = 0; i < rows; ++i)
      sum += loadDouble(dlogits, type, i * ld + v);
    storeDouble(db, dbType, v, first ? sum : loadDouble(db, dbType, v) + sum);
  }
}

/// Adds the partial sums in order and writes their mean.
__global__ void finishLossKernel(const double *partials, int count, void *loss,
                                 DType lossType, double divisor) {
  if (threadIdx.x != 0 || blockIdx.x != 0)
    return;
  double total = 0;
  for (int i = 0; i < count; ++i)
    total += partials[i];
  storeDouble(loss, lossType, 0, total / divisor);
}

/// Turns rows [0, rows) of the chunk's logits (T: f32 or f64, row stride
/// `classes`) into dlogits = grad_loss·(exp(logit − lse) − onehot)/n for
/// rows r0 + i of the batch, one block per row, in double. Stored as T
/// over the logits, or, with Narrow, as `outType` (f16 or bf16) in the first
/// half of each row's bytes (row stride 2·classes elements). A row with a
/// bad label raises the error flag and gets no one-hot.
template <typename T, bool Narrow>
__global__ void dlogitsKernel(T *logits, int64_t rows, int64_t classes,
                              DType outType, const void *lse, DType lseType,
                              const void *labels, DType labelType, int64_t r0,
                              const void *gradLoss, DType gradType, int64_t n,
                              int *flag, int code) {
  const double scale =
      loadDouble(gradLoss, gradType, 0) / static_cast<double>(n);
  for (int64_t i = blockIdx.x; i < rows; i += gridDim.x) {
    const int64_t r = r0 + i;
    const int64_t label = loadIndex(labels, labelType, r);
    if ((label < 0 || label >= classes) && threadIdx.x == 0)
      raiseError(flag, code);
    const double l = loadDouble(lse, lseType, r);
    T *row = logits + i * classes;
    // The loop runs the same number of times in every thread (the barrier
    // is reached by all of them).
    for (int64_t base = 0; base < classes; base += blockDim.x) {
      const int64_t j = base + threadIdx.x;
      double d = 0;
      if (j < classes) {
        const double p = math::exp(static_cast<double>(row[j]) - l);
        d = (p - (j == label ? 1.0 : 0.0)) * scale;
      }
      if (Narrow) {
        // Narrow element j overwrites bytes of logit j / 2 of the row. Once
        // every thread is here, logits [0, base + blockDim.x) have been
        // read, and this stretch writes below (base + blockDim.x) / 2.
        __syncthreads();
        if (j < classes)
          storeDouble(row, outType, j, d);
      } else if (j < classes) {
        row[j] = static_cast<T>(d);
      }
    }
  }
}

/// The chunk element type: double for f64 tensors, else float.
bool inDouble(const TensorRef &hidden) { return hidden.dtype == DType::F64; }

void checkSameDType(const TensorRef &hidden, const TensorRef &weight) {
  if (hidden.dtype != weight.dtype)
    throw Error(ErrorCode::Internal,
                runtime::concat("cuda linear_cross_entropy: hidden is ",
                                dtypeName(hidden.dtype), " but weight is ",
                                dtypeName(weight.dtype)));
}

/// The bias, input `index`, when the call has one; null otherwise.
const TensorRef *biasOf(const KernelCall &call, size_t index) {
  return call.inputs.size() > index ? &call.in(index) : nullptr;
}

/// The logits of rows [r0, r0 + rows) into the chunk: hidden_chunk ·
/// weightᵀ (+ bias) in the compute type (zeros, or the bias, when H is 0).
void chunkLogits(const KernelCall &call, const TensorRef &h, const TensorRef &w,
                 const TensorRef *bias, int64_t r0, int64_t rows, int64_t width,
                 int64_t classes, void *chunk) {
  const DType ct = inDouble(h) ? DType::F64 : DType::F32;
  if (bias) {
    const Shape shape{rows, classes};
    fillWithBias(call, TensorRef{chunk, ct, &shape, rows * classes}, *bias, 1);
    if (width == 0)
      return;
  }
  if (width == 0) {
    check(cudaMemsetAsync(chunk, 0,
                          static_cast<size_t>(rows * classes) * dtypeSize(ct),
                          call.cuda.stream),
          "cudaMemsetAsync");
    return;
  }
  const char *hc = static_cast<const char *>(h.data) +
                   static_cast<size_t>(r0 * width) * dtypeSize(h.dtype);
  const Gemm g{h.dtype, ct,    false, true,  rows,
               classes, width, width, width, classes};
  gemm(call, g, hc, w.data, bias ? kOne : kZero, chunk);
}

/// lse[r0 + i] for the `rows` rows of logits in the chunk.
void chunkLse(const KernelCall &call, const TensorRef &h, const TensorRef &lse,
              const void *chunk, int64_t r0, int64_t rows, int64_t classes) {
  // With no classes the kernel reads nothing and writes lse = -inf.
  if (inDouble(h))
    chunkLseKernel<double>
        <<<rowBlocks(rows), kRowThreads, 0, call.cuda.stream>>>(
            static_cast<const double *>(chunk), rows, classes, lse.data,
            lse.dtype, r0);
  else
    chunkLseKernel<float>
        <<<rowBlocks(rows), kRowThreads, 0, call.cuda.stream>>>(
            static_cast<const float *>(chunk), rows, classes, lse.data,
            lse.dtype, r0);
  checkLaunch("linear_cross_entropy");
}

/// The loss from every row's lse, with the chunk's memory (every row of it
/// read by now) as the blocks' partial sums when it holds two or more.
void finishLoss(const KernelCall &call, const TensorRef &h, const TensorRef &w,
                const TensorRef *bias, const TensorRef &labels,
                const TensorRef &lse, const TensorRef &loss,
                const LogitChunk &chunk, int code) {
  const void *b = bias ? bias->data : nullptr;
  const int64_t n = h.dim(0), width = h.dim(1), classes = w.dim(0);
  const int64_t wanted =
      std::min<int64_t>((n + kLossWarps - 1) / kLossWarps, kMaxLossBlocks);
  const int64_t fit =
      chunk.data ? static_cast<int64_t>(chunk.bytes / sizeof(double)) : 0;
  const int64_t blocks = std::min(wanted, fit);
  if (blocks >= 2) {
    double *partials = static_cast<double *>(chunk.data);
    lossKernel<<<static_cast<unsigned>(blocks), kThreads, 0,
                 call.cuda.stream>>>(h.data, w.data, h.dtype, b, labels.data,
                                     labels.dtype, lse.data, lse.dtype, n,
                                     width, classes, partials, loss.data,
                                     loss.dtype, call.cuda.errorFlag, code);
    checkLaunch("linear_cross_entropy");
    finishLossKernel<<<1, 32, 0, call.cuda.stream>>>(
        partials, static_cast<int>(blocks), loss.data, loss.dtype,
        static_cast<double>(n));
  } else {
    lossKernel<<<1, kSingleBlockThreads, 0, call.cuda.stream>>>(
        h.data, w.data, h.dtype, b, labels.data, labels.dtype, lse.data,
        lse.dtype, n, width, classes, nullptr, loss.data, loss.dtype,
        call.cuda.errorFlag, code);
  }
  checkLaunch("linear_cross_entropy");
}

/// Rows [r0, r0 + rows) of the gradients from their logits in the chunk:
/// the logits become dlogits in place, then grad_hidden's rows = dlogits ·
/// weight and grad_weight += dlogitsᵀ · hidden_chunk (overwritten by the
/// first chunk), and with a bias grad_bias (+)= the dlogits' column sums.
/// Needs n and V above 0, and H above 0 without a bias.
void chunkGradients(const KernelCall &call, const TensorRef &gl,
                    const TensorRef &h, const TensorRef &w,
                    const TensorRef &labels, const TensorRef &lse,
                    const TensorRef &dh, const TensorRef &dw,
                    const TensorRef *db, void *chunk, int64_t r0, int64_t rows,
                    int code) {
  const int64_t n = h.dim(0), width = h.dim(1), classes = w.dim(0);
  const bool narrow = h.dtype == DType::F16 || h.dtype == DType::BF16;
  // dlogits: the chunk as h.dtype elements, rows `ld` elements apart.
  const int64_t ld = narrow ? 2 * classes : classes;
  const size_t hBytes = dtypeSize(h.dtype);
  cudaStream_t stream = call.cuda.stream;
  const unsigned blocks = rowBlocks(rows);
  if (inDouble(h))
    dlogitsKernel<double, false><<<blocks, kRowThreads, 0, stream>>>(
        static_cast<double *>(chunk), rows, classes, DType::F64, lse.data,
        lse.dtype, labels.data, labels.dtype, r0, gl.data, gl.dtype, n,
        call.cuda.errorFlag, code);
  else if (narrow)
    dlogitsKernel<float, true><<<blocks, kRowThreads, 0, stream>>>(
        static_cast<float *>(chunk), rows, classes, h.dtype, lse.data,
        lse.dtype, labels.data, labels.dtype, r0, gl.data, gl.dtype, n,
        call.cuda.errorFlag, code);
  else
    dlogitsKernel<float, false><<<blocks, kRowThreads, 0, stream>>>(
        static_cast<float *>(chunk), rows, classes, DType::F32, lse.data,
        lse.dtype, labels.data, labels.dtype, r0, gl.data, gl.dtype, n,
        call.cuda.errorFlag, code);
  checkLaunch("linear_cross_entropy_backward");
  if (db) {
    biasGradientKernel<<<blocksFor(classes), kThreads, 0, stream>>>(
        chunk, narrow ? h.dtype : (inDouble(h) ? DType::F64 : DType::F32), ld,
        rows, classes, db->data, db->dtype, r0 == 0);
    checkLaunch("linear_cross_entropy_backward");
  }
  if (width == 0)
    return;

  const size_t offset = static_cast<size_t>(r0 * width) * hBytes;
  const Gemm gh{h.dtype, dh.dtype, false, false, rows,
                width,   classes,  ld,    width, width};
  gemm(call, gh, chunk, w.data, kZero, static_cast<char *>(dh.data) + offset);
  const Gemm gw{h.dtype, dw.dtype, true, false, classes,
                width,   rows,     ld,   width, width};
  gemm(call, gw, chunk, static_cast<const char *>(h.data) + offset,
       r0 == 0 ? kZero : kOne, dw.data);
}

} // namespace

void linearCrossEntropy(const KernelCall &call) {
  const TensorRef &h = call.in(0), &w = call.in(1), &labels = call.in(2);
  const TensorRef &loss = call.out(0), &lse = call.out(1);
  checkSameDType(h, w);
  const int64_t n = h.dim(0), width = h.dim(1), classes = w.dim(0);
  const int code = static_cast<int>(call.context.stepIndex) + 1;
  LogitChunk chunk(call, n, classes, inDouble(h) ? 8 : 4,
                   call.step.get<LinearCrossEntropyAttrs>().chunk);
  GemmScratch scratch(call, chunk);

  const TensorRef *bias = biasOf(call, 3);
  for (int64_t r0 = 0; r0 < n; r0 += chunk.rows) {
    const int64_t rows = std::min(n - r0, chunk.rows);
    if (classes > 0)
      chunkLogits(call, h, w, bias, r0, rows, width, classes, chunk.data);
    chunkLse(call, h, lse, chunk.data, r0, rows, classes);
  }
  finishLoss(call, h, w, bias, labels, lse, loss, chunk, code);
  chunk.release();
}

void linearCrossEntropyBackward(const KernelCall &call) {
  const TensorRef &gl = call.in(0), &h = call.in(1), &w = call.in(2),
                  &labels = call.in(3), &lse = call.in(4);
  const TensorRef &dh = call.out(0), &dw = call.out(1);
  const TensorRef *bias = biasOf(call, 5);
  const TensorRef *db = bias ? &call.out(2) : nullptr;
  checkSameDType(h, w);
  const int64_t n = h.dim(0), width = h.dim(1), classes = w.dim(0);
  const int code = static_cast<int>(call.context.stepIndex) + 1;
  cudaStream_t stream = call.cuda.stream;

  if (n == 0 || classes == 0 || (width == 0 && !bias)) {
    // Empty products: zero gradients (of which at most one is not empty).
    for (const TensorRef *g : {&dh, &dw, db})
      if (g && g->bytes() > 0)
        check(cudaMemsetAsync(g->data, 0, g->bytes(), stream),
              "cudaMemsetAsync");
    if (classes == 0 && n > 0) {
      // Every label is out of range: the kernel, with no logits to read,
      // raises the error flag.
      dlogitsKernel<float, false><<<1, kRowThreads, 0, stream>>>(
          nullptr, n, 0, DType::F32, lse.data, lse.dtype, labels.data,
          labels.dtype, 0, gl.data, gl.dtype, n, call.cuda.errorFlag, code);
      checkLaunch("linear_cross_entropy_backward");
    }
    return;
  }

  LogitChunk chunk(call, n, classes, inDouble(h) ? 8 : 4,
                   call.step.get<LinearCrossEntropyAttrs>().chunk);
  GemmScratch scratch(call, chunk);
  for (int64_t r0 = 0; r0 < n; r0 += chunk.rows) {
    const int64_t rows = std::min(n - r0, chunk.rows);
    chunkLogits(call, h, w, bias, r0, rows, width, classes, chunk.data);
    chunkGradients(call, gl, h, w, labels, lse, dh, dw, db, chunk.data, r0,
                   rows, code);
  }
  chunk.release();
}

void linearCrossEntropyWithGrad(const KernelCall &call) {
  // One pass over the chunks, each chunk's logits computed once: the
  // forward op's log-sum-exps, then the backward op's dlogits and GEMMs on
  // the same logits, and the loss from every row's lse at the end. The
  // log-sum-exps are kept in the workspace's first bytes
  // (LinearCrossEntropyShapes.h), the rest of the workspace holds the chunk.
  // Each kernel and GEMM is the unfused pair's with the same shapes, so the
  // results are the pair's bits with one GEMM and one pass over the logits
  // fewer per chunk.
  const TensorRef &gl = call.in(0), &h = call.in(1), &w = call.in(2),
                  &labels = call.in(3);
  const TensorRef &loss = call.out(0), &dh = call.out(1), &dw = call.out(2);
  const TensorRef *bias = biasOf(call, 4);
  const TensorRef *db = bias ? &call.out(3) : nullptr;
  checkSameDType(h, w);
  const int64_t n = h.dim(0), width = h.dim(1), classes = w.dim(0);
  const int code = static_cast<int>(call.context.stepIndex) + 1;
  const DType lseType = inDouble(h) ? DType::F64 : DType::F32;
  const size_t lseBytes = static_cast<size_t>(
      shapes::linearCrossEntropyLseBytes(n, dtypeSize(lseType)));
  CudaContext rest = call.cuda;
  // The log-sum-exps' memory: the workspace's first bytes, or (for a plan
  // that reserved less; none from memopt's compiler does) the call's own,
  // freed however the call ends.
  struct LseMemory {
    void *data = nullptr;
    cudaStream_t stream = nullptr;
    bool owned = false;
    ~LseMemory() {
      if (owned)
        cudaFreeAsync(data, stream);
    }
  } memory{nullptr, call.cuda.stream, false};
  if (call.cuda.workspace && call.cuda.workspaceBytes >= lseBytes) {
    memory.data = call.cuda.workspace;
    rest.workspace = lseBytes < call.cuda.workspaceBytes
                         ? static_cast<char *>(call.cuda.workspace) + lseBytes
                         : nullptr;
    rest.workspaceBytes = call.cuda.workspaceBytes - lseBytes;
  } else if (lseBytes > 0) {
    check(cudaMallocAsync(&memory.data, lseBytes, call.cuda.stream),
          "cudaMallocAsync");
    memory.owned = true;
  }
  const Shape lseShape{n};
  const TensorRef lse{memory.data, lseType, &lseShape, n};
  std::vector<TensorRef> forwardIn{h, w, labels}, forwardOut{loss, lse};
  if (bias)
    forwardIn.push_back(*bias);
  if (n == 0 || classes == 0 || (width == 0 && !bias)) {
    // Empty products: the pair's own handling of them, in turn.
    std::vector<TensorRef> backwardIn{gl, h, w, labels, lse},
        backwardOut{dh, dw};
    if (bias) {
      backwardIn.push_back(*bias);
      backwardOut.push_back(*db);
    }
    linearCrossEntropy(
        KernelCall{call.step, forwardIn, forwardOut, call.context, rest});
    linearCrossEntropyBackward(
        KernelCall{call.step, backwardIn, backwardOut, call.context, rest});
    return;
  }
  const KernelCall inner{call.step, forwardIn, forwardOut, call.context, rest};
  LogitChunk chunk(inner, n, classes, inDouble(h) ? 8 : 4,
                   call.step.get<LinearCrossEntropyAttrs>().chunk);
  GemmScratch scratch(inner, chunk);
  for (int64_t r0 = 0; r0 < n; r0 += chunk.rows) {
    const int64_t rows = std::min(n - r0, chunk.rows);
    chunkLogits(inner, h, w, bias, r0, rows, width, classes, chunk.data);
    chunkLse(inner, h, lse, chunk.data, r0, rows, classes);
    chunkGradients(inner, gl, h, w, labels, lse, dh, dw, db, chunk.data, r0,
                   rows, code);
  }
  // The last chunk's dlogits have been read by the GEMMs before it (stream
  // order): its memory takes the loss's partial sums.
  finishLoss(inner, h, w, bias, labels, lse, loss, chunk, code);
  chunk.release();
}

} // namespace memopt::runtime::cuda
