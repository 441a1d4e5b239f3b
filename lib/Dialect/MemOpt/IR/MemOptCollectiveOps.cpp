//===- MemOptCollectiveOps.cpp - collectives across ranks -----------------===//

#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"

#include "memopt/Contract/CollectiveShapes.h"

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
  return isa<AllReduceOp, ReduceScatterOp, BroadcastOp, AllGatherOp>(op);
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
    if (owner == getRankAttr().getInt() || owner == kRows)
      owned.push_back(value);
  return owned;
}

/// `type` with `rows` rows (dimension 0).
static RankedTensorType withRows(Type type, int64_t rows) {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(tensor.getShape());
  shape.front() = rows;
  return tensor.clone(shape);
}

/// Whether `type` can be divided by rows among `ranks` ranks: a ranked
/// tensor with at least one row per rank.
static bool divisibleByRows(Type type, int64_t ranks) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape() && tensor.getRank() >= 1 &&
         tensor.getDimSize(0) >= ranks;
}

RankedTensorType memopt::rowSliceType(Type type, int64_t ranks, int64_t rank) {
  auto tensor = cast<RankedTensorType>(type);
  return withRows(tensor,
                  shapes::rowSliceRows(tensor.getDimSize(0), ranks, rank));
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
  for (auto [i, owner] : llvm::enumerate(getOwners())) {
    if (owner == kRows) {
      if (!divisibleByRows(getValues()[i].getType(), ranks))
        return emitOpError("expected operand ")
               << i << ", divided by rows (owner -1), to have at least "
               << ranks << " rows, got " << getValues()[i].getType();
      continue;
    }
    if (owner < 0 || owner >= ranks)
      return emitOpError("expected owner ")
             << i << " in [0, " << ranks << ") or -1 (by rows), got " << owner;
  }
  SmallVector<Value> owned = getOwnedValues();
  if (owned.size() != getResults().size())
    return emitOpError("expected one result per operand rank ")
           << rank << " owns (" << owned.size() << "), got "
           << getResults().size();
  SmallVector<int64_t> ownedOwners;
  for (int64_t owner : getOwners())
    if (owner == rank || owner == kRows)
      ownedOwners.push_back(owner);
  for (auto [i, operand, owner, result] :
       llvm::enumerate(owned, ownedOwners, getResults())) {
    Type expected = owner == kRows
                        ? Type(rowSliceType(operand.getType(), ranks, rank))
                        : operand.getType();
    if (result.getType() != expected)
      return emitOpError("expected result ")
             << i << " of type " << expected << ", got " << result.getType();
  }
  return success();
}

LogicalResult AllGatherOp::verify() {
  if (failed(verifyRanks(*this, getRanksAttr())))
    return failure();
  int64_t ranks = getRanksAttr().getInt(), rank = getRankAttr().getInt();
  if (rank < 0 || rank >= ranks)
    return emitOpError("expected rank in [0, ") << ranks << "), got " << rank;
  Type result = getResult().getType();
  if (!divisibleByRows(result, ranks))
    return emitOpError("expected a result of at least ")
           << ranks << " rows, got " << result;
  RankedTensorType rows = rowSliceType(result, ranks, rank);
  if (getValue().getType() != rows)
    return emitOpError("expected rank ")
           << rank << "'s rows of " << result << ", " << rows << ", got "
           << getValue().getType();
  if (getInto() && getInto().getType() != result)
    return emitOpError("expected the storage operand of type ")
           << result << ", got " << getInto().getType();
  return success();
}

LogicalResult SquareSumOp::verify() {
  if (getValues().empty())
    return emitOpError("expected at least one tensor");
  return success();
}
