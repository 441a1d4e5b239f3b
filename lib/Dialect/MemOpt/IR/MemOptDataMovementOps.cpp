//===- MemOptDataMovementOps.cpp - shape rules of data movement -----------===//
//
// The shape rules of the ops that move data without arithmetic: reshape
// (verified: its result type is written, not inferred), transpose, slice,
// concat, nearest upsampling and embedding lookup.
//
//===----------------------------------------------------------------------===//

#include "ShapeChecker.h"

#include "memopt/Contract/MovementShapes.h"

#include "llvm/ADT/STLExtras.h"

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
  if (shapes::ShapeProblem problem =
          shapes::reshapeShape(in.getShape().vec(), out.getShape().vec());
      !problem.empty())
    return emitOpError(problem);
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
  shapes::Dims out;
  if (shapes::ShapeProblem problem = shapes::transposeShape(
          x->getShape().vec(), adaptor.getPermutation().vec(), out);
      !problem.empty())
    return check.error(problem);
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
  shapes::Dims out;
  if (shapes::ShapeProblem problem =
          shapes::sliceShape(x->getShape().vec(), offsets.vec(), sizes.vec(),
                             shapes::Dims(strides.begin(), strides.end()), out);
      !problem.empty())
    return check.error(problem);
  return check.result(out, x->getElementType(), results);
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
  std::vector<shapes::Dims> dims = {first->getShape().vec()};
  for (auto [i, v] : llvm::enumerate(inputs.drop_front())) {
    std::string name = "input #" + std::to_string(i + 1);
    auto t = check.tensor(v, name);
    if (failed(t) ||
        failed(check.sameElementType(*first, "input #0", *t, name)))
      return failure();
    dims.push_back(t->getShape().vec());
  }
  shapes::Dims out;
  if (shapes::ShapeProblem problem = shapes::concatShape(dims, *axis, out);
      !problem.empty())
    return check.error(problem);
  return check.result(out, first->getElementType(), results);
}

LogicalResult UpsampleNearest2DOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, getOperationName());
  auto x = check.tensorOfRank(adaptor.getX(), "x", 4, "NxCxHxW");
  if (failed(x) || failed(check.present(adaptor.getScaleAttr(), "scale")))
    return failure();
  shapes::Dims out;
  if (shapes::ShapeProblem problem = shapes::upsampleNearest2dShape(
          x->getShape().vec(), adaptor.getScale(), out);
      !problem.empty())
    return check.error(problem);
  return check.result(out, x->getElementType(), results);
}

/// embedding and embedding_backward: padding_idx, when given, a row.
LogicalResult memopt::detail::verifyPaddingIdx(Operation *op,
                                               std::optional<int64_t> p,
                                               int64_t vocab) {
  if (p && (*p < 0 || *p >= vocab))
    return op->emitOpError()
           << "expected padding_idx in [0, " << vocab << "), got " << *p;
  return success();
}

LogicalResult EmbeddingOp::verify() {
  return detail::verifyPaddingIdx(*this, getPaddingIdx(),
                                  getTable().getType().getDimSize(0));
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
  return check.result(
      shapes::embeddingShape(table->getShape().vec(), ids->getShape().vec()),
      table->getElementType(), results);
}
