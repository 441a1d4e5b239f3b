//===- KernelRulesShape.cpp - rules of data movement ops ------------------===//
//
// The rules of the ops that move data without arithmetic: reshape,
// transpose, slice, concat, nearest upsampling and embedding lookup, with
// the backward ops of slice, upsampling and embedding.
//
//===----------------------------------------------------------------------===//

#include "KernelRulesImpl.h"

namespace memopt::runtime::detail {

KernelAttrs reshape(Rules &r) {
  r.arity(1, 1, 1);
  r.done();
  // The output's shape is the plan's (the result type); only the element
  // count and the dtype must agree.
  const TensorInfo &x = r.in(0), &y = r.out(0);
  if (y.numElements != x.numElements)
    r.error("cannot reshape ", formatShape(x.shape), " (", x.numElements,
            " elements) to ", formatShape(y.shape), " (", y.numElements,
            " elements)");
  r.output(0, x.dtype, y.shape);
  return std::monostate{};
}

KernelAttrs transpose(Rules &r) {
  r.arity(1, 1, 1);
  TransposeAttrs a;
  const TensorInfo &x = r.in(0);
  size_t rank = x.shape.size();
  a.permutation = *r.ints("permutation", rank, 0, true);
  r.done();
  std::vector<bool> seen(rank, false);
  Shape out;
  for (int64_t p : a.permutation) {
    if (p >= static_cast<int64_t>(rank) || seen[p])
      r.error("expected 'permutation' to be a permutation of [0, ", rank,
              "), got ", formatInts(a.permutation));
    seen[p] = true;
    out.push_back(x.shape[p]);
  }
  r.output(0, x.dtype, out);
  return a;
}

KernelAttrs slice(Rules &r) {
  r.arity(1, 1, 1);
  SliceAttrs a;
  const TensorInfo &x = r.in(0);
  size_t rank = x.shape.size();
  a.offsets = *r.ints("offsets", rank, 0, true);
  a.sizes = *r.ints("sizes", rank, 1, true);
  auto strides = r.ints("strides", rank, 1, false);
  a.strides = strides ? *strides : std::vector<int64_t>(rank, 1);
  r.done();
  for (size_t d = 0; d < rank; ++d) {
    int64_t last = r.add(a.offsets[d],
                         r.mul(a.sizes[d] - 1, a.strides[d], "slice"), "slice");
    if (last >= x.shape[d])
      r.error("slice of dimension ", d, " reaches index ", last,
              " but the dimension has size ", x.shape[d]);
  }
  r.output(0, x.dtype, a.sizes);
  return a;
}

KernelAttrs concatRule(Rules &r) {
  r.arity(1, SIZE_MAX, 1);
  ConcatAttrs a;
  int64_t axis = r.i64("axis", std::nullopt);
  r.done();
  const TensorInfo &first = r.in(0);
  int64_t rank = first.shape.size();
  if (rank == 0)
    r.error("expected inputs of rank >= 1, got a scalar");
  a.axis = r.axis(axis, rank, "axis");
  Shape out = first.shape;
  for (size_t i = 1; i < r.numInputs(); ++i) {
    const TensorInfo &t = r.in(i);
    std::string name = concat("input ", i);
    r.sameDType(first, "input 0", t, name);
    bool compatible = static_cast<int64_t>(t.shape.size()) == rank;
    for (int64_t d = 0; compatible && d < rank; ++d)
      compatible = d == a.axis || t.shape[d] == out[d];
    if (!compatible)
      r.error("expected ", name, " to match input 0 (",
              formatShape(first.shape), ") in every dimension but ", a.axis,
              ", got ", formatShape(t.shape));
    out[a.axis] = r.add(out[a.axis], t.shape[a.axis], "concatenation");
  }
  r.output(0, first.dtype, out);
  return a;
}

KernelAttrs upsample(Rules &r) {
  r.arity(1, 1, 1);
  UpsampleAttrs a;
  a.scale = r.i64("scale", std::nullopt);
  r.done();
  const TensorInfo &x = r.in(0);
  r.isFloat(x, "x");
  r.rank(x, "x", 4, "NxCxHxW");
  if (a.scale < 1)
    r.error("expected 'scale' >= 1, got ", a.scale);
  Shape out = x.shape;
  out[2] = r.mul(out[2], a.scale, "upsampling");
  out[3] = r.mul(out[3], a.scale, "upsampling");
  r.output(0, x.dtype, out);
  return a;
}

KernelAttrs embedding(Rules &r) {
  r.arity(2, 2, 1);
  r.done();
  const TensorInfo &table = r.in(0), &ids = r.in(1);
  r.isFloat(table, "table");
  r.rank(table, "table", 2, "VxD");
  r.isInteger(ids, "ids");
  Shape out = ids.shape;
  out.push_back(table.shape[1]);
  r.output(0, table.dtype, out);
  return std::monostate{};
}

/// slice_backward(grad) -> zeros of the output's shape with grad scattered
/// where the slice read.
KernelAttrs sliceBackward(Rules &r) {
  r.arity(1, 1, 1);
  SliceAttrs a;
  const TensorInfo &g = r.in(0), &dx = r.out(0);
  size_t rank = dx.shape.size();
  a.offsets = *r.ints("offsets", rank, 0, true);
  a.sizes = *r.ints("sizes", rank, 1, true);
  a.strides = *r.ints("strides", rank, 1, true);
  r.done();
  r.isFloat(g, "grad");
  r.sameDType(g, "grad", dx, "output 0");
  for (size_t d = 0; d < rank; ++d) {
    int64_t last = r.add(a.offsets[d],
                         r.mul(a.sizes[d] - 1, a.strides[d], "slice"), "slice");
    if (last >= dx.shape[d])
      r.error("slice of dimension ", d, " reaches index ", last,
              " but the output's dimension has size ", dx.shape[d]);
  }
  if (g.shape != a.sizes)
    r.error("expected grad shape ", formatShape(a.sizes),
            " (the slice's 'sizes'), got ", formatShape(g.shape));
  return a;
}

KernelAttrs upsampleBackward(Rules &r) {
  r.arity(1, 1, 1);
  UpsampleAttrs a;
  a.scale = r.i64("scale", std::nullopt);
  r.done();
  const TensorInfo &g = r.in(0), &dx = r.out(0);
  r.isFloat(g, "grad");
  r.sameDType(g, "grad", dx, "output 0");
  r.rank(dx, "output 0", 4, "NxCxHxW");
  if (a.scale < 1)
    r.error("expected 'scale' >= 1, got ", a.scale);
  Shape fwd = dx.shape;
  fwd[2] = r.mul(fwd[2], a.scale, "upsampling");
  fwd[3] = r.mul(fwd[3], a.scale, "upsampling");
  if (g.shape != fwd)
    r.error("expected grad shape ", formatShape(fwd), ", got ",
            formatShape(g.shape));
  return a;
}

/// embedding_backward(grad, ids) -> the VxD table's gradient.
KernelAttrs embeddingBackward(Rules &r) {
  r.arity(2, 2, 1);
  r.done();
  const TensorInfo &g = r.in(0), &ids = r.in(1), &table = r.out(0);
  r.isFloat(g, "grad");
  r.isInteger(ids, "ids");
  r.sameDType(g, "grad", table, "output 0");
  r.rank(table, "output 0", 2, "VxD");
  Shape fwd = ids.shape;
  fwd.push_back(table.shape[1]);
  if (g.shape != fwd)
    r.error("expected grad shape ", formatShape(fwd), " (ids ",
            formatShape(ids.shape), " by ", table.shape[1], " features), got ",
            formatShape(g.shape));
  return std::monostate{};
}

} // namespace memopt::runtime::detail
