#!/usr/bin/env python3
"""Checks make_onnx.py's `reduce` model as memopt computes it against NumPy:
the mean squared error of its output against zeros on a fixed x0, printed by
`memopt-run --steps=1 --inputs` (the loss before the update).

    reduce_check.py MODEL.mlir WEIGHTS.safetensors WORKDIR MEMOPT_RUN

(MODEL.mlir and WEIGHTS from `memopt-translate --import-onnx --loss=mse
--weights=WEIGHTS`.)
"""
import os
import re
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_step import write_safetensors  # noqa: E402


def main():
    mlir, weights, work, run = sys.argv[1:5]
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    batch = os.path.join(work, "reduce.batch.safetensors")
    write_safetensors(batch, {"x0": x, "target": np.zeros((2, 1), np.float32)})
    out = subprocess.run([run, mlir, "--device=cpu", "--steps=1", "--optimizer=sgd",
                          "--lr=1e-3", f"--inputs={batch}",
                          f"--load-weights={weights}"],
                         capture_output=True, text=True, check=True).stdout
    got = float(re.search(r"step 1/1 loss ([-0-9.e+]+)", out).group(1))
    x64 = x.astype(np.float64) * np.array([0.5, 1.0, 1.5, 2.0])
    y = x64.mean(axis=1).sum(axis=-1, keepdims=True) + x64.mean()
    want = float((y ** 2).mean())
    rel = abs(got - want) / want
    print(f"loss {got} (NumPy {want:.6f}), relative error {rel:.1e}")
    return 0 if rel < 1e-5 else 1


if __name__ == "__main__":
    sys.exit(main())
