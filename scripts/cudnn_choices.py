#!/usr/bin/env python3
"""Sums the CUDA backend's convolution choices that MEMOPT_CUDNN_LOG=1 logs.

Usage: cudnn_choices.py STDERR_LOG [--top N]

Each `cudnn:` line (runtime/lib/cuda/DnnConv.cpp) names a convolution step's
shapes, its planned workspace, the algorithm chosen by timing among those
that fit it, and cuDNN's fastest algorithm when it may take the workspace it
asks for. Prints, per kernel kind, the chosen algorithms' total time against
the unconstrained fastest, the N convolutions that lose the most to their
planned workspace, and for floors of 16 MiB to 1 GiB what `--conv-workspace`
would buy: a convolution whose fastest algorithm fits the floor is counted
at that algorithm's time, any other at its current choice (an estimate: a
larger workspace may also admit an algorithm between the two).
"""
import argparse
import collections
import re
import sys

LINE = re.compile(
    r"^cudnn: (\S+) x (\S+) w (\S+) y (\S+) (\S+) workspace (\d+) B: "
    r"(?:algo (\d+) math (\d+) ([\d.e+-]+) ms (\d+) B|no timed choice)"
    r"(?:; unlimited: algo (\d+) math (\d+) ([\d.e+-]+) ms (\d+) B)?")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("log")
    p.add_argument("--top", type=int, default=10)
    args = p.parse_args(argv)
    rows = []
    with open(args.log) as f:
        for line in f:
            if m := LINE.match(line):
                rows.append(m.groups())
    if not rows:
        sys.exit(f"{args.log}: no cudnn: lines (was MEMOPT_CUDNN_LOG=1 set?)")
    chosen = collections.Counter()
    best = collections.Counter()
    count = collections.Counter()
    gaps = []
    untimed = collections.Counter()
    for (kind, x, w, y, dtype, limit, algo, math, ms, used, ualgo, umath,
         ums, ubytes) in rows:
        if not ms:
            untimed[kind] += 1
            continue
        c = float(ms)
        u = float(ums) if ums else c
        chosen[kind] += c
        best[kind] += u
        count[kind] += 1
        gaps.append((c - u, kind, x, w, dtype, int(limit), algo, c, ualgo, u,
                     int(ubytes or 0)))
    print(f"{'kernel':<24} {'count':>5} {'chosen ms':>10} {'unlimited ms':>13}")
    for kind in sorted(count):
        print(f"{kind:<24} {count[kind]:>5} {chosen[kind]:>10.2f} {best[kind]:>13.2f}")
    print(f"{'total':<24} {sum(count.values()):>5} {sum(chosen.values()):>10.2f} "
          f"{sum(best.values()):>13.2f}")
    for kind, n in sorted(untimed.items()):
        print(f"{kind}: {n} without a timed choice (no algorithm fits)")
    gaps.sort(key=lambda g: -g[0])
    print("--conv-workspace floor: estimated convolution ms (fastest fits / all)")
    chosen_total = sum(g[7] for g in gaps)
    print(f"  {'planned':>8}: {chosen_total:9.2f}")
    for floor_mib in (16, 64, 128, 256, 512, 1024):
        floor = floor_mib * 2**20
        total, fits = 0.0, 0
        for (_, kind, x, w, dtype, limit, algo, c, ualgo, u, ubytes) in gaps:
            if ubytes <= max(floor, limit):
                total += min(u, c)
                fits += 1
            else:
                total += c
        label = f"{floor_mib} MiB" if floor_mib < 1024 else "1 GiB"
        print(f"  {label:>8}: {total:9.2f}  ({fits} / {len(gaps)})")
    print(f"largest losses to the planned workspace (top {args.top}):")
    for gap, kind, x, w, dtype, limit, algo, c, ualgo, u, ubytes in gaps[:args.top]:
        print(f"  {kind} x {x} w {w} {dtype}: workspace {limit / 2**20:.1f} MiB "
              f"algo {algo} {c:.2f} ms; unlimited algo {ualgo} {u:.2f} ms "
              f"needs {ubytes / 2**20:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
