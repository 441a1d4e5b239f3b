//===- BlasCore.h - the kernel set OpenBLAS chose for this CPU --*- C++ -*-===//
//
// OpenBLAS built with DYNAMIC_ARCH (Debian's) picks its kernels by the CPU's
// model number when it loads. A CPU newer than its model table gets the
// generic fallback: Debian 12's OpenBLAS 0.3.21 runs an AVX-512 Xeon of
// these machines on its SSE3 "Prescott" kernels, whose sgemm is 6x slower
// (35 against 207-284 GFLOP/s for 1024^3 on 2 cores). OPENBLAS_CORETYPE,
// read when the library loads, overrides the choice; memopt-run sets it and
// re-executes itself (see betterBlasCore), and the CPU backend warns an
// embedding program once.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_BLASCORE_H
#define MEMOPT_RUNTIME_BLASCORE_H

#include <optional>
#include <string>

namespace memopt::runtime {

/// OpenBLAS's kernel set ("Prescott", "SkylakeX", ...); empty when the BLAS
/// linked in is not OpenBLAS.
std::string blasCoreName();

/// Where OpenBLAS fell back to a pre-AVX kernel set on a CPU with AVX-512,
/// AVX2 or AVX and OPENBLAS_CORETYPE is not set: the OPENBLAS_CORETYPE that
/// selects kernels for the CPU's instructions ("SkylakeX", "Haswell",
/// "Sandybridge"). It takes effect only in a process that loads OpenBLAS
/// after setting it.
std::optional<std::string> betterBlasCore();

} // namespace memopt::runtime

#endif // MEMOPT_RUNTIME_BLASCORE_H
