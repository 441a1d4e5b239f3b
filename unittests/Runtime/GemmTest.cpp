//===- GemmTest.cpp - the CPU backend's matrix products -------------------===//
//
// gemm<float> (oneDNN) and gemm<double> (OpenBLAS) against a double
// reference over every transpose, padded leading dimensions, alpha and
// beta; and the determinism the kernels rely on: the same bits call after
// call at a fixed thread count, and inside a kernel's parallel parts (one
// thread each) the same bits as one thread outside.
//
//===----------------------------------------------------------------------===//

#include "cpu/Gemm.h"
#include "cpu/ParallelFor.h"

#include "memopt/runtime/CpuThreads.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace memopt::runtime;
using namespace memopt::runtime::cpu;

namespace {

struct Case {
  int64_t m, n, k;
  bool transA, transB;
};

/// Row-major operands of `c` with each leading dimension padded by `pad`.
template <typename T> struct Operands {
  Operands(const Case &c, int64_t pad, unsigned seed)
      : lda((c.transA ? c.m : c.k) + pad), ldb((c.transB ? c.k : c.n) + pad),
        ldc(c.n + pad), a((c.transA ? c.k : c.m) * lda),
        b((c.transB ? c.n : c.k) * ldb), c(c.m * ldc) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> dist(-1, 1);
    for (T &v : a)
      v = T(dist(gen));
    for (T &v : b)
      v = T(dist(gen));
    for (T &v : this->c)
      v = T(dist(gen));
  }
  T atA(const Case &s, int64_t i, int64_t p) const {
    return s.transA ? a[p * lda + i] : a[i * lda + p];
  }
  T atB(const Case &s, int64_t p, int64_t j) const {
    return s.transB ? b[j * ldb + p] : b[p * ldb + j];
  }
  int64_t lda, ldb, ldc;
  std::vector<T> a, b, c;
};

const Case kCases[] = {
    {1, 1, 1, false, false},     {7, 5, 3, false, true},
    {33, 17, 65, true, false},   {64, 96, 48, true, true},
    {32, 10, 128, false, true},  {128, 300, 257, false, false},
    {256, 64, 1024, true, false}};

template <typename T> void checkAgainstReference(double tolerance) {
  for (const Case &s : kCases)
    for (int64_t pad : {0, 3}) {
      Operands<T> x(s, pad, 7);
      std::vector<T> c = x.c;
      const T alpha = T(0.75), beta = T(-0.5);
      gemm<T>(s.transA, s.transB, s.m, s.n, s.k, alpha, x.a.data(), x.lda,
              x.b.data(), x.ldb, beta, c.data(), x.ldc);
      for (int64_t i = 0; i < s.m; ++i)
        for (int64_t j = 0; j < s.n; ++j) {
          double want = double(beta) * double(x.c[i * x.ldc + j]);
          for (int64_t p = 0; p < s.k; ++p)
            want +=
                double(alpha) * double(x.atA(s, i, p)) * double(x.atB(s, p, j));
          ASSERT_NEAR(double(c[i * x.ldc + j]), want,
                      tolerance * std::sqrt(double(s.k)))
              << s.m << "x" << s.n << "x" << s.k << " transA " << s.transA
              << " transB " << s.transB << " pad " << pad << " at (" << i
              << ", " << j << ")";
        }
      // The padding between rows of C is not written.
      for (int64_t i = 0; i < s.m; ++i)
        for (int64_t j = s.n; j < x.ldc; ++j)
          ASSERT_EQ(c[i * x.ldc + j], x.c[i * x.ldc + j]);
    }
}

TEST(CpuGemmTest, F32MatchesReference) { checkAgainstReference<float>(2e-6); }

TEST(CpuGemmTest, F64MatchesReference) { checkAgainstReference<double>(1e-14); }

std::vector<float> product(const Case &s, const Operands<float> &x) {
  std::vector<float> c(s.m * x.ldc, 0.0f);
  gemm<float>(s.transA, s.transB, s.m, s.n, s.k, 1.0f, x.a.data(), x.lda,
              x.b.data(), x.ldb, 0.0f, c.data(), x.ldc);
  return c;
}

bool sameBits(const std::vector<float> &a, const std::vector<float> &b) {
  return a.size() == b.size() &&
         !std::memcmp(a.data(), b.data(), a.size() * sizeof(float));
}

TEST(CpuGemmTest, SameBitsCallAfterCallAndInParts) {
  const int saved = cpuThreads();
  for (const Case &s : kCases) {
    Operands<float> x(s, 0, 11);
    setCpuThreads(1);
    std::vector<float> one = product(s, x);
    setCpuThreads(2);
    std::vector<float> two = product(s, x);
    EXPECT_TRUE(sameBits(two, product(s, x)))
        << s.m << "x" << s.n << "x" << s.k << ": two threads, twice";
    // Each part of a kernel's split multiplies on its own thread, alone.
    std::vector<float> inParts[2];
    parallelFor(2, [&](int i) { inParts[i] = product(s, x); });
    EXPECT_TRUE(sameBits(inParts[0], one)) << s.m << "x" << s.n << "x" << s.k;
    EXPECT_TRUE(sameBits(inParts[1], one)) << s.m << "x" << s.n << "x" << s.k;
  }
  setCpuThreads(saved);
}

} // namespace
