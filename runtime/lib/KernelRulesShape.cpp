//===- KernelRulesShape.cpp - rules of data movement ops ------------------===//
//
// The rules of the ops that move data without arithmetic: reshape,
// transpose, slice, concat, nearest upsampling and embedding lookup, with
// the backward ops of slice, upsampling and embedding.
//
//===----------------------------------------------------------------------===//

#include "KernelRulesImpl.h"

#include "memopt/Contract/MovementShapes.h"

namespace memopt::runtime::detail {

KernelAttrs reshape(Rules &r) {
  r.arity(1, 1, 1);
  r.done();
  // The output's shape is the plan's (the result type); only the element
  // count and the dtype must agree.
  const TensorInfo &x = r.in(0), &y = r.out(0);
  if (shapes::ShapeProblem problem = shapes::reshapeShape(x.shape, y.shape);
      !problem.empty())
    r.error(problem);
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
  Shape out;
  if (shapes::ShapeProblem problem =
          shapes::transposeShape(x.shape, a.permutation, out);
      !problem.empty())
    r.error(problem);
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
  Shape out;
  if (shapes::ShapeProblem problem =
          shapes::sliceShape(x.shape, a.offsets, a.sizes, a.strides, out);
      !problem.empty())
    r.error(problem);
  r.output(0, x.dtype, out);
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
  std::vector<Shape> dims = {first.shape};
  for (size_t i = 1; i < r.numInputs(); ++i) {
    const TensorInfo &t = r.in(i);
    r.sameDType(first, "input #0", t, concat("input #", i));
    dims.push_back(t.shape);
  }
  Shape out;
  if (shapes::ShapeProblem problem = shapes::concatShape(dims, a.axis, out);
      !problem.empty())
    r.error(problem);
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
  Shape out;
  if (shapes::ShapeProblem problem =
          shapes::upsampleNearest2dShape(x.shape, a.scale, out);
      !problem.empty())
    r.error(problem);
  r.output(0, x.dtype, out);
  return a;
}

/// padding_idx, optional: a row of the V-row table.
EmbeddingAttrs paddingIdx(Rules &r, int64_t vocab) {
  EmbeddingAttrs a;
  a.paddingIdx = r.i64("padding_idx", -1);
  if (a.paddingIdx != -1 && (a.paddingIdx < 0 || a.paddingIdx >= vocab))
    r.error("expected 'padding_idx' in [0, ", vocab, "), got ", a.paddingIdx);
  return a;
}

KernelAttrs embedding(Rules &r) {
  r.arity(2, 2, 1);
  const TensorInfo &table = r.in(0), &ids = r.in(1);
  r.isFloat(table, "table");
  r.rank(table, "table", 2, "VxD");
  EmbeddingAttrs a = paddingIdx(r, table.shape[0]);
  r.done();
  r.isInteger(ids, "ids");
  r.output(0, table.dtype, shapes::embeddingShape(table.shape, ids.shape));
  return a;
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
  Shape fwd;
  if (shapes::ShapeProblem problem =
          shapes::sliceShape(dx.shape, a.offsets, a.sizes, a.strides, fwd,
                             "the output's dimension");
      !problem.empty())
    r.error(problem);
  if (g.shape != fwd)
    r.error("expected grad shape ", formatShape(fwd),
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
  Shape fwd;
  if (shapes::ShapeProblem problem =
          shapes::upsampleNearest2dShape(dx.shape, a.scale, fwd);
      !problem.empty())
    r.error(problem);
  if (g.shape != fwd)
    r.error("expected grad shape ", formatShape(fwd), ", got ",
            formatShape(g.shape));
  return a;
}

/// embedding_backward(grad, ids) -> the VxD table's gradient.
KernelAttrs embeddingBackward(Rules &r) {
  r.arity(2, 2, 1);
  const TensorInfo &g = r.in(0), &ids = r.in(1), &table = r.out(0);
  r.isFloat(g, "grad");
  r.isInteger(ids, "ids");
  r.sameDType(g, "grad", table, "output 0");
  r.rank(table, "output 0", 2, "VxD");
  EmbeddingAttrs a = paddingIdx(r, table.shape[0]);
  r.done();
  Shape fwd = shapes::embeddingShape(table.shape, ids.shape);
  if (g.shape != fwd)
    r.error("expected grad shape ", formatShape(fwd), " (ids ",
            formatShape(ids.shape), " by ", table.shape[1], " features), got ",
            formatShape(g.shape));
  return a;
}

} // namespace memopt::runtime::detail
