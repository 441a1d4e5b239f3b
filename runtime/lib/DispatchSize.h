//===- DispatchSize.h - element-size dispatch for data movement -*- C++ -*-===//
//
// Internal to the backends: data-movement kernels copy elements bit for bit,
// so they need only the element's size, not its type.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_LIB_DISPATCHSIZE_H
#define MEMOPT_RUNTIME_LIB_DISPATCHSIZE_H

#include "memopt/runtime/DType.h"
#include "memopt/runtime/Error.h"

#include <cstdint>

namespace memopt::runtime {

/// Calls `f(E{})` with E an unsigned integer type of `dtype`'s element size.
template <typename F> void dispatchSize(DType dtype, F &&f) {
  switch (dtypeSize(dtype)) {
  case 2:
    return f(uint16_t{});
  case 4:
    return f(uint32_t{});
  case 8:
    return f(uint64_t{});
  default:
    throw Error(ErrorCode::Internal, "unsupported element size");
  }
}

} // namespace memopt::runtime

#endif // MEMOPT_RUNTIME_LIB_DISPATCHSIZE_H
