//===- PlanFormat.h - the plan file's version, for both sides ---*- C++ -*-===//
//
// Part of the compiler-runtime contract (include/memopt/Contract,
// docs/plan-format.md): included by the runtime's plan reader and by the
// compiler's plan writer (lib/Target/Plan). Like every contract header it
// includes the C++ standard library only, never MLIR or LLVM: the runtime
// is MLIR-free.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_CONTRACT_PLANFORMAT_H
#define MEMOPT_CONTRACT_PLANFORMAT_H

#include <cstdint>

namespace memopt::runtime {

/// The plan-format version the compiler writes and the runtime reads, and
/// the oldest the runtime still reads. Version 2 adds arena lifetimes
/// (`live`), so planned slices may share bytes.
inline constexpr int64_t kPlanVersion = 2;
inline constexpr int64_t kMinPlanVersion = 1;

} // namespace memopt::runtime

#endif // MEMOPT_CONTRACT_PLANFORMAT_H
