"""Compares the tensors of two .safetensors files (f32, f64).

Usage: compare_weights.py [--tolerance T] [--exact] A B

Both files must hold the same tensor names, dtypes and shapes. With --exact
every tensor must be byte-identical; otherwise each element may differ by
at most T times the tensor's largest magnitude in A (relative to the
tensor, as summation-order rounding is). Prints the largest difference
found.
"""
import argparse
import json
import struct
import sys

import numpy as np

DTYPES = {"F32": np.float32, "F64": np.float64, "F16": np.float16,
          "I64": np.int64, "I32": np.int32}


def read(path):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    body = data[8 + n:]
    tensors = {}
    for name, info in header.items():
        lo, hi = info["data_offsets"]
        array = np.frombuffer(body[lo:hi], dtype=DTYPES[info["dtype"]])
        tensors[name] = array.reshape(info["shape"])
    return tensors


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tolerance", type=float, default=0.0)
    parser.add_argument("--exact", action="store_true")
    parser.add_argument("a")
    parser.add_argument("b")
    args = parser.parse_args()
    a, b = read(args.a), read(args.b)
    if sorted(a) != sorted(b):
        sys.exit(f"different tensors: {sorted(a)} vs {sorted(b)}")
    worst = 0.0
    for name in sorted(a):
        x, y = a[name], b[name]
        if x.shape != y.shape or x.dtype != y.dtype:
            sys.exit(f"{name}: {x.dtype}{x.shape} vs {y.dtype}{y.shape}")
        if args.exact:
            if x.tobytes() != y.tobytes():
                sys.exit(f"{name}: not byte-identical")
            continue
        scale = max(float(np.abs(x.astype(np.float64)).max()), 1e-30)
        diff = float(np.abs(x.astype(np.float64) - y.astype(np.float64)).max())
        worst = max(worst, diff / scale)
        if diff > args.tolerance * scale:
            sys.exit(f"{name}: differs by {diff:.3g} ({diff / scale:.3g} of "
                     f"its largest magnitude {scale:.3g}), over {args.tolerance}")
    print("identical" if args.exact else f"largest relative difference {worst:.3g}")


if __name__ == "__main__":
    main()
