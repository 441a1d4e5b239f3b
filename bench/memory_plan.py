#!/usr/bin/env python3
"""Arena planning on the model suite: planned arena vs the max-live lower
bound vs one slice per buffer (no planning), for each model's training step
(SGD, after --memopt-schedule), and compile time.

Usage: bench/memory_plan.py [--build build] [--out bench/results/memory_plan.json]
Writes JSON and prints a Markdown table (docs/benchmarks.md quotes it).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GEN = os.path.join(ROOT, "examples", "generate_models.py")

# Model and generator options: sizes chosen to run in seconds on 2 cores.
SUITE = [
    ("mlp", ["--batch", "64"]),
    ("resnet18", ["--batch", "8"]),
    ("resnet50", ["--batch", "8"]),
    ("cifar-resnet", ["--depth", "110", "--batch", "32"]),
    ("vgg16", ["--batch", "8"]),
    ("densenet121", ["--batch", "8"]),
    ("unet", ["--batch", "2", "--image-size", "128"]),
    ("gpt2", ["--batch", "4", "--seq", "256", "--layers", "6"]),
    ("lstm", ["--batch", "32", "--seq", "32"]),
]


def attr(text, name):
    m = re.search(name + r" = (\d+) : i64", text)
    if not m:
        sys.exit(f"memory_plan: no {name} in the output")
    return int(m.group(1))


def run(opt, model_file, passes):
    start = time.perf_counter()
    out = subprocess.run([opt, model_file] + passes, check=True,
                         capture_output=True, text=True).stdout
    return out, time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "results",
                                                      "memory_plan.json"))
    args = parser.parse_args()
    opt = os.path.join(args.build, "bin", "memopt-opt")
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for model, options in SUITE:
            path = os.path.join(tmp, model + ".mlir")
            subprocess.run([sys.executable, GEN, model, *options, "-o", path],
                           check=True)
            planned, seconds = run(opt, path, [
                "--memopt-autodiff", "--memopt-schedule", "--memopt-plan-memory"])
            unplanned, _ = run(opt, path, [
                "--memopt-autodiff", "--convert-memopt-to-memrt"])
            unscheduled, _ = run(opt, path, [
                "--memopt-autodiff", "--memopt-plan-memory"])
            ops = len(re.findall(r"^\s+(%\S+ = )?memopt\.", planned, re.M))
            row = {
                "model": model,
                "options": " ".join(options),
                "ops": ops,
                "arena_bytes": attr(planned, "memopt.arena_bytes"),
                "lower_bound_bytes": attr(planned, "memopt.arena_lower_bound"),
                "arena_unscheduled_bytes": attr(unscheduled, "memopt.arena_bytes"),
                "one_slice_per_buffer_bytes": attr(unplanned, "memrt.arena_bytes"),
                "compile_seconds": round(seconds, 3),
            }
            row["arena_over_lower_bound"] = round(
                row["arena_bytes"] / row["lower_bound_bytes"], 4)
            results.append(row)
            print(f"{model}: {row}", file=sys.stderr)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"benchmark": "memory_plan", "results": results}, f, indent=2)
        f.write("\n")
    mib = 1024 * 1024
    print("| model | options | ops | one slice per buffer (MiB) | planned, "
          "unscheduled (MiB) | planned + scheduled (MiB) | lower bound (MiB) | "
          "arena / bound | compile (s) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['model']} | `{r['options']}` | {r['ops']} | "
              f"{r['one_slice_per_buffer_bytes'] / mib:.1f} | "
              f"{r['arena_unscheduled_bytes'] / mib:.1f} | "
              f"{r['arena_bytes'] / mib:.1f} | {r['lower_bound_bytes'] / mib:.1f} | "
              f"{r['arena_over_lower_bound']:.3f} | {r['compile_seconds']:.2f} |")


if __name__ == "__main__":
    main()
