//===- DataMovementTest.cpp - reshape/transpose/slice/concat/upsample/ ----===//
//                            embedding kernels
//
// These move elements without arithmetic, so results must be exact, for
// integer dtypes and f16 alike.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

using namespace memopt::runtime;
using namespace memopt::runtime::test;

namespace {

HostTensor iota(DType dtype, Shape shape) {
  HostTensor t{dtype, shape, {}};
  for (int64_t i = 0; i < count(shape); ++i)
    t.values.push_back(dtype == DType::F16 ? roundTo(dtype, i * 0.25) : i);
  return t;
}

TEST(DataMovementKernelTest, ReshapeCopies) {
  for (DType dtype : {DType::F32, DType::I64, DType::BF16}) {
    HostTensor x = iota(dtype, {2, 3, 4});
    EXPECT_EQ(runOp1("reshape", json::object(), {x}, {dtype, {4, 6}}),
              x.values);
  }
}

TEST(DataMovementKernelTest, Transpose) {
  for (DType dtype : {DType::F32, DType::I64, DType::F16, DType::I32}) {
    HostTensor x = iota(dtype, {2, 3, 4});
    auto got = runOp1("transpose", {{"permutation", {2, 0, 1}}}, {x},
                      {dtype, {4, 2, 3}});
    std::vector<double> want;
    for (int64_t k = 0; k < 4; ++k)
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 3; ++j)
          want.push_back(x.values[(i * 3 + j) * 4 + k]);
    EXPECT_EQ(got, want) << dtypeName(dtype);
  }
  // Identity and a 2-D transpose.
  HostTensor m = iota(DType::F64, {3, 5});
  EXPECT_EQ(
      runOp1("transpose", {{"permutation", {0, 1}}}, {m}, {DType::F64, {3, 5}}),
      m.values);
  auto t =
      runOp1("transpose", {{"permutation", {1, 0}}}, {m}, {DType::F64, {5, 3}});
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 3; ++j)
      EXPECT_EQ(t[i * 3 + j], m.values[j * 5 + i]);
}

TEST(DataMovementKernelTest, SliceWithOffsetsSizesStrides) {
  HostTensor x = iota(DType::F32, {5, 6, 7});
  auto got = runOp1(
      "slice",
      {{"offsets", {1, 0, 2}}, {"sizes", {2, 3, 2}}, {"strides", {2, 1, 3}}},
      {x}, {DType::F32, {2, 3, 2}});
  std::vector<double> want;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 2; ++k)
        want.push_back(x.values[((1 + 2 * i) * 6 + j) * 7 + 2 + 3 * k]);
  EXPECT_EQ(got, want);
  // Default strides (absent) and an i64 slice of the last element.
  HostTensor y = iota(DType::I64, {4, 3});
  EXPECT_EQ(runOp1("slice", {{"offsets", {3, 2}}, {"sizes", {1, 1}}}, {y},
                   {DType::I64, {1, 1}}),
            std::vector<double>{11});
  EXPECT_EQ(
      runOp1("slice",
             {{"offsets", {1, 0}}, {"sizes", {2, 3}}, {"strides", nullptr}},
             {y}, {DType::I64, {2, 3}}),
      (std::vector<double>{3, 4, 5, 6, 7, 8}));
}

TEST(DataMovementKernelTest, ConcatAlongEveryAxis) {
  HostTensor a = iota(DType::F32, {2, 1, 3});
  HostTensor b = randomTensor(DType::F32, {2, 2, 3}, 3);
  HostTensor c = randomTensor(DType::F32, {2, 3, 3}, 4);
  auto got =
      runOp1("concat", {{"axis", 1}}, {a, b, c}, {DType::F32, {2, 6, 3}});
  std::vector<double> want;
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t k = 0; k < 3; ++k)
      want.push_back(a.values[i * 3 + k]);
    for (int64_t k = 0; k < 6; ++k)
      want.push_back(b.values[i * 6 + k]);
    for (int64_t k = 0; k < 9; ++k)
      want.push_back(c.values[i * 9 + k]);
  }
  EXPECT_EQ(got, want);

  HostTensor p = iota(DType::I32, {2, 2}), q = iota(DType::I32, {2, 1});
  EXPECT_EQ(runOp1("concat", {{"axis", -1}}, {p, q}, {DType::I32, {2, 3}}),
            (std::vector<double>{0, 1, 0, 2, 3, 1}));
  EXPECT_EQ(runOp1("concat", {{"axis", 0}}, {p, p}, {DType::I32, {4, 2}}),
            (std::vector<double>{0, 1, 2, 3, 0, 1, 2, 3}));
  HostTensor h = iota(DType::F16, {3});
  EXPECT_EQ(runOp1("concat", {{"axis", 0}}, {h}, {DType::F16, {3}}), h.values);
}

TEST(DataMovementKernelTest, UpsampleNearest) {
  HostTensor x = iota(DType::F32, {1, 2, 2, 3});
  auto got = runOp1("upsample_nearest2d", {{"scale", 3}}, {x},
                    {DType::F32, {1, 2, 6, 9}});
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t i = 0; i < 6; ++i)
      for (int64_t j = 0; j < 9; ++j)
        ASSERT_EQ(got[(c * 6 + i) * 9 + j],
                  x.values[(c * 2 + i / 3) * 3 + j / 3]);
  HostTensor h = iota(DType::F16, {2, 1, 1, 2});
  EXPECT_EQ(runOp1("upsample_nearest2d", {{"scale", 1}}, {h},
                   {DType::F16, {2, 1, 1, 2}}),
            h.values);
}

TEST(DataMovementKernelTest, EmbeddingWithI32AndI64Ids) {
  HostTensor table = randomTensor(DType::F32, {7, 4}, 5);
  for (DType idType : {DType::I32, DType::I64}) {
    HostTensor ids{idType, {2, 3}, {6, 0, 3, 3, 1, 6}};
    auto got = runOp1("embedding", json::object(), {table, ids},
                      {DType::F32, {2, 3, 4}});
    std::vector<double> want;
    for (double id : ids.values)
      for (int64_t d = 0; d < 4; ++d)
        want.push_back(table.values[static_cast<int64_t>(id) * 4 + d]);
    EXPECT_EQ(got, want);
  }
  HostTensor half = randomTensor(DType::F16, {3, 2}, 6);
  HostTensor one{DType::I64, {}, {2}};
  EXPECT_EQ(runOp1("embedding", json::object(), {half, one}, {DType::F16, {2}}),
            (std::vector<double>{half.values[4], half.values[5]}));
}

TEST(DataMovementKernelTest, EmbeddingIdOutOfRangeIsAnErrorNamingTheStep) {
  HostTensor table = randomTensor(DType::F32, {5, 2}, 5);
  for (double bad : {5.0, -1.0}) {
    HostTensor ids{DType::I64, {3}, {0, bad, 1}};
    std::string message = errorOf([&] {
      runOp1("embedding", json::object(), {table, ids}, {DType::F32, {3, 2}});
    });
    EXPECT_NE(message.find("steps[0] (embedding at test.mlir:1:1)"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("outside [0, 5)"), std::string::npos) << message;
  }
}

} // namespace
