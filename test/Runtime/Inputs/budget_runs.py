#!/usr/bin/env python3
"""A budget is met or refused, and the minimum it names runs within it.

For each memopt-run configuration given (one per --config, options split on
spaces), runs the model with --budget=1, which must be refused naming the
smallest budget that fits ("use budget=N" after checkpointing, or "needs N
bytes" when nothing is checkpointed), then with --budget=N, which must run
and whose measured high-water (what the executor allocated) must be at most
N, and with --budget=N-1, which must be refused. Prints one line per
configuration; exit 1 on the first violation.
"""
import argparse
import re
import subprocess
import sys


def run(tool, model, options, budget):
    cmd = [tool, model, "--device=cpu", "--steps=2", f"--budget={budget}"]
    cmd += options
    return cmd, subprocess.run(cmd, capture_output=True, text=True, timeout=600)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("tool")
    parser.add_argument("model")
    parser.add_argument("--config", action="append", default=[])
    args = parser.parse_args()
    for config in args.config:
        options = config.split()
        cmd, proc = run(args.tool, args.model, options, 1)
        found = (re.search(r"use budget=(\d+) or more", proc.stderr) or
                 re.search(r"op needs (\d+) bytes", proc.stderr))
        if proc.returncode != 1 or not found:
            print(f"FAIL {config}: budget=1 not refused with a minimum "
                  f"(exit {proc.returncode}): {proc.stderr[-400:]}")
            return 1
        least = int(found.group(1))
        cmd, proc = run(args.tool, args.model, options, least)
        high = re.search(r"measured high-water (\d+) bytes", proc.stdout)
        if proc.returncode != 0 or not high:
            print(f"FAIL {config}: the named minimum {least} does not run "
                  f"(exit {proc.returncode}): {proc.stderr[-400:]}")
            return 1
        if int(high.group(1)) > least:
            print(f"FAIL {config}: high-water {high.group(1)} > budget {least}")
            return 1
        cmd, below = run(args.tool, args.model, options, least - 1)
        if below.returncode != 1 or "error:" not in below.stderr:
            print(f"FAIL {config}: budget {least - 1} below the minimum not "
                  f"refused (exit {below.returncode})")
            return 1
        print(f"ok {config}: minimum {least}, high-water {high.group(1)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
