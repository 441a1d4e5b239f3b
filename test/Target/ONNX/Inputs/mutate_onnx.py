#!/usr/bin/env python3
"""Byte-level mutation of an ONNX model: every mutant must import or be
refused with an error (exit 1) -- never a crash, a hang or an output that
does not parse back -- and an imported one must go through the attention
and LM-head fusions without a crash or a hang.

    mutate_onnx.py MODEL.onnx SEED COUNT MEMOPT_TRANSLATE MEMOPT_OPT WORKDIR

Prints "COUNT mutants: I imported, R refused, 0 failures" and exits 1 on any
failure, keeping the mutant in WORKDIR.
"""
import os
import random
import subprocess
import sys


def run(cmd):
    """The finished process, or None when it ran past 60 seconds."""
    try:
        return subprocess.run(cmd, capture_output=True, timeout=60)
    except subprocess.TimeoutExpired:
        return None


def main():
    model, seed, count, translate, opt, work = sys.argv[1:7]
    rng = random.Random(int(seed))
    src = open(model, "rb").read()
    imported = refused = failures = 0
    os.makedirs(work, exist_ok=True)
    mutant, out = os.path.join(work, "mutant.onnx"), os.path.join(work, "mutant.mlir")
    for i in range(int(count)):
        b = bytearray(src)
        for _ in range(rng.randint(1, 8)):
            pos, r = rng.randrange(len(b)), rng.random()
            if r < 0.6:
                b[pos] = rng.randrange(256)
            elif r < 0.8:
                del b[pos:pos + rng.randint(1, 16)]
            else:
                b[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        with open(mutant, "wb") as f:
            f.write(b)
        if os.path.exists(out):
            os.remove(out)
        p = run([translate, "--import-onnx", mutant, "--batch=2",
                 "--loss=cross_entropy", "-o", out])
        if p is None or p.returncode not in (0, 1):
            failures += 1
            keep = os.path.join(work, f"failure{i}.onnx")
            os.replace(mutant, keep)
            print(f"mutant {i}: {'timeout' if p is None else 'exit %d' % p.returncode}; kept {keep}")
            continue
        if p.returncode == 1:
            refused += 1
            if os.path.exists(out):
                failures += 1
                print(f"mutant {i}: refused but wrote {out}")
            continue
        imported += 1
        q = run([opt, out, "-o", os.devnull])
        if q is None or q.returncode != 0:
            failures += 1
            keep = os.path.join(work, f"reparse{i}.onnx")
            os.replace(mutant, keep)
            print(f"mutant {i}: output does not parse back; kept {keep}")
            continue
        # The fusions run on IR they did not write: a refusal is fine, a
        # crash is not.
        f = run([opt, out, "--memopt-fuse-attention",
                 "--memopt-fuse-linear-cross-entropy", "-o", os.devnull])
        if f is None or f.returncode not in (0, 1):
            failures += 1
            keep = os.path.join(work, f"fuse{i}.onnx")
            os.replace(mutant, keep)
            print(f"mutant {i}: the fusions {'timed out' if f is None else 'exited %d' % f.returncode}; kept {keep}")
    print(f"{count} mutants: {imported} imported, {refused} refused, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
