"""Checks memopt-run's per-step losses: the last one below a bound.

Usage: check_loss.py OUTPUT (--below X | --below-fraction F)
  --below X           the last loss is below X
  --below-fraction F  the last loss is below F times the first
"""
import argparse
import re
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("output")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--below", type=float)
    group.add_argument("--below-fraction", type=float)
    args = parser.parse_args()
    with open(args.output) as f:
        losses = [float(m.group(1)) for m in
                  re.finditer(r"^(?:step|batch) \d+/\d+ loss (\S+)$", f.read(), re.M)]
    if len(losses) < 2:
        sys.exit(f"check_loss: expected at least two losses in {args.output}")
    first, last = losses[0], losses[-1]
    bound = args.below if args.below is not None else args.below_fraction * first
    if not last < bound:
        sys.exit(f"check_loss: last loss {last} is not below {bound} "
                 f"(first {first}, {len(losses)} steps)")
    print(f"check_loss: {first} -> {last} < {bound}")


if __name__ == "__main__":
    main()
