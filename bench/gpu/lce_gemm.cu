//===- lce_gemm.cu - the chunked LM head's GEMMs on cuBLAS, by chunk shape
//-===//
//
// Times the three f32 GEMMs that linear_cross_entropy_backward runs per
// chunk (runtime/lib/cuda/LinearCrossEntropy.cu) over all N rows of GPT-2
// small's head at batch 16 x 1024 (N 16384, H 768, V 50257), for several
// chunk heights, leading dimensions of the logits (V itself, odd, or V
// rounded up to 32 elements), compute types and cuBLAS workspaces:
//   logits  = h_chunk · Wᵀ          (rows x V)
//   dh      = dlogits · W           (rows x H)
//   dW     += dlogitsᵀ · h_chunk    (V x H)
// Build: nvcc -O2 -arch=sm_90 bench/gpu/lce_gemm.cu -lcublas -o lce_gemm
// Prints one line per configuration: milliseconds for the N rows (median
// of 3 after a warm-up) and the achieved TFLOP/s.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <vector>

#define CHECK_CUDA(x)                                                          \
  do {                                                                         \
    cudaError_t e = (x);                                                       \
    if (e != cudaSuccess) {                                                    \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e));             \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)
#define CHECK_CUBLAS(x)                                                        \
  do {                                                                         \
    cublasStatus_t s = (x);                                                    \
    if (s != CUBLAS_STATUS_SUCCESS) {                                          \
      std::fprintf(stderr, "%s: status %d\n", #x, static_cast<int>(s));        \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

__global__ void fill(float *p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    unsigned x = static_cast<unsigned>(i) * 2654435761u + seed;
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    x ^= x >> 15;
    p[i] = (x & 0xffff) / 65536.0f - 0.5f;
  }
}

int main() {
  const int n = 16384, h = 768, v = 50257;
  const int maxRows = 2048, maxLd = (v + 31) / 32 * 32;
  float *hid, *w, *logits, *dh, *dw;
  void *ws;
  const size_t wsBytes = size_t(32) << 20;
  CHECK_CUDA(cudaMalloc(&hid, sizeof(float) * n * h));
  CHECK_CUDA(cudaMalloc(&w, sizeof(float) * v * h));
  CHECK_CUDA(cudaMalloc(&logits, sizeof(float) * maxRows * maxLd));
  CHECK_CUDA(cudaMalloc(&dh, sizeof(float) * n * h));
  CHECK_CUDA(cudaMalloc(&dw, sizeof(float) * v * h));
  CHECK_CUDA(cudaMalloc(&ws, wsBytes));
  fill<<<1024, 256>>>(hid, size_t(n) * h, 1);
  fill<<<1024, 256>>>(w, size_t(v) * h, 2);
  fill<<<1024, 256>>>(logits, size_t(maxRows) * maxLd, 3);
  CHECK_CUDA(cudaGetLastError());
  cublasHandle_t handle;
  CHECK_CUBLAS(cublasCreate(&handle));
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  const float one = 1, zero = 0;

  std::printf("%6s %6s %-9s %9s %10s %8s\n", "rows", "ld", "compute",
              "workspace", "ms", "TFLOP/s");
  for (cublasComputeType_t compute :
       {CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F_FAST_TF32})
    for (size_t wsUse : {size_t(0), wsBytes})
      for (int ld : {v, maxLd})
        for (int rows : {80, 256, 1024, 2048}) {
          CHECK_CUBLAS(cublasSetWorkspace(handle, wsUse ? ws : nullptr, wsUse));
          auto run = [&] {
            for (int r0 = 0; r0 < n; r0 += rows) {
              const int m = std::min(rows, n - r0);
              const float *hc = hid + size_t(r0) * h;
              // Column-major views of the row-major matrices (as
              // LinearCrossEntropy.cu's gemm() passes them).
              CHECK_CUBLAS(cublasGemmEx(
                  handle, CUBLAS_OP_T, CUBLAS_OP_N, v, m, h, &one, w,
                  CUDA_R_32F, h, hc, CUDA_R_32F, h, &zero, logits, CUDA_R_32F,
                  ld, compute, CUBLAS_GEMM_DEFAULT));
              CHECK_CUBLAS(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, h, m,
                                        v, &one, w, CUDA_R_32F, h, logits,
                                        CUDA_R_32F, ld, &zero,
                                        dh + size_t(r0) * h, CUDA_R_32F, h,
                                        compute, CUBLAS_GEMM_DEFAULT));
              CHECK_CUBLAS(cublasGemmEx(
                  handle, CUBLAS_OP_N, CUBLAS_OP_T, h, v, m, &one, hc,
                  CUDA_R_32F, h, logits, CUDA_R_32F, ld, r0 ? &one : &zero, dw,
                  CUDA_R_32F, h, compute, CUBLAS_GEMM_DEFAULT));
            }
          };
          run();
          std::vector<float> times;
          for (int rep = 0; rep < 3; ++rep) {
            CHECK_CUDA(cudaEventRecord(start));
            run();
            CHECK_CUDA(cudaEventRecord(stop));
            CHECK_CUDA(cudaEventSynchronize(stop));
            float ms = 0;
            CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
            times.push_back(ms);
          }
          std::sort(times.begin(), times.end());
          const double flops = 3.0 * 2.0 * n * double(h) * v;
          std::printf("%6d %6d %-9s %9zu %10.2f %8.1f\n", rows, ld,
                      compute == CUBLAS_COMPUTE_32F ? "f32" : "tf32", wsUse,
                      times[1], flops / (times[1] * 1e-3) / 1e12);
          std::fflush(stdout);
        }
  return 0;
}
