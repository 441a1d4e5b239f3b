//===- Adafactor.cu - transformers.Adafactor's step on the GPU ------------===//
//
// The CUDA version of cpu/Optimizer.cpp's adafactor_update, in a few
// kernels on the step's stream, with the reductions' intermediate sums in
// the step's planned workspace (memopt/Contract/OptimizerShapes.h), all in
// double and summed in a fixed order, so a step is deterministic:
//  1. the new state: for a factored parameter one block per row of each
//     matrix sums g² + eps1 over the row (the row factor) and one thread
//     per column sums it over the column (the column factor), then one
//     block per matrix averages its new row factor; otherwise the second
//     moment element by element;
//  2. up to kAdafactorPartials blocks sum the squares of the old parameter
//     and of the unclipped update into per-block partial sums;
//  3. every block adds the partial sums in order (the parameter's RMS and
//     the update's), and each thread writes its parameters' new values.
// A nonzero `skip` flag runs a copy of every old value instead; a step
// count below 1 or not finite sets the error flag.
//
// New values may overwrite old ones as Kernel.h allows: the new parameter
// only the parameter (read by step 2 before step 3 writes it) and each new
// state tensor only its own old value (read element by element before it
// is written).
//
//===----------------------------------------------------------------------===//

#include "Device.cuh"

#include "memopt/Contract/OptimizerShapes.h"
#include "memopt/runtime/ElementwiseMath.h"
#include "memopt/runtime/LossScale.h"

#include <algorithm>

namespace memopt::runtime::cuda {

namespace {

constexpr int kPartials = static_cast<int>(shapes::kAdafactorPartials);

template <typename T> struct AdafactorParams {
  const void *param, *grad, *step;
  void *newParam;
  /// Factored: row and column factors; otherwise `rowIn`/`rowOut` are the
  /// second moment.
  const T *rowIn, *colIn;
  T *rowOut, *colOut;
  const float *skip, *lossScale;
  DType paramDType, gradDType, stepDType;
  bool factored;
  int64_t n, batches, rows, cols;
  double lr, eps1, eps2, clipThreshold, decayRate, weightDecay;
  bool scaleParameter;
  /// Workspace: row means (factored), then the parameter's and the
  /// update's partial sums of squares.
  double *rowMeans, *paramPartials, *updatePartials;
  int *errorFlag;
  int errorCode;
};

template <typename T>
__device__ inline bool skipped(const AdafactorParams<T> &a) {
  return a.skip && math::flagSet(*a.skip);
}

/// β₂ₜ = 1 − t^decay_rate, or a negative value (and the error flag) for a
/// step count below 1 or not finite.
template <typename T>
__device__ inline double beta2t(const AdafactorParams<T> &a) {
  const double t = static_cast<double>(loadAs<T>(a.step, a.stepDType, 0));
  if (!(t >= 1) || math::nonFinite(t)) {
    if (blockIdx.x == 0 && threadIdx.x == 0)
      raiseError(a.errorFlag, a.errorCode);
    return -1;
  }
  return 1 - ::pow(t, a.decayRate);
}

template <typename T>
__device__ inline T gradient(const AdafactorParams<T> &a, int64_t i) {
  const T g = loadAs<T>(a.grad, a.gradDType, i);
  if (!a.lossScale)
    return g;
  return static_cast<T>(
      math::unscaleValue(g, math::inverseLossScale(*a.lossScale)));
}

template <typename T>
__device__ inline double squaredPlusEps(const AdafactorParams<T> &a,
                                        int64_t i) {
  const T g = gradient(a, i);
  return static_cast<double>(addRn(mulRn(g, g), static_cast<T>(a.eps1)));
}

/// β·old + (1 − β)·mean, rounded as the CPU backend rounds it.
template <typename T>
__device__ inline T decayed(double beta, T old, double mean) {
  const T b = static_cast<T>(beta);
  return addRn(mulRn(b, old), mulRn(subRn(T(1), b), static_cast<T>(mean)));
}

template <typename T> __global__ void copyKernel(AdafactorParams<T> a) {
  if (!skipped(a))
    return;
  const size_t pBytes = dtypeSize(a.paramDType);
  MEMOPT_GRID_STRIDE(i, a.n) {
    if (a.newParam != a.param)
      copyElement(a.newParam, i, a.param, i, pBytes);
  }
  const int64_t rowCount = a.factored ? a.batches * a.rows : a.n;
  MEMOPT_GRID_STRIDE(i, rowCount) {
    if (a.rowOut != a.rowIn)
      a.rowOut[i] = a.rowIn[i];
  }
  if (a.factored)
    MEMOPT_GRID_STRIDE(i, a.batches * a.cols) {
      if (a.colOut != a.colIn)
        a.colOut[i] = a.colIn[i];
    }
}

/// One block per row of each matrix: the new row factor.
template <typename T> __global__ void rowKernel(AdafactorParams<T> a) {
  const double beta = beta2t(a);
  if (skipped(a) || beta < 0)
    return;
  const int64_t j = blockIdx.x; // b * rows + r
  double sum = 0;
  for (int64_t c = threadIdx.x; c < a.cols; c += kThreads)
    sum += squaredPlusEps(a, j * a.cols + c);
  sum = blockSum(sum);
  if (threadIdx.x == 0)
    a.rowOut[j] = decayed(beta, a.rowIn[j], sum / static_cast<double>(a.cols));
}

/// One thread per column of each matrix: the new column factor.
template <typename T> __global__ void columnKernel(AdafactorParams<T> a) {
  const double beta = beta2t(a);
  if (skipped(a) || beta < 0)
    return;
  MEMOPT_GRID_STRIDE(j, a.batches * a.cols) {
    const int64_t b = j / a.cols, c = j % a.cols;
    double sum = 0;
    for (int64_t r = 0; r < a.rows; ++r)
      sum += squaredPlusEps(a, (b * a.rows + r) * a.cols + c);
    a.colOut[j] = decayed(beta, a.colIn[j], sum / static_cast<double>(a.rows));
  }
}

/// One block per matrix: the mean of its new row factor.
template <typename T> __global__ void rowMeanKernel(AdafactorParams<T> a) {
  if (skipped(a) || beta2t(a) < 0)
    return;
  const int64_t b = blockIdx.x;
  double sum = 0;
  for (int64_t r = threadIdx.x; r < a.rows; r += kThreads)
    sum += static_cast<double>(a.rowOut[b * a.rows + r]);
  sum = blockSum(sum);
  if (threadIdx.x == 0)
    a.rowMeans[b] = sum / static_cast<double>(a.rows);
}

/// The unfactored second moment, element by element.
template <typename T> __global__ void momentKernel(AdafactorParams<T> a) {
  const double beta = beta2t(a);
  if (skipped(a) || beta < 0)
    return;
  MEMOPT_GRID_STRIDE(i, a.n) {
    a.rowOut[i] = decayed(beta, a.rowIn[i], squaredPlusEps(a, i));
  }
}

/// The update before clipping, from the new state.
template <typename T>
__device__ inline T unclipped(const AdafactorParams<T> &a, int64_t i) {
  const T g = gradient(a, i);
  if (!a.factored)
    return mulRn(divRn(T(1), sqrtRn(a.rowOut[i])), g);
  const int64_t c = i % a.cols, br = i / a.cols, b = br / a.rows;
  const T rFactor =
      divRn(T(1), sqrtRn(divRn(a.rowOut[br], static_cast<T>(a.rowMeans[b]))));
  const T cFactor = divRn(T(1), sqrtRn(a.colOut[b * a.cols + c]));
  return mulRn(g, mulRn(rFactor, cFactor));
}

/// Per-block partial sums of the squares of the old parameter and of the
/// unclipped update.
template <typename T> __global__ void partialsKernel(AdafactorParams<T> a) {
  if (skipped(a) || beta2t(a) < 0)
    return;
  double pSum = 0, uSum = 0;
  MEMOPT_GRID_STRIDE(i, a.n) {
    const double p = static_cast<double>(loadAs<T>(a.param, a.paramDType, i));
    const double u = static_cast<double>(unclipped(a, i));
    pSum += p * p;
    uSum += u * u;
  }
  pSum = blockSum(pSum);
  uSum = blockSum(uSum);
  if (threadIdx.x == 0) {
    a.paramPartials[blockIdx.x] = pSum;
    a.updatePartials[blockIdx.x] = uSum;
  }
}

template <typename T>
__global__ void applyKernel(AdafactorParams<T> a, int partials) {
  __shared__ T alpha, clip;
  if (skipped(a) || beta2t(a) < 0)
    return;
  if (threadIdx.x == 0) {
    double pSum = 0, uSum = 0;
    for (int k = 0; k < partials; ++k) {
      pSum += a.paramPartials[k];
      uSum += a.updatePartials[k];
    }
    const double count = static_cast<double>(a.n);
    const T rmsP = static_cast<T>(::sqrt(pSum / count));
    const T rmsU = static_cast<T>(::sqrt(uSum / count));
    alpha = static_cast<T>(a.lr);
    if (a.scaleParameter)
      alpha = mulRn(alpha, max(static_cast<T>(a.eps2), rmsP));
    clip = max(T(1), divRn(rmsU, static_cast<T>(a.clipThreshold)));
  }
  __syncthreads();
  const T decayFactor = mulRn(-static_cast<T>(a.weightDecay), alpha);
  MEMOPT_GRID_STRIDE(i, a.n) {
    const T u = mulRn(divRn(unclipped(a, i), clip), alpha);
    T p = loadAs<T>(a.param, a.paramDType, i);
    if (a.weightDecay != 0)
      p = addRn(p, mulRn(p, decayFactor));
    storeAs(a.newParam, a.paramDType, i, subRn(p, u));
  }
}

template <typename T> void adafactorImpl(const KernelCall &call) {
  const AdafactorAttrs &attrs = call.step.get<AdafactorAttrs>();
  const TensorRef &param = call.in(0);
  AdafactorParams<T> a{};
  a.factored = shapes::adafactorFactored(*param.shape);
  const size_t k = a.factored ? 2 : 1;
  a.param = param.data;
  a.grad = call.in(1).data;
  a.rowIn = call.in(2).as<const T>();
  a.rowOut = call.out(1).as<T>();
  if (a.factored) {
    a.colIn = call.in(3).as<const T>();
    a.colOut = call.out(2).as<T>();
  }
  a.step = call.in(2 + k).data;
  a.skip =
      call.inputs.size() > 3 + k ? call.in(3 + k).as<const float>() : nullptr;
  a.lossScale =
      call.inputs.size() > 4 + k ? call.in(4 + k).as<const float>() : nullptr;
  a.newParam = call.out(0).data;
  a.paramDType = param.dtype;
  a.gradDType = call.in(1).dtype;
  a.stepDType = call.in(2 + k).dtype;
  a.n = param.numElements;
  if (a.factored) {
    a.cols = param.dim(param.rank() - 1);
    a.rows = param.dim(param.rank() - 2);
    a.batches = a.rows * a.cols == 0 ? 0 : a.n / (a.rows * a.cols);
  }
  a.lr = attrs.lr;
  a.eps1 = attrs.eps1;
  a.eps2 = attrs.eps2;
  a.clipThreshold = attrs.clipThreshold;
  a.decayRate = attrs.decayRate;
  a.weightDecay = attrs.weightDecay;
  a.scaleParameter = attrs.scaleParameter;
  a.errorFlag = call.cuda.errorFlag;
  a.errorCode = static_cast<int>(call.context.stepIndex) + 1;
  if (a.n == 0)
    return;
  const int64_t doubles = shapes::adafactorWorkspaceDoubles(*param.shape);
  if (!call.cuda.workspace ||
      call.cuda.workspaceBytes < static_cast<size_t>(8 * doubles))
    throw Error(ErrorCode::KernelFailure,
                runtime::concat("adafactor_update needs its planned "
                                "workspace of ",
                                8 * doubles, " bytes, got ",
                                call.cuda.workspaceBytes));
  double *ws = static_cast<double *>(call.cuda.workspace);
  a.rowMeans = ws;
  a.paramPartials = ws + (a.factored ? a.batches : 0);
  a.updatePartials = a.paramPartials + kPartials;

  cudaStream_t stream = call.cuda.stream;
  copyKernel<T><<<blocksFor(a.n), kThreads, 0, stream>>>(a);
  if (a.factored) {
    if (a.batches * a.rows > 0)
      rowKernel<T>
          <<<static_cast<unsigned>(a.batches * a.rows), kThreads, 0, stream>>>(
              a);
    columnKernel<T><<<blocksFor(a.batches * a.cols), kThreads, 0, stream>>>(a);
    if (a.batches > 0)
      rowMeanKernel<T>
          <<<static_cast<unsigned>(a.batches), kThreads, 0, stream>>>(a);
  } else {
    momentKernel<T><<<blocksFor(a.n), kThreads, 0, stream>>>(a);
  }
  const int partials = static_cast<int>(
      std::min<int64_t>(kPartials, (a.n + kThreads - 1) / kThreads));
  partialsKernel<T><<<partials, kThreads, 0, stream>>>(a);
  applyKernel<T><<<blocksFor(a.n), kThreads, 0, stream>>>(a, partials);
  checkLaunch("adafactor_update");
}

} // namespace

void adafactorUpdate(const KernelCall &call) {
  dispatchCompute(call, [&](auto tag) { adafactorImpl<decltype(tag)>(call); });
}

} // namespace memopt::runtime::cuda
