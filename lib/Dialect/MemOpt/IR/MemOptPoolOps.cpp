//===- MemOptPoolOps.cpp - shape rules of pooling ops ---------------------===//
//
// The shape rules of max and average pooling over NxCxHxW windows and of
// global average pooling.
//
//===----------------------------------------------------------------------===//

#include "ShapeChecker.h"

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
  SmallVector<int64_t, 4> out(x->getShape());
  for (int d = 0; d < 2; ++d) {
    if (padding[d] > kernel[d] / 2)
      return check.error(
          "expected 'padding' at most half of 'kernel_size', got ", "padding ",
          padding[d], " for kernel ", kernel[d]);
    // Cannot overflow: 2 * padding <= kernel.
    int64_t extent = out[2 + d] - kernel[d] + 2 * padding[d];
    if (extent < 0)
      return check.error("input ", formatShape(x->getShape().drop_front(2)),
                         " with padding [", padding[0], ", ", padding[1],
                         "] is smaller than the window ", formatShape(kernel));
    out[2 + d] = extent / strides[d] + 1;
  }
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
  results.push_back(RankedTensorType::get({x->getDimSize(0), x->getDimSize(1)},
                                          x->getElementType()));
  return success();
}
