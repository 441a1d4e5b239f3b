#!/usr/bin/env bash
# Runs every test: builds if needed, then the lit/FileCheck suite and the
# gtest unit tests through ctest. Exits non-zero on any failure.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${MEMOPT_BUILD_DIR:-$root/build}"

bash "$root/scripts/build.sh"
cd "$build"
ctest --output-on-failure -j "$(nproc)"
