//===- Shape.h - static tensor shapes ---------------------------*- C++ -*-===//
//
// Small helpers over row-major static shapes shared by the plan validator
// and the kernels: element counts with overflow detection, NumPy
// broadcasting and the `8x64x56x56` spelling used in messages (the same as
// the compiler's diagnostics).
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_SHAPE_H
#define MEMOPT_RUNTIME_SHAPE_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memopt::runtime {

using Shape = std::vector<int64_t>;

/// `8x64x56x56`, or `scalar` for rank 0.
std::string formatShape(const Shape &shape);

/// The product of the sizes, or std::nullopt when a size is negative or the
/// product does not fit in int64_t.
std::optional<int64_t> checkedNumElements(const Shape &shape);

/// The product of the sizes of an already validated shape.
int64_t numElements(const Shape &shape);

/// Row-major element strides.
Shape contiguousStrides(const Shape &shape);

/// The element strides of a row-major tensor of `shape` read through the
/// permutation `perm` of its dimensions: dimension d of the transposed view
/// steps by the stride of dimension perm[d].
Shape permutedStrides(const Shape &shape, const std::vector<int64_t> &perm);

/// NumPy broadcasting: aligned from the trailing dimension, each pair equal
/// or one of them 1. std::nullopt when the shapes do not broadcast.
std::optional<Shape> broadcastShapes(const Shape &a, const Shape &b);

} // namespace memopt::runtime

#endif // MEMOPT_RUNTIME_SHAPE_H
