//===- KernelRulesLinear.cpp - rules of linear and matmul -----------------===//
//
// The rules of the matrix products: linear (x * W^T + b over the last
// dimension) and matmul (batched, with broadcast batch dimensions and
// optional transposes).
//
//===----------------------------------------------------------------------===//

#include "KernelRulesImpl.h"

#include "memopt/Contract/LinearShapes.h"

namespace memopt::runtime::detail {

KernelAttrs linear(Rules &r) {
  r.arity(2, 3, 1);
  r.done();
  const TensorInfo &x = r.in(0), &w = r.in(1);
  r.isFloat(x, "input");
  r.minRank(x, "input", 1);
  r.rank(w, "weight", 2, "OxI");
  r.sameDType(x, "input", w, "weight");
  std::optional<int64_t> biasElements;
  if (r.numInputs() == 3) {
    const TensorInfo &b = r.in(2);
    r.rank(b, "bias", 1);
    r.sameDType(x, "input", b, "bias");
    biasElements = b.shape[0];
  }
  Shape out;
  if (shapes::ShapeProblem problem =
          shapes::linearShape(x.shape, w.shape, biasElements, out);
      !problem.empty())
    r.error(problem);
  r.output(0, x.dtype, out);
  return std::monostate{};
}

KernelAttrs matmul(Rules &r) {
  r.arity(2, 2, 1);
  MatMulAttrs a;
  a.transposeA = r.boolean("transpose_a", false);
  a.transposeB = r.boolean("transpose_b", false);
  r.done();
  const TensorInfo &x = r.in(0), &y = r.in(1);
  r.isFloat(x, "a");
  r.sameDType(x, "a", y, "b");
  r.minRank(x, "a", 2);
  r.minRank(y, "b", 2);
  Shape out;
  if (shapes::ShapeProblem problem = shapes::matmulShape(
          x.shape, y.shape, a.transposeA, a.transposeB, out);
      !problem.empty())
    r.error(problem);
  r.output(0, x.dtype, out);
  return a;
}

} // namespace memopt::runtime::detail
