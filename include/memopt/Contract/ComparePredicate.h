//===- ComparePredicate.h - memopt.compare's predicates ---------*- C++ -*-===//
//
// Part of the compiler-runtime contract (docs/plan-format.md), MLIR-free:
// the predicates of memopt.compare and of the plan's `compare` kernel, by
// the names both spell them with. The dialect's verifier and the runtime's
// plan rules parse with this; the element-wise math switches on the enum.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_CONTRACT_COMPAREPREDICATE_H
#define MEMOPT_CONTRACT_COMPAREPREDICATE_H

#include <optional>
#include <string_view>

namespace memopt {

enum class ComparePredicate : int { Eq, Ne, Lt, Le, Gt, Ge };

/// The names, in the enum's order, and as a message lists them.
inline constexpr std::string_view kComparePredicateNames[] = {"eq", "ne", "lt",
                                                              "le", "gt", "ge"};
inline constexpr std::string_view kComparePredicateList =
    "eq, ne, lt, le, gt, ge";

/// The predicate named `name`; nullopt for any other name.
inline std::optional<ComparePredicate>
parseComparePredicate(std::string_view name) {
  for (int i = 0; i < 6; ++i)
    if (kComparePredicateNames[i] == name)
      return static_cast<ComparePredicate>(i);
  return std::nullopt;
}

} // namespace memopt

#endif // MEMOPT_CONTRACT_COMPAREPREDICATE_H
