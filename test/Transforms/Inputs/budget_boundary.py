#!/usr/bin/env python3
"""A budget at the exact boundary: met there, refused one byte under.

First checks that a budget every candidate fits changes nothing: the
output with budget=2^50 is byte for byte the output without a budget (the
passes choose by the same key when everything fits). Then runs `memopt-opt MODEL --memopt-pipeline="OPTIONS budget=B"` with an
impossible budget (1 byte) to learn the smallest step the pipeline can make,
N (the refusal names it), then checks that budget=N is met (the output is
written) and that budget=N-1 is refused naming the same N with nothing
written. Prints one line per model run; exits 1 with a message on the first
violation.
"""

import os
import re
import subprocess
import sys
import tempfile

NEEDS = re.compile(r"needs (\d+) bytes .* for its step")


def run(opt, model, options, budget, out):
    if os.path.exists(out):
        os.remove(out)
    if budget is not None:
        options += " budget=%d" % budget
    proc = subprocess.run(
        [opt, model, "--memopt-pipeline=" + options, "-o", out],
        capture_output=True, text=True)
    return proc, os.path.exists(out)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def main():
    opt, model, options = sys.argv[1:4]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.mlir")
        proc, wrote = run(opt, model, options, None, out)
        if proc.returncode != 0 or not wrote:
            sys.exit("the pipeline failed without a budget: " + proc.stderr)
        unbudgeted = read(out)
        proc, wrote = run(opt, model, options, 2**50, out)
        if proc.returncode != 0 or not wrote:
            sys.exit("budget=2^50 was refused: " + proc.stderr)
        if read(out) != unbudgeted:
            sys.exit("budget=2^50 changed the output")
        print("budget=huge same as none")
        proc, wrote = run(opt, model, options, 1, out)
        m = NEEDS.search(proc.stderr)
        if proc.returncode == 0 or not m or wrote:
            sys.exit("budget=1 was not refused naming the step: " +
                     proc.stderr)
        smallest = int(m.group(1))
        proc, wrote = run(opt, model, options, smallest, out)
        if proc.returncode != 0 or not wrote:
            sys.exit("budget=%d, the smallest named, was refused: %s" %
                     (smallest, proc.stderr))
        print("budget=N met")
        proc, wrote = run(opt, model, options, smallest - 1, out)
        m = NEEDS.search(proc.stderr)
        if proc.returncode == 0 or wrote:
            sys.exit("budget=%d, one byte under the smallest, was met" %
                     (smallest - 1))
        if not m or int(m.group(1)) != smallest:
            sys.exit("budget=%d was refused naming another step: %s" %
                     (smallest - 1, proc.stderr))
        print("budget=N-1 refused naming N")


if __name__ == "__main__":
    main()
