#!/usr/bin/env bash
# The package test: installs memopt from a build directory into a fresh
# prefix, configures examples/out-of-tree against that prefix alone
# (find_package(MemOpt) through CMAKE_PREFIX_PATH), builds it and runs its
# lit suite. ctest runs it as the test `package-out-of-tree`.
#   bash scripts/test-out-of-tree.sh [BUILD_DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-${MEMOPT_BUILD_DIR:-$root/build}}" && pwd)"
work="$build/out-of-tree"

rm -rf "$work"
mkdir -p "$work"
echo "== cmake --install $build --prefix $work/prefix"
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
echo "== configuring examples/out-of-tree against the prefix"
cmake -G Ninja -S "$root/examples/out-of-tree" -B "$work/build" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$work/prefix" \
  > "$work/configure.log" || { cat "$work/configure.log"; exit 1; }
grep "Using MemOptConfig.cmake" "$work/configure.log"
echo "== building"
ninja -C "$work/build"
echo "== testing"
ctest --test-dir "$work/build" --output-on-failure
# The compiler libraries bring no CUDA library with them: a tool built from
# MemOpt::Transforms and MemOpt::Conversion runs where no CUDA is installed.
if ldd "$work/build/bin/example-opt" | grep -E 'libcuda|libcudart|libcublas|libcudnn'; then
  echo "example-opt links a CUDA library" >&2
  exit 1
fi
