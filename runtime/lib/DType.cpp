//===- DType.cpp - element type names -------------------------------------===//
//
// The plan-file spellings of the element types.
//
//===----------------------------------------------------------------------===//

#include "memopt/runtime/DType.h"

namespace memopt::runtime {

std::string_view dtypeName(DType t) {
  switch (t) {
#define MEMOPT_DTYPE(KIND, NAME, BYTES, IS_FLOAT)                              \
  case DType::KIND:                                                            \
    return NAME;
#include "memopt/Contract/DTypes.def"
  }
  return "?";
}

std::optional<DType> parseDType(std::string_view name) {
#define MEMOPT_DTYPE(KIND, NAME, BYTES, IS_FLOAT)                              \
  if (name == NAME)                                                            \
    return DType::KIND;
#include "memopt/Contract/DTypes.def"
  return std::nullopt;
}

} // namespace memopt::runtime
