//===- Microbatch.cpp - gradient accumulation as a graph rewrite ----------===//
//
// `--memopt-microbatch=count=k`: k copies of the forward graph on batch
// slices, losses averaged. Each copy's types are re-inferred from its sliced
// inputs (ops with InferTypeOpInterface); reshapes and slices, whose result
// shapes are written in the IR, have their leading dimension divided by k
// and are refused when the batch is not there.
//
//===----------------------------------------------------------------------===//

#include "memopt/Dialect/MemOpt/IR/MemOptDialect.h"
#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"
#include "memopt/Dialect/MemOpt/Transforms/ForeignIR.h"
#include "memopt/Dialect/MemOpt/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"

#define DEBUG_TYPE "memopt-microbatch"

namespace memopt {
#define GEN_PASS_DEF_MEMOPTMICROBATCH
#include "memopt/Dialect/MemOpt/Transforms/Passes.h.inc"
} // namespace memopt

using namespace mlir;
using namespace memopt;

namespace {

/// `type` with its leading dimension divided by `k`.
RankedTensorType shrinkBatch(RankedTensorType type, int64_t k) {
  SmallVector<int64_t> shape(type.getShape());
  shape[0] /= k;
  return RankedTensorType::get(shape, type.getElementType());
}

class Splitter {
public:
  Splitter(func::FuncOp func, int64_t k) : func(func), k(k) {}

  LogicalResult run();

private:
  /// Clones `op` for one micro-batch at `b`, mapping operands through
  /// `mapping`; result types are re-derived for the smaller batch.
  LogicalResult cloneForMicrobatch(OpBuilder &b, Operation *op,
                                   IRMapping &mapping);

  func::FuncOp func;
  int64_t k;
};

LogicalResult Splitter::cloneForMicrobatch(OpBuilder &b, Operation *op,
                                           IRMapping &mapping) {
  SmallVector<Value> operands;
  for (Value v : op->getOperands())
    operands.push_back(mapping.lookupOrDefault(v));
  bool touchesBatch =
      llvm::any_of(llvm::zip(op->getOperands(), operands), [](auto pair) {
        return std::get<0>(pair).getType() != std::get<1>(pair).getType();
      });
  if (!touchesBatch) {
    // Independent of the data (constants, parameter-only arithmetic): the
    // same op serves every micro-batch.
    mapping.map(op->getResults(), b.clone(*op, mapping)->getResults());
    return success();
  }

  NamedAttrList attrs;
  if (auto props =
          dyn_cast_or_null<DictionaryAttr>(op->getPropertiesAsAttribute()))
    attrs.append(props.getValue());
  attrs.append(op->getDiscardableAttrs());

  SmallVector<Type> resultTypes;
  if (auto reshape = dyn_cast<ReshapeOp>(op)) {
    RankedTensorType out = reshape.getType();
    RankedTensorType in = cast<RankedTensorType>(operands[0].getType());
    RankedTensorType shrunk = shrinkBatch(out, k);
    if (out.getDimSize(0) % k != 0 ||
        shrunk.getNumElements() != in.getNumElements())
      return op->emitOpError("cannot be split into ")
             << k << " micro-batches: its result " << out
             << " does not keep the batch in the leading dimension";
    resultTypes.push_back(shrunk);
  } else if (auto slice = dyn_cast<SliceOp>(op)) {
    int64_t fullBatch = slice.getX().getType().getDimSize(0);
    if (slice.getOffsets()[0] != 0 || slice.getSizes()[0] != fullBatch ||
        slice.getEffectiveStrides()[0] != 1)
      return op->emitOpError("cannot be split into ")
             << k << " micro-batches: it slices the batch dimension";
    SmallVector<int64_t> sizes(slice.getSizes());
    sizes[0] /= k;
    attrs.set("sizes", b.getDenseI64ArrayAttr(sizes));
  } else if (!op->getRegisteredInfo() ||
             !op->getRegisteredInfo()->hasInterface<InferTypeOpInterface>()) {
    return op->emitOpError("cannot be split into micro-batches: its result "
                           "types cannot be re-derived for a smaller batch");
  }

  OperationState state(op->getLoc(), op->getName());
  state.addOperands(operands);
  state.addAttributes(attrs);
  if (resultTypes.empty()) {
    auto *infer = op->getRegisteredInfo()->getInterface<InferTypeOpInterface>();
    if (failed(infer->inferReturnTypes(op->getContext(), op->getLoc(), operands,
                                       attrs.getDictionary(op->getContext()),
                                       OpaqueProperties(nullptr), RegionRange(),
                                       resultTypes)))
      return op->emitOpError("cannot be split into ")
             << k << " micro-batches (see the shape error above)";
  }
  state.addTypes(resultTypes);
  Operation *clone = b.create(state);
  mapping.map(op->getResults(), clone->getResults());
  return success();
}

LogicalResult Splitter::run() {
  Block &body = func.front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  SmallVector<Operation *> forward;
  for (Operation &op : body.without_terminator())
    forward.push_back(&op);

  // Data arguments are sliced; their leading dimension must divide by k.
  SmallVector<BlockArgument> data;
  for (BlockArgument arg : func.getArguments()) {
    unsigned i = arg.getArgNumber();
    if (func.getArgAttr(i, MemOptDialect::kParamAttrName) ||
        func.getArgAttr(i, MemOptDialect::kStateAttrName) ||
        func.getArgAttr(i, MemOptDialect::kOptimizerStateAttrName))
      continue;
    auto type = cast<RankedTensorType>(arg.getType());
    if (type.getRank() == 0)
      return func.emitOpError("data argument #")
             << i << " is a scalar; it has no batch dimension to split";
    if (type.getDimSize(0) % k != 0)
      return func.emitOpError("batch of ")
             << type.getDimSize(0) << " (data argument #" << i
             << ", dimension 0) is not divisible by count=" << k;
    data.push_back(arg);
  }
  if (data.empty())
    return func.emitOpError(
        "has no data arguments to split into micro-batches");

  // Results after the loss must be running statistics a batch norm updates:
  // they chain from one micro-batch to the next.
  DenseMap<Value, Value> stateOfResult; // returned value -> state argument
  for (Value v : ret.getOperands().drop_front()) {
    Value state;
    if (auto result = dyn_cast<OpResult>(v)) {
      if (auto bn = dyn_cast<BatchNormOp>(result.getOwner()))
        state = bn.getUpdatedState(result.getResultNumber());
      else if (auto bn = dyn_cast<BatchNormActOp>(result.getOwner()))
        state = bn.getUpdatedState(result.getResultNumber());
    }
    if (!state || !isa<BlockArgument>(state))
      return func.emitOpError("returns a value other than the loss and "
                              "batch-norm running statistics; it cannot be "
                              "split into micro-batches");
    stateOfResult[v] = state;
  }

  OpBuilder b(ret);
  Location loc = func.getLoc();
  SmallVector<Value> losses;
  SmallVector<Value> finalResults;
  DenseMap<Value, Value> currentState; // state argument -> latest value
  for (int64_t i = 0; i < k; ++i) {
    IRMapping mapping;
    for (BlockArgument arg : data) {
      auto type = cast<RankedTensorType>(arg.getType());
      int64_t part = type.getDimSize(0) / k;
      SmallVector<int64_t> offsets(type.getRank(), 0), sizes(type.getShape());
      offsets[0] = i * part;
      sizes[0] = part;
      mapping.map(arg, SliceOp::create(b, loc, arg, offsets, sizes,
                                       DenseI64ArrayAttr()));
    }
    for (auto [state, value] : currentState)
      mapping.map(state, value);
    for (Operation *op : forward)
      if (failed(cloneForMicrobatch(b, op, mapping)))
        return failure();
    losses.push_back(mapping.lookup(ret.getOperand(0)));
    for (auto [result, state] : stateOfResult)
      currentState[state] = mapping.lookup(result);
    if (i == k - 1)
      for (Value v : ret.getOperands().drop_front())
        finalResults.push_back(mapping.lookup(v));
  }

  Value loss;
  for (Value l : losses)
    loss = loss ? Value(AddOp::create(b, loc, loss, l)) : l;
  auto lossType = cast<RankedTensorType>(loss.getType());
  Value scale = arith::ConstantOp::create(
      b, loc, lossType,
      DenseElementsAttr::get(
          lossType, b.getFloatAttr(lossType.getElementType(), 1.0 / k)));
  loss = MulOp::create(b, loc, loss, scale);

  SmallVector<Value> results = {loss};
  results.append(finalResults);
  func::ReturnOp::create(b, ret.getLoc(), results);
  ret.erase();
  for (Operation *op : llvm::reverse(forward))
    op->erase();
  return success();
}

struct MemOptMicrobatchPass
    : public memopt::impl::MemOptMicrobatchBase<MemOptMicrobatchPass> {
  using MemOptMicrobatchBase::MemOptMicrobatchBase;

  void runOnOperation() override {
    if (count < 1) {
      getOperation()->emitError()
          << "memopt-microbatch: count must be at least 1, got "
          << static_cast<int64_t>(count);
      return signalPassFailure();
    }
    if (count == 1)
      return;
    SmallVector<func::FuncOp> graphs;
    if (failed(
            collectMemOptGraphs(getOperation(), "memopt-microbatch", graphs)))
      return signalPassFailure();
    for (func::FuncOp func : graphs) {
      if (func.getNumResults() == 0)
        continue;
      auto loss = dyn_cast<RankedTensorType>(func.getResultTypes().front());
      if (!loss || loss.getRank() != 0)
        continue;
      if (failed(Splitter(func, count).run()))
        return signalPassFailure();
    }
  }
};

} // namespace
