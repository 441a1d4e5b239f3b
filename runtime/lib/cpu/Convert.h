//===- Convert.h - element type conversion on the CPU -----------*- C++ -*-===//
//
// Converts float element buffers between f16, bf16, f32 and f64. The CPU
// backend uses it to widen f16/bf16 operands to the compute type and narrow
// results back (the "storage" precisions); float -> f16/bf16 rounds to
// nearest even (Half.h).
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_LIB_CPU_CONVERT_H
#define MEMOPT_RUNTIME_LIB_CPU_CONVERT_H

#include "memopt/runtime/DType.h"

#include <cstdint>

namespace memopt::runtime::cpu {

/// Converts `count` elements of float dtype `from` at `src` to float dtype
/// `to` at `dst`. The buffers must not overlap.
void convertFloats(const void *src, DType from, void *dst, DType to,
                   int64_t count);

} // namespace memopt::runtime::cpu

#endif // MEMOPT_RUNTIME_LIB_CPU_CONVERT_H
