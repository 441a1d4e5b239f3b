//===- MemOptToMemRT.cpp - bufferise memopt graphs onto an arena ----------===//
//
// `--convert-memopt-to-memrt`: tensors become arena slices, memopt ops become
// memrt.kernel calls. Written with MLIR's dialect-conversion framework: a type
// converter (tensor -> memref), the func signature/return patterns, and one
// pattern for every memopt op, since all of them lower the same way.
//
//===----------------------------------------------------------------------===//

#include "memopt/Conversion/Passes.h"
#include "memopt/Dialect/MemOpt/IR/MemOptDialect.h"
#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"
#include "memopt/Dialect/MemOpt/Transforms/ForeignIR.h"
#include "memopt/Dialect/MemRT/IR/MemRTOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/MathExtras.h"

#define DEBUG_TYPE "convert-memopt-to-memrt"

namespace memopt {
#define GEN_PASS_DEF_CONVERTMEMOPTTOMEMRT
#include "memopt/Conversion/Passes.h.inc"
} // namespace memopt

using namespace mlir;
using namespace memopt;

namespace {

/// Bump allocation of arena offsets, one arena per function. Placeholder
/// policy until --memopt-plan-memory assigns offsets: every buffer gets its
/// own slice, so the arena is the sum of all buffers.
class ArenaAllocator {
public:
  explicit ArenaAllocator(int64_t alignment) : alignment(alignment) {}

  int64_t allocate(Operation *func, int64_t bytes) {
    int64_t &top = tops[func];
    int64_t offset = top;
    top = llvm::alignTo(offset + bytes, alignment);
    return offset;
  }

  int64_t arenaBytes(Operation *func) const { return tops.lookup(func); }

private:
  int64_t alignment;
  llvm::DenseMap<Operation *, int64_t> tops;
};

/// The attributes a kernel is called with: every inherent attribute of the op,
/// with the defaults that depend on other attributes made explicit, so the
/// runtime never has to know a default.
DictionaryAttr kernelAttributes(Operation *op) {
  NamedAttrList attrs;
  if (auto props =
          dyn_cast_or_null<DictionaryAttr>(op->getPropertiesAsAttribute()))
    attrs.append(props.getValue());
  // Which operand is which follows from their count in the plan (the
  // kernel rules: an optimizer's skip flag, then its loss scale).
  attrs.erase("operandSegmentSizes");
  Builder b(op->getContext());
  if (auto pool = dyn_cast<MaxPool2DOp>(op))
    attrs.set("strides", b.getDenseI64ArrayAttr(pool.getEffectiveStrides()));
  else if (auto pool = dyn_cast<AvgPool2DOp>(op))
    attrs.set("strides", b.getDenseI64ArrayAttr(pool.getEffectiveStrides()));
  else if (auto slice = dyn_cast<SliceOp>(op))
    attrs.set("strides", b.getDenseI64ArrayAttr(slice.getEffectiveStrides()));
  return attrs.getDictionary(op->getContext());
}

/// Frees end lifetimes, which the planner has already turned into offsets;
/// nothing runs for them.
struct FreeLowering : public OpConversionPattern<FreeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(FreeOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.eraseOp(op);
    return success();
  }
};

/// Every memopt op but reshape: one arena slice per result, one kernel call.
struct KernelLowering : public ConversionPattern {
  KernelLowering(const TypeConverter &converter, MLIRContext *ctx,
                 ArenaAllocator &arena, llvm::Statistic &numKernels)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/1, ctx),
        arena(arena), numKernels(numKernels) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isa<MemOptDialect>(op->getDialect()) || isa<ReshapeOp, FreeOp>(op))
      return failure();
    Operation *func = op->getParentOfType<func::FuncOp>();
    auto planned =
        op->getAttrOfType<DenseI64ArrayAttr>(MemOptDialect::kOffsetsAttrName);
    bool planning = func->hasAttr(MemOptDialect::kArenaBytesAttrName);
    if (planning && !planned)
      return rewriter.notifyMatchFailure(op, "no planned offsets");
    SmallVector<Value> outs;
    auto inplace =
        op->getAttrOfType<IntegerAttr>(MemOptDialect::kInPlaceAttrName);
    for (auto [i, type] : llvm::enumerate(op->getResultTypes())) {
      // Result 0 of an in-place op is written over its operand's buffer.
      if (i == 0 && inplace) {
        outs.push_back(operands[inplace.getInt()]);
        continue;
      }
      auto memref = cast<MemRefType>(getTypeConverter()->convertType(type));
      int64_t offset =
          planned && planned[i] >= 0
              ? planned[i]
              : arena.allocate(func, memrt::getSizeInBytes(memref));
      outs.push_back(memrt::ArenaSliceOp::create(
          rewriter, op->getLoc(), memref, rewriter.getI64IntegerAttr(offset)));
    }
    // The kernel's scratch bytes: a slice of its own, live during this
    // kernel only once planned.
    Value workspace;
    if (int64_t bytes = getWorkspaceBytes(op); bytes > 0) {
      auto offset = op->getAttrOfType<IntegerAttr>(
          MemOptDialect::kWorkspaceOffsetAttrName);
      if (planning && !offset)
        return rewriter.notifyMatchFailure(op, "no planned workspace");
      auto type = MemRefType::get({bytes}, rewriter.getI8Type());
      workspace = memrt::ArenaSliceOp::create(
          rewriter, op->getLoc(), type,
          rewriter.getI64IntegerAttr(offset ? offset.getInt()
                                            : arena.allocate(func, bytes)));
    }
    auto kernel = memrt::KernelOp::create(
        rewriter, op->getLoc(), op->getName().stripDialect(), operands, outs,
        workspace, kernelAttributes(op));
    // Checkpointing's recomputation stays visible in the plan and traces.
    if (op->hasAttr(MemOptDialect::kRecomputeAttrName))
      kernel->setAttr("memrt.recompute", rewriter.getUnitAttr());
    ++numKernels;
    rewriter.replaceOp(op, outs);
    return success();
  }

  ArenaAllocator &arena;
  llvm::Statistic &numKernels;
};

/// A reshape is a view: same bytes, another shape.
struct ReshapeLowering : public OpConversionPattern<ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type type = getTypeConverter()->convertType(op.getType());
    rewriter.replaceOpWithNewOp<memrt::ViewOp>(op, type, adaptor.getX());
    return success();
  }
};

/// Tensor constants become read-only constant buffers.
struct ConstantLowering : public OpConversionPattern<arith::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(arith::ConstantOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto value = dyn_cast<ElementsAttr>(op.getValue());
    if (!value)
      return failure();
    Type type = getTypeConverter()->convertType(op.getType());
    rewriter.replaceOpWithNewOp<memrt::ConstantOp>(op, type, value);
    return success();
  }
};

/// Replaces memopt's argument roles by memrt.role on every argument, and
/// memopt.updates by memrt.updates on results.
void convertFunctionAttributes(func::FuncOp func) {
  MLIRContext *ctx = func.getContext();
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    StringRef role = "data";
    // A frozen parameter is a parameter the plan never updates.
    func.removeArgAttr(i, MemOptDialect::kFrozenAttrName);
    if (func.removeArgAttr(i, MemOptDialect::kParamAttrName))
      role = "param";
    else if (func.removeArgAttr(i, MemOptDialect::kStateAttrName))
      role = "state";
    else if (func.removeArgAttr(i, MemOptDialect::kOptimizerStateAttrName))
      role = "optimizer_state";
    func.setArgAttr(i, memrt::MemRTDialect::kRoleAttrName,
                    StringAttr::get(ctx, role));
  }
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    if (Attribute index = func.removeResultAttr(
            i, StringAttr::get(ctx, MemOptDialect::kUpdatesAttrName)))
      func.setResultAttr(i, memrt::MemRTDialect::kUpdatesAttrName, index);
}

/// Ops the conversion knows. Anything else is reported before converting,
/// with the op's location, instead of a generic legalization failure.
bool isLowerable(Operation *op) {
  if (isa<MemOptDialect>(op->getDialect()) ||
      isa<func::FuncOp, func::ReturnOp, ModuleOp>(op))
    return true;
  if (auto constant = dyn_cast<arith::ConstantOp>(op))
    return isa<ElementsAttr>(constant.getValue());
  return false;
}

struct ConvertMemOptToMemRTPass
    : public memopt::impl::ConvertMemOptToMemRTBase<ConvertMemOptToMemRTPass> {
  using ConvertMemOptToMemRTBase::ConvertMemOptToMemRTBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (alignment <= 0 || alignment > 4096 || !llvm::isPowerOf2_64(alignment)) {
      module.emitError() << "convert-memopt-to-memrt: alignment must be a "
                            "power of two from 1 to 4096, got "
                         << static_cast<int64_t>(alignment);
      return signalPassFailure();
    }
    WalkResult unsupported = module.walk([&](Operation *op) {
      if (isa<ModuleOp>(op) && op != module.getOperation()) {
        op->emitOpError("cannot be lowered to memrt: nested modules are not "
                        "supported; run the conversion on the inner module");
        return WalkResult::interrupt();
      }
      if (isLowerable(op))
        return WalkResult::advance();
      op->emitOpError("cannot be lowered to memrt: only memopt ops, tensor "
                      "arith.constant and func ops are supported");
      return WalkResult::interrupt();
    });
    if (unsupported.wasInterrupted())
      return signalPassFailure();
    // Sizes and offsets are computed in int64_t: a graph too large for
    // them is refused, never wrapped.
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && func.getBody().hasOneBlock() &&
          failed(verifyGraphSizes(func, "convert-memopt-to-memrt")))
        return signalPassFailure();
    for (auto func : module.getOps<func::FuncOp>())
      for (Type type :
           func.isExternal() ? ArrayRef<Type>() : func.getArgumentTypes())
        if (auto t = dyn_cast<RankedTensorType>(type);
            !t || !t.hasStaticShape()) {
          func.emitOpError("argument type ")
              << type << " cannot be lowered: expected a static tensor";
          return signalPassFailure();
        }

    MLIRContext *ctx = &getContext();
    TypeConverter converter;
    converter.addConversion([](Type type) { return type; });
    converter.addConversion([](RankedTensorType type) -> Type {
      return MemRefType::get(type.getShape(), type.getElementType());
    });

    ConversionTarget target(*ctx);
    target.addLegalDialect<memrt::MemRTDialect>();
    target.addLegalOp<ModuleOp>();
    target.addIllegalDialect<MemOptDialect>();
    target.addIllegalOp<arith::ConstantOp>();
    // Declarations are other code's business: left as they are.
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp op) {
      if (op.isExternal())
        return true;
      return converter.isSignatureLegal(op.getFunctionType()) &&
             converter.isLegal(&op.getBody());
    });
    target.addDynamicallyLegalOp<func::ReturnOp>(
        [&](func::ReturnOp op) { return converter.isLegal(op); });

    ArenaAllocator arena(alignment);
    RewritePatternSet patterns(ctx);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                   converter);
    populateReturnOpTypeConversionPattern(patterns, converter);
    patterns.add<KernelLowering>(converter, ctx, arena, numKernels);
    patterns.add<ReshapeLowering, ConstantLowering, FreeLowering>(converter,
                                                                  ctx);

    // No folding while lowering: a fold (cast(cast(x)) -> x) would change
    // which buffer an op reads or writes after --memopt-inplace and
    // --memopt-plan-memory decided them (an in-place kernel overwriting a
    // value still read elsewhere, an arena slot reused while the folded
    // value lives on). Casts are folded before those decisions, by
    // --memopt-autodiff; what is left runs as it is.
    ConversionConfig config;
    config.foldingMode = DialectConversionFoldingMode::Never;
    if (failed(
            applyFullConversion(module, target, std::move(patterns), config)))
      return signalPassFailure();

    Builder b(ctx);
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      convertFunctionAttributes(func);
      // A planned function keeps the planner's arena; otherwise the bump
      // allocation's sum of all buffers.
      int64_t bytes = arena.arenaBytes(func);
      if (auto planned = func->getAttrOfType<IntegerAttr>(
              MemOptDialect::kArenaBytesAttrName))
        bytes = planned.getInt();
      func->removeAttr(MemOptDialect::kArenaBytesAttrName);
      func->removeAttr(MemOptDialect::kArenaLowerBoundAttrName);
      func->setAttr(memrt::MemRTDialect::kArenaBytesAttrName,
                    b.getI64IntegerAttr(bytes));
      func->setAttr(memrt::MemRTDialect::kAlignmentAttrName,
                    b.getI64IntegerAttr(alignment));
    }
  }
};

} // namespace
