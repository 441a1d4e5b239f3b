//===- ONNXImporter.h - ONNX ModelProto -> memopt graph ---------*- C++ -*-===//
//
// The way a user's model comes into memopt: an ONNX model (what
// `torch.onnx.export` writes) becomes a `func.func` of memopt ops, an
// inference graph or, with a loss, a training graph, and its initializers
// become the function's parameters and state, with their values kept for a
// safetensors weights file. See docs/onnx-import.md.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_TARGET_ONNX_ONNXIMPORTER_H
#define MEMOPT_TARGET_ONNX_ONNXIMPORTER_H

#include "memopt/runtime/Safetensors.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace memopt {

/// The loss a training graph ends in (`--loss`).
enum class ONNXLoss { None, CrossEntropy, Mse };

struct ONNXImportOptions {
  ONNXLoss loss = ONNXLoss::None;
  /// Shapes of graph inputs by name (`--input-shape=NAME=1x3x224x224`);
  /// they replace what the model declares.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// Dimension 0 of every graph input (`--batch=N`), unless `inputShapes`
  /// names that input.
  std::optional<int64_t> batch;
  /// The function's name; empty: the ONNX graph's name.
  std::string functionName;
  /// The PyTorch model's parameters, state_dict name -> shape
  /// (`--param-names=FILE`): the import fails unless every one is exactly
  /// one parameter of the graph, with its shape, and there are no others.
  std::optional<std::map<std::string, std::vector<int64_t>>> parameterShapes;
  /// nn.Embedding padding_idx by the table's state_dict name (from
  /// `--param-names`): the Gather reading that table becomes
  /// memopt.embedding {padding_idx}; one no Gather reads is an error.
  std::map<std::string, int64_t> embeddingPaddingIdx;
  /// The directory initializers stored as external data are read from
  /// (their `location` is relative to it: the model file's directory, as
  /// `torch.onnx.export(..., dynamo=True)` writes `model.onnx.data` beside
  /// `model.onnx`). Empty: external data is refused.
  std::string externalDataDir;
};

struct ONNXImportResult {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  /// The function's argument names, in order: initializer and input names
  /// made valid SSA names (`onnx::Conv_193` -> `onnx__Conv_193`), unique.
  std::vector<std::string> argumentNames;
  /// Every parameter and state argument's initial value, under the
  /// argument's name (`memopt-run --load-weights`), in argument order.
  runtime::SafetensorsFile weights;
};

/// Imports the serialized ModelProto in `bytes`. `fileName` names it in
/// diagnostics. Emits located diagnostics (a node's name, or the file) and
/// fails on anything it cannot import faithfully; it never skips a node.
llvm::FailureOr<ONNXImportResult> importONNX(llvm::StringRef bytes,
                                             llvm::StringRef fileName,
                                             mlir::MLIRContext *context,
                                             const ONNXImportOptions &options);

/// Parses the JSON of `--param-names`: an object mapping each state_dict
/// name to its shape (`{"fc.weight": [10, 64], ...}`), or to
/// `{"shape": [V, D], "padding_idx": p}` for an `nn.Embedding` weight with
/// a `padding_idx` (into `paddingIdx`). On failure returns a message saying
/// what is wrong.
std::optional<std::string>
parseParameterShapes(llvm::StringRef json,
                     std::map<std::string, std::vector<int64_t>> &out,
                     std::map<std::string, int64_t> &paddingIdx);

/// Registers `--import-onnx` (and its options `--loss`, `--weights`,
/// `--input-shape`, `--batch`, `--function`, `--param-names`) with
/// mlir-translate style drivers. The output module is printed with locations
/// naming the ONNX nodes and with argument names as the model's initializer
/// names.
void registerFromONNXTranslation();

} // namespace memopt

#endif // MEMOPT_TARGET_ONNX_ONNXIMPORTER_H
