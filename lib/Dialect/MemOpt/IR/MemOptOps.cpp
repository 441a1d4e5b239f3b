//===- MemOptOps.cpp - memopt op shape rules and verifiers ----------------===//
//
// Every forward op infers its result types from its operands and attributes
// (InferTypeOpInterface). The same rules verify the generic form, so a bad
// graph is reported once, at the op, saying what was expected.
//
//===----------------------------------------------------------------------===//

#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;
using namespace memopt;

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

std::string memopt::formatShape(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  std::string s;
  llvm::raw_string_ostream os(s);
  llvm::interleave(shape, os, "x");
  return s;
}

std::optional<SmallVector<int64_t>>
memopt::broadcastShapes(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t l = i < lhs.size() ? lhs[lhs.size() - 1 - i] : 1;
    int64_t r = i < rhs.size() ? rhs[rhs.size() - 1 - i] : 1;
    if (l != r && l != 1 && r != 1)
      return std::nullopt;
    out[rank - 1 - i] = l == 1 ? r : l;
  }
  return out;
}

/// The element count of a static shape, or std::nullopt when it does not fit
/// in int64_t.
static std::optional<int64_t> numElements(ArrayRef<int64_t> shape) {
  if (llvm::is_contained(shape, 0))
    return 0;
  int64_t count = 1;
  for (int64_t size : shape) {
    std::optional<int64_t> product = llvm::checkedMul(count, size);
    if (!product)
      return std::nullopt;
    count = *product;
  }
  return count;
}

LogicalResult memopt::detail::verifyFiniteFloatAttributes(Operation *op) {
  for (NamedAttribute attr : op->getAttrs()) {
    auto value = dyn_cast<FloatAttr>(attr.getValue());
    if (!value || value.getValue().isFinite())
      continue;
    const llvm::APFloat &v = value.getValue();
    return op->emitOpError() << "attribute '" << attr.getName().getValue()
                             << "' must be a finite number, got "
                             << (v.isNaN()        ? "nan"
                                 : v.isNegative() ? "-inf"
                                                  : "inf");
  }
  return success();
}

LogicalResult
memopt::detail::checkInferredResultTypes(std::optional<Location> location,
                                         StringRef opName, TypeRange inferred,
                                         TypeRange actual) {
  if (inferred.size() != actual.size())
    return emitOptionalError(location, "'", opName, "' op expected ",
                             inferred.size(), " result(s), got ",
                             actual.size());
  for (auto [i, want, got] : llvm::enumerate(inferred, actual)) {
    if (want == got)
      continue;
    std::string which =
        inferred.size() == 1 ? "result" : "result #" + std::to_string(i);
    auto wantT = dyn_cast<RankedTensorType>(want);
    auto gotT = dyn_cast<RankedTensorType>(got);
    if (wantT && gotT && wantT.getElementType() == gotT.getElementType() &&
        wantT.getEncoding() == gotT.getEncoding())
      return emitOptionalError(location, "'", opName, "' op expected ", which,
                               " shape ", formatShape(wantT.getShape()),
                               ", got ", formatShape(gotT.getShape()));
    return emitOptionalError(location, "'", opName, "' op expected ", which,
                             " type ", want, ", got ", got);
  }
  return success();
}

namespace {

/// Reports shape-rule violations as `'memopt.<op>' op <message>` at the op's
/// location, the same text whether it fires while parsing the custom form or
/// while verifying the generic form.
class ShapeChecker {
public:
  ShapeChecker(std::optional<Location> loc, StringRef opName)
      : loc(loc), opName(opName) {}

  template <typename... Args> LogicalResult error(Args &&...args) const {
    return emitOptionalError(loc, "'", opName, "' op ",
                             std::forward<Args>(args)...);
  }

  /// The operand's statically shaped tensor type, or a diagnostic. The
  /// custom-form parser infers result types before the verifier checks the
  /// operand types, so the shape rules must not compute with dynamic sizes.
  FailureOr<RankedTensorType> tensor(Value v, StringRef name) const {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t) {
      (void)error("expected ", name, " to be a ranked tensor, got ",
                  v.getType());
      return failure();
    }
    if (!t.hasStaticShape()) {
      (void)error("expected ", name, " to have a static shape, got ", t);
      return failure();
    }
    if (!numElements(t.getShape())) {
      (void)error("expected ", name, " to have fewer than 2^63 elements, got ",
                  t);
      return failure();
    }
    return t;
  }

  /// Appends a result tensor type, or fails when its element count does not
  /// fit in int64_t.
  LogicalResult result(ArrayRef<int64_t> shape, Type elementType,
                       SmallVectorImpl<Type> &results) const {
    if (!numElements(shape))
      return error("result shape ", formatShape(shape),
                   " has 2^63 elements or more");
    results.push_back(RankedTensorType::get(shape, elementType));
    return success();
  }

  /// The operand's type with exactly `rank` dimensions, or a diagnostic that
  /// names what the dimensions mean (`layout`, e.g. "NxCxHxW").
  FailureOr<RankedTensorType> tensorOfRank(Value v, StringRef name,
                                           int64_t rank,
                                           StringRef layout = "") const {
    FailureOr<RankedTensorType> t = tensor(v, name);
    if (failed(t))
      return failure();
    if (t->getRank() != rank) {
      if (layout.empty())
        (void)error("expected ", name, " of rank ", rank, ", got rank ",
                    t->getRank(), " (", *t, ")");
      else
        (void)error("expected ", rank, "-D ", name, " (", layout,
                    "), got rank ", t->getRank(), " (", *t, ")");
      return failure();
    }
    return t;
  }

  LogicalResult sameElementType(RankedTensorType a, StringRef aName,
                                RankedTensorType b, StringRef bName) const {
    if (a.getElementType() == b.getElementType())
      return success();
    return error("expected ", bName, " element type ", a.getElementType(),
                 " (as ", aName, "), got ", b.getElementType());
  }

  /// Checks an i64 array attribute's length and lower bound.
  LogicalResult array(ArrayRef<int64_t> values, StringRef name, size_t size,
                      int64_t min) const {
    if (values.size() != size)
      return error("expected '", name, "' to have ", size, " values, got ",
                   values.size());
    for (int64_t v : values)
      if (v < min)
        return error("expected '", name, "' values ≥ ", min, ", got [",
                     llvm::make_range(values.begin(), values.end()), "]");
    return success();
  }

  /// Fails with a diagnostic when a required attribute is missing (the
  /// custom-form parser infers types before the verifier checks presence).
  LogicalResult present(Attribute attr, StringRef name) const {
    if (attr)
      return success();
    return error("requires attribute '", name, "'");
  }

  /// Normalises a possibly negative axis into [0, rank).
  FailureOr<int64_t> axis(int64_t axis, int64_t rank, StringRef name) const {
    if (axis < -rank || axis >= rank) {
      (void)error("expected '", name, "' in [", -rank, ", ", rank,
                  ") for rank ", rank, ", got ", axis);
      return failure();
    }
    return axis < 0 ? axis + rank : axis;
  }

private:
  std::optional<Location> loc;
  StringRef opName;
};

/// Result element type of a 0-d loss.
RankedTensorType scalarOf(RankedTensorType t) {
  return RankedTensorType::get({}, t.getElementType());
}

} // namespace

// Shared shape rule of ops whose result is exactly their first operand's type.
template <typename OpTy>
static LogicalResult inferSameAsOperand(std::optional<Location> loc, Value x,
                                        SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, OpTy::getOperationName());
  FailureOr<RankedTensorType> t = check.tensor(x, "operand");
  if (failed(t))
    return failure();
  results.push_back(*t);
  return success();
}

//===----------------------------------------------------------------------===//
// Conv2DOp
//===----------------------------------------------------------------------===//

LogicalResult Conv2DOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, getOperationName());
  auto input = check.tensorOfRank(adaptor.getInput(), "input", 4, "NxCxHxW");
  auto weight =
      check.tensorOfRank(adaptor.getWeight(), "weight", 4, "Kx(C/groups)xRxS");
  if (failed(input) || failed(weight) ||
      failed(check.sameElementType(*input, "input", *weight, "weight")))
    return failure();
  ArrayRef<int64_t> strides = adaptor.getStrides();
  ArrayRef<int64_t> padding = adaptor.getPadding();
  ArrayRef<int64_t> dilations = adaptor.getDilations();
  int64_t groups = adaptor.getGroups();
  if (failed(check.array(strides, "strides", 2, 1)) ||
      failed(check.array(padding, "padding", 2, 0)) ||
      failed(check.array(dilations, "dilations", 2, 1)))
    return failure();
  if (groups < 1)
    return check.error("expected 'groups' ≥ 1, got ", groups);

  ArrayRef<int64_t> in = input->getShape(), w = weight->getShape();
  int64_t n = in[0], c = in[1], k = w[0];
  if (c % groups != 0 || k % groups != 0)
    return check.error("expected input channels (", c,
                       ") and output channels (", k, ") divisible by groups (",
                       groups, ")");
  if (w[1] != c / groups)
    return check.error("expected weight shape ", k, "x", c / groups, "x", w[2],
                       "x", w[3], " for ", c, " input channels and ", groups,
                       " group(s), got ", formatShape(w));
  if (Value bias = adaptor.getBias()) {
    auto b = check.tensorOfRank(bias, "bias", 1);
    if (failed(b) || failed(check.sameElementType(*input, "input", *b, "bias")))
      return failure();
    if (b->getDimSize(0) != k)
      return check.error("expected bias of ", k,
                         " elements (output channels), got ", b->getDimSize(0));
  }
  // PyTorch's rule: the padded input must hold the dilated kernel,
  // `(R - 1) * dh + 1` rows (likewise columns).
  SmallVector<int64_t, 2> padded, window;
  for (int d = 0; d < 2; ++d) {
    std::optional<int64_t> pad = llvm::checkedMul<int64_t>(2, padding[d]);
    if (pad)
      pad = llvm::checkedAdd(in[2 + d], *pad);
    std::optional<int64_t> span = llvm::checkedMul(dilations[d], w[2 + d] - 1);
    if (span)
      span = llvm::checkedAdd<int64_t>(*span, 1);
    if (!pad)
      return check.error("'padding' [", padding[0], ", ", padding[1],
                         "] overflows 64-bit sizes");
    if (!span)
      return check.error("'dilations' [", dilations[0], ", ", dilations[1],
                         "] overflow 64-bit sizes");
    padded.push_back(*pad);
    window.push_back(*span);
  }
  SmallVector<int64_t, 4> out = {n, k, 0, 0};
  for (int d = 0; d < 2; ++d) {
    std::optional<int64_t> extent = llvm::checkedSub(padded[d], window[d]);
    if (!extent)
      return check.error("'dilations' [", dilations[0], ", ", dilations[1],
                         "] overflow 64-bit sizes");
    if (*extent < 0)
      return check.error("input ", in[2], "x", in[3], " with padding [",
                         padding[0], ", ", padding[1],
                         "] is smaller than the dilated kernel ", window[0],
                         "x", window[1]);
    out[2 + d] = *extent / strides[d] + 1;
  }
  return check.result(out, input->getElementType(), results);
}

//===----------------------------------------------------------------------===//
// LinearOp, MatMulOp
//===----------------------------------------------------------------------===//

LogicalResult LinearOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, getOperationName());
  auto input = check.tensor(adaptor.getInput(), "input");
  auto weight = check.tensorOfRank(adaptor.getWeight(), "weight", 2, "OxI");
  if (failed(input) || failed(weight) ||
      failed(check.sameElementType(*input, "input", *weight, "weight")))
    return failure();
  if (input->getRank() < 1)
    return check.error("expected input of rank ≥ 1, got a scalar");
  int64_t inFeatures = input->getShape().back();
  int64_t outFeatures = weight->getDimSize(0);
  if (weight->getDimSize(1) != inFeatures)
    return check.error("expected weight shape ", outFeatures, "x", inFeatures,
                       " for ", inFeatures, " input features, got ",
                       formatShape(weight->getShape()));
  if (Value bias = adaptor.getBias()) {
    auto b = check.tensorOfRank(bias, "bias", 1);
    if (failed(b) || failed(check.sameElementType(*input, "input", *b, "bias")))
      return failure();
    if (b->getDimSize(0) != outFeatures)
      return check.error("expected bias of ", outFeatures,
                         " elements (output features), got ", b->getDimSize(0));
  }
  SmallVector<int64_t> out(input->getShape());
  out.back() = outFeatures;
  return check.result(out, input->getElementType(), results);
}

LogicalResult MatMulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, getOperationName());
  auto a = check.tensor(adaptor.getA(), "a");
  auto b = check.tensor(adaptor.getB(), "b");
  if (failed(a) || failed(b) || failed(check.sameElementType(*a, "a", *b, "b")))
    return failure();
  if (a->getRank() < 2 || b->getRank() < 2)
    return check.error("expected operands of rank ≥ 2, got ", *a, " and ", *b);
  ArrayRef<int64_t> as = a->getShape(), bs = b->getShape();
  int64_t m = as[as.size() - 2], ka = as.back();
  if (adaptor.getTransposeA())
    std::swap(m, ka);
  int64_t kb = bs[bs.size() - 2], n = bs.back();
  if (adaptor.getTransposeB())
    std::swap(kb, n);
  if (ka != kb)
    return check.error("expected contracted dimensions to agree, got ", ka,
                       " (a", adaptor.getTransposeA() ? ", transposed" : "",
                       ") and ", kb, " (b",
                       adaptor.getTransposeB() ? ", transposed" : "", ")");
  auto batch = broadcastShapes(as.drop_back(2), bs.drop_back(2));
  if (!batch)
    return check.error("batch dimensions ", formatShape(as.drop_back(2)),
                       " and ", formatShape(bs.drop_back(2)),
                       " do not broadcast");
  SmallVector<int64_t> out = *batch;
  out.append({m, n});
  return check.result(out, a->getElementType(), results);
}

//===----------------------------------------------------------------------===//
// Element-wise ops
//===----------------------------------------------------------------------===//

#define MEMOPT_SAME_AS_OPERAND(OP, GETTER)                                     \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *, std::optional<Location> loc, Adaptor adaptor,             \
      SmallVectorImpl<Type> &results) {                                        \
    return inferSameAsOperand<OP>(loc, adaptor.GETTER(), results);             \
  }
MEMOPT_SAME_AS_OPERAND(ReluOp, getX)
MEMOPT_SAME_AS_OPERAND(GeluOp, getX)
MEMOPT_SAME_AS_OPERAND(SigmoidOp, getX)
MEMOPT_SAME_AS_OPERAND(TanhOp, getX)
MEMOPT_SAME_AS_OPERAND(LeakyReluOp, getX)
MEMOPT_SAME_AS_OPERAND(EluOp, getX)
#undef MEMOPT_SAME_AS_OPERAND

template <typename OpTy>
static LogicalResult inferBroadcast(std::optional<Location> loc,
                                    typename OpTy::Adaptor adaptor,
                                    SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, OpTy::getOperationName());
  auto lhs = check.tensor(adaptor.getLhs(), "lhs");
  auto rhs = check.tensor(adaptor.getRhs(), "rhs");
  if (failed(lhs) || failed(rhs) ||
      failed(check.sameElementType(*lhs, "lhs", *rhs, "rhs")))
    return failure();
  auto shape = broadcastShapes(lhs->getShape(), rhs->getShape());
  if (!shape)
    return check.error("operand shapes ", formatShape(lhs->getShape()), " and ",
                       formatShape(rhs->getShape()), " do not broadcast");
  return check.result(*shape, lhs->getElementType(), results);
}

#define MEMOPT_BROADCAST(OP)                                                   \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *, std::optional<Location> loc, Adaptor adaptor,             \
      SmallVectorImpl<Type> &results) {                                        \
    return inferBroadcast<OP>(loc, adaptor, results);                          \
  }
MEMOPT_BROADCAST(AddOp)
MEMOPT_BROADCAST(SubOp)
MEMOPT_BROADCAST(MulOp)
MEMOPT_BROADCAST(DivOp)
#undef MEMOPT_BROADCAST

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

/// The shape rules of training-mode batch norm, shared by batch_norm and
/// batch_norm_act (whose extra `saved_invstd` is per channel, like gamma).
template <typename OpTy>
static LogicalResult inferBatchNorm(std::optional<Location> loc,
                                    typename OpTy::Adaptor adaptor,
                                    SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, OpTy::getOperationName());
  auto x = check.tensor(adaptor.getX(), "x");
  auto gamma = check.tensorOfRank(adaptor.getGamma(), "gamma", 1);
  if (failed(x) || failed(gamma))
    return failure();
  if (x->getRank() < 2)
    return check.error("expected x of rank ≥ 2 (NxCx...), got rank ",
                       x->getRank());
  int64_t c = x->getDimSize(1);
  if (gamma->getDimSize(0) != c)
    return check.error("expected per-channel operands of ", c,
                       " elements (x's dimension 1), got ",
                       gamma->getDimSize(0));
  // As PyTorch in training mode: the batch variance needs two values.
  SmallVector<int64_t> perChannel(x->getShape());
  perChannel.erase(perChannel.begin() + 1);
  if (numElements(perChannel) == 1)
    return check.error("expected more than 1 value per channel for the batch "
                       "statistics, got x of shape ",
                       formatShape(x->getShape()));
  for (auto [name, v] : {std::pair<StringRef, Value>{"beta", adaptor.getBeta()},
                         {"running_mean", adaptor.getRunningMean()},
                         {"running_var", adaptor.getRunningVar()}})
    if (v.getType() != *gamma)
      return check.error("expected ", name, " of type ", *gamma,
                         " (as gamma), got ", v.getType());
  double eps = adaptor.getEpsilon().convertToDouble();
  double momentum = adaptor.getMomentum().convertToDouble();
  if (!(eps > 0))
    return check.error("expected 'epsilon' > 0, got ", eps);
  if (!(momentum >= 0 && momentum <= 1))
    return check.error("expected 'momentum' in [0, 1], got ", momentum);
  results.append({*x, *gamma, *gamma});
  return success();
}

LogicalResult BatchNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  return inferBatchNorm<BatchNormOp>(loc, adaptor, results);
}

LogicalResult BatchNormActOp::inferReturnTypes(MLIRContext *,
                                               std::optional<Location> loc,
                                               Adaptor adaptor,
                                               SmallVectorImpl<Type> &results) {
  if (failed(inferBatchNorm<BatchNormActOp>(loc, adaptor, results)))
    return failure();
  results.push_back(results.back()); // saved_invstd, like gamma
  return success();
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, getOperationName());
  auto x = check.tensor(adaptor.getX(), "x");
  auto gamma = check.tensor(adaptor.getGamma(), "gamma");
  if (failed(x) || failed(gamma))
    return failure();
  ArrayRef<int64_t> xs = x->getShape(), gs = gamma->getShape();
  if (gs.empty() || gs.size() > xs.size() || xs.take_back(gs.size()) != gs)
    return check.error("expected gamma's shape (", formatShape(gs),
                       ") to be a non-empty suffix of x's shape (",
                       formatShape(xs), ")");
  if (adaptor.getBeta().getType() != *gamma)
    return check.error("expected beta of type ", *gamma, " (as gamma), got ",
                       adaptor.getBeta().getType());
  double eps = adaptor.getEpsilon().convertToDouble();
  if (!(eps > 0))
    return check.error("expected 'epsilon' > 0, got ", eps);
  results.push_back(*x);
  return success();
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

template <typename OpTy>
static LogicalResult inferPool2D(std::optional<Location> loc,
                                 typename OpTy::Adaptor adaptor,
                                 SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, OpTy::getOperationName());
  auto x = check.tensorOfRank(adaptor.getX(), "x", 4, "NxCxHxW");
  if (failed(x) ||
      failed(check.present(adaptor.getKernelSizeAttr(), "kernel_size")))
    return failure();
  ArrayRef<int64_t> kernel = adaptor.getKernelSize();
  ArrayRef<int64_t> strides =
      adaptor.getStrides() ? *adaptor.getStrides() : kernel;
  ArrayRef<int64_t> padding = adaptor.getPadding();
  if (failed(check.array(kernel, "kernel_size", 2, 1)) ||
      failed(check.array(strides, "strides", 2, 1)) ||
      failed(check.array(padding, "padding", 2, 0)))
    return failure();
  SmallVector<int64_t, 4> out(x->getShape());
  for (int d = 0; d < 2; ++d) {
    if (padding[d] > kernel[d] / 2)
      return check.error(
          "expected 'padding' at most half of 'kernel_size', got ", "padding ",
          padding[d], " for kernel ", kernel[d]);
    // Cannot overflow: 2 * padding <= kernel.
    int64_t extent = out[2 + d] - kernel[d] + 2 * padding[d];
    if (extent < 0)
      return check.error("input ", formatShape(x->getShape().drop_front(2)),
                         " with padding [", padding[0], ", ", padding[1],
                         "] is smaller than the window ", formatShape(kernel));
    out[2 + d] = extent / strides[d] + 1;
  }
  return check.result(out, x->getElementType(), results);
}

LogicalResult MaxPool2DOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  return inferPool2D<MaxPool2DOp>(loc, adaptor, results);
}

LogicalResult AvgPool2DOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  return inferPool2D<AvgPool2DOp>(loc, adaptor, results);
}

LogicalResult
GlobalAvgPool2DOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                    Adaptor adaptor,
                                    SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, getOperationName());
  auto x = check.tensorOfRank(adaptor.getX(), "x", 4, "NxCxHxW");
  if (failed(x))
    return failure();
  results.push_back(RankedTensorType::get({x->getDimSize(0), x->getDimSize(1)},
                                          x->getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Softmax, dropout
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, getOperationName());
  auto x = check.tensor(adaptor.getX(), "x");
  if (failed(x))
    return failure();
  if (x->getRank() < 1)
    return check.error("expected x of rank ≥ 1, got a scalar");
  auto axis = check.axis(adaptor.getAxis(), x->getRank(), "axis");
  if (failed(axis))
    return failure();
  if (adaptor.getCausal()) {
    int64_t rank = x->getRank();
    if (rank < 2 || *axis != rank - 1 ||
        x->getDimSize(rank - 1) != x->getDimSize(rank - 2))
      return check.error("'causal' needs the softmax over the last axis of "
                         "square trailing dimensions (...xTxT), got ",
                         *x, " with axis ",
                         static_cast<int64_t>(adaptor.getAxis()));
  }
  results.push_back(*x);
  return success();
}

LogicalResult DropoutOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, getOperationName());
  double p = adaptor.getP().convertToDouble();
  if (!(p >= 0 && p < 1))
    return check.error("expected 'p' in [0, 1), got ", p);
  return inferSameAsOperand<DropoutOp>(loc, adaptor.getX(), results);
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto in = cast<RankedTensorType>(getX().getType());
  auto out = cast<RankedTensorType>(getResult().getType());
  if (in.getElementType() != out.getElementType())
    return emitOpError("expected result element type ")
           << in.getElementType() << " (as the operand), got "
           << out.getElementType();
  std::optional<int64_t> inCount = numElements(in.getShape());
  std::optional<int64_t> outCount = numElements(out.getShape());
  if (!inCount || !outCount)
    return emitOpError("expected fewer than 2^63 elements, got ")
           << in << " -> " << out;
  if (*inCount != *outCount)
    return emitOpError("cannot reshape ")
           << formatShape(in.getShape()) << " (" << *inCount << " elements) to "
           << formatShape(out.getShape()) << " (" << *outCount << " elements)";
  return success();
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, getOperationName());
  auto x = check.tensor(adaptor.getX(), "x");
  if (failed(x) ||
      failed(check.present(adaptor.getPermutationAttr(), "permutation")))
    return failure();
  ArrayRef<int64_t> perm = adaptor.getPermutation();
  int64_t rank = x->getRank();
  llvm::SmallBitVector seen(rank);
  bool valid = static_cast<int64_t>(perm.size()) == rank;
  for (int64_t p : perm) {
    if (!valid || p < 0 || p >= rank || seen.test(p)) {
      valid = false;
      break;
    }
    seen.set(p);
  }
  if (!valid)
    return check.error("expected 'permutation' to be a permutation of [0, ",
                       rank, "), got [",
                       llvm::make_range(perm.begin(), perm.end()), "]");
  SmallVector<int64_t> out;
  for (int64_t p : perm)
    out.push_back(x->getDimSize(p));
  results.push_back(RankedTensorType::get(out, x->getElementType()));
  return success();
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, getOperationName());
  auto x = check.tensor(adaptor.getX(), "x");
  if (failed(x) || failed(check.present(adaptor.getOffsetsAttr(), "offsets")) ||
      failed(check.present(adaptor.getSizesAttr(), "sizes")))
    return failure();
  size_t rank = x->getRank();
  ArrayRef<int64_t> offsets = adaptor.getOffsets(), sizes = adaptor.getSizes();
  SmallVector<int64_t> strides(rank, 1);
  if (adaptor.getStrides())
    strides.assign(adaptor.getStrides()->begin(), adaptor.getStrides()->end());
  if (failed(check.array(offsets, "offsets", rank, 0)) ||
      failed(check.array(sizes, "sizes", rank, 1)) ||
      failed(check.array(strides, "strides", rank, 1)))
    return failure();
  for (size_t d = 0; d < rank; ++d) {
    std::optional<int64_t> last = llvm::checkedMul(sizes[d] - 1, strides[d]);
    if (last)
      last = llvm::checkedAdd(offsets[d], *last);
    if (!last)
      return check.error("slice of dimension ", d,
                         " reaches an index beyond 2^63 but the dimension "
                         "has size ",
                         x->getDimSize(d));
    if (*last >= x->getDimSize(d))
      return check.error("slice of dimension ", d, " reaches index ", *last,
                         " but the dimension has size ", x->getDimSize(d));
  }
  return check.result(sizes, x->getElementType(), results);
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, getOperationName());
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return check.error("expected at least one input");
  auto first = check.tensor(inputs[0], "input #0");
  if (failed(first) || failed(check.present(adaptor.getAxisAttr(), "axis")))
    return failure();
  auto axis = check.axis(adaptor.getAxis(), first->getRank(), "axis");
  if (failed(axis))
    return failure();
  SmallVector<int64_t> out(first->getShape());
  for (auto [i, v] : llvm::enumerate(inputs.drop_front())) {
    std::string name = "input #" + std::to_string(i + 1);
    auto t = check.tensor(v, name);
    if (failed(t) ||
        failed(check.sameElementType(*first, "input #0", *t, name)))
      return failure();
    bool compatible = t->getRank() == first->getRank();
    for (int64_t d = 0; compatible && d < first->getRank(); ++d)
      compatible = d == *axis || t->getDimSize(d) == out[d];
    if (!compatible)
      return check.error("expected ", name, " to match input #0 (",
                         formatShape(first->getShape()),
                         ") in every dimension but ", *axis, ", got ",
                         formatShape(t->getShape()));
    std::optional<int64_t> joined =
        llvm::checkedAdd(out[*axis], t->getDimSize(*axis));
    if (!joined)
      return check.error("concatenated dimension ", *axis,
                         " overflows 64-bit sizes");
    out[*axis] = *joined;
  }
  return check.result(out, first->getElementType(), results);
}

LogicalResult UpsampleNearest2DOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, getOperationName());
  auto x = check.tensorOfRank(adaptor.getX(), "x", 4, "NxCxHxW");
  if (failed(x) || failed(check.present(adaptor.getScaleAttr(), "scale")))
    return failure();
  int64_t scale = adaptor.getScale();
  if (scale < 1)
    return check.error("expected 'scale' ≥ 1, got ", scale);
  SmallVector<int64_t, 4> out(x->getShape());
  for (int d = 2; d < 4; ++d) {
    std::optional<int64_t> size = llvm::checkedMul(out[d], scale);
    if (!size)
      return check.error("upsampling ",
                         formatShape(x->getShape().drop_front(2)), " by ",
                         scale, " overflows 64-bit sizes");
    out[d] = *size;
  }
  return check.result(out, x->getElementType(), results);
}

LogicalResult EmbeddingOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, getOperationName());
  auto table = check.tensorOfRank(adaptor.getTable(), "table", 2, "VxD");
  auto ids = check.tensor(adaptor.getIds(), "ids");
  if (failed(table) || failed(ids))
    return failure();
  SmallVector<int64_t> out(ids->getShape());
  out.push_back(table->getDimSize(1));
  return check.result(out, table->getElementType(), results);
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

LogicalResult CrossEntropyOp::inferReturnTypes(MLIRContext *,
                                               std::optional<Location> loc,
                                               Adaptor adaptor,
                                               SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, getOperationName());
  auto logits = check.tensorOfRank(adaptor.getLogits(), "logits", 2, "NxC");
  auto labels = check.tensorOfRank(adaptor.getLabels(), "labels", 1, "N");
  if (failed(logits) || failed(labels))
    return failure();
  if (labels->getDimSize(0) != logits->getDimSize(0))
    return check.error("expected ", logits->getDimSize(0),
                       " labels (one per row of logits), got ",
                       labels->getDimSize(0));
  results.push_back(scalarOf(*logits));
  return success();
}

LogicalResult MseLossOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  ShapeChecker check(loc, getOperationName());
  auto prediction = check.tensor(adaptor.getPrediction(), "prediction");
  if (failed(prediction))
    return failure();
  if (adaptor.getTarget().getType() != *prediction)
    return check.error("expected target of type ", *prediction,
                       " (as prediction), got ", adaptor.getTarget().getType());
  results.push_back(scalarOf(*prediction));
  return success();
}

#define GET_OP_CLASSES
#include "memopt/Dialect/MemOpt/IR/MemOptOps.cpp.inc"
