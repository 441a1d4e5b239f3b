//===- Lora.cpp - low-rank adapters beside frozen weights -----------------===//
//
// `--memopt-lora` (Passes.td): Hu et al.'s LoRA on the forward graph. Every
// parameter of an adapted function is frozen (`memopt.frozen`) but those
// `trainable` names, and every op that a parameter whose name matches
// `targets` is the weight of gains a trainable low-rank update,
//
//   y = linear(x, W[, b])   →   y + (alpha / rank) · linear(linear(x, A), B)
//
// with A (rank × in) and B (out × rank) new parameters: A initialised as
// torch.nn.Linear initialises a weight (what PEFT's kaiming_uniform_(a=√5)
// gives), B zero (`memopt.initial_value = 0`), so the adapted graph starts
// as the original. A matmul weight takes the same adapter in its layout:
// x·W (W in × out) gains (x·A)·B with A in × rank and B rank × out, and
// x·Wᵀ (`transpose_b`) the linear form.
//
// A weight is named by its `loc("name")` (as imported graphs carry it and
// memopt-run sets it), else by its SSA name in the source file it was parsed
// from (read at its location), else `arg<N>`. A target that is read by anything
// but the weight operand of a linear or matmul, or that is not 2-D, is refused
// with an error at the argument: an adapter there would change what the graph
// computes in a way LoRA does not define. Targets that match nothing are an
// error too.
//
//===----------------------------------------------------------------------===//

#include "memopt/Dialect/MemOpt/IR/MemOptDialect.h"
#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"
#include "memopt/Dialect/MemOpt/Transforms/Passes.h"
#include "memopt/Dialect/MemOpt/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Regex.h"

#include <cmath>

namespace memopt {
#define GEN_PASS_DEF_MEMOPTLORA
#include "memopt/Dialect/MemOpt/Transforms/Passes.h.inc"
} // namespace memopt

using namespace mlir;
using namespace memopt;

namespace {

/// The names `targets` and `trainable` match: an argument's NameLoc; else
/// its SSA name in the source, read at its file location when that file
/// can be read (a graph memopt-opt parsed from a file); else `arg<N>`.
class ArgumentNames {
public:
  std::string operator()(BlockArgument arg) {
    if (auto name = dyn_cast<NameLoc>(arg.getLoc()))
      return name.getName().str();
    if (auto loc = dyn_cast<FileLineColLoc>(arg.getLoc()))
      if (std::string name = readName(loc); !name.empty())
        return name;
    return "arg" + std::to_string(arg.getArgNumber());
  }

private:
  /// The identifier after the `%` at `loc`, or "" (no such file, or no
  /// `%name` there).
  std::string readName(FileLineColLoc loc) {
    StringRef path = loc.getFilename().getValue();
    auto [it, inserted] = files.try_emplace(path);
    if (inserted) {
      auto buffer = llvm::MemoryBuffer::getFile(path);
      if (buffer)
        it->second = std::move(*buffer);
    }
    if (!it->second || loc.getLine() == 0 || loc.getColumn() == 0)
      return "";
    StringRef text = it->second->getBuffer();
    for (unsigned line = 1; line < loc.getLine(); ++line) {
      size_t next = text.find('\n');
      if (next == StringRef::npos)
        return "";
      text = text.drop_front(next + 1);
    }
    text = text.take_until([](char c) { return c == '\n'; });
    if (loc.getColumn() > text.size() || text[loc.getColumn() - 1] != '%')
      return "";
    StringRef name = text.drop_front(loc.getColumn()).take_while([](char c) {
      return llvm::isAlnum(c) || c == '_' || c == '.' || c == '$' || c == '-';
    });
    if (name.empty() || llvm::isDigit(name.front()))
      return "";
    return name.str();
  }

  llvm::StringMap<std::unique_ptr<llvm::MemoryBuffer>> files;
};

/// Where `weight` is read as a weight: a linear's weight operand, or a
/// matmul's right operand with a left operand that is not transposed.
LogicalResult checkUse(OpOperand &use, StringRef name) {
  Operation *user = use.getOwner();
  if (isa<LinearOp>(user) && use.getOperandNumber() == 1)
    return success();
  if (auto matmul = dyn_cast<MatMulOp>(user);
      matmul && use.getOperandNumber() == 1 && !matmul.getTransposeA())
    return success();
  return user->emitError()
         << "memopt-lora: target '" << name << "' is read here as operand #"
         << use.getOperandNumber() << " of '" << user->getName()
         << "'; adapters go only beside the weight of a linear or of a "
            "matmul (its right operand)";
}

struct MemOptLoraPass : public memopt::impl::MemOptLoraBase<MemOptLoraPass> {
  using MemOptLoraBase::MemOptLoraBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto fail = [&](const Twine &message) {
      module.emitError() << "memopt-lora: " << message;
      signalPassFailure();
    };
    if (rank < 1)
      return fail("rank must be >= 1, got " +
                  Twine(static_cast<int64_t>(rank)));
    if (!(std::isfinite(alpha) && alpha > 0)) {
      // The value as given (formatv's default would show 0.001 as 0.00).
      module.emitError() << "memopt-lora: alpha must be a finite number > 0, "
                            "got "
                         << static_cast<double>(alpha);
      return signalPassFailure();
    }
    if (targets.empty())
      return fail("targets=<regular expression over parameter names> is "
                  "required");
    llvm::Regex regex("^(" + targets + ")$");
    std::string why;
    if (!regex.isValid(why))
      return fail("targets: invalid regular expression '" + targets +
                  "': " + why);

    llvm::Regex keep("^(" + trainable + ")$");
    if (!trainable.empty() && !keep.isValid(why))
      return fail("trainable: invalid regular expression '" + trainable +
                  "': " + why);

    SmallVector<std::string> names;
    ArgumentNames argumentName;
    int matched = 0, kept = 0;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isDeclaration() ||
          (!function.empty() && func.getName() != function))
        continue;
      SmallVector<BlockArgument> weights;
      for (BlockArgument arg : func.getArguments()) {
        if (!func.getArgAttr(arg.getArgNumber(), MemOptDialect::kParamAttrName))
          continue;
        std::string name = argumentName(arg);
        names.push_back(name);
        if (regex.match(name))
          weights.push_back(arg);
      }
      if (weights.empty())
        continue;
      if (!func.getBody().hasOneBlock())
        return signalFailure(
            func.emitOpError("memopt-lora expects a single-block function"));
      if (!SymbolTable::symbolKnownUseEmpty(func, module))
        return signalFailure(func.emitOpError(
            "is referenced in the module; adding adapter arguments would "
            "break its callers"));
      // Only the adapters train, and what `trainable` names, as PEFT's
      // mark_only_lora_as_trainable (bias="none", modules_to_save).
      // The attributes set all at once (setArgAttr makes a new attribute
      // array per argument: quadratic in the parameters).
      SmallVector<DictionaryAttr> argAttrs;
      func.getAllArgAttrs(argAttrs);
      for (BlockArgument arg : func.getArguments()) {
        unsigned i = arg.getArgNumber();
        if (!func.getArgAttr(i, MemOptDialect::kParamAttrName))
          continue;
        if (!trainable.empty() && keep.match(argumentName(arg))) {
          ++kept;
          continue;
        }
        NamedAttrList attrs(argAttrs[i]);
        attrs.set(MemOptDialect::kFrozenAttrName,
                  UnitAttr::get(func.getContext()));
        argAttrs[i] = attrs.getDictionary(func.getContext());
      }
      func.setAllArgAttrs(argAttrs);
      AppendedArguments adapters(func);
      for (BlockArgument weight : weights) {
        if (failed(adapt(func, adapters, weight, argumentName(weight))))
          return signalPassFailure();
        ++matched;
      }
    }
    if (matched == 0) {
      // The first names, enough to see how they are spelled: a deep model
      // has thousands.
      constexpr size_t kListed = 32;
      std::string list;
      for (const std::string &name : ArrayRef(names).take_front(kListed))
        list += (list.empty() ? "" : ", ") + name;
      if (names.size() > kListed)
        list += ", and " + std::to_string(names.size() - kListed) + " more";
      return fail("targets '" + targets + "' matched no parameter (" +
                  (list.empty() ? std::string("there are none")
                                : "the parameters are: " + list) +
                  ")");
    }
    // A typo must not silently freeze what the user meant to keep training.
    if (!trainable.empty() && kept == 0)
      return fail("trainable '" + trainable +
                  "' matched no parameter of the adapted functions");
  }

  void signalFailure(InFlightDiagnostic diag) {
    (void)diag;
    signalPassFailure();
  }

  LogicalResult adapt(func::FuncOp func, AppendedArguments &adapters,
                      BlockArgument weight, const std::string &name) {
    auto type = cast<RankedTensorType>(weight.getType());
    // At the function: an argument's own location may be only its name.
    if (type.getRank() != 2)
      return func.emitOpError()
             << "argument #" << weight.getArgNumber()
             << ": memopt-lora: target '" << name << "' has type " << type
             << "; adapters need a 2-D weight";
    if (weight.use_empty())
      return func.emitOpError()
             << "argument #" << weight.getArgNumber()
             << ": memopt-lora: target '" << name << "' is not read";
    for (OpOperand &use : weight.getUses())
      if (failed(checkUse(use, name)))
        return failure();

    // A and B in the layout of the weight's first use (every use of one
    // weight has the same layout: a linear's O×I or a matmul's).
    MLIRContext *ctx = func.getContext();
    Type element = type.getElementType();
    int64_t r = rank;
    bool inByOut = false; // x·W with W in × out
    for (OpOperand &use : weight.getUses())
      if (auto matmul = dyn_cast<MatMulOp>(use.getOwner()))
        inByOut |= !matmul.getTransposeB();
    for (OpOperand &use : weight.getUses()) {
      auto matmul = dyn_cast<MatMulOp>(use.getOwner());
      bool thisInByOut = matmul && !matmul.getTransposeB();
      if (thisInByOut != inByOut)
        return use.getOwner()->emitError()
               << "memopt-lora: target '" << name
               << "' is read both as in × out and as out × in";
    }
    int64_t out = inByOut ? type.getDimSize(1) : type.getDimSize(0);
    int64_t in = inByOut ? type.getDimSize(0) : type.getDimSize(1);
    auto aType = RankedTensorType::get(
        inByOut ? ArrayRef<int64_t>{in, r} : ArrayRef<int64_t>{r, in}, element);
    auto bType = RankedTensorType::get(inByOut ? ArrayRef<int64_t>{r, out}
                                               : ArrayRef<int64_t>{out, r},
                                       element);
    auto paramAttr =
        NamedAttribute(StringAttr::get(ctx, MemOptDialect::kParamAttrName),
                       UnitAttr::get(ctx));
    auto zero = NamedAttribute(
        StringAttr::get(ctx, MemOptDialect::kInitialValueAttrName),
        FloatAttr::get(Float64Type::get(ctx), 0.0));
    Value a = adapters.append(
        aType, DictionaryAttr::get(ctx, {paramAttr}),
        NameLoc::get(StringAttr::get(ctx, name + ".lora_A"), weight.getLoc()));
    Value b = adapters.append(
        bType, DictionaryAttr::get(ctx, {paramAttr, zero}),
        NameLoc::get(StringAttr::get(ctx, name + ".lora_B"), weight.getLoc()));

    SmallVector<Operation *> users;
    for (Operation *user : weight.getUsers())
      if (!llvm::is_contained(users, user))
        users.push_back(user);
    for (Operation *user : users) {
      OpBuilder builder(user->getContext());
      builder.setInsertionPointAfter(user);
      Location loc = user->getLoc();
      Value x = user->getOperand(0), y = user->getResult(0);
      Value delta;
      if (isa<LinearOp>(user) ||
          (isa<MatMulOp>(user) && cast<MatMulOp>(user).getTransposeB())) {
        Value xa = LinearOp::create(builder, loc, x, a, Value());
        delta = LinearOp::create(builder, loc, xa, b, Value());
      } else {
        Value xa = MatMulOp::create(builder, loc, x, a, false, false);
        delta = MatMulOp::create(builder, loc, xa, b, false, false);
      }
      auto scaleType = RankedTensorType::get({}, element);
      Value scale = arith::ConstantOp::create(
          builder, loc, scaleType,
          DenseElementsAttr::get(scaleType,
                                 builder.getFloatAttr(element, alpha / rank)));
      Value scaled = MulOp::create(builder, loc, delta, scale);
      if (scaled.getType() != y.getType())
        return user->emitError()
               << "memopt-lora: the adapter of '" << name << "' computes "
               << scaled.getType() << " beside " << y.getType();
      Value sum = AddOp::create(builder, loc, y, scaled);
      y.replaceAllUsesExcept(sum, sum.getDefiningOp());
    }
    return success();
  }
};

} // namespace
