//===- MemOptLossOps.cpp - shape rules of loss ops ------------------------===//
//
// The shape rules of the losses, cross-entropy over class indices and mean
// squared error, each a 0-d result of the prediction's element type.
//
//===----------------------------------------------------------------------===//

#include "ShapeChecker.h"

#include "memopt/Contract/LossShapes.h"

using namespace mlir;
using namespace memopt;
using memopt::detail::ShapeChecker;

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

LogicalResult CrossEntropyOp::inferReturnTypes(MLIRContext *,
                                               std::optional<Location> loc,
                                               Adaptor adaptor,
                                               SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, getOperationName());
  auto logits = check.tensorOfRank(adaptor.getLogits(), "logits", 2, "NxC");
  auto labels = check.tensorOfRank(adaptor.getLabels(), "labels", 1, "N");
  if (failed(logits) || failed(labels))
    return failure();
  shapes::Dims out;
  if (shapes::ShapeProblem problem = shapes::crossEntropyShape(
          logits->getShape().vec(), labels->getShape().vec(), out);
      !problem.empty())
    return check.error(problem);
  return check.result(out, logits->getElementType(), results);
}

LogicalResult MseLossOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, getOperationName());
  auto prediction = check.tensor(adaptor.getPrediction(), "prediction");
  auto target = check.tensor(adaptor.getTarget(), "target");
  if (failed(prediction) || failed(target) ||
      failed(
          check.sameElementType(*prediction, "prediction", *target, "target")))
    return failure();
  shapes::Dims out;
  if (shapes::ShapeProblem problem = shapes::mseLossShape(
          prediction->getShape().vec(), target->getShape().vec(), out);
      !problem.empty())
    return check.error(problem);
  return check.result(out, prediction->getElementType(), results);
}
