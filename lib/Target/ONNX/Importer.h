//===- Importer.h - the ONNX importer's state, shared by its files -*- C++
//-*-===//
//
// The importer walks one ONNX graph: ONNXImporter.cpp reads the model, its
// initializers, inputs and outputs; the ONNX*Nodes.cpp files convert each
// node. This private header holds the state both use and the attribute helpers.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_LIB_TARGET_ONNX_IMPORTER_H
#define MEMOPT_LIB_TARGET_ONNX_IMPORTER_H

#include "memopt/Target/ONNX/ONNXImporter.h"

#include "ONNXTensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace memopt::onnx_import {

// A private header of this library: MLIR names unqualified, as in the
// .cpp files.
using namespace mlir;

/// Characters MLIR allows in an SSA name after the first.
inline bool isNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ||
         c == '$' || c == '-';
}

inline std::string formatShape(ArrayRef<int64_t> shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + std::to_string(shape[i]);
  return s.empty() ? "scalar" : s;
}

/// Normalizes axis `a` of a rank-`rank` tensor, or -1 if out of range.
inline int64_t normalizeAxis(int64_t a, int64_t rank) {
  if (a < 0)
    a += rank;
  return a < 0 || a >= rank ? -1 : a;
}

inline int64_t product(ArrayRef<int64_t> shape, size_t from = 0,
                       size_t to = std::string::npos) {
  int64_t n = 1;
  for (size_t i = from; i < std::min(to, shape.size()); ++i)
    n *= shape[i];
  return n;
}

inline const onnx::AttributeProto *findAttr(const onnx::NodeProto &node,
                                            StringRef name) {
  for (const onnx::AttributeProto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

inline int64_t attrInt(const onnx::NodeProto &node, StringRef name,
                       int64_t def) {
  const onnx::AttributeProto *a = findAttr(node, name);
  return a ? a->i() : def;
}

/// The shortest decimal that reads back as `f`: ONNX stores float
/// attributes in f32, so PyTorch's `eps=1e-5` arrives as 9.99999974e-06;
/// this gives back 1e-05 (the same f32, and the double PyTorch used).
inline double shortestDecimal(float f) {
  char buffer[32];
  for (int digits = 1; digits <= 9; ++digits) {
    std::snprintf(buffer, sizeof(buffer), "%.*g", digits, f);
    if (std::strtof(buffer, nullptr) == f)
      return std::strtod(buffer, nullptr);
  }
  return f;
}

inline double attrFloat(const onnx::NodeProto &node, StringRef name,
                        double def) {
  const onnx::AttributeProto *a = findAttr(node, name);
  return a ? shortestDecimal(a->f()) : def;
}

inline std::string attrString(const onnx::NodeProto &node, StringRef name,
                              StringRef def) {
  const onnx::AttributeProto *a = findAttr(node, name);
  return a ? a->s() : def.str();
}

inline std::optional<std::vector<int64_t>> attrInts(const onnx::NodeProto &node,
                                                    StringRef name) {
  const onnx::AttributeProto *a = findAttr(node, name);
  if (!a)
    return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

inline RankedTensorType typeOf(Value v) {
  return dyn_cast<RankedTensorType>(v.getType());
}

/// Element-wise `op` (an ONNX op type: Add, Equal, Where, Sqrt, ...) on
/// constants with NumPy broadcasting, rounded to the result's element type;
/// `fmod` is Mod's attribute. On failure says why in `error`.
std::optional<ConstTensor> foldElementwise(StringRef op,
                                           ArrayRef<const ConstTensor *> in,
                                           int64_t fmod, std::string &error);

/// An argument of the function being built.
struct Argument {
  std::string onnxName;
  std::string name;
  RankedTensorType type;
  enum Role { Param, State, Data } role;
  const DecodedTensor *value = nullptr; // initializers
};

class Importer {
public:
  Importer(MLIRContext *ctx, StringRef fileName,
           const ONNXImportOptions &options)
      : ctx(ctx), builder(ctx), fileName(fileName.str()), options(options) {}

  FailureOr<ONNXImportResult> run(StringRef bytes);

private:
  // Model-level steps.
  LogicalResult parse(StringRef bytes);
  LogicalResult checkOpset();
  LogicalResult checkSupported();
  LogicalResult collectInitializers();
  LogicalResult collectInputs();
  /// Reads the dynamo exporter's record of the program's parameters and
  /// buffers, if the model has one (ONNXParameters.cpp).
  void readExportSignature();
  /// Fails unless `params` are exactly the model's parameters, where the
  /// signature or --param-names says what they are.
  LogicalResult checkParameters(ArrayRef<Argument> params);
  void findGeluPatterns();
  void findSiluPatterns();
  void findSafeSoftmaxPatterns();
  LogicalResult convertCompare(const onnx::NodeProto &node, Location loc);
  LogicalResult convertLogical(const onnx::NodeProto &node, Location loc);
  LogicalResult convertBooleanSelect(const onnx::NodeProto &node, Location loc);
  LogicalResult convertBooleanMaskedFill(const onnx::NodeProto &node,
                                         Location loc, int fillIndex);
  /// RMSNorm, x * 1/sqrt(mean(x^2) + eps), as both exporters write it.
  void findRmsNormPatterns();
  LogicalResult convertRmsNorm(const onnx::NodeProto &node, Location loc);
  /// Gelu(approximate="tanh"): PyTorch's formula in memopt ops.
  LogicalResult convertTanhGelu(const onnx::NodeProto &node, Location loc);
  /// The float type every path from integer input `input` is cast to,
  /// through ops that only move values, if all are (an input that is
  /// then that float input); nullopt otherwise.
  /// The float type an integer, boolean or 8-bit input is only ever cast
  /// to; with `boolean`, also through Not, Casts to bool and as a Where's
  /// condition (f32 when nothing casts it).
  std::optional<int32_t> floatCastOfInput(const std::string &input,
                                          bool boolean = false);
  LogicalResult convertNode(const onnx::NodeProto &node, size_t index);
  /// Op types evaluated at import when all their inputs are constants.
  static bool isFoldable(StringRef opType);
  /// Evaluates `node` if it is foldable and all its inputs are constants;
  /// nullopt when it does not apply (the node computes on data).
  std::optional<LogicalResult> foldConstantNode(const onnx::NodeProto &node,
                                                Location loc);
  LogicalResult buildReturn(func::FuncOp func);

  // Diagnostics.
  Location fileLoc() { return FileLineColLoc::get(ctx, fileName, 0, 0); }
  InFlightDiagnostic fileError() { return emitError(fileLoc()); }
  /// `loc("/conv1/Conv")`: the node's name, as Netron shows it.
  Location nodeLoc(const onnx::NodeProto &node) {
    return NameLoc::get(StringAttr::get(ctx, nodeName(node)));
  }
  static std::string nodeName(const onnx::NodeProto &node) {
    if (!node.name().empty())
      return node.name();
    if (node.output_size() && !node.output(0).empty())
      return node.output(0);
    return node.op_type();
  }

  // Values and constants by ONNX name.
  bool isConst(const std::string &name) const { return consts.count(name); }
  const ConstTensor *constOf(const onnx::NodeProto &node, int i) const;
  FailureOr<Value> valueOf(const onnx::NodeProto &node, int i,
                           Type elementLike = {});
  Value materialize(const ConstTensor &c, Location loc, Type element = {});
  /// A tensor of `shape` holding `v` everywhere, in float type `element`
  /// (a splat: free to build however large).
  Value splat(ArrayRef<int64_t> shape, Type element, double v, Location loc);
  bool hasInput(const onnx::NodeProto &node, int i) const {
    return i < node.input_size() && !node.input(i).empty();
  }
  bool outputUsed(const onnx::NodeProto &node, int i) const {
    return i < node.output_size() && !node.output(i).empty() &&
           useCount.lookup(node.output(i)) > 0;
  }

  /// Creates memopt op `name` and infers its result types; on a shape
  /// error the op's inference reports it at `loc`.
  FailureOr<Operation *> emit(StringRef name, Location loc, ValueRange operands,
                              ArrayRef<NamedAttribute> attrs = {},
                              unsigned numResults = 1);
  FailureOr<Value> emit1(StringRef name, Location loc, ValueRange operands,
                         ArrayRef<NamedAttribute> attrs = {}) {
    FailureOr<Operation *> op = emit(name, loc, operands, attrs);
    if (failed(op))
      return failure();
    return (*op)->getResult(0);
  }
  /// emit1 into `out`, for chains of ops: false (reported) when it fails.
  bool emitInto(StringRef name, Location loc, ValueRange operands, Value &out) {
    FailureOr<Value> v = emit1(name, loc, operands);
    if (succeeded(v))
      out = *v;
    return succeeded(v);
  }
  FailureOr<Value> reshape(Value v, ArrayRef<int64_t> shape, Location loc);
  FailureOr<Value> slice(Value x, ArrayRef<int64_t> offsets,
                         ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides,
                         Location loc);
  /// `x` cut along `axis` into consecutive pieces of `sizes`.
  FailureOr<SmallVector<Value>>
  sliceAlong(Value x, int64_t axis, ArrayRef<int64_t> sizes, Location loc);

  NamedAttribute i64Array(StringRef name, ArrayRef<int64_t> v) {
    return builder.getNamedAttr(name, builder.getDenseI64ArrayAttr(v));
  }
  NamedAttribute f64(StringRef name, double v) {
    return builder.getNamedAttr(name, builder.getF64FloatAttr(v));
  }
  NamedAttribute i64(StringRef name, int64_t v) {
    return builder.getNamedAttr(name, builder.getI64IntegerAttr(v));
  }

  // Op families.
  LogicalResult convertConv(const onnx::NodeProto &node, Location loc);
  LogicalResult convertGemm(const onnx::NodeProto &node, Location loc);
  LogicalResult convertBinary(const onnx::NodeProto &node, Location loc);
  LogicalResult convertBatchNorm(const onnx::NodeProto &node, Location loc);
  LogicalResult convertLayerNorm(const onnx::NodeProto &node, Location loc);
  LogicalResult convertPool(const onnx::NodeProto &node, Location loc);
  LogicalResult convertShapeOp(const onnx::NodeProto &node, Location loc);
  LogicalResult convertSlice(const onnx::NodeProto &node, Location loc);
  LogicalResult convertSplit(const onnx::NodeProto &node, Location loc);
  LogicalResult convertConcat(const onnx::NodeProto &node, Location loc);
  LogicalResult convertGather(const onnx::NodeProto &node, Location loc);
  LogicalResult convertResize(const onnx::NodeProto &node, Location loc);
  LogicalResult convertConstant(const onnx::NodeProto &node, Location loc);
  LogicalResult convertCast(const onnx::NodeProto &node, Location loc);
  LogicalResult convertReduceMean(const onnx::NodeProto &node, Location loc);
  /// Max and Min of computed tensors; ReduceMax and ReduceMin.
  LogicalResult convertExtremum(const onnx::NodeProto &node, Location loc);
  LogicalResult convertReduceExtremum(const onnx::NodeProto &node,
                                      Location loc);
  /// Neg, Reciprocal, Pow, Expand, Tile, Where, SplitToSequence,
  /// SequenceAt, CastLike (and the other foldable ops) on computed tensors.
  LogicalResult convertMath(const onnx::NodeProto &node, Location loc);
  /// `x` cast to float type `target` (itself when it has that type).
  FailureOr<Value> castValue(Value x, Type target, Location loc);
  /// Defines `output` as `x` cast to float type `target`.
  LogicalResult castTo(Value x, Type target, Location loc,
                       const std::string &output);
  /// Defines Where `node`'s result as scores `x` plus additive `mask`,
  /// which must not broadcast the scores to a larger shape.
  LogicalResult addScoresMask(const onnx::NodeProto &node, Location loc,
                              Value x, Value mask);

  /// Padding of a Conv/pool node as memopt's symmetric [ph, pw], or an
  /// error for asymmetric pads.
  FailureOr<SmallVector<int64_t>>
  symmetricPads(const onnx::NodeProto &node, Location loc,
                ArrayRef<int64_t> inputHW, ArrayRef<int64_t> kernelHW,
                ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations);
  /// The axes list of Squeeze/Unsqueeze/ReduceMean (input 1 or attribute).
  FailureOr<std::vector<int64_t>> axesOf(const onnx::NodeProto &node,
                                         Location loc, bool &present);
  /// The axes a Reduce* node reduces of `x`, normalised: every axis when
  /// none are given; none (the node is the identity) with
  /// noop_with_empty_axes or for a scalar.
  FailureOr<std::set<int64_t>> reductionAxes(const onnx::NodeProto &node,
                                             Location loc, RankedTensorType x);

  MLIRContext *ctx;
  OpBuilder builder;
  std::string fileName;
  const ONNXImportOptions &options;
  bool training = false;

  onnx::ModelProto model;
  int64_t opset = 0;
  llvm::StringMap<DecodedTensor> initializers;
  std::vector<Argument> arguments;
  llvm::StringMap<Value> values;
  llvm::StringMap<ConstTensor> consts;
  /// The tensors of each sequence SplitToSequence made.
  llvm::StringMap<std::vector<Value>> sequences;
  llvm::StringMap<int> useCount;
  /// The node reading each value (the last one, for values read twice).
  llvm::StringMap<const onnx::NodeProto *> consumer;
  llvm::StringMap<const onnx::NodeProto *> producer;
  /// Nodes folded into a fused op, and the fused op's input by last node.
  std::set<const onnx::NodeProto *> fusedAway;
  /// A unary op by the last node of its chain: its name and input (no name:
  /// the node's result is that input).
  struct FusedUnary {
    std::string op, x;
  };
  std::map<const onnx::NodeProto *, FusedUnary> fusedUnary;
  /// Softmax nodes whose result is read through Where(IsNaN(P), 0, P):
  /// memopt.softmax {safe = true}.
  std::set<const onnx::NodeProto *> safeSoftmaxes;
  /// Tables a Gather read with a padding_idx from --param-names.
  std::set<std::string> paddedTables;
  /// An RMSNorm by its last node (the Mul by x, or the Mul of that by a
  /// weight): x, its ReduceMean, eps, and the weight's input index in the
  /// last node (-1 when there is none).
  struct RmsNorm {
    std::string x;
    const onnx::NodeProto *mean;
    double eps;
    int weight = -1;
  };
  std::map<const onnx::NodeProto *, RmsNorm> rmsNorms;
  /// Computed booleans, held as 0/1 floats: boolean inputs, and what Not,
  /// a Cast to bool and the ops that only move values make of them.
  std::set<std::string> booleans;
  /// Batch-norm running statistics the step returns (training graphs).
  SmallVector<Value> stateResults;
  int64_t dropoutCount = 0;
  /// The dynamo exporter's signature: state_dict names of parameters and
  /// buffers.
  bool hasSignature = false;
  std::set<std::string> signatureParameters, signatureBuffers;
};

} // namespace memopt::onnx_import

#endif // MEMOPT_LIB_TARGET_ONNX_IMPORTER_H
