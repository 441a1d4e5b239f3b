//===- BlasCore.cpp - the kernel set OpenBLAS chose for this CPU ----------===//

#include "memopt/runtime/BlasCore.h"

#include <cstdlib>
#include <set>

// OpenBLAS's own query, absent from other BLAS libraries (weak: null then).
extern "C" char *openblas_get_corename(void) __attribute__((weak));

namespace memopt::runtime {

std::string blasCoreName() {
  if (!openblas_get_corename)
    return {};
  const char *name = openblas_get_corename();
  return name ? name : "";
}

std::optional<std::string> betterBlasCore() {
  if (std::getenv("OPENBLAS_CORETYPE"))
    return std::nullopt;
  // OpenBLAS's kernel sets for CPUs without AVX: what its model-number
  // detection falls back to for a CPU it does not know.
  static const std::set<std::string> preAvx = {
      "Prescott", "Core2",   "Penryn",       "Dunnington", "Nehalem",
      "Atom",     "Katmai",  "Coppermine",   "Northwood",  "Banias",
      "Athlon",   "Opteron", "Opteron_SSE3", "Barcelona",  "Nano"};
  if (!preAvx.count(blasCoreName()))
    return std::nullopt;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    return std::string("SkylakeX");
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return std::string("Haswell");
  if (__builtin_cpu_supports("avx"))
    return std::string("Sandybridge");
#endif
  return std::nullopt;
}

} // namespace memopt::runtime
