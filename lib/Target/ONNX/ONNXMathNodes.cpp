//===- ONNXMathNodes.cpp - arithmetic exporters write on computed tensors -===//
//
// The ops of ONNXFoldNodes.cpp when an input is computed, each expressed
// exactly with memopt's ops, or an error at the node:
//
// - Sqrt, Exp, Log and Abs are memopt.sqrt, exp, log and abs (torch's
//   functions and gradients).
// - Neg(x) is x * -1 and Reciprocal(x) is 1 / x (the same IEEE results);
//   Pow(x, c) for c in {1, 2, 3, -1, -2} is the products PyTorch's own pow
//   kernel computes for those exponents (x*x, x*x*x, 1/x, 1/(x*x)).
// - Expand(x, shape) is x * ones (broadcast by memopt.mul, the same bits,
//   and its gradient is the sum over the broadcast dimensions, as Expand's);
//   Tile(x, repeats) is memopt.concat of copies.
// - Where(mask, -inf, x) (masked_fill(mask, -inf)) with a constant mask,
//   read only by a Softmax, is x + (mask ? -inf : 0): the softmax is the
//   same, and its gradient at the masked places is 0 both ways. With a
//   computed boolean condition: masked_fill before a Softmax is x plus
//   log of the 0/1 mask, and Where(mask, a, b) of constant scalars (SDPA's
//   additive mask from a boolean attn_mask) exactly a or b by 0/1
//   arithmetic (convertBooleanSelect).
// - Equal, Less, Greater, LessOrEqual, GreaterOrEqual of a computed tensor
//   and a constant scalar are memopt.compare, a boolean (0/1 floats); And,
//   Or and Xor of booleans are a·b, a + b − a·b and |a − b|.
// - IsNaN only as SDPA's guard Where(IsNaN(P), 0, P) after a Softmax, which
//   ONNXPatterns.cpp turns into memopt.softmax {safe = true}.
// - SplitToSequence with static splits and SequenceAt with a constant
//   position are slices.
// - CastLike is a Cast to the second input's type.
// - Gelu(approximate='tanh') is PyTorch's formula in memopt ops, in its
//   order: x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x*x*x))).
// - Clip(x, min, max) with constant bounds is memopt.clamp, whose gradient
//   is PyTorch's hardtanh_backward (0 at a bound): F.relu6, F.hardtanh and
//   torch.clamp all export as Clip, and only at x exactly on a bound does
//   torch.clamp's own gradient (1 there) differ.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace memopt;
using namespace memopt::onnx_import;

/// Where(cond, -inf, x) (masked_fill(cond, -inf)) with `cond` a computed
/// boolean (0/1 floats) and the result read only by a Softmax, `fillIndex`
/// the -inf branch: x + log(1 - cond) (x + log(cond) with the -inf in the
/// other branch). log(1) is 0 and log(0) is -inf exactly, so this is the
/// Where for finite x; the fused attention then reads it as a key bias.
LogicalResult Importer::convertBooleanMaskedFill(const onnx::NodeProto &node,
                                                 Location loc, int fillIndex) {
  const ConstTensor &fill = *constOf(node, fillIndex);
  for (int64_t i = 0; i < fill.numElements(); ++i)
    if (!fill.isFloat() ||
        fill.at(i) != -std::numeric_limits<double>::infinity())
      return emitError(loc) << "Where: with a computed condition only "
                               "masked_fill(mask, -inf) before a Softmax is "
                               "supported (the filled value must be -inf)";
  FailureOr<Value> cond = valueOf(node, 0);
  FailureOr<Value> x = valueOf(node, fillIndex == 1 ? 2 : 1);
  if (failed(cond) || failed(x))
    return failure();
  Type el = typeOf(*x).getElementType();
  if (!isa<FloatType>(el))
    return emitError(loc) << "Where: masked_fill of " << typeOf(*x)
                          << " is not supported (only of float tensors)";
  // The mask's 0/1 in the scores' type (exact in every float type).
  FailureOr<Value> cast01 = castValue(*cond, el, loc);
  if (failed(cast01))
    return failure();
  Value kept = *cast01;
  if (fillIndex == 1) {
    FailureOr<Value> inverse =
        emit1("memopt.sub", loc, {splat({}, el, 1.0, loc), kept});
    if (failed(inverse))
      return failure();
    kept = *inverse;
  }
  FailureOr<Value> bias = emit1("memopt.log", loc, {kept});
  if (failed(bias))
    return failure();
  return addScoresMask(node, loc, *x, *bias);
}

/// Where(cond, a, b) with `cond` a computed boolean (0/1 floats) and a, b
/// constant scalars, e.g. SDPA's additive mask from a boolean attn_mask,
/// Where(mask, 0, -inf) (the dynamo exporter: -FLT_MAX). Each form gives
/// exactly a where cond is 1 and b where it is 0: a·cond + b·(1 − cond)
/// for finite a and b; with one of them ±inf, the finite one ± log(cond)
/// or ± log(1 − cond) (log(1) = 0, log(0) = -inf).
LogicalResult Importer::convertBooleanSelect(const onnx::NodeProto &node,
                                             Location loc) {
  const ConstTensor &a = *constOf(node, 1), &b = *constOf(node, 2);
  if (!a.isFloat() || !b.isFloat() || a.dataType != b.dataType)
    return emitError(loc) << "Where: with a computed condition and constant "
                             "branches, the branches must be floats of one "
                             "type";
  if (a.numElements() != 1 || b.numElements() != 1)
    return emitError(loc) << "Where: with a computed condition, constant "
                             "branches must be scalars";
  FailureOr<Value> cond = valueOf(node, 0);
  if (failed(cond))
    return failure();
  Type el = elementType(ctx, a.dataType);
  if (!el)
    return emitError(loc) << "Where: the branches' type is not supported";
  ArrayRef<int64_t> shape = typeOf(*cond).getShape();
  if (static_cast<int64_t>(a.shape.size()) > typeOf(*cond).getRank() ||
      static_cast<int64_t>(b.shape.size()) > typeOf(*cond).getRank())
    return emitError(loc) << "Where: a branch of higher rank than the "
                             "condition "
                          << formatShape(shape) << " is not supported";
  const double va = a.at(0), vb = b.at(0);
  if (std::isnan(va) || std::isnan(vb) || (std::isinf(va) && std::isinf(vb)))
    return emitError(loc) << "Where: branches " << va << " and " << vb
                          << " are not supported with a computed condition "
                             "(at most one infinite, neither NaN)";
  FailureOr<Value> c = castValue(*cond, el, loc);
  if (failed(c))
    return failure();
  auto constant = [&](double v) { return splat({}, el, v, loc); };
  auto apply = [&](StringRef name, ValueRange operands, Value &out) {
    return emitInto(name, loc, operands, out);
  };
  Value inverse, y;
  const bool needInverse = !std::isinf(vb) || std::isinf(va);
  if (needInverse && !apply("memopt.sub", {constant(1.0), *c}, inverse))
    return failure();
  if (!std::isinf(va) && !std::isinf(vb)) {
    Value left, right;
    if (!apply("memopt.mul", {*c, constant(va)}, left) ||
        !apply("memopt.mul", {inverse, constant(vb)}, right) ||
        !apply("memopt.add", {left, right}, y))
      return failure();
  } else {
    // log of the finite branch's indicator: 0 there, -inf where the
    // infinite one is chosen.
    const bool infiniteA = std::isinf(va);
    const double inf = infiniteA ? va : vb, finite = infiniteA ? vb : va;
    Value log;
    if (!apply("memopt.log", {infiniteA ? inverse : *c}, log) ||
        !apply(inf < 0 ? "memopt.add" : "memopt.sub", {constant(finite), log},
               y))
      return failure();
  }
  values[node.output(0)] = y;
  return success();
}

/// Equal, Less, Greater, LessOrEqual, GreaterOrEqual of a computed tensor
/// (float, or integer ids) and a constant scalar: memopt.compare, a boolean
/// (0/1 floats) from then on: `ids != pad` is Not(Equal(ids, pad)).
LogicalResult Importer::convertCompare(const onnx::NodeProto &node,
                                       Location loc) {
  const std::string &type = node.op_type();
  const ConstTensor *c0 = constOf(node, 0), *c1 = constOf(node, 1);
  if ((c0 != nullptr) == (c1 != nullptr))
    return emitError(loc) << type
                          << ": comparing two computed tensors is not "
                             "supported (only a computed tensor with a "
                             "constant scalar)";
  const ConstTensor &c = c0 ? *c0 : *c1;
  FailureOr<Value> x = valueOf(node, c0 ? 1 : 0);
  if (failed(x))
    return failure();
  if (c.numElements() != 1 ||
      static_cast<int64_t>(c.shape.size()) > typeOf(*x).getRank())
    return emitError(loc) << type
                          << ": the constant side must be a scalar (of rank "
                             "at most the tensor's)";
  const double v = c.at(0);
  if (!std::isfinite(v))
    return emitError(loc) << type << ": comparing with " << v
                          << " is not supported (only finite constants)";
  // With the constant first, x is on the right: a < x is x > a.
  StringRef predicate = llvm::StringSwitch<StringRef>(type)
                            .Case("Equal", "eq")
                            .Case("Less", c0 ? "gt" : "lt")
                            .Case("Greater", c0 ? "lt" : "gt")
                            .Case("LessOrEqual", c0 ? "ge" : "le")
                            .Default(c0 ? "le" : "ge");
  FailureOr<Value> y = emit1(
      "memopt.compare", loc, {*x},
      {builder.getNamedAttr("predicate", builder.getStringAttr(predicate)),
       f64("value", v)});
  if (failed(y))
    return failure();
  values[node.output(0)] = *y;
  booleans.insert(node.output(0));
  return success();
}

/// And, Or, Xor of booleans (0/1 floats; a constant side materialised as
/// such): a·b, a + b − a·b and |a − b|, each exactly 0 or 1.
LogicalResult Importer::convertLogical(const onnx::NodeProto &node,
                                       Location loc) {
  const std::string &type = node.op_type();
  Value side[2];
  for (int i : {0, 1}) {
    if (const ConstTensor *c = constOf(node, i)) {
      side[i] = materialize(*c, loc, builder.getF32Type());
      continue;
    }
    if (!booleans.count(node.input(i)))
      return emitError(loc) << type
                            << ": only booleans (comparisons, Not and "
                               "boolean inputs) are supported on computed "
                               "values";
    FailureOr<Value> v = valueOf(node, i);
    if (failed(v))
      return failure();
    side[i] = *v;
  }
  for (Value &s : side) {
    FailureOr<Value> f = castValue(s, builder.getF32Type(), loc);
    if (failed(f))
      return failure();
    s = *f;
  }
  Value both, y;
  if (type == "Xor") {
    Value d;
    if (!emitInto("memopt.sub", loc, {side[0], side[1]}, d) ||
        !emitInto("memopt.abs", loc, {d}, y))
      return failure();
  } else if (!emitInto("memopt.mul", loc, {side[0], side[1]}, both)) {
    return failure();
  } else if (type == "And") {
    y = both;
  } else {
    Value sum;
    if (!emitInto("memopt.add", loc, {side[0], side[1]}, sum) ||
        !emitInto("memopt.sub", loc, {sum, both}, y))
      return failure();
  }
  values[node.output(0)] = y;
  booleans.insert(node.output(0));
  return success();
}

LogicalResult Importer::addScoresMask(const onnx::NodeProto &node, Location loc,
                                      Value x, Value mask) {
  FailureOr<Value> y = emit1("memopt.add", loc, {x, mask});
  if (failed(y))
    return failure();
  if (typeOf(*y).getShape() != typeOf(x).getShape())
    return emitError(loc) << "Where: the mask "
                          << formatShape(typeOf(mask).getShape())
                          << " would broadcast "
                          << formatShape(typeOf(x).getShape())
                          << "; only a mask that fits the scores is supported";
  values[node.output(0)] = *y;
  return success();
}

LogicalResult Importer::convertMath(const onnx::NodeProto &node, Location loc) {
  const std::string &type = node.op_type();
  auto define = [&](Value v) {
    values[node.output(0)] = v;
    return success();
  };

  if (type == "SequenceAt") {
    auto seq = sequences.find(node.input(0));
    if (seq == sequences.end())
      return emitError(loc) << "SequenceAt: the sequence '" << node.input(0)
                            << "' is not one SplitToSequence made";
    const ConstTensor *pos = constOf(node, 1);
    if (!pos || pos->numElements() != 1)
      return emitError(loc) << "SequenceAt: the position must be a constant "
                               "scalar";
    int64_t n = seq->second.size(), p = static_cast<int64_t>(pos->at(0));
    if (p < 0)
      p += n;
    if (p < 0 || p >= n)
      return emitError(loc)
             << "SequenceAt: position " << static_cast<int64_t>(pos->at(0))
             << " is outside the sequence of " << n;
    return define(seq->second[p]);
  }

  // The computed float input 0 of an arithmetic node.
  auto floatInput = [&]() -> FailureOr<Value> {
    FailureOr<Value> x = valueOf(node, 0);
    if (failed(x))
      return failure();
    if (!isa<FloatType>(typeOf(*x).getElementType()))
      return emitError(loc) << type
                            << ": only float tensors are supported "
                               "on computed values";
    return x;
  };

  // Not of a boolean input (0/1 floats) is 1 - x, the same 0/1 values.
  if (type == "Not") {
    if (!booleans.count(node.input(0)))
      return emitError(loc) << "Not: only a boolean graph input (or what Not, "
                               "reshapes and Casts to bool make of one) is "
                               "supported on computed values";
    FailureOr<Value> x = valueOf(node, 0);
    if (failed(x))
      return failure();
    Type el = typeOf(*x).getElementType();
    FailureOr<Value> y =
        emit1("memopt.sub", loc, {splat({}, el, 1.0, loc), *x});
    if (failed(y))
      return failure();
    booleans.insert(node.output(0));
    return define(*y);
  }

  if (type == "Sqrt" || type == "Exp" || type == "Log" || type == "Abs") {
    FailureOr<Value> x = floatInput();
    if (failed(x))
      return failure();
    FailureOr<Value> y = emit1("memopt." + StringRef(type).lower(), loc, {*x});
    return failed(y) ? failure() : define(*y);
  }

  if (type == "Neg" || type == "Reciprocal" || type == "Pow") {
    FailureOr<Value> x = floatInput();
    if (failed(x))
      return failure();
    Type el = typeOf(*x).getElementType();
    auto constant = [&](double v) { return splat({}, el, v, loc); };
    if (type == "Neg") {
      FailureOr<Value> y = emit1("memopt.mul", loc, {*x, constant(-1.0)});
      return failed(y) ? failure() : define(*y);
    }
    double exponent = -1.0;
    if (type == "Pow") {
      const ConstTensor *e = constOf(node, 1);
      if (!e || e->numElements() != 1)
        return emitError(loc) << "Pow: only a constant scalar exponent is "
                                 "supported on a computed base";
      exponent = e->at(0);
    }
    if (exponent == 1.0)
      return define(*x);
    if (exponent == 2.0 || exponent == 3.0 || exponent == -2.0) {
      FailureOr<Value> sq = emit1("memopt.mul", loc, {*x, *x});
      if (failed(sq))
        return failure();
      if (exponent == 2.0)
        return define(*sq);
      FailureOr<Value> y = exponent == 3.0
                               ? emit1("memopt.mul", loc, {*sq, *x})
                               : emit1("memopt.div", loc, {constant(1.0), *sq});
      return failed(y) ? failure() : define(*y);
    }
    if (exponent == -1.0) {
      FailureOr<Value> y = emit1("memopt.div", loc, {constant(1.0), *x});
      return failed(y) ? failure() : define(*y);
    }
    return emitError(loc) << "Pow: exponent " << exponent
                          << " on a computed tensor is not supported (1, 2, "
                             "3, -1 and -2 are)";
  }

  if (type == "Expand") {
    FailureOr<Value> x = valueOf(node, 0);
    const ConstTensor *shape = constOf(node, 1);
    if (failed(x))
      return failure();
    if (!shape)
      return emitError(loc) << "Expand: the shape must be a constant";
    std::vector<int64_t> target = shape->asInts();
    ArrayRef<int64_t> in = typeOf(*x).getShape();
    size_t rank = std::max(in.size(), target.size());
    std::vector<int64_t> ones(rank, 1);
    bool grows = target.size() > in.size();
    for (size_t d = 0; d < rank; ++d) {
      int64_t a = d + in.size() >= rank ? in[d + in.size() - rank] : 1;
      int64_t b =
          d + target.size() >= rank ? target[d + target.size() - rank] : 1;
      if (b < 1)
        return emitError(loc) << "Expand: shape " << formatShape(target)
                              << " has a dimension below 1";
      if (a != b && a != 1 && b != 1)
        return emitError(loc)
               << "Expand: shape " << formatShape(in)
               << " does not broadcast to " << formatShape(target);
      if (a == 1 && b > 1) {
        ones[d] = b;
        grows = true;
      }
    }
    if (!grows)
      return define(*x);
    Type el = typeOf(*x).getElementType();
    if (!isa<FloatType>(el))
      return emitError(loc) << "Expand: only float tensors are supported on "
                               "computed values";
    FailureOr<Value> y =
        emit1("memopt.mul", loc, {*x, splat(ones, el, 1.0, loc)});
    return failed(y) ? failure() : define(*y);
  }

  if (type == "Tile") {
    FailureOr<Value> x = valueOf(node, 0);
    const ConstTensor *r = constOf(node, 1);
    if (failed(x))
      return failure();
    if (!r)
      return emitError(loc) << "Tile: the repeats must be a constant";
    std::vector<int64_t> repeats = r->asInts();
    if (static_cast<int64_t>(repeats.size()) != typeOf(*x).getRank())
      return emitError(loc)
             << "Tile: " << repeats.size() << " repeats for a rank-"
             << typeOf(*x).getRank() << " input";
    Value y = *x;
    for (auto [axis, n] : llvm::enumerate(repeats)) {
      if (n < 1 || n > 4096)
        return emitError(loc) << "Tile: repeat " << n << " on axis " << axis
                              << " is not supported (1 to 4096)";
      if (n == 1)
        continue;
      SmallVector<Value> copies(n, y);
      FailureOr<Value> t = emit1("memopt.concat", loc, copies,
                                 {i64("axis", static_cast<int64_t>(axis))});
      if (failed(t))
        return failure();
      y = *t;
    }
    return define(y);
  }

  if (type == "Where") {
    const ConstTensor *cond = constOf(node, 0);
    const ConstTensor *c1 = constOf(node, 1), *c2 = constOf(node, 2);
    const onnx::NodeProto *user = useCount.lookup(node.output(0)) == 1
                                      ? consumer.lookup(node.output(0))
                                      : nullptr;
    bool softmaxNext = user && user->op_type() == "Softmax";
    if (!cond && booleans.count(node.input(0)) && c1 && c2)
      return convertBooleanSelect(node, loc);
    if (!cond && booleans.count(node.input(0)) &&
        (c1 != nullptr) != (c2 != nullptr) && softmaxNext)
      return convertBooleanMaskedFill(node, loc, c1 ? 1 : 2);
    if (!cond || (c1 != nullptr) == (c2 != nullptr) || !softmaxNext)
      return emitError(loc)
             << "Where: on computed tensors only masked_fill(mask, -inf) "
                "before a Softmax (one branch all -inf, the result read by "
                "one Softmax), or a boolean condition choosing between two "
                "constant scalars, is supported";
    const ConstTensor &fill = c1 ? *c1 : *c2;
    int xIndex = c1 ? 2 : 1;
    FailureOr<Value> x = valueOf(node, xIndex);
    if (failed(x))
      return failure();
    // mask = where(cond, fill, 0) for the -inf branch in input 1, else
    // where(cond, 0, fill); every fill that is chosen must be -inf.
    ConstTensor zero;
    zero.dataType = fill.dataType;
    zero.floats = {0.0};
    std::string why;
    std::optional<ConstTensor> mask =
        c1 ? foldElementwise("Where", {cond, &fill, &zero}, 0, why)
           : foldElementwise("Where", {cond, &zero, &fill}, 0, why);
    if (!mask)
      return emitError(loc) << "Where: " << why;
    if (!mask->isFloat())
      return emitError(loc) << "Where: the filled value must be a float";
    for (double v : mask->floats)
      if (v != 0.0 && v != -std::numeric_limits<double>::infinity())
        return emitError(loc) << "Where: the filled value " << v
                              << " is not -inf; only masked_fill(mask, "
                                 "-inf) before a Softmax is supported";
    return addScoresMask(node, loc, *x,
                         materialize(*mask, loc, typeOf(*x).getElementType()));
  }

  if (type == "Clip") {
    FailureOr<Value> x = valueOf(node, 0);
    if (failed(x))
      return failure();
    if (!isa<FloatType>(typeOf(*x).getElementType()))
      return emitError(loc) << "Clip: only float tensors are supported on "
                               "computed values";
    SmallVector<NamedAttribute, 2> bounds;
    double lo = -std::numeric_limits<double>::infinity();
    double hi = std::numeric_limits<double>::infinity();
    for (int i : {1, 2}) {
      if (!hasInput(node, i))
        continue;
      const ConstTensor *c = constOf(node, i);
      if (!c || c->numElements() != 1)
        return emitError(loc) << "Clip: the " << (i == 1 ? "min" : "max")
                              << " must be a constant scalar on a computed "
                                 "tensor";
      double v = c->at(0);
      if (std::isnan(v))
        return emitError(loc)
               << "Clip: the " << (i == 1 ? "min" : "max") << " is NaN";
      // An infinite bound on its own side does not clamp.
      if (std::isinf(v) && (v < 0) == (i == 1))
        continue;
      if (std::isinf(v))
        return emitError(loc)
               << "Clip: a " << (i == 1 ? "min" : "max") << " of "
               << (v < 0 ? "-inf" : "inf") << " is not supported";
      (i == 1 ? lo : hi) = v;
      bounds.push_back(f64(i == 1 ? "min" : "max", v));
    }
    if (!(lo <= hi))
      return emitError(loc) << "Clip: min " << lo << " is above max " << hi
                            << " (ONNX then writes max everywhere); not "
                               "supported";
    if (bounds.empty())
      return define(*x);
    FailureOr<Value> y = emit1("memopt.clamp", loc, {*x}, bounds);
    return failed(y) ? failure() : define(*y);
  }

  if (type == "SplitToSequence") {
    FailureOr<Value> x = valueOf(node, 0);
    if (failed(x))
      return failure();
    ArrayRef<int64_t> shape = typeOf(*x).getShape();
    int64_t rank = shape.size();
    int64_t axis = normalizeAxis(attrInt(node, "axis", 0), rank);
    if (axis < 0)
      return emitError(loc) << "SplitToSequence: axis is out of range";
    bool keep = attrInt(node, "keepdims", 1) != 0;
    std::vector<int64_t> sizes;
    if (hasInput(node, 1)) {
      const ConstTensor *s = constOf(node, 1);
      if (!s)
        return emitError(loc) << "SplitToSequence: the split must be a "
                                 "constant";
      if (s->shape.empty()) {
        int64_t each = static_cast<int64_t>(s->at(0));
        if (each <= 0)
          return emitError(loc)
                 << "SplitToSequence: split " << each << " is not positive";
        for (int64_t at = 0; at < shape[axis]; at += each)
          sizes.push_back(std::min(each, shape[axis] - at));
      } else {
        sizes = s->asInts();
      }
      keep = true;
    } else {
      sizes.assign(shape[axis], 1);
    }
    int64_t total = 0;
    for (int64_t s : sizes) {
      if (s < 0)
        return emitError(loc) << "SplitToSequence: a split is negative";
      total += s;
    }
    if (total != shape[axis])
      return emitError(loc) << "SplitToSequence: splits sum to " << total
                            << ", the axis has " << shape[axis];
    FailureOr<SmallVector<Value>> parts = sliceAlong(*x, axis, sizes, loc);
    if (failed(parts))
      return failure();
    if (!keep) {
      std::vector<int64_t> squeezed(shape.begin(), shape.end());
      squeezed.erase(squeezed.begin() + axis);
      for (Value &v : *parts) {
        FailureOr<Value> r = reshape(v, squeezed, loc);
        if (failed(r))
          return failure();
        v = *r;
      }
    }
    sequences[node.output(0)].assign(parts->begin(), parts->end());
    return success();
  }

  if (type == "CastLike") {
    FailureOr<Value> x = valueOf(node, 0);
    if (failed(x))
      return failure();
    Type target;
    if (const ConstTensor *like = constOf(node, 1))
      target = elementType(ctx, like->dataType);
    else if (Value v = values.lookup(node.input(1)))
      target = typeOf(v).getElementType();
    if (!target)
      return emitError(loc) << "CastLike: the target type is not supported";
    return castTo(*x, target, loc, node.output(0));
  }

  if (type == "Equal" || type == "Less" || type == "Greater" ||
      type == "LessOrEqual" || type == "GreaterOrEqual")
    return convertCompare(node, loc);
  if (type == "And" || type == "Or" || type == "Xor")
    return convertLogical(node, loc);
  if (type == "Max" || type == "Min")
    return convertExtremum(node, loc);
  if (type == "IsNaN")
    return emitError(loc) << "IsNaN: on a computed tensor only as SDPA's "
                             "guard Where(IsNaN(P), 0, P) of a Softmax's "
                             "result P is supported";
  return emitError(loc) << type
                        << ": only on constants (folded at import); this "
                           "node computes on a tensor of the step, which is "
                           "not supported";
}

LogicalResult Importer::convertTanhGelu(const onnx::NodeProto &node,
                                        Location loc) {
  FailureOr<Value> x = valueOf(node, 0);
  if (failed(x))
    return failure();
  Type el = typeOf(*x).getElementType();
  if (!isa<FloatType>(el))
    return emitError(loc) << "Gelu: only float tensors are supported";
  auto constant = [&](double v) { return splat({}, el, v, loc); };
  auto apply = [&](StringRef name, ValueRange operands, Value &out) {
    return emitInto(name, loc, operands, out);
  };
  // kBeta = sqrt(2) * (2 / sqrt(pi)) / 2 and kKappa, as PyTorch's kernel.
  const double beta = M_SQRT2 * M_2_SQRTPI * 0.5, kappa = 0.044715;
  Value x2, x3, k, inner, scaled, t, one, half, y;
  if (!apply("memopt.mul", {*x, *x}, x2) ||
      !apply("memopt.mul", {x2, *x}, x3) ||
      !apply("memopt.mul", {x3, constant(kappa)}, k) ||
      !apply("memopt.add", {*x, k}, inner) ||
      !apply("memopt.mul", {inner, constant(beta)}, scaled) ||
      !apply("memopt.tanh", {scaled}, t) ||
      !apply("memopt.add", {t, constant(1.0)}, one) ||
      !apply("memopt.mul", {*x, constant(0.5)}, half) ||
      !apply("memopt.mul", {half, one}, y))
    return failure();
  values[node.output(0)] = y;
  return success();
}
