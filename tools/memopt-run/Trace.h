//===- Trace.h - memory and time of one step, for people ---------*- C++
//-*-===//
//
// A Chrome trace (opens in Perfetto or chrome://tracing): one slice per
// kernel with its source location, and counter tracks of the bytes live in
// the arena and outside it. And the same as a text table: what each kernel
// allocated and freed, and what was live while it ran.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_TOOLS_MEMOPT_RUN_TRACE_H
#define MEMOPT_TOOLS_MEMOPT_RUN_TRACE_H

#include "memopt/runtime/Plan.h"

#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace memopt::run {

struct StepTrace {
  const runtime::Plan &plan;
  /// Wall seconds of every step, in order.
  std::vector<double> seconds;
  /// Bytes held outside the arena (arguments, constants).
  uint64_t persistentBytes = 0;
  /// Arena bytes held while each step runs (index steps.size(): after).
  /// A plan whose slices never share bytes (no planning) holds a tensor's
  /// bytes from the step that writes it to the end of the step, live or
  /// not; a planned one holds exactly what is live.
  std::vector<uint64_t> heldArenaBytes() const;

  /// Writes the Chrome trace JSON to `path` atomically; false with `error`
  /// set when it cannot.
  bool writeChromeTrace(const std::string &path, std::string &error) const;
  /// The per-kernel table: allocated, freed and live bytes, time.
  void printTable(llvm::raw_ostream &os) const;
};

} // namespace memopt::run

#endif // MEMOPT_TOOLS_MEMOPT_RUN_TRACE_H
