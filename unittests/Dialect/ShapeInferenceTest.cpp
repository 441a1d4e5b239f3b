//===- ShapeInferenceTest.cpp - memopt shape rules from C++ ---------------===//
//
// Builds ops through the C++ API (as passes will) and checks that result
// types are inferred, and that the shared shape helpers behave.
//
//===----------------------------------------------------------------------===//

#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace memopt;

namespace {

class ShapeInferenceTest : public ::testing::Test {
protected:
  ShapeInferenceTest() : builder(&context) {
    context.loadDialect<MemOptDialect, func::FuncDialect>();
    module = ModuleOp::create(builder.getUnknownLoc());
    builder.setInsertionPointToEnd(module->getBody());
  }

  /// A function whose arguments have the given types; the builder is left
  /// inside its body.
  func::FuncOp makeFunc(ArrayRef<Type> args) {
    auto func = func::FuncOp::create(builder, builder.getUnknownLoc(), "f",
                                     builder.getFunctionType(args, {}));
    builder.setInsertionPointToEnd(func.addEntryBlock());
    return func;
  }

  RankedTensorType f32(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, builder.getF32Type());
  }

  MLIRContext context;
  OpBuilder builder;
  OwningOpRef<ModuleOp> module;
};

TEST_F(ShapeInferenceTest, Conv2DInfersOutputShape) {
  func::FuncOp func = makeFunc({f32({8, 3, 32, 32}), f32({16, 3, 3, 3})});
  auto conv = Conv2DOp::create(
      builder, builder.getUnknownLoc(), func.getArgument(0),
      func.getArgument(1), /*bias=*/Value(),
      builder.getDenseI64ArrayAttr({2, 2}),
      builder.getDenseI64ArrayAttr({1, 1}),
      builder.getDenseI64ArrayAttr({1, 1}), builder.getI64IntegerAttr(1));
  EXPECT_EQ(conv.getType(), f32({8, 16, 16, 16}));
  func::ReturnOp::create(builder, builder.getUnknownLoc());
  EXPECT_TRUE(succeeded(verify(*module)));
}

TEST_F(ShapeInferenceTest, DilatedGroupedConv) {
  // 7x7 input, 3x3 kernel dilated by 2 covers 5 pixels: (7+0-4-1)/1+1 = 3.
  func::FuncOp func = makeFunc({f32({1, 4, 7, 7}), f32({6, 2, 3, 3})});
  auto conv = Conv2DOp::create(
      builder, builder.getUnknownLoc(), func.getArgument(0),
      func.getArgument(1), Value(), builder.getDenseI64ArrayAttr({1, 1}),
      builder.getDenseI64ArrayAttr({0, 0}),
      builder.getDenseI64ArrayAttr({2, 2}), builder.getI64IntegerAttr(2));
  EXPECT_EQ(conv.getType(), f32({1, 6, 3, 3}));
}

TEST_F(ShapeInferenceTest, MatMulBroadcastsBatchDims) {
  func::FuncOp func = makeFunc({f32({2, 1, 5, 3}), f32({4, 7, 3})});
  auto mm = MatMulOp::create(builder, builder.getUnknownLoc(),
                             func.getArgument(0), func.getArgument(1),
                             /*transpose_a=*/false, /*transpose_b=*/true);
  EXPECT_EQ(mm.getType(), f32({2, 4, 5, 7}));
}

TEST_F(ShapeInferenceTest, SubAndDivBroadcastLikeAddAndMul) {
  func::FuncOp func = makeFunc({f32({4, 1, 3}), f32({5, 1})});
  Value a = func.getArgument(0), b = func.getArgument(1);
  Location loc = builder.getUnknownLoc();
  auto sub = SubOp::create(builder, loc, a, b);
  auto div = DivOp::create(builder, loc, b, a);
  auto add = AddOp::create(builder, loc, a, b);
  EXPECT_EQ(sub.getType(), f32({4, 5, 3}));
  EXPECT_EQ(div.getType(), f32({4, 5, 3}));
  // The interfaces answer as add's and mul's do: one operation per element,
  // autocast follows, and no broadcast operand is an in-place candidate.
  for (Operation *op : {sub.getOperation(), div.getOperation()}) {
    EXPECT_EQ(cast<CostOpInterface>(op).getFlops(),
              cast<CostOpInterface>(add.getOperation()).getFlops());
    EXPECT_EQ(cast<PrecisionOpInterface>(op).getPrecisionClass(),
              PrecisionClass::Follow);
    EXPECT_TRUE(cast<InPlaceOpInterface>(op).getInPlaceOperands().empty());
  }
  auto same = DivOp::create(builder, loc, sub, sub);
  EXPECT_EQ(cast<InPlaceOpInterface>(same.getOperation()).getInPlaceOperands(),
            (SmallVector<unsigned>{0, 1}));
  // sub's gradient reads nothing; div's reads both operands (PyTorch's rule).
  EXPECT_TRUE(sub.getSavedForBackward().empty());
  EXPECT_EQ(div.getSavedForBackward(), (SmallVector<Value>{b, a}));
  func::ReturnOp::create(builder, loc);
  EXPECT_TRUE(succeeded(verify(*module)));
}

TEST_F(ShapeInferenceTest, BatchNormReturnsStatistics) {
  func::FuncOp func =
      makeFunc({f32({2, 3, 4, 4}), f32({3}), f32({3}), f32({3}), f32({3})});
  auto bn = BatchNormOp::create(
      builder, builder.getUnknownLoc(), func.getArgument(0),
      func.getArgument(1), func.getArgument(2), func.getArgument(3),
      func.getArgument(4), builder.getF64FloatAttr(1e-5),
      builder.getF64FloatAttr(0.1));
  EXPECT_EQ(bn.getResult().getType(), f32({2, 3, 4, 4}));
  EXPECT_EQ(bn.getNewRunningMean().getType(), f32({3}));
  EXPECT_EQ(bn.getNewRunningVar().getType(), f32({3}));
}

TEST_F(ShapeInferenceTest, InvalidOperandsReportWhy) {
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  func::FuncOp func = makeFunc({f32({8, 4, 32, 32}), f32({16, 3, 3, 3})});
  SmallVector<Type> inferred;
  SmallVector<Value> operands = {func.getArgument(0), func.getArgument(1)};
  // The entry point MLIR's builders and parser use: no properties yet, so the
  // attribute defaults must be filled in by the op itself.
  EXPECT_TRUE(failed(Conv2DOp::inferReturnTypes(
      &context, builder.getUnknownLoc(), operands,
      builder.getDictionaryAttr({}), /*properties=*/nullptr, /*regions=*/{},
      inferred)));
  EXPECT_NE(message.find("expected weight shape 16x4x3x3"), std::string::npos)
      << message;
}

TEST(ShapeHelpers, BroadcastShapes) {
  EXPECT_EQ(*broadcastShapes({8, 1, 5}, {3, 1}),
            (SmallVector<int64_t>{8, 3, 5}));
  EXPECT_EQ(*broadcastShapes({}, {2, 2}), (SmallVector<int64_t>{2, 2}));
  EXPECT_FALSE(broadcastShapes({4, 3}, {2, 3}).has_value());
}

TEST(ShapeHelpers, FormatShape) {
  EXPECT_EQ(formatShape({8, 64, 16, 16}), "8x64x16x16");
  EXPECT_EQ(formatShape({}), "scalar");
}

TEST(ParseTest, GenericAndCustomFormsAgree) {
  MLIRContext context;
  context.loadDialect<MemOptDialect, func::FuncDialect>();
  const char *custom = R"mlir(
    func.func @f(%x: tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32> {
      %y = memopt.max_pool2d %x {kernel_size = array<i64: 2, 2>} : tensor<2x3x8x8xf32>
      return %y : tensor<2x3x4x4xf32>
    })mlir";
  const char *generic = R"mlir(
    func.func @f(%x: tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32> {
      %y = "memopt.max_pool2d"(%x) <{kernel_size = array<i64: 2, 2>}> : (tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32>
      return %y : tensor<2x3x4x4xf32>
    })mlir";
  OwningOpRef<ModuleOp> a = parseSourceString<ModuleOp>(custom, &context);
  OwningOpRef<ModuleOp> b = parseSourceString<ModuleOp>(generic, &context);
  ASSERT_TRUE(a && b);
  std::string sa, sb;
  llvm::raw_string_ostream osa(sa), osb(sb);
  a->print(osa);
  b->print(osb);
  EXPECT_EQ(sa, sb);
}

} // namespace
