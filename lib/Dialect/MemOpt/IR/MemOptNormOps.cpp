//===- MemOptNormOps.cpp - shape rules of normalisation ops ---------------===//
//
// The shape rules of training-mode batch norm (and InPlace-ABN's
// batch_norm_act, whose shapes are batch norm's) and of layer norm.
//
//===----------------------------------------------------------------------===//

#include "ShapeChecker.h"

using namespace mlir;
using namespace memopt;
using memopt::detail::numElements;
using memopt::detail::ShapeChecker;

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

/// The shape rules of training-mode batch norm, shared by batch_norm and
/// batch_norm_act (whose extra `saved_invstd` is per channel, like gamma).
template <typename OpTy>
static LogicalResult inferBatchNorm(std::optional<Location> loc,
                                    typename OpTy::Adaptor adaptor,
                                    SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, OpTy::getOperationName());
  auto x = check.tensor(adaptor.getX(), "x");
  auto gamma = check.tensorOfRank(adaptor.getGamma(), "gamma", 1);
  if (failed(x) || failed(gamma))
    return failure();
  if (x->getRank() < 2)
    return check.error("expected x of rank ≥ 2 (NxCx...), got rank ",
                       x->getRank());
  int64_t c = x->getDimSize(1);
  if (gamma->getDimSize(0) != c)
    return check.error("expected per-channel operands of ", c,
                       " elements (x's dimension 1), got ",
                       gamma->getDimSize(0));
  // As PyTorch in training mode: the batch variance needs two values.
  SmallVector<int64_t> perChannel(x->getShape());
  perChannel.erase(perChannel.begin() + 1);
  if (numElements(perChannel) == 1)
    return check.error("expected more than 1 value per channel for the batch "
                       "statistics, got x of shape ",
                       formatShape(x->getShape()));
  for (auto [name, v] : {std::pair<StringRef, Value>{"beta", adaptor.getBeta()},
                         {"running_mean", adaptor.getRunningMean()},
                         {"running_var", adaptor.getRunningVar()}})
    if (v.getType() != *gamma)
      return check.error("expected ", name, " of type ", *gamma,
                         " (as gamma), got ", v.getType());
  double eps = adaptor.getEpsilon().convertToDouble();
  double momentum = adaptor.getMomentum().convertToDouble();
  if (!(eps > 0))
    return check.error("expected 'epsilon' > 0, got ", eps);
  if (!(momentum >= 0 && momentum <= 1))
    return check.error("expected 'momentum' in [0, 1], got ", momentum);
  results.append({*x, *gamma, *gamma});
  return success();
}

LogicalResult BatchNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  return inferBatchNorm<BatchNormOp>(loc, adaptor, results);
}

LogicalResult BatchNormActOp::inferReturnTypes(MLIRContext *,
                                               std::optional<Location> loc,
                                               Adaptor adaptor,
                                               SmallVectorImpl<Type> &results) {
  if (failed(inferBatchNorm<BatchNormActOp>(loc, adaptor, results)))
    return failure();
  results.push_back(results.back()); // saved_invstd, like gamma
  return success();
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, getOperationName());
  auto x = check.tensor(adaptor.getX(), "x");
  auto gamma = check.tensor(adaptor.getGamma(), "gamma");
  if (failed(x) || failed(gamma))
    return failure();
  ArrayRef<int64_t> xs = x->getShape(), gs = gamma->getShape();
  if (gs.empty() || gs.size() > xs.size() || xs.take_back(gs.size()) != gs)
    return check.error("expected gamma's shape (", formatShape(gs),
                       ") to be a non-empty suffix of x's shape (",
                       formatShape(xs), ")");
  if (adaptor.getBeta().getType() != *gamma)
    return check.error("expected beta of type ", *gamma, " (as gamma), got ",
                       adaptor.getBeta().getType());
  double eps = adaptor.getEpsilon().convertToDouble();
  if (!(eps > 0))
    return check.error("expected 'epsilon' > 0, got ", eps);
  results.push_back(*x);
  return success();
}
