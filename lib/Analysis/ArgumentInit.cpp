//===- ArgumentInit.cpp - PyTorch-style initialisation from uses ----------===//
//
// Each rule looks at one use of an argument: the op and operand position
// decide the initialiser, exactly as the corresponding torch.nn module's
// reset_parameters() would. Values reaching the use through a reshape count
// as the argument (a flattened weight is still a weight).
//
//===----------------------------------------------------------------------===//

#include "memopt/Analysis/ArgumentInit.h"

#include "memopt/Dialect/MemOpt/IR/MemOptDialect.h"
#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace memopt;

namespace {

using Init = ArgumentInit;

Init uniform(double bound, std::string reason) {
  Init init;
  init.kind = Init::Kind::Uniform;
  init.bound = bound;
  init.reason = std::move(reason);
  return init;
}

Init constant(double value, std::string reason) {
  Init init;
  init.kind = Init::Kind::Constant;
  init.value = value;
  init.reason = std::move(reason);
  return init;
}

Init normal(double stddev, std::string reason) {
  Init init;
  init.kind = Init::Kind::Normal;
  init.stddev = stddev;
  init.reason = std::move(reason);
  return init;
}

Init indices(int64_t limit, std::string reason) {
  Init init;
  init.kind = Init::Kind::RandomIndices;
  init.limit = limit;
  init.reason = std::move(reason);
  return init;
}

/// fan_in of a PyTorch weight: every dimension but the first (output
/// channels or features).
int64_t fanIn(Value weight) {
  auto type = cast<RankedTensorType>(weight.getType());
  int64_t fan = 1;
  for (int64_t d : type.getShape().drop_front())
    fan *= d;
  return fan;
}

/// kaiming_uniform_(a=√5) on a weight of fan_in `fan` has the same bound as
/// the bias rule: gain √(2/(1+5)), bound √3·gain/√fan = 1/√fan.
double kaimingBound(int64_t fan) { return 1.0 / std::sqrt(double(fan)); }

/// The initialiser a single use implies for the value in operand `index`,
/// or std::nullopt when this use says nothing.
std::optional<Init> initFromUse(Operation *user, unsigned index) {
  // The weight (operand 1) and the bias (operand `bias`) of a layer.
  auto weightRule = [&](Value weight, StringRef op,
                        unsigned bias = 2) -> std::optional<Init> {
    int64_t fan = fanIn(weight);
    std::string where =
        (op + " " + (index == 1 ? "weight" : "bias") + ", fan_in " + Twine(fan))
            .str();
    if (index == 1 || index == bias)
      return uniform(kaimingBound(fan), where);
    return std::nullopt;
  };
  return llvm::TypeSwitch<Operation *, std::optional<Init>>(user)
      .Case([&](Conv2DOp op) { return weightRule(op.getWeight(), "conv2d"); })
      .Case([&](LinearOp op) { return weightRule(op.getWeight(), "linear"); })
      .Case<BatchNormOp, BatchNormActOp>(
          [&](Operation *op) -> std::optional<Init> {
            // batch_norm_act is batch_norm followed by an activation.
            StringRef name = op->getName().stripDialect();
            switch (index) {
            case 1:
              return constant(1, (name + " gamma").str());
            case 2:
              return constant(0, (name + " beta").str());
            case 3:
              return constant(0, (name + " running_mean").str());
            case 4:
              return constant(1, (name + " running_var").str());
            default:
              return std::nullopt;
            }
          })
      .Case([&](LayerNormOp) -> std::optional<Init> {
        if (index == 1)
          return constant(1, "layer_norm gamma");
        if (index == 2)
          return constant(0, "layer_norm beta");
        return std::nullopt;
      })
      .Case([&](RmsNormOp) -> std::optional<Init> {
        if (index == 1)
          return constant(1, "rms_norm gamma");
        return std::nullopt;
      })
      .Case([&](EmbeddingOp op) -> std::optional<Init> {
        int64_t vocab = op.getTable().getType().getDimSize(0);
        if (index == 0)
          return normal(1.0, "embedding table");
        return indices(vocab,
                       ("embedding ids, vocabulary " + Twine(vocab)).str());
      })
      .Case([&](CrossEntropyOp op) -> std::optional<Init> {
        int64_t classes = op.getLogits().getType().getDimSize(1);
        if (index != 1)
          return std::nullopt;
        Init init = indices(
            classes,
            ("cross_entropy labels, " + Twine(classes) + " classes").str());
        init.classLabels = true;
        return init;
      })
      .Case([&](LinearCrossEntropyOp op) -> std::optional<Init> {
        // A linear layer's weight and cross_entropy's labels in one op.
        int64_t classes = op.getWeight().getType().getDimSize(0);
        if (index == 1 || index == 3) // The weight and the bias, as linear's.
          return weightRule(op.getWeight(), "linear_cross_entropy",
                            /*bias=*/3);
        if (index != 2)
          return std::nullopt;
        Init init = indices(classes, ("linear_cross_entropy labels, " +
                                      Twine(classes) + " classes")
                                         .str());
        init.classLabels = true;
        return init;
      })
      .Default([](Operation *) { return std::nullopt; });
}

/// The first use-derived initialiser of `value`, looking through reshapes.
std::optional<Init> initFromUses(Value value) {
  for (OpOperand &use : value.getUses()) {
    if (auto reshape = dyn_cast<ReshapeOp>(use.getOwner())) {
      if (auto init = initFromUses(reshape.getResult()))
        return init;
      continue;
    }
    if (auto init = initFromUse(use.getOwner(), use.getOperandNumber()))
      return init;
  }
  return std::nullopt;
}

} // namespace

FailureOr<std::vector<ArgumentInit>>
memopt::computeArgumentInit(func::FuncOp func) {
  std::vector<ArgumentInit> result;
  for (BlockArgument arg : func.getArguments()) {
    unsigned i = arg.getArgNumber();
    bool isParam = bool(func.getArgAttr(i, MemOptDialect::kParamAttrName));
    bool isState = bool(func.getArgAttr(i, MemOptDialect::kStateAttrName));
    // A value the graph gives (LoRA's B starts at zero) comes first.
    if (auto value = func.getArgAttrOfType<FloatAttr>(
            i, MemOptDialect::kInitialValueAttrName)) {
      result.push_back(
          constant(value.getValueAsDouble(), "memopt.initial_value"));
      continue;
    }
    std::optional<Init> init = initFromUses(arg);
    auto type = cast<ShapedType>(arg.getType());
    if (isParam || isState) {
      if (!init || init->kind == Init::Kind::RandomIndices)
        init = isParam ? normal(0.02, "parameter without a PyTorch rule")
                       : constant(0, "state without a PyTorch rule");
    } else if (isa<IntegerType>(type.getElementType())) {
      if (!init || init->kind != Init::Kind::RandomIndices)
        return emitError(arg.getLoc())
               << "cannot make synthetic values for integer data argument #"
               << i << ": it feeds no cross_entropy labels or embedding ids, "
               << "so its valid range is unknown";
    } else {
      init = Init();
      init->reason = "data, normal(0, 1)";
    }
    result.push_back(*init);
  }
  return result;
}
