//===- ONNXFoldNodes.cpp - evaluating constant subgraphs at import --------===//
//
// Exporters compute shapes, masks and scales in the graph: Range and Trilu
// build a causal mask, Equal/Where/Not pick -inf or 0, Expand and Tile
// broadcast it, CastLike and Mod adjust indices, Sqrt/Reciprocal/Pow make an
// attention scale. When every input of such a node is a constant (an
// initializer, a Constant node, or a shape the importer already knows), the
// importer evaluates it here, as ONNX defines it, and the result is a
// constant of the importer: none of it reaches the training step.
//
// Results are rounded to the node's element type after each node (f32
// arithmetic as ONNX Runtime and PyTorch do it, not a double carried through
// a chain), so a folded scale is the f32 value the exporter's graph computes.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace memopt;
using namespace memopt::onnx_import;
using TP = onnx::TensorProto;

namespace {

/// The largest tensor the importer folds: a constant this big is not a
/// shape or a mask, and evaluating it would only hide a malformed model.
constexpr int64_t kMaxFoldedElements = int64_t(1) << 26;

bool isBoolOrInt(int32_t t) { return !ConstTensor::isFloatType(t); }

/// `v` rounded as a value of `dataType` (f32 arithmetic for FLOAT).
double roundTo(int32_t dataType, double v) {
  if (dataType == TP::FLOAT)
    return static_cast<double>(static_cast<float>(v));
  return v;
}

/// NumPy broadcasting of `shapes`, or nullopt.
std::optional<std::vector<int64_t>>
broadcastShapes(ArrayRef<std::vector<int64_t>> shapes) {
  size_t rank = 0;
  for (const auto &s : shapes)
    rank = std::max(rank, s.size());
  std::vector<int64_t> out(rank, 1);
  for (const auto &s : shapes)
    for (size_t d = 0; d < s.size(); ++d) {
      int64_t &o = out[rank - s.size() + d];
      if (s[d] == o || s[d] == 1)
        continue;
      if (o != 1)
        return std::nullopt;
      o = s[d];
    }
  return out;
}

/// The flat index into a tensor of `shape` (broadcast to `outShape`) of
/// the element at flat index `flat` of the output.
int64_t broadcastIndex(ArrayRef<int64_t> shape, ArrayRef<int64_t> outShape,
                       int64_t flat) {
  int64_t idx = 0, stride = 1;
  size_t off = outShape.size() - shape.size();
  for (size_t d = outShape.size(); d-- > 0;) {
    int64_t coord = flat % outShape[d];
    flat /= outShape[d];
    if (d < off)
      continue;
    int64_t size = shape[d - off];
    if (size != 1)
      idx += coord * stride;
    stride *= size;
  }
  return idx;
}

ConstTensor makeLike(int32_t dataType, std::vector<int64_t> shape) {
  ConstTensor c;
  c.dataType = dataType;
  c.shape = std::move(shape);
  return c;
}

void push(ConstTensor &c, double v) {
  if (c.isFloat())
    c.floats.push_back(roundTo(c.dataType, v));
  else if (c.dataType == TP::BOOL)
    c.ints.push_back(v != 0.0);
  else
    c.ints.push_back(static_cast<int64_t>(v));
}

int64_t intAt(const ConstTensor &c, int64_t i) {
  return c.isFloat() ? static_cast<int64_t>(c.floats[i]) : c.ints[i];
}

/// Appends element `i` of `from` to `to` (the same data type).
void pushElement(ConstTensor &to, const ConstTensor &from, int64_t i) {
  if (to.isFloat())
    to.floats.push_back(from.floats[i]);
  else
    to.ints.push_back(from.ints[i]);
}

/// The one-input ops foldElementwise evaluates.
bool isUnary(StringRef op) {
  return llvm::StringSwitch<bool>(op)
      .Cases({"Neg", "Abs", "Sqrt", "Reciprocal", "Exp", "Log", "Floor", "Ceil",
              "Sign", "Not", "IsNaN"},
             true)
      .Default(false);
}

/// Python's modulo (the result takes the divisor's sign), ONNX's Mod with
/// fmod=0 on integers.
int64_t floorMod(int64_t a, int64_t b) {
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

} // namespace

bool Importer::isFoldable(StringRef opType) {
  return isUnary(opType) ||
         llvm::StringSwitch<bool>(opType)
             .Cases({"Equal", "Less", "Greater", "LessOrEqual",
                     "GreaterOrEqual", "And", "Or", "Xor", "Mod", "Pow", "Min",
                     "Max"},
                    true)
             .Cases({"Where", "Expand", "Tile", "Trilu", "Range", "CastLike",
                     "Clip"},
                    true)
             .Default(false);
}

std::optional<ConstTensor>
onnx_import::foldElementwise(StringRef op, ArrayRef<const ConstTensor *> in,
                             int64_t fmod, std::string &error) {
  std::vector<std::vector<int64_t>> shapes;
  for (const ConstTensor *c : in)
    shapes.push_back(c->shape);
  std::optional<std::vector<int64_t>> shape = broadcastShapes(shapes);
  if (!shape) {
    error = "the input shapes do not broadcast";
    return std::nullopt;
  }
  int64_t n = product(*shape);
  if (n > kMaxFoldedElements) {
    error = "the result has " + std::to_string(n) +
            " elements, more than the importer folds";
    return std::nullopt;
  }
  bool compare =
      llvm::StringSwitch<bool>(op)
          .Cases({"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual",
                  "And", "Or", "Xor", "Not", "IsNaN"},
                 true)
          .Default(false);
  int32_t dataType = compare         ? int32_t(TP::BOOL)
                     : op == "Where" ? in[1]->dataType
                                     : in[0]->dataType;
  ConstTensor out = makeLike(dataType, *shape);
  bool ints = isBoolOrInt(in[op == "Where" ? 1 : 0]->dataType);
  for (int64_t i = 0; i < n; ++i) {
    auto x = [&](size_t k) {
      return in[k]->at(broadcastIndex(in[k]->shape, *shape, i));
    };
    auto xi = [&](size_t k) {
      return intAt(*in[k], broadcastIndex(in[k]->shape, *shape, i));
    };
    double a = x(0);
    if (op == "Where") {
      push(out, xi(0) != 0 ? x(1) : x(2));
    } else if (in.size() == 1) {
      double r = op == "Neg"          ? -a
                 : op == "Abs"        ? std::fabs(a)
                 : op == "Sqrt"       ? std::sqrt(a)
                 : op == "Reciprocal" ? 1.0 / a
                 : op == "Exp"        ? std::exp(a)
                 : op == "Log"        ? std::log(a)
                 : op == "Floor"      ? std::floor(a)
                 : op == "Ceil"       ? std::ceil(a)
                 : op == "Sign"       ? double((a > 0) - (a < 0))
                 : op == "IsNaN"      ? double(std::isnan(a))
                                      : double(a == 0.0); // Not
      if (ints &&
          (op == "Sqrt" || op == "Reciprocal" || op == "Exp" || op == "Log")) {
        error = "it is not defined on integers";
        return std::nullopt;
      }
      if (ints && op != "Not" && op != "IsNaN") {
        out.ints.push_back(op == "Neg"    ? -xi(0)
                           : op == "Abs"  ? std::abs(xi(0))
                           : op == "Sign" ? int64_t((xi(0) > 0) - (xi(0) < 0))
                                          : xi(0));
        continue;
      }
      push(out, r);
    } else if (ints && !compare) {
      int64_t p = xi(0), q = xi(1);
      if (op == "Div" && q == 0) {
        error = "an integer division by zero";
        return std::nullopt;
      }
      if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
        out.ints.push_back(op == "Add"   ? p + q
                           : op == "Sub" ? p - q
                           : op == "Mul" ? p * q
                                         : p / q);
      } else if (op == "Mod") {
        if (q == 0) {
          error = "an integer modulo by zero";
          return std::nullopt;
        }
        out.ints.push_back(fmod ? p % q : floorMod(p, q));
      } else if (op == "Pow") {
        double r = std::pow(double(p), double(q));
        out.ints.push_back(static_cast<int64_t>(r));
      } else if (op == "Min") {
        out.ints.push_back(std::min(p, q));
      } else { // Max
        out.ints.push_back(std::max(p, q));
      }
    } else {
      double b = x(1);
      double r = op == "Add"              ? a + b
                 : op == "Sub"            ? a - b
                 : op == "Mul"            ? a * b
                 : op == "Div"            ? a / b
                 : op == "Equal"          ? double(a == b)
                 : op == "Less"           ? double(a < b)
                 : op == "Greater"        ? double(a > b)
                 : op == "LessOrEqual"    ? double(a <= b)
                 : op == "GreaterOrEqual" ? double(a >= b)
                 : op == "And"            ? double(a != 0 && b != 0)
                 : op == "Or"             ? double(a != 0 || b != 0)
                 : op == "Xor"            ? double((a != 0) != (b != 0))
                 : op == "Mod"            ? std::fmod(a, b)
                 : op == "Pow"            ? std::pow(a, b)
                 : op == "Min"            ? std::fmin(a, b)
                                          : std::fmax(a, b);
      if (op == "Mod" && !fmod && r != 0 && ((r < 0) != (b < 0)))
        r += b;
      if (op == "Pow" && in[0]->dataType == TP::FLOAT)
        r = std::pow(static_cast<float>(a), static_cast<float>(b));
      push(out, r);
    }
  }
  return out;
}

std::optional<LogicalResult>
Importer::foldConstantNode(const onnx::NodeProto &node, Location loc) {
  const std::string &type = node.op_type();
  if (!isFoldable(type))
    return std::nullopt;
  // CastLike needs only its input's value: the second input gives a type.
  if (type == "CastLike" && constOf(node, 0)) {
    std::optional<int32_t> to;
    if (const ConstTensor *like = constOf(node, 1))
      to = like->dataType;
    else if (Value v = values.lookup(node.input(1)))
      to = onnxDataType(typeOf(v).getElementType());
    if (!to)
      return emitError(loc) << "CastLike: the target type is not supported";
    const ConstTensor &x = *constOf(node, 0);
    ConstTensor out = makeLike(*to, x.shape);
    for (int64_t i = 0; i < x.numElements(); ++i)
      push(out, x.at(i));
    consts[node.output(0)] = std::move(out);
    return success();
  }
  std::vector<const ConstTensor *> in;
  for (int i = 0; i < node.input_size(); ++i) {
    if (node.input(i).empty()) {
      in.push_back(nullptr);
      continue;
    }
    const ConstTensor *c = constOf(node, i);
    if (!c)
      return std::nullopt; // a computed input: the op's own conversion
    in.push_back(c);
  }
  if (in.empty() || !in[0])
    return emitError(loc) << type << ": input 0 is missing";
  auto define = [&](ConstTensor c) -> LogicalResult {
    if (c.numElements() > kMaxFoldedElements)
      return emitError(loc)
             << type << ": the folded result has " << c.numElements()
             << " elements, more than the importer folds";
    consts[node.output(0)] = std::move(c);
    return success();
  };
  auto fail = [&](const std::string &why) -> LogicalResult {
    return emitError(loc) << type << ": cannot fold these constants: " << why;
  };
  auto need = [&](size_t count) {
    return in.size() >= count &&
           llvm::all_of(ArrayRef(in).take_front(count),
                        [](const ConstTensor *c) { return c != nullptr; });
  };

  if (type == "Range") {
    if (!need(3) || in[0]->numElements() != 1 || in[1]->numElements() != 1 ||
        in[2]->numElements() != 1)
      return fail("start, limit and delta must be scalars");
    double start = in[0]->at(0), limit = in[1]->at(0), delta = in[2]->at(0);
    if (delta == 0)
      return fail("delta is 0");
    double count = std::ceil((limit - start) / delta);
    if (!(count < double(kMaxFoldedElements)))
      return fail("the range has too many elements");
    int64_t n = std::max<int64_t>(0, static_cast<int64_t>(count));
    ConstTensor out = makeLike(in[0]->dataType, {n});
    for (int64_t i = 0; i < n; ++i) {
      if (out.isFloat())
        push(out, start + double(i) * delta);
      else
        out.ints.push_back(in[0]->ints[0] + i * in[2]->ints[0]);
    }
    return define(std::move(out));
  }
  if (type == "Expand") {
    if (!need(2) || in[1]->shape.size() != 1)
      return fail("the shape must be a 1-D constant");
    std::vector<int64_t> target = in[1]->asInts();
    for (int64_t d : target)
      if (d < 0)
        return fail("a dimension of the shape is negative");
    std::optional<std::vector<int64_t>> shape =
        broadcastShapes({in[0]->shape, target});
    if (!shape)
      return fail("shape " + formatShape(in[0]->shape) +
                  " does not broadcast to " + formatShape(target));
    if (product(*shape) > kMaxFoldedElements)
      return fail("the result has too many elements");
    ConstTensor out = makeLike(in[0]->dataType, *shape);
    for (int64_t i = 0; i < product(*shape); ++i) {
      pushElement(out, *in[0], broadcastIndex(in[0]->shape, *shape, i));
    }
    return define(std::move(out));
  }
  if (type == "Tile") {
    if (!need(2))
      return fail("it needs the repeats");
    std::vector<int64_t> repeats = in[1]->asInts();
    const std::vector<int64_t> &shape = in[0]->shape;
    if (repeats.size() != shape.size())
      return fail("repeats has " + std::to_string(repeats.size()) +
                  " entries for a rank-" + std::to_string(shape.size()) +
                  " input");
    std::vector<int64_t> outShape;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (repeats[d] < 0)
        return fail("a repeat is negative");
      outShape.push_back(shape[d] * repeats[d]);
    }
    if (product(outShape) > kMaxFoldedElements)
      return fail("the result has too many elements");
    ConstTensor out = makeLike(in[0]->dataType, outShape);
    for (int64_t i = 0, n = product(outShape); i < n; ++i) {
      int64_t flat = i, idx = 0, stride = 1;
      for (size_t d = outShape.size(); d-- > 0;) {
        int64_t coord = flat % outShape[d];
        flat /= outShape[d];
        idx += (coord % shape[d]) * stride;
        stride *= shape[d];
      }
      pushElement(out, *in[0], idx);
    }
    return define(std::move(out));
  }
  if (type == "Trilu") {
    const std::vector<int64_t> &shape = in[0]->shape;
    if (shape.size() < 2)
      return fail("the input has rank below 2");
    int64_t k = 0;
    if (in.size() > 1 && in[1]) {
      if (in[1]->numElements() != 1)
        return fail("k must be a scalar");
      k = intAt(*in[1], 0);
    }
    bool upper = attrInt(node, "upper", 1) != 0;
    int64_t rows = shape[shape.size() - 2], cols = shape.back();
    ConstTensor out = *in[0];
    for (int64_t i = 0, n = out.numElements(); i < n; ++i) {
      int64_t c = i % cols, r = (i / cols) % rows;
      bool keep = upper ? c - r >= k : c - r <= k;
      if (keep)
        continue;
      if (out.isFloat())
        out.floats[i] = 0.0;
      else
        out.ints[i] = 0;
    }
    return define(std::move(out));
  }
  if (type == "Clip") {
    ConstTensor out = *in[0];
    for (int64_t i = 0, n = out.numElements(); i < n; ++i) {
      double v = out.at(i);
      if (in.size() > 1 && in[1])
        v = std::max(v, in[1]->at(0));
      if (in.size() > 2 && in[2])
        v = std::min(v, in[2]->at(0));
      if (out.isFloat())
        out.floats[i] = roundTo(out.dataType, v);
      else
        out.ints[i] = static_cast<int64_t>(v);
    }
    return define(std::move(out));
  }
  // Element-wise, NumPy broadcasting; Min and Max are variadic.
  if ((type == "Min" || type == "Max") && in.size() > 2) {
    ConstTensor acc = *in[0];
    for (size_t i = 1; i < in.size(); ++i) {
      std::string why;
      std::optional<ConstTensor> next =
          foldElementwise(type, {&acc, in[i]}, 0, why);
      if (!next)
        return fail(why);
      acc = std::move(*next);
    }
    return define(std::move(acc));
  }
  size_t arity = type == "Where" ? 3 : isUnary(type) ? 1 : 2;
  if ((type == "Min" || type == "Max") && in.size() == 1)
    return define(*in[0]);
  if (!need(arity))
    return fail("it needs " + std::to_string(arity) + " inputs");
  std::string why;
  std::optional<ConstTensor> out = foldElementwise(
      type, ArrayRef(in).take_front(arity), attrInt(node, "fmod", 0), why);
  if (!out)
    return fail(why);
  return define(std::move(*out));
}
