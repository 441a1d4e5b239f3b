//===- FuseAttention.cpp - chains of attention ops into memopt.attention --===//
//
// `--memopt-fuse-attention` (Passes.td): on the forward graph, each
//
//   matmul(q, kᵀ) → [mul/div by a constant splat] → [add a constant
//     causal mask] → [add a key bias] → softmax(last axis) → [dropout]
//     → matmul(·, v)
//
// whose intermediates nothing else reads becomes one memopt.attention, and
// its backward pass then keeps O(Sq) per head instead of the Sq×Sk
// probabilities. kᵀ is `transpose_b`, a memopt.transpose (of any
// permutation: the fusion transposes k into place) or reshape, transpose,
// reshape; a constant multiplying q, k or kᵀ beforehand (read only by the
// chain) is folded into the scale as well. A constant causal mask (0 on and
// below the diagonal, -inf or at most -1e30 above: how both of PyTorch's
// exporters write SDPA's is_causal, masked_fill(~tril, -inf) and an
// additive mask buffer) makes the attention causal: the probabilities are
// the same, the hidden keys' exactly 0 either way. A …×1×1×Sk bias not
// computed from a parameter (a key-padding mask) becomes the key bias. K
// and V repeated over groups of query heads (repeat_interleave) are read in
// place.
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
#include <sstream>

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

/// Additive mask values at or below this hide a key exactly: for finite
/// scores under 1e29 in magnitude, exp(score + mask - max) is 0 in every
/// float type, as it is for -inf.
constexpr double kHidden = -1e30;

/// Why constant `mask`, added to scores of type `scores`, is not a causal
/// mask -- 0 where key j <= query i, -inf (or at most kHidden) where
/// j > i, in every leading slice -- or the empty string when it is one.
std::string notCausal(DenseFPElementsAttr mask, RankedTensorType scores) {
  auto type = cast<RankedTensorType>(mask.getType());
  int64_t rank = type.getRank(), scoreRank = scores.getRank();
  if (rank < 2 || scoreRank < 2)
    return "it has fewer than two dimensions";
  int64_t sq = scores.getDimSize(scoreRank - 2),
          sk = scores.getDimSize(scoreRank - 1);
  if (type.getDimSize(rank - 2) != sq || type.getDimSize(rank - 1) != sk)
    return "its trailing dimensions are not the scores' queries and keys";
  if (sq != sk)
    return "the scores are not square";
  if (mask.isSplat())
    return "it is a splat";
  int64_t index = 0;
  for (const APFloat &value : mask.getValues<APFloat>()) {
    int64_t i = (index / sk) % sq, j = index % sk;
    ++index;
    double v = value.convertToDouble();
    if (j <= i ? v != 0.0 : !(v <= kHidden)) {
      std::ostringstream held;
      held << v;
      return llvm::formatv("it holds {0} at query {1}, key {2}; a causal "
                           "mask holds 0 on and below the diagonal and -inf "
                           "(or at most -1e30) above it",
                           held.str(), i, j)
          .str();
    }
  }
  return "";
}

/// The scores `add` masks when it adds a causal-mask constant to them
/// (either operand order, the scores' type kept); otherwise null, with
/// `why` saying what the constant is instead when it is one.
Value causallyMasked(AddOp add, std::string &why) {
  for (unsigned side : {0u, 1u}) {
    Value scores = add->getOperand(side), mask = add->getOperand(1 - side);
    DenseFPElementsAttr attr;
    if (scores.getType() != add.getType() ||
        !matchPattern(mask, m_Constant(&attr)))
      continue;
    std::string problem =
        notCausal(attr, cast<RankedTensorType>(add.getType()));
    if (problem.empty())
      return scores;
    why = "adds a constant that is not a causal mask: " + problem;
  }
  return nullptr;
}

/// Whether `v` is computed from a parameter (a function argument marked
/// memopt.param), through any ops.
bool dependsOnParameter(Value v) {
  SmallVector<Value> work{v};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (!seen.insert(x).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(x)) {
      auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
      if (func &&
          func.getArgAttr(arg.getArgNumber(), MemOptDialect::kParamAttrName))
        return true;
      continue;
    }
    llvm::append_range(work, x.getDefiningOp()->getOperands());
  }
  return false;
}

/// A key bias added to the scores: scores of …×H×Sq×Sk plus a tensor of
/// …×1×1×Sk (the same leading dimensions before the heads), as BERT adds
/// its key-padding mask, read by attention as …×Sk.
struct KeyBias {
  Value scores, bias;
};

std::optional<KeyBias> keyBiasOf(AddOp add, std::string &why) {
  auto type = cast<RankedTensorType>(add.getType());
  int64_t rank = type.getRank();
  if (rank < 3)
    return std::nullopt;
  for (unsigned side : {0u, 1u}) {
    Value scores = add->getOperand(side), bias = add->getOperand(1 - side);
    auto bt = dyn_cast<RankedTensorType>(bias.getType());
    if (scores.getType() != type || !bt || bt.getRank() != rank ||
        bt.getElementType() != type.getElementType())
      continue;
    SmallVector<int64_t> want(type.getShape());
    want[rank - 3] = want[rank - 2] = 1;
    if (bt.getShape() != ArrayRef<int64_t>(want))
      continue;
    if (dependsOnParameter(bias)) {
      why = "adds a bias that depends on a parameter, and the fused "
            "attention's key bias takes no gradient";
      return std::nullopt;
    }
    return KeyBias{scores, bias};
  }
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

/// The keys behind a key operand that holds them with their last two
/// dimensions swapped, as the exporters write kᵀ: k is `source`, or (with
/// `perm` set) memopt.transpose(source, perm); `ops` are the ops from
/// source to the operand, `reader` the one reading source.
struct Keys {
  Value source;
  SmallVector<int64_t> perm;
  SmallVector<Operation *> ops;
  Operation *reader = nullptr;
};

std::optional<Keys> keysOf(Value keysT) {
  // A transpose by any permutation: k is x transposed by that permutation
  // with its last two entries swapped (x itself when that is the identity,
  // as for a memopt.transpose of the last two dimensions).
  if (auto t = keysT.getDefiningOp<TransposeOp>()) {
    SmallVector<int64_t> perm(t.getPermutation());
    int64_t rank = static_cast<int64_t>(perm.size());
    if (rank < 2)
      return std::nullopt;
    std::swap(perm[rank - 2], perm[rank - 1]);
    Keys keys{t.getX(), {}, {t}, t};
    for (int64_t i = 0; i < rank; ++i)
      if (perm[i] != i) {
        keys.perm = perm;
        break;
      }
    return keys;
  }
  // reshape(transpose(reshape(x))) (the dynamo exporter's kᵀ of a 4-D k):
  // the leading dimensions regrouped, the last two swapped, the leading
  // ones restored. The last two dimensions stay whole, so each leading
  // index keeps its matrix: the result is x with its last two swapped.
  auto outer = keysT.getDefiningOp<ReshapeOp>();
  auto t = outer ? outer.getX().getDefiningOp<TransposeOp>() : nullptr;
  auto inner = t ? t.getX().getDefiningOp<ReshapeOp>() : nullptr;
  if (!inner || !swapsLastTwo(t))
    return std::nullopt;
  auto x = cast<RankedTensorType>(inner.getX().getType());
  auto mid = cast<RankedTensorType>(inner.getType());
  auto out = cast<RankedTensorType>(outer.getType());
  int64_t rank = x.getRank(), midRank = mid.getRank();
  if (rank < 2 || midRank < 2 || out.getRank() != rank ||
      mid.getShape().take_back(2) != x.getShape().take_back(2))
    return std::nullopt;
  SmallVector<int64_t> swapped(x.getShape());
  std::swap(swapped[rank - 2], swapped[rank - 1]);
  if (out.getShape() != ArrayRef<int64_t>(swapped))
    return std::nullopt;
  return Keys{inner.getX(), {}, {outer, t, inner}, inner};
}

/// K or V repeated over groups of query heads as repeat_interleave (and
/// HF's repeat_kv) writes it: x (…×H×S×D) reshaped to …×H×1×S×D, expanded
/// to …×H×G×S×D (a mul by a splat of ones, or a concat of G copies), and
/// reshaped to …×(H·G)×S×D. Returns x and G, and adds the ops to `ops`.
std::optional<std::pair<Value, int64_t>>
ungroup(Value repeated, SmallVector<Operation *> &ops) {
  auto merge = repeated.getDefiningOp<ReshapeOp>();
  if (!merge)
    return std::nullopt;
  auto type = cast<RankedTensorType>(repeated.getType());
  auto expanded = cast<RankedTensorType>(merge.getX().getType());
  int64_t rank = type.getRank(), heads = rank - 3, groups = heads + 1;
  if (rank < 3 || expanded.getRank() != rank + 1)
    return std::nullopt;
  Operation *expand = merge.getX().getDefiningOp();
  Value unit;
  if (auto mul = dyn_cast_or_null<MulOp>(expand)) {
    for (unsigned side : {0u, 1u}) {
      std::optional<double> one = splatValue(mul->getOperand(1 - side));
      if (one && *one == 1.0)
        unit = mul->getOperand(side);
    }
  } else if (auto concat = dyn_cast_or_null<ConcatOp>(expand)) {
    if (static_cast<int64_t>(concat.getAxis()) == groups &&
        llvm::all_equal(concat.getInputs()))
      unit = concat.getInputs().front();
  }
  auto split = unit ? unit.getDefiningOp<ReshapeOp>() : nullptr;
  if (!split)
    return std::nullopt;
  auto x = cast<RankedTensorType>(split.getX().getType());
  auto unitType = cast<RankedTensorType>(unit.getType());
  // x is …×H×S×D, the unit tensor x with a 1 after H, the expansion that
  // with G there, the result that with H·G as its heads.
  SmallVector<int64_t> want(x.getShape());
  if (x.getRank() != rank)
    return std::nullopt;
  want.insert(want.begin() + groups, 1);
  if (unitType.getShape() != ArrayRef<int64_t>(want))
    return std::nullopt;
  int64_t g = expanded.getDimSize(groups);
  want[groups] = g;
  if (expanded.getShape() != ArrayRef<int64_t>(want))
    return std::nullopt;
  SmallVector<int64_t> merged(x.getShape());
  merged[heads] *= g;
  if (type.getShape() != ArrayRef<int64_t>(merged))
    return std::nullopt;
  ops.append({merge, expand, split});
  return std::make_pair(split.getX(), g);
}

/// A chain the pass fuses: the ops it replaces, first to last, and the
/// attention's operands and attributes.
struct Chain {
  SmallVector<Operation *> ops;
  /// Ops only the chain reads that die with it (a constant-scale mul of q
  /// or k, a transpose of k, the scale constants): erased when unused.
  SmallVector<Operation *> feeders;
  Value q, k, v;
  /// When set, k is memopt.transpose(k, kPerm), made by the fusion.
  SmallVector<int64_t> kPerm;
  /// The …×1×1×Sk key bias, reshaped to …×Sk by the fusion; or null.
  Value keyBias;
  double scale = 1;
  bool causal = false;
  /// The softmax's `safe`: fully masked rows 0 instead of NaN.
  bool safe = false;
  double p = 0;
  int64_t seed = 0;
  MatMulOp output;
};

/// Matches the chain around `softmax`. Returns std::nullopt with `why`
/// empty when the softmax is not attention at all, and with `why` set to
/// the reason when it is attention-like but does not fuse.
std::optional<Chain> match(SoftmaxOp softmax, std::string &why) {
  Chain c;
  // What feeds the softmax: scores, possibly scaled, then up to two adds,
  // in either order: a constant causal mask (the exporters' spelling of
  // is_causal) and a key bias (a key-padding mask).
  Value masked = softmax.getX();
  AddOp maskOp, biasOp;
  Value keyBias;
  std::string maskWhy;
  SmallVector<Operation *> adds; // softmax side first
  for (auto add = masked.getDefiningOp<AddOp>(); add && adds.size() < 2;
       add = masked.getDefiningOp<AddOp>()) {
    std::string why;
    if (Value s = maskOp ? nullptr : causallyMasked(add, why)) {
      maskOp = add;
      masked = s;
    } else if (std::optional<KeyBias> kb =
                   biasOp ? std::nullopt : keyBiasOf(add, why)) {
      biasOp = add;
      keyBias = kb->bias;
      masked = kb->scores;
    } else {
      maskWhy = why;
      break;
    }
    adds.push_back(add);
  }
  Operation *scaleOp = masked.getDefiningOp();
  std::optional<Scaling> scaling = scalingOf(scaleOp);
  Value scores = scaling ? scaling->x : masked;
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
    if (producer && !maskWhy.empty())
      return fail(llvm::formatv("the softmax reads {0}, which {1}",
                                describeOp(producer), maskWhy));
    if (producer)
      return fail(llvm::formatv(
          "the softmax reads {0}, not q·kᵀ (scaled by a constant, with a "
          "constant causal mask or a …×1×1×Sk key bias); any other additive "
          "mask or bias on the scores is not fused",
          describeOp(producer)));
    return fail("the softmax reads a function argument, not q·kᵀ");
  }
  if (qk.getTransposeA())
    return fail("q·kᵀ transposes its first operand (transpose_a)");
  Value q = qk.getA(), k = qk.getB();
  // The op that reads k: q·kᵀ, or the first of the ops that make kᵀ (a
  // constant scale of kᵀ read only by q·kᵀ is folded into the scale).
  Operation *kReader = qk;
  double keyScale = 1;
  if (!qk.getTransposeB()) {
    Value keysT = k;
    std::optional<Scaling> pre = scalingOf(k.getDefiningOp());
    if (pre && soleUser(k) == qk)
      keysT = pre->x;
    std::optional<Keys> keys = keysOf(keysT);
    if (!keys)
      return fail("the key operand of q·kᵀ is transposed neither by "
                  "transpose_b nor by a memopt.transpose (or the exporters' "
                  "reshape, transpose, reshape) of its last two dimensions");
    if (keysT != k) {
      keyScale = pre->factor;
      c.feeders.push_back(k.getDefiningOp());
    }
    k = keys->source;
    c.kPerm = keys->perm;
    kReader = keys->reader;
    c.feeders.append(keys->ops);
  }
  // From the scores to the softmax, each op read only by the next.
  SmallVector<Operation *> between;
  if (scaleOp)
    between.push_back(scaleOp);
  between.append(adds.rbegin(), adds.rend());
  Operation *previous = qk;
  between.push_back(softmax);
  for (auto [i, next] : llvm::enumerate(between)) {
    const char *what = i == 0                ? "scores"
                       : previous == scaleOp ? "scaled scores"
                                             : "masked scores";
    for (Operation *user : previous->getUsers())
      if (user != next)
        return fail(llvm::formatv("the {0} are also read by {1}, so they "
                                  "would be kept anyway",
                                  what, describeOp(user)));
    previous = next;
  }

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
  c.scale = (scaling ? scaling->factor : 1.0) * keyScale;
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

  // K and V repeated over groups of query heads are read in place.
  Value v = pv.getB();
  if (c.kPerm.empty()) {
    SmallVector<Operation *> repeats;
    auto kGroups = ungroup(k, repeats), vGroups = ungroup(v, repeats);
    if (kGroups && vGroups && kGroups->second == vGroups->second) {
      k = kGroups->first;
      v = vGroups->first;
      c.feeders.append(repeats);
    }
  }

  // Shapes: the batch dimensions must match (matmul would broadcast them).
  auto qt = cast<RankedTensorType>(q.getType()),
       kt = cast<RankedTensorType>(k.getType()),
       vt = cast<RankedTensorType>(v.getType());
  if (qt.getElementType() != kt.getElementType() ||
      qt.getElementType() != vt.getElementType())
    return fail("q, k and v have different element types");
  // k as the fusion's transpose will make it.
  shapes::Dims kDims = kt.getShape().vec();
  for (auto [i, from] : llvm::enumerate(c.kPerm))
    kDims[i] = kt.getDimSize(from);
  shapes::Dims result, lse;
  if (shapes::ShapeProblem problem = shapes::attentionShape(
          qt.getShape().vec(), kDims, vt.getShape().vec(),
          softmax.getCausal() || maskOp, result, lse);
      !problem.empty())
    return fail("memopt.attention cannot take these operands: " + problem);
  if (ArrayRef<int64_t>(result) != pv.getType().getShape())
    return fail("P·v's result shape is not the attention's");

  c.ops.push_back(qk);
  if (scaleOp)
    c.ops.push_back(scaleOp);
  c.ops.append(adds.rbegin(), adds.rend());
  c.ops.push_back(softmax);
  if (dropout)
    c.ops.push_back(dropout);
  c.ops.push_back(pv);
  c.q = q;
  c.k = k;
  c.v = v;
  c.causal = softmax.getCausal() || maskOp;
  c.safe = softmax.getSafe();
  c.keyBias = keyBias;
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
  Location loc = FusedLoc::get(b.getContext(), locs);
  // k from the exporter's transpose of another layout (kᵀ of [B, T, H, D]
  // written as one transpose to [B, H, D, T]): the same transpose with the
  // keys' two dimensions in their place.
  Value k = c.k;
  if (!c.kPerm.empty())
    k = TransposeOp::create(b, loc, k, c.kPerm);
  // The key bias without its unit head and query dimensions (a view).
  Value keyBias;
  if (c.keyBias) {
    auto type = cast<RankedTensorType>(c.keyBias.getType());
    SmallVector<int64_t> shape(type.getShape().drop_back(3));
    shape.push_back(type.getShape().back());
    keyBias = ReshapeOp::create(
        b, loc, RankedTensorType::get(shape, type.getElementType()), c.keyBias);
  }
  auto attention =
      AttentionOp::create(b, loc, c.q, k, c.v, keyBias, b.getBoolAttr(c.causal),
                          b.getF64FloatAttr(c.scale), b.getF64FloatAttr(c.p),
                          b.getI64IntegerAttr(c.seed), b.getBoolAttr(c.safe));
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
