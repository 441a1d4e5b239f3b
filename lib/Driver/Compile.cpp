//===- Compile.cpp - compile a memopt graph to a plan in process ----------===//

#include "memopt/Driver/Compile.h"

#include "memopt/Conversion/Passes.h"
#include "memopt/Dialect/MemOpt/IR/MemOptDialect.h"
#include "memopt/Target/Plan/PlanEmitter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace memopt;

std::vector<std::string> memopt::sourceArgumentNames(func::FuncOp func,
                                                     llvm::SourceMgr &sources) {
  std::vector<std::string> names;
  llvm::StringSet<> seen;
  for (BlockArgument arg : func.getArguments()) {
    std::string name;
    // An imported graph printed with locations names its arguments there
    // (`%conv1.weight: tensor<...> loc("conv1.weight")`).
    if (auto named = dyn_cast<NameLoc>(arg.getLoc()))
      name = named.getName().str();
    if (auto loc = dyn_cast<FileLineColLoc>(arg.getLoc())) {
      // The buffer the location names; the main file when none matches.
      unsigned buffer = sources.getMainFileID();
      for (unsigned id = 1; id <= sources.getNumBuffers(); ++id)
        if (sources.getMemoryBuffer(id)->getBufferIdentifier() ==
            loc.getFilename().getValue())
          buffer = id;
      llvm::SMLoc at = sources.FindLocForLineAndColumn(buffer, loc.getLine(),
                                                       loc.getColumn());
      if (at.isValid() && *at.getPointer() == '%') {
        const char *p = at.getPointer() + 1;
        while (std::isalnum(static_cast<unsigned char>(*p)) || *p == '_' ||
               *p == '.' || *p == '$' || *p == '-')
          name.push_back(*p++);
      }
    }
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) ||
        !seen.insert(name).second)
      name = "arg" + std::to_string(arg.getArgNumber());
    names.push_back(name);
  }
  return names;
}

FailureOr<CompiledGraph> memopt::compileToPlan(ModuleOp module,
                                               llvm::SourceMgr &sources,
                                               const CompileOptions &options) {
  SmallVector<func::FuncOp> funcs;
  for (auto func : module.getOps<func::FuncOp>())
    if (options.function.empty() || func.getSymName() == options.function)
      funcs.push_back(func);
  if (funcs.size() != 1)
    return module.emitError()
           << "expected exactly one function"
           << (options.function.empty() ? std::string()
                                        : " named '" + options.function + "'")
           << " to compile, found " << funcs.size()
           << (options.function.empty() ? " (choose one with --function)" : "");
  func::FuncOp func = funcs.front();

  CompiledGraph graph;
  graph.functionName = func.getSymName().str();
  graph.argumentNames = sourceArgumentNames(func, sources);
  FailureOr<std::vector<ArgumentInit>> init = computeArgumentInit(func);
  if (failed(init))
    return failure();
  graph.argumentInit = std::move(*init);

  PassManager pm(module.getContext());
  if (options.passes) {
    options.passes(pm);
  } else if (!options.pipeline.empty()) {
    std::string error;
    llvm::raw_string_ostream errorStream(error);
    if (failed(parsePassPipeline(options.pipeline, pm, errorStream)))
      return module.emitError()
             << "invalid pass pipeline '" << options.pipeline << "': " << error;
  }
  size_t sourceArguments = graph.argumentNames.size();
  SmallVector<Type> sourceTypes(func.getArgumentTypes());
  if (failed(pm.run(module)))
    return failure();
  // ZeRO stage 3: the parameters other ranks own are not this step's
  // arguments; keep what memopt-run needs to initialise, load and save them
  // in the source's order.
  if (auto lowered = module.lookupSymbol<func::FuncOp>(graph.functionName))
    if (auto sharded = lowered->getAttrOfType<DictionaryAttr>(
            MemOptDialect::kShardedAttrName)) {
      auto arguments = sharded.getAs<DenseI64ArrayAttr>("arguments");
      auto owners = sharded.getAs<DenseI64ArrayAttr>("owners");
      llvm::SmallDenseSet<int64_t> away;
      for (auto [index, owner] :
           llvm::zip(arguments.asArrayRef(), owners.asArrayRef())) {
        if (index >= static_cast<int64_t>(sourceArguments) ||
            !away.insert(index).second)
          return lowered.emitError()
                 << "'" << MemOptDialect::kShardedAttrName << "' names "
                 << "argument " << index << ", not one of the source's "
                 << sourceArguments << " (once)";
        auto type = cast<RankedTensorType>(sourceTypes[index]);
        CompiledGraph::ShardedParameter p;
        p.sourceIndex = static_cast<size_t>(index);
        p.name = graph.argumentNames[index];
        p.init = graph.argumentInit[index];
        llvm::raw_string_ostream(p.dtype) << type.getElementType();
        p.shape.assign(type.getShape().begin(), type.getShape().end());
        p.owner = owner;
        graph.sharded.push_back(std::move(p));
      }
      llvm::sort(graph.sharded, [](const auto &a, const auto &b) {
        return a.sourceIndex < b.sourceIndex;
      });
      for (const CompiledGraph::ShardedParameter &p :
           llvm::reverse(graph.sharded)) {
        graph.argumentNames.erase(graph.argumentNames.begin() + p.sourceIndex);
        graph.argumentInit.erase(graph.argumentInit.begin() + p.sourceIndex);
      }
      sourceArguments -= graph.sharded.size();
      // The parameters held by rows: plan arguments, past those dropped.
      if (auto rows = sharded.getAs<DenseI64ArrayAttr>("rows"))
        for (int64_t index : rows.asArrayRef()) {
          if (index >= static_cast<int64_t>(sourceTypes.size()) ||
              away.contains(index))
            return lowered.emitError()
                   << "'" << MemOptDialect::kShardedAttrName << "' holds "
                   << "rows of argument " << index
                   << ", not a parameter the step keeps";
          CompiledGraph::RowParameter p;
          p.argument =
              static_cast<size_t>(index - llvm::count_if(away, [&](int64_t a) {
                                    return a < index;
                                  }));
          auto type = cast<RankedTensorType>(sourceTypes[index]);
          p.shape.assign(type.getShape().begin(), type.getShape().end());
          graph.rowParameters.push_back(std::move(p));
        }
    }
  // Arguments the pipeline added (optimizer state) start at zero, as
  // PyTorch's optimizers initialise their buffers and step counts, or at
  // the value the compiler gives (the loss scale).
  auto lowered = module.lookupSymbol<func::FuncOp>(graph.functionName);
  for (size_t i = sourceArguments; lowered && i < lowered.getNumArguments();
       ++i) {
    ArgumentInit init;
    init.kind = ArgumentInit::Kind::Constant;
    init.value = 0;
    init.reason = "optimizer state, zeros";
    if (auto value = lowered.getArgAttrOfType<FloatAttr>(
            i, MemOptDialect::kInitialValueAttrName)) {
      init.value = value.getValueAsDouble();
      init.reason = llvm::formatv("optimizer state, {0}", init.value).str();
    }
    graph.argumentInit.push_back(init);
    // Arguments the compiler named (the loss scale) keep their name.
    if (auto name = dyn_cast<NameLoc>(lowered.getArgument(i).getLoc()))
      graph.argumentNames.push_back(name.getName().str());
    else
      graph.argumentNames.push_back("optimizer_state." +
                                    std::to_string(i - sourceArguments));
  }

  PassManager lower(module.getContext());
  ConvertMemOptToMemRTOptions lowering;
  lowering.alignment = options.alignment;
  lower.addPass(createConvertMemOptToMemRT(lowering));
  if (failed(lower.run(module)))
    return failure();

  // The plan is built once, with the source's argument names (so weights
  // files and error messages use the model's names), and parsed once, by
  // the runtime.
  llvm::raw_string_ostream os(graph.planJson);
  PlanEmitOptions emit;
  emit.argumentNames = graph.argumentNames;
  emit.compact = true;
  if (failed(emitPlan(module, os, graph.functionName, emit)))
    return failure();
  return graph;
}
