//===- MemOptExtremumOps.cpp - shape rules of max/min ops -----------------===//
//
// The shape rules of reduce_max and reduce_min (the last dimension to 1)
// and the verifiers of the largest/smallest-element backward ops,
// maximum_weight and reduce_extremum_backward (maximum and minimum
// broadcast as add does, in MemOptElementwiseOps.cpp). The rules are the
// contract's (ElementwiseShapes.h, ExtremumShapes.h), which the runtime
// checks too.
//
//===----------------------------------------------------------------------===//

#include "ShapeChecker.h"

#include "memopt/Contract/ElementwiseShapes.h"
#include "memopt/Contract/ExtremumShapes.h"

using namespace mlir;
using namespace memopt;
using memopt::detail::ShapeChecker;

template <typename OpTy>
static LogicalResult inferReduceExtremum(std::optional<Location> loc, Value x,
                                         SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, OpTy::getOperationName());
  FailureOr<RankedTensorType> t = check.tensor(x, "x");
  if (failed(t))
    return failure();
  shapes::Dims out;
  if (shapes::ShapeProblem problem =
          shapes::reduceExtremumShape(t->getShape().vec(), out);
      !problem.empty())
    return check.error(problem);
  return check.result(out, t->getElementType(), results);
}

LogicalResult ReduceMaxOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  return inferReduceExtremum<ReduceMaxOp>(loc, adaptor.getX(), results);
}

LogicalResult ReduceMinOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  return inferReduceExtremum<ReduceMinOp>(loc, adaptor.getX(), results);
}

LogicalResult MaximumWeightOp::verify() {
  auto lhs = cast<RankedTensorType>(getLhs().getType());
  auto rhs = cast<RankedTensorType>(getRhs().getType());
  if (lhs.getElementType() != rhs.getElementType() ||
      getType().getElementType() != lhs.getElementType())
    return emitOpError("expected lhs, rhs and result of one element type, got ")
           << lhs.getElementType() << ", " << rhs.getElementType() << " and "
           << getType().getElementType();
  shapes::Dims out;
  if (shapes::ShapeProblem problem =
          shapes::binaryShape(lhs.getShape().vec(), rhs.getShape().vec(), out);
      !problem.empty())
    return emitOpError(problem);
  if (getType().getShape() != ArrayRef<int64_t>(out))
    return emitOpError("expected result shape ")
           << shapes::formatDims(out) << ", got "
           << shapes::formatDims(getType().getShape().vec());
  return success();
}

LogicalResult ReduceExtremumBackwardOp::verify() {
  auto grad = cast<RankedTensorType>(getGrad().getType());
  auto x = cast<RankedTensorType>(getX().getType());
  auto extremum = cast<RankedTensorType>(getExtremum().getType());
  if (grad.getElementType() != x.getElementType() ||
      extremum.getElementType() != x.getElementType() || getType() != x)
    return emitOpError("expected grad, x, extremum and result of one element "
                       "type and a result of x's type, got ")
           << grad << ", " << x << ", " << extremum << " and " << getType();
  if (shapes::ShapeProblem problem = shapes::reduceExtremumBackwardShape(
          grad.getShape().vec(), x.getShape().vec(), extremum.getShape().vec());
      !problem.empty())
    return emitOpError(problem);
  return success();
}
