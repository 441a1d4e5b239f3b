//===- InputLimits.h - input the MLIR parser must not see ------*- C++ -*-===//
//
// MLIR's parser recurses once per nested attribute, type or region: text
// nesting tens of thousands of brackets deep overflows the stack and kills
// the tool. memopt's tools scan their input first and refuse such text
// with a located error; no real graph nests anywhere near the limit.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_SUPPORT_INPUTLIMITS_H
#define MEMOPT_SUPPORT_INPUTLIMITS_H

#include "llvm/Support/LogicalResult.h"
#include "llvm/Support/SourceMgr.h"

namespace memopt {

/// The deepest bracket nesting ((), [], {}, <>) memopt's tools parse.
constexpr int kMaxBracketNesting = 256;

/// Fails, printing an error at the offending bracket through `sources`,
/// when brackets in buffer `bufferId` (outside string literals and `//`
/// comments) nest deeper than kMaxBracketNesting.
llvm::LogicalResult checkBracketNesting(llvm::SourceMgr &sources,
                                        unsigned bufferId);

} // namespace memopt

#endif // MEMOPT_SUPPORT_INPUTLIMITS_H
