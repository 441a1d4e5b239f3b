//===- FuseAttentionTest.cpp - fused attention against the unfused chain --===//
//
// Differential tests of --memopt-fuse-attention: a training step's loss and
// every parameter gradient computed with the fused memopt.attention (its
// strips, recomputed probabilities and regenerated dropout mask) against
// the unfused matmul → scale → softmax → dropout → matmul chain, both on
// the CPU runtime in f32. The arithmetic is rounded in another order, so
// they agree to rounding: the loss within 1e-5 relative and each gradient
// element within 1e-5 of its tensor's largest magnitude. Graphs: a GPT-2
// with 67 tokens (a full 64-row strip and a partial one) and 3 heads of 8,
// causal with dropout; and hand-written attention with the scale on q, a
// division by √d, k transposed by memopt.transpose, three separate
// projections, no mask and no dropout; and LLaMA's grouped-query attention
// with a constant causal mask as the exporters write it, BERT's
// key-padding bias, and SDPA's boolean mask with a safe softmax over a
// sequence whose every key is masked.
//
// The gradient rule itself is checked against finite differences in
// GradCheckTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "TrainingTestUtil.h"

#include <gtest/gtest.h>

using namespace memopt;
using namespace memopt::testing;

namespace {

/// Runs `source` through `autodiff` (which returns the loss and then the
/// gradients) with and without the fusion first, both followed by `after`,
/// on the same arguments, and compares every result to 1e-5 of its
/// largest magnitude. `fusedChains` is the number of attention ops the
/// fusion must create.
void expectFusedMatchesUnfused(const std::string &source,
                               const std::string &autodiff,
                               const std::string &after, size_t fusedChains) {
  auto base = CompiledStep::compile(source, autodiff + after);
  auto fused = CompiledStep::compile(source, "memopt-fuse-attention," +
                                                 autodiff + after);
  ASSERT_TRUE(base && fused);
  EXPECT_EQ(countKernels(*base, runtime::KernelKind::Attention), 0u);
  EXPECT_EQ(countKernels(*fused, runtime::KernelKind::Attention), fusedChains);
  EXPECT_EQ(countKernels(*fused, runtime::KernelKind::AttentionBackward),
            fusedChains);
  EXPECT_EQ(countKernels(*fused, runtime::KernelKind::Softmax), 0u);
  expectResultsCloseToRounding(*base, *fused, /*seed=*/5, 1e-5);
}

TEST(FuseAttention, Gpt2OddSequenceMatchesUnfused) {
  expectFusedMatchesUnfused(suiteModelSource("gpt2-odd"),
                            "memopt-autodiff{optimizer=none}", "", 2);
}

// Planned: the kernels use the workspace the plan reserves (a strip of 64
// rows here), and the fused step's arena is smaller.
TEST(FuseAttention, PlannedGpt2MatchesUnfusedAndIsSmaller) {
  std::string source = suiteModelSource("gpt2-odd");
  const std::string autodiff = "memopt-autodiff{optimizer=none}";
  const std::string after = ",memopt-schedule,memopt-plan-memory";
  expectFusedMatchesUnfused(source, autodiff, after, 2);
  auto base = CompiledStep::compile(source, autodiff + after);
  auto fused = CompiledStep::compile(source, "memopt-fuse-attention," +
                                                 autodiff + after);
  ASSERT_TRUE(base && fused);
  EXPECT_LT(fused->plan().arenaBytes, base->plan().arenaBytes);
}

// Strips of one query row: the workspace capped below a 64-row strip.
TEST(FuseAttention, CappedWorkspaceMatchesUnfused) {
  expectFusedMatchesUnfused(suiteModelSource("gpt2-odd"),
                            "memopt-autodiff{optimizer=none}",
                            ",memopt-workspace-limit{bytes=0},memopt-schedule,"
                            "memopt-plan-memory",
                            2);
}

/// Two-head attention on 2x10 tokens of width 8 with three separate
/// projections: the scale multiplies q beforehand (a constant read only
/// there), k is transposed by memopt.transpose, no mask, no dropout; then
/// a second attention on the result that divides its scores by √d.
const char *kSeparateProjections = R"mlir(
func.func @f(%x: tensor<2x10x8xf32>, %wq: tensor<8x8xf32> {memopt.param},
             %wk: tensor<8x8xf32> {memopt.param}, %wv: tensor<8x8xf32> {memopt.param},
             %t: tensor<2x2x10x4xf32>) -> tensor<f32> {
  %q0 = memopt.linear %x, %wq : tensor<2x10x8xf32>, tensor<8x8xf32>
  %k0 = memopt.linear %x, %wk : tensor<2x10x8xf32>, tensor<8x8xf32>
  %v0 = memopt.linear %x, %wv : tensor<2x10x8xf32>, tensor<8x8xf32>
  %q1 = memopt.reshape %q0 : tensor<2x10x8xf32> -> tensor<2x10x2x4xf32>
  %k1 = memopt.reshape %k0 : tensor<2x10x8xf32> -> tensor<2x10x2x4xf32>
  %v1 = memopt.reshape %v0 : tensor<2x10x8xf32> -> tensor<2x10x2x4xf32>
  %q = memopt.transpose %q1 {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x10x2x4xf32>
  %k = memopt.transpose %k1 {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x10x2x4xf32>
  %v = memopt.transpose %v1 {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x10x2x4xf32>
  %half = arith.constant dense<5.000000e-01> : tensor<f32>
  %qs = memopt.mul %q, %half : tensor<2x2x10x4xf32>, tensor<f32>
  %kt = memopt.transpose %k {permutation = array<i64: 0, 1, 3, 2>} : tensor<2x2x10x4xf32>
  %s = memopt.matmul %qs, %kt : tensor<2x2x10x4xf32>, tensor<2x2x4x10xf32>
  %p = memopt.softmax %s : tensor<2x2x10x10xf32>
  %o = memopt.matmul %p, %v : tensor<2x2x10x10xf32>, tensor<2x2x10x4xf32>
  %two = arith.constant dense<2.000000e+00> : tensor<f32>
  %s2 = memopt.matmul %o, %k {transpose_b = true} : tensor<2x2x10x4xf32>, tensor<2x2x10x4xf32>
  %s3 = memopt.div %s2, %two : tensor<2x2x10x10xf32>, tensor<f32>
  %p2 = memopt.softmax %s3 {causal = true} : tensor<2x2x10x10xf32>
  %d2 = memopt.dropout %p2 {p = 0.25 : f64, seed = 4 : i64} : tensor<2x2x10x10xf32>
  %o2 = memopt.matmul %d2, %v : tensor<2x2x10x10xf32>, tensor<2x2x10x4xf32>
  %loss = memopt.mse_loss %o2, %t : tensor<2x2x10x4xf32>
  return %loss : tensor<f32>
}
)mlir";

TEST(FuseAttention, SeparateProjectionsMatchUnfused) {
  expectFusedMatchesUnfused(kSeparateProjections,
                            "memopt-autodiff{optimizer=none}", "", 2);
}

/// LLaMA's attention as both of PyTorch's exporters write it: 4 query
/// heads over 2 key/value heads, K repeated by a mul with ones and V by a
/// concat of copies (repeat_interleave), kᵀ as reshape, transpose,
/// reshape, √scale on q and on kᵀ, and SDPA's is_causal as an additive
/// mask of float32's lowest value. The fusion reads K and V in place.
const char *kGroupedCausal = R"mlir(
func.func @f(%x: tensor<2x6x8xf32>, %wq: tensor<8x8xf32> {memopt.param},
             %wk: tensor<4x8xf32> {memopt.param}, %wv: tensor<4x8xf32> {memopt.param},
             %t: tensor<2x4x6x2xf32>) -> tensor<f32> {
  %q0 = memopt.linear %x, %wq : tensor<2x6x8xf32>, tensor<8x8xf32>
  %k0 = memopt.linear %x, %wk : tensor<2x6x8xf32>, tensor<4x8xf32>
  %v0 = memopt.linear %x, %wv : tensor<2x6x8xf32>, tensor<4x8xf32>
  %q1 = memopt.reshape %q0 : tensor<2x6x8xf32> -> tensor<2x6x4x2xf32>
  %k1 = memopt.reshape %k0 : tensor<2x6x4xf32> -> tensor<2x6x2x2xf32>
  %v1 = memopt.reshape %v0 : tensor<2x6x4xf32> -> tensor<2x6x2x2xf32>
  %q = memopt.transpose %q1 {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x6x4x2xf32>
  %k = memopt.transpose %k1 {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x6x2x2xf32>
  %v = memopt.transpose %v1 {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x6x2x2xf32>
  %ku = memopt.reshape %k : tensor<2x2x6x2xf32> -> tensor<2x2x1x6x2xf32>
  %ones = arith.constant dense<1.000000e+00> : tensor<1x1x2x1x1xf32>
  %ke = memopt.mul %ku, %ones : tensor<2x2x1x6x2xf32>, tensor<1x1x2x1x1xf32>
  %kr = memopt.reshape %ke : tensor<2x2x2x6x2xf32> -> tensor<2x4x6x2xf32>
  %vu = memopt.reshape %v : tensor<2x2x6x2xf32> -> tensor<2x2x1x6x2xf32>
  %ve = memopt.concat %vu, %vu {axis = 2 : i64} : tensor<2x2x1x6x2xf32>, tensor<2x2x1x6x2xf32>
  %vr = memopt.reshape %ve : tensor<2x2x2x6x2xf32> -> tensor<2x4x6x2xf32>
  %kf = memopt.reshape %kr : tensor<2x4x6x2xf32> -> tensor<8x6x2xf32>
  %kft = memopt.transpose %kf {permutation = array<i64: 0, 2, 1>} : tensor<8x6x2xf32>
  %kt = memopt.reshape %kft : tensor<8x2x6xf32> -> tensor<2x4x2x6xf32>
  %c = arith.constant dense<8.408964e-01> : tensor<1xf32>
  %qs = memopt.mul %q, %c : tensor<2x4x6x2xf32>, tensor<1xf32>
  %kts = memopt.mul %kt, %c : tensor<2x4x2x6xf32>, tensor<1xf32>
  %s = memopt.matmul %qs, %kts : tensor<2x4x6x2xf32>, tensor<2x4x2x6xf32>
  %mask = arith.constant dense<[
      [0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38],
      [0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38],
      [0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38],
      [0.0, 0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38],
      [0.0, 0.0, 0.0, 0.0, 0.0, -3.40282347E+38],
      [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<6x6xf32>
  %m = memopt.add %s, %mask : tensor<2x4x6x6xf32>, tensor<6x6xf32>
  %p = memopt.softmax %m : tensor<2x4x6x6xf32>
  %o = memopt.matmul %p, %vr : tensor<2x4x6x6xf32>, tensor<2x4x6x2xf32>
  %loss = memopt.mse_loss %o, %t : tensor<2x4x6x2xf32>
  return %loss : tensor<f32>
}
)mlir";

/// Attention with a key-padding bias from the data (B×1×1×Sk) added to the
/// scores divided by √d, k transposed by memopt.transpose: `bias` computes
/// the 2×6 bias %kbias from the data argument %kb, and `softmax` is the
/// softmax's attribute dictionary (empty or with braces).
std::string keyPaddingStep(const std::string &bias,
                           const std::string &softmax) {
  return R"mlir(
func.func @f(%x: tensor<2x6x8xf32>, %wq: tensor<8x8xf32> {memopt.param},
             %wk: tensor<8x8xf32> {memopt.param}, %kb: tensor<2x6xf32>,
             %t: tensor<2x2x6x4xf32>) -> tensor<f32> {
  %q0 = memopt.linear %x, %wq : tensor<2x6x8xf32>, tensor<8x8xf32>
  %k0 = memopt.linear %x, %wk : tensor<2x6x8xf32>, tensor<8x8xf32>
  %q1 = memopt.reshape %q0 : tensor<2x6x8xf32> -> tensor<2x6x2x4xf32>
  %k1 = memopt.reshape %k0 : tensor<2x6x8xf32> -> tensor<2x6x2x4xf32>
  %q = memopt.transpose %q1 {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x6x2x4xf32>
  %k = memopt.transpose %k1 {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x6x2x4xf32>
  %kt = memopt.transpose %k {permutation = array<i64: 0, 1, 3, 2>} : tensor<2x2x6x4xf32>
  %s = memopt.matmul %q, %kt : tensor<2x2x6x4xf32>, tensor<2x2x4x6xf32>
  %c = arith.constant dense<2.000000e+00> : tensor<f32>
  %d = memopt.div %s, %c : tensor<2x2x6x6xf32>, tensor<f32>
)mlir" + bias +
         R"mlir(
  %b = memopt.reshape %kbias : tensor<2x6xf32> -> tensor<2x1x1x6xf32>
  %m = memopt.add %d, %b : tensor<2x2x6x6xf32>, tensor<2x1x1x6xf32>
  %p = memopt.softmax %m )mlir" +
         softmax + R"mlir( : tensor<2x2x6x6xf32>
  %o = memopt.matmul %p, %q : tensor<2x2x6x6xf32>, tensor<2x2x6x4xf32>
  %loss = memopt.mse_loss %o, %t : tensor<2x2x6x4xf32>
  return %loss : tensor<f32>
}
)mlir";
}

/// BERT's attention: the key bias is the data argument itself.
const std::string kKeyPadding = keyPaddingStep(R"mlir(
  %kbias = memopt.reshape %kb : tensor<2x6xf32> -> tensor<2x6xf32>)mlir",
                                               "");

/// SDPA's boolean attn_mask as the importer writes it: a key bias from the
/// data that masks every key of the second sequence with -inf, and the
/// safe softmax (memopt.softmax {safe = true}, the exporters' Where(IsNaN(P),
/// 0, P)): that sequence's rows are 0 and take no gradient, fused or not.
const std::string kSafeFullyMasked = keyPaddingStep(R"mlir(
  %zero = arith.constant dense<0.000000e+00> : tensor<f32>
  %kz = memopt.mul %kb, %zero : tensor<2x6xf32>, tensor<f32>
  %masked = arith.constant dense<[[0.0, 0.0, 0.0, 0.0, 0xFF800000, 0xFF800000],
      [0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000]]> : tensor<2x6xf32>
  %kbias = memopt.add %kz, %masked : tensor<2x6xf32>, tensor<2x6xf32>)mlir",
                                                    "{safe = true}");

TEST(FuseAttention, SafeSoftmaxOverFullyMaskedRowsMatchesUnfused) {
  expectFusedMatchesUnfused(kSafeFullyMasked, "memopt-autodiff{optimizer=none}",
                            "", 1);
}

TEST(FuseAttention, KeyPaddingBiasMatchesUnfused) {
  expectFusedMatchesUnfused(kKeyPadding, "memopt-autodiff{optimizer=none}", "",
                            1);
}

TEST(FuseAttention, GroupedQueriesWithCausalMaskMatchUnfused) {
  expectFusedMatchesUnfused(kGroupedCausal, "memopt-autodiff{optimizer=none}",
                            "", 1);
  // K and V are read in place (no mul by ones, no concat of copies left),
  // the scales folded into the attention.
  auto fused = CompiledStep::compile(
      kGroupedCausal, "memopt-fuse-attention,memopt-autodiff{optimizer=none}");
  ASSERT_TRUE(fused);
  EXPECT_EQ(countKernels(*fused, runtime::KernelKind::Concat), 0u);
  EXPECT_EQ(countKernels(*fused, runtime::KernelKind::Mul), 0u);
}

} // namespace

/// Fused attention with dropout draws its mask from the training step
/// counter, so its steps say they read it: a backend that replays recorded
/// work (the CUDA graph) must not freeze them, or every step would reuse the
/// first step's mask (the CUDA backend did, until a GPU run showed it).
TEST(FuseAttention, DropoutMaskFollowsTheStepCounter) {
  auto step = CompiledStep::compile(suiteModelSource("gpt2"),
                                    "memopt-pipeline{optimizer=none}");
  ASSERT_TRUE(step);
  size_t attention = 0;
  for (const runtime::Step &s : step->plan().steps) {
    if (s.kernel != runtime::KernelKind::Attention &&
        s.kernel != runtime::KernelKind::AttentionBackward)
      continue;
    ++attention;
    EXPECT_GT(s.get<runtime::AttentionAttrs>().p, 0);
    EXPECT_TRUE(s.readsStepCounter()) << s.loc;
  }
  EXPECT_GT(attention, 0u);
  step->randomize(3);
  step->run(0);
  std::vector<double> first = step->result(0);
  step->randomize(3);
  step->run(1);
  EXPECT_NE(step->result(0), first) << "the same loss under another mask";
  step->randomize(3);
  step->run(0);
  EXPECT_EQ(step->result(0), first) << "step 0's mask again";
}

/// Steps without a mask do not read the counter (a CUDA graph may replay
/// them).
TEST(FuseAttention, OnlyDropoutReadsTheStepCounter) {
  runtime::Step s;
  s.kernel = runtime::KernelKind::Attention;
  s.attrs = runtime::AttentionAttrs{/*causal=*/true, /*scale=*/0.5, /*p=*/0,
                                    /*seed=*/1};
  EXPECT_FALSE(s.readsStepCounter());
  s.attrs = runtime::AttentionAttrs{true, 0.5, 0.1, 1};
  EXPECT_TRUE(s.readsStepCounter());
  s.kernel = runtime::KernelKind::Dropout;
  s.attrs = runtime::DropoutAttrs{0.1, 7};
  EXPECT_TRUE(s.readsStepCounter());
  s.kernel = runtime::KernelKind::Relu;
  s.attrs = std::monostate{};
  EXPECT_FALSE(s.readsStepCounter());
}
