//===- ClipNorm.cu - clip_grad_norm_'s coefficient on the GPU -------------===//
//
// The CUDA version of cpu/Optimizer.cpp's clip_coefficient: for each
// gradient in turn, up to kPartials blocks write partial sums of squares
// (in double) to the step's planned workspace and one thread adds them, in
// order, to a running sum there; a last thread turns the sum into the
// factor (memopt/runtime/ClipNorm.h, shared with the CPU backend). Every
// sum is taken in a fixed order, so the factor is deterministic. square_sum
// (ZeRO stage 2's partial sums) is the same sum, copied out.
//
//===----------------------------------------------------------------------===//

#include "Device.cuh"

#include "memopt/Contract/OptimizerShapes.h"
#include "memopt/runtime/ClipNorm.h"

#include <algorithm>

namespace memopt::runtime::cuda {

namespace {

constexpr int kPartials = static_cast<int>(shapes::kAdafactorPartials);

__global__ void partialSquaresKernel(const void *g, DType dtype, int64_t n,
                                     double *partials) {
  double sum = 0;
  MEMOPT_GRID_STRIDE(i, n) {
    const double x = loadDouble(g, dtype, i);
    sum += x * x;
  }
  sum = blockSum(sum);
  if (threadIdx.x == 0)
    partials[blockIdx.x] = sum;
}

/// total += the first `count` partial sums, in order (`reset`: total = them).
__global__ void accumulateKernel(double *total, const double *partials,
                                 int count, bool reset) {
  double sum = reset ? 0.0 : *total;
  for (int k = 0; k < count; ++k)
    sum += partials[k];
  *total = sum;
}

__global__ void coefficientKernel(const double *total, double maxNorm,
                                  float *out) {
  *out = math::clipCoefficient(*total, maxNorm);
}

} // namespace

namespace {

/// The sum of the squares of every input element, in order, into the
/// step's workspace; returns where the total lies (on the device).
double *sumOfSquares(const KernelCall &call, const char *kernel) {
  const size_t bytes = 8 * shapes::kClipCoefficientWorkspaceDoubles;
  if (!call.cuda.workspace || call.cuda.workspaceBytes < bytes)
    throw Error(ErrorCode::KernelFailure,
                runtime::concat(kernel, " needs its planned workspace of ",
                                bytes, " bytes, got ",
                                call.cuda.workspaceBytes));
  double *total = static_cast<double *>(call.cuda.workspace);
  double *partials = total + 1;
  cudaStream_t stream = call.cuda.stream;
  bool first = true;
  for (const TensorRef &g : call.inputs) {
    if (!isFloatDType(g.dtype))
      throw Error(
          ErrorCode::Internal,
          runtime::concat(kernel, " called with dtype ", dtypeName(g.dtype)));
    const int blocks = static_cast<int>(std::min<int64_t>(
        kPartials,
        std::max<int64_t>(1, (g.numElements + kThreads - 1) / kThreads)));
    partialSquaresKernel<<<blocks, kThreads, 0, stream>>>(
        g.data, g.dtype, g.numElements, partials);
    accumulateKernel<<<1, 1, 0, stream>>>(total, partials, blocks, first);
    first = false;
  }
  return total;
}

} // namespace

void clipCoefficient(const KernelCall &call) {
  const ClipAttrs &attrs = call.step.get<ClipAttrs>();
  const double *total = attrs.squareSum
                            ? call.in(0).as<const double>()
                            : sumOfSquares(call, "clip_coefficient");
  coefficientKernel<<<1, 1, 0, call.cuda.stream>>>(total, attrs.maxNorm,
                                                   call.out(0).as<float>());
  checkLaunch("clip_coefficient");
}

void squareSum(const KernelCall &call) {
  double *total = sumOfSquares(call, "square_sum");
  check(cudaMemcpyAsync(call.out(0).data, total, sizeof(double),
                        cudaMemcpyDeviceToDevice, call.cuda.stream),
        "square_sum");
  checkLaunch("square_sum");
}

} // namespace memopt::runtime::cuda
