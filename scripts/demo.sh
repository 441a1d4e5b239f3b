#!/usr/bin/env bash
# The main job: builds memopt if needed, then shows it compiling and training
# models: the training step autodiff builds, training on the CPU runtime with
# the loss falling, evaluation of the trained weights, the suite's models and
# a diagnostic for a broken graph.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${MEMOPT_BUILD_DIR:-$root/build}"
bash "$root/scripts/build.sh" >/dev/null
opt="$build/bin/memopt-opt"
run="$build/bin/memopt-run"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

echo "== examples/cnn.mlir: a CIFAR-sized conv/BN/ReLU/pool network (forward + loss only)"
"$opt" "$root/examples/cnn.mlir" --memopt-summary -o /dev/null | head -6
echo
echo "== --memopt-autodiff builds the training step: backward ops and the optimizer"
"$opt" "$root/examples/cnn.mlir" --memopt-autodiff='optimizer=momentum lr=0.02' \
  --memopt-summary -o /dev/null | sed -n '1,7p;/backward\|update\|sum_to/p'
echo
echo "== memopt-run trains it on the CPU runtime (synthetic learnable data, 50 steps)"
"$run" "$root/examples/cnn.mlir" --steps=50 --optimizer=momentum --lr=0.02 \
  --save-weights="$tmp/cnn.safetensors" |
  awk '/^step/ { split($2, s, "/"); if (s[1] != 1 && s[1] % 10 != 0) next } { print }'
echo
echo "== The same step without memopt's schedule and arena plan, side by side"
"$run" "$root/examples/cnn.mlir" --steps=3 --optimizer=momentum --lr=0.02 --compare | grep -v "step time"
echo
echo "== ... and evaluates the trained weights (eval mode: running statistics, no dropout)"
"$run" "$root/examples/cnn.mlir" --eval --steps=4 \
  --load-weights="$tmp/cnn.safetensors" | grep -E "mean loss|kernels"
echo
echo "== Checkpointing a CIFAR ResNet-56 (batch 32): recompute in the backward pass, same losses"
python3 "$root/examples/generate_models.py" cifar-resnet --depth 56 --batch 32 -o "$tmp/resnet56.mlir"
for c in none sqrt optimal "optimal --inplace"; do
  "$run" "$tmp/resnet56.mlir" --steps=2 --lr=0.05 --checkpoint=$c |
    awk -v c="$c" '/^step 2/ { loss = $4 } /^memory/ { hw = $4 }
      END { printf "--checkpoint=%-18s step 2 loss %s, measured high-water %.1f MiB\n", c, loss, hw / 1048576 }'
done
echo "\$ memopt-run resnet56.mlir --budget=20MiB   (the least recomputation that fits)"
"$run" "$tmp/resnet56.mlir" --steps=1 --budget=20MiB | grep -E "^memory"
echo "\$ memopt-run resnet56.mlir --budget=12MiB"
if "$run" "$tmp/resnet56.mlir" --steps=1 --budget=12MiB 2>&1 | sed "s|$tmp/||" | grep error; then :; fi
echo
echo "== Mixed precision: f16 activations, f32 master weights, GradScaler loss scaling"
for p in fp32 fp16 bf16; do
  "$run" "$root/examples/cnn.mlir" --steps=10 --lr=0.05 --precision=$p |
    awk -v p="$p" '/^step 10/ { loss = $4 } /^arena/ { arena = $2 }
      /^loss scale/ { scale = ", " $0 }
      END { printf "--precision=%s  step 10 loss %s, arena %.1f MiB%s\n", p, loss, arena / 1048576, scale }'
done
"$run" "$tmp/resnet56.mlir" --steps=2 --lr=0.05 --precision=fp16 --checkpoint=optimal --inplace |
  awk '/^step 2/ { loss = $4 } /^memory/ { hw = $4 }
    END { printf "ResNet-56 --precision=fp16 --checkpoint=optimal --inplace: step 2 loss %s, measured high-water %.1f MiB\n", loss, hw / 1048576 }'
echo
echo "== Every model of the suite, e.g. ResNet-50 at batch 8, 224x224"
python3 "$root/examples/generate_models.py" resnet50 --batch 8 -o "$tmp/resnet50.mlir"
"$opt" "$tmp/resnet50.mlir" --memopt-summary -o /dev/null | head -3
"$opt" "$tmp/resnet50.mlir" --memopt-autodiff --memopt-summary -o /dev/null | grep "ops:"
echo
echo "== A wrong shape is a located diagnostic, not a crash"
cat > "$tmp/broken.mlir" <<'MLIR'
func.func @f(%x: tensor<8x3x32x32xf32>, %w: tensor<16x3x3x3xf32> {memopt.param}) -> tensor<8x16x15x15xf32> {
  %y = "memopt.conv2d"(%x, %w) <{strides = array<i64: 2, 2>, padding = array<i64: 1, 1>}>
      : (tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<8x16x15x15xf32>
  return %y : tensor<8x16x15x15xf32>
}
MLIR
echo "\$ memopt-opt broken.mlir"
if "$opt" "$tmp/broken.mlir" -o /dev/null 2>&1 | sed "s|$tmp/||"; then :; fi
