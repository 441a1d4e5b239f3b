//===- Shape.cpp - static tensor shapes -----------------------------------===//
//
// Element counts, strides, broadcasting and the shape spelling of messages.
//
//===----------------------------------------------------------------------===//

#include "memopt/runtime/Shape.h"

#include "memopt/Contract/ShapeRule.h"

namespace memopt::runtime {

std::string formatShape(const Shape &shape) {
  return shapes::formatDims(shape);
}

std::optional<int64_t> checkedNumElements(const Shape &shape) {
  int64_t count = 1;
  for (int64_t size : shape) {
    if (size < 0 || __builtin_mul_overflow(count, size, &count))
      return std::nullopt;
  }
  return count;
}

int64_t numElements(const Shape &shape) {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  return count;
}

Shape contiguousStrides(const Shape &shape) {
  Shape strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    strides[i - 1] = strides[i] * shape[i];
  return strides;
}

Shape permutedStrides(const Shape &shape, const std::vector<int64_t> &perm) {
  Shape own = contiguousStrides(shape);
  Shape strides(perm.size());
  for (size_t d = 0; d < perm.size(); ++d)
    strides[d] = own[perm[d]];
  return strides;
}

std::optional<Shape> broadcastShapes(const Shape &a, const Shape &b) {
  return shapes::broadcastDims(a, b);
}

} // namespace memopt::runtime
