//===- MemoryAnalysisTest.cpp - MemoryAnalysis from C++ -------------------===//
//
// The analysis through its C++ API, as passes use it: sizes, lifetimes,
// roles, the alias hook, live bytes, the report totals and the FLOP model of
// CostOpInterface. The lit tests pin the printed form on whole graphs; these
// check the queries and the corner cases one at a time.
//
//===----------------------------------------------------------------------===//

#include "memopt/Analysis/MemoryAnalysis.h"
#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"

#include "mlir/Analysis/Liveness.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace memopt;

namespace {

class MemoryAnalysisTest : public ::testing::Test {
protected:
  MemoryAnalysisTest() {
    context
        .loadDialect<MemOptDialect, func::FuncDialect, arith::ArithDialect>();
  }

  /// Parses `source` and returns its first function. Without verification
  /// when asked, to see what the analysis makes of IR the verifier rejects
  /// (an in-place operand index out of range).
  func::FuncOp parse(StringRef source, bool verify = true) {
    module = parseSourceString<ModuleOp>(
        source, ParserConfig(&context, /*verifyAfterParse=*/verify));
    if (!module)
      return {};
    return *module->getOps<func::FuncOp>().begin();
  }

  /// The `n`th op of the function body.
  Operation *op(func::FuncOp func, unsigned n) {
    return &*std::next(func.getBody().front().begin(), n);
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

constexpr StringLiteral kForward = R"mlir(
func.func @f(%w: tensor<4x8xf32> {memopt.param}, %s: tensor<4xf32> {memopt.state},
             %x: tensor<2x8xf32>, %y: tensor<2xi64>, %unused: tensor<3xf16>)
    -> tensor<f32> {
  %h = memopt.linear %x, %w : tensor<2x8xf32>, tensor<4x8xf32>
  %a = memopt.relu %h : tensor<2x4xf32>
  %dead = memopt.tanh %h : tensor<2x4xf32>
  %l = memopt.cross_entropy %a, %y : tensor<2x4xf32>, tensor<2xi64>
  return %l : tensor<f32>
}
)mlir";

TEST_F(MemoryAnalysisTest, SizesLifetimesAndRoles) {
  func::FuncOp func = parse(kForward);
  ASSERT_TRUE(func);
  MemoryAnalysis analysis(func);
  ASSERT_EQ(analysis.getNumOps(), 4);
  ASSERT_EQ(analysis.getValues().size(), 9u);

  const ValueInfo *w = analysis.lookup(func.getArgument(0));
  ASSERT_TRUE(w);
  EXPECT_EQ(w->bytes, 128);
  EXPECT_EQ(w->def, -1);
  EXPECT_EQ(w->lastUse, 0);
  EXPECT_EQ(w->end, 4); // arguments live for the whole step
  EXPECT_EQ(w->role, ValueRole::Param);
  EXPECT_EQ(analysis.lookup(func.getArgument(1))->role, ValueRole::State);
  EXPECT_EQ(analysis.lookup(func.getArgument(2))->role, ValueRole::Data);
  EXPECT_EQ(analysis.lookup(func.getArgument(3))->bytes, 16); // i64

  // Unused: its last use is its definition.
  const ValueInfo *unused = analysis.lookup(func.getArgument(4));
  EXPECT_EQ(unused->bytes, 6); // f16
  EXPECT_EQ(unused->lastUse, -1);

  const ValueInfo *h = analysis.lookup(op(func, 0)->getResult(0));
  EXPECT_EQ(h->def, 0);
  EXPECT_EQ(h->lastUse, 2);
  EXPECT_EQ(h->role, ValueRole::Activation);
  EXPECT_FALSE(h->isAlias());

  // Not needed by the loss: backward, even without autodiff.
  const ValueInfo *dead = analysis.lookup(op(func, 2)->getResult(0));
  EXPECT_EQ(dead->lastUse, 2);
  EXPECT_EQ(dead->role, ValueRole::Gradient);
  EXPECT_FALSE(analysis.isForward(op(func, 2)));
  EXPECT_EQ(analysis.getFirstBackwardIndex(), 2);

  // Returned: lives to the end, the terminator's index.
  const ValueInfo *loss = analysis.lookup(op(func, 3)->getResult(0));
  EXPECT_EQ(loss->lastUse, 4);
  EXPECT_EQ(analysis.getIndex(func.getBody().front().getTerminator()), 4);
  EXPECT_EQ(analysis.getIndex(func), -1);
}

TEST_F(MemoryAnalysisTest, LiveBytesAndPeak) {
  func::FuncOp func = parse(kForward);
  ASSERT_TRUE(func);
  MemoryAnalysis analysis(func);
  // Arguments: 128 + 16 + 64 + 16 + 6 = 230 bytes at every op.
  // op 0: h; op 1: h a; op 2: h a dead; op 3: a l.
  EXPECT_EQ(analysis.getLiveBytes(0), 230 + 32);
  EXPECT_EQ(analysis.getLiveBytes(1), 230 + 64);
  EXPECT_EQ(analysis.getLiveBytes(2), 230 + 96);
  EXPECT_EQ(analysis.getLiveBytes(3), 230 + 36);
  EXPECT_EQ(analysis.getPeakBytes(), 326);

  Value h = op(func, 0)->getResult(0);
  EXPECT_TRUE(analysis.isLiveAt(h, 2));
  EXPECT_FALSE(analysis.isLiveAt(h, 3));
  EXPECT_TRUE(analysis.isLiveAt(func.getArgument(4), 3));

  EXPECT_EQ(analysis.getParameterCount(), 32);
  EXPECT_EQ(analysis.getParameterBytes(), 128);
  EXPECT_EQ(analysis.getForwardAllocatedBytes(), 32 + 32 + 4);
  // At op 2 (the first backward op) h and a are live; the loss is
  // computed later (op 3), so it is not saved.
  EXPECT_EQ(analysis.getSavedForBackwardBytes(), 32 + 32);
  EXPECT_EQ(analysis.getGradientBytes(), 0);
  EXPECT_EQ(analysis.getArenaBytes(), std::nullopt);
}

TEST_F(MemoryAnalysisTest, FreesDoNotStartTheBackwardPass) {
  // A scheduled step frees dead forward values during the forward pass; the
  // first backward op is still the first op computing a gradient.
  func::FuncOp func = parse(R"mlir(
func.func @f(%w: tensor<4x8xf32> {memopt.param}, %x: tensor<2x8xf32>,
             %y: tensor<2xi64>) -> tensor<f32> {
  %h = memopt.linear %x, %w : tensor<2x8xf32>, tensor<4x8xf32>
  %a = memopt.relu %h : tensor<2x4xf32>
  memopt.free %h : tensor<2x4xf32>
  %l = memopt.cross_entropy %a, %y : tensor<2x4xf32>, tensor<2xi64>
  %one = arith.constant dense<1.0> : tensor<f32>
  %g = memopt.cross_entropy_backward %one, %a, %y : (tensor<f32>, tensor<2x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  return %l : tensor<f32>
}
)mlir");
  ASSERT_TRUE(func);
  MemoryAnalysis analysis(func);
  EXPECT_EQ(analysis.getFirstBackwardIndex(), 5);
  // %a (the backward op reads it) and the loss, computed before it.
  EXPECT_EQ(analysis.getSavedForBackwardBytes(), 32 + 4);
}

TEST_F(MemoryAnalysisTest, AliasHook) {
  func::FuncOp func = parse(R"mlir(
func.func @f(%x: tensor<4x8xf32>) -> (tensor<32xf32>, tensor<4x8xf32>) {
  %0 = memopt.tanh %x : tensor<4x8xf32>
  %1 = memopt.relu %0 {memopt.inplace = 0 : i64} : tensor<4x8xf32>
  %2 = memopt.reshape %1 : tensor<4x8xf32> -> tensor<32xf32>
  %3 = memopt.sigmoid %x {memopt.inplace = 3 : i64} : tensor<4x8xf32>
  %4 = memopt.relu %x {memopt.inplace = 0 : i64} : tensor<4x8xf32>
  return %2, %3 : tensor<32xf32>, tensor<4x8xf32>
}
)mlir",
                            /*verify=*/false);
  ASSERT_TRUE(func);
  Value v0 = op(func, 0)->getResult(0), v1 = op(func, 1)->getResult(0),
        v2 = op(func, 2)->getResult(0), v3 = op(func, 3)->getResult(0),
        v4 = op(func, 4)->getResult(0);
  // One step at a time; getRoot follows the chain.
  EXPECT_EQ(MemoryAnalysis::aliasOf(v1), v0);
  EXPECT_EQ(MemoryAnalysis::aliasOf(v2), v1);
  EXPECT_EQ(MemoryAnalysis::aliasOf(v0), Value());
  EXPECT_EQ(MemoryAnalysis::aliasOf(func.getArgument(0)), Value());
  // An operand index out of range names no buffer.
  EXPECT_EQ(MemoryAnalysis::aliasOf(v3), Value());
  EXPECT_EQ(MemoryAnalysis::aliasOf(v4), func.getArgument(0));

  MemoryAnalysis analysis(func);
  EXPECT_EQ(analysis.getRoot(v2), v0);
  EXPECT_EQ(analysis.getRoot(v4), func.getArgument(0));
  // The root lives as long as its last alias: %2 is returned.
  EXPECT_EQ(analysis.lookup(v0)->end, 5);
  EXPECT_EQ(analysis.lookup(v2)->lastUse, 5);
  EXPECT_EQ(analysis.lookup(v1)->lastUse, 2);
  EXPECT_EQ(analysis.lookup(v1)->end, 5);
  // Aliases allocate nothing: 128 (x) + 128 (%0) at op 1 and 2.
  EXPECT_EQ(analysis.getLiveBytes(1), 256);
  EXPECT_EQ(analysis.getLiveBytes(2), 256);
  EXPECT_EQ(analysis.getLiveBytes(3), 384);
  EXPECT_EQ(analysis.getLiveBytes(4), 384);
  EXPECT_EQ(analysis.getForwardAllocatedBytes(), 256);
}

TEST_F(MemoryAnalysisTest, FreeEndsALifetime) {
  func::FuncOp func = parse(R"mlir(
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = memopt.relu %x : tensor<8xf32>
  %1 = memopt.tanh %0 : tensor<8xf32>
  memopt.free %0 : tensor<8xf32>
  %2 = memopt.sigmoid %1 : tensor<8xf32>
  return %2 : tensor<8xf32>
}
)mlir");
  ASSERT_TRUE(func);
  MemoryAnalysis analysis(func);
  EXPECT_EQ(analysis.lookup(op(func, 0)->getResult(0))->end, 2);
  EXPECT_EQ(analysis.getLiveBytes(2), 32 + 64);
  EXPECT_EQ(analysis.getLiveBytes(3), 32 + 64);
  EXPECT_EQ(MemoryAnalysis::getFlops(op(func, 2)), 0);
}

// Lifetimes are computed from the uses directly; they must be what
// mlir::Liveness says for the block: the latest op using the value (a use
// inside an op's region counts at that op, a free and the terminator are
// uses), else the definition.
TEST_F(MemoryAnalysisTest, LifetimesAgreeWithMlirLiveness) {
  context.allowUnregisteredDialects();
  func::FuncOp func = parse(R"mlir(
func.func @f(%w: tensor<4x8xf32> {memopt.param}, %x: tensor<2x8xf32>,
             %y: tensor<2xi64>, %unused: tensor<3xf32>, %late: tensor<2x4xf32>)
    -> (tensor<f32>, tensor<2x4xf32>) {
  %0 = memopt.linear %x, %w : tensor<2x8xf32>, tensor<4x8xf32>
  %1 = memopt.relu %0 : tensor<2x4xf32>
  %dead = memopt.tanh %1 : tensor<2x4xf32>
  "test.region"() ({
    %in = memopt.sigmoid %0 : tensor<2x4xf32>
    "test.use"(%in, %x) : (tensor<2x4xf32>, tensor<2x8xf32>) -> ()
    "test.end"() : () -> ()
  }) : () -> ()
  %2 = memopt.cross_entropy %1, %y : tensor<2x4xf32>, tensor<2xi64>
  memopt.free %1 : tensor<2x4xf32>
  %3 = memopt.add %late, %0 : tensor<2x4xf32>, tensor<2x4xf32>
  return %2, %3 : tensor<f32>, tensor<2x4xf32>
}
)mlir");
  ASSERT_TRUE(func);
  MemoryAnalysis analysis(func);
  Block &block = func.getBody().front();
  Liveness liveness(func);
  const LivenessBlockInfo *blockInfo = liveness.getLiveness(&block);
  ASSERT_TRUE(blockInfo);
  int checked = 0;
  for (const ValueInfo &info : analysis.getValues()) {
    Value value = info.value;
    if (value.use_empty()) {
      EXPECT_EQ(info.lastUse, info.def);
      continue;
    }
    Operation *start = info.def < 0 ? &block.front() : value.getDefiningOp();
    EXPECT_EQ(info.lastUse,
              analysis.getIndex(blockInfo->getEndOperation(value, start)))
        << "value #" << checked;
    ++checked;
  }
  // %w, %x, %y, %late, %0, %1, %2, %3 have uses.
  EXPECT_EQ(checked, 8);
  // %x is last read inside the region op (index 3), %0 by the add.
  EXPECT_EQ(analysis.lookup(func.getArgument(1))->lastUse, 3);
  EXPECT_EQ(analysis.lookup(op(func, 0)->getResult(0))->lastUse, 6);
}

// A training step as --memopt-autodiff=optimizer=none writes it: the
// gradients are returned, not consumed by an update.
TEST_F(MemoryAnalysisTest, ReturnedGradientsCount) {
  func::FuncOp func = parse(R"mlir(
func.func @f(%w: tensor<4x8xf32> {memopt.param}, %x: tensor<2x8xf32>,
             %y: tensor<2xi64>) -> (tensor<f32>, tensor<4x8xf32>) {
  %0 = memopt.linear %x, %w : tensor<2x8xf32>, tensor<4x8xf32>
  %1 = memopt.cross_entropy %0, %y : tensor<2x4xf32>, tensor<2xi64>
  %cst = arith.constant dense<1.000000e+00> : tensor<f32>
  %2 = memopt.cross_entropy_backward %cst, %0, %y : (tensor<f32>, tensor<2x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  %3 = memopt.matmul %2, %x {transpose_a = true} : tensor<2x4xf32>, tensor<2x8xf32>
  return %1, %3 : tensor<f32>, tensor<4x8xf32>
}
)mlir");
  ASSERT_TRUE(func);
  MemoryAnalysis analysis(func);
  // The seed constant is not where the backward pass starts.
  EXPECT_EQ(analysis.getFirstBackwardIndex(), 3);
  EXPECT_EQ(analysis.getGradientBytes(), 128);
  EXPECT_EQ(analysis.lookup(op(func, 4)->getResult(0))->role,
            ValueRole::Gradient);
  // The logits (read by the backward) and the loss (returned).
  EXPECT_EQ(analysis.getSavedForBackwardBytes(), 32 + 4);
  EXPECT_EQ(MemoryAnalysis::getFlops(op(func, 2)), 0); // a constant
}

TEST_F(MemoryAnalysisTest, OptimizerStateAndOutputs) {
  func::FuncOp func = parse(R"mlir(
func.func @f(%w: tensor<8xf32> {memopt.param}, %x: tensor<8xf32>,
             %m: tensor<8xf32> {memopt.optimizer_state},
             %v: tensor<8xf32> {memopt.optimizer_state},
             %t: tensor<f32> {memopt.optimizer_state})
    -> (tensor<f32>, tensor<8xf32> {memopt.updates = 0 : i64},
        tensor<8xf32> {memopt.updates = 2 : i64},
        tensor<8xf32> {memopt.updates = 3 : i64},
        tensor<f32> {memopt.updates = 4 : i64}) {
  %0 = memopt.mul %w, %x : tensor<8xf32>, tensor<8xf32>
  %1 = memopt.mse_loss %0, %x : tensor<8xf32>
  %one = arith.constant dense<1.000000e+00> : tensor<f32>
  %g = memopt.mse_loss_backward %one, %0, %x : (tensor<f32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %gw = memopt.mul %g, %x : tensor<8xf32>, tensor<8xf32>
  %t1 = memopt.add %t, %one : tensor<f32>, tensor<f32>
  %p, %m1, %v1 = memopt.adam_update %w, %gw, %m, %v, %t1 {lr = 1.000000e-03 : f64}
      : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<f32>)
      -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %1, %p, %m1, %v1, %t1 : tensor<f32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<f32>
}
)mlir");
  ASSERT_TRUE(func);
  MemoryAnalysis analysis(func);
  EXPECT_EQ(analysis.getOptimizerStateBytes(), 32 + 32 + 4);
  EXPECT_EQ(analysis.getGradientBytes(), 32); // %gw, not %g
  EXPECT_EQ(analysis.lookup(op(func, 6)->getResult(1))->role,
            ValueRole::Optimizer);
  // The new step count updates an argument: an optimizer output too.
  EXPECT_EQ(analysis.lookup(op(func, 5)->getResult(0))->role,
            ValueRole::Optimizer);
  EXPECT_EQ(analysis.lookup(op(func, 4)->getResult(0))->role,
            ValueRole::Gradient);
  EXPECT_EQ(stringifyValueRole(ValueRole::OptimizerState), "optimizer_state");
}

TEST_F(MemoryAnalysisTest, AttributesOfLaterPasses) {
  func::FuncOp func = parse(R"mlir(
func.func @f(%x: tensor<2x8xf32>, %w: tensor<4x8xf32> {memopt.param})
    -> tensor<2x4xf32> attributes {memopt.arena_bytes = 1024 : i64} {
  %0 = memopt.linear %x, %w {memopt.recompute} : tensor<2x8xf32>, tensor<4x8xf32>
  %1 = memopt.relu %0 : tensor<2x4xf32>
  return %1 : tensor<2x4xf32>
}
)mlir");
  ASSERT_TRUE(func);
  MemoryAnalysis analysis(func);
  EXPECT_EQ(analysis.getArenaBytes(), 1024);
  EXPECT_EQ(analysis.getRecomputeFlops(), 128);
  EXPECT_EQ(analysis.getTotalFlops(), 128 + 8);
  // No scalar loss: an inference graph, every op forward.
  EXPECT_EQ(analysis.getFirstBackwardIndex(), 2);
  EXPECT_TRUE(analysis.isForward(op(func, 1)));
  EXPECT_EQ(analysis.getSavedForBackwardBytes(), 0);
}

TEST_F(MemoryAnalysisTest, EmptyBody) {
  func::FuncOp func = parse(R"mlir(
func.func @f(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  return %x : tensor<2x8xf32>
}
)mlir");
  ASSERT_TRUE(func);
  MemoryAnalysis analysis(func);
  EXPECT_EQ(analysis.getNumOps(), 0);
  EXPECT_EQ(analysis.getPeakBytes(), 64);
  EXPECT_EQ(analysis.lookup(func.getArgument(0))->lastUse, 0);
}

//===----------------------------------------------------------------------===//
// FLOP model (CostOpInterface)
//===----------------------------------------------------------------------===//

TEST_F(MemoryAnalysisTest, FlopModel) {
  func::FuncOp func = parse(R"mlir(
func.func @f(%x: tensor<2x4x8x8xf32>, %w: tensor<6x2x3x3xf32>,
             %dy: tensor<2x6x4x4xf32>, %a: tensor<3x5x7xf32>,
             %lw: tensor<9x7xf32>, %b: tensor<1x5x7xf32>,
             %g: tensor<4xf32>, %lg: tensor<7xf32>, %c: tensor<5x1xf32>) {
  %conv = memopt.conv2d %x, %w {groups = 2 : i64, padding = array<i64: 1, 1>, strides = array<i64: 2, 2>}
      : tensor<2x4x8x8xf32>, tensor<6x2x3x3xf32>
  %dx = memopt.conv2d_backward_input %dy, %w {groups = 2 : i64, padding = array<i64: 1, 1>, strides = array<i64: 2, 2>}
      : (tensor<2x6x4x4xf32>, tensor<6x2x3x3xf32>) -> tensor<2x4x8x8xf32>
  %dw = memopt.conv2d_backward_weight %dy, %x {groups = 2 : i64, padding = array<i64: 1, 1>, strides = array<i64: 2, 2>}
      : (tensor<2x6x4x4xf32>, tensor<2x4x8x8xf32>) -> tensor<6x2x3x3xf32>
  %lin = memopt.linear %a, %lw : tensor<3x5x7xf32>, tensor<9x7xf32>
  %mm = memopt.matmul %a, %b {transpose_b = true} : tensor<3x5x7xf32>, tensor<1x5x7xf32>
  %mt = memopt.matmul %a, %a {transpose_a = true} : tensor<3x5x7xf32>, tensor<3x5x7xf32>
  %bn, %rm, %rv = memopt.batch_norm %x, %g, %g, %g, %g : tensor<2x4x8x8xf32>, tensor<4xf32>
  %ln = memopt.layer_norm %a, %lg, %lg : tensor<3x5x7xf32>, tensor<7xf32>
  %add = memopt.add %a, %c : tensor<3x5x7xf32>, tensor<5x1xf32>
  %gap = memopt.global_avg_pool2d %x : tensor<2x4x8x8xf32>
  %r = memopt.reshape %a : tensor<3x5x7xf32> -> tensor<105xf32>
  return
}
)mlir");
  ASSERT_TRUE(func);
  auto flops = [&](unsigned n) {
    return MemoryAnalysis::getFlops(op(func, n));
  };
  // conv: 2·N·K·OH·OW·(C/groups)·R·S = 2·2·6·4·4·2·3·3.
  EXPECT_EQ(flops(0), 2 * 2 * 6 * 4 * 4 * 2 * 3 * 3);
  // Both backward convolutions cost what the forward one does.
  EXPECT_EQ(flops(1), flops(0));
  EXPECT_EQ(flops(2), flops(0));
  // linear over a batched input: M = 3·5, N = 9, K = 7.
  EXPECT_EQ(flops(3), 2 * 15 * 9 * 7);
  // a·bᵀ: 5x7 · 7x5 over 3 broadcast batches, K = 7.
  EXPECT_EQ(flops(4), 2 * 3 * 5 * 5 * 7);
  // aᵀ·a: 7x5 · 5x7 per batch, K = 5.
  EXPECT_EQ(flops(5), 2 * 3 * 7 * 7 * 5);
  // Norms: five per element of x.
  EXPECT_EQ(flops(6), 5 * 2 * 4 * 8 * 8);
  EXPECT_EQ(flops(7), 5 * 3 * 5 * 7);
  // Element-wise with broadcasting: one per result element.
  EXPECT_EQ(flops(8), 3 * 5 * 7);
  // A reduction: one per input element.
  EXPECT_EQ(flops(9), 2 * 4 * 8 * 8);
  // A view computes nothing.
  EXPECT_EQ(flops(10), 0);
  EXPECT_TRUE(isa<CostOpInterface>(op(func, 8)));
  EXPECT_FALSE(isa<CostOpInterface>(op(func, 10)));
}

} // namespace
