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

bool memopt::isCollective(Operation *op) {
  return isa<AllReduceOp, ReduceScatterOp, BroadcastOp>(op);
}

LogicalResult BroadcastOp::verify() {
  int64_t ranks = getRanksAttr().getInt(), root = getRootAttr().getInt();
  if (failed(verifyRanks(*this, getRanksAttr())))
    return failure();
  if (root < 0 || root >= ranks)
    return emitOpError("expected root in [0, ") << ranks << "), got " << root;
  if (getValue() && getResult().getType() != getValue().getType())
    return emitOpError("expected a result of type ")
           << getValue().getType() << ", got " << getResult().getType();
  return success();
}

/// One element type for a whole bucket (it is packed into one buffer).
static LogicalResult verifyOneElementType(Operation *op, ValueRange values) {
  if (values.empty())
    return op->emitOpError("expected at least one tensor to reduce");
  Type element = cast<ShapedType>(values.front().getType()).getElementType();
  for (auto [i, operand] : llvm::enumerate(values))
    if (cast<ShapedType>(operand.getType()).getElementType() != element)
      return op->emitOpError("expected every operand of element type ")
             << element << " (one packed bucket), operand " << i << " is "
             << operand.getType();
  return success();
}

LogicalResult AllReduceOp::verify() {
  if (failed(verifyRanks(*this, getRanksAttr())) ||
      failed(verifyOneElementType(*this, getValues())))
    return failure();
  if (getValues().size() != getResults().size())
    return emitOpError("expected one result per operand, got ")
           << getResults().size() << " for " << getValues().size();
  for (auto [i, operand, result] : llvm::enumerate(getValues(), getResults()))
    if (result.getType() != operand.getType())
      return emitOpError("expected result ")
             << i << " of type " << operand.getType() << ", got "
             << result.getType();
  return success();
}

SmallVector<Value> ReduceScatterOp::getOwnedValues() {
  SmallVector<Value> owned;
  for (auto [value, owner] : llvm::zip(getValues(), getOwners()))
    if (owner == getRankAttr().getInt())
      owned.push_back(value);
  return owned;
}

LogicalResult ReduceScatterOp::verify() {
  if (failed(verifyRanks(*this, getRanksAttr())) ||
      failed(verifyOneElementType(*this, getValues())))
    return failure();
  int64_t ranks = getRanksAttr().getInt(), rank = getRankAttr().getInt();
  if (rank < 0 || rank >= ranks)
    return emitOpError("expected rank in [0, ") << ranks << "), got " << rank;
  if (getOwners().size() != getValues().size())
    return emitOpError("expected one owner per operand, got ")
           << getOwners().size() << " for " << getValues().size();
  for (auto [i, owner] : llvm::enumerate(getOwners()))
    if (owner < 0 || owner >= ranks)
      return emitOpError("expected owner ")
             << i << " in [0, " << ranks << "), got " << owner;
  SmallVector<Value> owned = getOwnedValues();
  if (owned.size() != getResults().size())
    return emitOpError("expected one result per operand rank ")
           << rank << " owns (" << owned.size() << "), got "
           << getResults().size();
  for (auto [i, operand, result] : llvm::enumerate(owned, getResults()))
    if (result.getType() != operand.getType())
      return emitOpError("expected result ")
             << i << " of type " << operand.getType() << ", got "
             << result.getType();
  return success();
}

LogicalResult SquareSumOp::verify() {
  if (getValues().empty())
    return emitOpError("expected at least one tensor");
  return success();
}
