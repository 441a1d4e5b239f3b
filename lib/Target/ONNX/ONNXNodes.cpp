//===- ONNXNodes.cpp - one ONNX node -> memopt ops ------------------------===//
//
// Each ONNX op type's conversion: the memopt op (or ops) it is, its
// attributes read and checked, constant inputs folded. A node that cannot be
// expressed exactly is an error at the node; nothing is approximated.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "memopt/Dialect/MemOpt/IR/MemOptDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace mlir;
using namespace memopt;
using namespace memopt::onnx_import;
using TP = onnx::TensorProto;

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

  auto gelu = geluInput.find(&node);
  if (gelu != geluInput.end()) {
    Value x = values.lookup(gelu->second);
    if (!x)
      return emitError(loc)
             << "GELU: input '" << gelu->second << "' is not a computed tensor";
    FailureOr<Value> y = emit1("memopt.gelu", loc, {x});
    if (failed(y))
      return failure();
    define(*y);
    return success();
  }

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
    if (approximate != "none")
      return emitError(loc) << "Gelu: approximate='" << approximate
                            << "' is not supported; memopt.gelu is the exact "
                               "(erf) GELU";
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
    return unary("memopt.softmax", {i64("axis", attrInt(node, "axis", -1))});
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
  if (type == "ReduceMean")
    return convertReduceMean(node, loc);
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

FailureOr<SmallVector<int64_t>>
Importer::symmetricPads(const onnx::NodeProto &node, Location loc,
                        ArrayRef<int64_t> inputHW, ArrayRef<int64_t> kernelHW,
                        ArrayRef<int64_t> strides,
                        ArrayRef<int64_t> dilations) {
  std::string autoPad = attrString(node, "auto_pad", "NOTSET");
  std::vector<int64_t> pads(4, 0);
  if (autoPad == "NOTSET") {
    if (auto p = attrInts(node, "pads"))
      pads = *p;
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (int d = 0; d < 2; ++d) {
      int64_t out = (inputHW[d] + strides[d] - 1) / strides[d];
      int64_t total = std::max<int64_t>((out - 1) * strides[d] +
                                            (kernelHW[d] - 1) * dilations[d] +
                                            1 - inputHW[d],
                                        0);
      pads[d] = total / 2;
      pads[d + 2] = total - total / 2;
      if (autoPad == "SAME_LOWER")
        std::swap(pads[d], pads[d + 2]);
    }
  } else if (autoPad != "VALID") {
    return emitError(loc) << node.op_type() << ": auto_pad='" << autoPad
                          << "' is not an ONNX value";
  }
  if (pads.size() != 4)
    return emitError(loc) << node.op_type() << ": expected 4 pads for a 2-D "
                          << "window, got " << pads.size();
  if (pads[0] != pads[2] || pads[1] != pads[3])
    return emitError(loc) << node.op_type() << ": asymmetric pads [" << pads[0]
                          << ", " << pads[1] << ", " << pads[2] << ", "
                          << pads[3]
                          << "] (top, left, bottom, right) are not supported; "
                             "memopt pads both sides of a dimension equally";
  return SmallVector<int64_t>{pads[0], pads[1]};
}

LogicalResult Importer::convertConv(const onnx::NodeProto &node, Location loc) {
  FailureOr<Value> x = valueOf(node, 0), w = valueOf(node, 1);
  if (failed(x) || failed(w))
    return failure();
  RankedTensorType xt = typeOf(*x), wt = typeOf(*w);
  if (xt.getRank() != 4 || wt.getRank() != 4)
    return emitError(loc) << "Conv: only 2-D convolutions (N x C x H x W "
                             "input, 4-D weight) are supported; got input "
                          << xt << " and weight " << wt;
  std::vector<int64_t> strides =
      attrInts(node, "strides").value_or(std::vector<int64_t>{1, 1});
  std::vector<int64_t> dilations =
      attrInts(node, "dilations").value_or(std::vector<int64_t>{1, 1});
  if (strides.size() != 2 || dilations.size() != 2)
    return emitError(loc) << "Conv: strides and dilations need 2 values";
  if (auto k = attrInts(node, "kernel_shape");
      k && (k->size() != 2 || (*k)[0] != wt.getShape()[2] ||
            (*k)[1] != wt.getShape()[3]))
    return emitError(loc) << "Conv: kernel_shape does not match the weight "
                          << wt;
  FailureOr<SmallVector<int64_t>> pads =
      symmetricPads(node, loc, xt.getShape().drop_front(2),
                    wt.getShape().drop_front(2), strides, dilations);
  if (failed(pads))
    return failure();
  SmallVector<Value> operands = {*x, *w};
  if (hasInput(node, 2)) {
    FailureOr<Value> bias = valueOf(node, 2);
    if (failed(bias))
      return failure();
    operands.push_back(*bias);
  }
  FailureOr<Value> y =
      emit1("memopt.conv2d", loc, operands,
            {i64Array("strides", strides), i64Array("padding", *pads),
             i64Array("dilations", dilations),
             i64("groups", attrInt(node, "group", 1))});
  if (failed(y))
    return failure();
  values[node.output(0)] = *y;
  return success();
}

LogicalResult Importer::convertGemm(const onnx::NodeProto &node, Location loc) {
  FailureOr<Value> a = valueOf(node, 0), b = valueOf(node, 1);
  if (failed(a) || failed(b))
    return failure();
  bool transA = attrInt(node, "transA", 0), transB = attrInt(node, "transB", 0);
  double alpha = attrFloat(node, "alpha", 1.0),
         beta = attrFloat(node, "beta", 1.0);
  RankedTensorType at = typeOf(*a), bt = typeOf(*b);
  if (at.getRank() != 2 || bt.getRank() != 2)
    return emitError(loc) << "Gemm: A and B must be matrices; got " << at
                          << " and " << bt;
  Value c;
  if (hasInput(node, 2)) {
    FailureOr<Value> cv = valueOf(node, 2, at.getElementType());
    if (failed(cv))
      return failure();
    c = *cv;
  }
  // torch.nn.Linear: Gemm(x, W, b, transB=1) is memopt.linear exactly.
  int64_t outFeatures = bt.getShape()[0];
  if (!transA && transB && alpha == 1.0 && beta == 1.0 &&
      (!c ||
       (typeOf(c).getRank() == 1 && typeOf(c).getShape()[0] == outFeatures))) {
    SmallVector<Value> operands = {*a, *b};
    if (c)
      operands.push_back(c);
    FailureOr<Value> y = emit1("memopt.linear", loc, operands);
    if (failed(y))
      return failure();
    values[node.output(0)] = *y;
    return success();
  }
  FailureOr<Value> y =
      emit1("memopt.matmul", loc, {*a, *b},
            {builder.getNamedAttr("transpose_a", builder.getBoolAttr(transA)),
             builder.getNamedAttr("transpose_b", builder.getBoolAttr(transB))});
  if (failed(y))
    return failure();
  auto scaled = [&](Value v, double s) -> FailureOr<Value> {
    if (s == 1.0)
      return v;
    ConstTensor k;
    k.dataType = TP::DOUBLE;
    k.floats = {s};
    return emit1("memopt.mul", loc,
                 {v, materialize(k, loc, typeOf(v).getElementType())});
  };
  y = scaled(*y, alpha);
  if (failed(y))
    return failure();
  if (c && beta != 0.0) {
    FailureOr<Value> cs = scaled(c, beta);
    if (failed(cs))
      return failure();
    y = emit1("memopt.add", loc, {*y, *cs});
    if (failed(y))
      return failure();
  }
  values[node.output(0)] = *y;
  return success();
}

/// Element-wise `a op b` on constants with NumPy broadcasting.
static std::optional<ConstTensor> foldBinary(StringRef op, const ConstTensor &a,
                                             const ConstTensor &b) {
  std::vector<int64_t> shape;
  size_t rank = std::max(a.shape.size(), b.shape.size());
  auto dim = [&](const ConstTensor &t, size_t d) -> int64_t {
    size_t off = rank - t.shape.size();
    return d < off ? 1 : t.shape[d - off];
  };
  for (size_t d = 0; d < rank; ++d) {
    int64_t da = dim(a, d), db = dim(b, d);
    if (da != db && da != 1 && db != 1)
      return std::nullopt;
    shape.push_back(std::max(da, db));
  }
  ConstTensor out;
  out.dataType = a.dataType;
  out.shape = shape;
  int64_t n = product(shape);
  auto index = [&](const ConstTensor &t, int64_t flat) {
    int64_t idx = 0, stride = 1;
    for (size_t d = rank; d-- > 0;) {
      int64_t coord = flat % shape[d];
      flat /= shape[d];
      if (dim(t, d) != 1)
        idx += coord * stride;
      stride *= dim(t, d);
    }
    return idx;
  };
  for (int64_t i = 0; i < n; ++i) {
    int64_t ia = index(a, i), ib = index(b, i);
    if (a.isFloat()) {
      double x = a.at(ia), y = b.at(ib);
      out.floats.push_back(op == "Add"   ? x + y
                           : op == "Sub" ? x - y
                           : op == "Mul" ? x * y
                                         : x / y);
    } else {
      int64_t x = a.ints[ia], y = b.isFloat() ? (int64_t)b.at(ib) : b.ints[ib];
      if (op == "Div" && y == 0)
        return std::nullopt;
      out.ints.push_back(op == "Add"   ? x + y
                         : op == "Sub" ? x - y
                         : op == "Mul" ? x * y
                                       : x / y);
    }
  }
  return out;
}

LogicalResult Importer::convertBinary(const onnx::NodeProto &node,
                                      Location loc) {
  const std::string &type = node.op_type();
  const ConstTensor *ca = constOf(node, 0), *cb = constOf(node, 1);
  if (ca && cb) {
    std::optional<ConstTensor> folded = foldBinary(type, *ca, *cb);
    if (!folded)
      return emitError(loc) << type
                            << ": cannot fold these constants "
                               "(shapes do not broadcast, or an integer "
                               "division by zero)";
    consts[node.output(0)] = *folded;
    return success();
  }
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

LogicalResult Importer::convertBatchNorm(const onnx::NodeProto &node,
                                         Location loc) {
  SmallVector<Value> operands;
  for (int i = 0; i < 5; ++i) {
    FailureOr<Value> v = valueOf(node, i);
    if (failed(v))
      return failure();
    operands.push_back(*v);
  }
  for (int i = 3; i < node.output_size(); ++i)
    if (outputUsed(node, i))
      return emitError(loc) << "BatchNormalization: the saved mean and "
                               "variance outputs are not supported";
  double epsilon = attrFloat(node, "epsilon", 1e-5);
  if (!training) {
    FailureOr<Value> y = emit1("memopt.batch_norm_inference", loc, operands,
                               {f64("epsilon", epsilon)});
    if (failed(y))
      return failure();
    values[node.output(0)] = *y;
    return success();
  }
  // Training: batch statistics and updated running statistics, whatever
  // mode the model was exported in (what model.train() does). ONNX's
  // momentum weighs the old running value; PyTorch's (memopt's) the new.
  for (int i = 3; i < 5; ++i)
    if (!isa<BlockArgument>(operands[i]))
      return emitError(loc) << "BatchNormalization: running statistics must "
                               "be initializers to be trained";
  double momentum = shortestDecimal(
      static_cast<float>(1.0 - attrFloat(node, "momentum", 0.9)));
  FailureOr<Operation *> op =
      emit("memopt.batch_norm", loc, operands,
           {f64("epsilon", epsilon), f64("momentum", momentum)}, 3);
  if (failed(op))
    return failure();
  values[node.output(0)] = (*op)->getResult(0);
  for (int i = 1; i < 3 && i < node.output_size(); ++i)
    if (!node.output(i).empty())
      values[node.output(i)] = (*op)->getResult(i);
  stateResults.append({(*op)->getResult(1), (*op)->getResult(2)});
  return success();
}

LogicalResult Importer::convertLayerNorm(const onnx::NodeProto &node,
                                         Location loc) {
  if (outputUsed(node, 1) || outputUsed(node, 2))
    return emitError(loc) << "LayerNormalization: the mean and inverse "
                             "standard deviation outputs are not supported";
  FailureOr<Value> x = valueOf(node, 0);
  if (failed(x))
    return failure();
  Type element = typeOf(*x).getElementType();
  FailureOr<Value> gamma = valueOf(node, 1, element);
  if (failed(gamma))
    return failure();
  int64_t rank = typeOf(*x).getRank();
  int64_t axis = attrInt(node, "axis", -1);
  if (axis < 0)
    axis += rank;
  ArrayRef<int64_t> normalized = typeOf(*x).getShape().drop_front(axis);
  if (axis < 0 || axis >= rank || typeOf(*gamma).getShape() != normalized)
    return emitError(loc) << "LayerNormalization: the scale " << typeOf(*gamma)
                          << " must have the normalized shape "
                          << formatShape(normalized) << " (axis " << axis
                          << ")";
  Value beta;
  if (hasInput(node, 2)) {
    FailureOr<Value> b = valueOf(node, 2, element);
    if (failed(b))
      return failure();
    beta = *b;
  } else {
    ConstTensor zero;
    zero.dataType = TP::DOUBLE;
    zero.shape.assign(normalized.begin(), normalized.end());
    zero.floats.assign(product(normalized), 0.0);
    beta = materialize(zero, loc, element);
  }
  FailureOr<Value> y =
      emit1("memopt.layer_norm", loc, {*x, *gamma, beta},
            {f64("epsilon", attrFloat(node, "epsilon", 1e-5))});
  if (failed(y))
    return failure();
  values[node.output(0)] = *y;
  return success();
}

LogicalResult Importer::convertPool(const onnx::NodeProto &node, Location loc) {
  const std::string &type = node.op_type();
  FailureOr<Value> x = valueOf(node, 0);
  if (failed(x))
    return failure();
  RankedTensorType xt = typeOf(*x);
  if (xt.getRank() != 4)
    return emitError(loc) << type << ": only 2-D pooling of N x C x H x W "
                          << "tensors is supported; got " << xt;
  if (type == "GlobalAveragePool") {
    FailureOr<Value> y = emit1("memopt.global_avg_pool2d", loc, {*x});
    if (failed(y))
      return failure();
    FailureOr<Value> y4 =
        reshape(*y, {xt.getShape()[0], xt.getShape()[1], 1, 1}, loc);
    if (failed(y4))
      return failure();
    values[node.output(0)] = *y4;
    return success();
  }
  if (outputUsed(node, 1))
    return emitError(loc) << type << ": the indices output is not supported";
  std::optional<std::vector<int64_t>> kernel = attrInts(node, "kernel_shape");
  if (!kernel || kernel->size() != 2)
    return emitError(loc) << type << ": expected a 2-D kernel_shape";
  std::vector<int64_t> strides =
      attrInts(node, "strides").value_or(std::vector<int64_t>{1, 1});
  std::vector<int64_t> dilations =
      attrInts(node, "dilations").value_or(std::vector<int64_t>{1, 1});
  if (strides.size() != 2)
    return emitError(loc) << type << ": expected 2 strides";
  if (dilations != std::vector<int64_t>{1, 1})
    return emitError(loc) << type << ": dilated pooling is not supported";
  if (attrInt(node, "ceil_mode", 0) != 0)
    return emitError(loc) << type << ": ceil_mode=1 is not supported "
                          << "(memopt's pooling rounds output sizes down)";
  FailureOr<SmallVector<int64_t>> pads = symmetricPads(
      node, loc, xt.getShape().drop_front(2), *kernel, strides, dilations);
  if (failed(pads))
    return failure();
  if (type == "AveragePool" && ((*pads)[0] || (*pads)[1]) &&
      attrInt(node, "count_include_pad", 0) == 0)
    return emitError(loc) << "AveragePool: count_include_pad=0 with padding "
                             "is not supported; memopt divides by the whole "
                             "window like PyTorch's default "
                             "count_include_pad=True";
  FailureOr<Value> y = emit1(
      type == "MaxPool" ? "memopt.max_pool2d" : "memopt.avg_pool2d", loc, {*x},
      {i64Array("kernel_size", *kernel), i64Array("strides", strides),
       i64Array("padding", *pads)});
  if (failed(y))
    return failure();
  values[node.output(0)] = *y;
  return success();
}

FailureOr<std::vector<int64_t>> Importer::axesOf(const onnx::NodeProto &node,
                                                 Location loc, bool &present) {
  present = true;
  if (hasInput(node, 1)) {
    const ConstTensor *c = constOf(node, 1);
    if (!c)
      return emitError(loc) << node.op_type() << ": axes must be a constant";
    return c->asInts();
  }
  if (auto a = attrInts(node, "axes"))
    return *a;
  present = false;
  return std::vector<int64_t>{};
}

LogicalResult Importer::convertReduceMean(const onnx::NodeProto &node,
                                          Location loc) {
  FailureOr<Value> x = valueOf(node, 0);
  if (failed(x))
    return failure();
  RankedTensorType xt = typeOf(*x);
  bool present;
  FailureOr<std::vector<int64_t>> axes = axesOf(node, loc, present);
  if (failed(axes))
    return failure();
  std::set<int64_t> set;
  for (int64_t a : *axes)
    set.insert(a < 0 ? a + xt.getRank() : a);
  if (xt.getRank() != 4 || set != std::set<int64_t>{2, 3})
    return emitError(loc) << "ReduceMean: only the mean over the spatial "
                             "dimensions (axes 2, 3) of an N x C x H x W "
                             "tensor is supported";
  FailureOr<Value> y = emit1("memopt.global_avg_pool2d", loc, {*x});
  if (failed(y))
    return failure();
  if (attrInt(node, "keepdims", 1)) {
    y = reshape(*y, {xt.getShape()[0], xt.getShape()[1], 1, 1}, loc);
    if (failed(y))
      return failure();
  }
  values[node.output(0)] = *y;
  return success();
}

/// Normalizes axis `a` of a rank-`rank` tensor, or -1 if out of range.
static int64_t normalizeAxis(int64_t a, int64_t rank) {
  if (a < 0)
    a += rank;
  return a < 0 || a >= rank ? -1 : a;
}

LogicalResult Importer::convertShapeOp(const onnx::NodeProto &node,
                                       Location loc) {
  const std::string &type = node.op_type();
  const ConstTensor *cx = constOf(node, 0);
  Value x = values.lookup(node.input(0));
  std::vector<int64_t> inShape =
      cx ? cx->shape
         : std::vector<int64_t>(typeOf(x).getShape().begin(),
                                typeOf(x).getShape().end());
  int64_t rank = inShape.size();

  if (type == "Shape") {
    int64_t start = attrInt(node, "start", 0), end = attrInt(node, "end", rank);
    if (start < 0)
      start += rank;
    if (end < 0)
      end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, start, rank);
    ConstTensor c;
    c.dataType = TP::INT64;
    c.ints.assign(inShape.begin() + start, inShape.begin() + end);
    c.shape = {static_cast<int64_t>(c.ints.size())};
    consts[node.output(0)] = c;
    return success();
  }

  std::vector<int64_t> outShape;
  if (type == "Transpose") {
    std::vector<int64_t> perm(rank);
    std::iota(perm.rbegin(), perm.rend(), 0);
    if (auto p = attrInts(node, "perm"))
      perm = *p;
    if (!x) {
      if (rank > 1)
        x = materialize(*cx, loc);
      else {
        consts[node.output(0)] = *cx;
        return success();
      }
    }
    FailureOr<Value> y =
        emit1("memopt.transpose", loc, {x}, {i64Array("permutation", perm)});
    if (failed(y))
      return failure();
    values[node.output(0)] = *y;
    return success();
  }
  if (type == "Flatten") {
    int64_t axis = attrInt(node, "axis", 1);
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis > rank)
      return emitError(loc) << "Flatten: axis " << axis << " is out of range";
    outShape = {product(inShape, 0, axis), product(inShape, axis)};
  } else if (type == "Reshape") {
    const ConstTensor *s = constOf(node, 1);
    if (!s)
      return emitError(loc) << "Reshape: the shape must be a constant (all "
                               "shapes are static in memopt)";
    std::vector<int64_t> target = s->asInts();
    bool allowZero = attrInt(node, "allowzero", 0);
    int64_t known = 1, infer = -1;
    for (size_t i = 0; i < target.size(); ++i) {
      if (target[i] == 0 && !allowZero) {
        if (i >= inShape.size())
          return emitError(loc) << "Reshape: 0 at position " << i
                                << " copies a dimension the input lacks";
        target[i] = inShape[i];
      }
      if (target[i] == -1) {
        if (infer >= 0)
          return emitError(loc) << "Reshape: more than one -1 in the shape";
        infer = i;
        continue;
      }
      if (target[i] <= 0)
        return emitError(loc)
               << "Reshape: dimension " << target[i] << " is not supported";
      known *= target[i];
    }
    if (infer >= 0) {
      if (known == 0 || product(inShape) % known)
        return emitError(loc)
               << "Reshape: cannot infer the -1 dimension of "
               << formatShape(target) << " from " << formatShape(inShape);
      target[infer] = product(inShape) / known;
    }
    outShape = target;
  } else {
    bool present;
    FailureOr<std::vector<int64_t>> axes = axesOf(node, loc, present);
    if (failed(axes))
      return failure();
    if (type == "Squeeze") {
      std::set<int64_t> drop;
      for (int64_t a : *axes) {
        int64_t n = normalizeAxis(a, rank);
        if (n < 0 || inShape[n] != 1)
          return emitError(loc) << "Squeeze: axis " << a
                                << " is out of range or not of size 1";
        drop.insert(n);
      }
      for (int64_t d = 0; d < rank; ++d)
        if (present ? !drop.count(d) : inShape[d] != 1)
          outShape.push_back(inShape[d]);
    } else {
      if (!present)
        return emitError(loc) << "Unsqueeze: axes are missing";
      int64_t outRank = rank + axes->size();
      std::set<int64_t> add;
      for (int64_t a : *axes) {
        int64_t n = normalizeAxis(a, outRank);
        if (n < 0 || !add.insert(n).second)
          return emitError(loc)
                 << "Unsqueeze: axis " << a << " is out of range or repeated";
      }
      for (int64_t d = 0, next = 0; d < outRank; ++d)
        outShape.push_back(add.count(d) ? 1 : inShape[next++]);
    }
  }
  if (cx) {
    if (product(outShape) != cx->numElements())
      return emitError(loc)
             << type << ": cannot reshape " << formatShape(cx->shape) << " to "
             << formatShape(outShape);
    ConstTensor c = *cx;
    c.shape = outShape;
    consts[node.output(0)] = c;
    return success();
  }
  FailureOr<Value> y = reshape(x, outShape, loc);
  if (failed(y))
    return failure();
  values[node.output(0)] = *y;
  return success();
}

/// The flat index of every element of a `sizes` box starting at `offsets`
/// with `strides` inside a row-major tensor of `shape`.
static std::vector<int64_t> boxIndices(ArrayRef<int64_t> shape,
                                       ArrayRef<int64_t> offsets,
                                       ArrayRef<int64_t> sizes,
                                       ArrayRef<int64_t> strides) {
  std::vector<int64_t> out;
  int64_t n = product(sizes);
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t rest = flat, index = 0, stride = 1;
    std::vector<int64_t> coord(shape.size());
    for (size_t d = shape.size(); d-- > 0;) {
      coord[d] = rest % sizes[d];
      rest /= sizes[d];
    }
    for (size_t d = shape.size(); d-- > 0;) {
      index += (offsets[d] + coord[d] * strides[d]) * stride;
      stride *= shape[d];
    }
    out.push_back(index);
  }
  return out;
}

static ConstTensor gatherConst(const ConstTensor &c, ArrayRef<int64_t> indices,
                               ArrayRef<int64_t> shape) {
  ConstTensor out;
  out.dataType = c.dataType;
  out.shape.assign(shape.begin(), shape.end());
  for (int64_t i : indices) {
    if (c.isFloat())
      out.floats.push_back(c.floats[i]);
    else
      out.ints.push_back(c.ints[i]);
  }
  return out;
}

FailureOr<Value> Importer::slice(Value x, ArrayRef<int64_t> offsets,
                                 ArrayRef<int64_t> sizes,
                                 ArrayRef<int64_t> strides, Location loc) {
  return emit1("memopt.slice", loc, {x},
               {i64Array("offsets", offsets), i64Array("sizes", sizes),
                i64Array("strides", strides)});
}

LogicalResult Importer::convertSlice(const onnx::NodeProto &node,
                                     Location loc) {
  const ConstTensor *cx = constOf(node, 0);
  Value x = values.lookup(node.input(0));
  std::vector<int64_t> shape =
      cx ? cx->shape
         : std::vector<int64_t>(typeOf(x).getShape().begin(),
                                typeOf(x).getShape().end());
  int64_t rank = shape.size();
  const ConstTensor *starts = constOf(node, 1), *ends = constOf(node, 2);
  if (!starts || !ends || (hasInput(node, 3) && !constOf(node, 3)) ||
      (hasInput(node, 4) && !constOf(node, 4)))
    return emitError(loc) << "Slice: starts, ends, axes and steps must be "
                             "constants";
  std::vector<int64_t> s = starts->asInts(), e = ends->asInts();
  std::vector<int64_t> axes(s.size()), steps(s.size(), 1);
  std::iota(axes.begin(), axes.end(), 0);
  if (hasInput(node, 3))
    axes = constOf(node, 3)->asInts();
  if (hasInput(node, 4))
    steps = constOf(node, 4)->asInts();
  if (e.size() != s.size() || axes.size() != s.size() ||
      steps.size() != s.size())
    return emitError(loc) << "Slice: starts, ends, axes and steps differ in "
                             "length";
  std::vector<int64_t> offsets(rank, 0), sizes = shape, strides(rank, 1);
  for (size_t i = 0; i < s.size(); ++i) {
    int64_t a = normalizeAxis(axes[i], rank);
    if (a < 0)
      return emitError(loc) << "Slice: axis " << axes[i] << " is out of range";
    if (steps[i] <= 0)
      return emitError(loc) << "Slice: only positive steps are supported";
    int64_t dim = shape[a];
    auto clampIndex = [&](int64_t v) {
      if (v < 0)
        v += dim;
      return std::clamp<int64_t>(v, 0, dim);
    };
    int64_t begin = clampIndex(s[i]), end = clampIndex(e[i]);
    offsets[a] = begin;
    strides[a] = steps[i];
    sizes[a] = end > begin ? (end - begin + steps[i] - 1) / steps[i] : 0;
    if (sizes[a] == 0)
      return emitError(loc) << "Slice: the result is empty along axis " << a;
  }
  if (cx) {
    consts[node.output(0)] =
        gatherConst(*cx, boxIndices(shape, offsets, sizes, strides), sizes);
    return success();
  }
  if (sizes == shape) {
    values[node.output(0)] = x;
    return success();
  }
  FailureOr<Value> y = slice(x, offsets, sizes, strides, loc);
  if (failed(y))
    return failure();
  values[node.output(0)] = *y;
  return success();
}

LogicalResult Importer::convertSplit(const onnx::NodeProto &node,
                                     Location loc) {
  FailureOr<Value> x = valueOf(node, 0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> shape = typeOf(*x).getShape();
  int64_t rank = shape.size();
  int64_t axis = normalizeAxis(attrInt(node, "axis", 0), rank);
  if (axis < 0)
    return emitError(loc) << "Split: axis is out of range";
  int64_t parts = node.output_size();
  std::vector<int64_t> split;
  if (hasInput(node, 1)) {
    const ConstTensor *c = constOf(node, 1);
    if (!c)
      return emitError(loc) << "Split: the split sizes must be a constant";
    split = c->asInts();
  } else if (auto a = attrInts(node, "split")) {
    split = *a;
  } else {
    int64_t chunk = (shape[axis] + parts - 1) / parts;
    for (int64_t i = 0, left = shape[axis]; i < parts; ++i, left -= chunk)
      split.push_back(std::min(chunk, left));
  }
  if (static_cast<int64_t>(split.size()) != parts ||
      std::accumulate(split.begin(), split.end(), int64_t(0)) != shape[axis])
    return emitError(loc) << "Split: the sizes do not add up to dimension "
                          << axis << " (" << shape[axis] << ") over " << parts
                          << " outputs";
  int64_t offset = 0;
  for (int64_t i = 0; i < parts; ++i) {
    std::vector<int64_t> offsets(rank, 0), sizes(shape.begin(), shape.end());
    offsets[axis] = offset;
    sizes[axis] = split[i];
    offset += split[i];
    if (split[i] <= 0)
      return emitError(loc) << "Split: empty outputs are not supported";
    FailureOr<Value> y =
        slice(*x, offsets, sizes, std::vector<int64_t>(rank, 1), loc);
    if (failed(y))
      return failure();
    if (!node.output(i).empty())
      values[node.output(i)] = *y;
  }
  return success();
}

LogicalResult Importer::convertConcat(const onnx::NodeProto &node,
                                      Location loc) {
  bool allConst = true;
  for (int i = 0; i < node.input_size(); ++i)
    allConst &= constOf(node, i) != nullptr;
  int64_t axisAttr = attrInt(node, "axis", 0);
  if (allConst) {
    const ConstTensor &first = *constOf(node, 0);
    int64_t rank = first.shape.size();
    int64_t axis = normalizeAxis(axisAttr, rank);
    if (axis < 0)
      return emitError(loc) << "Concat: axis is out of range";
    ConstTensor out;
    out.dataType = first.dataType;
    out.shape = first.shape;
    out.shape[axis] = 0;
    int64_t outer = product(first.shape, 0, axis);
    for (int i = 0; i < node.input_size(); ++i) {
      const ConstTensor &c = *constOf(node, i);
      if (static_cast<int64_t>(c.shape.size()) != rank ||
          c.isFloat() != first.isFloat())
        return emitError(loc) << "Concat: constant inputs differ in rank or "
                                 "type";
      out.shape[axis] += c.shape[axis];
    }
    for (int64_t o = 0; o < outer; ++o)
      for (int i = 0; i < node.input_size(); ++i) {
        const ConstTensor &c = *constOf(node, i);
        int64_t inner = product(c.shape, axis);
        for (int64_t k = 0; k < inner; ++k) {
          if (c.isFloat())
            out.floats.push_back(c.floats[o * inner + k]);
          else
            out.ints.push_back(c.ints[o * inner + k]);
        }
      }
    consts[node.output(0)] = out;
    return success();
  }
  Type element;
  for (int i = 0; i < node.input_size(); ++i)
    if (Value v = values.lookup(node.input(i)))
      element = typeOf(v).getElementType();
  SmallVector<Value> inputs;
  for (int i = 0; i < node.input_size(); ++i) {
    FailureOr<Value> v = valueOf(node, i, element);
    if (failed(v))
      return failure();
    inputs.push_back(*v);
  }
  int64_t axis = normalizeAxis(axisAttr, typeOf(inputs[0]).getRank());
  if (axis < 0)
    return emitError(loc) << "Concat: axis is out of range";
  FailureOr<Value> y = emit1("memopt.concat", loc, inputs, {i64("axis", axis)});
  if (failed(y))
    return failure();
  values[node.output(0)] = *y;
  return success();
}

LogicalResult Importer::convertGather(const onnx::NodeProto &node,
                                      Location loc) {
  const ConstTensor *cdata = constOf(node, 0), *cidx = constOf(node, 1);
  Value data = values.lookup(node.input(0));
  std::vector<int64_t> shape =
      cdata ? cdata->shape
            : std::vector<int64_t>(typeOf(data).getShape().begin(),
                                   typeOf(data).getShape().end());
  int64_t rank = shape.size();
  int64_t axis = normalizeAxis(attrInt(node, "axis", 0), rank);
  if (axis < 0)
    return emitError(loc) << "Gather: axis is out of range";
  if (cidx) {
    // Constant indices: fold on constant data, a slice otherwise.
    std::vector<int64_t> idx = cidx->asInts();
    for (int64_t &i : idx) {
      if (i < 0)
        i += shape[axis];
      if (i < 0 || i >= shape[axis])
        return emitError(loc) << "Gather: index out of range";
    }
    std::vector<int64_t> outShape(shape.begin(), shape.begin() + axis);
    outShape.insert(outShape.end(), cidx->shape.begin(), cidx->shape.end());
    outShape.insert(outShape.end(), shape.begin() + axis + 1, shape.end());
    if (cdata) {
      int64_t outer = product(shape, 0, axis), inner = product(shape, axis + 1);
      std::vector<int64_t> flat;
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i : idx)
          for (int64_t k = 0; k < inner; ++k)
            flat.push_back((o * shape[axis] + i) * inner + k);
      consts[node.output(0)] = gatherConst(*cdata, flat, outShape);
      return success();
    }
    bool consecutive = true;
    for (size_t i = 1; i < idx.size(); ++i)
      consecutive &= idx[i] == idx[0] + static_cast<int64_t>(i);
    if (!consecutive || idx.empty())
      return emitError(loc) << "Gather: constant indices into a computed "
                               "tensor must be consecutive";
    std::vector<int64_t> offsets(rank, 0), sizes = shape;
    offsets[axis] = idx[0];
    sizes[axis] = idx.size();
    FailureOr<Value> y =
        slice(data, offsets, sizes, std::vector<int64_t>(rank, 1), loc);
    if (failed(y))
      return failure();
    FailureOr<Value> r = reshape(*y, outShape, loc);
    if (failed(r))
      return failure();
    values[node.output(0)] = *r;
    return success();
  }
  // Computed indices into a table: an embedding lookup.
  FailureOr<Value> table = valueOf(node, 0), ids = valueOf(node, 1);
  if (failed(table) || failed(ids))
    return failure();
  if (axis != 0 || rank != 2)
    return emitError(loc) << "Gather: only row lookups (axis 0) into a "
                             "2-D table are supported";
  FailureOr<Value> y = emit1("memopt.embedding", loc, {*table, *ids});
  if (failed(y))
    return failure();
  values[node.output(0)] = *y;
  return success();
}

LogicalResult Importer::convertResize(const onnx::NodeProto &node,
                                      Location loc) {
  FailureOr<Value> x = valueOf(node, 0);
  if (failed(x))
    return failure();
  RankedTensorType xt = typeOf(*x);
  std::string mode = attrString(node, "mode", "nearest");
  std::string coord =
      attrString(node, "coordinate_transformation_mode", "half_pixel");
  std::string nearest = attrString(node, "nearest_mode", "round_prefer_floor");
  if (mode != "nearest")
    return emitError(loc) << "Resize: mode='" << mode
                          << "' is not supported; only nearest";
  // With an integer scale every output pixel reads source floor(o / s)
  // under asymmetric+floor, and under half_pixel with either rounding.
  bool floorLike =
      (coord == "asymmetric" && nearest == "floor") ||
      ((coord == "half_pixel" || coord == "pytorch_half_pixel") &&
       (nearest == "round_prefer_floor" || nearest == "round_prefer_ceil"));
  if (!floorLike)
    return emitError(loc) << "Resize: coordinate_transformation_mode='" << coord
                          << "' with nearest_mode='" << nearest
                          << "' is not supported";
  if (xt.getRank() != 4)
    return emitError(loc) << "Resize: only N x C x H x W tensors";
  std::vector<double> scales;
  if (const ConstTensor *s = constOf(node, 2); s && s->numElements() > 0) {
    for (int64_t i = 0; i < s->numElements(); ++i)
      scales.push_back(s->at(i));
  } else if (const ConstTensor *z = constOf(node, 3)) {
    for (int64_t i = 0; i < z->numElements() && i < 4; ++i)
      scales.push_back(z->at(i) / xt.getShape()[i]);
  } else {
    return emitError(loc) << "Resize: scales or sizes must be a constant";
  }
  if (scales.size() != 4 || scales[0] != 1.0 || scales[1] != 1.0 ||
      scales[2] != scales[3] || scales[2] < 1.0 ||
      scales[2] != std::floor(scales[2]))
    return emitError(loc) << "Resize: only the same integer scale on H and W "
                             "is supported";
  FailureOr<Value> y = emit1("memopt.upsample_nearest2d", loc, {*x},
                             {i64("scale", static_cast<int64_t>(scales[2]))});
  if (failed(y))
    return failure();
  values[node.output(0)] = *y;
  return success();
}

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
  Type from = typeOf(*x).getElementType();
  Type target = elementType(ctx, static_cast<int32_t>(to));
  if (target == from) {
    values[node.output(0)] = *x;
    return success();
  }
  if (!target || !isa<FloatType>(target) || !isa<FloatType>(from))
    return emitError(loc) << "Cast: from " << from << " to "
                          << dataTypeName(static_cast<int32_t>(to))
                          << " is not supported (only between float types)";
  OperationState state(loc, "memopt.cast");
  state.addOperands(*x);
  state.addTypes(typeOf(*x).clone(target));
  values[node.output(0)] = builder.create(state)->getResult(0);
  return success();
}
