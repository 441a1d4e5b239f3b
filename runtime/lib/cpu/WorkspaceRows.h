//===- WorkspaceRows.h - scratch rows from the step's workspace -*- C++ -*-===//
//
// Internal to the CPU backend. Kernels that work a chunk of rows at a time
// (convolutions' im2col rows, attention's score strips, the LM-head loss's
// logits) take their scratch from the step's planned workspace, which the
// compiler sizes by the same rule (lib/Dialect/MemOpt/IR/WorkspaceModel.cpp):
// as many rows as it holds, at most all of them; a plan whose workspace
// cannot hold one row (or has none) makes the call allocate its own.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_LIB_CPU_WORKSPACEROWS_H
#define MEMOPT_RUNTIME_LIB_CPU_WORKSPACEROWS_H

#include "CpuKernels.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace memopt::runtime::cpu {

/// Rows of `rowElements` elements of T: in the planned workspace, as many
/// as it holds up to `maxRows` (>= 1), or `maxRows` rows of the call's own
/// when it cannot hold one.
template <typename T> class WorkspaceRows {
public:
  WorkspaceRows(const KernelCall &call, int64_t rowElements, int64_t maxRows) {
    size_t rowBytes = static_cast<size_t>(rowElements) * sizeof(T);
    const Workspace &ws = call.context.workspace;
    if (ws.data && rowBytes > 0 && ws.bytes >= rowBytes &&
        reinterpret_cast<uintptr_t>(ws.data) % alignof(T) == 0) {
      rows = std::clamp<int64_t>(ws.bytes / rowBytes, 1, maxRows);
      ptr = static_cast<T *>(ws.data);
      return;
    }
    rows = maxRows;
    own.resize(static_cast<size_t>(maxRows * rowElements));
    ptr = own.data();
  }
  T *data() { return ptr; }
  /// Rows that fit at once.
  int64_t rows = 1;

private:
  std::vector<T> own;
  T *ptr = nullptr;
};

} // namespace memopt::runtime::cpu

#endif // MEMOPT_RUNTIME_LIB_CPU_WORKSPACEROWS_H
