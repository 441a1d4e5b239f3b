//===- ConvBackwardTest.cpp - conv2d gradients ----------------------------===//
//
// conv2d_backward_input and conv2d_backward_weight against the definition
// (the forward loops with the multiply-add scattered the other way), over
// strides that do not divide the input, padding, dilation, groups
// (including depthwise), odd sizes, the 1x1 fast path and every float
// dtype; and in f64 the adjoint identity
//   <conv(x, w), dy> = <x, conv_bwd_input(dy, w)> = <w, conv_bwd_weight(dy, x)>
// with the runtime's own forward kernel.
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
};

json attrsOf(const ConvCase &c) {
  return {{"strides", c.strides},
          {"padding", c.padding},
          {"dilations", c.dilations},
          {"groups", c.groups}};
}

Shape outputShape(const ConvCase &c) {
  Shape out = {c.input[0], c.weight[0], 0, 0};
  for (int d = 0; d < 2; ++d)
    out[2 + d] = (c.input[2 + d] + 2 * c.padding[d] -
                  c.dilations[d] * (c.weight[2 + d] - 1) - 1) /
                     c.strides[d] +
                 1;
  return out;
}

/// Calls f(xIndex, wIndex, yIndex) for every multiply-add of the forward
/// convolution y[yIndex] += x[xIndex] * w[wIndex].
template <typename F> void forEachTap(const ConvCase &c, F f) {
  const Shape out = outputShape(c);
  int64_t n = c.input[0], ch = c.input[1], h = c.input[2], wd = c.input[3];
  int64_t k = c.weight[0], cg = c.weight[1], r = c.weight[2], s = c.weight[3];
  int64_t oh = out[2], ow = out[3], kg = k / c.groups;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t o = 0; o < k; ++o)
      for (int64_t yy = 0; yy < oh; ++yy)
        for (int64_t xx = 0; xx < ow; ++xx)
          for (int64_t cc = 0; cc < cg; ++cc)
            for (int64_t rr = 0; rr < r; ++rr)
              for (int64_t ss = 0; ss < s; ++ss) {
                int64_t iy =
                    yy * c.strides[0] - c.padding[0] + rr * c.dilations[0];
                int64_t ix =
                    xx * c.strides[1] - c.padding[1] + ss * c.dilations[1];
                if (iy < 0 || iy >= h || ix < 0 || ix >= wd)
                  continue;
                int64_t g = o / kg;
                f(((i * ch + g * cg + cc) * h + iy) * wd + ix,
                  ((o * cg + cc) * r + rr) * s + ss,
                  ((i * k + o) * oh + yy) * ow + xx);
              }
}

double dot(const std::vector<double> &a, const std::vector<double> &b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i)
    s += a[i] * b[i];
  return s;
}

void checkGradients(const ConvCase &c, DType dtype, unsigned seed) {
  SCOPED_TRACE(::testing::Message()
               << dtypeName(dtype) << " input " << formatShape(c.input)
               << " weight " << formatShape(c.weight) << " groups "
               << c.groups);
  const Shape out = outputShape(c);
  HostTensor x = randomTensor(dtype, c.input, seed);
  HostTensor w = randomTensor(dtype, c.weight, seed + 1);
  HostTensor dy = randomTensor(dtype, out, seed + 2);
  std::vector<double> dx(x.values.size(), 0.0), dw(w.values.size(), 0.0);
  forEachTap(c, [&](int64_t xi, int64_t wi, int64_t yi) {
    dx[xi] += dy.values[yi] * w.values[wi];
    dw[wi] += dy.values[yi] * x.values[xi];
  });
  for (double &v : dx)
    v = roundTo(dtype, v);
  for (double &v : dw)
    v = roundTo(dtype, v);
  // Sums of up to a few hundred products: a little looser than one op.
  Tolerance tol = toleranceFor(dtype);
  double scale = dtype == DType::F64 ? 1 : 4;
  auto gotDx =
      runOp1("conv2d_backward_input", attrsOf(c), {dy, w}, {dtype, c.input});
  EXPECT_TRUE(close(gotDx, dx, scale * tol.atol, scale * tol.rtol))
      << "grad input";
  auto gotDw =
      runOp1("conv2d_backward_weight", attrsOf(c), {dy, x}, {dtype, c.weight});
  EXPECT_TRUE(close(gotDw, dw, scale * tol.atol, scale * tol.rtol))
      << "grad weight";
}

/// <conv(x, w), dy> = <x, dx> = <w, dw>, all through the runtime, in f64.
void checkAdjoint(const ConvCase &c, unsigned seed) {
  SCOPED_TRACE(::testing::Message() << "input " << formatShape(c.input)
                                    << " weight " << formatShape(c.weight));
  const Shape out = outputShape(c);
  HostTensor x = randomTensor(DType::F64, c.input, seed);
  HostTensor w = randomTensor(DType::F64, c.weight, seed + 1);
  HostTensor dy = randomTensor(DType::F64, out, seed + 2);
  auto y = runOp1("conv2d", attrsOf(c), {x, w}, {DType::F64, out});
  auto dx = runOp1("conv2d_backward_input", attrsOf(c), {dy, w},
                   {DType::F64, c.input});
  auto dw = runOp1("conv2d_backward_weight", attrsOf(c), {dy, x},
                   {DType::F64, c.weight});
  double lhs = dot(y, dy.values);
  double viaInput = dot(x.values, dx);
  double viaWeight = dot(w.values, dw);
  double tol = 1e-12 * (1 + std::fabs(lhs)) * std::sqrt(double(y.size()));
  EXPECT_NEAR(viaInput, lhs, tol);
  EXPECT_NEAR(viaWeight, lhs, tol);
  EXPECT_NE(lhs, 0.0);
}

const std::vector<ConvCase> &cases() {
  static const std::vector<ConvCase> all = {
      // Strides that do not divide the input, asymmetric everything.
      {{2, 3, 7, 6}, {4, 3, 3, 2}, {2, 1}, {1, 0}, {1, 2}, 1},
      // Stride 4 over 10 rows with a 3-tall kernel: rows 7..9 of the input
      // are never read, so their gradient is 0.
      {{1, 2, 10, 9}, {3, 2, 3, 3}, {4, 3}, {0, 1}, {1, 1}, 1},
      // Groups, padding, stride 2, odd sizes.
      {{2, 4, 9, 7}, {6, 2, 3, 3}, {2, 2}, {1, 1}, {1, 1}, 2},
      // Depthwise with dilation 2 and padding 2.
      {{2, 3, 8, 9}, {3, 1, 3, 3}, {1, 1}, {2, 2}, {2, 2}, 3},
      // Padding wider than the dilated kernel's reach on one side.
      {{1, 2, 5, 5}, {2, 2, 2, 2}, {3, 2}, {2, 1}, {2, 1}, 1},
      // The 1x1 fast path (no im2col) and a strided 1x1 (im2col).
      {{2, 4, 5, 3}, {6, 2, 1, 1}, {1, 1}, {0, 0}, {1, 1}, 2},
      {{2, 3, 5, 6}, {2, 3, 1, 1}, {2, 2}, {0, 0}, {1, 1}, 1},
      // A kernel covering the whole padded input (1x1 output).
      {{3, 2, 4, 3}, {5, 2, 6, 5}, {1, 1}, {1, 1}, {1, 1}, 1},
  };
  return all;
}

TEST(ConvBackwardTest, AgainstTheDefinitionF32) {
  unsigned seed = 100;
  for (const ConvCase &c : cases())
    checkGradients(c, DType::F32, seed += 10);
}

TEST(ConvBackwardTest, AgainstTheDefinitionF64) {
  unsigned seed = 200;
  for (const ConvCase &c : cases())
    checkGradients(c, DType::F64, seed += 10);
}

TEST(ConvBackwardTest, HalfPrecisionStorage) {
  checkGradients(cases()[0], DType::F16, 300);
  checkGradients(cases()[2], DType::BF16, 310);
}

TEST(ConvBackwardTest, AdjointIdentityF64) {
  unsigned seed = 400;
  for (const ConvCase &c : cases())
    checkAdjoint(c, seed += 10);
}

TEST(ConvBackwardTest, UnreadInputRowsGetZeroGradient) {
  const ConvCase &c = cases()[1];
  HostTensor dy = randomTensor(DType::F32, outputShape(c), 7);
  HostTensor w = randomTensor(DType::F32, c.weight, 8);
  auto dx = runOp1("conv2d_backward_input", attrsOf(c), {dy, w},
                   {DType::F32, c.input});
  // Output rows 0 and 1 read input rows 0..2 and 4..6.
  for (int64_t ch = 0; ch < 2; ++ch)
    for (int64_t row : {3, 7, 8, 9})
      for (int64_t col = 0; col < 9; ++col)
        EXPECT_EQ(dx[(ch * 10 + row) * 9 + col], 0.0) << row << "," << col;
}

} // namespace
