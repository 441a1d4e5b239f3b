//===- ONNXShapeNodes.cpp - ONNX shape ops -> memopt ops ------------------===//
//
// The conversions of the ONNX ops that move data: Flatten, Reshape,
// Squeeze, Unsqueeze, Shape and Transpose, then Slice, Split, Concat and
// Gather. Each is folded when its input is a constant (shape arithmetic is
// usually constant) and becomes a memopt op otherwise.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include <algorithm>
#include <numeric>

using namespace mlir;
using namespace memopt;
using namespace memopt::onnx_import;
using TP = onnx::TensorProto;

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

FailureOr<std::set<int64_t>>
Importer::reductionAxes(const onnx::NodeProto &node, Location loc,
                        RankedTensorType x) {
  const int64_t rank = x.getRank();
  bool present;
  FailureOr<std::vector<int64_t>> axes = axesOf(node, loc, present);
  if (failed(axes))
    return failure();
  std::set<int64_t> set;
  for (int64_t a : *axes) {
    int64_t n = normalizeAxis(a, rank);
    if (n < 0)
      return emitError(loc)
             << node.op_type() << ": axis " << a << " is out of range for "
             << formatShape(x.getShape());
    set.insert(n);
  }
  if (!present || set.empty()) {
    if (attrInt(node, "noop_with_empty_axes", 0))
      return std::set<int64_t>{};
    for (int64_t d = 0; d < rank; ++d)
      set.insert(d);
  }
  return set;
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
    // An empty slice of a shape (`x.shape[3:]` of a rank-3 tensor) is
    // ordinary shape arithmetic; of a tensor of the step it is an error.
    if (sizes[a] == 0 && !cx)
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
  if (llvm::any_of(split, [](int64_t s) { return s <= 0; }))
    return emitError(loc) << "Split: empty outputs are not supported";
  FailureOr<SmallVector<Value>> pieces = sliceAlong(*x, axis, split, loc);
  if (failed(pieces))
    return failure();
  for (int64_t i = 0; i < parts; ++i)
    if (!node.output(i).empty())
      values[node.output(i)] = (*pieces)[i];
  return success();
}

FailureOr<SmallVector<Value>> Importer::sliceAlong(Value x, int64_t axis,
                                                   ArrayRef<int64_t> sizes,
                                                   Location loc) {
  ArrayRef<int64_t> shape = typeOf(x).getShape();
  size_t rank = shape.size();
  SmallVector<Value> pieces;
  int64_t offset = 0;
  for (int64_t s : sizes) {
    std::vector<int64_t> offsets(rank, 0), size(shape.begin(), shape.end());
    offsets[axis] = offset;
    size[axis] = s;
    offset += s;
    FailureOr<Value> y =
        slice(x, offsets, size, std::vector<int64_t>(rank, 1), loc);
    if (failed(y))
      return failure();
    pieces.push_back(*y);
  }
  return pieces;
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
  SmallVector<NamedAttribute, 1> attrs;
  auto padding = options.embeddingPaddingIdx.find(node.input(0));
  if (padding != options.embeddingPaddingIdx.end()) {
    attrs.push_back(i64("padding_idx", padding->second));
    paddedTables.insert(node.input(0));
  }
  FailureOr<Value> y = emit1("memopt.embedding", loc, {*table, *ids}, attrs);
  if (failed(y))
    return failure();
  values[node.output(0)] = *y;
  return success();
}
