//===- Plan.cpp - parse and validate plan files ---------------------------===//
//
// Reads the JSON of docs/plan-format.md and checks everything its
// "Validation" section lists, in the order a reader would: syntax, the
// header, tensors, arguments, results, the arena layout, views, then each
// step against its kernel's rules and the data flow between steps. Nothing
// is trusted: ids, sizes and offsets are range-checked with overflow-safe
// arithmetic before use, so a corrupt file yields a message, never a crash.
//
//===----------------------------------------------------------------------===//

#include "memopt/runtime/Plan.h"

#include "JsonText.h"
#include "KernelRules.h"
#include "memopt/runtime/Error.h"
#include "memopt/runtime/Half.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

using nlohmann::json;

namespace memopt::runtime {

std::string_view storageKindName(StorageKind kind) {
  switch (kind) {
  case StorageKind::Arena:
    return "arena";
  case StorageKind::Argument:
    return "argument";
  case StorageKind::View:
    return "view";
  case StorageKind::Constant:
    return "constant";
  }
  return "?";
}

std::string_view argumentRoleName(ArgumentRole role) {
  switch (role) {
  case ArgumentRole::Param:
    return "param";
  case ArgumentRole::State:
    return "state";
  case ArgumentRole::Data:
    return "data";
  case ArgumentRole::OptimizerState:
    return "optimizer_state";
  }
  return "?";
}

int64_t Plan::findArgument(std::string_view name) const {
  for (size_t i = 0; i < arguments.size(); ++i)
    if (arguments[i].name == name)
      return static_cast<int64_t>(i);
  return -1;
}

std::string Plan::describeStep(size_t index) const {
  const Step &s = steps.at(index);
  std::string d = concat("steps[", index, "] (", kernelName(s.kernel));
  if (!s.loc.empty())
    d += concat(" at ", s.loc);
  return d + ")";
}

namespace {

[[noreturn]] void fail(const std::string &where, const std::string &what) {
  throw Error(ErrorCode::InvalidPlan,
              where.empty() ? "plan: " + what : "plan: " + where + ": " + what);
}

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

class PlanParser {
public:
  explicit PlanParser(Plan &plan) : plan(plan) {}

  void parse(const json &root) {
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
    if (const json *updates = top.find("updates");
        updates && !updates->is_null())
      parseUpdates(*updates);
  }

private:
  void parseHeader(const ObjectReader &top) {
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

  void parseArguments(const json &args) {
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

  void parseTensors(const json &tensors) {
    for (size_t i = 0; i < tensors.size(); ++i)
      plan.tensors.push_back(parseTensor(tensors[i], i));
  }

  TensorInfo parseTensor(const json &v, size_t index) {
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
                              " must have positive sizes (dimension ", d,
                              " is ", t.shape[d], ")"));
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

  /// Arguments and `argument` tensors must point at each other one to one.
  void checkArgumentsAgainstTensors() {
    for (size_t i = 0; i < plan.arguments.size(); ++i) {
      const ArgumentInfo &a = plan.arguments[i];
      std::string where = concat("arguments[", i, "]");
      if (a.tensor < 0 || a.tensor >= static_cast<int64_t>(plan.tensors.size()))
        fail(where, concat("tensor ", a.tensor, " is not a tensor id"));
      const TensorInfo &t = plan.tensors[a.tensor];
      if (t.storage != StorageKind::Argument ||
          t.argument != static_cast<int64_t>(i))
        fail(where,
             concat("tensor ", a.tensor,
                    " must have storage "
                    "\"argument\" with argument ",
                    i, ", got storage \"", storageKindName(t.storage), "\"",
                    t.storage == StorageKind::Argument
                        ? concat(" with argument ", t.argument)
                        : std::string()));
    }
    for (const TensorInfo &t : plan.tensors)
      if (t.storage == StorageKind::Argument &&
          plan.arguments[t.argument].tensor != t.id)
        fail(concat("tensors[", t.id, "]"),
             concat("argument ", t.argument, " belongs to tensor ",
                    plan.arguments[t.argument].tensor));
  }

  /// Follows every view to its non-view root, refusing out-of-range
  /// targets, cycles and views whose size or dtype differs from the target.
  void resolveViews() {
    size_t n = plan.tensors.size();
    for (TensorInfo &t : plan.tensors) {
      if (t.storage != StorageKind::View)
        continue;
      std::string where = concat("tensors[", t.id, "]");
      if (t.viewOf < 0 || t.viewOf >= static_cast<int64_t>(n))
        fail(where, concat("view of ", t.viewOf, ", which is not a tensor id"));
      const TensorInfo &target = plan.tensors[t.viewOf];
      if (target.dtype != t.dtype || target.numElements != t.numElements)
        fail(where, concat("view of tensors[", target.id,
                           "] must have its dtype and "
                           "element count (",
                           dtypeName(target.dtype), ", ", target.numElements,
                           " elements), got ", dtypeName(t.dtype), ", ",
                           t.numElements, " elements"));
    }
    for (TensorInfo &t : plan.tensors) {
      if (t.storage != StorageKind::View)
        continue;
      std::vector<int64_t> chain = {t.id};
      int64_t cur = t.viewOf;
      while (plan.tensors[cur].storage == StorageKind::View) {
        if (std::find(chain.begin(), chain.end(), cur) != chain.end() ||
            chain.size() > n) {
          std::string cycle;
          for (int64_t id : chain)
            cycle += concat(id, " -> ");
          fail(concat("tensors[", t.id, "]"),
               concat("views form a cycle (", cycle, cur, ")"));
        }
        chain.push_back(cur);
        cur = plan.tensors[cur].viewOf;
      }
      t.root = cur;
    }
  }

  /// Arena slices are aligned and inside the arena (checked per tensor and
  /// per step workspace). Two slices may share bytes only when their
  /// lifetimes are disjoint (a workspace lives during its step alone), and
  /// version 1 plans carry no tensor lifetimes, so there a tensor may
  /// overlap no other slice.
  void checkArenaLayout() {
    struct Slice {
      uint64_t offset, bytes;
      int64_t first, last;
      bool hasLife;
      /// A workspace of step `index`, or tensor `index`.
      bool workspace;
      int64_t index;
      std::string name() const {
        return workspace ? concat("steps[", index, "] workspace")
                         : concat("tensors[", index, "]");
      }
    };
    std::vector<Slice> slices;
    for (const TensorInfo &t : plan.tensors)
      if (t.storage == StorageKind::Arena && t.bytes > 0)
        slices.push_back({t.offset, t.bytes, t.liveFirst, t.liveLast,
                          plan.version >= 2, false, t.id});
    for (size_t s = 0; s < plan.steps.size(); ++s)
      if (const Step &step = plan.steps[s]; step.workspaceBytes > 0)
        slices.push_back({step.workspaceOffset, step.workspaceBytes,
                          static_cast<int64_t>(s), static_cast<int64_t>(s),
                          true, true, static_cast<int64_t>(s)});
    // Tensors by id, then workspaces by step: of two overlapping slices,
    // the message names the later entry of the file first.
    auto entryOrder = [](const Slice &a) {
      return std::make_pair(a.workspace, a.index);
    };
    std::sort(slices.begin(), slices.end(),
              [&](const Slice &a, const Slice &b) {
                return a.offset != b.offset ? a.offset < b.offset
                                            : entryOrder(a) < entryOrder(b);
              });
    for (size_t i = 0; i < slices.size(); ++i) {
      const Slice &a = slices[i];
      for (size_t j = i + 1;
           j < slices.size() && slices[j].offset < a.offset + a.bytes; ++j) {
        const Slice &b = slices[j];
        bool disjoint =
            a.hasLife && b.hasLife && (a.last < b.first || b.last < a.first);
        if (disjoint)
          continue;
        bool aFirst = entryOrder(a) < entryOrder(b);
        const Slice &first = aFirst ? a : b;
        const Slice &second = aFirst ? b : a;
        bool lives = first.hasLife && second.hasLife;
        fail(second.name(),
             concat("arena slice [", second.offset, ", ",
                    second.offset + second.bytes, ") overlaps ", first.name(),
                    " [", first.offset, ", ", first.offset + first.bytes, ")",
                    lives ? concat(" while both are live (steps ", first.first,
                                   "-", first.last, " and ", second.first, "-",
                                   second.last, ")")
                          : std::string(" (version 1 plans carry no "
                                        "lifetimes, so arena slices may not "
                                        "overlap)")));
      }
    }
  }

  /// A tensor id in an `inputs`/`outputs` list (`what` is "input" or
  /// "output").
  int64_t tensorId(const std::string &where, const json &v,
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

  void parseResults(const json &results) {
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

  void parseSteps(const json &steps) {
    written.assign(plan.tensors.size(), false);
    for (size_t i = 0; i < steps.size(); ++i)
      plan.steps.push_back(parseStep(steps[i], i));
  }

  Step parseStep(const json &v, size_t index) {
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

  /// Outputs are arena storage and distinct; inputs are defined before
  /// use; an output shares an input's storage only where the kernel runs in
  /// place.
  void checkDataFlow(const Step &step, const std::string &where, size_t index) {
    for (size_t o = 0; o < step.outputs.size(); ++o) {
      const TensorInfo &out = plan.tensors[step.outputs[o]];
      const TensorInfo &root = plan.tensors[out.root];
      // A parameter or state argument may be updated in place (an
      // optimizer step writing the new value over the old): the step reads
      // it as an input the kernel may overwrite.
      bool inPlaceUpdate = false;
      if (root.storage == StorageKind::Argument &&
          plan.arguments[root.argument].role != ArgumentRole::Data)
        for (size_t i = 0; i < step.inputs.size(); ++i)
          inPlaceUpdate |= plan.tensors[step.inputs[i]].root == out.root &&
                           kernelAllowsInPlace(step.kernel, o, i);
      if (root.storage != StorageKind::Arena && !inPlaceUpdate)
        fail(where, concat("output ", out.id, " is ",
                           out.root == out.id ? "an" : "a view of an", " \"",
                           storageKindName(root.storage),
                           "\" tensor; steps write only arena tensors, views "
                           "of them, and parameters or state they update in "
                           "place"));
      for (size_t p = 0; p < o; ++p)
        if (plan.tensors[step.outputs[p]].root == out.root)
          fail(where, concat("outputs ", step.outputs[p], " and ", out.id,
                             " share storage"));
      for (size_t i = 0; i < step.inputs.size(); ++i) {
        if (plan.tensors[step.inputs[i]].root != out.root)
          continue;
        if (!kernelAllowsInPlace(step.kernel, o, i))
          fail(where, concat("output ", out.id, " shares storage with input ",
                             step.inputs[i], ", but '", kernelName(step.kernel),
                             "' cannot run in place on input ", i,
                             " producing output ", o));
      }
    }
    for (int64_t id : step.inputs) {
      const TensorInfo &root = plan.tensors[plan.tensors[id].root];
      if (root.storage == StorageKind::Arena && !written[root.id])
        fail(where, concat("input ", id, " is read before any step writes ",
                           id == root.id ? "it" : concat("tensor ", root.id)));
    }
    if (plan.version >= 2)
      for (const std::vector<int64_t> *ids : {&step.inputs, &step.outputs})
        for (int64_t id : *ids) {
          const TensorInfo &root = plan.tensors[plan.tensors[id].root];
          int64_t at = static_cast<int64_t>(index);
          if (root.storage == StorageKind::Arena &&
              (at < root.liveFirst || at > root.liveLast))
            fail(where, concat("tensor ", id,
                               " is used outside its lifetime "
                               "(steps ",
                               root.liveFirst, "-", root.liveLast, ")"));
        }
    for (int64_t id : step.outputs)
      written[plan.tensors[id].root] = true;
  }

  void checkResultsWritten() {
    for (size_t i = 0; i < plan.results.size(); ++i) {
      const TensorInfo &root = plan.tensors[plan.tensors[plan.results[i]].root];
      if (root.storage == StorageKind::Arena && !written[root.id])
        fail(concat("results[", i, "]"),
             concat("tensor ", plan.results[i], " is never written by a step"));
      int64_t end = static_cast<int64_t>(plan.steps.size());
      if (plan.version >= 2 && root.storage == StorageKind::Arena &&
          root.liveLast < end)
        fail(concat("results[", i, "]"),
             concat("tensor ", plan.results[i],
                    " must stay live after the "
                    "last step (its live range ends at step ",
                    root.liveLast, " of ", end, ")"));
    }
  }

  /// A step that writes an output over an input's storage (in place, or an
  /// optimizer updating a parameter) destroys the input's value: no later
  /// step may read it, through the same tensor or any view of it, and it
  /// may not be a result. Each storage root holds one value at a time, the
  /// one its last writer produced. When read, a tensor denotes the value of
  /// the nearest tensor along its view chain that a step has written so far
  /// (an in-place step may write the very view it reads), or the root's own
  /// content.
  void checkInPlaceSafety() {
    size_t n = plan.tensors.size();
    std::vector<char> writtenSoFar(n, 0);
    auto valueOf = [&](int64_t id) {
      while (!writtenSoFar[id] && plan.tensors[id].storage == StorageKind::View)
        id = plan.tensors[id].viewOf;
      return id;
    };
    std::vector<int64_t> holds(n), writer(n, -1);
    for (size_t i = 0; i < n; ++i)
      holds[i] = static_cast<int64_t>(i);
    auto check = [&](int64_t id, const std::string &where) {
      int64_t root = plan.tensors[id].root;
      if (writer[root] < 0 || holds[root] == valueOf(id))
        return;
      fail(where, concat("tensor ", id, " is read after steps[", writer[root],
                         "] wrote tensor ", holds[root],
                         " over its storage (in place); a step may write "
                         "over an input only if nothing reads it later"));
    };
    for (size_t s = 0; s < plan.steps.size(); ++s) {
      const Step &step = plan.steps[s];
      for (int64_t id : step.inputs)
        check(id, concat("steps[", s, "] (", kernelName(step.kernel), ")"));
      for (int64_t id : step.outputs) {
        int64_t root = plan.tensors[id].root;
        holds[root] = id;
        writer[root] = static_cast<int64_t>(s);
        writtenSoFar[id] = 1;
      }
    }
    for (size_t i = 0; i < plan.results.size(); ++i)
      check(plan.results[i], concat("results[", i, "]"));
  }

  /// `updates`: optional, each entry names a result and a persistent
  /// argument of the same type, every argument at most once.
  void parseUpdates(const json &updates) {
    if (!updates.is_array())
      fail("", "field 'updates' must be an array, got " + kindOf(updates));
    std::map<int64_t, size_t> updated;
    for (size_t i = 0; i < updates.size(); ++i) {
      ObjectReader r(updates[i], concat("updates[", i, "]"));
      UpdateInfo u;
      u.result = r.integer("result");
      u.argument = r.integer("argument");
      if (u.result < 0 || u.result >= static_cast<int64_t>(plan.results.size()))
        fail(r.name(), concat("result ", u.result,
                              " is not a result index (the plan has ",
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
                              arg.name, "' (", dtypeName(to.dtype),
                              " of shape ", formatShape(to.shape), ")"));
      auto [it, inserted] = updated.emplace(u.argument, i);
      if (!inserted)
        fail(r.name(),
             concat("argument ", u.argument, " is already updated by updates[",
                    it->second, "]"));
      plan.updates.push_back(u);
    }
  }

  Plan &plan;
  std::vector<bool> written;
};

} // namespace

std::shared_ptr<const Plan> Plan::parse(std::string_view text) {
  json root;
  try {
    root = json::parse(text.begin(), text.end());
  } catch (const json::parse_error &e) {
    // nlohmann's message starts with "[json.exception.parse_error.N] ".
    std::string what = e.what();
    if (size_t pos = what.find("] "); pos != std::string::npos)
      what = what.substr(pos + 2);
    bool atEnd = e.byte >= text.size();
    throw Error(
        ErrorCode::InvalidPlan,
        concat("plan: invalid JSON: ", what,
               atEnd ? " (the input ends early: truncated file?)" : ""));
  }
  auto plan = std::make_shared<Plan>();
  PlanParser(*plan).parse(root);
  return plan;
}

std::shared_ptr<const Plan> Plan::loadFile(const std::string &path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Error(ErrorCode::Io,
                concat("plan: cannot read '", path, "': it is a directory"));
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(ErrorCode::Io, concat("plan: cannot open '", path,
                                      "': ", std::strerror(errno)));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad())
    throw Error(ErrorCode::Io, concat("plan: cannot read '", path, "'"));
  try {
    return parse(buffer.str());
  } catch (const Error &e) {
    // Name the file: "plan: x.json: tensors[4]: ...".
    std::string what = e.what();
    if (what.rfind("plan: ", 0) == 0)
      what = "plan: " + path + ": " + what.substr(6);
    throw Error(e.code(), what);
  }
}

} // namespace memopt::runtime

std::vector<uint64_t> memopt::runtime::liveArenaBytesPerStep(const Plan &plan) {
  size_t numSteps = plan.steps.size();
  // Difference array over [first, last] ranges.
  std::vector<int64_t> delta(numSteps + 2, 0);
  for (const TensorInfo &t : plan.tensors) {
    if (t.storage != StorageKind::Arena)
      continue;
    int64_t first = plan.version >= 2 ? t.liveFirst : 0;
    int64_t last =
        plan.version >= 2 ? t.liveLast : static_cast<int64_t>(numSteps);
    delta[first] += static_cast<int64_t>(t.bytes);
    delta[last + 1] -= static_cast<int64_t>(t.bytes);
  }
  std::vector<uint64_t> live(numSteps + 1);
  int64_t running = 0;
  for (size_t i = 0; i <= numSteps; ++i) {
    running += delta[i];
    live[i] = static_cast<uint64_t>(running);
    if (i < numSteps)
      live[i] += plan.steps[i].workspaceBytes;
  }
  return live;
}
