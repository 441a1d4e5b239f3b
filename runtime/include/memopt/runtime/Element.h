//===- Element.h - one element of any dtype, as a double --------*- C++ -*-===//
//
// Host-side access to single elements of host buffers in any runtime dtype,
// for tools and tests that fill or inspect tensors (initialisation, data,
// result summaries). Not for kernels: they work on typed arrays.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_ELEMENT_H
#define MEMOPT_RUNTIME_ELEMENT_H

#include "memopt/runtime/DType.h"
#include "memopt/runtime/Half.h"

#include <cstdint>
#include <cstring>

namespace memopt::runtime {

/// The element at `p` (of type `dtype`) converted to double.
inline double readElement(const void *p, DType dtype) {
  switch (dtype) {
  case DType::F32: {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case DType::F64: {
    double v;
    std::memcpy(&v, p, 8);
    return v;
  }
  case DType::F16: {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return halfBitsToFloat(v);
  }
  case DType::BF16: {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return bfloat16BitsToFloat(v);
  }
  case DType::I32: {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case DType::I64: {
    int64_t v;
    std::memcpy(&v, p, 8);
    return static_cast<double>(v);
  }
  case DType::UI8:
    return *static_cast<const uint8_t *>(p);
  }
  return 0;
}

/// Stores `value` at `p`, rounded to `dtype` (round to nearest even for the
/// float types, truncation towards zero for the integer ones).
inline void writeElement(void *p, DType dtype, double value) {
  switch (dtype) {
  case DType::F32: {
    float v = static_cast<float>(value);
    std::memcpy(p, &v, 4);
    return;
  }
  case DType::F64:
    std::memcpy(p, &value, 8);
    return;
  case DType::F16: {
    uint16_t v = floatToHalfBits(static_cast<float>(value));
    std::memcpy(p, &v, 2);
    return;
  }
  case DType::BF16: {
    uint16_t v = floatToBFloat16Bits(static_cast<float>(value));
    std::memcpy(p, &v, 2);
    return;
  }
  case DType::I32: {
    int32_t v = static_cast<int32_t>(value);
    std::memcpy(p, &v, 4);
    return;
  }
  case DType::I64: {
    int64_t v = static_cast<int64_t>(value);
    std::memcpy(p, &v, 8);
    return;
  }
  case DType::UI8:
    *static_cast<uint8_t *>(p) = static_cast<uint8_t>(value);
    return;
  }
}

} // namespace memopt::runtime

#endif // MEMOPT_RUNTIME_ELEMENT_H
