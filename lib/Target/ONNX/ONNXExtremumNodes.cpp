//===- ONNXExtremumNodes.cpp - Max, Min, ReduceMax, ReduceMin -------------===//
//
// The largest/smallest-element ops on computed tensors (on constants they
// fold in ONNXFoldNodes.cpp):
//
// - Max and Min (torch.maximum, torch.minimum, and torch.max/min of two
//   tensors) are memopt.maximum and minimum, pairwise left to right when
//   there are more than two inputs; a constant input takes the computed
//   one's element type.
// - ReduceMax and ReduceMin (torch.amax/amin, x.max()/min(), and the values
//   of x.max(dim)/min(dim), which both exporters write alike) are
//   memopt.reduce_max and reduce_min of the reduced axes moved last (one
//   transpose) and flattened into one (one reshape), then reshaped to the
//   node's keepdims shape. Reducing them together in one row, not axis by
//   axis, keeps torch.amax's gradient: split evenly among all of a
//   reduction's ties. x.max(dim).values gives a tie's gradient to one
//   element instead; the file cannot tell the two apart, and they differ
//   only where a reduction ties exactly.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include <set>

using namespace mlir;
using namespace memopt;
using namespace memopt::onnx_import;

LogicalResult Importer::convertExtremum(const onnx::NodeProto &node,
                                        Location loc) {
  const std::string &type = node.op_type();
  if (node.input_size() < 1)
    return emitError(loc) << type << ": expected at least one input";
  Type element;
  for (int i = 0; i < node.input_size(); ++i)
    if (Value v = values.lookup(node.input(i)))
      element = typeOf(v).getElementType();
  if (!element || !isa<FloatType>(element))
    return emitError(loc) << type << ": only float tensors are supported";
  FailureOr<Value> acc = valueOf(node, 0, element);
  if (failed(acc))
    return failure();
  const char *name = type == "Max" ? "memopt.maximum" : "memopt.minimum";
  for (int i = 1; i < node.input_size(); ++i) {
    FailureOr<Value> next = valueOf(node, i, element);
    if (failed(next))
      return failure();
    acc = emit1(name, loc, {*acc, *next});
    if (failed(acc))
      return failure();
  }
  values[node.output(0)] = *acc;
  return success();
}

LogicalResult Importer::convertReduceExtremum(const onnx::NodeProto &node,
                                              Location loc) {
  const std::string &type = node.op_type();
  FailureOr<Value> x = valueOf(node, 0);
  if (failed(x))
    return failure();
  RankedTensorType xt = typeOf(*x);
  if (!isa<FloatType>(xt.getElementType()))
    return emitError(loc) << type << ": only float tensors are supported";
  ArrayRef<int64_t> shape = xt.getShape();
  const int64_t rank = xt.getRank();
  FailureOr<std::set<int64_t>> axes = reductionAxes(node, loc, xt);
  if (failed(axes))
    return failure();
  if (axes->empty()) {
    values[node.output(0)] = *x;
    return success();
  }
  const std::set<int64_t> &reduced = *axes;
  // The kept axes in order, then the reduced ones: a transpose unless they
  // already are last.
  SmallVector<int64_t> perm, rows;
  int64_t count = 1;
  for (int64_t d = 0; d < rank; ++d)
    if (!reduced.count(d)) {
      perm.push_back(d);
      rows.push_back(shape[d]);
    }
  for (int64_t d : reduced) {
    perm.push_back(d);
    count *= shape[d];
  }
  if (count == 0)
    return emitError(loc) << type << ": reducing an empty axis of "
                          << formatShape(shape) << " has no value";
  Value y = *x;
  if (!llvm::is_sorted(perm)) {
    FailureOr<Value> t =
        emit1("memopt.transpose", loc, {y}, {i64Array("permutation", perm)});
    if (failed(t))
      return failure();
    y = *t;
  }
  SmallVector<int64_t> flat(rows);
  flat.push_back(count);
  FailureOr<Value> r = reshape(y, flat, loc);
  if (failed(r))
    return failure();
  FailureOr<Value> m =
      emit1(type == "ReduceMax" ? "memopt.reduce_max" : "memopt.reduce_min",
            loc, {*r});
  if (failed(m))
    return failure();
  SmallVector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d)
    if (!reduced.count(d))
      out.push_back(shape[d]);
    else if (attrInt(node, "keepdims", 1))
      out.push_back(1);
  FailureOr<Value> result = reshape(*m, out, loc);
  if (failed(result))
    return failure();
  values[node.output(0)] = *result;
  return success();
}
