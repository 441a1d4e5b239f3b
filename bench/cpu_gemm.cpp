// The CPU backend's f32 matrix products: OpenBLAS's cblas_sgemm against
// oneDNN's dnnl_sgemm on the shapes of bench/cpu_peers.py's models, both
// row-major, alternating calls in one process, the best of R repeats each.
// Built and run by bench/cpu_gemm.py; prints one JSON object per line:
//   {"m":..,"n":..,"k":..,"trans":"NT","threads":T,"openblas_ms":..,
//    "onednn_ms":..,"max_abs_diff":..}
#include <cblas.h>
#include <dnnl.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

extern "C" void openblas_set_num_threads(int);

namespace {
double seconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Shape {
  const char *model;
  int m, n, k;
  char ta, tb;
};

// (model, m, n, k, op(A), op(B)) as the CPU kernels call them.
const Shape kShapes[] = {
    // decoder: 1024 tokens, d 256, MLP 1024, vocabulary 4096
    {"decoder", 1024, 4096, 256, 'N', 'T'}, // LM head logits
    {"decoder", 1024, 256, 4096, 'N', 'N'}, // LM head: grad of input
    {"decoder", 256, 4096, 1024, 'T', 'N'}, // LM head: grad of weight
    {"decoder", 1024, 768, 256, 'N', 'T'},  // QKV projection
    {"decoder", 1024, 1024, 256, 'N', 'T'}, // MLP up
    {"decoder", 1024, 256, 1024, 'N', 'T'}, // MLP down
    {"decoder", 1024, 256, 1024, 'N', 'N'}, // MLP up: grad of input
    {"decoder", 256, 1024, 1024, 'T', 'N'}, // MLP up: grad of weight
    {"decoder", 1024, 256, 256, 'N', 'T'},  // output projection
    // mlp 784-256-128-10, batch 32
    {"mlp", 32, 256, 784, 'N', 'T'},
    {"mlp", 32, 128, 256, 'N', 'T'},
    {"mlp", 32, 10, 128, 'N', 'T'},
    {"mlp", 32, 784, 256, 'N', 'N'},
    {"mlp", 256, 784, 32, 'T', 'N'},
    // mlp-deep 512 x16, batch 64
    {"mlp-deep", 64, 512, 512, 'N', 'T'},
    {"mlp-deep", 512, 512, 64, 'T', 'N'},
    // cnn-bn: a convolution part's im2col products (16x16, 32 -> 64)
    {"cnn-bn", 64, 256, 288, 'N', 'N'},
    {"cnn-bn", 288, 256, 64, 'T', 'N'},
    {"cnn-bn", 64, 288, 256, 'N', 'T'},
    {"cnn-bn", 32, 1024, 27, 'N', 'N'},
};
} // namespace

int main(int argc, char **argv) {
  int repeats = argc > 1 ? std::atoi(argv[1]) : 20;
  for (int threads : {1, 2}) {
    openblas_set_num_threads(threads);
    omp_set_num_threads(threads);
    for (const Shape &s : kShapes) {
      int lda = s.ta == 'N' ? s.k : s.m, ldb = s.tb == 'N' ? s.n : s.k;
      std::vector<float> a(size_t(s.m) * s.k), b(size_t(s.k) * s.n),
          c1(size_t(s.m) * s.n), c2(size_t(s.m) * s.n);
      std::mt19937 gen(1);
      std::uniform_real_distribution<float> dist(-1, 1);
      for (float &v : a)
        v = dist(gen);
      for (float &v : b)
        v = dist(gen);
      double best[2] = {1e30, 1e30};
      for (int r = 0; r < repeats; ++r) {
        double t = seconds();
        cblas_sgemm(CblasRowMajor, s.ta == 'N' ? CblasNoTrans : CblasTrans,
                    s.tb == 'N' ? CblasNoTrans : CblasTrans, s.m, s.n, s.k,
                    1.0f, a.data(), lda, b.data(), ldb, 0.0f, c1.data(), s.n);
        best[0] = std::min(best[0], seconds() - t);
        t = seconds();
        if (dnnl_sgemm(s.ta, s.tb, s.m, s.n, s.k, 1.0f, a.data(), lda, b.data(),
                       ldb, 0.0f, c2.data(), s.n) != dnnl_success)
          return 1;
        best[1] = std::min(best[1], seconds() - t);
      }
      double diff = 0;
      for (size_t i = 0; i < c1.size(); ++i)
        diff = std::max(diff, double(std::fabs(c1[i] - c2[i])));
      std::printf("{\"model\":\"%s\",\"m\":%d,\"n\":%d,\"k\":%d,"
                  "\"trans\":\"%c%c\",\"threads\":%d,\"openblas_ms\":%.4f,"
                  "\"onednn_ms\":%.4f,\"max_abs_diff\":%.3g}\n",
                  s.model, s.m, s.n, s.k, s.ta, s.tb, threads, best[0] * 1e3,
                  best[1] * 1e3, diff);
      std::fflush(stdout);
    }
  }
  return 0;
}
