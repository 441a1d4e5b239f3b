//===- Convert.cpp - element type conversion on the CPU -------------------===//
//
// Widening goes through float for f16/bf16 (exact); narrowing from double
// to f16/bf16 rounds twice (double -> float -> half), which is the
// conversion PyTorch's CPU `.half()` of a double tensor performs as well.
//
//===----------------------------------------------------------------------===//

#include "Convert.h"

#include "memopt/runtime/Error.h"
#include "memopt/runtime/Half.h"

namespace memopt::runtime::cpu {

namespace {

template <typename T> T load(const void *src, DType from, int64_t i) {
  switch (from) {
  case DType::F32:
    return static_cast<T>(static_cast<const float *>(src)[i]);
  case DType::F64:
    return static_cast<T>(static_cast<const double *>(src)[i]);
  case DType::F16:
    return static_cast<T>(
        halfBitsToFloat(static_cast<const uint16_t *>(src)[i]));
  case DType::BF16:
    return static_cast<T>(
        bfloat16BitsToFloat(static_cast<const uint16_t *>(src)[i]));
  default:
    throw Error(ErrorCode::Internal, "convertFloats: not a float dtype");
  }
}

template <typename T>
void loadAll(const void *src, DType from, T *dst, int64_t count) {
  switch (from) {
  case DType::F32: {
    const float *p = static_cast<const float *>(src);
    for (int64_t i = 0; i < count; ++i)
      dst[i] = static_cast<T>(p[i]);
    return;
  }
  case DType::F64: {
    const double *p = static_cast<const double *>(src);
    for (int64_t i = 0; i < count; ++i)
      dst[i] = static_cast<T>(p[i]);
    return;
  }
  case DType::F16: {
    const uint16_t *p = static_cast<const uint16_t *>(src);
    for (int64_t i = 0; i < count; ++i)
      dst[i] = static_cast<T>(halfBitsToFloat(p[i]));
    return;
  }
  case DType::BF16: {
    const uint16_t *p = static_cast<const uint16_t *>(src);
    for (int64_t i = 0; i < count; ++i)
      dst[i] = static_cast<T>(bfloat16BitsToFloat(p[i]));
    return;
  }
  default:
    throw Error(ErrorCode::Internal, "convertFloats: not a float dtype");
  }
}

} // namespace

void convertFloats(const void *src, DType from, void *dst, DType to,
                   int64_t count) {
  switch (to) {
  case DType::F32:
    return loadAll(src, from, static_cast<float *>(dst), count);
  case DType::F64:
    return loadAll(src, from, static_cast<double *>(dst), count);
  case DType::F16: {
    uint16_t *p = static_cast<uint16_t *>(dst);
    for (int64_t i = 0; i < count; ++i)
      p[i] = floatToHalfBits(load<float>(src, from, i));
    return;
  }
  case DType::BF16: {
    uint16_t *p = static_cast<uint16_t *>(dst);
    for (int64_t i = 0; i < count; ++i)
      p[i] = floatToBFloat16Bits(load<float>(src, from, i));
    return;
  }
  default:
    throw Error(ErrorCode::Internal, "convertFloats: not a float dtype");
  }
}

} // namespace memopt::runtime::cpu
