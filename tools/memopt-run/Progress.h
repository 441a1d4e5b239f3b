//===- Progress.h - per-step loss, as a bar on a terminal -------*- C++ -*-===//
//
// On a terminal memopt-run redraws one line (a bar, the step, the loss); when
// its output is a file or a pipe it prints one plain line per step, so logs
// and tests read the same values.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_TOOLS_MEMOPT_RUN_PROGRESS_H
#define MEMOPT_TOOLS_MEMOPT_RUN_PROGRESS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <string>

namespace memopt::run {

class Progress {
public:
  /// `redraw`: a bar on a terminal (false: one line per step, as when
  /// `os` is not one).
  Progress(llvm::raw_ostream &os, unsigned total, std::string unit,
           bool redraw = true);
  /// Records step `index` (0-based) and its loss.
  void report(unsigned index, double loss);
  /// Ends the bar and prints the first and last loss and the time per step.
  void finish();

private:
  llvm::raw_ostream &os;
  unsigned total;
  std::string unit;
  bool interactive;
  unsigned reported = 0;
  double firstLoss = 0, lastLoss = 0;
  std::chrono::steady_clock::time_point start;
};

/// `--step-times`: every step's wall time in ms and, with two or more
/// steps, the median of those after the first (which warms up: algorithm
/// search, graph capture, first-touch allocations), on one line.
void printStepTimes(llvm::raw_ostream &os, llvm::ArrayRef<double> stepMs);

} // namespace memopt::run

#endif // MEMOPT_TOOLS_MEMOPT_RUN_PROGRESS_H
