//===- DType.h - tensor element types of the runtime ------------*- C++ -*-===//
//
// The element types a plan may use (docs/plan-format.md): the float types the
// dialect computes in and the integer types of labels and ids, from the
// contract's list (memopt/Contract/DTypes.def). The order of the
// enumerators is also the numbering of the C API's `memopt_dtype`.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_DTYPE_H
#define MEMOPT_RUNTIME_DTYPE_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace memopt::runtime {

enum class DType : uint8_t {
#define MEMOPT_DTYPE(KIND, NAME, BYTES, IS_FLOAT) KIND,
#include "memopt/Contract/DTypes.def"
};

/// Bytes per element.
constexpr size_t dtypeSize(DType t) {
  switch (t) {
#define MEMOPT_DTYPE(KIND, NAME, BYTES, IS_FLOAT)                              \
  case DType::KIND:                                                            \
    return BYTES;
#include "memopt/Contract/DTypes.def"
  }
  return 0;
}

constexpr bool isFloatDType(DType t) {
  switch (t) {
#define MEMOPT_DTYPE(KIND, NAME, BYTES, IS_FLOAT)                              \
  case DType::KIND:                                                            \
    return IS_FLOAT;
#include "memopt/Contract/DTypes.def"
  }
  return false;
}

constexpr bool isIntegerDType(DType t) { return !isFloatDType(t); }

/// The dtypes of labels and ids: i32 and i64 (ui8 holds quantised optimizer
/// state only).
constexpr bool isIndexDType(DType t) {
  return t == DType::I32 || t == DType::I64;
}

/// Whether float dtype `to` holds every value of float dtype `from`
/// exactly: the same dtype, f16 or bf16 to f32 or f64, f32 to f64.
constexpr bool widensExactly(DType from, DType to) {
  if (!isFloatDType(from) || !isFloatDType(to))
    return false;
  if (from == to || to == DType::F64)
    return true;
  return to == DType::F32 && (from == DType::F16 || from == DType::BF16);
}

/// The plan-file spelling: "f32", "f64", "f16", "bf16", "i32", "i64", "ui8".
std::string_view dtypeName(DType t);

/// Parses a plan-file spelling; std::nullopt for anything else.
std::optional<DType> parseDType(std::string_view name);

} // namespace memopt::runtime

#endif // MEMOPT_RUNTIME_DTYPE_H
