//===- MemOptNormOps.cpp - shape rules of normalisation ops ---------------===//
//
// The shape rules of training-mode batch norm (and InPlace-ABN's
// batch_norm_act, whose shapes are batch norm's) and of layer norm.
//
//===----------------------------------------------------------------------===//

#include "ShapeChecker.h"

#include "memopt/Contract/NormShapes.h"

using namespace mlir;
using namespace memopt;
using memopt::detail::ShapeChecker;

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

/// The shape rules of training-mode batch norm (the contract's rule,
/// NormShapes.h), shared by batch_norm and batch_norm_act (whose extra
/// `saved_invstd` is per channel, like gamma).
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
  if (shapes::ShapeProblem problem =
          shapes::batchNormShape(x->getShape().vec(), gamma->getShape().vec(),
                                 /*batchStatistics=*/true);
      !problem.empty())
    return check.error(problem);
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

/// layer_norm and rms_norm: gamma's shape a suffix of x's, `beta` (layer
/// norm's; null for rms_norm) of gamma's type, epsilon > 0; the result is
/// x's type.
static LogicalResult inferRowNorm(std::optional<Location> loc, StringRef name,
                                  Value xv, Value gammav, Value beta,
                                  double eps, SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, name);
  auto x = check.tensor(xv, "x");
  auto gamma = check.tensor(gammav, "gamma");
  if (failed(x) || failed(gamma))
    return failure();
  if (shapes::ShapeProblem problem =
          shapes::layerNormShape(x->getShape().vec(), gamma->getShape().vec());
      !problem.empty())
    return check.error(problem);
  if (beta && beta.getType() != *gamma)
    return check.error("expected beta of type ", *gamma, " (as gamma), got ",
                       beta.getType());
  if (!(eps > 0))
    return check.error("expected 'epsilon' > 0, got ", eps);
  results.push_back(*x);
  return success();
}

LogicalResult RmsNormOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  return inferRowNorm(loc, getOperationName(), adaptor.getX(),
                      adaptor.getGamma(), Value(),
                      adaptor.getEpsilon().convertToDouble(), results);
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  return inferRowNorm(loc, getOperationName(), adaptor.getX(),
                      adaptor.getGamma(), adaptor.getBeta(),
                      adaptor.getEpsilon().convertToDouble(), results);
}
