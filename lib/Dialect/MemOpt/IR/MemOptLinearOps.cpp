//===- MemOptLinearOps.cpp - shape rules of conv2d, linear, matmul --------===//
//
// The shape rules of the ops that contract with a weight or a second
// operand: conv2d (groups, strides, padding, dilations, as PyTorch), linear
// (over the last dimension) and matmul (with broadcast batch dimensions).
//
//===----------------------------------------------------------------------===//

#include "ShapeChecker.h"

#include "memopt/Contract/ConvShapes.h"
#include "memopt/Contract/LinearShapes.h"

using namespace mlir;
using namespace memopt;
using memopt::detail::ShapeChecker;

//===----------------------------------------------------------------------===//
// Conv2DOp
//===----------------------------------------------------------------------===//

LogicalResult Conv2DOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, getOperationName());
  auto input = check.tensorOfRank(adaptor.getInput(), "input", 4, "NxCxHxW");
  auto weight =
      check.tensorOfRank(adaptor.getWeight(), "weight", 4, "Kx(C/groups)xRxS");
  if (failed(input) || failed(weight) ||
      failed(check.sameElementType(*input, "input", *weight, "weight")))
    return failure();
  ArrayRef<int64_t> strides = adaptor.getStrides();
  ArrayRef<int64_t> padding = adaptor.getPadding();
  ArrayRef<int64_t> dilations = adaptor.getDilations();
  if (failed(check.array(strides, "strides", 2, 1)) ||
      failed(check.array(padding, "padding", 2, 0)) ||
      failed(check.array(dilations, "dilations", 2, 1)))
    return failure();
  std::optional<int64_t> biasElements;
  if (Value bias = adaptor.getBias()) {
    auto b = check.tensorOfRank(bias, "bias", 1);
    if (failed(b) || failed(check.sameElementType(*input, "input", *b, "bias")))
      return failure();
    biasElements = b->getDimSize(0);
  }
  shapes::Conv2DParams params;
  params.strides = {strides[0], strides[1]};
  params.padding = {padding[0], padding[1]};
  params.dilations = {dilations[0], dilations[1]};
  params.groups = adaptor.getGroups();
  shapes::Dims out;
  if (shapes::ShapeProblem problem =
          shapes::conv2dShape(input->getShape().vec(), weight->getShape().vec(),
                              biasElements, params, out);
      !problem.empty())
    return check.error(problem);
  return check.result(out, input->getElementType(), results);
}

//===----------------------------------------------------------------------===//
// LinearOp, MatMulOp
//===----------------------------------------------------------------------===//

LogicalResult LinearOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, getOperationName());
  auto input = check.tensor(adaptor.getInput(), "input");
  auto weight = check.tensorOfRank(adaptor.getWeight(), "weight", 2, "OxI");
  if (failed(input) || failed(weight) ||
      failed(check.sameElementType(*input, "input", *weight, "weight")))
    return failure();
  if (input->getRank() < 1)
    return check.error("expected input of rank ≥ 1, got a scalar");
  std::optional<int64_t> biasElements;
  if (Value bias = adaptor.getBias()) {
    auto b = check.tensorOfRank(bias, "bias", 1);
    if (failed(b) || failed(check.sameElementType(*input, "input", *b, "bias")))
      return failure();
    biasElements = b->getDimSize(0);
  }
  shapes::Dims out;
  if (shapes::ShapeProblem problem = shapes::linearShape(
          input->getShape().vec(), weight->getShape().vec(), biasElements, out);
      !problem.empty())
    return check.error(problem);
  return check.result(out, input->getElementType(), results);
}

LogicalResult MatMulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, getOperationName());
  auto a = check.tensor(adaptor.getA(), "a");
  auto b = check.tensor(adaptor.getB(), "b");
  if (failed(a) || failed(b) || failed(check.sameElementType(*a, "a", *b, "b")))
    return failure();
  if (a->getRank() < 2 || b->getRank() < 2)
    return check.error("expected operands of rank ≥ 2, got ", *a, " and ", *b);
  shapes::Dims out;
  if (shapes::ShapeProblem problem = shapes::matmulShape(
          a->getShape().vec(), b->getShape().vec(), adaptor.getTransposeA(),
          adaptor.getTransposeB(), out);
      !problem.empty())
    return check.error(problem);
  return check.result(out, a->getElementType(), results);
}
