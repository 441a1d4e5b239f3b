//===- MemOptPoolOps.cpp - shape rules of pooling ops ---------------------===//
//
// The shape rules of max and average pooling over NxCxHxW windows and of
// global average pooling.
//
//===----------------------------------------------------------------------===//

#include "ShapeChecker.h"

#include "memopt/Contract/PoolShapes.h"

using namespace mlir;
using namespace memopt;
using memopt::detail::ShapeChecker;

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

template <typename OpTy>
static LogicalResult inferPool2D(std::optional<Location> loc,
                                 typename OpTy::Adaptor adaptor,
                                 SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, OpTy::getOperationName());
  auto x = check.tensorOfRank(adaptor.getX(), "x", 4, "NxCxHxW");
  if (failed(x) ||
      failed(check.present(adaptor.getKernelSizeAttr(), "kernel_size")))
    return failure();
  ArrayRef<int64_t> kernel = adaptor.getKernelSize();
  ArrayRef<int64_t> strides =
      adaptor.getStrides() ? *adaptor.getStrides() : kernel;
  ArrayRef<int64_t> padding = adaptor.getPadding();
  if (failed(check.array(kernel, "kernel_size", 2, 1)) ||
      failed(check.array(strides, "strides", 2, 1)) ||
      failed(check.array(padding, "padding", 2, 0)))
    return failure();
  shapes::Pool2DParams params;
  params.kernelSize = {kernel[0], kernel[1]};
  params.strides = {strides[0], strides[1]};
  params.padding = {padding[0], padding[1]};
  shapes::Dims out;
  if (shapes::ShapeProblem problem =
          shapes::pool2dShape(x->getShape().vec(), params, out);
      !problem.empty())
    return check.error(problem);
  return check.result(out, x->getElementType(), results);
}

LogicalResult MaxPool2DOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  return inferPool2D<MaxPool2DOp>(loc, adaptor, results);
}

LogicalResult AvgPool2DOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  return inferPool2D<AvgPool2DOp>(loc, adaptor, results);
}

LogicalResult
GlobalAvgPool2DOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                    Adaptor adaptor,
                                    SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, getOperationName());
  auto x = check.tensorOfRank(adaptor.getX(), "x", 4, "NxCxHxW");
  if (failed(x))
    return failure();
  results.push_back(RankedTensorType::get(
      shapes::globalAvgPool2dShape(x->getShape().vec()), x->getElementType()));
  return success();
}
