//===- MemoryAnalysis.cpp - sizes, lifetimes and live bytes ---------------===//
//
// Lifetimes are what mlir::Liveness gives for one block (the last user of a
// value inside the block, the terminator for a value that is returned),
// computed directly from the uses; then aliases are
// folded into their roots, and the live bytes at every op are a prefix sum
// over buffer intervals. See MemoryAnalysis.h for the conventions.
//
//===----------------------------------------------------------------------===//

#include "memopt/Analysis/MemoryAnalysis.h"

#include "memopt/Dialect/MemOpt/IR/MemOptDialect.h"
#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace memopt;

llvm::StringRef memopt::stringifyValueRole(ValueRole role) {
  switch (role) {
  case ValueRole::Param:
    return "param";
  case ValueRole::State:
    return "state";
  case ValueRole::OptimizerState:
    return "optimizer_state";
  case ValueRole::Data:
    return "data";
  case ValueRole::Activation:
    return "activation";
  case ValueRole::Gradient:
    return "gradient";
  case ValueRole::Optimizer:
    return "optimizer";
  }
  llvm_unreachable("unknown value role");
}

//===----------------------------------------------------------------------===//
// Static helpers
//===----------------------------------------------------------------------===//

Value MemoryAnalysis::bufferRoot(Value value) {
  while (Value owner = aliasOf(value))
    value = owner;
  return value;
}

Value MemoryAnalysis::aliasOf(Value value) {
  auto result = dyn_cast<OpResult>(value);
  if (!result)
    return {};
  Operation *def = result.getOwner();
  // A reshape reinterprets its operand's elements: a view, never a copy.
  if (auto reshape = dyn_cast<ReshapeOp>(def))
    return reshape.getX();
  // An in-place result overwrites the operand it names; the pass that sets
  // the attribute has checked that the operand is dead afterwards.
  if (auto inplace = def->getAttrOfType<IntegerAttr>(kInPlaceAttrName)) {
    int64_t operand = inplace.getInt();
    if (result.getResultNumber() == 0 && operand >= 0 &&
        operand < static_cast<int64_t>(def->getNumOperands()))
      return def->getOperand(operand);
  }
  return {};
}

int64_t MemoryAnalysis::getValueBytes(Value value) {
  auto type = dyn_cast<ShapedType>(value.getType());
  if (!type || !type.hasStaticShape())
    return 0;
  return type.getNumElements() * static_cast<int64_t>(llvm::divideCeil(
                                     type.getElementTypeBitWidth(), 8));
}

/// Calls `place` with the bytes of every buffer the executor allocates
/// beside the arena, in its order: the arguments, then the constants.
static void forEachPersistentBuffer(func::FuncOp func,
                                    llvm::function_ref<void(int64_t)> place) {
  for (BlockArgument arg : func.getArguments())
    place(MemoryAnalysis::getValueBytes(arg));
  if (!func.getBody().empty())
    for (Operation &op : func.getBody().front())
      if (op.hasTrait<mlir::OpTrait::ConstantLike>())
        for (Value result : op.getResults())
          if (isa<ShapedType>(result.getType()))
            place(MemoryAnalysis::getValueBytes(result));
}

int64_t MemoryAnalysis::getStepBytes(func::FuncOp func, int64_t arenaBytes,
                                     int64_t alignment) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t align = getBufferAlignment(alignment);
  int64_t total = arenaBytes;
  // The executor's `place`: align the end of the block up, then append.
  forEachPersistentBuffer(func, [&](int64_t bytes) {
    std::optional<int64_t> up = llvm::checkedAdd(total, align - 1);
    std::optional<int64_t> end =
        up ? llvm::checkedAdd(*up / align * align, bytes) : std::nullopt;
    total = end.value_or(kMax);
  });
  return total;
}

int64_t MemoryAnalysis::getPersistentBytes(func::FuncOp func) {
  int64_t total = 0;
  forEachPersistentBuffer(func, [&](int64_t bytes) {
    total = llvm::checkedAdd(total, bytes)
                .value_or(std::numeric_limits<int64_t>::max());
  });
  return total;
}

int64_t MemoryAnalysis::getFlops(Operation *op) {
  if (auto cost = dyn_cast<CostOpInterface>(op))
    return cost.getFlops();
  return 0;
}

int64_t MemoryAnalysis::sumRecomputeFlops(func::FuncOp func) {
  int64_t flops = 0;
  for (Operation &op : func.getBody().front().without_terminator())
    if (op.hasAttr(kRecomputeAttrName))
      flops += getFlops(&op);
  return flops;
}

int64_t MemoryAnalysis::getWorkspaceBytes(Operation *op) {
  return memopt::getWorkspaceBytes(op);
}

//===----------------------------------------------------------------------===//
// Construction
//===----------------------------------------------------------------------===//

MemoryAnalysis::MemoryAnalysis(func::FuncOp func) : func(func) { analyze(); }

MemoryAnalysis::MemoryAnalysis(Operation *op)
    : MemoryAnalysis(cast<func::FuncOp>(op)) {}

void MemoryAnalysis::analyze() {
  assert(!func.isExternal() && func.getBody().hasOneBlock() &&
         "MemoryAnalysis needs a function body of one block");
  Block &block = func.getBody().front();
  body = &block;
  // Sized once: growing the maps rehashes every entry, several times over
  // on a 100k-op step.
  size_t numValues = block.getNumArguments(), numOps = 0;
  for (Operation &op : block) {
    numValues += op.getNumResults();
    ++numOps;
  }
  ops.reserve(numOps);
  opIndex.reserve(numOps);
  values.reserve(numValues);
  firstResult.reserve(numOps);
  resultPositions.reserve(numValues - block.getNumArguments());
  for (Operation &op : block) {
    if (&op == block.getTerminator())
      break;
    opIndex[&op] = static_cast<int64_t>(ops.size());
    ops.push_back(&op);
  }
  opIndex[block.getTerminator()] = getNumOps();

  computeForwardSet();

  // Arguments, then results in op order: the order the printer shows.
  auto track = [&](Value value, int64_t def, ValueRole role) -> int32_t {
    if (!isa<TensorType>(value.getType()))
      return -1;
    ValueInfo info;
    info.value = value;
    info.bytes = getValueBytes(value);
    info.def = def;
    info.root = value;
    info.role = role;
    values.push_back(info);
    return static_cast<int32_t>(values.size() - 1);
  };
  for (BlockArgument arg : block.getArguments()) {
    ValueRole role = ValueRole::Data;
    unsigned i = arg.getArgNumber();
    if (func.getArgAttr(i, MemOptDialect::kParamAttrName))
      role = ValueRole::Param;
    else if (func.getArgAttr(i, MemOptDialect::kStateAttrName))
      role = ValueRole::State;
    else if (func.getArgAttr(i, MemOptDialect::kOptimizerStateAttrName))
      role = ValueRole::OptimizerState;
    argumentPositions.push_back(track(arg, -1, role));
  }
  for (auto [index, op] : llvm::enumerate(ops)) {
    ValueRole role = roleOfResult(op);
    firstResult.push_back(static_cast<uint32_t>(resultPositions.size()));
    for (Value result : op->getResults())
      resultPositions.push_back(
          track(result, static_cast<int64_t>(index), role));
  }
  // The step's other new argument values (Adam's step count) are optimizer
  // outputs too, although no update op computes them.
  for (OpOperand &operand : block.getTerminator()->getOpOperands()) {
    int64_t position = valuePosition(operand.get());
    if (position >= 0 && values[position].role == ValueRole::Gradient &&
        func.getResultAttr(operand.getOperandNumber(),
                           MemOptDialect::kUpdatesAttrName))
      values[position].role = ValueRole::Optimizer;
  }

  computeLifetimes();
  computeTotals();
}

/// Forward = the ops the loss depends on: the transitive producers of the
/// first returned value. Without a scalar float loss nothing is backward.
/// A linear_cross_entropy_with_grad that makes the loss is the loss and
/// its gradient in one op (--memopt-fuse-loss-gradient), where the backward
/// pass starts: not forward itself, but its hidden, weight and labels are
/// what the forward pass computed.
void MemoryAnalysis::computeForwardSet() {
  Block &block = func.getBody().front();
  auto loss = func.getNumResults() == 0
                  ? RankedTensorType()
                  : dyn_cast<RankedTensorType>(func.getResultTypes().front());
  hasLoss =
      loss && loss.getRank() == 0 && isa<FloatType>(loss.getElementType());
  forward.assign(ops.size(), !hasLoss);
  if (hasLoss) {
    SmallVector<Operation *> worklist;
    llvm::SmallPtrSet<Operation *, 2> lossWithGrad;
    auto visit = [&](Value value) {
      Operation *def = value.getDefiningOp();
      if (!def)
        return;
      def = block.findAncestorOpInBlock(*def);
      int64_t index = def ? getIndex(def) : -1;
      if (index < 0 || index >= getNumOps() || forward[index])
        return;
      if (isa<LinearCrossEntropyWithGradOp>(def)) {
        if (lossWithGrad.insert(def).second)
          worklist.push_back(def);
        return;
      }
      forward[index] = true;
      worklist.push_back(def);
    };
    visit(block.getTerminator()->getOperand(0));
    while (!worklist.empty()) {
      Operation *op = worklist.pop_back_val();
      if (auto fused = dyn_cast<LinearCrossEntropyWithGradOp>(op)) {
        // Every operand but grad_loss: hidden, weight, labels, the bias.
        for (Value operand : fused->getOperands().drop_front())
          visit(operand);
        continue;
      }
      // Values used inside an op's regions count as its operands.
      op->walk([&](Operation *nested) {
        for (Value operand : nested->getOperands())
          visit(operand);
      });
    }
  }

  // The backward pass starts at the first op that is not forward and reads
  // the forward pass, directly or through other such ops (the seed
  // gradient's first use). Ops that read only arguments and constants (an
  // optimizer's step counter, a loss-scale update) compute no gradient and
  // may be scheduled anywhere, even first; constants and views compute
  // nothing, and frees only end lifetimes. None of them starts it.
  firstBackward = getNumOps();
  if (!hasLoss)
    return;
  SmallVector<bool> readsForward(ops.size(), false);
  for (auto [index, op] : llvm::enumerate(ops)) {
    if (forward[index] || op->hasTrait<mlir::OpTrait::ConstantLike>() ||
        isa<FreeOp>(op))
      continue;
    bool reads = false;
    op->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (!def || !(def = block.findAncestorOpInBlock(*def)))
          continue;
        int64_t defIndex = getIndex(def);
        if (defIndex >= 0 && defIndex < getNumOps() &&
            (forward[defIndex] || readsForward[defIndex]))
          reads = true;
      }
    });
    readsForward[index] = reads;
    if (reads && !isa<ReshapeOp>(op) && firstBackward == getNumOps())
      firstBackward = static_cast<int64_t>(index);
  }
}

ValueRole MemoryAnalysis::roleOfResult(Operation *op) const {
  if (forward[getIndex(op)])
    return ValueRole::Activation;
  if (isa<OptimizerUpdateOpInterface>(op))
    return ValueRole::Optimizer;
  return ValueRole::Gradient;
}

void MemoryAnalysis::computeLifetimes() {
  Block &block = func.getBody().front();
  // What mlir::Liveness's LivenessBlockInfo::getEndOperation answers for a
  // function of one block (nothing is live-out of it, and a use inside an
  // op's region counts at that op): the latest op in the block that uses
  // the value, or its definition (the block's first op for an argument).
  // Computed directly because building the Liveness sets for 100,000 ops
  // cost more than the rest of the analysis; a unit test checks the two
  // agree.
  //
  // The ops in block order, each use attributed to the op of the block it
  // is in (itself, or the op whose region holds it): one lookup per
  // operand, where asking each value for its users and each user for its
  // index took two. A value never used ends at its definition (-1 for an
  // argument).
  for (ValueInfo &info : values)
    info.lastUse = info.def;
  auto useAt = [&](Value operand, int64_t index) {
    int64_t position = valuePosition(operand);
    if (position >= 0) {
      int64_t &last = values[position].lastUse;
      last = std::max(last, index);
    }
  };
  // The terminator ends a returned value's life (index getNumOps()), and a
  // memopt.free is a user like any other.
  for (auto [index, op] : llvm::enumerate(ops)) {
    auto at = static_cast<int64_t>(index);
    for (Value operand : op->getOperands())
      useAt(operand, at);
    for (Region &region : op->getRegions())
      region.walk([&](Operation *nested) {
        for (Value operand : nested->getOperands())
          useAt(operand, at);
      });
  }
  for (Value operand : block.getTerminator()->getOperands())
    useAt(operand, getNumOps());

  // Fold aliases into roots. Values come in definition order, and an alias
  // is defined after what it aliases, so roots are resolved first.
  for (ValueInfo &info : values) {
    info.end = info.isArgument() ? getNumOps() : info.lastUse;
    if (Value alias = aliasOf(info.value))
      if (const ValueInfo *target = lookup(alias))
        info.root = target->root;
  }
  for (ValueInfo &info : values)
    if (info.isAlias()) {
      ValueInfo &root = values[valuePosition(info.root)];
      root.end = std::max(root.end, info.end);
    }
  for (ValueInfo &info : values)
    if (info.isAlias())
      info.end = values[valuePosition(info.root)].end;
}

void MemoryAnalysis::computeTotals() {
  int64_t numOps = getNumOps();
  // Live bytes by a difference array over buffer intervals; arguments are
  // live throughout.
  SmallVector<int64_t> delta(ops.size() + 1, 0);
  int64_t argumentBytes = 0;
  for (const ValueInfo &info : values) {
    if (info.isAlias())
      continue;
    if (info.isArgument()) {
      argumentBytes += info.bytes;
      continue;
    }
    delta[info.def] += info.bytes;
    delta[std::min(info.end, numOps - 1) + 1] -= info.bytes;
  }
  liveBytes.assign(ops.size(), 0);
  int64_t running = argumentBytes;
  peakBytes = argumentBytes;
  for (int64_t i = 0; i < numOps; ++i) {
    running += delta[i];
    // The op's workspace is live at its own index only.
    liveBytes[i] = running + getWorkspaceBytes(ops[i]);
    peakBytes = std::max(peakBytes, liveBytes[i]);
  }

  for (const ValueInfo &info : values) {
    switch (info.role) {
    case ValueRole::Param:
      parameterCount += cast<ShapedType>(info.value.getType()).getNumElements();
      parameterBytes += info.bytes;
      break;
    case ValueRole::OptimizerState:
      optimizerStateBytes += info.bytes;
      break;
    case ValueRole::Activation:
      if (info.isAlias())
        break;
      forwardAllocatedBytes += info.bytes;
      // Forward buffers the backward pass starts with.
      if (firstBackward < numOps && info.def < firstBackward &&
          info.end >= firstBackward)
        savedForBackwardBytes += info.bytes;
      break;
    default:
      break;
    }
  }

  // Parameter gradients: what the updates consume, or, with no update
  // (optimizer=none), the backward values returned without updating an
  // argument.
  llvm::SmallDenseSet<Value> gradients;
  for (Operation *op : ops)
    if (auto update = dyn_cast<OptimizerUpdateOpInterface>(op))
      gradients.insert(update.getGrad());
  Operation *terminator = func.getBody().front().getTerminator();
  if (hasLoss)
    for (OpOperand &operand : terminator->getOpOperands()) {
      const ValueInfo *info = lookup(operand.get());
      if (!info || info->isArgument() || info->role == ValueRole::Activation ||
          func.getResultAttr(operand.getOperandNumber(),
                             MemOptDialect::kUpdatesAttrName))
        continue;
      gradients.insert(operand.get());
    }
  for (Value grad : gradients)
    gradientBytes += getValueBytes(grad);
  // Under ZeRO stage 2 each rank's memopt.square_sum reads its gradients,
  // and the factor only their sum.
  for (Operation *op : ops)
    if (auto clip = dyn_cast<ClipCoefficientOp>(op);
        clip && !clip.getSquareSum())
      for (Value grad : clip.getGrads())
        clippedGradientBytes += getValueBytes(grad);
    else if (auto squares = dyn_cast<SquareSumOp>(op))
      for (Value grad : squares.getValues())
        clippedGradientBytes += getValueBytes(grad);

  for (Operation *op : ops) {
    int64_t flops = getFlops(op);
    totalFlops += flops;
    if (op->hasAttr(kRecomputeAttrName))
      recomputeFlops += flops;
  }
}

//===----------------------------------------------------------------------===//
// Queries
//===----------------------------------------------------------------------===//

int64_t MemoryAnalysis::getIndex(Operation *op) const {
  auto it = opIndex.find(op);
  return it == opIndex.end() ? -1 : it->second;
}

int64_t MemoryAnalysis::valuePosition(Value value) const {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return arg.getOwner() == body ? argumentPositions[arg.getArgNumber()] : -1;
  auto result = cast<OpResult>(value);
  int64_t index = getIndex(result.getOwner());
  if (index < 0 || index >= getNumOps())
    return -1;
  return resultPositions[firstResult[index] + result.getResultNumber()];
}

const ValueInfo *MemoryAnalysis::lookup(Value value) const {
  int64_t position = valuePosition(value);
  return position < 0 ? nullptr : &values[position];
}

Value MemoryAnalysis::getRoot(Value value) const {
  const ValueInfo *info = lookup(value);
  return info ? info->root : value;
}

bool MemoryAnalysis::isLiveAt(Value value, int64_t index) const {
  const ValueInfo *info = lookup(value);
  if (!info)
    return false;
  const ValueInfo &root = *lookup(info->root);
  return root.def <= index && index <= root.end;
}

bool MemoryAnalysis::isForward(Operation *op) const {
  int64_t index = getIndex(op);
  return index >= 0 && index < getNumOps() && forward[index];
}

std::optional<int64_t> MemoryAnalysis::getArenaBytes() const {
  if (auto bytes = func->getAttrOfType<IntegerAttr>(kArenaBytesAttrName))
    return bytes.getInt();
  return std::nullopt;
}

void MemoryAnalysis::print(llvm::raw_ostream &os) const {
  func::FuncOp f = func;
  AsmState state(f);
  os << "func @" << f.getSymName() << ": " << getNumOps()
     << " ops, first backward op " << getFirstBackwardIndex() << ", peak "
     << getPeakBytes() << " bytes\n";
  for (const ValueInfo &info : values) {
    os << "  ";
    if (auto arg = dyn_cast<BlockArgument>(info.value))
      os << "arg/" << arg.getArgNumber();
    else
      os << info.value.getDefiningOp()->getName() << "/" << info.def;
    os << " ";
    info.value.printAsOperand(os, state);
    const ValueInfo &root = *lookup(info.root);
    os << ": size = " << info.bytes << ", live = [" << root.def << ", "
       << info.end << "], role = " << stringifyValueRole(info.role);
    if (info.isAlias()) {
      os << ", alias of ";
      info.root.printAsOperand(os, state);
    }
    os << "\n";
  }
  for (auto [index, op] : llvm::enumerate(ops))
    os << "  op " << index << " " << op->getName()
       << ": live_bytes = " << getLiveBytes(index) << "\n";
}
