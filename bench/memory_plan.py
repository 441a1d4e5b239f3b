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


def report_peak(opt, model_file, passes):
    """peak_bytes of --memopt-report: everything live, arguments included."""
    out = subprocess.run([opt, model_file] + passes +
                         ["--memopt-report=file=-", "-o", "/dev/null"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["peak_bytes"]


def compile_time_10k(opt, tmp):
    """The whole pipeline on CIFAR ResNet-1202's training step (> 10,000
    ops after autodiff), wall seconds, best of three."""
    path = os.path.join(tmp, "r1202.mlir")
    subprocess.run([sys.executable, GEN, "cifar-resnet", "--depth", "1202",
                    "--batch", "32", "-o", path], check=True)
    best, ops = None, 0
    for _ in range(3):
        out, seconds = run(opt, path, ["--memopt-autodiff", "--memopt-schedule",
                                       "--memopt-plan-memory"])
        best = seconds if best is None else min(best, seconds)
        ops = len(re.findall(r"^\s+(%\S+ = )?memopt\.", out, re.M))
    return {"model": "cifar-resnet --depth 1202 --batch 32", "ops": ops,
            "seconds": round(best, 3)}


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
            peak_unscheduled = report_peak(opt, path, ["--memopt-autodiff"])
            peak_scheduled = report_peak(opt, path, ["--memopt-autodiff",
                                                     "--memopt-schedule"])
            row = {
                "model": model,
                "options": " ".join(options),
                "ops": ops,
                "arena_bytes": attr(planned, "memopt.arena_bytes"),
                "lower_bound_bytes": attr(planned, "memopt.arena_lower_bound"),
                "arena_unscheduled_bytes": attr(unscheduled, "memopt.arena_bytes"),
                "one_slice_per_buffer_bytes": attr(unplanned, "memrt.arena_bytes"),
                "report_peak_bytes": peak_unscheduled,
                "report_peak_scheduled_bytes": peak_scheduled,
                "compile_seconds": round(seconds, 3),
            }
            row["arena_over_lower_bound"] = round(
                row["arena_bytes"] / row["lower_bound_bytes"], 4)
            results.append(row)
            print(f"{model}: {row}", file=sys.stderr)
        compile10k = compile_time_10k(opt, tmp)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"benchmark": "memory_plan", "results": results,
                   "compile_time_large_graph": compile10k}, f, indent=2)
        f.write("\n")
    mib = 1024 * 1024
    print("| model | options | ops | report peak (MiB) | report peak, scheduled "
          "(MiB) | one slice per buffer (MiB) | planned, unscheduled (MiB) | "
          "planned + scheduled (MiB) | lower bound (MiB) | arena / bound | "
          "compile (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['model']} | `{r['options']}` | {r['ops']} | "
              f"{r['report_peak_bytes'] / mib:.1f} | "
              f"{r['report_peak_scheduled_bytes'] / mib:.1f} | "
              f"{r['one_slice_per_buffer_bytes'] / mib:.1f} | "
              f"{r['arena_unscheduled_bytes'] / mib:.1f} | "
              f"{r['arena_bytes'] / mib:.1f} | {r['lower_bound_bytes'] / mib:.1f} | "
              f"{r['arena_over_lower_bound']:.3f} | {r['compile_seconds']:.2f} |")


    print()
    print(f"Compile time, whole pipeline (autodiff, schedule, plan) on "
          f"{compile10k['model']} ({compile10k['ops']} ops): "
          f"{compile10k['seconds']:.2f} s")


if __name__ == "__main__":
    main()
