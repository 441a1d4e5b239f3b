#!/usr/bin/env python3
"""Sweeps --memopt-checkpoint=strategy=budget over falling budgets.

For each budget from the un-checkpointed step's size down to below the
smallest reachable, runs the pipeline (autodiff, checkpoint, schedule, plan,
report) and checks:
  * a budget is met (the planned arena, arguments and constants with their
    alignment padding, as the runtime allocates them, <= budget) or
    refused with an
    error naming the smallest budget that fits, and nothing is written;
  * the named smallest budget is then met;
  * the step's size never rises as the budget falls (PyTorch's
    memory-ratio knob is known to break this);
  * recompute FLOPs never fall as the budget falls;
  * with --floor OPTIONS, the smallest budget named is at most the step of
    that checkpoint configuration (e.g. the binomial schedule with no slots
    but the step's inputs: the least memory of any checkpoint schedule).
Exit 1 with a message on the first violation.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile


def run(opt, model, pipeline, out):
    cmd = [opt, model, "--pass-pipeline=builtin.module(" + pipeline + ")",
           "-o", out]
    return subprocess.run(cmd, capture_output=True, text=True)


ELEMENT_BYTES = {"f64": 8, "i64": 8, "f32": 4, "i32": 4, "f16": 2,
                 "bf16": 2, "i16": 2, "i8": 1, "i1": 1}


def tensor_bytes(dims, elem):
    n = 1
    for d in dims.split("x")[:-1]:
        n *= int(d)
    return n * ELEMENT_BYTES[elem]


def step_bytes(ir, alignment=64):
    """What the runtime allocates for the first function's step: the planned
    arena, then every argument and every constant, each at the next multiple
    of max(64, alignment) (docs/plan-format.md, "Memory layout")."""
    align = max(64, alignment)
    header = ir[ir.index("func.func"):]
    header = header[:header.index(") ->")]
    sizes = [tensor_bytes(d, e)
             for d, e in re.findall(r"tensor<((?:\d+x)*)(\w+)>", header)]
    sizes += [tensor_bytes(d, e) for d, e in re.findall(
        r"arith.constant .*: tensor<((?:\d+x)*)(\w+)>", ir)]
    total = int(re.search(r"memopt.arena_bytes = (\d+)", ir).group(1))
    for size in sizes:
        total = (total + align - 1) // align * align + size
    return total


def measure(opt, model, checkpoint, tmp):
    report = os.path.join(tmp, "report.json")
    out = os.path.join(tmp, "out.mlir")
    if os.path.exists(out):
        os.remove(out)
    pipeline = "memopt-autodiff"
    if checkpoint:
        pipeline += ",memopt-checkpoint{" + checkpoint + "}"
    pipeline += (",memopt-schedule,memopt-plan-memory,memopt-report{file=" +
                 report + "}")
    proc = run(opt, model, pipeline, out)
    if proc.returncode != 0:
        return None, proc.stderr, os.path.exists(out)
    with open(report) as f:
        data = json.load(f)
    with open(out) as f:
        total = step_bytes(f.read())
    return (total, data["recompute_flops"], data["peak_bytes"]), proc.stderr, True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("opt")
    parser.add_argument("model")
    parser.add_argument("--points", type=int, default=10)
    parser.add_argument("--floor", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base, err, _ = measure(args.opt, args.model, "", tmp)
        if base is None:
            sys.exit("baseline failed: " + err)
        # The smallest reachable: ask for an impossible budget.
        _, err, wrote = measure(args.opt, args.model,
                                "strategy=budget budget=1", tmp)
        m = re.search(r"the smallest any checkpoint schedule reaches is "
                      r"(\d+) bytes", err)
        if not m:
            sys.exit("an impossible budget was not refused with the "
                     "smallest budget: " + err)
        if wrote:
            sys.exit("a refused budget still wrote an output file")
        smallest = int(m.group(1))
        if args.floor:
            floor, err, _ = measure(args.opt, args.model, args.floor, tmp)
            if floor is None:
                sys.exit("the floor configuration failed: " + err)
            if smallest > floor[0]:
                sys.exit("the smallest budget named, %d, is above what %s "
                         "reaches, %d" % (smallest, args.floor, floor[0]))
            print("floor: smallest %d <= %d" % (smallest, floor[0]))
        if smallest >= base[0]:
            sys.exit("checkpointing cannot shrink this model (%d >= %d)" %
                     (smallest, base[0]))
        budgets = [base[0] + 4096]
        for i in range(1, args.points):
            budgets.append(base[0] - (base[0] - smallest) * i //
                           (args.points - 1))
        budgets.append(smallest - 1)
        previous = None
        for budget in budgets:
            got, err, wrote = measure(args.opt, args.model,
                                      "strategy=budget budget=%d" % budget,
                                      tmp)
            if got is None:
                if budget >= smallest:
                    sys.exit("budget %d >= smallest %d was refused: %s" %
                             (budget, smallest, err))
                if ("use budget=%d or more" % smallest) not in err:
                    sys.exit("refusal does not name the smallest budget: " +
                             err)
                if wrote:
                    sys.exit("a refused budget still wrote an output file")
                print("budget %12d: refused (smallest %d)" % (budget, smallest))
                continue
            total, recompute, peak = got
            print("budget %12d: step %12d, recompute %d FLOPs" %
                  (budget, total, recompute))
            if total > budget:
                sys.exit("budget %d not met: %d" % (budget, total))
            if previous is not None:
                if total > previous[0]:
                    sys.exit("the step grew from %d to %d as the budget fell"
                             " to %d" % (previous[0], total, budget))
                if recompute < previous[1]:
                    sys.exit("recompute fell from %d to %d as the budget "
                             "fell to %d" % (previous[1], recompute, budget))
            previous = (total, recompute)
        if previous is None or previous[1] == 0:
            sys.exit("the sweep never recomputed anything")


if __name__ == "__main__":
    main()
