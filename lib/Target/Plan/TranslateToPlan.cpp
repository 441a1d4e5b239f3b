//===- TranslateToPlan.cpp - memrt function -> plan file (JSON) -----------===//
//
// Numbers every buffer of a memrt function (arguments, arena slices, views,
// constants) and writes the kernel calls over those numbers as JSON, with
// nlohmann-json. The plan is built completely in memory before anything is
// written, so a failure leaves no half-written output.
//
//===----------------------------------------------------------------------===//

#include "memopt/Target/Plan/PlanEmitter.h"

#include "memopt/Contract/PlanFormat.h"
#include "memopt/Dialect/MemRT/IR/MemRTOps.h"
#include "memopt/Support/InputLimits.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <map>

using namespace mlir;
using namespace memopt;
using Json = nlohmann::ordered_json;

namespace {

/// `file:line:col` of the first file location inside `loc`, or "".
std::string formatLocation(Location loc) {
  std::string result;
  loc->walk([&](Location l) {
    if (auto file = dyn_cast<FileLineColLoc>(l)) {
      result = (file.getFilename().getValue() + ":" + Twine(file.getLine()) +
                ":" + Twine(file.getColumn()))
                   .str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return result;
}

/// The plan's spelling of an element type, which is MLIR's, when the
/// contract lists it (memopt/Contract/DTypes.def).
FailureOr<std::string> dtypeName(Location loc, Type type) {
  std::string name;
  llvm::raw_string_ostream(name) << type;
#define MEMOPT_DTYPE(KIND, NAME, BYTES, IS_FLOAT)                              \
  if (name == NAME)                                                            \
    return name;
#include "memopt/Contract/DTypes.def"
  return emitError(loc) << "element type " << type
                        << " cannot be written to a plan";
}

/// An attribute as plan JSON: integers, floats, booleans, strings and arrays.
FailureOr<Json> attributeToJson(Location loc, StringRef name, Attribute attr) {
  if (auto b = dyn_cast<BoolAttr>(attr))
    return Json(b.getValue());
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return Json(i.getInt());
  if (auto f = dyn_cast<FloatAttr>(attr)) {
    // JSON would write NaN and infinity as null, which is no number.
    if (!f.getValue().isFinite())
      return emitError(loc) << "attribute '" << name
                            << "' is not a finite number and cannot be "
                               "written to a plan";
    return Json(f.getValueAsDouble());
  }
  if (auto s = dyn_cast<StringAttr>(attr))
    return Json(s.getValue().str());
  if (auto a = dyn_cast<DenseI64ArrayAttr>(attr))
    return Json(a.asArrayRef().vec());
  return emitError(loc) << "attribute '" << name << "' (" << attr
                        << ") cannot be written to a plan";
}

FailureOr<Json> constantValues(Location loc, ElementsAttr value) {
  Json values = Json::array();
  Type elementType = value.getElementType();
  if (isa<FloatType>(elementType)) {
    // JSON has no inf or NaN: those are written as strings (a causal
    // attention mask holds -inf).
    for (APFloat v : value.getValues<APFloat>()) {
      double d = v.convertToDouble();
      if (std::isnan(d))
        values.push_back("nan");
      else if (std::isinf(d))
        values.push_back(d > 0 ? "inf" : "-inf");
      else
        values.push_back(d);
    }
  } else if (elementType.isInteger()) {
    for (APInt v : value.getValues<APInt>())
      values.push_back(v.getSExtValue());
  } else {
    return emitError(loc) << "constant of element type " << elementType
                          << " cannot be written to a plan";
  }
  return values;
}

class PlanBuilder {
public:
  explicit PlanBuilder(ArrayRef<std::string> argumentNames)
      : argumentNames(argumentNames) {}

  LogicalResult build(func::FuncOp func, Json &plan) {
    auto arena = func->getAttrOfType<IntegerAttr>(
        memrt::MemRTDialect::kArenaBytesAttrName);
    auto alignment = func->getAttrOfType<IntegerAttr>(
        memrt::MemRTDialect::kAlignmentAttrName);
    if (!arena || !alignment)
      return func.emitOpError("is not lowered to memrt (missing '")
             << memrt::MemRTDialect::kArenaBytesAttrName << "' or '"
             << memrt::MemRTDialect::kAlignmentAttrName
             << "'); run --convert-memopt-to-memrt first";

    Json arguments = Json::array();
    for (BlockArgument arg : func.getArguments()) {
      auto role = func.getArgAttrOfType<StringAttr>(
          arg.getArgNumber(), memrt::MemRTDialect::kRoleAttrName);
      FailureOr<int64_t> id = addTensor(arg, func.getLoc(), [&](Json &t) {
        t["storage"] = "argument";
        t["argument"] = arg.getArgNumber();
      });
      if (failed(id))
        return failure();
      unsigned index = arg.getArgNumber();
      arguments.push_back({{"name", index < argumentNames.size()
                                        ? argumentNames[index]
                                        : "arg" + std::to_string(index)},
                           {"role", role ? role.getValue().str() : "data"},
                           {"tensor", *id}});
    }

    Json steps = Json::array();
    Json results = Json::array();
    for (Operation &op : func.getBody().front()) {
      LogicalResult ok =
          llvm::TypeSwitch<Operation *, LogicalResult>(&op)
              .Case([&](memrt::ArenaSliceOp slice) -> LogicalResult {
                // A workspace is no tensor: the step that uses it names
                // its bytes.
                if (isWorkspace(slice))
                  return success();
                return addTensor(slice, slice.getLoc(), [&](Json &t) {
                  t["storage"] = "arena";
                  t["offset"] = slice.getOffset();
                });
              })
              .Case([&](memrt::ViewOp view) {
                int64_t of = ids.lookup(view.getSource());
                FailureOr<int64_t> id =
                    addTensor(view, view.getLoc(), [&](Json &t) {
                      t["storage"] = "view";
                      t["of"] = of;
                    });
                if (succeeded(id))
                  rootOf[*id] = rootOf[of];
                return id;
              })
              .Case([&](memrt::ConstantOp constant) -> LogicalResult {
                FailureOr<Json> values =
                    constantValues(constant.getLoc(), constant.getValue());
                if (failed(values))
                  return failure();
                return addTensor(constant, constant.getLoc(), [&](Json &t) {
                  t["storage"] = "constant";
                  t["values"] = std::move(*values);
                });
              })
              .Case([&](memrt::KernelOp kernel) -> LogicalResult {
                FailureOr<Json> step = buildStep(kernel);
                if (failed(step))
                  return failure();
                steps.push_back(std::move(*step));
                return success();
              })
              .Case([&](func::ReturnOp ret) {
                for (Value v : ret.getOperands()) {
                  results.push_back(ids.lookup(v));
                  returned.push_back(ids.lookup(v));
                }
                return success();
              })
              .Default([](Operation *other) {
                return other->emitOpError("cannot be written to a plan");
              });
      if (failed(ok))
        return failure();
    }

    // Live ranges of arena tensors: from the first to the last step that
    // touches them (directly or through a view); results stay live after
    // the last step.
    int64_t numSteps = static_cast<int64_t>(steps.size());
    for (int64_t id : returned)
      touch(id, numSteps);
    for (Json &t : tensors)
      if (t["storage"] == "arena") {
        int64_t id = t["id"].get<int64_t>();
        auto range = live.find(id);
        t["live"] =
            range == live.end()
                ? Json::array({0, 0})
                : Json::array({range->second.first, range->second.second});
      }

    Json updates = Json::array();
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
      if (auto index = func.getResultAttrOfType<IntegerAttr>(
              i, memrt::MemRTDialect::kUpdatesAttrName))
        updates.push_back({{"result", i}, {"argument", index.getInt()}});

    plan = Json{{"format", "memopt-plan"},
                {"version", runtime::kPlanVersion},
                {"function", func.getSymName().str()},
                {"arena_bytes", arena.getInt()},
                {"alignment", alignment.getInt()},
                {"tensors", std::move(tensors)},
                {"arguments", std::move(arguments)},
                {"results", std::move(results)},
                {"steps", std::move(steps)},
                {"updates", std::move(updates)}};
    return success();
  }

private:
  /// Numbers `value` and records its tensor entry; `storage` fills in where
  /// its bytes live.
  FailureOr<int64_t> addTensor(Value value, Location loc,
                               llvm::function_ref<void(Json &)> storage) {
    auto type = dyn_cast<MemRefType>(value.getType());
    if (!type || !type.hasStaticShape())
      return emitError(loc) << "value of type " << value.getType()
                            << " cannot be written to a plan";
    FailureOr<std::string> dtype = dtypeName(loc, type.getElementType());
    if (failed(dtype))
      return failure();
    int64_t id = static_cast<int64_t>(tensors.size());
    Json t = {{"id", id}, {"dtype", *dtype}, {"shape", type.getShape().vec()}};
    storage(t);
    tensors.push_back(std::move(t));
    ids[value] = id;
    rootOf.push_back(id);
    return id;
  }

  /// Extends the live range of `id`'s storage to cover step `step`.
  void touch(int64_t id, int64_t step) {
    auto [it, inserted] = live.try_emplace(rootOf[id], step, step);
    if (!inserted) {
      it->second.first = std::min(it->second.first, step);
      it->second.second = std::max(it->second.second, step);
    }
  }

  FailureOr<Json> buildStep(memrt::KernelOp kernel) {
    Json attrs = Json::object();
    for (NamedAttribute attr : kernel.getAttrs()) {
      FailureOr<Json> value = attributeToJson(
          kernel.getLoc(), attr.getName().getValue(), attr.getValue());
      if (failed(value))
        return failure();
      attrs[attr.getName().getValue().str()] = std::move(*value);
    }
    Json ins = Json::array(), outs = Json::array();
    int64_t stepIndex = numStepsSoFar++;
    for (Value v : kernel.getIns()) {
      ins.push_back(ids.lookup(v));
      touch(ids.lookup(v), stepIndex);
    }
    for (Value v : kernel.getOuts()) {
      outs.push_back(ids.lookup(v));
      touch(ids.lookup(v), stepIndex);
    }
    Json step{{"kernel", kernel.getKernel().str()},
              {"inputs", std::move(ins)},
              {"outputs", std::move(outs)},
              {"attrs", std::move(attrs)},
              {"loc", formatLocation(kernel.getLoc())}};
    if (kernel->hasAttr("memrt.recompute"))
      step["recompute"] = true;
    if (Value workspace = kernel.getWorkspace()) {
      auto slice = workspace.getDefiningOp<memrt::ArenaSliceOp>();
      step["workspace"] = {{"offset", slice.getOffset()},
                           {"bytes", slice.getSizeInBytes()}};
    }
    return step;
  }

  /// Whether `slice` is a kernel workspace: i8 buffers are nothing else.
  static bool isWorkspace(memrt::ArenaSliceOp slice) {
    return slice.getType().getElementType().isSignlessInteger(8);
  }

  ArrayRef<std::string> argumentNames;
  Json tensors = Json::array();
  llvm::DenseMap<Value, int64_t> ids;
  /// Tensor id -> the id whose storage it uses (itself unless a view).
  std::vector<int64_t> rootOf;
  /// Root tensor id -> [first, last] step touching it.
  std::map<int64_t, std::pair<int64_t, int64_t>> live;
  std::vector<int64_t> returned;
  int64_t numStepsSoFar = 0;
};

/// Compact JSON of one value (never throws: invalid UTF-8 is replaced).
std::string compact(const Json &value) {
  return value.dump(-1, ' ', /*ensure_ascii=*/false,
                    Json::error_handler_t::replace);
}

/// Writes the plan with one top-level field per line and one tensor,
/// argument or step per line, so plans diff and grep well.
void writePlan(const Json &plan, llvm::raw_ostream &os) {
  os << "{\n";
  bool firstField = true;
  for (const auto &[key, value] : plan.items()) {
    os << (firstField ? "" : ",\n") << "  " << compact(key) << ": ";
    firstField = false;
    if (!value.is_array() || value.empty() || !value.front().is_object()) {
      os << compact(value);
      continue;
    }
    os << "[\n";
    for (size_t i = 0; i < value.size(); ++i)
      os << "    " << compact(value[i])
         << (i + 1 < value.size() ? ",\n" : "\n");
    os << "  ]";
  }
  os << "\n}\n";
}

} // namespace

LogicalResult memopt::emitPlan(func::FuncOp func, llvm::raw_ostream &os,
                               const PlanEmitOptions &options) {
  Json plan;
  if (failed(PlanBuilder(options.argumentNames).build(func, plan)))
    return failure();
  if (options.compact)
    os << compact(plan);
  else
    writePlan(plan, os);
  return success();
}

LogicalResult memopt::emitPlan(ModuleOp module, llvm::raw_ostream &os,
                               StringRef functionName,
                               const PlanEmitOptions &options) {
  SmallVector<func::FuncOp> candidates;
  for (auto func : module.getOps<func::FuncOp>())
    if (functionName.empty()
            ? func->hasAttr(memrt::MemRTDialect::kArenaBytesAttrName)
            : func.getSymName() == functionName)
      candidates.push_back(func);
  if (candidates.size() != 1)
    return module.emitError()
           << "expected exactly one "
           << (functionName.empty()
                   ? "memrt function (with 'memrt.arena_bytes')"
                   : "function named '" + functionName.str() + "'")
           << " to write as a plan, found " << candidates.size();
  return emitPlan(candidates.front(), os, options);
}

void memopt::registerToPlanTranslation() {
  static llvm::cl::opt<std::string> planFunction(
      "plan-function",
      llvm::cl::desc("Function to write with --memrt-to-plan (default: the "
                     "only memrt function)"),
      llvm::cl::init(""));
  // The generic form: the input is checked for nesting MLIR's parser cannot
  // take (InputLimits.h) before it is parsed.
  TranslateRegistration registration(
      "memrt-to-plan", "write a memrt function as a memopt plan file (JSON)",
      [](const std::shared_ptr<llvm::SourceMgr> &sources, llvm::raw_ostream &os,
         MLIRContext *context) -> LogicalResult {
        if (failed(checkBracketNesting(*sources, sources->getMainFileID())))
          return failure();
        context->loadDialect<memrt::MemRTDialect, func::FuncDialect>();
        OwningOpRef<ModuleOp> module =
            parseSourceFile<ModuleOp>(sources, ParserConfig(context));
        if (!module)
          return failure();
        return emitPlan(*module, os, planFunction);
      });
}
