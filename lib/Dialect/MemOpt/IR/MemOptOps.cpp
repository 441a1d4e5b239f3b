//===- MemOptOps.cpp - memopt op shape rules and verifiers ----------------===//
//
// Every forward op infers its result types from its operands and attributes
// (InferTypeOpInterface). The same rules verify the generic form, so a bad
// graph is reported once, at the op, saying what was expected.
//
// This file holds the helpers the shape rules share and the ops' generated
// definitions; the rules themselves are in MemOpt*Ops.cpp by op family:
// MemOptLinearOps.cpp (conv2d, linear, matmul), MemOptElementwiseOps.cpp
// (activations, arithmetic, softmax, dropout), MemOptNormOps.cpp,
// MemOptPoolOps.cpp, MemOptDataMovementOps.cpp and MemOptLossOps.cpp.
//
//===----------------------------------------------------------------------===//

#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"

#include "ShapeChecker.h"

#include "memopt/Contract/ShapeRule.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace memopt;

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

std::string memopt::formatShape(ArrayRef<int64_t> shape) {
  return shapes::formatDims(shape.vec());
}

std::optional<SmallVector<int64_t>>
memopt::broadcastShapes(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs) {
  std::optional<shapes::Dims> out = shapes::broadcastDims(lhs.vec(), rhs.vec());
  if (!out)
    return std::nullopt;
  return SmallVector<int64_t>(out->begin(), out->end());
}

/// The element count of a static shape, or std::nullopt when it does not fit
/// in int64_t.
std::optional<int64_t> memopt::detail::numElements(ArrayRef<int64_t> shape) {
  if (llvm::is_contained(shape, 0))
    return 0;
  int64_t count = 1;
  for (int64_t size : shape) {
    std::optional<int64_t> product = shapes::checkedMul(count, size);
    if (!product)
      return std::nullopt;
    count = *product;
  }
  return count;
}

LogicalResult memopt::detail::verifyFiniteFloatAttributes(Operation *op) {
  auto check = [&](StringAttr name, Attribute attr) -> LogicalResult {
    auto value = dyn_cast_or_null<FloatAttr>(attr);
    if (!value || value.getValue().isFinite())
      return success();
    const llvm::APFloat &v = value.getValue();
    return op->emitOpError() << "attribute '" << name.getValue()
                             << "' must be a finite number, got "
                             << (v.isNaN()        ? "nan"
                                 : v.isNegative() ? "-inf"
                                                  : "inf");
  };
  // Inherent attributes one by one: Operation::getAttrs() would build (and
  // unique) a dictionary of the op's properties, which on a 100k-op step
  // cost a sixth of each verification.
  for (StringAttr name : op->getName().getAttributeNames())
    if (std::optional<Attribute> attr = op->getInherentAttr(name.getValue()))
      if (failed(check(name, *attr)))
        return failure();
  for (NamedAttribute attr : op->getDiscardableAttrs())
    if (failed(check(attr.getName(), attr.getValue())))
      return failure();
  return success();
}

LogicalResult
memopt::detail::checkInferredResultTypes(std::optional<Location> location,
                                         StringRef opName, TypeRange inferred,
                                         TypeRange actual) {
  if (inferred.size() != actual.size())
    return emitOptionalError(location, "'", opName, "' op expected ",
                             inferred.size(), " result(s), got ",
                             actual.size());
  for (auto [i, want, got] : llvm::enumerate(inferred, actual)) {
    if (want == got)
      continue;
    std::string which =
        inferred.size() == 1 ? "result" : "result #" + std::to_string(i);
    auto wantT = dyn_cast<RankedTensorType>(want);
    auto gotT = dyn_cast<RankedTensorType>(got);
    if (wantT && gotT && wantT.getElementType() == gotT.getElementType() &&
        wantT.getEncoding() == gotT.getEncoding())
      return emitOptionalError(location, "'", opName, "' op expected ", which,
                               " shape ", formatShape(wantT.getShape()),
                               ", got ", formatShape(gotT.getShape()));
    return emitOptionalError(location, "'", opName, "' op expected ", which,
                             " type ", want, ", got ", got);
  }
  return success();
}

#define GET_OP_CLASSES
#include "memopt/Dialect/MemOpt/IR/MemOptOps.cpp.inc"
