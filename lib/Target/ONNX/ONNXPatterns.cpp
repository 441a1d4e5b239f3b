//===- ONNXPatterns.cpp - composites recognised before op mapping ---------===//
//
// Exporters spell some ops as several nodes. Before any node is mapped, the
// importer finds those chains whose intermediate values have no other reader
// and maps each to one memopt op; a chain that does not match exactly stays
// node by node.
//
// RMSNorm, x * rsqrt(mean(x^2, -1, keepdim) + eps) * w -- Pow(x, 2),
// ReduceMean over the last axis, Add eps, Sqrt, then Reciprocal (dynamo) or
// Div(1, .) (TorchScript), then Mul by x, then (when that product has no
// other reader) Mul by the weight -- is memopt.rms_norm(x, w), whose
// backward pass keeps x and w only. A weight that is not one value per
// feature stays a Mul of its own after rms_norm(x, ones).
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include <cmath>

using namespace mlir;
using namespace memopt;
using namespace memopt::onnx_import;

/// The one-element constant called `name` (an initializer or a Constant
/// node's value), if there is one.
static std::optional<double> scalarConstant(
    const std::string &name, const llvm::StringMap<ConstTensor> &consts,
    const llvm::StringMap<const onnx::NodeProto *> &producer, int depth = 0) {
  auto it = consts.find(name);
  if (it != consts.end())
    return it->second.numElements() == 1
               ? std::optional<double>(it->second.at(0))
               : std::nullopt;
  const onnx::NodeProto *node = producer.lookup(name);
  // Through a Cast to float or double, as the dynamo exporter writes a
  // Python float in a double graph (a float32 Constant, then Cast).
  if (node && depth < 4 && node->op_type() == "Cast" &&
      node->input_size() == 1) {
    const onnx::AttributeProto *to = findAttr(*node, "to");
    std::optional<double> v =
        scalarConstant(node->input(0), consts, producer, depth + 1);
    if (!v || !to)
      return std::nullopt;
    if (to->i() == onnx::TensorProto::FLOAT)
      return static_cast<double>(static_cast<float>(*v));
    if (to->i() == onnx::TensorProto::DOUBLE)
      return v;
    return std::nullopt;
  }
  if (!node || node->op_type() != "Constant")
    return std::nullopt;
  if (const onnx::AttributeProto *a = findAttr(*node, "value_float"))
    return a->f();
  if (const onnx::AttributeProto *a = findAttr(*node, "value")) {
    DecodedTensor d;
    if (decodeTensor(a->t(), d))
      return std::nullopt;
    std::optional<ConstTensor> c = toConst(d);
    if (c && c->numElements() == 1)
      return c->at(0);
  }
  return std::nullopt;
}

namespace {
/// What pattern matching asks of the graph.
struct ChainView {
  const llvm::StringMap<ConstTensor> &consts;
  const llvm::StringMap<const onnx::NodeProto *> &producer;
  const llvm::StringMap<const onnx::NodeProto *> &consumer;
  const llvm::StringMap<int> &useCount;

  std::optional<double> scalar(const std::string &name) const {
    return scalarConstant(name, consts, producer);
  }
  /// The node reading `name`, if it is read exactly once (a graph output
  /// counts as a read, by no node).
  const onnx::NodeProto *soleUser(const std::string &name) const {
    return useCount.lookup(name) == 1 ? consumer.lookup(name) : nullptr;
  }
};

/// The other input of binary `node`, given one of its inputs.
const std::string &other(const onnx::NodeProto &node, const std::string &one) {
  return node.input(0) == one ? node.input(1) : node.input(0);
}
} // namespace

/// Finds exporters' erf GELU, x * 0.5 * (1 + erf(x / sqrt 2)), in either
/// association: Mul(Mul(x, Add(Erf(..), 1)), 0.5) or
/// Mul(Mul(x, 0.5), Add(Erf(..), 1)). It becomes one memopt.gelu.
void Importer::findGeluPatterns() {
  auto near = [](std::optional<double> v, double want) {
    return v && std::abs(*v - want) < 1e-4 * std::abs(want);
  };
  ChainView g{consts, producer, consumer, useCount};
  auto scalar = [&](const std::string &n) { return g.scalar(n); };
  auto soleUser = [&](const std::string &n) { return g.soleUser(n); };
  for (const onnx::NodeProto &erf : model.graph().node()) {
    if (erf.op_type() != "Erf" || erf.input_size() != 1)
      continue;
    const onnx::NodeProto *scale = producer.lookup(erf.input(0));
    if (!scale || scale->input_size() != 2 ||
        useCount.lookup(scale->output(0)) != 1)
      continue;
    std::string x = scale->input(0);
    bool scaled = (scale->op_type() == "Div" &&
                   near(scalar(scale->input(1)), std::sqrt(2.0))) ||
                  (scale->op_type() == "Mul" &&
                   near(scalar(scale->input(1)), std::sqrt(0.5)));
    if (!scaled)
      continue;
    const onnx::NodeProto *add = soleUser(erf.output(0));
    if (!add || add->op_type() != "Add" ||
        !near(scalar(other(*add, erf.output(0))), 1.0))
      continue;
    const onnx::NodeProto *mul1 = soleUser(add->output(0));
    if (!mul1 || mul1->op_type() != "Mul")
      continue;
    std::string factor = other(*mul1, add->output(0));
    if (factor == x) {
      // Mul(Mul(x, Add(..)), 0.5)
      const onnx::NodeProto *mul2 = soleUser(mul1->output(0));
      if (!mul2 || mul2->op_type() != "Mul" ||
          !near(scalar(other(*mul2, mul1->output(0))), 0.5))
        continue;
      fusedAway.insert({scale, &erf, add, mul1});
      fusedUnary[mul2] = {"memopt.gelu", x};
      continue;
    }
    // Mul(Mul(x, 0.5), Add(..))
    const onnx::NodeProto *half = producer.lookup(factor);
    if (!half || half->op_type() != "Mul" ||
        useCount.lookup(half->output(0)) != 1 || other(*half, x) == x ||
        !near(scalar(other(*half, x)), 0.5) ||
        (half->input(0) != x && half->input(1) != x))
      continue;
    fusedAway.insert({scale, &erf, add, half});
    fusedUnary[mul1] = {"memopt.gelu", x};
  }
}

/// Finds SiLU as both exporters write F.silu, Mul(x, Sigmoid(x)) (either
/// order, the sigmoid read only there). It becomes one memopt.silu, whose
/// backward pass keeps x alone instead of x and the sigmoid.
void Importer::findSiluPatterns() {
  ChainView g{consts, producer, consumer, useCount};
  for (const onnx::NodeProto &sigmoid : model.graph().node()) {
    if (sigmoid.op_type() != "Sigmoid" || sigmoid.input_size() != 1 ||
        fusedAway.count(&sigmoid))
      continue;
    const onnx::NodeProto *mul = g.soleUser(sigmoid.output(0));
    if (!mul || mul->op_type() != "Mul" || mul->input_size() != 2 ||
        fusedAway.count(mul) || fusedUnary.count(mul) ||
        other(*mul, sigmoid.output(0)) != sigmoid.input(0))
      continue;
    fusedAway.insert(&sigmoid);
    fusedUnary[mul] = {"memopt.silu", sigmoid.input(0)};
  }
}

/// Finds the guard both exporters put after SDPA's softmax under a boolean
/// attn_mask, Where(IsNaN(P), 0, P) with P = Softmax(..) (the IsNaN read
/// only there): PyTorch's _safe_softmax, zero for a row whose every score
/// is -inf. The softmax becomes memopt.softmax {safe = true} and the Where
/// its result. The two differ only where a score is NaN or +inf, which
/// makes the rows NaN either way but zero here; a step whose scores are
/// NaN has a NaN loss before any such row.
void Importer::findSafeSoftmaxPatterns() {
  ChainView g{consts, producer, consumer, useCount};
  for (const onnx::NodeProto &isNan : model.graph().node()) {
    if (isNan.op_type() != "IsNaN" || isNan.input_size() != 1 ||
        fusedAway.count(&isNan))
      continue;
    const std::string &p = isNan.input(0);
    const onnx::NodeProto *softmax = producer.lookup(p);
    const onnx::NodeProto *where = g.soleUser(isNan.output(0));
    if (!softmax || softmax->op_type() != "Softmax" || !where ||
        where->op_type() != "Where" || where->input_size() != 3 ||
        where->input(0) != isNan.output(0) || where->input(2) != p ||
        g.scalar(where->input(1)) != 0.0 || fusedUnary.count(where))
      continue;
    fusedAway.insert(&isNan);
    fusedUnary[where] = {"", p};
    safeSoftmaxes.insert(softmax);
  }
}

void Importer::findRmsNormPatterns() {
  ChainView g{consts, producer, consumer, useCount};
  auto scalar = [&](const std::string &n) { return g.scalar(n); };
  auto soleUser = [&](const std::string &n) { return g.soleUser(n); };
  for (const onnx::NodeProto &mean : model.graph().node()) {
    if (mean.op_type() != "ReduceMean" || mean.input_size() < 1 ||
        mean.output_size() != 1)
      continue;
    const onnx::NodeProto *pow = producer.lookup(mean.input(0));
    if (!pow || pow->op_type() != "Pow" || pow->input_size() != 2 ||
        useCount.lookup(pow->output(0)) != 1 || scalar(pow->input(1)) != 2.0)
      continue;
    const std::string &x = pow->input(0);
    const onnx::NodeProto *add = soleUser(mean.output(0));
    if (!add || add->op_type() != "Add" || add->input_size() != 2)
      continue;
    std::optional<double> eps = scalar(other(*add, mean.output(0)));
    if (!eps || !(*eps > 0))
      continue;
    const onnx::NodeProto *sqrt = soleUser(add->output(0));
    if (!sqrt || sqrt->op_type() != "Sqrt")
      continue;
    const onnx::NodeProto *inv = soleUser(sqrt->output(0));
    if (!inv ||
        !((inv->op_type() == "Reciprocal") ||
          (inv->op_type() == "Div" && inv->input_size() == 2 &&
           inv->input(1) == sqrt->output(0) && scalar(inv->input(0)) == 1.0)))
      continue;
    const onnx::NodeProto *mul = soleUser(inv->output(0));
    if (!mul || mul->op_type() != "Mul" || mul->input_size() != 2 ||
        other(*mul, inv->output(0)) != x)
      continue;
    fusedAway.insert({pow, &mean, add, sqrt, inv});
    const onnx::NodeProto *scaled = soleUser(mul->output(0));
    if (scaled && scaled->op_type() == "Mul" && scaled->input_size() == 2 &&
        other(*scaled, mul->output(0)) != mul->output(0)) {
      fusedAway.insert(mul);
      int weight = scaled->input(0) == mul->output(0) ? 1 : 0;
      rmsNorms[scaled] = {x, &mean, *eps, weight};
      continue;
    }
    rmsNorms[mul] = {x, &mean, *eps};
  }
}

LogicalResult Importer::convertRmsNorm(const onnx::NodeProto &node,
                                       Location loc) {
  const RmsNorm &r = rmsNorms.at(&node);
  Value x = values.lookup(r.x);
  if (!x)
    return emitError(loc) << "RMSNorm: input '" << r.x
                          << "' is not a computed tensor";
  auto type = typeOf(x);
  int64_t rank = type.getRank();
  Type el = type.getElementType();
  if (rank < 1 || !isa<FloatType>(el))
    return emitError(loc) << "RMSNorm: the input must be a float tensor";
  // The ReduceMean's axes, from its attribute or (opset 18) its input,
  // folded by now: only the last axis, kept, is RMSNorm.
  std::vector<int64_t> axes;
  if (const onnx::AttributeProto *a = findAttr(*r.mean, "axes"))
    axes.assign(a->ints().begin(), a->ints().end());
  else if (r.mean->input_size() > 1 && !r.mean->input(1).empty()) {
    auto it = consts.find(r.mean->input(1));
    if (it == consts.end())
      return emitError(loc) << "RMSNorm: the ReduceMean's axes must be a "
                               "constant";
    axes = it->second.asInts();
  }
  if (axes.size() != 1 || (axes[0] != -1 && axes[0] != rank - 1) ||
      attrInt(*r.mean, "keepdims", 1) != 1)
    return emitError(loc) << "RMSNorm: only the mean over the last axis, "
                             "kept (mean(-1, keepdim=True)), is supported";
  int64_t d = type.getShape().back();
  // The weight is gamma when it is one value per feature of x's type;
  // otherwise a Mul of its own after rms_norm(x, ones).
  Value weight, gamma;
  if (r.weight >= 0) {
    FailureOr<Value> w = valueOf(node, r.weight);
    if (failed(w))
      return failure();
    weight = *w;
    auto wt = typeOf(weight);
    if (wt.getRank() == 1 && wt.getDimSize(0) == d && wt.getElementType() == el)
      gamma = weight;
  }
  FailureOr<Value> y = emit1("memopt.rms_norm", loc,
                             {x, gamma ? gamma : splat({d}, el, 1.0, loc)},
                             {f64("epsilon", r.eps)});
  if (failed(y))
    return failure();
  if (weight && !gamma) {
    y = emit1("memopt.mul", loc, {*y, weight});
    if (failed(y))
      return failure();
  }
  values[node.output(0)] = *y;
  return success();
}
