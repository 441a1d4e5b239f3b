//===- BlasCoreTest.cpp - the kernel set OpenBLAS chose ------------------===//

#include "memopt/runtime/BlasCore.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

using namespace memopt::runtime;

namespace {

/// memopt links OpenBLAS, which names its kernel set.
TEST(BlasCore, OpenBlasNamesItsKernels) {
  EXPECT_FALSE(blasCoreName().empty());
}

/// With OPENBLAS_CORETYPE set the user (or memopt-run's re-execution) has
/// chosen: no advice, so no loop of re-executions.
TEST(BlasCore, NoAdviceWhereTheCoreTypeIsSet) {
  const char *before = std::getenv("OPENBLAS_CORETYPE");
  std::string saved = before ? before : "";
  ::setenv("OPENBLAS_CORETYPE", "Haswell", 1);
  EXPECT_FALSE(betterBlasCore().has_value());
  if (before)
    ::setenv("OPENBLAS_CORETYPE", saved.c_str(), 1);
  else
    ::unsetenv("OPENBLAS_CORETYPE");
}

/// Advice names a kernel set for the CPU's instructions, and only where
/// OpenBLAS runs a pre-AVX one.
TEST(BlasCore, AdviceOnlyForPreAvxKernels) {
  if (std::getenv("OPENBLAS_CORETYPE"))
    GTEST_SKIP() << "OPENBLAS_CORETYPE is set";
  std::optional<std::string> advice = betterBlasCore();
  if (!advice)
    return;
  EXPECT_TRUE(*advice == "SkylakeX" || *advice == "Haswell" ||
              *advice == "Sandybridge")
      << *advice;
  std::string core = blasCoreName();
  EXPECT_TRUE(core == "Prescott" || core == "Core2" || core == "Nehalem" ||
              core == "Penryn" || core == "Dunnington" || core == "Atom" ||
              core == "Katmai" || core == "Coppermine" || core == "Northwood" ||
              core == "Banias" || core == "Athlon" || core == "Opteron" ||
              core == "Opteron_SSE3" || core == "Barcelona" || core == "Nano")
      << core;
}

} // namespace
