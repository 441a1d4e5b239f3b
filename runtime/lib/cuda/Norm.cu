//===- Norm.cu - layer/rms_norm, batch_norm_act and _inference (GPU) -----===//
//
// The CPU kernels' arithmetic (cpu/Norm.cpp) with deterministic parallel
// reductions: statistics in double with two passes (mean, then the centred
// sum of squares), fixed-order trees instead of the CPU's sequential sums.
// Element-wise formulas that the CPU evaluates in the compute type (float,
// or double when an operand is f64) are written with round-to-nearest
// intrinsics so nvcc does not contract them into fused multiply-adds: the
// CPU build has none, and a contraction would change the last bit.
//
//  * layer_norm: one warp per row, reading the row before writing it (so y
//    may overwrite x). rms_norm and its backward are the same kernels with
//    the mean fixed at 0, no shift and no grad_beta.
//  * layer_norm_backward: grad_gamma and grad_beta sum over rows, and
//    grad_x may overwrite grad_output or x, so the column sums finish before
//    grad_x is written: per-row statistics, then column partial sums over
//    chunks of rows (both in the step's workspace), then their ordered
//    sum, then grad_x one warp per row. With too small a workspace one
//    block does it all, row by row (correct, slow); the compiler reserves
//    what avoids this (both split the work by ReductionLayout.h).
//  * batch_norm_act and its backward (InPlace-ABN): one block per channel,
//    each channel's reductions done before any of its elements is written.
//
//===----------------------------------------------------------------------===//

#include "Device.cuh"

#include "memopt/Contract/ReductionLayout.h"
#include "memopt/runtime/ElementwiseMath.h"

#include <type_traits>

namespace memopt::runtime::cuda {

namespace {

/// Warps per block of the row kernels (blocks of kThreads threads).
constexpr int kRowWarps = kThreads / 32;
/// Threads of the per-channel blocks of batch_norm_act.
constexpr int kChannelThreads = 512;
/// layer_norm_backward's single-block fallback: threads, and the columns
/// each thread accumulates per sweep over the rows.
constexpr int kFallbackThreads = 1024;
constexpr int kFallbackColumns = 4;

/// Blocks for `rows` rows of one warp each.
unsigned blocksForRows(int64_t rows) {
  int64_t blocks = (rows + kRowWarps - 1) / kRowWarps;
  return static_cast<unsigned>(blocks > 65535 * 8 ? 65535 * 8 : blocks);
}

#define MEMOPT_WARP_ROWS(r, rows)                                              \
  for (int64_t r = int64_t(blockIdx.x) * kRowWarps + (threadIdx.x >> 5);       \
       r < (rows); r += int64_t(gridDim.x) * kRowWarps)

//===----------------------------------------------------------------------===//
// layer_norm
//===----------------------------------------------------------------------===//

/// The mean and inverse standard deviation (of the biased variance) of the
/// `width` elements of `x` from `base`, summed by the calling warp; for
/// rms_norm (`rms`) a mean of 0 and the inverse root mean square.
struct Stats {
  double mean = 0, invStd = 0;
};

template <typename C>
__device__ Stats warpRowStats(const void *x, DType xt, int64_t base,
                              int64_t width, double epsilon, bool rms) {
  const int lane = threadIdx.x & 31;
  const double count = static_cast<double>(width);
  Stats s;
  if (!rms) {
    double sum = 0;
    for (int64_t i = lane; i < width; i += 32)
      sum += static_cast<double>(loadAs<C>(x, xt, base + i));
    s.mean = warpSum(sum) / count;
  }
  double squares = 0;
  for (int64_t i = lane; i < width; i += 32) {
    const double d = static_cast<double>(loadAs<C>(x, xt, base + i)) - s.mean;
    squares += d * d;
  }
  s.invStd = math::inverseStd(warpSum(squares) / count, epsilon);
  return s;
}

template <typename C>
__global__ void layerNormKernel(const void *x, DType xt, const void *gamma,
                                const void *beta, DType gt, void *y,
                                int64_t rows, int64_t width, double epsilon,
                                bool rms) {
  const int lane = threadIdx.x & 31;
  MEMOPT_WARP_ROWS(r, rows) {
    const int64_t base = r * width;
    const Stats st = warpRowStats<C>(x, xt, base, width, epsilon, rms);
    const C m = static_cast<C>(st.mean), s = static_cast<C>(st.invStd);
    // (x - m) * s * gamma + beta, or x * s * gamma (rms_norm), in the
    // compute type, as the CPU.
    for (int64_t i = lane; i < width; i += 32) {
      const C v = loadAs<C>(x, xt, base + i);
      const C q =
          rms ? mulRn(mulRn(v, s), loadAs<C>(gamma, gt, i))
              : addRn(mulRn(mulRn(subRn(v, m), s), loadAs<C>(gamma, gt, i)),
                      loadAs<C>(beta, gt, i));
      storeAs(y, xt, base + i, q);
    }
  }
}

//===----------------------------------------------------------------------===//
// layer_norm_backward
//===----------------------------------------------------------------------===//

template <typename C>
__global__ void rowStatsKernel(const void *x, DType xt, double *stats,
                               int64_t rows, int64_t width, double epsilon,
                               bool rms) {
  MEMOPT_WARP_ROWS(r, rows) {
    const Stats st = warpRowStats<C>(x, xt, r * width, width, epsilon, rms);
    if ((threadIdx.x & 31) == 0) {
      stats[2 * r] = st.mean;
      stats[2 * r + 1] = st.invStd;
    }
  }
}

/// Thread (column, chunk blockIdx.y): sum dy * xhat and sum dy over the
/// chunk's rows, in row order.
template <typename C>
__global__ void columnPartialsKernel(const void *dy, const void *x, DType xt,
                                     const double *stats, double *partials,
                                     int64_t rows, int64_t width,
                                     int64_t rowsPerChunk) {
  const int64_t col = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (col >= width)
    return;
  const int64_t chunk = blockIdx.y;
  const int64_t r0 = chunk * rowsPerChunk;
  const int64_t r1 = r0 + rowsPerChunk < rows ? r0 + rowsPerChunk : rows;
  double dgamma = 0, dbeta = 0;
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t k = r * width + col;
    const double xhat =
        (static_cast<double>(loadAs<C>(x, xt, k)) - stats[2 * r]) *
        stats[2 * r + 1];
    const double d = static_cast<double>(loadAs<C>(dy, xt, k));
    dgamma += d * xhat;
    dbeta += d;
  }
  partials[2 * (chunk * width + col)] = dgamma;
  partials[2 * (chunk * width + col) + 1] = dbeta;
}

/// Thread per column: the chunks' partial sums added in order (dbeta null
/// for rms_norm, which has none).
template <typename C>
__global__ void columnFinishKernel(const double *partials, int64_t chunks,
                                   int64_t width, void *dgamma, void *dbeta,
                                   DType gt) {
  MEMOPT_GRID_STRIDE(col, width) {
    double g = 0, b = 0;
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      g += partials[2 * (chunk * width + col)];
      b += partials[2 * (chunk * width + col) + 1];
    }
    storeAs(dgamma, gt, col, static_cast<C>(g));
    if (dbeta)
      storeAs(dbeta, gt, col, static_cast<C>(b));
  }
}

/// grad_x of element `i` of a row: invStd * (g - mean(g) - xhat *
/// mean(g * xhat)) with g = dy * gamma, in double as the CPU.
template <typename C>
__device__ inline void
layerNormGradX(const void *dy, const void *x, DType xt, const void *gamma,
               DType gt, void *dx, int64_t base, int64_t i, double mean,
               double invStd, double meanG, double meanGXhat) {
  const double xhat =
      (static_cast<double>(loadAs<C>(x, xt, base + i)) - mean) * invStd;
  const double g = static_cast<double>(loadAs<C>(dy, xt, base + i)) *
                   static_cast<double>(loadAs<C>(gamma, gt, i));
  storeAs(dx, xt, base + i,
          static_cast<C>(
              mulRn(invStd, subRn(subRn(g, meanG), mulRn(xhat, meanGXhat)))));
}

/// grad_x, one warp per row, with the statistics of rowStatsKernel
/// (rms_norm's without the mean(g) term).
template <typename C>
__global__ void layerNormGradXKernel(const void *dy, const void *x, DType xt,
                                     const void *gamma, DType gt,
                                     const double *stats, void *dx,
                                     int64_t rows, int64_t width, bool rms) {
  const int lane = threadIdx.x & 31;
  const double count = static_cast<double>(width);
  MEMOPT_WARP_ROWS(r, rows) {
    const int64_t base = r * width;
    const double mean = stats[2 * r], invStd = stats[2 * r + 1];
    double sumG = 0, sumGXhat = 0;
    for (int64_t i = lane; i < width; i += 32) {
      const double xhat =
          (static_cast<double>(loadAs<C>(x, xt, base + i)) - mean) * invStd;
      const double g = static_cast<double>(loadAs<C>(dy, xt, base + i)) *
                       static_cast<double>(loadAs<C>(gamma, gt, i));
      sumG += g;
      sumGXhat += g * xhat;
    }
    // Every lane has read its elements: the row may be overwritten.
    const double meanG = rms ? 0.0 : warpSum(sumG) / count;
    const double meanGXhat = warpSum(sumGXhat) / count;
    for (int64_t i = lane; i < width; i += 32)
      layerNormGradX<C>(dy, x, xt, gamma, gt, dx, base, i, mean, invStd, meanG,
                        meanGXhat);
  }
}

/// Everything in one block, row by row. Thread t accumulates the column
/// sums of columns tile0 + t + k * kFallbackThreads; wider rows take more
/// sweeps over the rows, the last of which writes grad_x (a row's grad_x
/// after that row's reductions, each element by the thread that read it).
template <typename C>
__global__ void __launch_bounds__(kFallbackThreads)
    layerNormBackwardSingleBlockKernel(const void *dy, const void *x, DType xt,
                                       const void *gamma, DType gt, void *dx,
                                       void *dgamma, void *dbeta, int64_t rows,
                                       int64_t width, double epsilon,
                                       bool rms) {
  const int t = threadIdx.x;
  const double count = static_cast<double>(width);
  const int64_t tile = int64_t(kFallbackColumns) * kFallbackThreads;
  for (int64_t tile0 = 0; tile0 < width; tile0 += tile) {
    const bool last = tile0 + tile >= width;
    double accG[kFallbackColumns], accB[kFallbackColumns];
#pragma unroll
    for (int k = 0; k < kFallbackColumns; ++k)
      accG[k] = accB[k] = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t base = r * width;
      double sum = 0;
      if (!rms)
        for (int64_t i = t; i < width; i += kFallbackThreads)
          sum += static_cast<double>(loadAs<C>(x, xt, base + i));
      const double mean = rms ? 0.0 : blockSum(sum) / count;
      double squares = 0;
      for (int64_t i = t; i < width; i += kFallbackThreads) {
        const double d = static_cast<double>(loadAs<C>(x, xt, base + i)) - mean;
        squares += d * d;
      }
      const double invStd =
          math::inverseStd(blockSum(squares) / count, epsilon);
      double meanG = 0, meanGXhat = 0;
      if (last) {
        double sumG = 0, sumGXhat = 0;
        for (int64_t i = t; i < width; i += kFallbackThreads) {
          const double xhat =
              (static_cast<double>(loadAs<C>(x, xt, base + i)) - mean) * invStd;
          const double g = static_cast<double>(loadAs<C>(dy, xt, base + i)) *
                           static_cast<double>(loadAs<C>(gamma, gt, i));
          sumG += g;
          sumGXhat += g * xhat;
        }
        meanG = rms ? 0.0 : blockSum(sumG) / count;
        meanGXhat = blockSum(sumGXhat) / count;
        for (int64_t i = t; i < tile0; i += kFallbackThreads)
          layerNormGradX<C>(dy, x, xt, gamma, gt, dx, base, i, mean, invStd,
                            meanG, meanGXhat);
      }
#pragma unroll
      for (int k = 0; k < kFallbackColumns; ++k) {
        const int64_t i = tile0 + t + int64_t(k) * kFallbackThreads;
        if (i >= width)
          continue;
        const double xhat =
            (static_cast<double>(loadAs<C>(x, xt, base + i)) - mean) * invStd;
        const double d = static_cast<double>(loadAs<C>(dy, xt, base + i));
        accG[k] += d * xhat;
        accB[k] += d;
        if (last)
          layerNormGradX<C>(dy, x, xt, gamma, gt, dx, base, i, mean, invStd,
                            meanG, meanGXhat);
      }
    }
#pragma unroll
    for (int k = 0; k < kFallbackColumns; ++k) {
      const int64_t i = tile0 + t + int64_t(k) * kFallbackThreads;
      if (i < width) {
        storeAs(dgamma, gt, i, static_cast<C>(accG[k]));
        if (dbeta)
          storeAs(dbeta, gt, i, static_cast<C>(accB[k]));
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// batch_norm_act and its backward
//===----------------------------------------------------------------------===//

/// Element `k` of channel `ch` of an N x C x inner tensor (k < N * inner).
__device__ inline int64_t channelIndex(int64_t k, int64_t c, int64_t ch,
                                       int64_t inner) {
  const int64_t img = k / inner;
  return (img * c + ch) * inner + (k - img * inner);
}

template <typename C, InvertibleActivation Act>
__device__ inline C activate(C v, C alpha) {
  if constexpr (Act == InvertibleActivation::Elu)
    return math::elu(v, alpha);
  else
    return math::leakyRelu(v, alpha);
}

/// One block per channel: the training-mode batch norm of cpu/Norm.cpp
/// followed by the activation.
template <typename C, InvertibleActivation Act>
__global__ void __launch_bounds__(kChannelThreads)
    batchNormActKernel(const void *x, DType xt, const void *gamma,
                       const void *beta, const void *runMean,
                       const void *runVar, DType gt, void *y, void *newMean,
                       void *newVar, void *savedInvStd, int64_t n, int64_t c,
                       int64_t inner, double epsilon, double momentum,
                       double alphaValue) {
  const int64_t ch = blockIdx.x, count = n * inner;
  double sum = 0;
  for (int64_t k = threadIdx.x; k < count; k += blockDim.x)
    sum += static_cast<double>(loadAs<C>(x, xt, channelIndex(k, c, ch, inner)));
  const double mean = blockSum(sum) / static_cast<double>(count);
  double squares = 0;
  for (int64_t k = threadIdx.x; k < count; k += blockDim.x) {
    const double d =
        static_cast<double>(loadAs<C>(x, xt, channelIndex(k, c, ch, inner))) -
        mean;
    squares += d * d;
  }
  squares = blockSum(squares);
  const double var = squares / static_cast<double>(count);
  const double unbiased = squares / static_cast<double>(count - 1);
  const double invStd = math::inverseStd(var, epsilon);
  // y = (x - mean) * invStd * gamma + beta, as one multiply-add.
  const double scale =
      mulRn(static_cast<double>(loadAs<C>(gamma, gt, ch)), invStd);
  const C s = static_cast<C>(scale);
  const C shift = static_cast<C>(
      subRn(static_cast<double>(loadAs<C>(beta, gt, ch)), mulRn(mean, scale)));
  const C alpha = static_cast<C>(alphaValue);
  // The channel has been read (blockSum synchronises): y may overwrite x.
  for (int64_t k = threadIdx.x; k < count; k += blockDim.x) {
    const int64_t i = channelIndex(k, c, ch, inner);
    const C v = addRn(mulRn(loadAs<C>(x, xt, i), s), shift);
    storeAs(y, xt, i, activate<C, Act>(v, alpha));
  }
  if (threadIdx.x == 0) {
    storeAs(
        newMean, gt, ch,
        static_cast<C>(math::runningUpdate(
            static_cast<double>(loadAs<C>(runMean, gt, ch)), mean, momentum)));
    storeAs(newVar, gt, ch,
            static_cast<C>(math::runningUpdate(
                static_cast<double>(loadAs<C>(runVar, gt, ch)), unbiased,
                momentum)));
    storeAs(savedInvStd, gt, ch, static_cast<C>(invStd));
  }
}

/// dy * f'(z) from the output y, in the compute type (as the activation
/// backward kernels).
template <typename C, InvertibleActivation Act>
__device__ inline C activationGrad(C d, C out, C alpha) {
  if constexpr (Act == InvertibleActivation::Elu)
    return math::eluBackwardFromOutput(d, out, alpha);
  else
    return math::leakyReluBackwardFromOutput(d, out, alpha);
}

template <typename C, InvertibleActivation Act>
__device__ inline C activationInverse(C out, C alpha) {
  if constexpr (Act == InvertibleActivation::Elu)
    return math::eluInverse(out, alpha);
  else
    return math::leakyReluInverse(out, alpha);
}

/// One block per channel: batch_norm_backward with xhat rebuilt from the
/// output, xhat = (f^-1(y) - beta) / gamma (0 where gamma = 0).
template <typename C, InvertibleActivation Act>
__global__ void __launch_bounds__(kChannelThreads)
    batchNormActBackwardKernel(const void *dy, const void *y, DType yt,
                               const void *gamma, const void *beta,
                               const void *invStd, DType gt, void *dx,
                               void *dgamma, void *dbeta, int64_t n, int64_t c,
                               int64_t inner, double alphaValue) {
  const int64_t ch = blockIdx.x, count = n * inner;
  const double g = static_cast<double>(loadAs<C>(gamma, gt, ch));
  const double b = static_cast<double>(loadAs<C>(beta, gt, ch));
  const C alpha = static_cast<C>(alphaValue);
  auto xhatOf = [&](C out) {
    return g != 0
               ? (static_cast<double>(activationInverse<C, Act>(out, alpha)) -
                  b) /
                     g
               : 0.0;
  };
  double sumDz = 0, sumDzXhat = 0;
  for (int64_t k = threadIdx.x; k < count; k += blockDim.x) {
    const int64_t i = channelIndex(k, c, ch, inner);
    const C out = loadAs<C>(y, yt, i);
    const double dz = static_cast<double>(
        activationGrad<C, Act>(loadAs<C>(dy, yt, i), out, alpha));
    sumDz += dz;
    sumDzXhat += dz * xhatOf(out);
  }
  sumDz = blockSum(sumDz);
  sumDzXhat = blockSum(sumDzXhat);
  // The channel has been read: grad_x may overwrite grad or output.
  const double scale = g * static_cast<double>(loadAs<C>(invStd, gt, ch));
  const double meanDz = sumDz / static_cast<double>(count);
  const double meanDzXhat = sumDzXhat / static_cast<double>(count);
  for (int64_t k = threadIdx.x; k < count; k += blockDim.x) {
    const int64_t i = channelIndex(k, c, ch, inner);
    const C out = loadAs<C>(y, yt, i);
    const double dz = static_cast<double>(
        activationGrad<C, Act>(loadAs<C>(dy, yt, i), out, alpha));
    storeAs(
        dx, yt, i,
        static_cast<C>(mulRn(
            scale, subRn(subRn(dz, meanDz), mulRn(xhatOf(out), meanDzXhat)))));
  }
  if (threadIdx.x == 0) {
    storeAs(dgamma, gt, ch, static_cast<C>(sumDzXhat));
    storeAs(dbeta, gt, ch, static_cast<C>(sumDz));
  }
}

/// Calls `f(C{}, A{})` with C the compute type and A the activation as an
/// integral constant.
template <typename F>
void dispatchNormAct(const KernelCall &call, InvertibleActivation activation,
                     F &&f) {
  using Leaky = std::integral_constant<InvertibleActivation,
                                       InvertibleActivation::LeakyRelu>;
  using Elu =
      std::integral_constant<InvertibleActivation, InvertibleActivation::Elu>;
  const bool inDouble = computesInDouble(call);
  if (activation == InvertibleActivation::Elu) {
    if (inDouble)
      f(double{}, Elu{});
    else
      f(float{}, Elu{});
  } else {
    if (inDouble)
      f(double{}, Leaky{});
    else
      f(float{}, Leaky{});
  }
}

/// x's rows for layer norm (gamma's element count is the row width).
struct Rows {
  int64_t rows = 0, width = 0;
};

Rows layerNormRows(const TensorRef &x, const TensorRef &gamma) {
  return {x.numElements / gamma.numElements, gamma.numElements};
}

} // namespace

namespace {

/// layer_norm (x, gamma, beta) or rms_norm (x, gamma).
void rowNorm(const KernelCall &call, bool rms) {
  const TensorRef &x = call.in(0), &gamma = call.in(1), &y = call.out(0);
  const void *beta = rms ? nullptr : call.in(2).data;
  const double epsilon = call.step.get<LayerNormAttrs>().epsilon;
  const Rows r = layerNormRows(x, gamma);
  if (computesInDouble(call))
    layerNormKernel<double>
        <<<blocksForRows(r.rows), kThreads, 0, call.cuda.stream>>>(
            x.data, x.dtype, gamma.data, beta, gamma.dtype, y.data, r.rows,
            r.width, epsilon, rms);
  else
    layerNormKernel<float>
        <<<blocksForRows(r.rows), kThreads, 0, call.cuda.stream>>>(
            x.data, x.dtype, gamma.data, beta, gamma.dtype, y.data, r.rows,
            r.width, epsilon, rms);
  checkLaunch(rms ? "rms_norm" : "layer_norm");
}

/// layer_norm_backward, or rms_norm_backward (`rms`: no grad_beta).
template <typename C>
void rowNormBackwardImpl(const KernelCall &call, bool rms) {
  const double epsilon = call.step.get<NormBackwardAttrs>().epsilon;
  const char *name = rms ? "rms_norm_backward" : "layer_norm_backward";
  const TensorRef &dy = call.in(0), &x = call.in(1), &gamma = call.in(2);
  const TensorRef &dx = call.out(0), &dgamma = call.out(1);
  void *dbeta = rms ? nullptr : call.out(2).data;
  const Rows r = layerNormRows(x, gamma);
  cudaStream_t stream = call.cuda.stream;
  // The split the compiler reserved the workspace for (ReductionLayout.h),
  // with as many chunks as the workspace holds.
  const size_t statsBytes =
      static_cast<size_t>(reduction::layerNormStatsBytes(r.rows));
  const size_t chunkBytes =
      static_cast<size_t>(reduction::layerNormChunkBytes(r.width));
  const size_t available = call.cuda.workspace ? call.cuda.workspaceBytes : 0;
  if (available < statsBytes + chunkBytes) {
    layerNormBackwardSingleBlockKernel<C><<<1, kFallbackThreads, 0, stream>>>(
        dy.data, x.data, x.dtype, gamma.data, gamma.dtype, dx.data, dgamma.data,
        dbeta, r.rows, r.width, epsilon, rms);
    checkLaunch(name);
    return;
  }
  const reduction::LayerNormBackwardChunks plan =
      reduction::layerNormBackwardChunks(
          r.rows, r.width,
          static_cast<int64_t>((available - statsBytes) / chunkBytes));
  double *stats = static_cast<double *>(call.cuda.workspace);
  double *partials = stats + 2 * r.rows;

  rowStatsKernel<C><<<blocksForRows(r.rows), kThreads, 0, stream>>>(
      x.data, x.dtype, stats, r.rows, r.width, epsilon, rms);
  checkLaunch(name);
  const dim3 grid(static_cast<unsigned>((r.width + kThreads - 1) / kThreads),
                  static_cast<unsigned>(plan.chunks));
  columnPartialsKernel<C>
      <<<grid, kThreads, 0, stream>>>(dy.data, x.data, x.dtype, stats, partials,
                                      r.rows, r.width, plan.rowsPerChunk);
  checkLaunch(name);
  columnFinishKernel<C><<<blocksFor(r.width), kThreads, 0, stream>>>(
      partials, plan.chunks, r.width, dgamma.data, dbeta, gamma.dtype);
  checkLaunch(name);
  // After the column sums (stream order): grad_x may overwrite dy or x.
  layerNormGradXKernel<C><<<blocksForRows(r.rows), kThreads, 0, stream>>>(
      dy.data, x.data, x.dtype, gamma.data, gamma.dtype, stats, dx.data, r.rows,
      r.width, rms);
  checkLaunch(name);
}

void rowNormBackward(const KernelCall &call, bool rms) {
  if (computesInDouble(call))
    rowNormBackwardImpl<double>(call, rms);
  else
    rowNormBackwardImpl<float>(call, rms);
}

} // namespace

void layerNorm(const KernelCall &call) { rowNorm(call, /*rms=*/false); }

void rmsNorm(const KernelCall &call) { rowNorm(call, /*rms=*/true); }

void layerNormBackward(const KernelCall &call) {
  rowNormBackward(call, /*rms=*/false);
}

void rmsNormBackward(const KernelCall &call) {
  rowNormBackward(call, /*rms=*/true);
}

void batchNormAct(const KernelCall &call) {
  const TensorRef &x = call.in(0), &gamma = call.in(1);
  const BatchNormActAttrs &a = call.step.get<BatchNormActAttrs>();
  const int64_t n = x.dim(0), c = x.dim(1);
  const int64_t inner = x.numElements / (n * c);
  dispatchNormAct(call, a.activation, [&](auto tag, auto act) {
    using C = decltype(tag);
    batchNormActKernel<C, decltype(act)::value>
        <<<static_cast<unsigned>(c), kChannelThreads, 0, call.cuda.stream>>>(
            x.data, x.dtype, gamma.data, call.in(2).data, call.in(3).data,
            call.in(4).data, gamma.dtype, call.out(0).data, call.out(1).data,
            call.out(2).data, call.out(3).data, n, c, inner, a.epsilon,
            a.momentum, a.alpha);
  });
  checkLaunch("batch_norm_act");
}

void batchNormActBackward(const KernelCall &call) {
  const TensorRef &dy = call.in(0), &y = call.in(1), &gamma = call.in(2);
  const BatchNormActBackwardAttrs &a =
      call.step.get<BatchNormActBackwardAttrs>();
  const int64_t n = y.dim(0), c = y.dim(1);
  const int64_t inner = y.numElements / (n * c);
  dispatchNormAct(call, a.activation, [&](auto tag, auto act) {
    using C = decltype(tag);
    batchNormActBackwardKernel<C, decltype(act)::value>
        <<<static_cast<unsigned>(c), kChannelThreads, 0, call.cuda.stream>>>(
            dy.data, y.data, y.dtype, gamma.data, call.in(3).data,
            call.in(4).data, gamma.dtype, call.out(0).data, call.out(1).data,
            call.out(2).data, n, c, inner, a.alpha);
  });
  checkLaunch("batch_norm_act_backward");
}

//===----------------------------------------------------------------------===//
// batch_norm_inference
//===----------------------------------------------------------------------===//

namespace {

/// y = x·s + shift per channel, with s = gamma/√(var + ε) and shift =
/// beta − mean·s taken in double and rounded to the compute type once, as
/// the CPU kernel does. Element-wise, so y may be x (cuDNN does not
/// document in-place batch norm), and any float dtype pairing of x and the
/// per-channel operands runs.
template <typename C>
__global__ void
batchNormInferenceKernel(const void *x, DType xt, const void *gamma,
                         const void *beta, const void *mean, const void *var,
                         DType pt, void *y, int64_t total, int64_t channels,
                         int64_t inner, double epsilon) {
  MEMOPT_GRID_STRIDE(i, total) {
    const int64_t ch = (i / inner) % channels;
    const double invStd =
        math::inverseStd(loadAs<double>(var, pt, ch), epsilon);
    const double scale = __dmul_rn(loadAs<double>(gamma, pt, ch), invStd);
    const C s = static_cast<C>(scale);
    const C shift = static_cast<C>(
        __dsub_rn(loadAs<double>(beta, pt, ch),
                  __dmul_rn(loadAs<double>(mean, pt, ch), scale)));
    storeAs(y, xt, i, addRn(mulRn(loadAs<C>(x, xt, i), s), shift));
  }
}

} // namespace

void batchNormInference(const KernelCall &call) {
  // (x, gamma, beta, running_mean, running_var) -> y
  const TensorRef &x = call.in(0), &gamma = call.in(1);
  if (x.numElements == 0)
    return;
  const double epsilon = call.step.get<BatchNormAttrs>().epsilon;
  const int64_t c = x.dim(1);
  const int64_t inner = x.numElements / (x.dim(0) * c);
  dispatchCompute(call, [&](auto tag) {
    using C = decltype(tag);
    batchNormInferenceKernel<C>
        <<<blocksFor(x.numElements), kThreads, 0, call.cuda.stream>>>(
            x.data, x.dtype, gamma.data, call.in(2).data, call.in(3).data,
            call.in(4).data, gamma.dtype, call.out(0).data, x.numElements, c,
            inner, epsilon);
  });
  checkLaunch("batch_norm_inference");
}

} // namespace memopt::runtime::cuda
