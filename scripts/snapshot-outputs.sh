#!/usr/bin/env bash
# Writes the plan and the memory report of every example and a set of suite
# models under several pipeline options into OUTDIR, with the given build's
# memopt-run. Refactorings that must change nothing for users compare two
# snapshots byte for byte:
#
#   bash scripts/snapshot-outputs.sh before build
#   ... change the code, rebuild ...
#   bash scripts/snapshot-outputs.sh after build && diff -r before after
set -euo pipefail
out=${1:?usage: snapshot-outputs.sh OUTDIR [BUILD_DIR]}
build=${2:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
run="$(cd "$build" && pwd)/bin/memopt-run"
gen="python3 $root/examples/generate_models.py"
mkdir -p "$out/models"
cp "$root/examples/mlp.mlir" "$root/examples/cnn.mlir" "$out/models/"
$gen cifar-resnet --depth 20 --batch 8 -o "$out/models/resnet20.mlir"
$gen gpt2 --layers 2 --dim 64 --heads 4 --vocab 128 --seq 32 --batch 2 -o "$out/models/gpt2.mlir"
$gen lstm --batch 4 -o "$out/models/lstm.mlir"
$gen unet --batch 1 --image-size 32 -o "$out/models/unet.mlir"
# An inference graph: no parameters, no loss.
cat > "$out/models/inference.mlir" <<'MLIR'
func.func @infer(%x: tensor<64x256xf32>, %w: tensor<128x256xf32>) -> tensor<64x128xf32> {
  %h = memopt.linear %x, %w : tensor<64x256xf32>, tensor<128x256xf32>
  %a = memopt.gelu %h : tensor<64x128xf32>
  %s = memopt.softmax %a {axis = -1 : i64} : tensor<64x128xf32>
  %d = memopt.dropout %s {p = 0.1 : f64, seed = 3 : i64} : tensor<64x128xf32>
  return %d : tensor<64x128xf32>
}
MLIR
configs=(
  "default|"
  "adam-optimal|--optimizer=adam --checkpoint=optimal"
  "fp16-inplace|--precision=fp16 --inplace"
  "bf16-sqrt-abn|--precision=bf16 --checkpoint=sqrt --abn"
  "budget|--budget=64MiB"
  "micro-nopart|--microbatches=2 --partition=false"
  "eval|--eval"
  "fp16-plain|--precision=fp16"
)
# Run from OUTDIR on relative paths: locations in plans and reports do not
# depend on where the snapshot is.
cd "$out"
for model in models/*.mlir; do
  name=$(basename "$model" .mlir)
  for entry in "${configs[@]}"; do
    tag=${entry%%|*}
    read -r -a opts <<< "${entry#*|}"
    base="$name.$tag"
    if "$run" "$model" --device=cpu --steps=1 "${opts[@]}" \
        --emit-plan="$base.plan.json" --report="$base.report.json" \
        > /dev/null 2> "$base.stderr"; then
      rm -f "$base.stderr"
    else
      echo "exit $?" >> "$base.stderr"
    fi
  done
done
echo "snapshot of $(ls | grep -c 'plan.json') plans in $out"
