#!/usr/bin/env bash
# Installs the Debian packages memopt needs to build and test, idempotently.
# Run as root on Debian 12 (bookworm) with LLVM 22 packages available.
set -euo pipefail

PKGS=(g++ cmake ninja-build python3
      libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
      libopenblas-dev libdnnl-dev opencl-c-headers ocl-icd-opencl-dev
      nlohmann-json3-dev libgtest-dev libgmock-dev
      coinor-libcbc-dev coinor-cbc pkg-config
      libonnx-dev libprotobuf-dev python3-onnx python3-numpy
      libboost-graph-dev openmpi-bin libopenmpi-dev libmimalloc-dev)

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
