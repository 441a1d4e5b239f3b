//===- GradCheckTest.cpp - autodiff against finite differences ------------===//
//
// For every forward op: build the gradient with --memopt-autodiff
// (optimizer=none), run it on the CPU runtime in f64, and compare each
// parameter's gradient with central finite differences of the forward graph
// run on the same runtime. Shapes exercise strides, padding, dilation,
// groups, broadcasting, transposes and values with several uses.
//
//===----------------------------------------------------------------------===//

#include "TrainingTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace memopt;
using namespace memopt::testing;

namespace {

struct GradCase {
  const char *name;
  const char *source;
};

void PrintTo(const GradCase &c, std::ostream *os) { *os << c.name; }

/// Wraps a body computing `%y : TYPE` from the given arguments into a
/// function with loss mse_loss(%y, %target).
std::string withMseLoss(const std::string &args, const std::string &body,
                        const std::string &type) {
  return "func.func @f(" + args + ", %target: " + type +
         ") -> tensor<f64> {\n" + body + "\n  %loss = memopt.mse_loss %y, " +
         "%target : " + type + "\n  return %loss : tensor<f64>\n}\n";
}

std::string p(const std::string &name, const std::string &type) {
  return "%" + name + ": " + type + " {memopt.param}";
}

std::vector<GradCase> &cases() {
  static std::vector<GradCase> all;
  static std::vector<std::string> storage;
  if (!all.empty())
    return all;
  auto add = [&](const char *name, std::string source) {
    storage.push_back(std::move(source));
    all.push_back({name, nullptr});
  };
  add("conv2d_strided_dilated_grouped_bias",
      withMseLoss(
          p("x", "tensor<2x4x7x7xf64>") + ", " + p("w", "tensor<6x2x3x3xf64>") +
              ", " + p("b", "tensor<6xf64>"),
          "  %y = memopt.conv2d %x, %w, %b {strides = array<i64: 2, 2>, "
          "padding = array<i64: 1, 1>, dilations = array<i64: 2, 2>, "
          "groups = 2 : i64} : tensor<2x4x7x7xf64>, tensor<6x2x3x3xf64>, "
          "tensor<6xf64>",
          "tensor<2x6x3x3xf64>"));
  add("conv2d_odd_padding",
      withMseLoss(p("x", "tensor<1x3x5x6xf64>") + ", " +
                      p("w", "tensor<2x3x2x3xf64>"),
                  "  %y = memopt.conv2d %x, %w {padding = array<i64: 1, 0>, "
                  "strides = array<i64: 1, 2>} : tensor<1x3x5x6xf64>, "
                  "tensor<2x3x2x3xf64>",
                  "tensor<1x2x6x2xf64>"));
  add("linear_rank3_bias",
      withMseLoss(p("x", "tensor<2x3x5xf64>") + ", " +
                      p("w", "tensor<4x5xf64>") + ", " +
                      p("b", "tensor<4xf64>"),
                  "  %y = memopt.linear %x, %w, %b : tensor<2x3x5xf64>, "
                  "tensor<4x5xf64>, tensor<4xf64>",
                  "tensor<2x3x4xf64>"));
  add("matmul_transposed_broadcast",
      withMseLoss(
          p("a", "tensor<2x1x4x3xf64>") + ", " + p("b", "tensor<5x6x4xf64>"),
          "  %y = memopt.matmul %a, %b {transpose_a = true, transpose_b = "
          "true} : tensor<2x1x4x3xf64>, tensor<5x6x4xf64>",
          "tensor<2x5x3x6xf64>"));
  add("matmul_plain",
      withMseLoss(
          p("a", "tensor<3x4xf64>") + ", " + p("b", "tensor<2x4x5xf64>"),
          "  %y = memopt.matmul %a, %b : tensor<3x4xf64>, tensor<2x4x5xf64>",
          "tensor<2x3x5xf64>"));
  for (const char *act : {"relu", "gelu", "sigmoid", "tanh"})
    add(act, withMseLoss(p("x", "tensor<3x5xf64>"),
                         std::string("  %y = memopt.") + act +
                             " %x : tensor<3x5xf64>",
                         "tensor<3x5xf64>"));
  add("leaky_relu",
      withMseLoss(
          p("x", "tensor<3x5xf64>"),
          "  %y = memopt.leaky_relu %x {alpha = 0.2 : f64} : tensor<3x5xf64>",
          "tensor<3x5xf64>"));
  add("elu",
      withMseLoss(p("x", "tensor<3x5xf64>"),
                  "  %y = memopt.elu %x {alpha = 0.7 : f64} : tensor<3x5xf64>",
                  "tensor<3x5xf64>"));
  // Bounds away from the random inputs' values, so the central differences
  // never straddle a kink.
  add("clamp", withMseLoss(p("x", "tensor<3x5xf64>"),
                           "  %y = memopt.clamp %x {max = 0.5 : f64, min = "
                           "-0.25 : f64} : tensor<3x5xf64>",
                           "tensor<3x5xf64>"));
  add("add_mul_broadcast_several_uses",
      withMseLoss(
          p("a", "tensor<2x3x4xf64>") + ", " + p("b", "tensor<3x1xf64>"),
          "  %sq = memopt.mul %a, %a : tensor<2x3x4xf64>, tensor<2x3x4xf64>\n"
          "  %m = memopt.mul %sq, %b : tensor<2x3x4xf64>, tensor<3x1xf64>\n"
          "  %y = memopt.add %m, %b : tensor<2x3x4xf64>, tensor<3x1xf64>",
          "tensor<2x3x4xf64>"));
  add("sub_broadcast_both_sides",
      withMseLoss(
          p("a", "tensor<2x3x4xf64>") + ", " + p("b", "tensor<3x1xf64>") +
              ", " + p("c", "tensor<4xf64>"),
          "  %d = memopt.sub %a, %b : tensor<2x3x4xf64>, tensor<3x1xf64>\n"
          "  %y = memopt.sub %c, %d : tensor<4xf64>, tensor<2x3x4xf64>",
          "tensor<2x3x4xf64>"));
  // Denominators b² + 0.5 and a² + 0.5 stay at least 0.5 away from zero
  // (parameters are uniform in [-1, 1]).
  add("div_broadcast_both_sides",
      withMseLoss(
          p("a", "tensor<2x3x4xf64>") + ", " + p("b", "tensor<3x1xf64>"),
          "  %half = arith.constant dense<5.0e-01> : tensor<f64>\n"
          "  %b2 = memopt.mul %b, %b : tensor<3x1xf64>, tensor<3x1xf64>\n"
          "  %db = memopt.add %b2, %half : tensor<3x1xf64>, tensor<f64>\n"
          "  %a2 = memopt.mul %a, %a : tensor<2x3x4xf64>, tensor<2x3x4xf64>\n"
          "  %da = memopt.add %a2, %half : tensor<2x3x4xf64>, tensor<f64>\n"
          "  %q = memopt.div %a, %db : tensor<2x3x4xf64>, tensor<3x1xf64>\n"
          "  %r = memopt.div %b, %da : tensor<3x1xf64>, tensor<2x3x4xf64>\n"
          "  %y = memopt.add %q, %r : tensor<2x3x4xf64>, tensor<2x3x4xf64>",
          "tensor<2x3x4xf64>"));
  add("batch_norm",
      withMseLoss(
          p("x", "tensor<4x3x2x2xf64>") + ", " + p("g", "tensor<3xf64>") +
              ", " + p("b", "tensor<3xf64>") +
              ", %rm: tensor<3xf64> {memopt.state}, %rv: tensor<3xf64> "
              "{memopt.state}",
          "  %y, %m, %v = memopt.batch_norm %x, %g, %b, %rm, %rv "
          "{epsilon = 1.0e-3 : f64} : tensor<4x3x2x2xf64>, tensor<3xf64>",
          "tensor<4x3x2x2xf64>"));
  add("layer_norm_two_dims",
      withMseLoss(p("x", "tensor<2x3x4xf64>") + ", " +
                      p("g", "tensor<3x4xf64>") + ", " +
                      p("b", "tensor<3x4xf64>"),
                  "  %y = memopt.layer_norm %x, %g, %b : tensor<2x3x4xf64>, "
                  "tensor<3x4xf64>",
                  "tensor<2x3x4xf64>"));
  // exp, log, sqrt and abs: log and sqrt of |x| + 0.5 (away from 0 and the
  // kink of abs by the random inputs' spread).
  add("silu", withMseLoss(p("x", "tensor<3x5xf64>"),
                          "  %y = memopt.silu %x : tensor<3x5xf64>",
                          "tensor<3x5xf64>"));
  add("exp_log_sqrt_abs",
      withMseLoss(
          p("x", "tensor<3x4xf64>"),
          "  %a = memopt.abs %x : tensor<3x4xf64>\n"
          "  %h = arith.constant dense<5.0e-01> : tensor<f64>\n"
          "  %b = memopt.add %a, %h : tensor<3x4xf64>, tensor<f64>\n"
          "  %s = memopt.sqrt %b : tensor<3x4xf64>\n"
          "  %l = memopt.log %b : tensor<3x4xf64>\n"
          "  %e = memopt.exp %x : tensor<3x4xf64>\n"
          "  %sl = memopt.add %s, %l : tensor<3x4xf64>, tensor<3x4xf64>\n"
          "  %y = memopt.add %sl, %e : tensor<3x4xf64>, tensor<3x4xf64>",
          "tensor<3x4xf64>"));
  // maximum and minimum with broadcasting (random inputs: no ties), and
  // reduce_max/min rows of the result.
  add("maximum_minimum_broadcast",
      withMseLoss(p("a", "tensor<3x4xf64>") + ", " + p("b", "tensor<4xf64>"),
                  "  %mx = memopt.maximum %a, %b : tensor<3x4xf64>, "
                  "tensor<4xf64>\n"
                  "  %mn = memopt.minimum %b, %a : tensor<4xf64>, "
                  "tensor<3x4xf64>\n"
                  "  %y = memopt.mul %mx, %mn : tensor<3x4xf64>, "
                  "tensor<3x4xf64>",
                  "tensor<3x4xf64>"));
  add("reduce_max_min",
      withMseLoss(p("x", "tensor<2x3x5xf64>"),
                  "  %mx = memopt.reduce_max %x : tensor<2x3x5xf64>\n"
                  "  %mn = memopt.reduce_min %x : tensor<2x3x5xf64>\n"
                  "  %y = memopt.sub %mx, %mn : tensor<2x3x1xf64>, "
                  "tensor<2x3x1xf64>",
                  "tensor<2x3x1xf64>"));
  add("rms_norm_two_dims",
      withMseLoss(p("x", "tensor<2x3x4xf64>") + ", " +
                      p("g", "tensor<3x4xf64>"),
                  "  %y = memopt.rms_norm %x, %g {epsilon = 1.0e-2 : f64} : "
                  "tensor<2x3x4xf64>, tensor<3x4xf64>",
                  "tensor<2x3x4xf64>"));
  add("max_pool2d_overlapping_padded",
      withMseLoss(
          p("x", "tensor<2x2x5x5xf64>"),
          "  %y = memopt.max_pool2d %x {kernel_size = array<i64: 3, 3>, "
          "strides = array<i64: 1, 1>, padding = array<i64: 1, 1>} : "
          "tensor<2x2x5x5xf64>",
          "tensor<2x2x5x5xf64>"));
  add("avg_pool2d_padded",
      withMseLoss(
          p("x", "tensor<2x2x5x5xf64>"),
          "  %y = memopt.avg_pool2d %x {kernel_size = array<i64: 3, 3>, "
          "strides = array<i64: 2, 2>, padding = array<i64: 1, 1>} : "
          "tensor<2x2x5x5xf64>",
          "tensor<2x2x3x3xf64>"));
  add("global_avg_pool2d",
      withMseLoss(p("x", "tensor<2x3x4x4xf64>"),
                  "  %y = memopt.global_avg_pool2d %x : tensor<2x3x4x4xf64>",
                  "tensor<2x3xf64>"));
  add("softmax_axis1",
      withMseLoss(p("x", "tensor<3x5xf64>"),
                  "  %y = memopt.softmax %x {axis = 0 : i64} : tensor<3x5xf64>",
                  "tensor<3x5xf64>"));
  add("softmax_causal",
      withMseLoss(
          p("x", "tensor<2x4x4xf64>"),
          "  %y = memopt.softmax %x {causal = true} : tensor<2x4x4xf64>",
          "tensor<2x4x4xf64>"));
  add("dropout",
      withMseLoss(p("x", "tensor<4x6xf64>"),
                  "  %y = memopt.dropout %x {p = 0.3 : f64, seed = 5 : i64} : "
                  "tensor<4x6xf64>",
                  "tensor<4x6xf64>"));
  add("attention_causal_dropout",
      withMseLoss(
          p("q", "tensor<2x2x5x3xf64>") + ", " + p("k", "tensor<2x2x5x3xf64>") +
              ", " + p("v", "tensor<2x2x5x3xf64>"),
          "  %y, %lse = memopt.attention %q, %k, %v {causal = true, scale = "
          "0.57 : f64, p = 0.3 : f64, seed = 5 : i64} : tensor<2x2x5x3xf64>, "
          "tensor<2x2x5x3xf64>, tensor<2x2x5x3xf64>",
          "tensor<2x2x5x3xf64>"));
  add("attention_rectangular",
      withMseLoss(
          p("q", "tensor<2x3x4xf64>") + ", " + p("k", "tensor<2x5x4xf64>") +
              ", " + p("v", "tensor<2x5x2xf64>"),
          "  %y, %lse = memopt.attention %q, %k, %v {scale = 0.5 : f64} : "
          "tensor<2x3x4xf64>, tensor<2x5x4xf64>, tensor<2x5x2xf64>",
          "tensor<2x3x2xf64>"));
  // Grouped-query attention: 6 query heads over 2 key/value heads, each
  // key/value head's gradient summed over its 3 query heads.
  add("attention_grouped_causal_dropout",
      withMseLoss(
          p("q", "tensor<2x6x5x3xf64>") + ", " + p("k", "tensor<2x2x5x3xf64>") +
              ", " + p("v", "tensor<2x2x5x2xf64>"),
          "  %y, %lse = memopt.attention %q, %k, %v {causal = true, scale = "
          "0.57 : f64, p = 0.3 : f64, seed = 5 : i64} : tensor<2x6x5x3xf64>, "
          "tensor<2x2x5x3xf64>, tensor<2x2x5x2xf64>",
          "tensor<2x6x5x2xf64>"));
  // A key bias from the data (a key-padding mask), added to every head's
  // scaled scores of its batch row, with key/value groups.
  add("attention_key_bias_grouped",
      withMseLoss(
          p("q", "tensor<2x4x3x2xf64>") + ", " + p("k", "tensor<2x2x5x2xf64>") +
              ", " + p("v", "tensor<2x2x5x3xf64>") + ", %kb: tensor<2x5xf64>",
          "  %y, %lse = memopt.attention %q, %k, %v key_bias %kb {scale = "
          "0.7 : f64} : tensor<2x4x3x2xf64>, tensor<2x2x5x2xf64>, "
          "tensor<2x2x5x3xf64>, tensor<2x5xf64>",
          "tensor<2x4x3x3xf64>"));
  // 70 queries: a full strip of 64 rows and a partial one.
  add("attention_two_strips",
      withMseLoss(
          p("q", "tensor<1x70x2xf64>") + ", " + p("k", "tensor<1x70x2xf64>") +
              ", " + p("v", "tensor<1x70x2xf64>"),
          "  %y, %lse = memopt.attention %q, %k, %v {causal = true, scale = "
          "1.3 : f64, p = 0.2 : f64, seed = 9 : i64} : tensor<1x70x2xf64>, "
          "tensor<1x70x2xf64>, tensor<1x70x2xf64>",
          "tensor<1x70x2xf64>"));
  add("reshape_transpose",
      withMseLoss(
          p("x", "tensor<2x3x4xf64>"),
          "  %t = memopt.transpose %x {permutation = array<i64: 2, 0, 1>} "
          ": tensor<2x3x4xf64>\n"
          "  %y = memopt.reshape %t : tensor<4x2x3xf64> -> tensor<8x3xf64>",
          "tensor<8x3xf64>"));
  add("slice_strided",
      withMseLoss(
          p("x", "tensor<5x6xf64>"),
          "  %y = memopt.slice %x {offsets = array<i64: 1, 0>, sizes = "
          "array<i64: 2, 3>, strides = array<i64: 2, 2>} : tensor<5x6xf64>",
          "tensor<2x3xf64>"));
  add("concat",
      withMseLoss(p("a", "tensor<2x3xf64>") + ", " + p("b", "tensor<2x2xf64>"),
                  "  %y = memopt.concat %a, %b, %a {axis = 1 : i64} : "
                  "tensor<2x3xf64>, tensor<2x2xf64>, tensor<2x3xf64>",
                  "tensor<2x8xf64>"));
  add("upsample_nearest2d",
      withMseLoss(p("x", "tensor<1x2x3x3xf64>"),
                  "  %y = memopt.upsample_nearest2d %x {scale = 2 : i64} : "
                  "tensor<1x2x3x3xf64>",
                  "tensor<1x2x6x6xf64>"));
  add("embedding_repeated_ids",
      withMseLoss(
          p("table", "tensor<6x3xf64>") + ", %ids: tensor<2x4xi64>",
          "  %e = memopt.embedding %table, %ids : tensor<6x3xf64>, "
          "tensor<2x4xi64>\n"
          "  %y = memopt.mul %e, %e : tensor<2x4x3xf64>, tensor<2x4x3xf64>",
          "tensor<2x4x3xf64>"));
  add("cross_entropy",
      "func.func @f(%logits: tensor<4x5xf64> {memopt.param}, %labels: "
      "tensor<4xi64>) -> tensor<f64> {\n"
      "  %loss = memopt.cross_entropy %logits, %labels : tensor<4x5xf64>, "
      "tensor<4xi64>\n  return %loss : tensor<f64>\n}\n");
  // 7 rows in chunks of 3 (the last one partial).
  add("linear_cross_entropy_chunked",
      "func.func @f(%h: tensor<7x4xf64> {memopt.param}, %w: tensor<5x4xf64> "
      "{memopt.param}, %labels: tensor<7xi64>) -> tensor<f64> {\n"
      "  %loss, %lse = memopt.linear_cross_entropy %h, %w, %labels {chunk = "
      "3 : i64} : tensor<7x4xf64>, tensor<5x4xf64>, tensor<7xi64>\n"
      "  return %loss : tensor<f64>\n}\n");
  // With a bias: its gradient, the dlogits summed over the chunks' rows.
  add("linear_cross_entropy_bias",
      "func.func @f(%h: tensor<7x4xf64> {memopt.param}, %w: tensor<5x4xf64> "
      "{memopt.param}, %b: tensor<5xf64> {memopt.param}, %labels: "
      "tensor<7xi64>) -> tensor<f64> {\n"
      "  %loss, %lse = memopt.linear_cross_entropy %h, %w, %labels bias %b "
      "{chunk = 3 : i64} : tensor<7x4xf64>, tensor<5x4xf64>, tensor<7xi64>, "
      "tensor<5xf64>\n"
      "  return %loss : tensor<f64>\n}\n");
  add("mse_loss_both_sides",
      "func.func @f(%a: tensor<3x4xf64> {memopt.param}, %b: tensor<3x4xf64> "
      "{memopt.param}) -> tensor<f64> {\n"
      "  %loss = memopt.mse_loss %a, %b : tensor<3x4xf64>\n"
      "  return %loss : tensor<f64>\n}\n");
  for (size_t i = 0; i < all.size(); ++i)
    all[i].source = storage[i].c_str();
  return all;
}

class GradCheck : public ::testing::TestWithParam<GradCase> {};

TEST_P(GradCheck, MatchesCentralFiniteDifferences) {
  const GradCase &c = GetParam();
  expectGradientsMatchFiniteDifferences(
      c.source, "memopt-autodiff{optimizer=none}", /*seed=*/1234, c.name);
}

INSTANTIATE_TEST_SUITE_P(AllForwardOps, GradCheck, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<GradCase> &info) {
                           return std::string(info.param.name);
                         });

} // namespace
