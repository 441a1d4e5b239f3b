//===- MemOptDataMovementOps.cpp - shape rules of data movement -----------===//
//
// The shape rules of the ops that move data without arithmetic: reshape
// (verified: its result type is written, not inferred), transpose, slice,
// concat, nearest upsampling and embedding lookup.
//
//===----------------------------------------------------------------------===//

#include "ShapeChecker.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;
using namespace memopt;
using memopt::detail::numElements;
using memopt::detail::ShapeChecker;

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto in = cast<RankedTensorType>(getX().getType());
  auto out = cast<RankedTensorType>(getResult().getType());
  if (in.getElementType() != out.getElementType())
    return emitOpError("expected result element type ")
           << in.getElementType() << " (as the operand), got "
           << out.getElementType();
  std::optional<int64_t> inCount = numElements(in.getShape());
  std::optional<int64_t> outCount = numElements(out.getShape());
  if (!inCount || !outCount)
    return emitOpError("expected fewer than 2^63 elements, got ")
           << in << " -> " << out;
  if (*inCount != *outCount)
    return emitOpError("cannot reshape ")
           << formatShape(in.getShape()) << " (" << *inCount << " elements) to "
           << formatShape(out.getShape()) << " (" << *outCount << " elements)";
  return success();
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, getOperationName());
  auto x = check.tensor(adaptor.getX(), "x");
  if (failed(x) ||
      failed(check.present(adaptor.getPermutationAttr(), "permutation")))
    return failure();
  ArrayRef<int64_t> perm = adaptor.getPermutation();
  int64_t rank = x->getRank();
  llvm::SmallBitVector seen(rank);
  bool valid = static_cast<int64_t>(perm.size()) == rank;
  for (int64_t p : perm) {
    if (!valid || p < 0 || p >= rank || seen.test(p)) {
      valid = false;
      break;
    }
    seen.set(p);
  }
  if (!valid)
    return check.error("expected 'permutation' to be a permutation of [0, ",
                       rank, "), got [",
                       llvm::make_range(perm.begin(), perm.end()), "]");
  SmallVector<int64_t> out;
  for (int64_t p : perm)
    out.push_back(x->getDimSize(p));
  results.push_back(RankedTensorType::get(out, x->getElementType()));
  return success();
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, getOperationName());
  auto x = check.tensor(adaptor.getX(), "x");
  if (failed(x) || failed(check.present(adaptor.getOffsetsAttr(), "offsets")) ||
      failed(check.present(adaptor.getSizesAttr(), "sizes")))
    return failure();
  size_t rank = x->getRank();
  ArrayRef<int64_t> offsets = adaptor.getOffsets(), sizes = adaptor.getSizes();
  SmallVector<int64_t> strides(rank, 1);
  if (adaptor.getStrides())
    strides.assign(adaptor.getStrides()->begin(), adaptor.getStrides()->end());
  if (failed(check.array(offsets, "offsets", rank, 0)) ||
      failed(check.array(sizes, "sizes", rank, 1)) ||
      failed(check.array(strides, "strides", rank, 1)))
    return failure();
  for (size_t d = 0; d < rank; ++d) {
    std::optional<int64_t> last = llvm::checkedMul(sizes[d] - 1, strides[d]);
    if (last)
      last = llvm::checkedAdd(offsets[d], *last);
    if (!last)
      return check.error("slice of dimension ", d,
                         " reaches an index beyond 2^63 but the dimension "
                         "has size ",
                         x->getDimSize(d));
    if (*last >= x->getDimSize(d))
      return check.error("slice of dimension ", d, " reaches index ", *last,
                         " but the dimension has size ", x->getDimSize(d));
  }
  return check.result(sizes, x->getElementType(), results);
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, getOperationName());
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return check.error("expected at least one input");
  auto first = check.tensor(inputs[0], "input #0");
  if (failed(first) || failed(check.present(adaptor.getAxisAttr(), "axis")))
    return failure();
  auto axis = check.axis(adaptor.getAxis(), first->getRank(), "axis");
  if (failed(axis))
    return failure();
  SmallVector<int64_t> out(first->getShape());
  for (auto [i, v] : llvm::enumerate(inputs.drop_front())) {
    std::string name = "input #" + std::to_string(i + 1);
    auto t = check.tensor(v, name);
    if (failed(t) ||
        failed(check.sameElementType(*first, "input #0", *t, name)))
      return failure();
    bool compatible = t->getRank() == first->getRank();
    for (int64_t d = 0; compatible && d < first->getRank(); ++d)
      compatible = d == *axis || t->getDimSize(d) == out[d];
    if (!compatible)
      return check.error("expected ", name, " to match input #0 (",
                         formatShape(first->getShape()),
                         ") in every dimension but ", *axis, ", got ",
                         formatShape(t->getShape()));
    std::optional<int64_t> joined =
        llvm::checkedAdd(out[*axis], t->getDimSize(*axis));
    if (!joined)
      return check.error("concatenated dimension ", *axis,
                         " overflows 64-bit sizes");
    out[*axis] = *joined;
  }
  return check.result(out, first->getElementType(), results);
}

LogicalResult UpsampleNearest2DOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, getOperationName());
  auto x = check.tensorOfRank(adaptor.getX(), "x", 4, "NxCxHxW");
  if (failed(x) || failed(check.present(adaptor.getScaleAttr(), "scale")))
    return failure();
  int64_t scale = adaptor.getScale();
  if (scale < 1)
    return check.error("expected 'scale' ≥ 1, got ", scale);
  SmallVector<int64_t, 4> out(x->getShape());
  for (int d = 2; d < 4; ++d) {
    std::optional<int64_t> size = llvm::checkedMul(out[d], scale);
    if (!size)
      return check.error("upsampling ",
                         formatShape(x->getShape().drop_front(2)), " by ",
                         scale, " overflows 64-bit sizes");
    out[d] = *size;
  }
  return check.result(out, x->getElementType(), results);
}

LogicalResult EmbeddingOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, getOperationName());
  auto table = check.tensorOfRank(adaptor.getTable(), "table", 2, "VxD");
  auto ids = check.tensor(adaptor.getIds(), "ids");
  if (failed(table) || failed(ids))
    return failure();
  SmallVector<int64_t> out(ids->getShape());
  out.push_back(table->getDimSize(1));
  return check.result(out, table->getElementType(), results);
}
