//===- GradDataTest.cpp - sum_to, pooling and data-movement gradients -----===//
//
// sum_to over leading, size-1 and all dimensions; max-pool gradients routed
// to the forward's argmax (ties to the first maximum, padding never wins)
// and average-pool gradients as the exact adjoint of the forward kernel,
// over overlapping and padded windows; slice, upsample and embedding
// gradients (repeated ids accumulate), each against a reference loop and,
// where a forward kernel exists, the adjoint identity <f(x), g> = <x, f*(g)>.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

using namespace memopt::runtime;
using namespace memopt::runtime::test;

namespace {

double dot(const std::vector<double> &a, const std::vector<double> &b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i)
    s += a[i] * b[i];
  return s;
}

//===----------------------------------------------------------------------===//
// sum_to
//===----------------------------------------------------------------------===//

void checkSumTo(const Shape &from, const Shape &to, DType dtype) {
  SCOPED_TRACE(::testing::Message()
               << formatShape(from) << " -> " << formatShape(to) << " "
               << dtypeName(dtype));
  HostTensor x = randomTensor(dtype, from, 71);
  // Reference: every element of x adds to the element of `to` it was
  // broadcast from (aligned to the trailing dimensions).
  std::vector<double> want(count(to), 0.0);
  size_t rank = from.size(), offset = rank - to.size();
  for (int64_t e = 0; e < count(from); ++e) {
    int64_t rem = e, target = 0, stride = 1;
    std::vector<int64_t> index(rank);
    for (size_t d = rank; d-- > 0;) {
      index[d] = rem % from[d];
      rem /= from[d];
    }
    for (size_t d = to.size(); d-- > 0;) {
      target += (to[d] == 1 ? 0 : index[d + offset]) * stride;
      stride *= to[d];
    }
    want[target] += x.values[e];
  }
  for (double &v : want)
    v = roundTo(dtype, v);
  auto got = runOp1("sum_to", json::object(), {x}, {dtype, to});
  Tolerance tol = toleranceFor(dtype);
  EXPECT_TRUE(close(got, want, 4 * tol.atol, tol.rtol));
}

TEST(SumToTest, LeadingAndSizeOneDimensions) {
  checkSumTo({2, 3, 4, 5}, {3, 1, 5}, DType::F32);
  checkSumTo({2, 3, 4, 5}, {5}, DType::F32);
  checkSumTo({2, 3, 4, 5}, {2, 1, 4, 1}, DType::F64);
  checkSumTo({2, 3, 4, 5}, {1, 1, 1, 1}, DType::F32);
  checkSumTo({2, 3, 4, 5}, {4, 1}, DType::F16);
  checkSumTo({6, 7}, {6, 1}, DType::BF16);
}
TEST(SumToTest, ToAScalar) {
  checkSumTo({3, 4, 5}, {}, DType::F64);
  checkSumTo({7}, {}, DType::F32);
}
TEST(SumToTest, SameElementCountIsACopy) {
  checkSumTo({1, 3, 1}, {3, 1}, DType::F32);
  checkSumTo({2, 3}, {2, 3}, DType::F64);
  checkSumTo({}, {}, DType::F32);
}
TEST(SumToTest, AdjointOfBroadcastingAdd) {
  // <x + b, g> is linear in b with gradient sum_to(g): check against add.
  HostTensor x{DType::F64, {2, 3, 4}, std::vector<double>(24, 0.0)};
  HostTensor b = randomTensor(DType::F64, {3, 1}, 72);
  HostTensor g = randomTensor(DType::F64, {2, 3, 4}, 73);
  auto y = runOp1("add", json::object(), {x, b}, {DType::F64, {2, 3, 4}});
  auto db = runOp1("sum_to", json::object(), {g}, {DType::F64, {3, 1}});
  EXPECT_NEAR(dot(y, g.values), dot(b.values, db), 1e-12);
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

struct PoolCase {
  Shape input;
  std::array<int64_t, 2> kernel, strides, padding;
};

json attrsOf(const PoolCase &c) {
  return {{"kernel_size", c.kernel},
          {"strides", c.strides},
          {"padding", c.padding}};
}

Shape pooledShape(const PoolCase &c) {
  Shape out = c.input;
  for (int d = 0; d < 2; ++d)
    out[2 + d] =
        (c.input[2 + d] + 2 * c.padding[d] - c.kernel[d]) / c.strides[d] + 1;
  return out;
}

/// Calls f(outIndex, inIndex) for each real (non-padding) element of each
/// window, in row-major window order.
template <typename F> void forEachWindowElement(const PoolCase &c, F f) {
  Shape out = pooledShape(c);
  int64_t planes = c.input[0] * c.input[1], h = c.input[2], w = c.input[3];
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oy = 0; oy < out[2]; ++oy)
      for (int64_t ox = 0; ox < out[3]; ++ox)
        for (int64_t a = 0; a < c.kernel[0]; ++a)
          for (int64_t b = 0; b < c.kernel[1]; ++b) {
            int64_t iy = oy * c.strides[0] - c.padding[0] + a;
            int64_t ix = ox * c.strides[1] - c.padding[1] + b;
            if (iy < 0 || iy >= h || ix < 0 || ix >= w)
              continue;
            f((p * out[2] + oy) * out[3] + ox, (p * h + iy) * w + ix);
          }
}

void checkMaxPoolBackward(const PoolCase &c, const HostTensor &x) {
  SCOPED_TRACE(::testing::Message() << "max pool " << formatShape(c.input)
                                    << " " << dtypeName(x.dtype));
  Shape out = pooledShape(c);
  HostTensor dy = randomTensor(x.dtype, out, 81, 0.5, 2);
  // The first maximum of each window in row-major order.
  std::vector<int64_t> arg(count(out), -1);
  forEachWindowElement(c, [&](int64_t o, int64_t i) {
    if (arg[o] < 0 || x.values[i] > x.values[arg[o]])
      arg[o] = i;
  });
  std::vector<double> want(x.values.size(), 0.0);
  for (size_t o = 0; o < arg.size(); ++o)
    want[arg[o]] += dy.values[o];
  for (double &v : want)
    v = roundTo(x.dtype, v);
  auto got =
      runOp1("max_pool2d_backward", attrsOf(c), {dy, x}, {x.dtype, c.input});
  Tolerance tol = toleranceFor(x.dtype);
  EXPECT_TRUE(close(got, want, tol.atol, tol.rtol));
}

const std::vector<PoolCase> &poolCases() {
  static const std::vector<PoolCase> all = {
      {{2, 3, 9, 8}, {3, 3}, {2, 2}, {1, 1}}, // ResNet stem, overlapping
      {{1, 2, 7, 9}, {2, 3}, {1, 2}, {1, 1}}, // non-square, overlapping
      {{2, 2, 6, 7}, {3, 2}, {3, 2}, {0, 0}}, // disjoint, stride = kernel
      {{1, 1, 5, 5}, {3, 3}, {1, 1}, {1, 1}}, // every position in 9 windows
      {{1, 2, 8, 5}, {4, 2}, {3, 1}, {2, 1}}, // padding = kernel / 2
  };
  return all;
}

TEST(PoolBackwardTest, MaxRoutesToTheForwardArgmax) {
  for (const PoolCase &c : poolCases())
    for (DType dtype : {DType::F32, DType::F64, DType::F16})
      checkMaxPoolBackward(c, randomTensor(dtype, c.input, 82, -3, 3));
}

TEST(PoolBackwardTest, MaxTiesGoToTheFirstMaximum) {
  // Values from {0, 1, 2}: most windows hold tied maxima.
  for (const PoolCase &c : poolCases()) {
    HostTensor x = randomInts(DType::F32, c.input, 83, 0, 2);
    x.dtype = DType::F32;
    checkMaxPoolBackward(c, x);
  }
  // A constant input: every window's gradient goes to its first real
  // element.
  PoolCase c{{1, 1, 4, 4}, {2, 2}, {1, 1}, {1, 1}};
  HostTensor x{DType::F32, c.input, std::vector<double>(16, 1.0)};
  checkMaxPoolBackward(c, x);
}

TEST(PoolBackwardTest, MaxPaddingNeverWins) {
  // All-negative inputs: a padded zero would win if it were counted.
  for (const PoolCase &c : poolCases())
    checkMaxPoolBackward(c, randomTensor(DType::F32, c.input, 84, -5, -1));
}

TEST(PoolBackwardTest, MaxMatchesTheForwardKernelSelection) {
  // The element receiving each window's gradient holds the forward's output.
  PoolCase c = poolCases()[0];
  HostTensor x = randomInts(DType::F64, c.input, 85, -2, 2);
  x.dtype = DType::F64;
  Shape out = pooledShape(c);
  auto y = runOp1("max_pool2d", attrsOf(c), {x}, {DType::F64, out});
  HostTensor dy{DType::F64, out, std::vector<double>(count(out), 0.0)};
  for (size_t o = 0; o < y.size(); o += 5) {
    std::fill(dy.values.begin(), dy.values.end(), 0.0);
    dy.values[o] = 1;
    auto dx = runOp1("max_pool2d_backward", attrsOf(c), {dy, x},
                     {DType::F64, c.input});
    size_t hits = 0;
    for (size_t i = 0; i < dx.size(); ++i)
      if (dx[i] != 0) {
        ++hits;
        EXPECT_EQ(x.values[i], y[o]) << o;
      }
    EXPECT_EQ(hits, 1u) << o;
  }
}

TEST(PoolBackwardTest, AverageAgainstReferenceAndAdjoint) {
  for (const PoolCase &c : poolCases())
    for (DType dtype : {DType::F32, DType::F64, DType::BF16}) {
      SCOPED_TRACE(::testing::Message() << "avg pool " << formatShape(c.input)
                                        << " " << dtypeName(dtype));
      Shape out = pooledShape(c);
      HostTensor dy = randomTensor(dtype, out, 86);
      // count_include_pad: the divisor is always the window size.
      double divisor = double(c.kernel[0] * c.kernel[1]);
      std::vector<double> want(count(c.input), 0.0);
      forEachWindowElement(
          c, [&](int64_t o, int64_t i) { want[i] += dy.values[o] / divisor; });
      for (double &v : want)
        v = roundTo(dtype, v);
      auto got =
          runOp1("avg_pool2d_backward", attrsOf(c), {dy}, {dtype, c.input});
      Tolerance tol = toleranceFor(dtype);
      EXPECT_TRUE(close(got, want, tol.atol, tol.rtol));
    }
  for (const PoolCase &c : poolCases()) {
    Shape out = pooledShape(c);
    HostTensor x = randomTensor(DType::F64, c.input, 87);
    HostTensor dy = randomTensor(DType::F64, out, 88);
    auto y = runOp1("avg_pool2d", attrsOf(c), {x}, {DType::F64, out});
    auto dx =
        runOp1("avg_pool2d_backward", attrsOf(c), {dy}, {DType::F64, c.input});
    EXPECT_NEAR(dot(y, dy.values), dot(x.values, dx), 1e-12);
  }
}

TEST(PoolBackwardTest, GlobalAverage) {
  for (DType dtype : {DType::F32, DType::F64, DType::F16}) {
    HostTensor dy = randomTensor(dtype, {3, 4}, 89);
    std::vector<double> want;
    for (int64_t p = 0; p < 12; ++p)
      for (int i = 0; i < 35; ++i)
        want.push_back(roundTo(dtype, dy.values[p] / 35));
    auto got = runOp1("global_avg_pool2d_backward", json::object(), {dy},
                      {dtype, {3, 4, 5, 7}});
    Tolerance tol = toleranceFor(dtype);
    EXPECT_TRUE(close(got, want, tol.atol, tol.rtol)) << dtypeName(dtype);
  }
}

//===----------------------------------------------------------------------===//
// slice, upsample, embedding
//===----------------------------------------------------------------------===//

TEST(SliceBackwardTest, ZerosWithTheGradientScattered) {
  for (DType dtype : {DType::F32, DType::F64, DType::F16, DType::BF16}) {
    Shape full = {3, 5, 8};
    std::vector<int64_t> offsets = {1, 0, 1}, sizes = {2, 3, 3},
                         strides = {1, 2, 3};
    HostTensor g = randomTensor(dtype, sizes, 91);
    std::vector<double> want(count(full), 0.0);
    int64_t k = 0;
    for (int64_t a = 0; a < sizes[0]; ++a)
      for (int64_t b = 0; b < sizes[1]; ++b)
        for (int64_t c = 0; c < sizes[2]; ++c)
          want[((offsets[0] + a * strides[0]) * 5 + offsets[1] +
                b * strides[1]) *
                   8 +
               offsets[2] + c * strides[2]] = g.values[k++];
    json attrs = {{"offsets", offsets}, {"sizes", sizes}, {"strides", strides}};
    auto got = runOp1("slice_backward", attrs, {g}, {dtype, full});
    EXPECT_EQ(got, want) << dtypeName(dtype);
    // The adjoint of the forward slice.
    if (dtype == DType::F64) {
      HostTensor x = randomTensor(dtype, full, 92);
      auto y = runOp1("slice", attrs, {x}, {dtype, sizes});
      EXPECT_NEAR(dot(y, g.values), dot(x.values, got), 1e-12);
    }
  }
  // Rank 1 and a slice covering everything.
  HostTensor g = randomTensor(DType::F32, {4}, 93);
  EXPECT_EQ(runOp1("slice_backward",
                   {{"offsets", {0}}, {"sizes", {4}}, {"strides", {1}}}, {g},
                   {DType::F32, {4}}),
            g.values);
}

TEST(UpsampleBackwardTest, BlockSums) {
  for (int64_t scale : {1, 2, 3})
    for (DType dtype : {DType::F32, DType::F64, DType::F16}) {
      Shape in = {2, 3, 4, 5};
      Shape up = {2, 3, 4 * scale, 5 * scale};
      HostTensor g = randomTensor(dtype, up, 94);
      std::vector<double> want(count(in), 0.0);
      for (int64_t p = 0; p < 6; ++p)
        for (int64_t y = 0; y < up[2]; ++y)
          for (int64_t x = 0; x < up[3]; ++x)
            want[(p * 4 + y / scale) * 5 + x / scale] +=
                g.values[(p * up[2] + y) * up[3] + x];
      for (double &v : want)
        v = roundTo(dtype, v);
      auto got = runOp1("upsample_nearest2d_backward", {{"scale", scale}}, {g},
                        {dtype, in});
      Tolerance tol = toleranceFor(dtype);
      EXPECT_TRUE(close(got, want, 2 * tol.atol, tol.rtol))
          << "scale " << scale << " " << dtypeName(dtype);
      if (dtype == DType::F64) {
        HostTensor x = randomTensor(dtype, in, 95);
        auto y =
            runOp1("upsample_nearest2d", {{"scale", scale}}, {x}, {dtype, up});
        EXPECT_NEAR(dot(y, g.values), dot(x.values, got), 1e-12);
      }
    }
}

TEST(EmbeddingBackwardTest, RepeatedIdsAccumulate) {
  for (DType idType : {DType::I64, DType::I32})
    for (DType dtype : {DType::F32, DType::F64, DType::BF16}) {
      HostTensor ids{idType, {2, 4}, {3, 0, 3, 5, 3, 1, 0, 3}};
      HostTensor g = randomTensor(dtype, {2, 4, 3}, 96);
      std::vector<double> want(6 * 3, 0.0);
      for (int i = 0; i < 8; ++i)
        for (int j = 0; j < 3; ++j)
          want[int(ids.values[i]) * 3 + j] += g.values[i * 3 + j];
      for (double &v : want)
        v = roundTo(dtype, v);
      auto got = runOp1("embedding_backward", json::object(), {g, ids},
                        {dtype, {6, 3}});
      Tolerance tol = toleranceFor(dtype);
      EXPECT_TRUE(close(got, want, 2 * tol.atol, tol.rtol))
          << dtypeName(dtype) << " ids " << dtypeName(idType);
      // Rows 2 and 4 are never looked up.
      for (int j = 0; j < 3; ++j) {
        EXPECT_EQ(got[2 * 3 + j], 0.0);
        EXPECT_EQ(got[4 * 3 + j], 0.0);
      }
    }
}

TEST(EmbeddingBackwardTest, PaddingIdxRowTakesNoGradient) {
  HostTensor ids{DType::I64, {2, 4}, {3, 0, 3, 5, 3, 1, 0, 3}};
  HostTensor g = randomTensor(DType::F32, {2, 4, 3}, 96);
  std::vector<double> want(6 * 3, 0.0);
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 3 && ids.values[i] != 3; ++j)
      want[int(ids.values[i]) * 3 + j] += g.values[i * 3 + j];
  auto got = runOp1("embedding_backward", {{"padding_idx", 3}}, {g, ids},
                    {DType::F32, {6, 3}});
  EXPECT_TRUE(close(got, want, 1e-6, 1e-6));
  for (int j = 0; j < 3; ++j)
    EXPECT_EQ(got[3 * 3 + j], 0.0);
  std::string message = errorOf([&] {
    runOp1("embedding_backward", {{"padding_idx", 6}}, {g, ids},
           {DType::F32, {6, 3}});
  });
  EXPECT_NE(message.find("expected 'padding_idx' in [0, 6), got 6"),
            std::string::npos)
      << message;
}

TEST(EmbeddingBackwardTest, IdOutOfRangeNamesTheStep) {
  HostTensor g = randomTensor(DType::F32, {3, 2}, 97);
  for (double bad : {6.0, -1.0}) {
    HostTensor ids{DType::I64, {3}, {0, bad, 1}};
    try {
      runOp1("embedding_backward", json::object(), {g, ids},
             {DType::F32, {6, 2}});
      ADD_FAILURE() << "no error for id " << bad;
    } catch (const Error &e) {
      EXPECT_EQ(e.code(), ErrorCode::KernelFailure);
      std::string message = e.what();
      EXPECT_NE(message.find("steps[0] (embedding_backward at test.mlir:1:1)"),
                std::string::npos)
          << message;
      EXPECT_NE(message.find("(ids element 1) is outside [0, 6)"),
                std::string::npos)
          << message;
    }
  }
}

} // namespace
