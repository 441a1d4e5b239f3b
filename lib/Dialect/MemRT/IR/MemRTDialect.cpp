//===- MemRTDialect.cpp - memrt dialect -----------------------------------===//
//
// Registers the memrt ops and verifies its function and argument attributes.
//
//===----------------------------------------------------------------------===//

#include "memopt/Dialect/MemRT/IR/MemRTDialect.h"
#include "memopt/Dialect/MemRT/IR/MemRTOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace memopt::memrt;

#include "memopt/Dialect/MemRT/IR/MemRTOpsDialect.cpp.inc"

void MemRTDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "memopt/Dialect/MemRT/IR/MemRTOps.cpp.inc"
      >();
}

LogicalResult MemRTDialect::verifyOperationAttribute(Operation *op,
                                                     NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == "memrt.recompute") {
    if (!isa<KernelOp>(op) || !isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "'memrt.recompute' must be a unit attribute "
                                "on a memrt.kernel";
    return success();
  }
  if (name != kArenaBytesAttrName && name != kAlignmentAttrName)
    return op->emitError() << "unknown memrt attribute '" << name << "'";
  if (!isa<FunctionOpInterface>(op))
    return op->emitError() << "'" << name << "' is only valid on functions";
  auto value = dyn_cast<IntegerAttr>(attr.getValue());
  if (!value || value.getInt() < 0)
    return op->emitError() << "'" << name
                           << "' must be a non-negative integer, got "
                           << attr.getValue();
  if (name == kAlignmentAttrName &&
      (value.getInt() == 0 || !llvm::isPowerOf2_64(value.getInt())))
    return op->emitError() << "'" << name << "' must be a power of two, got "
                           << value.getInt();
  return success();
}

LogicalResult MemRTDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                     unsigned argIndex,
                                                     NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name != kRoleAttrName)
    return op->emitError() << "unknown memrt argument attribute '" << name
                           << "' on argument #" << argIndex;
  auto role = dyn_cast<StringAttr>(attr.getValue());
  if (!role ||
      !llvm::is_contained({"param", "state", "optimizer_state", "data"},
                          role.getValue()))
    return op->emitError() << "'" << name << "' on argument #" << argIndex
                           << " must be \"param\", \"state\", "
                              "\"optimizer_state\" or \"data\", got "
                           << attr.getValue();
  return success();
}

LogicalResult MemRTDialect::verifyRegionResultAttribute(Operation *op, unsigned,
                                                        unsigned resultIndex,
                                                        NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name != kUpdatesAttrName)
    return op->emitError() << "unknown memrt result attribute '" << name
                           << "' on result #" << resultIndex;
  auto func = dyn_cast<FunctionOpInterface>(op);
  auto index = dyn_cast<IntegerAttr>(attr.getValue());
  if (!func || !index || index.getInt() < 0 ||
      index.getInt() >= static_cast<int64_t>(func.getNumArguments()))
    return op->emitError() << "'" << name << "' on result #" << resultIndex
                           << " must be the index of an argument";
  if (func.getArgumentTypes()[index.getInt()] !=
      func.getResultTypes()[resultIndex])
    return op->emitError() << "result #" << resultIndex
                           << " cannot update argument #" << index.getInt()
                           << " of another type";
  return success();
}
