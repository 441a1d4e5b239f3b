//===- ConvTest.cpp - conv2d kernel against a direct reference ------------===//
//
// The reference is the definition (seven nested loops in double), checked
// over strides, padding, dilation, groups, odd sizes, bias, the 1x1 fast
// path and every float dtype.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

using namespace memopt::runtime;
using namespace memopt::runtime::test;

namespace {

struct ConvCase {
  Shape input, weight;
  std::array<int64_t, 2> strides, padding, dilations;
  int64_t groups;
  bool bias;
};

std::vector<double> referenceConv(const HostTensor &x, const HostTensor &w,
                                  const HostTensor *b, const ConvCase &c,
                                  Shape &outShape) {
  int64_t n = x.shape[0], ch = x.shape[1], h = x.shape[2], wd = x.shape[3];
  int64_t k = w.shape[0], cg = w.shape[1], r = w.shape[2], s = w.shape[3];
  int64_t oh =
      (h + 2 * c.padding[0] - c.dilations[0] * (r - 1) - 1) / c.strides[0] + 1;
  int64_t ow =
      (wd + 2 * c.padding[1] - c.dilations[1] * (s - 1) - 1) / c.strides[1] + 1;
  outShape = {n, k, oh, ow};
  int64_t kg = k / c.groups;
  std::vector<double> y(n * k * oh * ow);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t o = 0; o < k; ++o)
      for (int64_t yy = 0; yy < oh; ++yy)
        for (int64_t xx = 0; xx < ow; ++xx) {
          double acc = b ? b->values[o] : 0.0;
          int64_t g = o / kg;
          for (int64_t cc = 0; cc < cg; ++cc)
            for (int64_t rr = 0; rr < r; ++rr)
              for (int64_t ss = 0; ss < s; ++ss) {
                int64_t iy =
                    yy * c.strides[0] - c.padding[0] + rr * c.dilations[0];
                int64_t ix =
                    xx * c.strides[1] - c.padding[1] + ss * c.dilations[1];
                if (iy < 0 || iy >= h || ix < 0 || ix >= wd)
                  continue;
                acc += x.values[((i * ch + g * cg + cc) * h + iy) * wd + ix] *
                       w.values[((o * cg + cc) * r + rr) * s + ss];
              }
          y[((i * k + o) * oh + yy) * ow + xx] = acc;
        }
  return y;
}

void checkConv(const ConvCase &c, DType dtype, unsigned seed) {
  HostTensor x = randomTensor(dtype, c.input, seed);
  HostTensor w = randomTensor(dtype, c.weight, seed + 1);
  HostTensor b = randomTensor(dtype, {c.weight[0]}, seed + 2);
  Shape outShape;
  std::vector<double> want =
      referenceConv(x, w, c.bias ? &b : nullptr, c, outShape);
  json attrs = {{"strides", c.strides},
                {"padding", c.padding},
                {"dilations", c.dilations},
                {"groups", c.groups}};
  std::vector<HostTensor> inputs = {x, w};
  if (c.bias)
    inputs.push_back(b);
  std::vector<double> got = runOp1("conv2d", attrs, inputs, {dtype, outShape});
  Tolerance tol = toleranceFor(dtype);
  // Sums of up to C*R*S products: scale the absolute tolerance with them.
  double terms = static_cast<double>(c.weight[1] * c.weight[2] * c.weight[3]);
  if (dtype == DType::F16 || dtype == DType::BF16)
    for (double &v : want)
      v = roundTo(dtype, v);
  EXPECT_TRUE(close(got, want, tol.atol * terms, tol.rtol));
}

TEST(ConvKernelTest, StridesPaddingDilationBiasOddSizes) {
  checkConv({{2, 3, 7, 5}, {4, 3, 3, 2}, {2, 1}, {1, 1}, {1, 2}, 1, true},
            DType::F32, 10);
}

TEST(ConvKernelTest, LargePaddingAndStrideLargerThanKernel) {
  checkConv({{1, 2, 5, 6}, {3, 2, 2, 2}, {3, 3}, {2, 1}, {1, 1}, 1, true},
            DType::F32, 11);
}

TEST(ConvKernelTest, DilationWithPadding) {
  checkConv({{1, 3, 9, 8}, {2, 3, 3, 3}, {1, 2}, {2, 2}, {2, 3}, 1, false},
            DType::F32, 12);
}

TEST(ConvKernelTest, Groups) {
  checkConv({{2, 4, 6, 6}, {6, 2, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 2, true},
            DType::F32, 13);
}

TEST(ConvKernelTest, Depthwise) {
  checkConv({{2, 3, 5, 7}, {3, 1, 3, 3}, {2, 2}, {1, 1}, {1, 1}, 3, false},
            DType::F32, 14);
  checkConv({{1, 4, 5, 5}, {8, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 4, true},
            DType::F32, 15);
}

TEST(ConvKernelTest, PointwiseFastPathAndStridedPointwise) {
  checkConv({{2, 5, 4, 3}, {7, 5, 1, 1}, {1, 1}, {0, 0}, {1, 1}, 1, true},
            DType::F32, 16);
  checkConv({{2, 5, 5, 5}, {3, 5, 1, 1}, {2, 2}, {0, 0}, {1, 1}, 1, false},
            DType::F32, 17);
  checkConv({{1, 4, 3, 3}, {4, 2, 1, 1}, {1, 1}, {0, 0}, {1, 1}, 2, true},
            DType::F32, 18);
}

TEST(ConvKernelTest, KernelAsLargeAsPaddedInput) {
  checkConv({{1, 2, 3, 4}, {2, 2, 5, 6}, {1, 1}, {1, 1}, {1, 1}, 1, true},
            DType::F32, 19);
}

TEST(ConvKernelTest, F64) {
  checkConv({{2, 3, 7, 5}, {4, 3, 3, 2}, {2, 1}, {1, 1}, {1, 2}, 1, true},
            DType::F64, 20);
  checkConv({{1, 4, 6, 6}, {4, 2, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 2, false},
            DType::F64, 21);
}

TEST(ConvKernelTest, F16AndBF16Storage) {
  checkConv({{2, 3, 7, 5}, {4, 3, 3, 2}, {2, 1}, {1, 1}, {1, 2}, 1, true},
            DType::F16, 22);
  checkConv({{1, 4, 6, 6}, {4, 2, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 2, true},
            DType::BF16, 23);
}

TEST(ConvKernelTest, DefaultAttributes) {
  HostTensor x = randomTensor(DType::F32, {1, 2, 4, 4}, 30);
  HostTensor w = randomTensor(DType::F32, {3, 2, 3, 3}, 31);
  ConvCase c{{1, 2, 4, 4}, {3, 2, 3, 3}, {1, 1}, {0, 0}, {1, 1}, 1, false};
  Shape outShape;
  std::vector<double> want = referenceConv(x, w, nullptr, c, outShape);
  EXPECT_TRUE(
      close(runOp1("conv2d", json::object(), {x, w}, {DType::F32, outShape}),
            want, 1e-5, 1e-5));
}

} // namespace

// The planned workspace holds the im2col matrix: the forward and both
// gradients give bit-identical results with a workspace of exactly that
// size, with one too small for an output row (the kernel then allocates
// its own), and without one, in f32 and f64. A workspace for one or three
// of the four output rows (a capped plan) makes the kernel work a chunk of
// rows at a time: the same sums, split differently (equal to rounding).
TEST(ConvKernelTest, PlannedWorkspaceGivesIdenticalResults) {
  const Shape xShape = {2, 3, 7, 6}, wShape = {4, 3, 3, 2};
  const json attrs = {{"strides", {2, 1}},
                      {"padding", {1, 1}},
                      {"dilations", {1, 2}},
                      {"groups", 1}};
  const Shape yShape = {2, 4, 4, 6};
  for (DType dtype : {DType::F32, DType::F64}) {
    SCOPED_TRACE(std::string(dtypeName(dtype)));
    HostTensor x = randomTensor(dtype, xShape, 31);
    HostTensor w = randomTensor(dtype, wShape, 32);
    HostTensor dy = randomTensor(dtype, yShape, 33);
    // C·R·S × OW elements of the compute type per output row, 4 rows.
    const uint64_t row = 3 * 3 * 2 * 6 * dtypeSize(dtype);
    struct Case {
      const char *kernel;
      std::vector<HostTensor> inputs;
      Shape out;
    };
    for (const Case &c : {Case{"conv2d", {x, w}, yShape},
                          Case{"conv2d_backward_input", {dy, w}, xShape},
                          Case{"conv2d_backward_weight", {dy, x}, wShape}}) {
      SCOPED_TRACE(c.kernel);
      OutputSpec out{dtype, c.out};
      json plan = singleStepPlan(c.kernel, attrs, c.inputs, {out});
      std::vector<double> without = runPlan(plan, c.inputs, {out})[0];
      for (uint64_t bytes : {4 * row, uint64_t(64), row, 3 * row}) {
        json withWorkspace = plan;
        uint64_t offset = withWorkspace["arena_bytes"].get<uint64_t>();
        withWorkspace["steps"][0]["workspace"] = {{"offset", offset},
                                                  {"bytes", bytes}};
        withWorkspace["arena_bytes"] = offset + bytes;
        std::vector<double> got = runPlan(withWorkspace, c.inputs, {out})[0];
        // Split sums round differently: to rounding of the sums' terms
        // (of order 1 here), so absolutely as well as relatively (an
        // element that nearly cancels has no relative precision).
        if (bytes == row || bytes == 3 * row) {
          const double tol = dtype == DType::F64 ? 1e-13 : 1e-6;
          EXPECT_TRUE(close(got, without, tol, 10 * tol))
              << bytes << "-byte workspace";
        } else
          EXPECT_EQ(got, without) << bytes << "-byte workspace";
      }
    }
  }
}
