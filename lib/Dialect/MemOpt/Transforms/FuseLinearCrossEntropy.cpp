//===- FuseLinearCrossEntropy.cpp - LM head + loss into one chunked op ----===//
//
// `--memopt-fuse-linear-cross-entropy` (Passes.td): on the forward graph,
// each cross_entropy whose logits are a linear layer's (or a matmul with a
// transposed 2-D weight, by transpose_b or a transpose op, with or without
// an add of a bias over the classes, as ONNX exporters write a linear
// layer), reshaped or not, becomes
// memopt.linear_cross_entropy when the vocabulary has at least
// `min-classes` classes, so the step never holds the N×V logits or their
// gradient. A cross_entropy on anything but a linear layer or matmul (a
// convolution's output, say) is not a language-model head and is passed
// over in silence; one on a linear layer that does not fuse is a near miss,
// and `remarks=true` says why.
//
//===----------------------------------------------------------------------===//

#include "memopt/Dialect/MemOpt/IR/MemOptDialect.h"
#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"
#include "memopt/Dialect/MemOpt/Transforms/ForeignIR.h"
#include "memopt/Dialect/MemOpt/Transforms/Passes.h"
#include "memopt/Dialect/MemOpt/Transforms/Transforms.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <optional>

#define DEBUG_TYPE "memopt-fuse-linear-cross-entropy"

namespace memopt {
#define GEN_PASS_DEF_MEMOPTFUSELINEARCROSSENTROPY
#include "memopt/Dialect/MemOpt/Transforms/Passes.h.inc"
} // namespace memopt

using namespace mlir;
using namespace memopt;

namespace {

/// The f32 bytes of logits a chunk holds by default.
constexpr int64_t kDefaultChunkBytes = int64_t(64) << 20;

/// A head the pass fuses: the ops it replaces and the fused op's operands.
struct Head {
  /// The linear layer or matmul, the bias add after a matmul (or null), the
  /// reshape (or null) and the loss.
  Operation *product = nullptr;
  AddOp biasAdd;
  ReshapeOp reshape;
  CrossEntropyOp loss;
  /// The transpose a matmul reads its weight through (or null): erased
  /// with the head when nothing else reads it.
  TransposeOp transpose;
  Value hidden, weight, bias;
};

/// The 1-D operand of `add` beside `product` when it is a bias over the
/// `classes` columns (the other operand), else null.
Value biasOf(AddOp add, Value product, int64_t classes) {
  Value other = add.getLhs() == product ? add.getRhs() : add.getLhs();
  auto type = cast<RankedTensorType>(other.getType());
  if (other == product || type.getRank() != 1 ||
      type.getDimSize(0) != classes ||
      add.getResult().getType() != product.getType())
    return {};
  return other;
}

/// Matches the head under `loss`. Returns std::nullopt with `why` empty
/// when the logits do not come from a linear layer or matmul at all, and
/// with `why` set when they do but the pair does not fuse.
std::optional<Head> match(CrossEntropyOp loss, int64_t minClasses,
                          std::string &why) {
  Head head;
  head.loss = loss;
  Value logits = loss.getLogits();
  head.reshape = logits.getDefiningOp<ReshapeOp>();
  Value product = head.reshape ? head.reshape.getX() : logits;
  // A matmul then a bias add is a linear layer as the ONNX exporters write
  // it (Transpose, MatMul, Add).
  if (auto add = product.getDefiningOp<AddOp>()) {
    for (Value operand : {add.getLhs(), add.getRhs()})
      if (auto matmul = operand.getDefiningOp<MatMulOp>()) {
        auto w = cast<RankedTensorType>(matmul.getB().getType());
        if (Value bias = biasOf(add, operand,
                                w.getDimSize(matmul.getTransposeB() ? 0 : 1))) {
          head.biasAdd = add;
          head.bias = bias;
          product = operand;
          break;
        }
      }
  }
  head.product = product.getDefiningOp();
  if (!head.product || !isa<LinearOp, MatMulOp>(head.product))
    return std::nullopt;

  auto fail = [&](const Twine &reason) -> std::optional<Head> {
    why = reason.str();
    return std::nullopt;
  };
  if (auto linear = dyn_cast<LinearOp>(head.product)) {
    head.hidden = linear.getInput();
    head.weight = linear.getWeight();
    head.bias = linear.getBias();
  } else {
    auto matmul = cast<MatMulOp>(head.product);
    if (matmul.getTransposeA())
      return fail("the matmul transposes hidden (transpose_a)");
    head.weight = matmul.getB();
    if (!matmul.getTransposeB()) {
      // weightᵀ written as a transpose of a VxH weight.
      auto transpose = matmul.getB().getDefiningOp<TransposeOp>();
      if (!transpose || transpose.getPermutation() != ArrayRef<int64_t>{1, 0})
        return fail("the weight is stored HxV (a matmul without "
                    "transpose_b, not a transpose of a VxH weight); "
                    "memopt.linear_cross_entropy takes VxH");
      head.transpose = transpose;
      head.weight = transpose.getX();
    }
    if (cast<RankedTensorType>(head.weight.getType()).getRank() != 2)
      return fail("the weight is batched (rank above 2)");
    head.hidden = matmul.getA();
  }
  Operation *reader = head.biasAdd   ? head.biasAdd.getOperation()
                      : head.reshape ? head.reshape.getOperation()
                                     : loss.getOperation();
  for (Operation *user : product.getUsers())
    if (user != reader)
      return fail(llvm::formatv("the logits are also read by {0}, so they "
                                "would be held anyway",
                                describeOp(user)));
  if (head.biasAdd && !head.biasAdd.getResult().hasOneUse())
    return fail("the biased logits are read by more than the loss");
  if (head.reshape && !head.reshape.getResult().hasOneUse())
    return fail("the reshaped logits are read by more than the loss");

  auto weight = cast<RankedTensorType>(head.weight.getType());
  auto rows = cast<RankedTensorType>(logits.getType());
  int64_t classes = weight.getDimSize(0);
  if (head.bias &&
      cast<RankedTensorType>(head.bias.getType()).getElementType() !=
          weight.getElementType())
    return fail("the bias's element type is not the weight's");
  // The loss's rows must be hidden's rows: a reshape may only merge the
  // leading dimensions, keeping the vocabulary last.
  if (rows.getDimSize(1) != classes)
    return fail("the reshape mixes the vocabulary into the rows");
  if (classes < minClasses)
    return fail(llvm::formatv("{0} classes, below min-classes={1} (the "
                              "logits are small)",
                              classes, minClasses));
  return head;
}

/// The rows of a chunk: `chunk` when given, else the rows whose f32 logits
/// fill kDefaultChunkBytes (a multiple of 8 from 8 up), within [1, rows].
int64_t chunkRows(int64_t chunk, int64_t rows, int64_t classes) {
  if (chunk > 0)
    return std::min(chunk, std::max<int64_t>(rows, 1));
  int64_t fit = kDefaultChunkBytes / (4 * std::max<int64_t>(classes, 1));
  if (fit >= 8)
    fit -= fit % 8;
  return std::clamp<int64_t>(fit, 1, std::max<int64_t>(rows, 1));
}

struct MemOptFuseLinearCrossEntropyPass
    : public memopt::impl::MemOptFuseLinearCrossEntropyBase<
          MemOptFuseLinearCrossEntropyPass> {
  using Base::Base;

  void runOnOperation() override {
    for (auto [name, value] :
         {std::pair<StringRef, int64_t>("chunk", chunk),
          std::pair<StringRef, int64_t>("min-classes", minClasses)})
      if (value < 0) {
        getOperation()->emitError()
            << "memopt-fuse-linear-cross-entropy: " << name
            << " must be >= 0, got " << value;
        return signalPassFailure();
      }
    SmallVector<func::FuncOp> graphs;
    if (failed(collectMemOptGraphs(getOperation(),
                                   "memopt-fuse-linear-cross-entropy", graphs)))
      return signalPassFailure();
    bool changed = false;
    for (func::FuncOp func : graphs) {
      SmallVector<CrossEntropyOp> losses(func.front().getOps<CrossEntropyOp>());
      for (CrossEntropyOp loss : losses)
        changed |= fuseAt(loss);
    }
    // Unchanged IR is not verified again by the pass manager.
    if (!changed)
      markAllAnalysesPreserved();
  }

  /// Whether `loss` was fused.
  bool fuseAt(CrossEntropyOp loss) {
    std::string why;
    std::optional<Head> head = match(loss, minClasses, why);
    if (!head) {
      if (!why.empty()) {
        ++numNearMisses;
        if (remarks)
          loss.emitRemark() << "linear + cross-entropy not fused: " << why;
      }
      return false;
    }
    auto logits = cast<RankedTensorType>(loss.getLogits().getType());
    int64_t rows = logits.getDimSize(0), classes = logits.getDimSize(1);
    auto hidden = cast<RankedTensorType>(head->hidden.getType());
    int64_t width = hidden.getDimSize(hidden.getRank() - 1);

    OpBuilder b(loss);
    SmallVector<Location> locs{head->product->getLoc()};
    if (head->biasAdd)
      locs.push_back(head->biasAdd.getLoc());
    if (head->reshape)
      locs.push_back(head->reshape.getLoc());
    locs.push_back(loss.getLoc());
    Location loc = FusedLoc::get(b.getContext(), locs);
    Value hidden2d = head->hidden;
    if (hidden.getRank() != 2)
      hidden2d = ReshapeOp::create(
          b, loc, RankedTensorType::get({rows, width}, hidden.getElementType()),
          head->hidden);
    int64_t rowsPerChunk = chunkRows(chunk, rows, classes);
    auto fused = LinearCrossEntropyOp::create(
        b, loc, hidden2d, head->weight, loss.getLabels(), head->bias,
        b.getI64IntegerAttr(rowsPerChunk));
    loss.getResult().replaceAllUsesWith(fused.getResult());
    loss->erase();
    if (head->reshape)
      head->reshape->erase();
    if (head->biasAdd)
      head->biasAdd->erase();
    head->product->erase();
    if (head->transpose && head->transpose->use_empty())
      head->transpose->erase();
    ++numFused;
    if (remarks)
      fused.emitRemark() << "fused linear + cross-entropy: the " << logits
                         << " logits ("
                         << logits.getNumElements() *
                                (logits.getElementTypeBitWidth() / 8)
                         << " bytes) and their gradient are never held, "
                         << rowsPerChunk << " rows at a time";
    return true;
  }
};

} // namespace
