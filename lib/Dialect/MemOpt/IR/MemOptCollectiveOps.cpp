//===- MemOptCollectiveOps.cpp - collectives across ranks -----------------===//

#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"

using namespace mlir;
using namespace memopt;

LogicalResult BroadcastOp::verify() {
  if (getRanks() < 2)
    return emitOpError("expected ranks >= 2, got ") << getRanks();
  if (getRoot() < 0 || getRoot() >= getRanks())
    return emitOpError("expected root in [0, ")
           << getRanks() << "), got " << getRoot();
  if (getResult().getType() != getValue().getType())
    return emitOpError("expected a result of type ")
           << getValue().getType() << ", got " << getResult().getType();
  return success();
}

LogicalResult AllReduceOp::verify() {
  if (getRanks() < 2)
    return emitOpError("expected ranks >= 2, got ") << getRanks();
  if (getValues().empty())
    return emitOpError("expected at least one tensor to reduce");
  if (getValues().size() != getResults().size())
    return emitOpError("expected one result per operand, got ")
           << getResults().size() << " for " << getValues().size();
  Type element =
      cast<ShapedType>(getValues().front().getType()).getElementType();
  for (auto [i, operand, result] : llvm::enumerate(getValues(), getResults())) {
    if (cast<ShapedType>(operand.getType()).getElementType() != element)
      return emitOpError("expected every operand of element type ")
             << element << " (one packed bucket), operand " << i << " is "
             << operand.getType();
    if (result.getType() != operand.getType())
      return emitOpError("expected result ")
             << i << " of type " << operand.getType() << ", got "
             << result.getType();
  }
  return success();
}
