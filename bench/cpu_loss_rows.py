#!/usr/bin/env python3
"""The LM-head loss's row work on the CPU: the unfused pair against
linear_cross_entropy_with_grad.

Usage: bench/cpu_loss_rows.py [--repeats R] [--build DIR] [--output FILE]

Compiles bench/cpu_loss_rows.cpp with g++ -O3 (the runtime's Release flags)
against the runtime's internal header runtime/lib/cpu/RowSoftmax.h and the
built libmemopt_runtime.so (DIR, default build/), runs it, and writes
bench/results/cpu_loss_rows.json: on 1024 x 4096 f32 logits, one thread, the
best of R runs of the forward op's rows (maximum, log-sum-exp), the
backward op's (maximum, softmax gradient) and the fused op's (each
exponential once), and whether the pair and the fused rows give the same
bits (they must).
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True
import checkpoint  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--output", default=os.path.join(HERE, "results", "cpu_loss_rows.json"))
    args = parser.parse_args(argv)
    lib = os.path.join(os.path.abspath(args.build), "lib")
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "cpu_loss_rows")
        subprocess.run(["g++", "-O3", "-DNDEBUG", "-std=c++17",
                        "-I" + os.path.join(ROOT, "runtime", "lib"),
                        "-I" + os.path.join(ROOT, "runtime", "include"),
                        os.path.join(HERE, "cpu_loss_rows.cpp"), "-o", exe,
                        "-L" + lib, "-lmemopt_runtime", "-Wl,-rpath," + lib], check=True)
        run = subprocess.run([exe, str(args.repeats)], capture_output=True, text=True)
    if run.returncode != 0:
        print(run.stdout + run.stderr, file=sys.stderr)
        print("cpu_loss_rows: the fused rows differ from the pair's", file=sys.stderr)
        return 1
    result = json.loads(run.stdout)
    data = {"benchmark": "cpu_loss_rows", "date": datetime.datetime.now(datetime.timezone.utc)
            .isoformat(timespec="seconds"), "machine": checkpoint.machine(),
            "git": checkpoint.git_info(), **result}
    checkpoint.write_json(args.output, data)
    pair = result["pair_forward_ms"] + result["pair_backward_ms"]
    print("| rows × classes | pair: forward + backward ms | with_grad ms | same bits |")
    print("|---|---:|---:|---|")
    print(f"| {result['rows']} × {result['classes']} | {result['pair_forward_ms']:.2f} + "
          f"{result['pair_backward_ms']:.2f} = {pair:.2f} | {result['with_grad_ms']:.2f} | "
          f"{'yes' if result['same_bits'] else 'no'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
