//===- PlanParser.h - the plan file reader ----------------------*- C++ -*-===//
//
// Internal to the runtime: PlanParser turns a plan's JSON into a Plan and
// checks it, throwing Error(InvalidPlan) at the first problem. Plan::parse
// is its only user. The reading (syntax, header, tensors, arguments,
// results, steps, updates) is in PlanParser.cpp; the checks that span
// entries are in PlanValidation.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_LIB_PLANPARSER_H
#define MEMOPT_RUNTIME_LIB_PLANPARSER_H

#include "memopt/runtime/Plan.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace memopt::runtime {

/// Throws Error(InvalidPlan) with `plan: <where>: <what>` (`plan: <what>`
/// when `where` is empty).
[[noreturn]] void fail(const std::string &where, const std::string &what);

/// Typed access to the fields of one JSON object (PlanParser.cpp).
class ObjectReader;

class PlanParser {
public:
  explicit PlanParser(Plan &plan) : plan(plan) {}

  void parse(const nlohmann::json &root);

private:
  // Reading (PlanParser.cpp).
  void parseHeader(const ObjectReader &top);
  void parseArguments(const nlohmann::json &args);
  void parseTensors(const nlohmann::json &tensors);
  TensorInfo parseTensor(const nlohmann::json &v, size_t index);
  int64_t tensorId(const std::string &where, const nlohmann::json &v,
                   const std::string &what);
  void parseResults(const nlohmann::json &results);
  void parseSteps(const nlohmann::json &steps);
  Step parseStep(const nlohmann::json &v, size_t index);
  void parseUpdates(const nlohmann::json &updates);

  // Checks across entries (PlanValidation.cpp).
  void checkArgumentsAgainstTensors();
  void resolveViews();
  void checkArenaLayout();
  void checkDataFlow(const Step &step, const std::string &where, size_t index);
  void checkResultsWritten();
  void checkInPlaceSafety();

  Plan &plan;
  std::vector<bool> written;
};

} // namespace memopt::runtime

#endif // MEMOPT_RUNTIME_LIB_PLANPARSER_H
