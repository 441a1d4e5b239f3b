#!/usr/bin/env python3
"""Sums memopt-run --trace's per-kernel table by kernel kind.

Usage: kernel_times.py TRACE_OUTPUT [--top N]

TRACE_OUTPUT is memopt-run's standard output with --trace (its table has one
row per kernel of the last step: step, kernel, allocated, freed after, arena
held, time ms, source). Prints each kernel kind's total time, count and share
of the step, largest first: where a step's time goes, on any device.
"""
import argparse
import collections
import re
import sys

ROW = re.compile(r"^\s*(\d+)\s+(\S+)\s+\d+\s+\d+\s+\d+\s+([\d.]+)\s")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("trace_output")
    p.add_argument("--top", type=int, default=20)
    args = p.parse_args(argv)
    total = collections.Counter()
    count = collections.Counter()
    with open(args.trace_output) as f:
        for line in f:
            if m := ROW.match(line):
                total[m.group(2)] += float(m.group(3))
                count[m.group(2)] += 1
    if not total:
        sys.exit(f"{args.trace_output}: no kernel table (was memopt-run run with --trace?)")
    step = sum(total.values())
    print(f"{len(total)} kernel kinds, {sum(count.values())} kernels, {step:.1f} ms")
    print(f"{'kernel':<32} {'ms':>10} {'count':>7} {'share':>7}")
    for kind, ms in total.most_common(args.top):
        print(f"{kind:<32} {ms:>10.2f} {count[kind]:>7} {100 * ms / step:>6.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
