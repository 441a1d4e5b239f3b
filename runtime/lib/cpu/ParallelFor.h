//===- ParallelFor.h - the CPU kernels' own threads -------------*- C++ -*-===//
//
// Internal to the CPU backend. Kernels whose work splits into independent
// parts (a convolution's output rows or input channels) run them on
// cpuThreads() threads: an OpenMP parallel region, the same team oneDNN's
// f32 products run on (one pool: two pools' idle workers spinning on two
// cores starve each other). While the parts run, each part's products run
// single-threaded on its own thread (oneDNN's inside a parallel region,
// OpenBLAS's f64 ones by setting its count to 1).
//
// The split is a fixed function of the sizes and the thread count and the
// parts write disjoint memory, so a step gives the same bits run after run.
// Batch norm, pooling and element-wise parts compute every element as one
// thread does; a convolution's parts multiply smaller matrices, which
// oneDNN may sum in another order than the whole.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_LIB_CPU_PARALLELFOR_H
#define MEMOPT_RUNTIME_LIB_CPU_PARALLELFOR_H

#include <cstdint>
#include <functional>

namespace memopt::runtime::cpu {

/// The threads a kernel may split its work over (memopt::runtime::
/// cpuThreads(), at least 1).
int kernelThreads();

/// Runs part(0), ..., part(parts - 1), each exactly once, part 0 on the
/// calling thread and the others on workers, and returns when all have
/// finished; the first exception a part throws is rethrown here. With
/// parts <= 1 it just calls part(0) (if any).
void parallelFor(int parts, const std::function<void(int)> &part);

/// [begin, end) of part `i` of `n` items split into `parts` contiguous
/// ranges whose sizes differ by at most one.
inline void splitRange(int64_t n, int parts, int i, int64_t &begin,
                       int64_t &end) {
  const int64_t base = n / parts, extra = n % parts;
  begin = i * base + (i < extra ? i : extra);
  end = begin + base + (i < extra ? 1 : 0);
}

/// Element operations below which splitting costs more in waking threads
/// (some microseconds) than it saves.
constexpr int64_t kMinElementsPerPart = int64_t(1) << 15;

/// Calls body(begin, end) over contiguous ranges covering [0, items), one
/// range per part, in parallel: as many parts as kernelThreads(), the items
/// and their total work (`workPerItem` element operations each, over
/// kMinElementsPerPart) allow. For kernels whose items (channels, planes,
/// rows) are independent and written by one part only.
template <typename F>
void parallelRange(int64_t items, int64_t workPerItem, F &&body) {
  const int64_t byWork =
      items * workPerItem / kMinElementsPerPart; // may be 0: one part
  int64_t parts = kernelThreads();
  parts = parts < items ? parts : items;
  parts = parts < byWork ? parts : byWork;
  if (parts <= 1) {
    if (items > 0)
      body(int64_t(0), items);
    return;
  }
  const int n = static_cast<int>(parts);
  parallelFor(n, [&](int i) {
    int64_t begin, end;
    splitRange(items, n, i, begin, end);
    body(begin, end);
  });
}

} // namespace memopt::runtime::cpu

#endif // MEMOPT_RUNTIME_LIB_CPU_PARALLELFOR_H
