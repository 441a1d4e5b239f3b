//===- DType.h - tensor element types of the runtime ------------*- C++ -*-===//
//
// The element types a plan may use (docs/plan-format.md): the float types the
// dialect computes in and the integer types of labels and ids. The order of
// the enumerators is also the numbering of the C API's `memopt_dtype`.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_DTYPE_H
#define MEMOPT_RUNTIME_DTYPE_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace memopt::runtime {

enum class DType : uint8_t { F32 = 0, F64, F16, BF16, I32, I64 };

/// Bytes per element.
constexpr size_t dtypeSize(DType t) {
  switch (t) {
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::F16:
  case DType::BF16:
    return 2;
  }
  return 0;
}

constexpr bool isFloatDType(DType t) {
  return t == DType::F32 || t == DType::F64 || t == DType::F16 ||
         t == DType::BF16;
}

constexpr bool isIntegerDType(DType t) {
  return t == DType::I32 || t == DType::I64;
}

/// The plan-file spelling: "f32", "f64", "f16", "bf16", "i32", "i64".
std::string_view dtypeName(DType t);

/// Parses a plan-file spelling; std::nullopt for anything else.
std::optional<DType> parseDType(std::string_view name);

} // namespace memopt::runtime

#endif // MEMOPT_RUNTIME_DTYPE_H
