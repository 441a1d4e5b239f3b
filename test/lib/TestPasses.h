//===- TestPasses.h - memopt's test-only passes -----------------*- C++ -*-===//
//
// The passes of test/lib (MLIRMemOptTestPasses): registered by memopt-opt
// and the unit tests that run pipelines, nowhere else.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_TEST_LIB_TESTPASSES_H
#define MEMOPT_TEST_LIB_TESTPASSES_H

namespace memopt::test {

/// `--test-memopt-inplace-abn` (TestInPlaceABN.cpp).
void registerTestInPlaceABNPass();
/// `--test-memopt-print-liveness` (TestPrintLiveness.cpp).
void registerTestPrintLivenessPass();
/// `--test-memopt-print-stages` (TestPrintStages.cpp).
void registerTestPrintStagesPass();
/// `--test-memopt-schedule-peak` (TestSchedulePeak.cpp).
void registerTestSchedulePeakPass();

inline void registerAllTestPasses() {
  registerTestInPlaceABNPass();
  registerTestPrintLivenessPass();
  registerTestPrintStagesPass();
  registerTestSchedulePeakPass();
}

} // namespace memopt::test

#endif // MEMOPT_TEST_LIB_TESTPASSES_H
