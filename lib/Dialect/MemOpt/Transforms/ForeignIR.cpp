//===- ForeignIR.cpp - what memopt's passes transform, and what not -------===//
//
// See ForeignIR.h. The rule is deliberately narrow: it admits exactly the
// IR memopt's analyses model (single-block value-semantics graphs of memopt
// ops and tensor constants), the same set the lowering to memrt accepts.
//
//===----------------------------------------------------------------------===//

#include "memopt/Dialect/MemOpt/Transforms/ForeignIR.h"

#include "memopt/Dialect/MemOpt/IR/MemOptDialect.h"

#include "memopt/Analysis/MemoryAnalysis.h"
#include "memopt/Contract/ShapeRule.h"
#include "memopt/Support/ByteSize.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/MathExtras.h"

#include <string>

using namespace mlir;
using namespace memopt;

bool memopt::isMemOptGraph(func::FuncOp func) {
  if (func.isExternal())
    return false;
  // Arguments declared as parameters or state make it one too.
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    for (NamedAttribute attr :
         mlir::function_interface_impl::getArgAttrs(func, i))
      if (isa_and_nonnull<MemOptDialect>(attr.getNameDialect()))
        return true;
  WalkResult found = func.walk([](Operation *op) {
    return isa_and_nonnull<MemOptDialect>(op->getDialect())
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  return found.wasInterrupted();
}

/// Why `op` is outside what the passes model, or "" if it is inside.
static std::string unsupportedReason(Operation *op) {
  if (op->getNumRegions() != 0)
    return "it has regions, whose captured values and effects memopt's "
           "liveness, scheduling and gradients do not model";
  if (isa_and_nonnull<MemOptDialect>(op->getDialect()) ||
      isa<func::ReturnOp>(op))
    return "";
  if (auto constant = dyn_cast<arith::ConstantOp>(op))
    return isa<RankedTensorType>(constant.getType())
               ? ""
               : "it is not a tensor constant";
  if (isa<func::CallOp, func::CallIndirectOp>(op))
    return "calls may have side effects and are not differentiated";
  return "memopt's passes transform memopt ops, tensor arith.constant and "
         "func.return only";
}

LogicalResult memopt::verifyTransformable(func::FuncOp func, StringRef pass) {
  if (!func.getBody().hasOneBlock())
    return func.emitOpError()
           << "cannot be transformed by " << pass << ": its body has "
           << func.getBody().getBlocks().size()
           << " blocks; memopt graphs have one";
  for (Operation &op : func.getBody().front()) {
    std::string reason = unsupportedReason(&op);
    if (!reason.empty())
      return op.emitOpError() << "is not supported by " << pass
                              << " in a memopt graph: " << reason;
  }
  for (BlockArgument arg : func.getArguments())
    if (!isa<RankedTensorType>(arg.getType()))
      return func.emitOpError()
             << "cannot be transformed by " << pass << ": argument "
             << arg.getArgNumber() << " has type " << arg.getType()
             << "; memopt graphs take ranked tensors";
  for (auto [i, type] : llvm::enumerate(func.getResultTypes()))
    if (!isa<RankedTensorType>(type))
      return func.emitOpError()
             << "cannot be transformed by " << pass << ": result " << i
             << " has type " << type << "; memopt graphs return ranked tensors";
  return verifyGraphSizes(func, pass);
}

/// Bytes of a value of `type`, or std::nullopt when it does not fit in
/// int64_t (dimensions are not bounded by the builtin tensor type).
static std::optional<int64_t> checkedBytes(RankedTensorType type) {
  if (!type.hasStaticShape())
    return 0;
  int64_t count = 1;
  for (int64_t size : type.getShape()) {
    std::optional<int64_t> product = shapes::checkedMul(count, size);
    if (!product)
      return std::nullopt;
    count = *product;
  }
  int64_t elementBytes =
      static_cast<int64_t>(llvm::divideCeil(type.getElementTypeBitWidth(), 8));
  return shapes::checkedMul(count, elementBytes);
}

LogicalResult memopt::verifyGraphSizes(func::FuncOp func, StringRef pass) {
  int64_t totalBytes = 0, totalFlops = 0;
  auto addBytes = [&](Value value, auto emit) -> LogicalResult {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type)
      return success();
    std::optional<int64_t> bytes = checkedBytes(type);
    if (!bytes || *bytes > kMaxTensorBytes)
      return emit() << "cannot be transformed by " << pass << ": a tensor of "
                    << type << " is "
                    << (bytes ? std::to_string(*bytes) + " bytes"
                              : std::string("2^63 bytes or more"))
                    << "; memopt takes tensors of at most 2^48 bytes (256 "
                       "TiB)";
    std::optional<int64_t> sum = shapes::checkedAdd(totalBytes, *bytes);
    if (!sum || *sum > kMaxGraphBytes)
      return emit() << "cannot be transformed by " << pass
                    << ": the graph's tensors total more than 2^56 bytes "
                       "(64 PiB), more than memopt's sizes and offsets "
                       "are computed with";
    totalBytes = *sum;
    return success();
  };
  for (BlockArgument arg : func.getArguments())
    if (failed(addBytes(arg, [&] { return func.emitOpError(); })))
      return failure();
  for (Operation &op : func.getBody().front()) {
    for (Value result : op.getResults())
      if (failed(addBytes(result, [&] { return op.emitOpError(); })))
        return failure();
    std::optional<int64_t> flops =
        shapes::checkedAdd(totalFlops, MemoryAnalysis::getFlops(&op));
    if (!flops || *flops > kMaxGraphFlops)
      return op.emitOpError()
             << "cannot be transformed by " << pass
             << ": the graph's FLOPs total more than 2^59 (5.8e17), more "
                "than memopt's cost model counts with";
    totalFlops = *flops;
  }
  return success();
}

/// Every pass but the planner changes what the arena plan placed: after
/// --memopt-plan-memory its offsets would be stale (the runtime refuses
/// such a plan, or worse), so it refuses to run.
static LogicalResult verifyNotPlanned(func::FuncOp func, StringRef pass) {
  if (pass == "memopt-plan-memory" ||
      !func->hasAttr(MemOptDialect::kArenaBytesAttrName))
    return success();
  return func.emitOpError()
         << "already has an arena plan (memopt.arena_bytes): " << pass
         << " changes the step and must run before --memopt-plan-memory";
}

LogicalResult
memopt::collectMemOptGraphs(Operation *anchor, StringRef pass,
                            SmallVectorImpl<func::FuncOp> &graphs) {
  // Nested on a function (builtin.module(func.func(PASS))): that function,
  // if it is a memopt graph; the pass manager runs functions in parallel.
  if (auto func = dyn_cast<func::FuncOp>(anchor)) {
    if (!isMemOptGraph(func))
      return success();
    if (failed(verifyTransformable(func, pass)) ||
        failed(verifyNotPlanned(func, pass)))
      return failure();
    graphs.push_back(func);
    return success();
  }
  auto module = dyn_cast<ModuleOp>(anchor);
  if (!module)
    return anchor->emitOpError()
           << "is not a place " << pass
           << " runs on: it runs on a builtin.module or a func.func";
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!isMemOptGraph(func))
      continue;
    if (failed(verifyTransformable(func, pass)) ||
        failed(verifyNotPlanned(func, pass)))
      return failure();
    graphs.push_back(func);
  }
  return success();
}

LogicalResult memopt::setByteSizeOnGraphs(Operation *anchor, StringRef pass,
                                          StringRef bytes, StringRef examples,
                                          StringRef attr) {
  std::optional<int64_t> size = parseByteSize(bytes);
  if (!size)
    return anchor->emitError() << pass << ": bytes must be a byte size such as "
                               << examples << ", got '" << bytes << "'";
  SmallVector<func::FuncOp> graphs;
  if (failed(collectMemOptGraphs(anchor, pass, graphs)))
    return failure();
  Builder b(anchor->getContext());
  for (func::FuncOp func : graphs)
    func->setAttr(attr, b.getI64IntegerAttr(*size));
  return success();
}
