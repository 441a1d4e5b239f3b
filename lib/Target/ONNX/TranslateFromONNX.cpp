//===- TranslateFromONNX.cpp - `memopt-translate --import-onnx` -----------===//
//
// The command-line face of the ONNX importer: its options, the weights file
// and how the module is printed (argument names and node locations kept, so
// memopt-run finds the weights by name and errors point at ONNX nodes).
//
//===----------------------------------------------------------------------===//

#include "memopt/Target/ONNX/ONNXImporter.h"

#include "Importer.h"

#include "memopt/InitAll.h"
#include "memopt/runtime/Error.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace memopt;

namespace {

llvm::cl::OptionCategory &onnxCategory() {
  static llvm::cl::OptionCategory category("ONNX import options "
                                           "(--import-onnx)");
  return category;
}

/// The options, created once when the translation is registered (before
/// the command line is parsed).
struct ImportCLOptions {
  llvm::cl::opt<ONNXLoss> loss{
      "loss", llvm::cl::desc("The loss the imported graph ends in"),
      llvm::cl::values(
          clEnumValN(ONNXLoss::None, "none",
                     "an inference graph returning the model's outputs"),
          clEnumValN(ONNXLoss::CrossEntropy, "cross_entropy",
                     "append an i64 'labels' argument and return the "
                     "cross-entropy of the output (logits) first"),
          clEnumValN(ONNXLoss::Mse, "mse",
                     "append a 'target' argument shaped like the output and "
                     "return the mean squared error first")),
      llvm::cl::init(ONNXLoss::None), llvm::cl::cat(onnxCategory())};
  llvm::cl::opt<std::string> weights{
      "weights",
      llvm::cl::desc("Write every initializer's value to this .safetensors "
                     "file under its argument's name (memopt-run "
                     "--load-weights)"),
      llvm::cl::value_desc("file"), llvm::cl::cat(onnxCategory())};
  llvm::cl::list<std::string> inputShape{
      "input-shape",
      llvm::cl::desc("Fix a graph input's shape: NAME=1x3x224x224 "
                     "(repeatable)"),
      llvm::cl::value_desc("name=shape"), llvm::cl::cat(onnxCategory())};
  llvm::cl::opt<int64_t> batch{
      "batch",
      llvm::cl::desc("Set dimension 0 of every graph input (the batch)"),
      llvm::cl::init(0), llvm::cl::cat(onnxCategory())};
  llvm::cl::opt<std::string> paramNames{
      "param-names",
      llvm::cl::desc("JSON file of the PyTorch model's parameters, "
                     "state_dict name -> shape; the import fails unless the "
                     "graph trains exactly these"),
      llvm::cl::value_desc("file"), llvm::cl::cat(onnxCategory())};
  llvm::cl::opt<std::string> function{
      "function",
      llvm::cl::desc("Name of the emitted function (default: the ONNX "
                     "graph's name)"),
      llvm::cl::cat(onnxCategory())};
};

ImportCLOptions &clOptions() {
  static ImportCLOptions options;
  return options;
}

/// Parses `NAME=AxBxC`; the name may itself contain '='.
LogicalResult parseInputShape(StringRef text, ONNXImportOptions &options,
                              Location loc) {
  size_t eq = text.rfind('=');
  if (eq == StringRef::npos || eq == 0 || eq + 1 == text.size())
    return emitError(loc) << "--input-shape expects NAME=AxBx..., got '" << text
                          << "'";
  std::vector<int64_t> shape;
  SmallVector<StringRef> dims;
  text.drop_front(eq + 1).split(dims, 'x');
  for (StringRef d : dims) {
    int64_t v;
    if (d.getAsInteger(10, v) || v <= 0)
      return emitError(loc)
             << "--input-shape: '" << d << "' is not a positive dimension in '"
             << text << "'";
    shape.push_back(v);
  }
  options.inputShapes[text.take_front(eq).str()] = shape;
  return success();
}

/// Replaces the printer's `%argN` by the N-th name. The module holds one
/// function and no regions, so `%argN` tokens are exactly its arguments.
/// (OpPrintingFlags::printNameLocAsPrefix would name them too, but also
/// every op result after its node: `%_2Fconv12FConv`.)
std::string nameArguments(StringRef text, ArrayRef<std::string> names) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (text.substr(i).starts_with("%arg") &&
        (i + 4 < text.size() &&
         std::isdigit(static_cast<unsigned char>(text[i + 4])))) {
      size_t end = i + 4;
      while (end < text.size() &&
             std::isdigit(static_cast<unsigned char>(text[end])))
        ++end;
      unsigned index;
      if ((end == text.size() || !onnx_import::isNameChar(text[end])) &&
          !text.substr(i + 4, end - i - 4).getAsInteger(10, index) &&
          index < names.size()) {
        out += "%" + names[index];
        i = end;
        continue;
      }
    }
    out.push_back(text[i++]);
  }
  return out;
}

LogicalResult importTranslation(const std::shared_ptr<llvm::SourceMgr> &sources,
                                raw_ostream &output, MLIRContext *context) {
  const llvm::MemoryBuffer *buffer =
      sources->getMemoryBuffer(sources->getMainFileID());
  StringRef fileName = buffer->getBufferIdentifier();
  Location fileLoc = FileLineColLoc::get(context, fileName, 0, 0);
  // Diagnostics name the file and, for a node, the node:
  //   model.onnx: node '/conv1/Conv': error: Conv: asymmetric pads ...
  ScopedDiagnosticHandler handler(context, [&](Diagnostic &diag) {
    std::string node;
    diag.getLocation()->walk([&](Location loc) {
      if (auto name = dyn_cast<NameLoc>(loc)) {
        node = name.getName().str();
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    llvm::errs() << fileName << ": ";
    if (!node.empty())
      llvm::errs() << "node '" << node << "': ";
    switch (diag.getSeverity()) {
    case DiagnosticSeverity::Error:
      llvm::errs() << "error: ";
      break;
    case DiagnosticSeverity::Warning:
      llvm::errs() << "warning: ";
      break;
    default:
      llvm::errs() << "note: ";
      break;
    }
    llvm::errs() << diag << "\n";
    for (const Diagnostic &note : diag.getNotes())
      llvm::errs() << fileName << ": note: " << note << "\n";
    return success();
  });

  ImportCLOptions &cl = clOptions();
  ONNXImportOptions options;
  // External data sits beside the model file (none for standard input).
  if (fileName != "-" && fileName != "<stdin>" && !fileName.empty()) {
    llvm::SmallString<256> dir(fileName);
    llvm::sys::path::remove_filename(dir);
    options.externalDataDir = dir.empty() ? "." : std::string(dir);
  }
  options.loss = cl.loss;
  options.functionName = cl.function;
  if (cl.batch.getNumOccurrences()) {
    if (cl.batch <= 0)
      return emitError(fileLoc)
             << "--batch must be positive, got " << cl.batch.getValue();
    options.batch = cl.batch;
  }
  for (const std::string &s : cl.inputShape)
    if (failed(parseInputShape(s, options, fileLoc)))
      return failure();

  if (!cl.paramNames.empty()) {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
        llvm::MemoryBuffer::getFile(cl.paramNames);
    if (!file)
      return emitError(fileLoc)
             << "--param-names: cannot read '" << cl.paramNames
             << "': " << file.getError().message();
    std::map<std::string, std::vector<int64_t>> shapes;
    if (std::optional<std::string> error = parseParameterShapes(
            (*file)->getBuffer(), shapes, options.embeddingPaddingIdx))
      return emitError(fileLoc)
             << "--param-names: '" << cl.paramNames << "': " << *error;
    options.parameterShapes = std::move(shapes);
  }

  DialectRegistry registry;
  registerAllDialects(registry);
  context->appendDialectRegistry(registry);
  FailureOr<ONNXImportResult> result =
      importONNX(buffer->getBuffer(), fileName, context, options);
  if (failed(result))
    return failure();
  if (!cl.weights.empty()) {
    try {
      runtime::writeSafetensors(cl.weights, result->weights);
    } catch (const std::exception &e) {
      return emitError(fileLoc) << "cannot write the weights: " << e.what();
    }
  }
  // Node locations, and the arguments under the model's names
  // (`%conv1.weight`, `%input`): memopt-run matches weights by these names.
  std::string text;
  llvm::raw_string_ostream os(text);
  (*result->module)->print(os, OpPrintingFlags().enableDebugInfo());
  output << nameArguments(text, result->argumentNames) << "\n";
  return success();
}

} // namespace

void memopt::registerFromONNXTranslation() {
  clOptions();
  static TranslateRegistration registration(
      "import-onnx",
      "ONNX model (.onnx) -> memopt graph; see --loss, --weights, "
      "--input-shape, --batch, --function, --param-names",
      importTranslation);
}
