//===- MemOptLossOps.cpp - shape rules of loss ops ------------------------===//
//
// The shape rules of the losses, cross-entropy over class indices and mean
// squared error, each a 0-d result of the prediction's element type.
//
//===----------------------------------------------------------------------===//

#include "ShapeChecker.h"

using namespace mlir;
using namespace memopt;
using memopt::detail::ShapeChecker;

namespace {

/// Result element type of a 0-d loss.
RankedTensorType scalarOf(RankedTensorType t) {
  return RankedTensorType::get({}, t.getElementType());
}

} // namespace

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
  if (labels->getDimSize(0) != logits->getDimSize(0))
    return check.error("expected ", logits->getDimSize(0),
                       " labels (one per row of logits), got ",
                       labels->getDimSize(0));
  results.push_back(scalarOf(*logits));
  return success();
}

LogicalResult MseLossOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, getOperationName());
  auto prediction = check.tensor(adaptor.getPrediction(), "prediction");
  if (failed(prediction))
    return failure();
  if (adaptor.getTarget().getType() != *prediction)
    return check.error("expected target of type ", *prediction,
                       " (as prediction), got ", adaptor.getTarget().getType());
  results.push_back(scalarOf(*prediction));
  return success();
}
