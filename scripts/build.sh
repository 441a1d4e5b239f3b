#!/usr/bin/env bash
# Configures (once) and builds memopt into build/ (or $MEMOPT_BUILD_DIR).
# Installs missing Debian packages first.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${MEMOPT_BUILD_DIR:-$root/build}"

bash "$root/scripts/install-deps.sh"

if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE="${MEMOPT_BUILD_TYPE:-Release}" \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    ${MEMOPT_CMAKE_ARGS:-}
fi
ninja -C "$build" ${MEMOPT_NINJA_ARGS:-}
