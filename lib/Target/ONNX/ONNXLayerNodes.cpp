//===- ONNXLayerNodes.cpp - ONNX layers -> memopt ops ---------------------===//
//
// The conversions of ONNX's neural-network layers: Conv (with the symmetric
// padding memopt supports), Gemm, BatchNormalization, LayerNormalization,
// the pools, ReduceMean and Resize (nearest, integer scales).
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace memopt;
using namespace memopt::onnx_import;
using TP = onnx::TensorProto;

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
    beta = splat(normalized, element, 0.0, loc);
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

LogicalResult Importer::convertReduceMean(const onnx::NodeProto &node,
                                          Location loc) {
  const std::string &type = node.op_type();
  auto define = [&](Value v) {
    values[node.output(0)] = v;
    return success();
  };
  FailureOr<Value> x = valueOf(node, 0);
  if (failed(x))
    return failure();
  RankedTensorType xt = typeOf(*x);
  int64_t rank = xt.getRank();
  FailureOr<std::set<int64_t>> axes = reductionAxes(node, loc, xt);
  if (failed(axes))
    return failure();
  if (axes->empty())
    return define(*x);
  std::set<int64_t> set = *axes;
  bool keep = attrInt(node, "keepdims", 1);
  const std::set<int64_t> reduced = set;
  if (type == "ReduceMean" && rank == 4 && set == std::set<int64_t>{2, 3}) {
    FailureOr<Value> y = emit1("memopt.global_avg_pool2d", loc, {*x});
    if (failed(y))
      return failure();
    if (keep) {
      y = reshape(*y, {xt.getShape()[0], xt.getShape()[1], 1, 1}, loc);
      if (failed(y))
        return failure();
    }
    return define(*y);
  }
  Type el = xt.getElementType();
  if (!isa<FloatType>(el))
    return emitError(loc) << type << ": only float tensors are supported";
  // Any other axes: each is a matmul with a column of ones (the sum over
  // that axis, moved last by a transpose and back), then the mean's / n.
  Value y = *x;
  int64_t count = 1;
  auto onesColumn = [&](int64_t n) { return splat({n, 1}, el, 1.0, loc); };
  // Trailing axes (all of them included) are one matmul of the flattened
  // block.
  int64_t first = rank - static_cast<int64_t>(set.size());
  bool trailing = *set.begin() == first;
  if (trailing && set.size() > 1) {
    SmallVector<int64_t> flat(xt.getShape().take_front(first));
    for (int64_t d = first; d < rank; ++d)
      count *= xt.getShape()[d];
    if (flat.empty())
      flat.push_back(1);
    flat.push_back(count);
    FailureOr<Value> r = reshape(y, flat, loc);
    if (failed(r))
      return failure();
    FailureOr<Value> sum = emit1("memopt.matmul", loc, {*r, onesColumn(count)});
    if (failed(sum))
      return failure();
    SmallVector<int64_t> kept(xt.getShape());
    for (int64_t d = first; d < rank; ++d)
      kept[d] = 1;
    FailureOr<Value> k = reshape(*sum, kept, loc);
    if (failed(k))
      return failure();
    y = *k;
    set.clear();
  }
  for (int64_t axis : set) {
    SmallVector<int64_t> shape(typeOf(y).getShape());
    count *= shape[axis];
    SmallVector<int64_t> perm;
    for (int64_t d = 0; d < rank; ++d)
      perm.push_back(d);
    std::swap(perm[axis], perm.back());
    // The swap is its own inverse: the same transpose moves the axis last
    // and the summed axis back.
    auto swapLast = [&](Value v) -> FailureOr<Value> {
      if (axis == rank - 1)
        return v;
      return emit1("memopt.transpose", loc, {v},
                   {i64Array("permutation", perm)});
    };
    FailureOr<Value> last = swapLast(y);
    if (failed(last))
      return failure();
    FailureOr<Value> sum =
        emit1("memopt.matmul", loc, {*last, onesColumn(shape[axis])});
    if (failed(sum))
      return failure();
    FailureOr<Value> back = swapLast(*sum);
    if (failed(back))
      return failure();
    y = *back;
  }
  if (type == "ReduceMean" && count != 1) {
    // sum / n, as PyTorch's mean divides.
    FailureOr<Value> m = emit1(
        "memopt.div", loc, {y, splat({}, el, static_cast<double>(count), loc)});
    if (failed(m))
      return failure();
    y = *m;
  }
  if (!keep) {
    SmallVector<int64_t> out;
    for (int64_t d = 0; d < rank; ++d)
      if (!reduced.count(d))
        out.push_back(xt.getShape()[d]);
    FailureOr<Value> r = reshape(y, out, loc);
    if (failed(r))
      return failure();
    y = *r;
  }
  return define(y);
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
