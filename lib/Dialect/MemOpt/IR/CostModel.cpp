//===- CostModel.cpp - FLOP counts of the ops that are not element-wise ---===//
//
// CostOpInterface's overrides. The memory report totals these per step and
// checkpointing compares what it would recompute, so the model counts the
// dominant arithmetic only: a multiply-add is two operations, a bias add or
// an epilogue is not counted. Everything not here costs one operation per
// element of its largest tensor (the interface's default).
//
//===----------------------------------------------------------------------===//

#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace memopt;

namespace {

int64_t numElements(Value value) {
  return cast<ShapedType>(value.getType()).getNumElements();
}

/// a·b·c, saturating at INT64_MAX: counts never wrap, and a graph whose
/// count saturates is refused by the passes (verifyTransformable).
int64_t product(int64_t a, int64_t b, int64_t c = 1) {
  bool overflow = false;
  uint64_t ab = llvm::SaturatingMultiply<uint64_t>(a, b, &overflow);
  uint64_t abc = llvm::SaturatingMultiply<uint64_t>(ab, c, &overflow);
  return static_cast<int64_t>(
      std::min<uint64_t>(abc, std::numeric_limits<int64_t>::max()));
}

/// Per output element, a convolution multiplies and adds over one filter
/// slice of (C/groups)·R·S elements; weight is K×(C/groups)×R×S.
int64_t convFlops(int64_t outputElements, Value weight) {
  auto type = cast<ShapedType>(weight.getType());
  return product(2, outputElements,
                 type.getNumElements() /
                     std::max<int64_t>(1, type.getDimSize(0)));
}

/// Normalisations read x for the statistics and again to normalise, scale
/// and shift: about five operations per element, forward or backward.
constexpr int64_t kNormFlopsPerElement = 5;

/// A softmax loss's work per logit besides the products (exponential,
/// sum, difference).
constexpr int64_t kLossFlopsPerLogit = 3;

/// Attention's work per score besides its products: the scale, the softmax
/// and the dropout, one operation each as the unfused ops count them.
constexpr int64_t kAttentionScoreFlops = 3;

} // namespace

/// 2·N·K·OH·OW·(C/groups)·R·S.
int64_t Conv2DOp::getFlops() {
  return convFlops(numElements(getResult()), getWeight());
}

/// The transposed convolution visits the same (output, filter) pairs as the
/// forward one, so it costs the same.
int64_t Conv2DBackwardInputOp::getFlops() {
  return convFlops(numElements(getGradOutput()), getWeight());
}

/// Correlating input with grad_output visits every (output, filter) pair
/// once more; the result is the weight's shape.
int64_t Conv2DBackwardWeightOp::getFlops() {
  return convFlops(numElements(getGradOutput()), getResult());
}

/// 2·M·N·K with M the leading elements of the input, N = O, K = I.
int64_t LinearOp::getFlops() {
  auto input = cast<ShapedType>(getInput().getType());
  return product(2, numElements(getResult()),
                 input.getDimSize(input.getRank() - 1));
}

/// 2·batch·M·N·K: every result element is a K-long dot product.
int64_t MatMulOp::getFlops() {
  auto a = cast<ShapedType>(getA().getType());
  int64_t k = a.getDimSize(a.getRank() - (getTransposeA() ? 2 : 1));
  return product(2, numElements(getResult()), k);
}

int64_t BatchNormOp::getFlops() {
  return product(kNormFlopsPerElement, numElements(getX()));
}

int64_t BatchNormInferenceOp::getFlops() {
  return product(kNormFlopsPerElement, numElements(getX()));
}

int64_t LayerNormOp::getFlops() {
  return product(kNormFlopsPerElement, numElements(getX()));
}

int64_t RmsNormOp::getFlops() {
  return product(kNormFlopsPerElement, numElements(getX()));
}

int64_t RmsNormBackwardOp::getFlops() {
  return product(kNormFlopsPerElement, numElements(getX()));
}

int64_t BatchNormBackwardOp::getFlops() {
  return product(kNormFlopsPerElement, numElements(getX()));
}

int64_t LayerNormBackwardOp::getFlops() {
  return product(kNormFlopsPerElement, numElements(getX()));
}

namespace {

/// Attention's FLOPs over `lse` (one element per query row), `k` and `v`
/// (…×Sk×Dv): per score, `qkProducts` products of depth D (q·kᵀ, and in the
/// backward dq and dk) and `vProducts` of depth Dv (P·v, dv, dP) of two
/// operations each, plus the scale, softmax and dropout, over every score
/// as the unfused chain's ops count them (the kernels skip what a causal
/// mask hides).
int64_t attentionFlops(Value lse, Value k, Value v, int64_t qkProducts,
                       int64_t vProducts) {
  auto kt = cast<ShapedType>(k.getType()), vt = cast<ShapedType>(v.getType());
  int64_t scores = product(numElements(lse), kt.getDimSize(kt.getRank() - 2));
  int64_t depths = qkProducts * kt.getDimSize(kt.getRank() - 1) +
                   vProducts * vt.getDimSize(vt.getRank() - 1);
  return product(scores, 2 * depths + kAttentionScoreFlops);
}

} // namespace

/// q·kᵀ and P·v: 2·Sq·Sk·(D + Dv) per head.
int64_t AttentionOp::getFlops() {
  return attentionFlops(getLse(), getK(), getV(), 1, 1);
}

/// The forward's q·kᵀ again, dq and dk; dv and dP: 2·Sq·Sk·(3·D + 2·Dv)
/// per head, one q·kᵀ more than the unfused chain's backward ops.
int64_t AttentionBackwardOp::getFlops() {
  return attentionFlops(getLse(), getK(), getV(), 3, 2);
}

/// hidden·weightᵀ (2·N·V·H) and the loss's softmax over the N×V logits.
int64_t LinearCrossEntropyOp::getFlops() {
  auto w = cast<ShapedType>(getWeight().getType());
  int64_t logits = product(numElements(getLse()), w.getDimSize(0));
  return product(logits, 2 * w.getDimSize(1) + kLossFlopsPerLogit);
}

/// The logits again, dlogits, grad_hidden and grad_weight: 6·N·V·H, one
/// hidden·weightᵀ more than the unfused backward ops.
int64_t LinearCrossEntropyBackwardOp::getFlops() {
  auto w = cast<ShapedType>(getWeight().getType());
  int64_t logits = product(numElements(getLse()), w.getDimSize(0));
  return product(logits, 6 * w.getDimSize(1) + kLossFlopsPerLogit);
}

/// The forward's and the backward's work less the backward's recomputed
/// logits: 6·N·V·H and the softmax twice.
int64_t LinearCrossEntropyWithGradOp::getFlops() {
  auto w = cast<ShapedType>(getWeight().getType());
  int64_t rows = cast<ShapedType>(getHidden().getType()).getDimSize(0);
  int64_t logits = product(rows, w.getDimSize(0));
  return product(logits, 6 * w.getDimSize(1) + 2 * kLossFlopsPerLogit);
}

/// Batch norm and the activation on its output.
int64_t BatchNormActOp::getFlops() {
  return product(kNormFlopsPerElement + 1, numElements(getX()));
}

/// Batch norm's backward plus, per element, inverting the activation, its
/// derivative and rebuilding x̂.
int64_t BatchNormActBackwardOp::getFlops() {
  return product(kNormFlopsPerElement + 3, numElements(getOutput()));
}

/// The elements of all of `values`, saturated at INT64_MAX.
static int64_t totalElements(ValueRange values) {
  uint64_t total = 0;
  bool overflow = false;
  for (Value v : values)
    total = llvm::SaturatingAdd<uint64_t>(total, numElements(v), &overflow);
  return static_cast<int64_t>(
      std::min<uint64_t>(total, std::numeric_limits<int64_t>::max()));
}

/// One check per element of every gradient it reads (the default would
/// count only the largest).
int64_t FoundInfOp::getFlops() { return totalElements(getValues()); }

/// An add per element from each other rank, and the division.
int64_t AllReduceOp::getFlops() {
  return product(std::max<int64_t>(getRanks(), 1), totalElements(getValues()));
}

/// A multiply-add per element of every gradient.
int64_t ClipCoefficientOp::getFlops() {
  return product(2, totalElements(getGrads()));
}

/// An add per owned element from each other rank, and the division.
int64_t ReduceScatterOp::getFlops() {
  return product(std::max<int64_t>(getRanks(), 1),
                 totalElements(getOwnedValues()));
}

/// A multiply-add per element.
int64_t SquareSumOp::getFlops() {
  return product(2, totalElements(getValues()));
}
