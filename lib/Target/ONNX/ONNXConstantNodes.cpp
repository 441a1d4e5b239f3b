//===- ONNXConstantNodes.cpp - ONNX constants and casts -------------------===//
//
// The conversions of Constant and ConstantOfShape, which become constants
// of the importer (folded into the ops that read them), and of Cast, folded
// on constants and a memopt.cast between float types otherwise.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

using namespace mlir;
using namespace memopt;
using namespace memopt::onnx_import;
using TP = onnx::TensorProto;

LogicalResult Importer::convertConstant(const onnx::NodeProto &node,
                                        Location loc) {
  ConstTensor c;
  if (node.op_type() == "ConstantOfShape") {
    const ConstTensor *shape = constOf(node, 0);
    if (!shape)
      return emitError(loc) << "ConstantOfShape: the shape must be constant";
    c.dataType = TP::FLOAT;
    double fill = 0.0;
    if (const onnx::AttributeProto *a = findAttr(node, "value")) {
      DecodedTensor d;
      std::optional<ConstTensor> v;
      if (decodeTensor(a->t(), d) || !(v = toConst(d)) || v->numElements() != 1)
        return emitError(loc) << "ConstantOfShape: bad value";
      c.dataType = v->dataType;
      fill = v->at(0);
    }
    c.shape = shape->asInts();
    if (c.isFloat())
      c.floats.assign(product(c.shape), fill);
    else
      c.ints.assign(product(c.shape), static_cast<int64_t>(fill));
    consts[node.output(0)] = c;
    return success();
  }
  if (const onnx::AttributeProto *a = findAttr(node, "value")) {
    DecodedTensor d;
    if (std::optional<std::string> error = decodeTensor(a->t(), d))
      return emitError(loc) << "Constant: " << *error;
    std::optional<ConstTensor> v = toConst(d);
    if (!v)
      return emitError(loc) << "Constant: type " << dataTypeName(d.dataType)
                            << " is not supported";
    c = *v;
  } else if (const onnx::AttributeProto *a = findAttr(node, "value_float")) {
    c.dataType = TP::FLOAT;
    c.floats = {a->f()};
  } else if (const onnx::AttributeProto *a = findAttr(node, "value_floats")) {
    c.dataType = TP::FLOAT;
    c.floats.assign(a->floats().begin(), a->floats().end());
    c.shape = {static_cast<int64_t>(c.floats.size())};
  } else if (const onnx::AttributeProto *a = findAttr(node, "value_int")) {
    c.dataType = TP::INT64;
    c.ints = {a->i()};
  } else if (const onnx::AttributeProto *a = findAttr(node, "value_ints")) {
    c.dataType = TP::INT64;
    c.ints.assign(a->ints().begin(), a->ints().end());
    c.shape = {static_cast<int64_t>(c.ints.size())};
  } else {
    return emitError(loc) << "Constant: only tensor, float(s) and int(s) "
                             "values are supported";
  }
  consts[node.output(0)] = c;
  return success();
}

LogicalResult Importer::convertCast(const onnx::NodeProto &node, Location loc) {
  int64_t to = attrInt(node, "to", 0);
  if (const ConstTensor *c = constOf(node, 0)) {
    ConstTensor out;
    out.dataType = static_cast<int32_t>(to);
    out.shape = c->shape;
    if (out.isFloat())
      for (int64_t i = 0; i < c->numElements(); ++i)
        out.floats.push_back(c->at(i));
    else
      out.ints = c->asInts();
    consts[node.output(0)] = out;
    return success();
  }
  FailureOr<Value> x = valueOf(node, 0);
  if (failed(x))
    return failure();
  // A boolean (0/1 floats) cast to bool is itself.
  if (to == onnx::TensorProto::BOOL && booleans.count(node.input(0))) {
    values[node.output(0)] = *x;
    booleans.insert(node.output(0));
    return success();
  }
  Type target = elementType(ctx, static_cast<int32_t>(to));
  if (!target)
    return emitError(loc) << "Cast: to "
                          << dataTypeName(static_cast<int32_t>(to))
                          << " is not supported (only between float types)";
  return castTo(*x, target, loc, node.output(0));
}

FailureOr<Value> Importer::castValue(Value x, Type target, Location loc) {
  Type from = typeOf(x).getElementType();
  if (target == from)
    return x;
  if (!target || !isa<FloatType>(target) || !isa<FloatType>(from))
    return emitError(loc) << "cast from " << from << " to " << target
                          << " is not supported (only between float types)";
  OperationState state(loc, "memopt.cast");
  state.addOperands(x);
  state.addTypes(typeOf(x).clone(target));
  return builder.create(state)->getResult(0);
}

LogicalResult Importer::castTo(Value x, Type target, Location loc,
                               const std::string &output) {
  FailureOr<Value> y = castValue(x, target, loc);
  if (failed(y))
    return failure();
  values[output] = *y;
  return success();
}
