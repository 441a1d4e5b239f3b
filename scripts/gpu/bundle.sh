#!/usr/bin/env bash
# Packs what the GPU machine needs to run memopt's CUDA backend into
# .gpu/bundle.tgz (ignored by git; carry .gpu to the machine, about 33 MB):
# memopt-run, memopt-opt, MemOptCudaTests and MemOptNcclTests (when NCCL was
# found) linked against LLVM's static
# libraries (that machine has CUDA, cuDNN and PyTorch but no LLVM), the
# shared libraries they need that are neither glibc, the compiler runtime nor
# CUDA's (CBC, OpenBLAS, LAPACK), and the test models. scripts/gpu/check.sh
# unpacks and runs it there.
#
# Usage: scripts/gpu/bundle.sh   (builds build-static/ first; about 12 min
#                                 from scratch on 2 cores)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$root/build-static"
out="$build/gpu-bundle"
mkdir -p "$root/.git/info"
grep -qx '/.gpu/' "$root/.git/info/exclude" 2>/dev/null ||
  echo '/.gpu/' >>"$root/.git/info/exclude"

if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DMEMOPT_STATIC_LLVM=ON -DCMAKE_CUDA_ARCHITECTURES=90
fi
targets=(memopt-run memopt-opt MemOptCudaTests)
ninja -C "$build" -t targets all | grep -q '^MemOptNcclTests:' &&
  targets+=(MemOptNcclTests)
ninja -C "$build" "${targets[@]}"

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/models"
for b in bin/memopt-run bin/memopt-opt unittests/Training/MemOptCudaTests \
  unittests/MemOptNcclTests; do
  [ -e "$build/$b" ] || continue
  strip -o "$out/bin/$(basename "$b")" "$build/$b"
done
cp "$build"/unittests/Training/models/*.mlir "$out/models/"
nvcc -O2 -arch=sm_90 "$root/bench/gpu/lce_gemm.cu" -lcublas -o "$out/bin/lce_gemm"
# Libraries the machine may lack: everything but glibc, libstdc++/libgcc
# (newer there) and CUDA's own (cudart, cuBLAS, cuDNN are there; NCCL, 218 MB
# here, is there in PyTorch's nvidia-nccl-cu13 wheel).
for lib in $(ldd "$out"/bin/* 2>/dev/null | awk '/=>/ {print $3}' | sort -u); do
  case "$(basename "$lib")" in
  libc.so* | libm.so* | libmvec.so* | libdl.so* | librt.so* | libpthread.so* | \
    libstdc++.so* | libgcc_s.so* | libcud* | libcublas* | libnccl* | ld-linux*) ;;
  *) cp -L "$lib" "$out/lib/" ;;
  esac
done
if ldd "$out"/bin/* | grep -q libLLVM; then
  echo "bundle: a binary still links libLLVM.so" >&2
  exit 1
fi
rm -rf "$root/.gpu"
mkdir -p "$root/.gpu"
tar -C "$out" -czf "$root/.gpu/bundle.tgz" bin lib models
# The machine gets no .git: the benchmarks read the commit from here.
git -C "$root" rev-parse HEAD >"$root/.gpu/commit"
git -C "$root" status --porcelain --untracked-files=no | grep -q . &&
  echo 1 >"$root/.gpu/dirty" || echo 0 >"$root/.gpu/dirty"
du -sh "$root/.gpu"
