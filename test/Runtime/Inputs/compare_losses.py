"""Compares the per-step losses memopt-run printed in several runs.

Usage: compare_losses.py --tolerance T REFERENCE OTHER...

Every step's loss in each OTHER run must be within T (relative) of the
REFERENCE run's loss at that step, and every run's last loss must be below
its first (the model learned).
"""
import argparse
import re
import sys


def losses(path):
    values = [float(m.group(1)) for m in
              re.finditer(r"^step \d+/\d+ loss (\S+)$", open(path).read(), re.M)]
    if not values:
        sys.exit(f"{path}: no step losses found")
    return values


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tolerance", type=float, required=True)
    parser.add_argument("reference")
    parser.add_argument("others", nargs="+")
    args = parser.parse_args()
    ref = losses(args.reference)
    failures = []
    for path in [args.reference] + args.others:
        run = losses(path)
        if len(run) != len(ref):
            failures.append(f"{path}: {len(run)} steps, reference has {len(ref)}")
            continue
        if not run[-1] < run[0]:
            failures.append(f"{path}: loss did not fall ({run[0]} -> {run[-1]})")
        worst = max(abs(a - b) / abs(b) for a, b in zip(run, ref))
        print(f"{path}: worst relative loss difference {worst:.2e}")
        if worst > args.tolerance:
            failures.append(f"{path}: loss differs by {worst:.2e} relative, "
                            f"over {args.tolerance}")
    if failures:
        sys.exit("\n".join(failures))


if __name__ == "__main__":
    main()
