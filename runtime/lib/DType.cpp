//===- DType.cpp - element type names -------------------------------------===//
//
// The plan-file spellings of the element types.
//
//===----------------------------------------------------------------------===//

#include "memopt/runtime/DType.h"

namespace memopt::runtime {

std::string_view dtypeName(DType t) {
  switch (t) {
  case DType::F32:
    return "f32";
  case DType::F64:
    return "f64";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  }
  return "?";
}

std::optional<DType> parseDType(std::string_view name) {
  for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I32,
                  DType::I64})
    if (dtypeName(t) == name)
      return t;
  return std::nullopt;
}

} // namespace memopt::runtime
