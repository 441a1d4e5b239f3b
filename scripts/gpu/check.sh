#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, with .gpu/ from
# scripts/gpu/bundle.sh beside it. Stages, in the order given:
#   env      the device, driver, CUDA, cuDNN and PyTorch versions
#   tests    every MemOptCudaTests case in its own process (a broken context
#            cannot fail the next one); with MEMOPT_GPU_SANITIZE=1 the first
#            two that fail are rerun under compute-sanitizer
#   nccl     MemOptNcclTests (one rank: the machine has one GPU, and NCCL
#            runs one rank per GPU)
#   lit      test/Runtime/cuda.test's commands (the machine has no lit)
#   quick    bench/gpu_compare.py --quick
#   compare  bench/gpu_compare.py with the arguments after `--`
#   cudnn    each convolution's algorithm: memopt-run with MEMOPT_CUDNN_LOG=1
#            for one step of the benchmark models (f32, TF32, fp16), then
#            the chosen algorithms' total time against cuDNN's fastest with
#            the workspace it asks for (scripts/cudnn_choices.py)
#   lce      bench/gpu/lce_gemm (built by bundle.sh): the LM head's GEMMs
#            by chunk height, leading dimension, compute type, workspace
#   trace    where the step's time goes: memopt-run --trace on the GPU for
#            the benchmark models in f32 and fp16, summed by kernel kind
#            (scripts/kernel_times.py) into kernel_times.txt
# Everything goes to $OUT (default /tmp/memopt-gpu): log.txt, cuda_tests.txt,
# gpu_compare*.json, kernel_times.txt. MEMOPT_GPU_TRACE="gpt2 unet" limits the
# trace stage to those models. With MEMOPT_GPU_SECONDS=S the benchmark stages stop S
# seconds after the script started (their JSON keeps every finished run).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
out="${OUT:-/tmp/memopt-gpu}"
mkdir -p "$out"
exec > >(tee -a "$out/log.txt") 2>&1

started=$(date +%s)
budget="${MEMOPT_GPU_SECONDS:-100000}"
left() { echo $((started + budget - $(date +%s))); }
tests_failed=0

stages=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do stages+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
compare_args=("$@")

# The tests were built with this checkout at /work/main; make that path work.
if [ "$root" != /work/main ] && [ ! -e /work/main ]; then
  mkdir -p /work && ln -s "$root" /work/main
fi
tar -C .gpu -xzf .gpu/bundle.tgz || exit 1
mkdir -p build-static/unittests/Training/models
cp .gpu/models/*.mlir build-static/unittests/Training/models/

# CUDA's libraries: the toolkit's, and cuDNN and NCCL from wherever they are
# installed (PyTorch's wheels carry them).
libdirs="$root/.gpu/lib"
for lib in libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libcudnn.so.9 \
  libnccl.so.2; do
  found=$(find /usr/local/cuda/lib64/ /usr/local/cuda/targets/ /usr/lib/x86_64-linux-gnu/ \
    /opt/ /usr/local/lib/ -name "$lib" -print -quit 2>/dev/null)
  # PyTorch's venv, wherever it is: its nvidia-* wheels.
  [ -n "$found" ] || found=$(find "$(python3 -c 'import nvidia, os;
print(os.path.dirname(list(nvidia.__path__)[0]))' 2>/dev/null)" \
    -name "$lib" -print -quit 2>/dev/null)
  if [ -z "$found" ]; then
    echo "check: $lib not found on this machine"
  else
    libdirs="$libdirs:$(dirname "$found")"
  fi
done
mkdir -p .gpu/wrap
for b in memopt-run memopt-opt MemOptCudaTests MemOptNcclTests lce_gemm; do
  [ -e ".gpu/bin/$b" ] || continue
  printf '#!/bin/sh\nLD_LIBRARY_PATH="%s" exec "%s" "$@"\n' \
    "$libdirs" "$root/.gpu/bin/$b" >".gpu/wrap/$b"
  chmod +x ".gpu/wrap/$b"
  LD_LIBRARY_PATH="$libdirs" ldd ".gpu/bin/$b" | grep "not found" |
    sed "s/^/check: $b needs /"
done
export PATH="$root/.gpu/wrap:$root/.gpu/bin:$PATH"
MEMOPT_GIT_COMMIT=$(cat .gpu/commit 2>/dev/null)
MEMOPT_GIT_DIRTY=$(cat .gpu/dirty 2>/dev/null)
export MEMOPT_GIT_COMMIT MEMOPT_GIT_DIRTY

stage_env() {
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  nvcc --version | tail -2
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda,
"cudnn", torch.backends.cudnn.version(), torch.cuda.get_device_name())'
  echo "libraries: $libdirs"
}

stage_tests() {
  local list failed=() t rc
  list=$(MemOptCudaTests --gtest_list_tests | awk '
    /^[^ ]/ {suite=$1} /^  / {print suite $1}')
  for t in $list; do
    timeout 100 MemOptCudaTests --gtest_filter="$t" >"$out/one.txt" 2>&1
    rc=$?
    cat "$out/one.txt" >>"$out/cuda_tests.txt"
    if [ $rc -eq 0 ]; then
      grep -q "SKIPPED \]" "$out/one.txt" && echo "SKIP $t" || echo "PASS $t"
    else
      echo "FAIL $t (exit $rc)"
      grep -E "Failure|error|Error|Expected|Which is|actual|CUDA" "$out/one.txt" | head -12
      failed+=("$t")
    fi
  done
  rm -f "$out/one.txt"
  echo "tests: $(echo "$list" | wc -w) run, ${#failed[@]} failed"
  tests_failed=${#failed[@]}
  local n=0
  [ "${MEMOPT_GPU_SANITIZE:-0}" = 1 ] || return 0
  for t in "${failed[@]}"; do
    grep -q "$t" "$out/cuda_tests.txt" || continue
    [ $n -ge 2 ] && break
    n=$((n + 1))
    echo "== compute-sanitizer $t"
    LD_LIBRARY_PATH="$libdirs" timeout 120 compute-sanitizer --tool memcheck \
      --print-limit 5 .gpu/bin/MemOptCudaTests --gtest_filter="$t" 2>&1 |
      grep -v "^\[ \|^Running\|^Note:" | head -40
  done
}

stage_nccl() {
  [ -e .gpu/wrap/MemOptNcclTests ] || { echo "nccl: not in the bundle"; return; }
  timeout 120 MemOptNcclTests 2>&1 | tee "$out/nccl_tests.txt" |
    grep -E "^\[ +(OK|FAILED|SKIPPED|PASSED) +\]|Failure|Expected|Which is|NCCL"
  echo "nccl tests: exit ${PIPESTATUS[0]}"
}

stage_lit() {
  local t
  t=$(mktemp -d)
  memopt-run examples/cnn.mlir --steps=5 --lr=0.05 --device=cpu >"$t/cpu" &&
    memopt-run examples/cnn.mlir --steps=5 --lr=0.05 >"$t/auto" &&
    grep -q "device: cuda (auto)" "$t/auto" &&
    grep -q "note: convolutions get one image's im2col" "$t/auto" &&
    memopt-run examples/cnn.mlir --steps=5 --lr=0.05 --device=cuda \
      --conv-workspace=64MiB >"$t/wide" &&
    ! grep -q "note: convolutions" "$t/wide" &&
    python3 test/Runtime/Inputs/compare_losses.py --tolerance 0.001 "$t/cpu" "$t/wide" &&
    python3 test/Runtime/Inputs/compare_losses.py --tolerance 0.001 "$t/cpu" "$t/auto" &&
    memopt-run examples/cnn.mlir --steps=5 --lr=0.05 --device=cpu --precision=fp16 >"$t/cpu16" &&
    memopt-run examples/cnn.mlir --steps=5 --lr=0.05 --device=cuda --precision=fp16 \
      --checkpoint=sqrt --inplace >"$t/cuda16" &&
    python3 test/Runtime/Inputs/compare_losses.py --tolerance 0.01 "$t/cpu16" "$t/cuda16" &&
    grep -q "loss scale: 65536 -> 65536, 0 of 5 steps skipped" "$t/cuda16" &&
    MEMOPT_CUDA_GRAPHS=0 MEMOPT_CUDA_TF32=0 memopt-run examples/cnn.mlir --steps=5 \
      --lr=0.05 --device=cuda >"$t/nographs" &&
    python3 test/Runtime/Inputs/compare_losses.py --tolerance 0.001 "$t/cpu" "$t/nographs" &&
    ! MEMOPT_CUDA_GRAPHS=yes memopt-run examples/cnn.mlir --steps=1 --device=cuda \
      >"$t/flag" 2>&1 &&
    grep -q "MEMOPT_CUDA_GRAPHS must be 0 or 1, got 'yes'" "$t/flag" &&
    ! MEMOPT_CUDA_TF32=on memopt-run examples/cnn.mlir --steps=1 --device=cuda \
      >"$t/flag32" 2>&1 &&
    grep -q "MEMOPT_CUDA_TF32 must be 0 or 1, got 'on'" "$t/flag32"
  echo "lit cuda.test: exit $?"
  cat "$t/flag" "$t/flag32"
  tail -n 6 "$t"/auto "$t"/cuda16
}

stage_quick() {
  [ "$(left)" -gt 30 ] || { echo "quick: no time left"; return; }
  PYTHONUNBUFFERED=1 timeout "$(left)" python3 bench/gpu_compare.py --quick \
    --memopt-run .gpu/wrap/memopt-run --timeout 120 \
    --output "$out/gpu_compare_quick.json"
  echo "gpu_compare --quick: exit $?"
}

stage_compare() {
  [ "$tests_failed" -eq 0 ] || echo "compare: note: $tests_failed CUDA tests failed"
  [ "$(left)" -gt 30 ] || { echo "compare: no time left"; return; }
  PYTHONUNBUFFERED=1 timeout "$(left)" python3 bench/gpu_compare.py \
    --memopt-run .gpu/wrap/memopt-run \
    --output "$out/gpu_compare.json" "${compare_args[@]}"
  echo "gpu_compare: exit $?"
}

stage_cudnn() {
  local t spec name flags
  t=$(mktemp -d)
  for spec in "resnet50 --batch 256" "cifar-resnet --depth 110 --batch 128" \
    "unet --batch 8 --image-size 256 --classes 2"; do
    name=${spec%% *}
    python3 examples/generate_models.py $spec -o "$t/$name.mlir" || continue
    for flags in "" "--tf32" "--precision=fp16"; do
      [ "$(left)" -gt 40 ] || { echo "cudnn: no time left"; return; }
      echo "== $spec $flags" | tee -a "$out/cudnn_choices.txt"
      MEMOPT_CUDNN_LOG=1 timeout "$(left)" memopt-run "$t/$name.mlir" \
        --device=cuda --steps=1 $flags >"$t/run.txt" 2>"$t/log.txt"
      grep "^cudnn:" "$t/log.txt" >>"$out/cudnn_choices.log"
      python3 scripts/cudnn_choices.py "$t/log.txt" --top 8 |
        tee -a "$out/cudnn_choices.txt"
    done
  done
}

stage_lce() {
  [ -x .gpu/bin/lce_gemm ] || { echo "lce: no .gpu/bin/lce_gemm"; return; }
  timeout "$(left)" .gpu/wrap/lce_gemm | tee "$out/lce_gemm.txt"
}

stage_trace() {
  local t spec name flags
  t=$(mktemp -d)
  for spec in "cifar-resnet --depth 110 --batch 128" "resnet50 --batch 256" \
    "unet --batch 8 --image-size 256 --classes 2" \
    "gpt2 --batch 16 --seq 1024"; do
    name=${spec%% *}
    case " ${MEMOPT_GPU_TRACE:-$name} " in *" $name "*) ;; *) continue ;; esac
    python3 examples/generate_models.py $spec -o "$t/$name.mlir" || continue
    for flags in "" "--precision=fp16"; do
      [ "$(left)" -gt 40 ] || { echo "trace: no time left"; return; }
      echo "== $spec $flags" | tee -a "$out/kernel_times.txt"
      timeout "$(left)" memopt-run "$t/$name.mlir" --device=cuda --steps=2 \
        --step-times --trace="$t/trace.json" $flags >"$t/run.txt" 2>&1
      grep -E "^step times|^loss |error" "$t/run.txt" | tee -a "$out/kernel_times.txt"
      python3 scripts/kernel_times.py "$t/run.txt" --top 12 >>"$out/kernel_times.txt"
    done
  done
  head -c 20000 "$out/kernel_times.txt"
}

for s in "${stages[@]}"; do
  echo "=== $s ($(date +%T))"
  "stage_$s"
done
echo "=== done ($(date +%T))"
