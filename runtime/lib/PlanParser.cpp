//===- PlanParser.cpp - read a plan file's JSON ---------------------------===//
//
// PlanParser's reading of docs/plan-format.md's JSON, entry by entry: the
// header, arguments, tensors (with constants' values encoded in their
// dtype), results, steps (each checked against its kernel's rules,
// KernelRules.h) and updates. Fields are read through ObjectReader, whose
// messages name the entry and the field. The checks that span entries are
// in PlanValidation.cpp.
//
//===----------------------------------------------------------------------===//

#include "PlanParser.h"

#include "JsonText.h"
#include "KernelRules.h"
#include "memopt/runtime/Error.h"
#include "memopt/runtime/Half.h"

#include <cstring>
#include <limits>
#include <map>
#include <optional>

using nlohmann::json;

namespace memopt::runtime {

[[noreturn]] void fail(const std::string &where, const std::string &what) {
  throw Error(ErrorCode::InvalidPlan,
              where.empty() ? "plan: " + what : "plan: " + where + ": " + what);
}

namespace {

/// How a JSON value's type is named in messages.
std::string kindOf(const json &v) {
  if (v.is_number_integer())
    return "integer " + jsonText(v);
  if (v.is_number_float())
    return "number " + jsonText(v);
  if (v.is_string())
    return "string " + jsonText(v);
  return v.type_name();
}

} // namespace

/// Typed access to the fields of one JSON object, with messages that name
/// the object (`tensors[4]`) and the field.
class ObjectReader {
public:
  ObjectReader(const json &v, std::string where) : where(std::move(where)) {
    if (!v.is_object())
      fail(this->where, "expected an object, got " + kindOf(v));
    obj = &v;
  }

  const std::string &name() const { return where; }

  const json *find(const char *field) const {
    auto it = obj->find(field);
    return it == obj->end() ? nullptr : &*it;
  }
  const json &get(const char *field) const {
    const json *v = find(field);
    if (!v)
      fail(where, concat("missing field '", field, "'"));
    return *v;
  }

  std::string string(const char *field) const {
    const json &v = get(field);
    if (!v.is_string())
      fail(where,
           concat("field '", field, "' must be a string, got ", kindOf(v)));
    return v.get<std::string>();
  }
  int64_t integer(const char *field) const {
    return toInteger(get(field), field);
  }
  /// A non-negative integer (fits in 63 bits).
  uint64_t count(const char *field) const {
    int64_t v = integer(field);
    if (v < 0)
      fail(where, concat("field '", field, "' must be >= 0, got ", v));
    return static_cast<uint64_t>(v);
  }
  const json &array(const char *field) const {
    const json &v = get(field);
    if (!v.is_array())
      fail(where,
           concat("field '", field, "' must be an array, got ", kindOf(v)));
    return v;
  }

  int64_t toInteger(const json &v, const std::string &field) const {
    if (!v.is_number_integer())
      fail(where,
           concat("field '", field, "' must be an integer, got ", kindOf(v)));
    if (v.is_number_unsigned() &&
        v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
      fail(where, concat("field '", field, "' value ", jsonText(v),
                         " does not fit in 64 bits"));
    return v.get<int64_t>();
  }

  /// An array of integers (`ids` of a step, `shape` of a tensor).
  std::vector<int64_t> integers(const char *field) const {
    std::vector<int64_t> out;
    const json &v = array(field);
    for (size_t i = 0; i < v.size(); ++i)
      out.push_back(toInteger(v[i], concat(field, "[", i, "]")));
    return out;
  }

private:
  const json *obj = nullptr;
  std::string where;
};

namespace {

/// The end of a byte range, spelled exactly even when it overflows 64 bits.
std::string endOf(uint64_t offset, uint64_t bytes) {
  uint64_t end;
  if (!__builtin_add_overflow(offset, bytes, &end))
    return std::to_string(end);
  unsigned __int128 v = static_cast<unsigned __int128>(offset) + bytes;
  std::string digits;
  for (; v; v /= 10)
    digits.insert(digits.begin(), char('0' + static_cast<int>(v % 10)));
  return digits;
}

/// Encodes one constant value in `dtype`; `where`/`index` name it.
void encodeConstant(const json &v, DType dtype, uint8_t *dst,
                    const std::string &where, size_t index) {
  // Floats that JSON cannot hold are the strings "inf", "-inf" and "nan".
  std::optional<double> special;
  if (v.is_string() && !isIntegerDType(dtype)) {
    const std::string &s = v.get_ref<const std::string &>();
    if (s == "inf")
      special = std::numeric_limits<double>::infinity();
    else if (s == "-inf")
      special = -std::numeric_limits<double>::infinity();
    else if (s == "nan")
      special = std::numeric_limits<double>::quiet_NaN();
  }
  if (!v.is_number() && !special)
    fail(where,
         concat("values[", index, "] must be a number",
                isIntegerDType(dtype) ? "" : " or \"inf\", \"-inf\", \"nan\"",
                ", got ", kindOf(v)));
  if (isIntegerDType(dtype)) {
    if (!v.is_number_integer() ||
        (v.is_number_unsigned() &&
         v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)))
      fail(where, concat("values[", index, "] must be an integer for dtype ",
                         dtypeName(dtype), ", got ", kindOf(v)));
    int64_t x = v.get<int64_t>();
    if (dtype == DType::I32) {
      if (x < INT32_MIN || x > INT32_MAX)
        fail(where,
             concat("values[", index, "] = ", x, " does not fit in i32"));
      int32_t y = static_cast<int32_t>(x);
      std::memcpy(dst, &y, 4);
    } else if (dtype == DType::UI8) {
      if (x < 0 || x > UINT8_MAX)
        fail(where,
             concat("values[", index, "] = ", x, " does not fit in ui8"));
      *dst = static_cast<uint8_t>(x);
    } else {
      std::memcpy(dst, &x, 8);
    }
    return;
  }
  double d = special ? *special : v.get<double>();
  switch (dtype) {
  case DType::F64:
    std::memcpy(dst, &d, 8);
    return;
  case DType::F32: {
    float f = static_cast<float>(d);
    std::memcpy(dst, &f, 4);
    return;
  }
  case DType::F16: {
    uint16_t h = floatToHalfBits(static_cast<float>(d));
    std::memcpy(dst, &h, 2);
    return;
  }
  case DType::BF16: {
    uint16_t h = floatToBFloat16Bits(static_cast<float>(d));
    std::memcpy(dst, &h, 2);
    return;
  }
  default:
    return;
  }
}

} // namespace

void PlanParser::parse(const json &root) {
  ObjectReader top(root, "");
  parseHeader(top);
  // Arguments first: tensors refer to them by index.
  parseArguments(top.array("arguments"));
  parseTensors(top.array("tensors"));
  checkArgumentsAgainstTensors();
  resolveViews();
  parseResults(top.array("results"));
  parseSteps(top.array("steps"));
  checkArenaLayout();
  checkResultsWritten();
  checkInPlaceSafety();
  if (const json *updates = top.find("updates"); updates && !updates->is_null())
    parseUpdates(*updates);
}

void PlanParser::parseHeader(const ObjectReader &top) {
  const json &format = top.get("format");
  if (!format.is_string() || format.get<std::string>() != "memopt-plan")
    fail("", "field 'format' must be \"memopt-plan\", got " + kindOf(format));
  int64_t version = top.integer("version");
  if (version < kMinPlanVersion || version > kPlanVersion)
    fail("", concat("unsupported version ", version,
                    " (this runtime reads versions ", kMinPlanVersion, " to ",
                    kPlanVersion, ")"));
  plan.version = version;
  plan.function = top.string("function");
  plan.arenaBytes = top.count("arena_bytes");
  int64_t alignment = top.integer("alignment");
  if (alignment < 1 || (alignment & (alignment - 1)) != 0)
    fail("",
         concat("field 'alignment' must be a power of two, got ", alignment));
  plan.alignment = static_cast<uint64_t>(alignment);
}

void PlanParser::parseArguments(const json &args) {
  std::map<std::string, size_t> names;
  for (size_t i = 0; i < args.size(); ++i) {
    ObjectReader r(args[i], concat("arguments[", i, "]"));
    ArgumentInfo a;
    a.name = r.string("name");
    std::string role = r.string("role");
    if (role == "param")
      a.role = ArgumentRole::Param;
    else if (role == "state")
      a.role = ArgumentRole::State;
    else if (role == "optimizer_state")
      a.role = ArgumentRole::OptimizerState;
    else if (role == "data")
      a.role = ArgumentRole::Data;
    else
      fail(r.name(), concat("field 'role' must be \"param\", \"state\", "
                            "\"optimizer_state\" or \"data\", got \"",
                            role, "\""));
    a.tensor = r.integer("tensor");
    if (!a.name.empty()) {
      auto [it, inserted] = names.emplace(a.name, i);
      if (!inserted)
        fail(r.name(), concat("duplicate argument name '", a.name,
                              "' (also arguments[", it->second, "])"));
    }
    plan.arguments.push_back(std::move(a));
  }
}

void PlanParser::parseTensors(const json &tensors) {
  for (size_t i = 0; i < tensors.size(); ++i)
    plan.tensors.push_back(parseTensor(tensors[i], i));
}

TensorInfo PlanParser::parseTensor(const json &v, size_t index) {
  ObjectReader r(v, concat("tensors[", index, "]"));
  TensorInfo t;
  t.id = r.integer("id");
  if (t.id != static_cast<int64_t>(index))
    fail(r.name(), concat("field 'id' must equal the entry's index ", index,
                          ", got ", t.id));
  std::string dtype = r.string("dtype");
  std::optional<DType> parsed = parseDType(dtype);
  if (!parsed)
    fail(r.name(), concat("unknown dtype \"", dtype,
                          "\" (expected f32, f64, f16, bf16, i32 or i64)"));
  t.dtype = *parsed;
  t.shape = r.integers("shape");
  for (size_t d = 0; d < t.shape.size(); ++d)
    if (t.shape[d] <= 0)
      fail(r.name(), concat("shape ", formatShape(t.shape),
                            " must have positive sizes (dimension ", d, " is ",
                            t.shape[d], ")"));
  std::optional<int64_t> count = checkedNumElements(t.shape);
  size_t elementSize = dtypeSize(t.dtype);
  if (!count || *count > INT64_MAX / static_cast<int64_t>(elementSize))
    fail(r.name(), concat("shape ", formatShape(t.shape),
                          " has too many elements (the byte size "
                          "overflows 63 bits)"));
  t.numElements = *count;
  t.bytes = static_cast<uint64_t>(*count) * elementSize;
  t.root = t.id;

  std::string storage = r.string("storage");
  if (storage == "arena") {
    t.storage = StorageKind::Arena;
    t.offset = r.count("offset");
    if (plan.version >= 2) {
      const json &live = r.get("live");
      if (!live.is_array() || live.size() != 2 ||
          !live[0].is_number_integer() || !live[1].is_number_integer() ||
          live[0].get<int64_t>() < 0 ||
          live[1].get<int64_t>() < live[0].get<int64_t>())
        fail(concat("tensors[", index, "]"),
             "field 'live' must be [first, last] step indices with "
             "0 <= first <= last, got " +
                 jsonText(live));
      t.liveFirst = live[0].get<int64_t>();
      t.liveLast = live[1].get<int64_t>();
    }
    if (t.offset % plan.alignment != 0)
      fail(r.name(),
           concat("offset ", t.offset, " is not a multiple of the alignment ",
                  plan.alignment));
    if (t.offset > plan.arenaBytes || t.bytes > plan.arenaBytes - t.offset)
      fail(r.name(),
           concat("arena slice [", t.offset, ", ", endOf(t.offset, t.bytes),
                  ") exceeds arena_bytes ", plan.arenaBytes));
  } else if (storage == "argument") {
    t.storage = StorageKind::Argument;
    t.argument = r.integer("argument");
    if (t.argument < 0 ||
        t.argument >= static_cast<int64_t>(plan.arguments.size()))
      fail(r.name(), concat("argument ", t.argument,
                            " is not an argument index (the plan has ",
                            plan.arguments.size(), " arguments)"));
  } else if (storage == "view") {
    t.storage = StorageKind::View;
    t.viewOf = r.integer("of");
    // Range-checked once every tensor is known (resolveViews).
  } else if (storage == "constant") {
    t.storage = StorageKind::Constant;
    const json &values = r.array("values");
    if (values.size() != 1 &&
        values.size() != static_cast<uint64_t>(t.numElements))
      fail(r.name(), concat("constant of shape ", formatShape(t.shape),
                            " needs ", t.numElements,
                            " values (or 1 to splat), got ", values.size()));
    t.constantData.resize(t.bytes);
    if (values.size() == 1) {
      encodeConstant(values[0], t.dtype, t.constantData.data(), r.name(), 0);
      for (int64_t e = 1; e < t.numElements; ++e)
        std::memcpy(t.constantData.data() + e * elementSize,
                    t.constantData.data(), elementSize);
    } else {
      for (size_t e = 0; e < values.size(); ++e)
        encodeConstant(values[e], t.dtype,
                       t.constantData.data() + e * elementSize, r.name(), e);
    }
  } else {
    fail(r.name(), concat("field 'storage' must be \"arena\", \"argument\", "
                          "\"view\" or \"constant\", got \"",
                          storage, "\""));
  }
  return t;
}

/// A tensor id in an `inputs`/`outputs` list (`what` is "input" or
/// "output").
int64_t PlanParser::tensorId(const std::string &where, const json &v,
                             const std::string &what) {
  if (!v.is_number_integer())
    fail(where, concat(what, " must be a tensor id, got ", kindOf(v)));
  bool inRange =
      !(v.is_number_unsigned() && v.get<uint64_t>() >= plan.tensors.size());
  int64_t id = inRange ? v.get<int64_t>() : -1;
  if (!inRange || id < 0 || id >= static_cast<int64_t>(plan.tensors.size()))
    fail(where, concat(what, " ", jsonText(v), " is not a tensor id"));
  return id;
}

void PlanParser::parseResults(const json &results) {
  for (size_t i = 0; i < results.size(); ++i) {
    std::string where = concat("results[", i, "]");
    const json &v = results[i];
    if (!v.is_number_integer())
      fail(where, "must be a tensor id, got " + kindOf(v));
    int64_t id = v.is_number_unsigned() &&
                         v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)
                     ? -1
                     : v.get<int64_t>();
    if (id < 0 || id >= static_cast<int64_t>(plan.tensors.size()))
      fail(where, concat(jsonText(v), " is not a tensor id"));
    plan.results.push_back(id);
  }
}

void PlanParser::parseSteps(const json &steps) {
  written.assign(plan.tensors.size(), false);
  for (size_t i = 0; i < steps.size(); ++i)
    plan.steps.push_back(parseStep(steps[i], i));
}

Step PlanParser::parseStep(const json &v, size_t index) {
  ObjectReader r(v, concat("steps[", index, "]"));
  Step step;
  std::string kernel = r.string("kernel");
  std::optional<KernelKind> kind = lookupKernel(kernel);
  if (!kind)
    fail(r.name(), concat("unknown kernel '", kernel, "'"));
  step.kernel = *kind;
  if (const json *loc = r.find("loc")) {
    if (!loc->is_string())
      fail(r.name(), "field 'loc' must be a string, got " + kindOf(*loc));
    step.loc = loc->get<std::string>();
  }
  if (const json *workspace = r.find("workspace");
      workspace && !workspace->is_null()) {
    ObjectReader w(*workspace, r.name() + ": workspace");
    step.workspaceOffset = w.count("offset");
    step.workspaceBytes = w.count("bytes");
    if (step.workspaceBytes == 0)
      fail(w.name(), "field 'bytes' must be > 0");
    if (step.workspaceOffset % plan.alignment != 0)
      fail(w.name(),
           concat("offset ", step.workspaceOffset,
                  " is not a multiple of the alignment ", plan.alignment));
    if (step.workspaceOffset > plan.arenaBytes ||
        step.workspaceBytes > plan.arenaBytes - step.workspaceOffset)
      fail(w.name(), concat("arena slice [", step.workspaceOffset, ", ",
                            endOf(step.workspaceOffset, step.workspaceBytes),
                            ") exceeds arena_bytes ", plan.arenaBytes));
  }
  if (const json *recompute = r.find("recompute")) {
    if (!recompute->is_boolean())
      fail(r.name(),
           "field 'recompute' must be a boolean, got " + kindOf(*recompute));
    step.recompute = recompute->get<bool>();
  }
  std::string where = concat(r.name(), " (", kernel);
  if (!step.loc.empty())
    where += " at " + step.loc;
  where += ")";
  ObjectReader named(v, where);

  for (const char *field : {"inputs", "outputs"}) {
    const json &ids = named.array(field);
    std::string what = std::string(field) == "inputs" ? "input" : "output";
    for (const json &id : ids)
      (what == "input" ? step.inputs : step.outputs)
          .push_back(tensorId(where, id, what));
  }
  static const json emptyObject = json::object();
  const json *attrs = named.find("attrs");
  if (attrs && !attrs->is_object() && !attrs->is_null())
    fail(where, "field 'attrs' must be an object, got " + kindOf(*attrs));
  std::vector<const TensorInfo *> ins, outs;
  for (int64_t id : step.inputs)
    ins.push_back(&plan.tensors[id]);
  for (int64_t id : step.outputs)
    outs.push_back(&plan.tensors[id]);
  checkDataFlow(step, where, index);
  step.attrs = detail::checkStep(
      *kind, attrs && attrs->is_object() ? *attrs : emptyObject, ins, outs,
      where);
  return step;
}

/// `updates`: optional, each entry names a result and a persistent
/// argument of the same type, every argument at most once.
void PlanParser::parseUpdates(const json &updates) {
  if (!updates.is_array())
    fail("", "field 'updates' must be an array, got " + kindOf(updates));
  std::map<int64_t, size_t> updated;
  for (size_t i = 0; i < updates.size(); ++i) {
    ObjectReader r(updates[i], concat("updates[", i, "]"));
    UpdateInfo u;
    u.result = r.integer("result");
    u.argument = r.integer("argument");
    if (u.result < 0 || u.result >= static_cast<int64_t>(plan.results.size()))
      fail(r.name(),
           concat("result ", u.result, " is not a result index (the plan has ",
                  plan.results.size(), " results)"));
    if (u.argument < 0 ||
        u.argument >= static_cast<int64_t>(plan.arguments.size()))
      fail(r.name(), concat("argument ", u.argument,
                            " is not an argument index (the plan has ",
                            plan.arguments.size(), " arguments)"));
    const ArgumentInfo &arg = plan.arguments[u.argument];
    if (arg.role == ArgumentRole::Data)
      fail(r.name(), concat("argument ", u.argument, " is data ('", arg.name,
                            "'); only param, state and optimizer_state "
                            "arguments persist to be updated"));
    const TensorInfo &from = plan.tensors[plan.results[u.result]];
    const TensorInfo &to = plan.tensors[arg.tensor];
    if (from.dtype != to.dtype || from.shape != to.shape)
      fail(r.name(), concat("result ", u.result, " (", dtypeName(from.dtype),
                            " of shape ", formatShape(from.shape),
                            ") does not match argument ", u.argument, " '",
                            arg.name, "' (", dtypeName(to.dtype), " of shape ",
                            formatShape(to.shape), ")"));
    auto [it, inserted] = updated.emplace(u.argument, i);
    if (!inserted)
      fail(r.name(),
           concat("argument ", u.argument, " is already updated by updates[",
                  it->second, "]"));
    plan.updates.push_back(u);
  }
}

} // namespace memopt::runtime
