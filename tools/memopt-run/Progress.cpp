//===- Progress.cpp - per-step loss, as a bar on a terminal ---------------===//

#include "Progress.h"

#include "llvm/Support/Format.h"

#include <algorithm>
#include <vector>

using namespace memopt::run;

Progress::Progress(llvm::raw_ostream &os, unsigned total, std::string unit,
                   bool redraw)
    : os(os), total(total), unit(std::move(unit)),
      interactive(redraw && os.is_displayed()),
      start(std::chrono::steady_clock::now()) {}

void Progress::report(unsigned index, double loss) {
  if (reported == 0)
    firstLoss = loss;
  lastLoss = loss;
  ++reported;
  if (!interactive) {
    os << unit << " " << index + 1 << "/" << total << " loss "
       << llvm::format("%.6f", loss) << "\n";
    return;
  }
  constexpr unsigned width = 30;
  unsigned filled = total ? (index + 1) * width / total : width;
  os << "\r[" << std::string(filled, '#') << std::string(width - filled, ' ')
     << "] " << unit << " " << index + 1 << "/" << total << " loss "
     << llvm::format("%.6f", loss);
  os.flush();
}

void Progress::finish() {
  if (reported == 0)
    return;
  if (interactive)
    os << "\n";
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (reported > 1)
    os << "loss " << llvm::format("%.6f", firstLoss) << " -> "
       << llvm::format("%.6f", lastLoss) << " over " << reported << " " << unit
       << (unit.back() == 'h' ? "es, " : "s, ")
       << llvm::format("%.1f", 1000 * seconds / reported) << " ms per " << unit
       << "\n";
}

void memopt::run::printStepTimes(llvm::raw_ostream &os,
                                 llvm::ArrayRef<double> stepMs) {
  if (stepMs.empty())
    return;
  os << "step times (ms):";
  for (double ms : stepMs)
    os << " " << llvm::format("%.1f", ms);
  if (stepMs.size() >= 2) {
    std::vector<double> rest(stepMs.begin() + 1, stepMs.end());
    std::sort(rest.begin(), rest.end());
    size_t n = rest.size();
    double median = n % 2 ? rest[n / 2] : (rest[n / 2 - 1] + rest[n / 2]) / 2;
    os << "; median after the first " << llvm::format("%.1f", median);
  }
  os << "\n";
}
