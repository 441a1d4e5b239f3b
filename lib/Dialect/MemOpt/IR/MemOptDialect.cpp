//===- MemOptDialect.cpp - memopt dialect ---------------------------------===//
//
// Registers the memopt ops and verifies the dialect's argument attributes
// (`memopt.param`, `memopt.state`) on functions.
//
//===----------------------------------------------------------------------===//

#include "memopt/Dialect/MemOpt/IR/MemOptDialect.h"
#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/InliningUtils.h"

using namespace mlir;
using namespace memopt;

#include "memopt/Dialect/MemOpt/IR/MemOptOpsDialect.cpp.inc"

namespace {
/// memopt ops are value-semantics computations without regions or effects
/// on anything but their results: a call to a function of them can be
/// inlined (`--inline`), which turns a model split into functions into the
/// one graph memopt's passes transform.
struct MemOptInlinerInterface : public DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;
  bool isLegalToInline(Operation *call, Operation *callable,
                       bool wouldBeCloned) const final {
    return true;
  }
  bool isLegalToInline(Operation *op, Region *dest, bool wouldBeCloned,
                       IRMapping &valueMapping) const final {
    return true;
  }
};
} // namespace

void MemOptDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "memopt/Dialect/MemOpt/IR/MemOptOps.cpp.inc"
      >();
  addInterfaces<MemOptInlinerInterface>();
}

/// `memopt.param`, `memopt.state` and `memopt.optimizer_state` are unit
/// attributes on the arguments of a function; the argument must be a
/// statically shaped float tensor, and carry at most one role.
LogicalResult MemOptDialect::verifyRegionArgAttribute(Operation *op,
                                                      unsigned regionIndex,
                                                      unsigned argIndex,
                                                      NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kInitialValueAttrName) {
    auto func = dyn_cast<FunctionOpInterface>(op);
    if (!isa<FloatAttr>(attr.getValue()) || !func || regionIndex != 0)
      return op->emitError() << "'" << name << "' on argument #" << argIndex
                             << " must be a float attribute on a function "
                                "argument, got "
                             << attr.getValue();
    return success();
  }
  if (name == kFrozenAttrName) {
    auto func = dyn_cast<FunctionOpInterface>(op);
    if (!isa<UnitAttr>(attr.getValue()) || !func || regionIndex != 0)
      return op->emitError() << "'" << name << "' on argument #" << argIndex
                             << " must be a unit attribute on a function "
                                "argument, got "
                             << attr.getValue();
    if (!func.getArgAttr(argIndex, kParamAttrName))
      return op->emitError()
             << "'" << name << "' on argument #" << argIndex
             << " needs 'memopt.param': a frozen argument is a parameter "
                "the step does not train";
    return success();
  }
  if (name != kParamAttrName && name != kStateAttrName &&
      name != kOptimizerStateAttrName)
    return op->emitError() << "unknown memopt argument attribute '" << name
                           << "' on argument #" << argIndex
                           << " (expected 'memopt.param', 'memopt.frozen', "
                              "'memopt.state' or 'memopt.optimizer_state')";
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
  // Optimizer state may also count (loss scaling's growth tracker is i32).
  bool integerAllowed = name == kOptimizerStateAttrName;
  if (!tensor || !tensor.hasStaticShape() ||
      !(isa<FloatType>(tensor.getElementType()) ||
        (integerAllowed && tensor.getElementType().isInteger())))
    return op->emitError() << "argument #" << argIndex << " marked '" << name
                           << "' must be a statically shaped "
                           << (integerAllowed ? "float or integer" : "float")
                           << " tensor, got " << type;
  SmallVector<StringRef> roles;
  for (StringRef role :
       {kParamAttrName, kStateAttrName, kOptimizerStateAttrName})
    if (func.getArgAttr(argIndex, role))
      roles.push_back(role);
  // Report once, from the last role attribute of the argument.
  if (roles.size() > 1 && name == roles.back()) {
    InFlightDiagnostic diag = op->emitError()
                              << "argument #" << argIndex << " cannot be both ";
    llvm::interleave(
        roles, diag, [&](StringRef r) { diag << "'" << r << "'"; }, " and ");
    return diag;
  }
  return success();
}

/// `memopt.updates = N` marks a result as the new value of argument N, which
/// must be a parameter or state of the same type.
LogicalResult MemOptDialect::verifyRegionResultAttribute(Operation *op,
                                                         unsigned,
                                                         unsigned resultIndex,
                                                         NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name != kUpdatesAttrName)
    return op->emitError() << "'" << name << "' is not valid on result #"
                           << resultIndex
                           << "; the only memopt result attribute is "
                              "'memopt.updates'";
  auto func = dyn_cast<FunctionOpInterface>(op);
  auto index = dyn_cast<IntegerAttr>(attr.getValue());
  if (!func || !index)
    return op->emitError() << "'" << name << "' on result #" << resultIndex
                           << " must be an integer argument index";
  int64_t arg = index.getInt();
  if (arg < 0 || arg >= static_cast<int64_t>(func.getNumArguments()))
    return op->emitError() << "'" << name << "' on result #" << resultIndex
                           << " names argument #" << arg << ", but there are "
                           << func.getNumArguments();
  if (!func.getArgAttr(arg, kParamAttrName) &&
      !func.getArgAttr(arg, kStateAttrName) &&
      !func.getArgAttr(arg, kOptimizerStateAttrName))
    return op->emitError() << "result #" << resultIndex << " updates argument #"
                           << arg
                           << ", which is data, not a parameter or state";
  if (func.getArgumentTypes()[arg] != func.getResultTypes()[resultIndex])
    return op->emitError() << "result #" << resultIndex << " of type "
                           << func.getResultTypes()[resultIndex]
                           << " cannot update argument #" << arg << " of type "
                           << func.getArgumentTypes()[arg];
  return success();
}

/// The discardable attributes the passes attach: the planned arena on
/// functions, the planned offsets, in-place and recompute markers on ops.
LogicalResult MemOptDialect::verifyOperationAttribute(Operation *op,
                                                      NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  Attribute value = attr.getValue();
  bool isFunc = isa<FunctionOpInterface>(op);
  if (name == kArenaBytesAttrName || name == kArenaLowerBoundAttrName ||
      name == kWorkspaceLimitAttrName || name == kConvWorkspaceAttrName) {
    auto bytes = dyn_cast<IntegerAttr>(value);
    if (!isFunc || !bytes || bytes.getInt() < 0)
      return op->emitError() << "'" << name
                             << "' must be a non-negative integer on a "
                                "function, got "
                             << value;
    return success();
  }
  if (name == kOffsetsAttrName) {
    auto offsets = dyn_cast<DenseI64ArrayAttr>(value);
    if (!offsets ||
        offsets.size() != static_cast<int64_t>(op->getNumResults()) ||
        llvm::any_of(offsets.asArrayRef(), [](int64_t o) { return o < -1; }))
      return op->emitError() << "'memopt.offsets' must hold one offset per "
                                "result (-1 for none), got "
                             << value;
    return success();
  }
  if (name == kWorkspaceOffsetAttrName) {
    auto offset = dyn_cast<IntegerAttr>(value);
    if (!offset || offset.getInt() < 0 || getWorkspaceBytes(op) == 0)
      return op->emitError() << "'" << name
                             << "' must be a non-negative integer on an op "
                                "with a workspace, got "
                             << value;
    return success();
  }
  if (name == kInPlaceAttrName) {
    auto index = dyn_cast<IntegerAttr>(value);
    if (!index || op->getNumResults() == 0 || index.getInt() < 0 ||
        index.getInt() >= static_cast<int64_t>(op->getNumOperands()) ||
        op->getOperand(index.getInt()).getType() != op->getResult(0).getType())
      return op->emitError() << "'memopt.inplace' must name an operand of "
                                "result 0's type, got "
                             << value;
    return success();
  }
  if (name == kLossScaleAttrName) {
    auto dict = dyn_cast<DictionaryAttr>(value);
    if (!isFunc || !dict)
      return op->emitError()
             << "'" << name << "' must be a dictionary on a function";
    for (StringRef key : {"init_scale", "growth_factor", "backoff_factor"})
      if (!dict.getAs<FloatAttr>(key))
        return op->emitError() << "'" << name << "' needs a float '" << key
                               << "', got " << value;
    if (!dict.getAs<IntegerAttr>("growth_interval") ||
        !dict.getAs<BoolAttr>("dynamic"))
      return op->emitError() << "'" << name
                             << "' needs an integer 'growth_interval' and a "
                                "bool 'dynamic', got "
                             << value;
    return success();
  }
  if (name == kShardedAttrName) {
    auto dict = dyn_cast<DictionaryAttr>(value);
    auto arguments =
        dict ? dict.getAs<DenseI64ArrayAttr>("arguments") : nullptr;
    auto owners = dict ? dict.getAs<DenseI64ArrayAttr>("owners") : nullptr;
    // Optional: the parameters held by rows.
    auto rows = dict ? dict.get("rows") : nullptr;
    auto negative = [](DenseI64ArrayAttr a) {
      return llvm::any_of(a.asArrayRef(), [](int64_t i) { return i < 0; });
    };
    if (!isFunc || !arguments || !owners || arguments.size() != owners.size() ||
        negative(arguments) || negative(owners) ||
        (rows && (!isa<DenseI64ArrayAttr>(rows) ||
                  negative(cast<DenseI64ArrayAttr>(rows)))))
      return op->emitError()
             << "'" << name
             << "' must be a dictionary on a function with arrays "
                "'arguments' and 'owners' of one size (and 'rows'), "
                "non-negative, got "
             << value;
    return success();
  }
  if (name == kRecomputeAttrName) {
    if (!isa<UnitAttr>(value))
      return op->emitError() << "'memopt.recompute' must be a unit attribute";
    return success();
  }
  return op->emitError() << "unknown memopt attribute '" << name << "'";
}
