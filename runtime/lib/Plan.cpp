//===- Plan.cpp - parse and validate plan files ---------------------------===//
//
// Reads the JSON of docs/plan-format.md and checks everything its
// "Validation" section lists, in the order a reader would: syntax, the
// header, tensors, arguments, results, the arena layout, views, then each
// step against its kernel's rules and the data flow between steps. Nothing
// is trusted: ids, sizes and offsets are range-checked with overflow-safe
// arithmetic before use, so a corrupt file yields a message, never a crash.
//
// This file holds the entry points (Plan::parse, Plan::loadFile) and the
// plan's small queries; the reading is in PlanParser.cpp, the checks that
// span entries (arguments against tensors, views, the arena layout, data
// flow, in-place safety) in PlanValidation.cpp.
//
//===----------------------------------------------------------------------===//

#include "memopt/runtime/Plan.h"

#include "PlanParser.h"
#include "memopt/runtime/Error.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
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
