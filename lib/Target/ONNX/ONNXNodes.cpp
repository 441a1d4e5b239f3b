//===- ONNXNodes.cpp - one ONNX node -> memopt ops ------------------------===//
//
// Each ONNX op type's conversion: the memopt op (or ops) it is, its
// attributes read and checked, constant inputs folded. A node that cannot be
// expressed exactly is an error at the node; nothing is approximated.
//
// This file holds convertNode, which dispatches on the op type and converts
// the one-op activations, Identity, Dropout and MatMul itself, and the
// element-wise arithmetic (with constant folding). The other op families
// are in ONNXLayerNodes.cpp (convolution, Gemm, normalisation, pooling,
// reductions, Resize), ONNXShapeNodes.cpp (shapes, slicing, joining,
// gathering) and ONNXConstantNodes.cpp (constants and casts).
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "memopt/Dialect/MemOpt/IR/MemOptDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace mlir;
using namespace memopt;
using namespace memopt::onnx_import;

//===----------------------------------------------------------------------===//
// Nodes
//===----------------------------------------------------------------------===//

LogicalResult Importer::convertNode(const onnx::NodeProto &node, size_t index) {
  Location loc = nodeLoc(node);
  const std::string &type = node.op_type();
  auto define = [&](Value v) { values[node.output(0)] = v; };
  auto unary = [&](StringRef name,
                   ArrayRef<NamedAttribute> attrs = {}) -> LogicalResult {
    FailureOr<Value> x = valueOf(node, 0);
    if (failed(x))
      return failure();
    FailureOr<Value> y = emit1(name, loc, {*x}, attrs);
    if (failed(y))
      return failure();
    define(*y);
    return success();
  };

  auto fused = fusedUnary.find(&node);
  if (fused != fusedUnary.end()) {
    Value x = values.lookup(fused->second.x);
    if (!x)
      return emitError(loc) << fused->second.op << ": input '"
                            << fused->second.x << "' is not a computed tensor";
    if (fused->second.op.empty()) {
      define(x);
      return success();
    }
    FailureOr<Value> y = emit1(fused->second.op, loc, {x});
    if (failed(y))
      return failure();
    define(*y);
    return success();
  }

  if (rmsNorms.count(&node))
    return convertRmsNorm(node, loc);

  if (std::optional<LogicalResult> folded = foldConstantNode(node, loc))
    return *folded;
  if (isFoldable(type) || type == "SplitToSequence" || type == "SequenceAt")
    return convertMath(node, loc);

  if (type == "Relu")
    return unary("memopt.relu");
  if (type == "Sigmoid")
    return unary("memopt.sigmoid");
  if (type == "Tanh")
    return unary("memopt.tanh");
  if (type == "LeakyRelu")
    return unary("memopt.leaky_relu",
                 {f64("alpha", attrFloat(node, "alpha", 0.01))});
  if (type == "Elu")
    return unary("memopt.elu", {f64("alpha", attrFloat(node, "alpha", 1.0))});
  if (type == "Gelu") {
    std::string approximate = attrString(node, "approximate", "none");
    if (approximate == "tanh")
      return convertTanhGelu(node, loc);
    if (approximate != "none")
      return emitError(loc) << "Gelu: approximate='" << approximate
                            << "' is not 'none' or 'tanh'";
    return unary("memopt.gelu");
  }
  if (type == "Erf")
    return emitError(loc) << "Erf: only the erf GELU pattern x * 0.5 * (1 + "
                             "erf(x / sqrt(2))) is supported, and this Erf "
                             "is not part of one";
  if (type == "Softmax") {
    if (opset < 13)
      return emitError(loc) << "Softmax: opset " << opset
                            << " semantics (2-D coercion) are not supported";
    SmallVector<NamedAttribute, 2> attrs{
        i64("axis", attrInt(node, "axis", -1))};
    if (safeSoftmaxes.count(&node))
      attrs.push_back(builder.getNamedAttr("safe", builder.getBoolAttr(true)));
    return unary("memopt.softmax", attrs);
  }
  if (type == "Identity") {
    if (isConst(node.input(0))) {
      consts[node.output(0)] = consts[node.input(0)];
      return success();
    }
    FailureOr<Value> x = valueOf(node, 0);
    if (failed(x))
      return failure();
    define(*x);
    return success();
  }
  if (type == "Dropout") {
    if (outputUsed(node, 1))
      return emitError(loc) << "Dropout: the mask output is not supported";
    FailureOr<Value> x = valueOf(node, 0);
    if (failed(x))
      return failure();
    double ratio = 0.5;
    if (hasInput(node, 1)) {
      const ConstTensor *r = constOf(node, 1);
      if (!r || r->numElements() != 1)
        return emitError(loc) << "Dropout: the ratio must be a constant";
      ratio = r->at(0);
    }
    if (!training || ratio == 0.0) {
      define(*x);
      return success();
    }
    FailureOr<Value> y = emit1(
        "memopt.dropout", loc, {*x},
        {f64("p", ratio), i64("seed", attrInt(node, "seed", dropoutCount++))});
    if (failed(y))
      return failure();
    define(*y);
    return success();
  }
  if (type == "Conv")
    return convertConv(node, loc);
  if (type == "Gemm")
    return convertGemm(node, loc);
  if (type == "MatMul") {
    FailureOr<Value> a = valueOf(node, 0), b = valueOf(node, 1);
    if (failed(a) || failed(b))
      return failure();
    if (typeOf(*a).getRank() < 2 || typeOf(*b).getRank() < 2)
      return emitError(loc) << "MatMul: 1-D operands are not supported";
    FailureOr<Value> y = emit1("memopt.matmul", loc, {*a, *b});
    if (failed(y))
      return failure();
    define(*y);
    return success();
  }
  if (type == "Add" || type == "Sub" || type == "Mul" || type == "Div")
    return convertBinary(node, loc);
  if (type == "BatchNormalization")
    return convertBatchNorm(node, loc);
  if (type == "LayerNormalization")
    return convertLayerNorm(node, loc);
  if (type == "MaxPool" || type == "AveragePool" || type == "GlobalAveragePool")
    return convertPool(node, loc);
  if (type == "ReduceMean" || type == "ReduceSum")
    return convertReduceMean(node, loc);
  if (type == "ReduceMax" || type == "ReduceMin")
    return convertReduceExtremum(node, loc);
  if (type == "Flatten" || type == "Reshape" || type == "Squeeze" ||
      type == "Unsqueeze" || type == "Shape" || type == "Transpose")
    return convertShapeOp(node, loc);
  if (type == "Slice")
    return convertSlice(node, loc);
  if (type == "Split")
    return convertSplit(node, loc);
  if (type == "Concat")
    return convertConcat(node, loc);
  if (type == "Gather")
    return convertGather(node, loc);
  if (type == "Resize")
    return convertResize(node, loc);
  if (type == "Constant" || type == "ConstantOfShape")
    return convertConstant(node, loc);
  if (type == "Cast")
    return convertCast(node, loc);
  return emitError(loc) << "internal error: no conversion for " << type;
}

LogicalResult Importer::convertBinary(const onnx::NodeProto &node,
                                      Location loc) {
  const std::string &type = node.op_type();
  const ConstTensor *ca = constOf(node, 0), *cb = constOf(node, 1);
  if (ca && cb) {
    std::string why;
    std::optional<ConstTensor> folded = foldElementwise(type, {ca, cb}, 0, why);
    if (!folded)
      return emitError(loc) << type << ": cannot fold these constants: " << why;
    consts[node.output(0)] = *folded;
    return success();
  }
  // x * inf is NaN wherever x is 0: what an exporter writes when it stores
  // a finite value too large for the constant's type (torch.finfo(
  // torch.float64).min as a float32 becomes -inf, and BERT's
  // (1 - mask) * min is then NaN at every position the mask keeps).
  const ConstTensor *c = ca ? ca : cb;
  if (type == "Mul" && c && c->isFloat() &&
      llvm::any_of(c->floats, [](double v) { return std::isinf(v); }))
    emitWarning(loc) << "Mul by a constant holding inf: the product is NaN "
                        "wherever the other operand is 0 (an exporter writes "
                        "this when a finite constant overflows its type, e.g. "
                        "torch.finfo(torch.float64).min stored as float32)";
  // A constant operand takes the element type of the computed one.
  Type element;
  for (int i = 0; i < 2; ++i)
    if (Value v = values.lookup(node.input(i)))
      element = typeOf(v).getElementType();
  FailureOr<Value> a = valueOf(node, 0, element), b = valueOf(node, 1, element);
  if (failed(a) || failed(b))
    return failure();
  std::string name = "memopt." + llvm::StringRef(type).lower();
  FailureOr<Value> y = emit1(name, loc, {*a, *b});
  if (failed(y))
    return failure();
  values[node.output(0)] = *y;
  return success();
}
