//===- ShapeChecker.h - the shape rules' diagnostics ------------*- C++ -*-===//
//
// Internal to the MemOpt*Ops.cpp files of this directory: ShapeChecker, the
// operand checks and diagnostics every forward op's shape rule uses, and
// the checked element count of a shape (MemOptOps.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_LIB_DIALECT_MEMOPT_IR_SHAPECHECKER_H
#define MEMOPT_LIB_DIALECT_MEMOPT_IR_SHAPECHECKER_H

#include "memopt/Contract/ShapeRule.h"
#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"

#include <cstdint>
#include <optional>
#include <utility>

namespace memopt::detail {

// A private header of this library: MLIR names unqualified, as in the
// .cpp files.
using namespace mlir;

/// The element count of a static shape, or std::nullopt when it does not fit
/// in int64_t.
std::optional<int64_t> numElements(ArrayRef<int64_t> shape);

/// Reports shape-rule violations as `'memopt.<op>' op <message>` at the op's
/// location, the same text whether it fires while parsing the custom form or
/// while verifying the generic form.
class ShapeChecker {
public:
  ShapeChecker(std::optional<Location> loc, StringRef opName)
      : loc(loc), opName(opName) {}

  template <typename... Args> LogicalResult error(Args &&...args) const {
    return emitOptionalError(loc, "'", opName, "' op ",
                             std::forward<Args>(args)...);
  }

  /// The operand's statically shaped tensor type, or a diagnostic. The
  /// custom-form parser infers result types before the verifier checks the
  /// operand types, so the shape rules must not compute with dynamic sizes.
  FailureOr<RankedTensorType> tensor(Value v, StringRef name) const {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t) {
      (void)error("expected ", name, " to be a ranked tensor, got ",
                  v.getType());
      return failure();
    }
    if (!t.hasStaticShape()) {
      (void)error("expected ", name, " to have a static shape, got ", t);
      return failure();
    }
    if (!numElements(t.getShape())) {
      (void)error("expected ", name, " to have fewer than 2^63 elements, got ",
                  t);
      return failure();
    }
    return t;
  }

  /// Appends a result tensor type, or fails when its element count does not
  /// fit in int64_t.
  LogicalResult result(ArrayRef<int64_t> shape, Type elementType,
                       SmallVectorImpl<Type> &results) const {
    if (!numElements(shape))
      return error("result shape ", formatShape(shape),
                   " has 2^63 elements or more");
    results.push_back(RankedTensorType::get(shape, elementType));
    return success();
  }

  /// The operand's type with exactly `rank` dimensions, or a diagnostic that
  /// names what the dimensions mean (`layout`, e.g. "NxCxHxW").
  FailureOr<RankedTensorType> tensorOfRank(Value v, StringRef name,
                                           int64_t rank,
                                           StringRef layout = "") const {
    FailureOr<RankedTensorType> t = tensor(v, name);
    if (failed(t))
      return failure();
    if (t->getRank() != rank) {
      if (layout.empty())
        (void)error("expected ", name, " of rank ", rank, ", got rank ",
                    t->getRank(), " (", *t, ")");
      else
        (void)error("expected ", rank, "-D ", name, " (", layout,
                    "), got rank ", t->getRank(), " (", *t, ")");
      return failure();
    }
    return t;
  }

  LogicalResult sameElementType(RankedTensorType a, StringRef aName,
                                RankedTensorType b, StringRef bName) const {
    if (a.getElementType() == b.getElementType())
      return success();
    return error("expected ", bName, " element type ", a.getElementType(),
                 " (as ", aName, "), got ", b.getElementType());
  }

  /// Checks an i64 array attribute's length and lower bound.
  LogicalResult array(ArrayRef<int64_t> values, StringRef name, size_t size,
                      int64_t min) const {
    if (values.size() != size)
      return error("expected '", name, "' to have ", size, " values, got ",
                   values.size());
    for (int64_t v : values)
      if (v < min)
        return error("expected '", name, "' values ≥ ", min, ", got [",
                     llvm::make_range(values.begin(), values.end()), "]");
    return success();
  }

  /// Fails with a diagnostic when a required attribute is missing (the
  /// custom-form parser infers types before the verifier checks presence).
  LogicalResult present(Attribute attr, StringRef name) const {
    if (attr)
      return success();
    return error("requires attribute '", name, "'");
  }

  /// Normalises a possibly negative axis into [0, rank).
  FailureOr<int64_t> axis(int64_t axis, int64_t rank, StringRef name) const {
    int64_t normalised;
    if (shapes::ShapeProblem problem =
            shapes::normaliseAxis(axis, rank, name.str().c_str(), normalised);
        !problem.empty()) {
      (void)error(problem);
      return failure();
    }
    return normalised;
  }

private:
  std::optional<Location> loc;
  StringRef opName;
};

} // namespace memopt::detail

#endif // MEMOPT_LIB_DIALECT_MEMOPT_IR_SHAPECHECKER_H
