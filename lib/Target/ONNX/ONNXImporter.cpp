//===- ONNXImporter.cpp - ONNX ModelProto -> memopt graph -----------------===//
//
// Reads the model with the ONNX project's protobuf classes (libonnx), then
// walks the graph's nodes in their (topological) order:
//
// - initializers become arguments: float tensors a node computes with are
//   `{memopt.param}`, batch-norm running statistics `{memopt.state}`; integer
//   tensors, one-element floats read by arithmetic (0.5, sqrt 2) and tensors
//   holding inf/NaN (masks) are constants, and so is everything read where ONNX
//   wants a constant (a Reshape's shape, a Slice's bounds, Resize's scales);
// - shape computations on constants (Shape, Gather, Concat, Unsqueeze,
//   Cast, arithmetic, ...) are folded at import time, since every shape is
//   static;
// - every other node becomes memopt ops whose result types the ops infer,
//   at a location naming the node (`loc("/layer1/layer1.0/conv1/Conv")`).
//
// Nothing is skipped: a node the importer cannot express exactly is a
// located error, and unsupported op types are reported together up front.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "memopt/Dialect/MemOpt/IR/MemOptDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <numeric>
#include <set>

using namespace mlir;
using namespace memopt;
using namespace memopt::onnx_import;
using TP = onnx::TensorProto;
namespace {

/// The oldest and newest default-domain opsets whose ops this importer
/// reads (torch.onnx.export writes 14 to 18 today).
constexpr int64_t kMinOpset = 13;
constexpr int64_t kMaxOpset = 20;

/// Op types the importer converts, some only when their inputs are
/// constants (shape computations).
const std::set<std::string> &supportedOps() {
  static const std::set<std::string> ops = {
      "Abs",
      "Add",
      "And",
      "AveragePool",
      "BatchNormalization",
      "Cast",
      "CastLike",
      "Ceil",
      "Clip",
      "Concat",
      "Constant",
      "ConstantOfShape",
      "Conv",
      "Div",
      "Dropout",
      "Elu",
      "Equal",
      "Erf",
      "Exp",
      "Expand",
      "Flatten",
      "Floor",
      "Gather",
      "Gelu",
      "Gemm",
      "GlobalAveragePool",
      "Greater",
      "GreaterOrEqual",
      "Identity",
      "IsNaN",
      "LayerNormalization",
      "LeakyRelu",
      "Less",
      "LessOrEqual",
      "Log",
      "MatMul",
      "Max",
      "MaxPool",
      "Min",
      "Mod",
      "Mul",
      "Neg",
      "Not",
      "Or",
      "Pow",
      "Range",
      "Reciprocal",
      "ReduceMax",
      "ReduceMean",
      "ReduceMin",
      "ReduceSum",
      "Relu",
      "Reshape",
      "Resize",
      "SequenceAt",
      "Shape",
      "Sigmoid",
      "Sign",
      "Slice",
      "Softmax",
      "Split",
      "SplitToSequence",
      "Sqrt",
      "Squeeze",
      "Sub",
      "Tanh",
      "Tile",
      "Transpose",
      "Trilu",
      "Unsqueeze",
      "Where",
      "Xor",
  };
  return ops;
}

/// Inputs ONNX defines as constants in practice: shapes, bounds, axes,
/// scales. An initializer read only here is folded, never an argument.
bool isConstantSlot(StringRef opType, int index) {
  if (opType == "Reshape" || opType == "Unsqueeze" || opType == "Squeeze" ||
      opType == "Split" || opType == "ReduceMean" || opType == "ReduceSum" ||
      opType == "ReduceMax" || opType == "ReduceMin")
    return index == 1;
  if (opType == "Slice")
    return index >= 1;
  if (opType == "Resize" || opType == "Dropout")
    return index >= 1;
  if (opType == "ConstantOfShape" || opType == "Shape" || opType == "Range")
    return true;
  if (opType == "Expand" || opType == "Tile" || opType == "Trilu" ||
      opType == "SplitToSequence" || opType == "SequenceAt" ||
      opType == "CastLike")
    return index >= 1;
  if (opType == "Where")
    return index == 0;
  return false;
}

/// Inputs that hold a layer's weights: a one-element tensor read here (the
/// bias of a layer with one output) is a parameter all the same.
bool isWeightSlot(StringRef opType, int index) {
  if (opType == "Conv" || opType == "Gemm" || opType == "BatchNormalization" ||
      opType == "LayerNormalization")
    return index == 1 || index == 2;
  if (opType == "MatMul")
    return true;
  if (opType == "Gather")
    return index == 0;
  return false;
}

/// `name` as an SSA value name (`onnx::Conv_193` -> `onnx__Conv_193`,
/// `0.weight` -> `_0.weight`).
std::string sanitize(StringRef name) {
  std::string out;
  for (char c : name)
    out.push_back(isNameChar(c) ? c : '_');
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0])) ||
      out[0] == '-' || out[0] == '.' || out[0] == '$')
    out.insert(out.begin(), '_');
  return out;
}

} // namespace

//===----------------------------------------------------------------------===//
// Model level
//===----------------------------------------------------------------------===//

LogicalResult Importer::parse(StringRef bytes) {
  if (bytes.empty())
    return fileError() << "the file is empty; expected an ONNX model";
  if (bytes.size() > static_cast<size_t>(INT32_MAX))
    return fileError() << "the file is over 2 GiB; ONNX models that large "
                          "keep their weights as external data, which is "
                          "not supported";
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return fileError() << "not an ONNX model: the file does not parse as an "
                          "ONNX ModelProto (truncated, or not protobuf)";
  if (!model.has_graph() || model.ir_version() <= 0 ||
      model.graph().node_size() == 0)
    return fileError() << "not an ONNX model: no ir_version or no graph "
                          "nodes in the parsed ModelProto";
  return success();
}

LogicalResult Importer::checkOpset() {
  for (const onnx::OperatorSetIdProto &set : model.opset_import())
    if (set.domain().empty() || set.domain() == "ai.onnx")
      opset = set.version();
  if (opset == 0)
    return fileError() << "the model imports no default-domain (ai.onnx) "
                          "opset";
  if (opset < kMinOpset)
    return fileError() << "opset " << opset << " is older than " << kMinOpset
                       << ", the oldest supported; re-export with "
                          "opset_version="
                       << kMinOpset
                       << " or later, or upgrade the model with "
                          "onnx.version_converter";
  if (opset > kMaxOpset)
    return fileError() << "opset " << opset << " is newer than " << kMaxOpset
                       << ", the newest supported; re-export with "
                          "opset_version="
                       << kMaxOpset << " or convert the model down";
  return success();
}

LogicalResult Importer::checkSupported() {
  // Op type -> (count, first node names), in order of first appearance.
  std::vector<std::string> order;
  std::map<std::string, std::pair<int, std::vector<std::string>>> bad;
  for (const onnx::NodeProto &node : model.graph().node()) {
    bool known = (node.domain().empty() || node.domain() == "ai.onnx") &&
                 supportedOps().count(node.op_type());
    if (known)
      continue;
    std::string type = node.domain().empty() || node.domain() == "ai.onnx"
                           ? node.op_type()
                           : node.domain() + "." + node.op_type();
    if (!bad.count(type))
      order.push_back(type);
    auto &entry = bad[type];
    if (++entry.first <= 3)
      entry.second.push_back(nodeName(node));
  }
  if (bad.empty())
    return success();
  InFlightDiagnostic diag = fileError();
  diag << "unsupported ONNX ops: ";
  bool first = true;
  for (const std::string &type : order) {
    auto &entry = bad[type];
    diag << (first ? "" : ", ") << type << " (" << entry.first << ": "
         << llvm::join(entry.second, ", ") << (entry.first > 3 ? ", ..." : "")
         << ")";
    first = false;
  }
  return failure();
}

LogicalResult Importer::collectInitializers() {
  const onnx::GraphProto &graph = model.graph();
  if (graph.sparse_initializer_size())
    return fileError() << "sparse initializers are not supported";
  readExportSignature();
  for (const TP &stored : graph.initializer()) {
    DecodedTensor decoded;
    if (stored.name().empty())
      return fileError() << "an initializer has no name";
    // External data (dynamo=True exports keep the weights in
    // model.onnx.data): read into a copy of the tensor.
    std::optional<TP> loaded;
    if (stored.data_location() == TP::EXTERNAL &&
        !options.externalDataDir.empty()) {
      loaded = stored;
      if (std::optional<std::string> error =
              loadExternalData(*loaded, options.externalDataDir))
        return fileError() << "initializer '" << stored.name()
                           << "': " << *error;
    }
    const TP &tensor = loaded ? *loaded : stored;
    if (std::optional<std::string> error = decodeTensor(tensor, decoded))
      return fileError() << "initializer '" << tensor.name() << "': " << *error;
    // onnx.checker refuses it too: which of the two values is meant?
    if (!initializers.try_emplace(tensor.name(), std::move(decoded)).second)
      return fileError() << "initializer name '" << tensor.name()
                         << "' is not unique";
  }

  // How each initializer is read decides what it becomes.
  llvm::StringSet<> asState, asData, asWeight;
  llvm::StringMap<int> dataReads;
  for (const onnx::NodeProto &node : graph.node()) {
    for (int i = 0; i < node.input_size(); ++i) {
      const std::string &name = node.input(i);
      if (!initializers.count(name))
        continue;
      if (node.op_type() == "BatchNormalization" && (i == 3 || i == 4))
        asState.insert(name);
      else if (!isConstantSlot(node.op_type(), i)) {
        asData.insert(name);
        ++dataReads[name];
        if (isWeightSlot(node.op_type(), i))
          asWeight.insert(name);
      }
    }
  }
  llvm::StringSet<> taken;
  auto uniqueName = [&](const std::string &onnxName) {
    std::string name = sanitize(onnxName), candidate = name;
    for (int n = 1; !taken.insert(candidate).second; ++n)
      candidate = name + "_" + std::to_string(n);
    return candidate;
  };
  std::vector<Argument> params, states;
  for (const TP &tensor : graph.initializer()) {
    const DecodedTensor &value = initializers[tensor.name()];
    std::optional<ConstTensor> folded = toConst(value);
    bool isFloat = ConstTensor::isFloatType(value.dataType);
    Argument::Role role;
    if (asState.count(tensor.name()))
      role = Argument::State;
    else if (hasSignature && signatureBuffers.count(tensor.name()) && folded) {
      // A buffer of the model (rotary tables, masks): a constant.
      consts[tensor.name()] = *folded;
      continue;
    } else if (asData.count(tensor.name()) && isFloat &&
               (product(value.shape) > 1 || asWeight.count(tensor.name())) &&
               allFinite(value))
      role = Argument::Param;
    else {
      if (!folded)
        return fileError() << "initializer '" << tensor.name() << "' of type "
                           << dataTypeName(value.dataType)
                           << " is used as a constant, which the importer "
                              "cannot fold";
      consts[tensor.name()] = *folded;
      continue;
    }
    Type element = elementType(ctx, value.dataType);
    if (!element || !isFloat)
      return fileError() << "initializer '" << tensor.name() << "' of type "
                         << dataTypeName(value.dataType)
                         << " cannot be a parameter or state; memopt trains "
                            "f32, f16, bf16 and f64 tensors";
    // An eval-mode export with constant folding merges batch norm into the
    // convolutions and shares equal folded tensors between layers: training
    // that is not training the PyTorch model.
    if (role == Argument::Param &&
        StringRef(tensor.name()).starts_with("onnx::") &&
        dataReads.lookup(tensor.name()) > 1)
      emitWarning(fileLoc())
          << "initializer '" << tensor.name() << "', made by the exporter, is "
          << "read by " << dataReads.lookup(tensor.name())
          << " nodes and trains as one shared parameter; for training, "
             "export with training=torch.onnx.TrainingMode.TRAINING (keeps "
             "batch norm and separate weights)";
    Argument arg{tensor.name(), "", RankedTensorType::get(value.shape, element),
                 role, &value};
    (role == Argument::Param ? params : states).push_back(arg);
  }
  if (failed(checkParameters(params)))
    return failure();
  for (Argument &a : params)
    a.name = uniqueName(a.onnxName);
  for (Argument &a : states)
    a.name = uniqueName(a.onnxName);
  arguments = params;
  llvm::append_range(arguments, states);

  // Data inputs: graph inputs that are not initializers (IR < 4 lists both).
  std::set<std::string> inputNames;
  for (const onnx::ValueInfoProto &input : graph.input())
    if (!initializers.count(input.name()))
      inputNames.insert(input.name());
  for (const auto &[name, shape] : options.inputShapes)
    if (!inputNames.count(name)) {
      std::vector<std::string> known(inputNames.begin(), inputNames.end());
      return fileError() << "--input-shape names '" << name
                         << "', which is not a graph input (inputs: "
                         << llvm::join(known, ", ") << ")";
    }
  for (const onnx::ValueInfoProto &input : graph.input()) {
    if (initializers.count(input.name()))
      continue;
    if (!input.type().has_tensor_type())
      return fileError() << "input '" << input.name()
                         << "' is not a tensor; only tensor inputs are "
                            "supported";
    const onnx::TypeProto::Tensor &t = input.type().tensor_type();
    Type element = elementType(ctx, t.elem_type());
    // An integer, boolean or 8-bit input read only through Casts to one
    // float type (a mask given as 0/1 ids or booleans,
    // `attention_mask[:, None, None, :].to(x.dtype)`), perhaps after ops
    // that only move values (Unsqueeze, Reshape, ...), is that float input:
    // the same values, and memopt computes on floats.
    bool castable = t.elem_type() == onnx::TensorProto::BOOL ||
                    t.elem_type() == onnx::TensorProto::INT8 ||
                    t.elem_type() == onnx::TensorProto::UINT8;
    if (element ? isa<IntegerType>(element) : castable)
      if (std::optional<int32_t> to = floatCastOfInput(
              input.name(), t.elem_type() == onnx::TensorProto::BOOL))
        element = elementType(ctx, *to);
    if (!element)
      return fileError() << "input '" << input.name() << "' has element type "
                         << dataTypeName(t.elem_type())
                         << "; memopt takes f32, f16, bf16, f64, i64 and i32"
                         << (castable ? ", and boolean or 8-bit inputs the "
                                        "model only casts to one float type"
                                      : "");
    std::vector<int64_t> shape;
    auto given = options.inputShapes.find(input.name());
    if (given != options.inputShapes.end()) {
      shape = given->second;
    } else {
      if (!t.has_shape())
        return fileError() << "input '" << input.name()
                           << "' has no shape; give one with --input-shape="
                           << input.name() << "=AxBx...";
      for (int d = 0; d < t.shape().dim_size(); ++d) {
        const onnx::TensorShapeProto::Dimension &dim = t.shape().dim(d);
        if (d == 0 && options.batch) {
          shape.push_back(*options.batch);
          continue;
        }
        if (dim.has_dim_value() && dim.dim_value() > 0) {
          shape.push_back(dim.dim_value());
          continue;
        }
        InFlightDiagnostic diag = fileError();
        diag << "input '" << input.name() << "' dimension " << d;
        if (dim.has_dim_param())
          diag << " ('" << dim.dim_param() << "')";
        diag << " is dynamic; fix it with " << (d == 0 ? "--batch=N or " : "")
             << "--input-shape=" << input.name() << "=AxBx...";
        return failure();
      }
    }
    for (int64_t d : shape)
      if (d <= 0)
        return fileError() << "input '" << input.name() << "': dimension " << d
                           << " must be positive";
    if (t.elem_type() == onnx::TensorProto::BOOL)
      booleans.insert(input.name());
    arguments.push_back({input.name(), uniqueName(input.name()),
                         RankedTensorType::get(shape, element), Argument::Data,
                         nullptr});
  }
  return success();
}

std::optional<int32_t> Importer::floatCastOfInput(const std::string &input,
                                                  bool boolean) {
  const onnx::GraphProto &graph = model.graph();
  std::optional<int32_t> castTo;
  // A boolean input may also be negated (Not) and be a Where's condition
  // (masked_fill): memopt holds it as 0/1 floats, Not as 1 - x.
  bool logical = false;
  std::vector<std::string> work = {input};
  std::set<std::string> seen;
  while (!work.empty()) {
    std::string value = work.back();
    work.pop_back();
    if (!seen.insert(value).second)
      continue;
    for (const onnx::ValueInfoProto &out : graph.output())
      if (out.name() == value)
        return std::nullopt;
    for (const onnx::NodeProto &node : graph.node())
      for (int i = 0; i < node.input_size(); ++i) {
        if (node.input(i) != value)
          continue;
        const std::string &type = node.op_type();
        if (i == 0 &&
            (type == "Unsqueeze" || type == "Squeeze" || type == "Reshape" ||
             type == "Flatten" || type == "Identity" || type == "Transpose")) {
          work.push_back(node.output(0));
          continue;
        }
        if (boolean && i == 0 && type == "Not") {
          logical = true;
          work.push_back(node.output(0));
          continue;
        }
        if (boolean && i == 0 && type == "Where") {
          logical = true;
          continue;
        }
        int32_t to = static_cast<int32_t>(attrInt(node, "to", 0));
        if (boolean && type == "Cast" && to == onnx::TensorProto::BOOL) {
          work.push_back(node.output(0));
          continue;
        }
        Type target = elementType(ctx, to);
        if (type != "Cast" || !target || !isa<FloatType>(target) ||
            (castTo && *castTo != to))
          return std::nullopt;
        castTo = to;
      }
  }
  if (!castTo && logical)
    return onnx::TensorProto::FLOAT;
  return castTo;
}

FailureOr<ONNXImportResult> Importer::run(StringRef bytes) {
  if (failed(parse(bytes)) || failed(checkOpset()) || failed(checkSupported()))
    return failure();
  training = options.loss != ONNXLoss::None;
  const onnx::GraphProto &graph = model.graph();
  for (const onnx::NodeProto &node : graph.node()) {
    for (const std::string &in : node.input())
      if (!in.empty()) {
        ++useCount[in];
        consumer[in] = &node;
      }
    for (const std::string &out : node.output())
      if (!out.empty())
        producer[out] = &node;
  }
  for (const onnx::ValueInfoProto &out : graph.output())
    ++useCount[out.name()];
  if (failed(collectInitializers()))
    return failure();
  findGeluPatterns();
  findSiluPatterns();
  findSafeSoftmaxPatterns();
  findRmsNormPatterns();

  std::string name =
      options.functionName.empty()
          ? sanitize(graph.name().empty() ? "model" : graph.name())
          : options.functionName;
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc());
  builder.setInsertionPointToEnd(module->getBody());
  SmallVector<Type> argTypes;
  for (const Argument &a : arguments)
    argTypes.push_back(a.type);
  auto func = func::FuncOp::create(builder, fileLoc(), name,
                                   builder.getFunctionType(argTypes, {}));
  Block *body = func.addEntryBlock();
  for (auto [i, a] : llvm::enumerate(arguments)) {
    BlockArgument arg = body->getArgument(i);
    arg.setLoc(NameLoc::get(StringAttr::get(ctx, a.name)));
    if (a.role == Argument::Param)
      func.setArgAttr(i, MemOptDialect::kParamAttrName, builder.getUnitAttr());
    else if (a.role == Argument::State)
      func.setArgAttr(i, MemOptDialect::kStateAttrName, builder.getUnitAttr());
    values[a.onnxName] = arg;
  }
  builder.setInsertionPointToEnd(body);

  for (auto [index, node] : llvm::enumerate(graph.node())) {
    if (fusedAway.count(&node))
      continue;
    bool fusedLast = fusedUnary.count(&node) || rmsNorms.count(&node);
    for (int i = 0; i < node.input_size() && !fusedLast; ++i)
      if (!node.input(i).empty() && !values.count(node.input(i)) &&
          !isConst(node.input(i)) && !sequences.count(node.input(i)))
        return emitError(nodeLoc(node))
               << node.op_type() << ": input '" << node.input(i)
               << "' is not defined before this node (the graph is not in "
                  "topological order, or names an undefined value)";
    if (failed(convertNode(node, index)))
      return failure();
    // Ops that only move values keep a boolean (0/1) tensor boolean.
    StringRef op = node.op_type();
    if (node.input_size() > 0 && booleans.count(node.input(0)) &&
        (op == "Unsqueeze" || op == "Squeeze" || op == "Reshape" ||
         op == "Flatten" || op == "Identity" || op == "Transpose"))
      booleans.insert(node.output(0));
  }
  for (const auto &[table, row] : options.embeddingPaddingIdx)
    if (!paddedTables.count(table))
      return emitError(fileLoc())
             << "--param-names gives '" << table << "' padding_idx " << row
             << ", but no Gather reads it as an embedding table";
  if (failed(buildReturn(func)))
    return failure();
  if (failed(verify(*module)))
    return failure();

  ONNXImportResult result;
  for (const Argument &a : arguments) {
    if (!a.value)
      continue;
    runtime::NamedTensor t;
    t.name = a.name;
    t.dtype = *runtimeDType(a.value->dataType);
    t.shape = a.value->shape;
    t.data = a.value->bytes;
    result.weights.tensors.push_back(std::move(t));
  }
  result.weights.metadata["format"] = "memopt";
  result.weights.metadata["source"] = "onnx";
  // Every argument is named by its location (the target too, if any).
  for (BlockArgument arg : func.getArguments())
    result.argumentNames.push_back(cast<NameLoc>(arg.getLoc()).getName().str());
  result.module = std::move(module);
  return result;
}

LogicalResult Importer::buildReturn(func::FuncOp func) {
  const onnx::GraphProto &graph = model.graph();
  SmallVector<Value> results;
  Location lossLoc = NameLoc::get(StringAttr::get(ctx, "loss"));
  auto outputValue = [&](const std::string &name) -> FailureOr<Value> {
    auto it = values.find(name);
    if (it != values.end())
      return it->second;
    auto c = consts.find(name);
    if (c != consts.end())
      return materialize(c->second, fileLoc());
    return fileError() << "graph output '" << name << "' is never computed";
  };
  if (!training) {
    for (const onnx::ValueInfoProto &out : graph.output()) {
      FailureOr<Value> v = outputValue(out.name());
      if (failed(v))
        return failure();
      results.push_back(*v);
    }
  } else {
    if (graph.output_size() != 1)
      return fileError() << "--loss needs a model with one output; this one "
                            "has "
                         << graph.output_size();
    FailureOr<Value> out = outputValue(graph.output(0).name());
    if (failed(out))
      return failure();
    RankedTensorType type = typeOf(*out);
    if (!type || !isa<FloatType>(type.getElementType()))
      return fileError() << "graph output '" << graph.output(0).name()
                         << "' is not a float tensor; a loss needs one";
    Block &body = func.getBody().front();
    std::string targetName =
        options.loss == ONNXLoss::CrossEntropy ? "labels" : "target";
    for (const Argument &a : arguments)
      if (a.name == targetName)
        return fileError() << "the model already has an argument named '"
                           << targetName << "'";
    Type targetType;
    Value prediction = *out;
    if (options.loss == ONNXLoss::CrossEntropy) {
      if (type.getRank() < 2)
        return fileError() << "--loss=cross_entropy needs logits of rank 2 "
                              "or more (N x classes); the output is "
                           << type;
      ArrayRef<int64_t> shape = type.getShape();
      targetType =
          RankedTensorType::get(shape.drop_back(), IntegerType::get(ctx, 64));
      if (type.getRank() > 2) {
        int64_t rows = product(shape, 0, shape.size() - 1);
        FailureOr<Value> flat =
            reshape(prediction, {rows, shape.back()}, lossLoc);
        if (failed(flat))
          return failure();
        prediction = *flat;
      }
    } else {
      targetType = type;
    }
    BlockArgument target = body.addArgument(
        targetType, NameLoc::get(StringAttr::get(ctx, targetName)));
    Value targetValue = target;
    if (options.loss == ONNXLoss::CrossEntropy && type.getRank() > 2) {
      FailureOr<Value> flat =
          reshape(target, {typeOf(prediction).getShape()[0]}, lossLoc);
      if (failed(flat))
        return failure();
      targetValue = *flat;
    }
    FailureOr<Value> loss =
        emit1(options.loss == ONNXLoss::CrossEntropy ? "memopt.cross_entropy"
                                                     : "memopt.mse_loss",
              lossLoc, {prediction, targetValue});
    if (failed(loss))
      return failure();
    results.push_back(*loss);
    llvm::append_range(results, stateResults);
  }
  func::ReturnOp::create(builder, fileLoc(), results);
  SmallVector<Type> argTypes(func.getBody().getArgumentTypes());
  func.setType(
      builder.getFunctionType(argTypes, ValueRange(results).getTypes()));
  return success();
}

//===----------------------------------------------------------------------===//
// Values, constants, op creation
//===----------------------------------------------------------------------===//

const ConstTensor *Importer::constOf(const onnx::NodeProto &node, int i) const {
  if (!hasInput(node, i))
    return nullptr;
  auto it = consts.find(node.input(i));
  return it == consts.end() ? nullptr : &it->second;
}

Value Importer::splat(ArrayRef<int64_t> shape, Type element, double v,
                      Location loc) {
  auto type = RankedTensorType::get(shape, element);
  return arith::ConstantOp::create(
      builder, loc, type,
      DenseElementsAttr::get(type, FloatAttr::get(element, v)));
}

Value Importer::materialize(const ConstTensor &c, Location loc, Type element) {
  if (!element)
    element = elementType(ctx, c.dataType);
  if (!element) // bool and narrow integers compute as i64
    element = IntegerType::get(ctx, 64);
  auto type = RankedTensorType::get(c.shape, element);
  return arith::ConstantOp::create(builder, loc, type, toAttr(c, type));
}

FailureOr<Value> Importer::valueOf(const onnx::NodeProto &node, int i,
                                   Type elementLike) {
  if (!hasInput(node, i))
    return emitError(nodeLoc(node))
           << node.op_type() << ": input " << i << " is missing";
  auto it = values.find(node.input(i));
  if (it != values.end())
    return it->second;
  if (const ConstTensor *c = constOf(node, i)) {
    if (elementLike && c->isFloat() != isa<FloatType>(elementLike))
      elementLike = {};
    return materialize(*c, nodeLoc(node), elementLike);
  }
  return emitError(nodeLoc(node))
         << node.op_type() << ": input '" << node.input(i) << "' is undefined";
}

FailureOr<Operation *> Importer::emit(StringRef name, Location loc,
                                      ValueRange operands,
                                      ArrayRef<NamedAttribute> attrs,
                                      unsigned numResults) {
  OperationState state(loc, name);
  state.addOperands(operands);
  state.addAttributes(attrs);
  state.addTypes(SmallVector<Type>(numResults, NoneType::get(ctx)));
  Operation *op = builder.create(state);
  auto infer = dyn_cast<InferTypeOpInterface>(op);
  if (!infer) {
    op->erase();
    return emitError(loc) << "internal error: '" << name
                          << "' is not a memopt op with inferred types";
  }
  SmallVector<Type> types;
  if (failed(infer.inferReturnTypes(
          ctx, loc, op->getOperands(), op->getRawDictionaryAttrs(),
          op->getPropertiesStorage(), op->getRegions(), types)) ||
      types.size() != numResults) {
    op->erase();
    return failure();
  }
  for (auto [result, type] : llvm::zip(op->getResults(), types))
    result.setType(type);
  return op;
}

FailureOr<Value> Importer::reshape(Value v, ArrayRef<int64_t> shape,
                                   Location loc) {
  RankedTensorType type = typeOf(v);
  if (type.getShape() == shape)
    return v;
  if (product(shape) != type.getNumElements())
    return emitError(loc) << "cannot reshape " << type << " to "
                          << formatShape(shape) << ": element counts differ";
  auto target = RankedTensorType::get(shape, type.getElementType());
  OperationState state(loc, "memopt.reshape");
  state.addOperands(v);
  state.addTypes(target);
  return builder.create(state)->getResult(0);
}

FailureOr<ONNXImportResult>
memopt::importONNX(StringRef bytes, StringRef fileName, MLIRContext *context,
                   const ONNXImportOptions &options) {
  context->loadDialect<MemOptDialect, func::FuncDialect, arith::ArithDialect>();
  Importer importer(context, fileName, options);
  return importer.run(bytes);
}
