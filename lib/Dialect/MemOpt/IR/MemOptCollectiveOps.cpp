//===- MemOptCollectiveOps.cpp - collectives across ranks -----------------===//

#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"

using namespace mlir;
using namespace memopt;

// The attributes' getters read them unsigned: the checks read them signed,
// so that -1 is refused, not taken for 2^64 - 1.

LogicalResult BroadcastOp::verify() {
  int64_t ranks = getRanksAttr().getInt(), root = getRootAttr().getInt();
  if (ranks < 2)
    return emitOpError("expected ranks >= 2, got ") << ranks;
  if (root < 0 || root >= ranks)
    return emitOpError("expected root in [0, ") << ranks << "), got " << root;
  if (getResult().getType() != getValue().getType())
    return emitOpError("expected a result of type ")
           << getValue().getType() << ", got " << getResult().getType();
  return success();
}

LogicalResult AllReduceOp::verify() {
  int64_t ranks = getRanksAttr().getInt();
  if (ranks < 2)
    return emitOpError("expected ranks >= 2, got ") << ranks;
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
