"""Checks memopt-run's per-step losses: the last one below a bound.

Usage: check_loss.py OUTPUT (--below X | --below-fraction F |
                             --within REF [--tolerance T])
  --below X           the last loss is below X
  --below-fraction F  the last loss is below F times the first
  --within REF        the last loss is at most (1 + T) times the last loss
                      of the memopt-run output REF (T = 0.02 by default):
                      an optimizer that converges as well as another
"""
import argparse
import re
import sys


def read_losses(path):
    with open(path) as f:
        losses = [float(m.group(1)) for m in
                  re.finditer(r"^(?:step|batch) \d+/\d+ loss (\S+)$", f.read(), re.M)]
    if len(losses) < 2:
        sys.exit(f"check_loss: expected at least two losses in {path}")
    return losses


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("output")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--below", type=float)
    group.add_argument("--below-fraction", type=float)
    group.add_argument("--within")
    parser.add_argument("--tolerance", type=float, default=0.02)
    args = parser.parse_args()
    losses = read_losses(args.output)
    first, last = losses[0], losses[-1]
    if args.within is not None:
        reference = read_losses(args.within)
        if len(reference) != len(losses):
            sys.exit(f"check_loss: {len(losses)} steps in {args.output}, "
                     f"{len(reference)} in {args.within}")
        bound = (1 + args.tolerance) * reference[-1]
        if not last <= bound:
            sys.exit(f"check_loss: last loss {last} is above {bound} "
                     f"({1 + args.tolerance} x {reference[-1]}, the last "
                     f"loss of {args.within})")
        print(f"check_loss: {last} <= {bound}")
        return
    bound = args.below if args.below is not None else args.below_fraction * first
    if not last < bound:
        sys.exit(f"check_loss: last loss {last} is not below {bound} "
                 f"(first {first}, {len(losses)} steps)")
    print(f"check_loss: {first} -> {last} < {bound}")


if __name__ == "__main__":
    main()
