//===- KernelRulesLinear.cpp - rules of linear and matmul -----------------===//
//
// The rules of the matrix products: linear (x * W^T + b over the last
// dimension) and matmul (batched, with broadcast batch dimensions and
// optional transposes).
//
//===----------------------------------------------------------------------===//

#include "KernelRulesImpl.h"

#include <utility>

namespace memopt::runtime::detail {

KernelAttrs linear(Rules &r) {
  r.arity(2, 3, 1);
  r.done();
  const TensorInfo &x = r.in(0), &w = r.in(1);
  r.isFloat(x, "input");
  r.minRank(x, "input", 1);
  r.rank(w, "weight", 2, "OxI");
  r.sameDType(x, "input", w, "weight");
  int64_t inFeatures = x.shape.back(), outFeatures = w.shape[0];
  if (w.shape[1] != inFeatures)
    r.error("expected weight shape ", outFeatures, "x", inFeatures, " for ",
            inFeatures, " input features, got ", formatShape(w.shape));
  if (r.numInputs() == 3) {
    const TensorInfo &b = r.in(2);
    r.rank(b, "bias", 1);
    r.sameDType(x, "input", b, "bias");
    if (b.shape[0] != outFeatures)
      r.error("expected bias of ", outFeatures,
              " elements (output features), got ", b.shape[0]);
  }
  Shape out = x.shape;
  out.back() = outFeatures;
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
  size_t ra = x.shape.size(), rb = y.shape.size();
  int64_t m = x.shape[ra - 2], ka = x.shape[ra - 1];
  if (a.transposeA)
    std::swap(m, ka);
  int64_t kb = y.shape[rb - 2], n = y.shape[rb - 1];
  if (a.transposeB)
    std::swap(kb, n);
  if (ka != kb)
    r.error("expected contracted dimensions to agree, got ", ka, " (a",
            a.transposeA ? ", transposed" : "", ") and ", kb, " (b",
            a.transposeB ? ", transposed" : "", ")");
  Shape batchA(x.shape.begin(), x.shape.end() - 2);
  Shape batchB(y.shape.begin(), y.shape.end() - 2);
  auto batch = broadcastShapes(batchA, batchB);
  if (!batch)
    r.error("batch dimensions ", formatShape(batchA), " and ",
            formatShape(batchB), " do not broadcast");
  Shape out = *batch;
  out.push_back(m);
  out.push_back(n);
  r.output(0, x.dtype, out);
  return a;
}

} // namespace memopt::runtime::detail
