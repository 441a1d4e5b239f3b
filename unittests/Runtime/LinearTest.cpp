//===- LinearTest.cpp - linear and matmul kernels -------------------------===//
//
// Against reference loops: linear on rank-1..3 inputs with and without
// bias, matmul with every transpose combination and NumPy-broadcast batch
// dimensions (including the single-GEMM fast path).
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

using namespace memopt::runtime;
using namespace memopt::runtime::test;

namespace {

std::vector<double> referenceLinear(const HostTensor &x, const HostTensor &w,
                                    const HostTensor *b) {
  int64_t in = w.shape[1], out = w.shape[0];
  int64_t rows = count(x.shape) / in;
  std::vector<double> y(rows * out);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < out; ++o) {
      double acc = b ? b->values[o] : 0;
      for (int64_t i = 0; i < in; ++i)
        acc += x.values[r * in + i] * w.values[o * in + i];
      y[r * out + o] = acc;
    }
  return y;
}

void checkLinear(Shape xShape, int64_t out, bool bias, DType dtype) {
  HostTensor x = randomTensor(dtype, xShape, 1);
  HostTensor w = randomTensor(dtype, {out, xShape.back()}, 2);
  HostTensor b = randomTensor(dtype, {out}, 3);
  std::vector<double> want = referenceLinear(x, w, bias ? &b : nullptr);
  Shape yShape = xShape;
  yShape.back() = out;
  std::vector<HostTensor> inputs = {x, w};
  if (bias)
    inputs.push_back(b);
  std::vector<double> got =
      runOp1("linear", json::object(), inputs, {dtype, yShape});
  if (dtype == DType::F16)
    for (double &v : want)
      v = roundTo(dtype, v);
  Tolerance tol = toleranceFor(dtype);
  EXPECT_TRUE(close(got, want, tol.atol * xShape.back(), tol.rtol));
}

TEST(LinearKernelTest, Rank3WithBias) {
  checkLinear({2, 3, 5}, 4, true, DType::F32);
}
TEST(LinearKernelTest, Rank1NoBias) { checkLinear({7}, 3, false, DType::F32); }
TEST(LinearKernelTest, Rank2F64) { checkLinear({6, 9}, 5, true, DType::F64); }
TEST(LinearKernelTest, F16) { checkLinear({4, 2, 8}, 3, true, DType::F16); }

struct MatMulCase {
  Shape a, b;
  bool ta, tb;
};

std::vector<double> referenceMatMul(const HostTensor &a, const HostTensor &b,
                                    bool ta, bool tb, Shape &outShape) {
  size_t ra = a.shape.size(), rb = b.shape.size();
  int64_t m = ta ? a.shape[ra - 1] : a.shape[ra - 2];
  int64_t k = ta ? a.shape[ra - 2] : a.shape[ra - 1];
  int64_t n = tb ? b.shape[rb - 2] : b.shape[rb - 1];
  Shape ba(a.shape.begin(), a.shape.end() - 2),
      bb(b.shape.begin(), b.shape.end() - 2);
  Shape batch = *broadcastShapes(ba, bb);
  outShape = batch;
  outShape.push_back(m);
  outShape.push_back(n);
  int64_t batchCount = count(batch);
  std::vector<double> y(batchCount * m * n);
  size_t rank = batch.size();
  for (int64_t bi = 0; bi < batchCount; ++bi) {
    // Decompose the batch index and map it into each operand.
    Shape idx(rank);
    int64_t rem = bi;
    for (size_t d = rank; d-- > 0;) {
      idx[d] = rem % batch[d];
      rem /= batch[d];
    }
    auto offset = [&](const Shape &opBatch, int64_t matSize) {
      int64_t off = 0, stride = matSize;
      for (size_t i = 0; i < opBatch.size(); ++i) {
        size_t d = opBatch.size() - 1 - i;
        int64_t v = opBatch[d] == 1 ? 0 : idx[rank - 1 - i];
        off += v * stride;
        stride *= opBatch[d];
      }
      return off;
    };
    int64_t oa = offset(ba, a.shape[ra - 2] * a.shape[ra - 1]);
    int64_t ob = offset(bb, b.shape[rb - 2] * b.shape[rb - 1]);
    int64_t lda = a.shape[ra - 1], ldb = b.shape[rb - 1];
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p) {
          double av =
              ta ? a.values[oa + p * lda + i] : a.values[oa + i * lda + p];
          double bv =
              tb ? b.values[ob + j * ldb + p] : b.values[ob + p * ldb + j];
          acc += av * bv;
        }
        y[bi * m * n + i * n + j] = acc;
      }
  }
  return y;
}

void checkMatMul(const MatMulCase &c, DType dtype = DType::F32) {
  HostTensor a = randomTensor(dtype, c.a, 5), b = randomTensor(dtype, c.b, 6);
  Shape outShape;
  std::vector<double> want = referenceMatMul(a, b, c.ta, c.tb, outShape);
  std::vector<double> got =
      runOp1("matmul", {{"transpose_a", c.ta}, {"transpose_b", c.tb}}, {a, b},
             {dtype, outShape});
  Tolerance tol = toleranceFor(dtype);
  if (dtype == DType::F16)
    for (double &v : want)
      v = roundTo(dtype, v);
  EXPECT_TRUE(close(got, want, tol.atol * 8, tol.rtol));
}

TEST(MatMulKernelTest, Plain) { checkMatMul({{3, 4}, {4, 5}, false, false}); }
TEST(MatMulKernelTest, TransposeA) {
  checkMatMul({{4, 3}, {4, 5}, true, false});
}
TEST(MatMulKernelTest, TransposeB) {
  checkMatMul({{2, 3, 4}, {2, 5, 4}, false, true});
}
TEST(MatMulKernelTest, TransposeBoth) {
  checkMatMul({{2, 4, 3}, {2, 5, 4}, true, true});
}
TEST(MatMulKernelTest, BatchedAUnbatchedBFastPath) {
  checkMatMul({{2, 3, 3, 4}, {4, 5}, false, false});
  checkMatMul({{2, 3, 3, 4}, {1, 5, 4}, false, true});
}
TEST(MatMulKernelTest, UnbatchedABatchedB) {
  checkMatMul({{3, 4}, {2, 4, 5}, false, false});
}
TEST(MatMulKernelTest, BroadcastBatchDims) {
  checkMatMul({{2, 1, 3, 4}, {1, 5, 4, 2}, false, false});
  checkMatMul({{3, 1, 4, 3}, {2, 5, 4}, true, true});
}
TEST(MatMulKernelTest, F64AndF16) {
  checkMatMul({{2, 1, 3, 4}, {3, 4, 2}, false, false}, DType::F64);
  checkMatMul({{2, 3, 4}, {2, 5, 4}, false, true}, DType::F16);
}

} // namespace
