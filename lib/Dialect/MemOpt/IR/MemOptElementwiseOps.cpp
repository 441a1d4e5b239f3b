//===- MemOptElementwiseOps.cpp - shape rules of element-wise ops ---------===//
//
// The shape rules of the element-wise ops: activations (the operand's type),
// broadcasting arithmetic (NumPy broadcasting of the two shapes), softmax
// (over one axis, optionally causal) and dropout.
//
//===----------------------------------------------------------------------===//

#include "ShapeChecker.h"

#include "memopt/Contract/ComparePredicate.h"
#include "memopt/Contract/ElementwiseShapes.h"
#include "memopt/Contract/SoftmaxShapes.h"

using namespace mlir;
using namespace memopt;
using memopt::detail::ShapeChecker;

// Shared shape rule of ops whose result is exactly their first operand's type.
template <typename OpTy>
static LogicalResult inferSameAsOperand(std::optional<Location> loc, Value x,
                                        SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, OpTy::getOperationName());
  FailureOr<RankedTensorType> t = check.tensor(x, "operand");
  if (failed(t))
    return failure();
  results.push_back(*t);
  return success();
}

//===----------------------------------------------------------------------===//
// Element-wise ops
//===----------------------------------------------------------------------===//

#define MEMOPT_SAME_AS_OPERAND(OP, GETTER)                                     \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *, std::optional<Location> loc, Adaptor adaptor,             \
      SmallVectorImpl<Type> &results) {                                        \
    return inferSameAsOperand<OP>(loc, adaptor.GETTER(), results);             \
  }
MEMOPT_SAME_AS_OPERAND(ReluOp, getX)
MEMOPT_SAME_AS_OPERAND(GeluOp, getX)
MEMOPT_SAME_AS_OPERAND(SigmoidOp, getX)
MEMOPT_SAME_AS_OPERAND(TanhOp, getX)
MEMOPT_SAME_AS_OPERAND(SiluOp, getX)
MEMOPT_SAME_AS_OPERAND(ExpOp, getX)
MEMOPT_SAME_AS_OPERAND(LogOp, getX)
MEMOPT_SAME_AS_OPERAND(SqrtOp, getX)
MEMOPT_SAME_AS_OPERAND(AbsOp, getX)
MEMOPT_SAME_AS_OPERAND(LeakyReluOp, getX)
MEMOPT_SAME_AS_OPERAND(EluOp, getX)
MEMOPT_SAME_AS_OPERAND(ClampOp, getX)
#undef MEMOPT_SAME_AS_OPERAND

/// clamp and clamp_backward: the bounds, where both are given, in order
/// (finiteness is the dialect's FiniteFloatAttributes check).
LogicalResult memopt::detail::verifyClampBounds(Operation *op, FloatAttr min,
                                                FloatAttr max) {
  if (min && max && !(min.getValueAsDouble() <= max.getValueAsDouble()))
    return op->emitOpError()
           << "expected 'min' <= 'max', got min = " << min.getValueAsDouble()
           << " and max = " << max.getValueAsDouble();
  return success();
}

LogicalResult CompareOp::inferReturnTypes(MLIRContext *ctx,
                                          std::optional<Location>,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  auto x = dyn_cast<RankedTensorType>(adaptor.getX().getType());
  if (!x)
    return failure();
  results.push_back(RankedTensorType::get(x.getShape(), Float32Type::get(ctx)));
  return success();
}

LogicalResult CompareOp::verify() {
  if (!parseComparePredicate(getPredicate().str()))
    return emitOpError() << "expected predicate one of "
                         << StringRef(kComparePredicateList) << ", got '"
                         << getPredicate() << "'";
  return success();
}

LogicalResult ClampOp::verify() {
  return detail::verifyClampBounds(*this, getMinAttr(), getMaxAttr());
}

template <typename OpTy>
static LogicalResult inferBroadcast(std::optional<Location> loc,
                                    typename OpTy::Adaptor adaptor,
                                    SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, OpTy::getOperationName());
  auto lhs = check.tensor(adaptor.getLhs(), "lhs");
  auto rhs = check.tensor(adaptor.getRhs(), "rhs");
  if (failed(lhs) || failed(rhs) ||
      failed(check.sameElementType(*lhs, "lhs", *rhs, "rhs")))
    return failure();
  shapes::Dims out;
  if (shapes::ShapeProblem problem = shapes::binaryShape(
          lhs->getShape().vec(), rhs->getShape().vec(), out);
      !problem.empty())
    return check.error(problem);
  return check.result(out, lhs->getElementType(), results);
}

#define MEMOPT_BROADCAST(OP)                                                   \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *, std::optional<Location> loc, Adaptor adaptor,             \
      SmallVectorImpl<Type> &results) {                                        \
    return inferBroadcast<OP>(loc, adaptor, results);                          \
  }
MEMOPT_BROADCAST(AddOp)
MEMOPT_BROADCAST(SubOp)
MEMOPT_BROADCAST(MulOp)
MEMOPT_BROADCAST(DivOp)
MEMOPT_BROADCAST(MaximumOp)
MEMOPT_BROADCAST(MinimumOp)
#undef MEMOPT_BROADCAST

//===----------------------------------------------------------------------===//
// Softmax, dropout
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, getOperationName());
  auto x = check.tensor(adaptor.getX(), "x");
  if (failed(x))
    return failure();
  if (x->getRank() < 1)
    return check.error("expected x of rank ≥ 1, got a scalar");
  int64_t axis;
  if (shapes::ShapeProblem problem = shapes::softmaxShape(
          x->getShape().vec(), static_cast<int64_t>(adaptor.getAxis()),
          adaptor.getCausal(), axis);
      !problem.empty())
    return check.error(problem);
  results.push_back(*x);
  return success();
}

LogicalResult DropoutOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, getOperationName());
  double p = adaptor.getP().convertToDouble();
  if (!(p >= 0 && p < 1))
    return check.error("expected 'p' in [0, 1), got ", p);
  return inferSameAsOperand<DropoutOp>(loc, adaptor.getX(), results);
}
