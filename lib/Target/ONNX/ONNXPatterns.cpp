//===- ONNXPatterns.cpp - composites recognised before op mapping ---------===//
//
// Exporters spell some ops as several nodes. Before any node is mapped, the
// importer finds those chains whose intermediate values have no other reader
// and maps each to one memopt op; a chain that does not match exactly stays
// node by node.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include <cmath>

using namespace mlir;
using namespace memopt;
using namespace memopt::onnx_import;

/// The one-element constant called `name` (an initializer or a Constant
/// node's value), if there is one.
static std::optional<double>
scalarConstant(const std::string &name,
               const llvm::StringMap<ConstTensor> &consts,
               const llvm::StringMap<const onnx::NodeProto *> &producer) {
  auto it = consts.find(name);
  if (it != consts.end())
    return it->second.numElements() == 1
               ? std::optional<double>(it->second.at(0))
               : std::nullopt;
  const onnx::NodeProto *node = producer.lookup(name);
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

/// Finds exporters' erf GELU, x * 0.5 * (1 + erf(x / sqrt 2)), in either
/// association: Mul(Mul(x, Add(Erf(..), 1)), 0.5) or
/// Mul(Mul(x, 0.5), Add(Erf(..), 1)). It becomes one memopt.gelu.
void Importer::findGeluPatterns() {
  auto near = [](std::optional<double> v, double want) {
    return v && std::abs(*v - want) < 1e-4 * std::abs(want);
  };
  auto scalar = [&](const std::string &name) {
    return scalarConstant(name, consts, producer);
  };
  // The node reading `name`, if it is read exactly once (a graph output
  // counts as a read, by no node).
  auto soleUser = [&](const std::string &name) -> const onnx::NodeProto * {
    return useCount.lookup(name) == 1 ? consumer.lookup(name) : nullptr;
  };
  // The other input of binary `node`, given one of its inputs.
  auto other = [](const onnx::NodeProto &node, const std::string &one) {
    return node.input(0) == one ? node.input(1) : node.input(0);
  };
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
      geluInput[mul2] = x;
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
    geluInput[mul1] = x;
  }
}
