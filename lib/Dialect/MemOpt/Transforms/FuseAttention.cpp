//===- FuseAttention.cpp - chains of attention ops into memopt.attention --===//
//
// `--memopt-fuse-attention` (Passes.td): on the forward graph, each
//
//   matmul(q, kᵀ) → [mul/div by a constant splat] → softmax(last axis)
//     → [dropout] → matmul(·, v)
//
// whose intermediates nothing else reads becomes one memopt.attention, and
// its backward pass then keeps O(Sq) per head instead of the Sq×Sk
// probabilities. kᵀ is `transpose_b` or a memopt.transpose of k's last two
// dimensions; a constant multiplying q or k beforehand (read only by the
// chain) is folded into the scale as well.
//
// The match starts at every softmax. A softmax that is neither fed by a
// matmul (directly or through a scale) nor read by one (directly or
// through a dropout) is not attention and is passed over in silence; any
// other that does not fuse is a near miss, and `remarks=true` says why.
//
//===----------------------------------------------------------------------===//

#include "memopt/Contract/AttentionShapes.h"
#include "memopt/Dialect/MemOpt/IR/MemOptDialect.h"
#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"
#include "memopt/Dialect/MemOpt/Transforms/ForeignIR.h"
#include "memopt/Dialect/MemOpt/Transforms/Passes.h"
#include "memopt/Dialect/MemOpt/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <optional>

#define DEBUG_TYPE "memopt-fuse-attention"

namespace memopt {
#define GEN_PASS_DEF_MEMOPTFUSEATTENTION
#include "memopt/Dialect/MemOpt/Transforms/Passes.h.inc"
} // namespace memopt

using namespace mlir;
using namespace memopt;

namespace {

/// The value of a float constant whose elements are all equal.
std::optional<double> splatValue(Value v) {
  DenseFPElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || !attr.isSplat())
    return std::nullopt;
  return attr.getSplatValue<APFloat>().convertToDouble();
}

/// A constant-splat factor `op` applies to its other operand: x·c, c·x or
/// x / c (as 1/c), where broadcasting c leaves x's type unchanged.
struct Scaling {
  Value x;
  double factor;
};

std::optional<Scaling> scalingOf(Operation *op) {
  if (!op || !isa<MulOp, DivOp>(op))
    return std::nullopt;
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  Type type = op->getResult(0).getType();
  if (auto c = splatValue(rhs); c && lhs.getType() == type)
    return Scaling{lhs, isa<DivOp>(op) ? 1.0 / *c : *c};
  if (auto c = splatValue(lhs); c && isa<MulOp>(op) && rhs.getType() == type)
    return Scaling{rhs, *c};
  return std::nullopt;
}

/// Whether `op` swaps the last two dimensions and keeps the others.
bool swapsLastTwo(TransposeOp op) {
  ArrayRef<int64_t> perm = op.getPermutation();
  int64_t rank = static_cast<int64_t>(perm.size());
  if (rank < 2)
    return false;
  for (int64_t i = 0; i < rank - 2; ++i)
    if (perm[i] != i)
      return false;
  return perm[rank - 2] == rank - 1 && perm[rank - 1] == rank - 2;
}

/// The one op that reads `v`, or null.
Operation *soleUser(Value v) {
  return v.hasOneUse() ? *v.getUsers().begin() : nullptr;
}

/// A chain the pass fuses: the ops it replaces, first to last, and the
/// attention's operands and attributes.
struct Chain {
  SmallVector<Operation *> ops;
  /// Ops only the chain reads that die with it (a constant-scale mul of q
  /// or k, a transpose of k, the scale constants): erased when unused.
  SmallVector<Operation *> feeders;
  Value q, k, v;
  double scale = 1;
  bool causal = false;
  double p = 0;
  int64_t seed = 0;
  MatMulOp output;
};

/// Matches the chain around `softmax`. Returns std::nullopt with `why`
/// empty when the softmax is not attention at all, and with `why` set to
/// the reason when it is attention-like but does not fuse.
std::optional<Chain> match(SoftmaxOp softmax, std::string &why) {
  Chain c;
  // What feeds the softmax: scores, possibly scaled.
  Operation *scaleOp = softmax.getX().getDefiningOp();
  std::optional<Scaling> scaling = scalingOf(scaleOp);
  Value scores = scaling ? scaling->x : softmax.getX();
  auto qk = scores.getDefiningOp<MatMulOp>();
  if (!scaling)
    scaleOp = nullptr;

  // What reads the probabilities: maybe a dropout, then P·v.
  Value probs = softmax.getResult();
  auto dropout = dyn_cast_or_null<DropoutOp>(soleUser(probs));
  Value kept = dropout ? dropout.getResult() : probs;
  auto pv = dyn_cast_or_null<MatMulOp>(soleUser(kept));

  auto readByMatMul = [](Value value) {
    for (Operation *user : value.getUsers()) {
      if (isa<MatMulOp>(user))
        return true;
      if (auto drop = dyn_cast<DropoutOp>(user))
        for (Operation *next : drop->getUsers())
          if (isa<MatMulOp>(next))
            return true;
    }
    return false;
  };
  Operation *producer = softmax.getX().getDefiningOp();
  bool fedByMatMul =
      qk || (producer && producer->getNumOperands() == 2 &&
             llvm::any_of(producer->getOperands(), [](Value operand) {
               return operand.getDefiningOp<MatMulOp>() != nullptr;
             }));
  if (!fedByMatMul && !readByMatMul(probs))
    return std::nullopt; // not attention (a classifier's softmax, say)

  auto fail = [&](const Twine &reason) -> std::optional<Chain> {
    why = reason.str();
    return std::nullopt;
  };

  // The scores.
  if (!qk) {
    if (producer && isa<MulOp, DivOp>(producer))
      return fail(llvm::formatv(
          "the scores are scaled by {0}, which does not multiply or divide "
          "them by a constant splat",
          describeOp(producer)));
    if (producer)
      return fail(llvm::formatv(
          "the softmax reads {0}, not q·kᵀ (scaled by a constant); an "
          "additive mask or bias on the scores is not fused",
          describeOp(producer)));
    return fail("the softmax reads a function argument, not q·kᵀ");
  }
  if (qk.getTransposeA())
    return fail("q·kᵀ transposes its first operand (transpose_a)");
  Value q = qk.getA(), k = qk.getB();
  // The op that reads k: q·kᵀ, or the transpose that makes kᵀ.
  Operation *kReader = qk;
  if (!qk.getTransposeB()) {
    auto transpose = k.getDefiningOp<TransposeOp>();
    if (!transpose || !swapsLastTwo(transpose))
      return fail("the key operand of q·kᵀ is transposed neither by "
                  "transpose_b nor by a memopt.transpose of its last two "
                  "dimensions");
    k = transpose.getX();
    kReader = transpose;
    c.feeders.push_back(transpose);
  }
  Operation *scoreReader = scaleOp ? scaleOp : softmax.getOperation();
  for (Operation *user : qk->getUsers())
    if (user != scoreReader)
      return fail(llvm::formatv("the scores are also read by {0}, so they "
                                "would be kept anyway",
                                describeOp(user)));
  if (scaleOp && !soleUser(scaleOp->getResult(0)))
    for (Operation *user : scaleOp->getUsers())
      if (user != softmax)
        return fail(llvm::formatv("the scaled scores are also read by {0}, "
                                  "so they would be kept anyway",
                                  describeOp(user)));

  // The softmax.
  auto type = cast<RankedTensorType>(softmax.getX().getType());
  int64_t axis = softmax.getAxis();
  if (axis < 0)
    axis += type.getRank();
  if (axis != type.getRank() - 1)
    return fail(llvm::formatv("the softmax is over axis {0}, not over the "
                              "keys (the last axis)",
                              softmax.getAxis()));

  // The probabilities and P·v.
  if (!probs.use_empty() && !probs.hasOneUse())
    return fail(llvm::formatv("the probabilities are also read by {0}, so "
                              "they would be kept anyway",
                              describeOp(*probs.getUsers().begin())));
  if (dropout && !soleUser(kept))
    return fail(llvm::formatv("the dropped-out probabilities are read by "
                              "{0} as well as by P·v",
                              describeOp(*kept.getUsers().begin())));
  if (!pv) {
    Operation *reader = kept.use_empty() ? nullptr : *kept.getUsers().begin();
    if (!reader)
      return fail("nothing reads the probabilities");
    return fail(llvm::formatv("the probabilities are read by {0}, not by a "
                              "matmul with v",
                              describeOp(reader)));
  }
  if (pv.getA() != kept)
    return fail("the probabilities are the second operand of their matmul, "
                "not the first (P·v)");
  if (pv.getTransposeA() || pv.getTransposeB())
    return fail("P·v transposes an operand");

  // Fold constant scales of q and k read only here.
  c.scale = scaling ? scaling->factor : 1.0;
  auto absorb = [&](Value &operand, Operation *reader) {
    Operation *def = operand.getDefiningOp();
    std::optional<Scaling> pre = scalingOf(def);
    if (!pre || soleUser(operand) != reader)
      return;
    c.scale *= pre->factor;
    c.feeders.push_back(def);
    operand = pre->x;
  };
  absorb(q, qk);
  absorb(k, kReader);

  // Shapes: the batch dimensions must match (matmul would broadcast them).
  Value v = pv.getB();
  auto qt = cast<RankedTensorType>(q.getType()),
       kt = cast<RankedTensorType>(k.getType()),
       vt = cast<RankedTensorType>(v.getType());
  if (qt.getElementType() != kt.getElementType() ||
      qt.getElementType() != vt.getElementType())
    return fail("q, k and v have different element types");
  shapes::Dims result, lse;
  if (shapes::ShapeProblem problem = shapes::attentionShape(
          qt.getShape().vec(), kt.getShape().vec(), vt.getShape().vec(),
          softmax.getCausal(), result, lse);
      !problem.empty())
    return fail("memopt.attention cannot take these operands: " + problem);
  if (ArrayRef<int64_t>(result) != pv.getType().getShape())
    return fail("P·v's result shape is not the attention's");

  c.ops.push_back(qk);
  if (scaleOp)
    c.ops.push_back(scaleOp);
  c.ops.push_back(softmax);
  if (dropout)
    c.ops.push_back(dropout);
  c.ops.push_back(pv);
  c.q = q;
  c.k = k;
  c.v = v;
  c.causal = softmax.getCausal();
  if (dropout) {
    c.p = dropout.getP().convertToDouble();
    c.seed = dropout.getSeed();
  }
  c.output = pv;
  return c;
}

/// Replaces the chain by memopt.attention; returns it.
AttentionOp fuse(const Chain &c) {
  SmallVector<Location> locs;
  for (Operation *op : c.ops)
    locs.push_back(op->getLoc());
  OpBuilder b(c.output);
  auto attention =
      AttentionOp::create(b, FusedLoc::get(b.getContext(), locs), c.q, c.k, c.v,
                          b.getBoolAttr(c.causal), b.getF64FloatAttr(c.scale),
                          b.getF64FloatAttr(c.p), b.getI64IntegerAttr(c.seed));
  MatMulOp output = c.output;
  output.getResult().replaceAllUsesWith(attention.getResult());
  // Last to first, so each op is unused when erased; then what fed only
  // the chain (a scale constant, a transpose of k and the constant-scale
  // mul before it), each once it has no other reader. A set: one constant
  // may feed several of these ops, and each is erased once; a feeder seen
  // while still read is seen again when its reader goes.
  llvm::SetVector<Operation *> worklist(c.feeders.begin(), c.feeders.end());
  auto pushDefs = [&](Operation *op) {
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp();
          def &&
          (isa<arith::ConstantOp>(def) || llvm::is_contained(c.feeders, def)))
        worklist.insert(def);
  };
  for (Operation *op : llvm::reverse(c.ops)) {
    pushDefs(op);
    op->erase();
  }
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!op->use_empty())
      continue;
    pushDefs(op);
    op->erase();
  }
  return attention;
}

/// Bytes of one tensor of `type`.
int64_t tensorBytes(RankedTensorType type) {
  return type.getNumElements() *
         static_cast<int64_t>(type.getElementTypeBitWidth() / 8);
}

struct MemOptFuseAttentionPass
    : public memopt::impl::MemOptFuseAttentionBase<MemOptFuseAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<func::FuncOp> graphs;
    if (failed(collectMemOptGraphs(getOperation(), "memopt-fuse-attention",
                                   graphs)))
      return signalPassFailure();
    bool changed = false;
    for (func::FuncOp func : graphs)
      changed |= fuseIn(func);
    // Unchanged IR is not verified again by the pass manager.
    if (!changed)
      markAllAnalysesPreserved();
  }

  /// Whether anything was fused.
  bool fuseIn(func::FuncOp func) {
    bool fused = false;
    // Softmaxes are collected first: fusing erases ops.
    SmallVector<SoftmaxOp> softmaxes(func.front().getOps<SoftmaxOp>());
    for (SoftmaxOp softmax : softmaxes) {
      std::string why;
      std::optional<Chain> chain = match(softmax, why);
      if (!chain) {
        if (!why.empty()) {
          ++numNearMisses;
          if (remarks)
            softmax.emitRemark() << "attention not fused: " << why;
        }
        continue;
      }
      // Described before the chain is erased.
      auto probs = cast<RankedTensorType>(softmax.getType());
      bool dropout = llvm::any_of(chain->ops, llvm::IsaPred<DropoutOp>);
      AttentionOp attention = fuse(*chain);
      fused = true;
      ++numFused;
      if (remarks)
        attention.emitRemark()
            << "fused attention: the backward pass keeps the per-row "
               "log-sum-exp instead of the "
            << probs << " probabilities (" << tensorBytes(probs) << " bytes"
            << (dropout ? ", and as many for their dropout" : "")
            << "); it recomputes them";
    }
    return fused;
  }
};

} // namespace
