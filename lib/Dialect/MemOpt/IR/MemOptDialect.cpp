//===- MemOptDialect.cpp - memopt dialect ---------------------------------===//
//
// Registers the memopt ops and verifies the dialect's argument attributes
// (`memopt.param`, `memopt.state`) on functions.
//
//===----------------------------------------------------------------------===//

#include "memopt/Dialect/MemOpt/IR/MemOptDialect.h"
#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace memopt;

#include "memopt/Dialect/MemOpt/IR/MemOptOpsDialect.cpp.inc"

void MemOptDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "memopt/Dialect/MemOpt/IR/MemOptOps.cpp.inc"
      >();
}

/// `memopt.param` and `memopt.state` are unit attributes on the arguments of
/// a function; the argument must be a statically shaped float tensor, and an
/// argument cannot be both a parameter and state.
LogicalResult MemOptDialect::verifyRegionArgAttribute(Operation *op,
                                                      unsigned regionIndex,
                                                      unsigned argIndex,
                                                      NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name != kParamAttrName && name != kStateAttrName)
    return op->emitError() << "unknown memopt argument attribute '" << name
                           << "' on argument #" << argIndex
                           << " (expected 'memopt.param' or 'memopt.state')";
  if (!isa<UnitAttr>(attr.getValue()))
    return op->emitError() << "'" << name << "' on argument #" << argIndex
                           << " must be a unit attribute, got "
                           << attr.getValue();
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func || regionIndex != 0)
    return op->emitError() << "'" << name
                           << "' is only valid on function arguments";
  Type type = func.getArgumentTypes()[argIndex];
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape() ||
      !isa<FloatType>(tensor.getElementType()))
    return op->emitError() << "argument #" << argIndex << " marked '" << name
                           << "' must be a statically shaped float tensor, got "
                           << type;
  if (name == kStateAttrName && func.getArgAttr(argIndex, kParamAttrName))
    return op->emitError() << "argument #" << argIndex
                           << " cannot be both 'memopt.param' and "
                              "'memopt.state'";
  return success();
}

/// Roles describe inputs; a result's role follows from the graph (the loss
/// first, then passed-through values), so no memopt attribute belongs there.
LogicalResult MemOptDialect::verifyRegionResultAttribute(Operation *op,
                                                         unsigned,
                                                         unsigned resultIndex,
                                                         NamedAttribute attr) {
  return op->emitError() << "'" << attr.getName().getValue()
                         << "' is not valid on result #" << resultIndex
                         << "; memopt attributes mark function arguments only";
}

LogicalResult MemOptDialect::verifyOperationAttribute(Operation *op,
                                                      NamedAttribute attr) {
  return op->emitError() << "unknown memopt attribute '"
                         << attr.getName().getValue() << "'";
}
