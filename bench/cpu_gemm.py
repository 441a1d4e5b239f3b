#!/usr/bin/env python3
"""OpenBLAS's sgemm against oneDNN's on the CPU models' shapes.

Usage: bench/cpu_gemm.py [--repeats R] [--output FILE]

Compiles bench/cpu_gemm.cpp with the system's g++ against the packages the
README's commands install (libopenblas-dev, libdnnl-dev), runs it with
OPENBLAS_CORETYPE=SkylakeX where the CPU has AVX-512 (what memopt-run sets,
docs/benchmarks.md "OpenBLAS's kernels"), and writes
bench/results/cpu_gemm.json and a Markdown table: for each shape of
bench/cpu_peers.py's models and 1 and 2 threads, the best of R calls of
each library (alternating in one process) and the largest difference
between their results.
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True
import checkpoint  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--output", default=os.path.join(HERE, "results", "cpu_gemm.json"))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "cpu_gemm")
        subprocess.run(["g++", "-O2", "-fopenmp", "-I/usr/include/x86_64-linux-gnu/openblas-pthread",
                        os.path.join(HERE, "cpu_gemm.cpp"), "-o", exe, "-ldnnl", "-lopenblas"],
                       check=True)
        env = dict(os.environ)
        with open("/proc/cpuinfo") as f:
            if " avx512f " in f.read():
                env.setdefault("OPENBLAS_CORETYPE", "SkylakeX")
        out = subprocess.run([exe, str(args.repeats)], env=env, check=True,
                             capture_output=True, text=True).stdout
    rows = [json.loads(line) for line in out.splitlines() if line.strip()]
    data = {"benchmark": "cpu_gemm", "date": datetime.datetime.now(datetime.timezone.utc)
            .isoformat(timespec="seconds"), "machine": checkpoint.machine(),
            "git": checkpoint.git_info(), "openblas_coretype": env.get("OPENBLAS_CORETYPE"),
            "repeats": args.repeats, "rows": rows}
    checkpoint.write_json(args.output, data)
    print("| model | m × n × k | op | threads | OpenBLAS ms | oneDNN ms | OpenBLAS / oneDNN |")
    print("|---|---|---|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['model']} | {r['m']} × {r['n']} × {r['k']} | {r['trans']} | {r['threads']} "
              f"| {r['openblas_ms']:.3f} | {r['onednn_ms']:.3f} "
              f"| {r['openblas_ms'] / r['onednn_ms']:.2f}× |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
