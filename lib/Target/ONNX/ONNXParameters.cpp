//===- ONNXParameters.cpp - the PyTorch model's parameters, kept ----------===//
//
// Every trainable tensor of the user's model must be exactly one parameter
// of the imported graph, under its state_dict name. An exporter can break
// that: torch.onnx.export(dynamo=True)'s default optimiser folds
// `cls.expand(B, -1, -1)` or a weight's transpose into a new initializer
// (`expand`, `val_12`) and merges initializers that merely hold equal
// values, so training the file would train a different model. The
// importer knows the model's parameters from
//
// - the dynamo exporter's record of the exported program's signature
//   (graph metadata `pkg.torch.export.ExportedProgram.graph_signature`:
//   `p_fc_weight: PARAMETER target='fc.weight'`, `BUFFER target=...`), and
// - `--param-names=FILE` (state_dict names and shapes, from the user or the
//   Python package),
//
// and refuses, naming what differs and the export flags that keep a model
// trainable, an import whose parameters are not those. Buffers the
// signature names are constants (or batch-norm state), never parameters.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "llvm/Support/JSON.h"

#include <google/protobuf/unknown_field_set.h>

using namespace mlir;
using namespace memopt;
using namespace memopt::onnx_import;

static constexpr llvm::StringLiteral kSignatureKey =
    "pkg.torch.export.ExportedProgram.graph_signature";

std::optional<std::string>
memopt::parseParameterShapes(StringRef json,
                             std::map<std::string, std::vector<int64_t>> &out,
                             std::map<std::string, int64_t> &paddingIdx) {
  llvm::Expected<llvm::json::Value> value = llvm::json::parse(json);
  if (!value)
    return "not JSON: " + llvm::toString(value.takeError());
  const llvm::json::Object *object = value->getAsObject();
  if (!object)
    return std::string("expected an object mapping each state_dict name to "
                       "its shape, e.g. {\"fc.weight\": [10, 64]}");
  for (const auto &[key, entry] : *object) {
    // A shape, or {"shape": [...], "padding_idx": p} for an nn.Embedding's
    // weight with a padding_idx (which no exporter records).
    const llvm::json::Value *shapeValue = &entry;
    if (const llvm::json::Object *fields = entry.getAsObject()) {
      for (const auto &[field, v] : *fields)
        if (field != "shape" && field != "padding_idx")
          return "'" + key.str() + "' has field '" + field.str() +
                 "'; expected only \"shape\" and \"padding_idx\"";
      shapeValue = fields->get("shape");
      if (!shapeValue)
        return "'" + key.str() + "' has no \"shape\"";
      if (const llvm::json::Value *p = fields->get("padding_idx")) {
        std::optional<int64_t> row = p->getAsInteger();
        if (!row || *row < 0)
          return "the padding_idx of '" + key.str() +
                 "' is not a row (a non-negative integer)";
        paddingIdx[key.str()] = *row;
      }
    }
    const llvm::json::Array *dims = shapeValue->getAsArray();
    if (!dims)
      return "the shape of '" + key.str() + "' is not a list of dimensions";
    std::vector<int64_t> shape;
    for (const llvm::json::Value &d : *dims) {
      std::optional<int64_t> n = d.getAsInteger();
      if (!n || *n < 0)
        return "the shape of '" + key.str() +
               "' has an entry that is not a dimension (a non-negative "
               "integer)";
      shape.push_back(*n);
    }
    out[key.str()] = std::move(shape);
  }
  return std::nullopt;
}

/// GraphProto.metadata_props (ONNX 1.16, IR version 10): the field number
/// of a field the ONNX library Debian ships predates, so protobuf keeps it
/// among the graph's unknown fields.
static constexpr int kGraphMetadataPropsField = 16;

void Importer::readExportSignature() {
  const google::protobuf::UnknownFieldSet &unknown =
      model.graph().unknown_fields();
  for (int i = 0; i < unknown.field_count(); ++i) {
    const google::protobuf::UnknownField &field = unknown.field(i);
    if (field.number() != kGraphMetadataPropsField ||
        field.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      continue;
    onnx::StringStringEntryProto entry;
    if (!entry.ParseFromString(field.length_delimited()) ||
        entry.key() != kSignatureKey)
      continue;
    hasSignature = true;
    SmallVector<StringRef> lines;
    StringRef(entry.value()).split(lines, '\n');
    for (StringRef line : lines) {
      // `p_fc_weight: PARAMETER target='fc.weight'`
      size_t colon = line.find(": ");
      if (colon == StringRef::npos)
        continue;
      StringRef rest = line.drop_front(colon + 2);
      bool param = rest.starts_with("PARAMETER ");
      bool buffer = rest.starts_with("BUFFER ");
      if (!param && !buffer)
        continue;
      size_t at = rest.find("target='");
      if (at == StringRef::npos)
        continue;
      StringRef target = rest.drop_front(at + 8);
      target = target.take_until([](char c) { return c == '\''; });
      (param ? signatureParameters : signatureBuffers).insert(target.str());
    }
  }
}

LogicalResult Importer::checkParameters(ArrayRef<Argument> params) {
  std::map<std::string, std::vector<int64_t>> expected;
  std::string source;
  if (options.parameterShapes) {
    expected = *options.parameterShapes;
    source = "--param-names";
  } else if (hasSignature) {
    for (const std::string &name : signatureParameters)
      expected[name] = {};
    source = "the exporter's record of the model's signature";
  } else {
    return success();
  }
  std::vector<std::string> missing, extra, shapes;
  std::set<std::string> have;
  for (const Argument &a : params) {
    have.insert(a.onnxName);
    auto it = expected.find(a.onnxName);
    if (it == expected.end()) {
      extra.push_back("'" + a.onnxName + "' (" +
                      formatShape(a.type.getShape()) + ")");
      continue;
    }
    if (options.parameterShapes && it->second != a.type.getShape().vec())
      shapes.push_back("'" + a.onnxName + "' is " +
                       formatShape(a.type.getShape()) + " in the file, " +
                       formatShape(it->second) + " in the model");
  }
  for (const auto &[name, shape] : expected)
    if (!have.count(name))
      missing.push_back(
          "'" + name + "'" +
          (initializers.count(name) ? " (in the file, but not trained)" : ""));
  if (missing.empty() && extra.empty() && shapes.empty())
    return success();
  auto list = [](const std::vector<std::string> &items) {
    std::string s;
    for (size_t i = 0; i < items.size() && i < 6; ++i)
      s += (i ? ", " : "") + items[i];
    if (items.size() > 6)
      s += ", ... (" + std::to_string(items.size()) + " in all)";
    return s;
  };
  InFlightDiagnostic diag = fileError();
  diag << "the ONNX model's trainable tensors are not the PyTorch model's "
          "parameters (as "
       << source << " lists them):";
  if (!missing.empty())
    diag << " " << missing.size() << " parameter"
         << (missing.size() == 1 ? " has no initializer of its own: "
                                 : "s have no initializer of their own: ")
         << list(missing) << ";";
  if (!extra.empty())
    diag << " " << extra.size() << " initializer"
         << (extra.size() == 1
                 ? " that would train is not a parameter of the model: "
                 : "s that would train are not parameters of the model: ")
         << list(extra) << ";";
  if (!shapes.empty())
    diag << " shapes differ: " << list(shapes) << ";";
  diag << " the exporter folded, transposed or merged them, and training "
          "this file would train a different model. Export with "
          "torch.onnx.export(..., dynamo=True, optimize=False), or "
          "dynamo=False with training=torch.onnx.TrainingMode.TRAINING and "
          "do_constant_folding=False";
  return failure();
}
