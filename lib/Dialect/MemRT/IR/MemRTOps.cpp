//===- MemRTOps.cpp - memrt op verifiers ----------------------------------===//
//
// Buffers must stay inside the arena and views must not change sizes: the
// runtime trusts a verified memrt function (and re-validates the plan file).
//
//===----------------------------------------------------------------------===//

#include "memopt/Dialect/MemRT/IR/MemRTOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace memopt::memrt;

int64_t memopt::memrt::getSizeInBytes(ShapedType type) {
  return type.getNumElements() * static_cast<int64_t>(llvm::divideCeil(
                                     type.getElementTypeBitWidth(), 8));
}

static LogicalResult verifyStatic(Operation *op, MemRefType type) {
  if (!type.hasStaticShape() || !type.getLayout().isIdentity())
    return op->emitOpError("expected a statically shaped memref with the "
                           "identity layout, got ")
           << type;
  return success();
}

int64_t ArenaSliceOp::getSizeInBytes() {
  return memopt::memrt::getSizeInBytes(getType());
}

LogicalResult ArenaSliceOp::verify() {
  if (failed(verifyStatic(*this, getType())))
    return failure();
  if (getType().getElementType().isSignlessInteger(8) &&
      getType().getRank() != 1)
    return emitOpError("an i8 slice is a workspace and must be 1-D, got ")
           << getType();
  auto func = (*this)->getParentOfType<FunctionOpInterface>();
  if (!func)
    return emitOpError("must be inside a function");
  auto arena =
      func->getAttrOfType<IntegerAttr>(MemRTDialect::kArenaBytesAttrName);
  if (!arena)
    return emitOpError("enclosing function has no '")
           << MemRTDialect::kArenaBytesAttrName << "' attribute";
  int64_t end = getOffset() + getSizeInBytes();
  if (end > arena.getInt())
    return emitOpError("slice [")
           << getOffset() << ", " << end << ") exceeds the arena of "
           << arena.getInt() << " bytes";
  if (auto align =
          func->getAttrOfType<IntegerAttr>(MemRTDialect::kAlignmentAttrName))
    if (getOffset() % align.getInt() != 0)
      return emitOpError("offset ")
             << getOffset() << " is not a multiple of the alignment "
             << align.getInt();
  return success();
}

LogicalResult ViewOp::verify() {
  MemRefType in = getSource().getType(), out = getType();
  if (failed(verifyStatic(*this, in)) || failed(verifyStatic(*this, out)))
    return failure();
  if (in.getElementType() != out.getElementType() ||
      in.getNumElements() != out.getNumElements())
    return emitOpError("cannot view ")
           << in << " as " << out << ": element type and count must be equal";
  return success();
}

LogicalResult ConstantOp::verify() {
  if (failed(verifyStatic(*this, getType())))
    return failure();
  auto valueType = cast<ShapedType>(getValue().getType());
  if (valueType.getShape() != getType().getShape() ||
      valueType.getElementType() != getType().getElementType())
    return emitOpError("value of type ")
           << valueType << " does not match the result " << getType();
  return success();
}

/// Whether the runtime has a kernel of this name (the contract's list).
static bool isRuntimeKernel(StringRef name) {
  return llvm::StringSwitch<bool>(name)
#define MEMOPT_KERNEL(KIND, NAME) .Case(NAME, true)
#include "memopt/Contract/Kernels.def"
      .Default(false);
}

LogicalResult KernelOp::verify() {
  if (getKernel().empty())
    return emitOpError("expected a kernel name");
  if (!isRuntimeKernel(getKernel()))
    return emitOpError("names kernel '")
           << getKernel()
           << "', which the runtime does not have (memopt/Contract/"
              "Kernels.def lists its kernels)";
  // A reduce-scatter writes nothing on a rank that owns none of its
  // tensors, and still runs there (it sends them).
  if (getOuts().empty() && getKernel() != "reduce_scatter")
    return emitOpError("expected at least one output buffer");
  for (Value v : getOuts()) {
    if (v.getDefiningOp<ConstantOp>())
      return emitOpError("output buffers must be arena slices or views of "
                         "them, not constants");
    // A kernel may update a parameter or state argument in place (an
    // optimizer step); data belongs to the caller and is never written.
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      auto func = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
      auto role = func ? func.getArgAttrOfType<StringAttr>(
                             arg.getArgNumber(), MemRTDialect::kRoleAttrName)
                       : StringAttr();
      if (!role || role.getValue() == "data")
        return emitOpError("output buffers must be arena slices, views of "
                           "them, or parameter/state arguments updated in "
                           "place, not data arguments");
      if (!llvm::is_contained(getIns(), v))
        return emitOpError("writes argument #")
               << arg.getArgNumber() << " without reading it: only in-place "
               << "updates may write arguments";
    }
  }
  for (Value v : llvm::concat<Value>(getIns(), getOuts()))
    if (failed(verifyStatic(*this, cast<MemRefType>(v.getType()))))
      return failure();
  if (Value workspace = getWorkspace()) {
    if (!workspace.getDefiningOp<ArenaSliceOp>())
      return emitOpError("workspace must be an arena slice");
    if (failed(verifyStatic(*this, cast<MemRefType>(workspace.getType()))))
      return failure();
  }
  return success();
}

#define GET_OP_CLASSES
#include "memopt/Dialect/MemRT/IR/MemRTOps.cpp.inc"
