//===- Trace.cpp - memory and time of one step, for people ----------------===//

#include "Trace.h"

#include "memopt/runtime/DType.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/ToolOutputFile.h"

#include <nlohmann/json.hpp>

#include <algorithm>

using namespace memopt;
using namespace memopt::run;
using runtime::StorageKind;

namespace {

/// Bytes of the arena tensors (and workspaces) each step creates (first live
/// there) and frees (last live there).
void allocationsPerStep(const runtime::Plan &plan,
                        std::vector<uint64_t> &allocated,
                        std::vector<uint64_t> &freed) {
  size_t n = plan.steps.size();
  allocated.assign(n + 1, 0);
  freed.assign(n + 1, 0);
  for (const runtime::TensorInfo &t : plan.tensors) {
    if (t.storage != StorageKind::Arena)
      continue;
    size_t first = plan.version >= 2 ? static_cast<size_t>(t.liveFirst) : 0;
    size_t last = plan.version >= 2 ? static_cast<size_t>(t.liveLast) : n;
    allocated[first] += t.bytes;
    freed[last] += t.bytes;
  }
  // A workspace lives during its step.
  for (size_t s = 0; s < n; ++s) {
    allocated[s] += plan.steps[s].workspaceBytes;
    freed[s] += plan.steps[s].workspaceBytes;
  }
}

/// Whether any two arena slices (tensors or workspaces) share bytes, i.e.
/// the plan reuses memory.
bool reusesSlices(const runtime::Plan &plan) {
  std::vector<std::pair<uint64_t, uint64_t>> slices;
  for (const runtime::TensorInfo &t : plan.tensors)
    if (t.storage == StorageKind::Arena && t.bytes > 0)
      slices.emplace_back(t.offset, t.offset + t.bytes);
  for (const runtime::Step &step : plan.steps)
    if (step.workspaceBytes > 0)
      slices.emplace_back(step.workspaceOffset,
                          step.workspaceOffset + step.workspaceBytes);
  std::sort(slices.begin(), slices.end());
  for (size_t i = 1; i < slices.size(); ++i)
    if (slices[i].first < slices[i - 1].second)
      return true;
  return false;
}

/// The kernel's name, marked when it recomputes a checkpointed value.
std::string kernelLabel(const runtime::Step &step) {
  std::string name(runtime::kernelName(step.kernel));
  return step.recompute ? name + " (recompute)" : name;
}

} // namespace

std::vector<uint64_t> StepTrace::heldArenaBytes() const {
  if (reusesSlices(plan))
    return runtime::liveArenaBytesPerStep(plan);
  std::vector<uint64_t> allocated, freed;
  allocationsPerStep(plan, allocated, freed);
  std::vector<uint64_t> held(allocated.size());
  uint64_t running = 0;
  for (size_t i = 0; i < held.size(); ++i)
    held[i] = running += allocated[i];
  return held;
}

bool StepTrace::writeChromeTrace(const std::string &path,
                                 std::string &error) const {
  using Json = nlohmann::ordered_json;
  std::vector<uint64_t> live = heldArenaBytes();
  Json events = Json::array();
  events.push_back({{"name", "process_name"},
                    {"ph", "M"},
                    {"pid", 1},
                    {"args", {{"name", "memopt step: " + plan.function}}}});
  double t = 0;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const runtime::Step &step = plan.steps[i];
    double us = 1e6 * t, dur = 1e6 * seconds[i];
    events.push_back(
        {{"name", kernelLabel(step)},
         {"cat", step.recompute ? "recompute" : "kernel"},
         {"ph", "X"},
         {"ts", us},
         {"dur", dur},
         {"pid", 1},
         {"tid", 1},
         {"args",
          {{"step", i}, {"loc", step.loc}, {"arena_live_bytes", live[i]}}}});
    events.push_back(
        {{"name", "live bytes"},
         {"ph", "C"},
         {"ts", us},
         {"pid", 1},
         {"args", {{"arena", live[i]}, {"persistent", persistentBytes}}}});
    t += seconds[i];
  }
  events.push_back(
      {{"name", "live bytes"},
       {"ph", "C"},
       {"ts", 1e6 * t},
       {"pid", 1},
       {"args", {{"arena", live.back()}, {"persistent", persistentBytes}}}});
  Json trace = {{"traceEvents", std::move(events)},
                {"displayTimeUnit", "ms"},
                {"otherData",
                 {{"function", plan.function},
                  {"arena_bytes", plan.arenaBytes},
                  {"persistent_bytes", persistentBytes}}}};
  std::error_code ec;
  llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_None);
  if (ec) {
    error = "cannot write '" + path + "': " + ec.message();
    return false;
  }
  out.os() << trace.dump(1, ' ', false, Json::error_handler_t::replace) << "\n";
  out.keep();
  return true;
}

void StepTrace::printTable(llvm::raw_ostream &os) const {
  std::vector<uint64_t> live = heldArenaBytes();
  std::vector<uint64_t> allocated, freed;
  allocationsPerStep(plan, allocated, freed);
  if (!reusesSlices(plan))
    std::fill(freed.begin(), freed.end(), 0);
  os << llvm::format("%5s  %-28s %12s %12s %14s %9s  %s\n", "step", "kernel",
                     "allocated", "freed after", "arena held", "time ms",
                     "source");
  for (size_t i = 0; i < plan.steps.size(); ++i)
    os << llvm::format(
        "%5zu  %-28s %12llu %12llu %14llu %9.3f  %s\n", i,
        kernelLabel(plan.steps[i]).c_str(), (unsigned long long)allocated[i],
        (unsigned long long)freed[i], (unsigned long long)live[i],
        1000 * seconds[i], plan.steps[i].loc.c_str());
  uint64_t peak = 0;
  for (uint64_t v : live)
    peak = std::max(peak, v);
  os << "arena held peak " << peak << " of " << plan.arenaBytes
     << " planned bytes; " << persistentBytes
     << " bytes of arguments and constants outside the arena\n";
}
