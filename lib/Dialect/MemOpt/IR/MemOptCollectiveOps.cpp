//===- MemOptCollectiveOps.cpp - collectives across ranks -----------------===//

#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"

using namespace mlir;
using namespace memopt;

/// A collective's `ranks`, at least 2. The attributes' getters read them
/// unsigned: the checks read them signed, so that -1 is refused, not taken
/// for 2^64 - 1.
static LogicalResult verifyRanks(Operation *op, IntegerAttr ranks) {
  if (ranks.getInt() < 2)
    return op->emitOpError("expected ranks >= 2, got ") << ranks.getInt();
  return success();
}

LogicalResult BroadcastOp::verify() {
  int64_t ranks = getRanksAttr().getInt(), root = getRootAttr().getInt();
  if (failed(verifyRanks(*this, getRanksAttr())))
    return failure();
  if (root < 0 || root >= ranks)
    return emitOpError("expected root in [0, ") << ranks << "), got " << root;
  if (getResult().getType() != getValue().getType())
    return emitOpError("expected a result of type ")
           << getValue().getType() << ", got " << getResult().getType();
  return success();
}

LogicalResult AllReduceOp::verify() {
  if (failed(verifyRanks(*this, getRanksAttr())))
    return failure();
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
