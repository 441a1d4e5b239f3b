#!/usr/bin/env python3
"""Rematerialisation on homogeneous chains against the textbook optimum.

Usage: bench/remat_chains.py [--quick] [--build build | --memopt-opt PATH]
                             [--output bench/results/remat_chains.json]

The chains are N x (linear 64->64 + ReLU) and a last linear 64->64 layer
with cross-entropy, batch 256 (examples/generate_models.py mlp --image-size 8
--classes 64 --hidden 64,...,64): N + 1 identical linear layers, every
activation 256 x 64 f32 = 64 KiB. For each N, as a user would:

* the step without checkpointing, and the least any schedule reaches (the
  size strategy=budget names when refusing budget=1); that size is
  accepted and one byte less refused;
* `--memopt-checkpoint=strategy=budget budget=B` at `points` budgets spread
  evenly from that floor to the unoptimised step: the bytes of the step as
  the runtime allocates it (arguments, constants and the planned arena) and
  the recomputed FLOPs, in layers (forward FLOPs / (N + 1)).

The reference is the textbook optimum at the same memory: Griewank and
Walther's binomial recurrence over layers with c held activations besides
the input, the first sweep free and a layer's reversal reading its input and
output (class Optimum, vectorised with numpy), checked here against the
plain recursion on small chains.
The memory of c checkpoints is calibrated on memopt's own step: the step of
the binomial schedule with no slots (measured with strategy=optimal solver=dp
slots=0) plus c activations. So the reference answers "with the slots this
budget allows, how little could a perfect schedule recompute?", independently of
memopt's own dynamic programme (which works on single ops, not layers, and
can beat it: a ReLU is cheaper to recompute than a linear layer).

Writes JSON and prints a Markdown table (docs/benchmarks.md quotes it).
"""
import functools
import math
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True
import checkpoint as ck  # noqa: E402  (measure, bench_parser, bench_setup, ...)

FULL = {"chains": [16, 32, 64, 128, 256, 512], "points": 23, "batch": 256,
        "width": 64, "timeout": 600}
QUICK = {"chains": [8, 16], "points": 5, "batch": 16, "width": 16,
         "timeout": 60}


class Optimum:
    """The least layers recomputed to reverse a chain of l layers holding c
    activations besides the input, at layer granularity, when reversing a
    layer reads its input and its output (a ReLU's backward reads its
    output; the next layer's reversal needs it as its input anyway). The
    binomial recurrence of Griewank and Walther with the first sweep free:

      inner(1, c) = 0;  inner(l, 0) = l (l - 1) / 2
      inner(l, c) = min(inner(l, c - 1),
                        min_j j + inner(l - j, c - 1) + inner(j, c))
      top(1, c) = 0;    top(l, 0) = inner(l, 0)
      top(l, c) = min(top(l, c - 1), min_j top(l - j, c - 1) + inner(j, c))

    (advance j layers from the newest held activation and hold the result;
    in the first sweep the forward pass itself does the advancing).
    Vectorised over j with numpy: O(l^2 c) work, seconds at l = 513."""

    def __init__(self, l):
        import numpy as np
        self.np, self.l = np, l
        ls = np.arange(l + 1, dtype=np.int64)
        self.inner = [ls * (ls - 1) // 2]
        self.inner[0][0] = 0
        self.top = [self.inner[0].copy()]

    def _extend(self):
        np, l = self.np, self.l
        pi, pt = self.inner[-1], self.top[-1]
        inner = np.zeros(l + 1, dtype=np.int64)
        top = np.zeros(l + 1, dtype=np.int64)
        for n in range(2, l + 1):
            j = np.arange(1, n)
            inner[n] = min(pi[n], int((j + pi[n - j] + inner[j]).min()))
            top[n] = min(pt[n], int((pt[n - j] + inner[j]).min()))
        self.inner.append(inner)
        self.top.append(top)

    def __call__(self, c):
        c = min(c, self.l)
        while len(self.top) <= c:
            self._extend()
        return int(self.top[c][self.l])


@functools.lru_cache(maxsize=None)
def _inner(l, c):
    if l <= 1:
        return 0
    if c == 0:
        return l * (l - 1) // 2
    return min([_inner(l, c - 1)] + [j + _inner(l - j, c - 1) + _inner(j, c)
                                     for j in range(1, l)])


@functools.lru_cache(maxsize=None)
def _top(l, c):
    if l <= 1:
        return 0
    if c == 0:
        return _inner(l, 0)
    return min([_top(l, c - 1)] + [_top(l - j, c - 1) + _inner(j, c)
                                   for j in range(1, l)])


def check_reference():
    """The vectorised optimum against the plain recursion, and known values:
    no slots recomputes l (l - 1) / 2 layers, l - 1 slots none."""
    for l in range(1, 30):
        opt = Optimum(l)
        for c in range(0, 10):
            if opt(c) != _top(l, c):
                sys.exit(f"remat_chains: optimum {opt(c)} != recursion "
                         f"{_top(l, c)} at l={l} c={c}")
        if opt(0) != l * (l - 1) // 2 or opt(max(l - 1, 0)) != 0:
            sys.exit(f"remat_chains: wrong known values at l={l}")


def generate(n, cfg, tmp):
    path = os.path.join(tmp, f"chain{n}.mlir")
    hidden = ",".join([str(cfg["width"])] * n)
    subprocess.run([sys.executable, ck.GEN, "mlp", "--image-size",
                    str(int(math.isqrt(cfg["width"]))), "--classes",
                    str(cfg["width"]), "--batch", str(cfg["batch"]), "--hidden",
                    hidden, "-o", path], check=True)
    return path


def chain(opt, n, cfg, tmp):
    path = generate(n, cfg, tmp)
    fwd = ck.forward_flops(opt, path, tmp)
    layer = fwd / (n + 1)
    act = cfg["batch"] * cfg["width"] * 4
    none = ck.measure(opt, path, None, tmp, cfg["timeout"], fwd, False)
    refused = ck.measure(opt, path, "strategy=budget budget=1", tmp,
                         cfg["timeout"], fwd, False)
    floor = refused.get("minimum_budget_bytes")
    if not none.get("ok") or floor is None:
        sys.exit(f"remat_chains: N={n}: no baseline or no floor: {refused}")
    at_floor = ck.measure(opt, path, f"strategy=budget budget={floor}", tmp,
                          cfg["timeout"], fwd, False)
    below = ck.measure(opt, path, f"strategy=budget budget={floor - 1}", tmp,
                       cfg["timeout"], fwd, False)
    exact = bool(at_floor.get("ok")) and not below.get("ok") and \
        below.get("minimum_budget_bytes") == floor
    zero_slots = ck.measure(opt, path, "strategy=optimal solver=dp slots=0",
                            tmp, cfg["timeout"], fwd, False)
    row = {
        "layers": n + 1, "activation_bytes": act, "layer_flops": layer,
        "forward_flops": fwd, "none_bytes": none["whole_step_bytes"],
        "arguments_bytes": none["arguments_bytes"],
        "floor_bytes": floor, "floor_accepted_and_floor_minus_1_refused": exact,
        "floor_arena_activations": round(at_floor["arena_bytes"] / act, 2),
        "floor_recompute_layers": round(at_floor["recompute_flops"] / layer, 1),
        "zero_slot_binomial_bytes": zero_slots.get("whole_step_bytes"),
        "budgets": [],
    }
    ck.log(f"N={n}: none {none['whole_step_bytes']}, floor {floor} "
           f"({row['floor_arena_activations']} activations of arena), exact={exact}")
    # The memory of c slots: the 0-slot binomial schedule's step plus c
    # activations (where budget mode's floor is above it, because the
    # 0-slot schedule recomputes too much to be a candidate, the floor).
    base = min(floor, zero_slots.get("whole_step_bytes") or floor)
    row["calibration_bytes"] = base
    optimum = Optimum(n + 1)
    points = cfg["points"]
    for i in range(points):
        budget = floor + (none["whole_step_bytes"] - floor) * i // (points - 1)
        r = ck.measure(opt, path, f"strategy=budget budget={budget}", tmp,
                       cfg["timeout"], fwd, False)
        if not r.get("ok"):
            sys.exit(f"remat_chains: N={n} budget {budget} failed: {r.get('error')}")
        slots = max(0, (budget - base) // act)
        reference = optimum(slots)
        got = r["recompute_flops"] / layer
        entry = {
            "budget_bytes": budget, "step_bytes": r["whole_step_bytes"],
            "slots_allowed": slots,
            "slots_used": round((r["whole_step_bytes"] - base) / act, 2),
            "recompute_layers": round(got, 2),
            "optimum_recompute_layers": reference,
            "excess_over_optimum_forward_passes": round((got - reference) / (n + 1), 4),
            "compile_seconds": r["compile_seconds"],
        }
        row["budgets"].append(entry)
        ck.log(f"  budget {budget}: step {r['whole_step_bytes']}, recompute "
               f"{got:.1f} layers, optimum {reference} ({slots} slots), "
               f"{r['compile_seconds']} s")
    excess = [b["excess_over_optimum_forward_passes"] for b in row["budgets"]]
    row["worst_excess_forward_passes"] = max(excess)
    row["slowest_compile_seconds"] = max(b["compile_seconds"] for b in row["budgets"])
    return row


def print_table(data):
    print("| chain (layers) | floor: arena in activations, recompute (layers) | "
          "floor exact | budgets | worst excess over the optimum (forward passes) | "
          "best (forward passes) | slowest compile (s) |")
    print("|---|---|---|---|---|---|---|")
    for r in data["chains"]:
        best = min(b["excess_over_optimum_forward_passes"] for b in r["budgets"])
        print(f"| {r['layers']} | {r['floor_arena_activations']:.2f}, "
              f"{r['floor_recompute_layers']:.0f} | "
              f"{'yes' if r['floor_accepted_and_floor_minus_1_refused'] else 'NO'} | "
              f"{len(r['budgets'])} | {r['worst_excess_forward_passes']:+.3f} | "
              f"{best:+.3f} | {r['slowest_compile_seconds']:.1f} |")


def main():
    parser = ck.bench_parser("remat_chains", __doc__)
    args = parser.parse_args()
    opt, output = ck.bench_setup("remat_chains", args)
    cfg = QUICK if args.quick else FULL
    check_reference()
    data = {**ck.bench_header("remat_chains", args, opt), "config": cfg,
            "reference": "Griewank-Walther binomial optimum over layers, with "
                         "(budget - floor) // activation_bytes checkpoints",
            "chains": []}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for n in cfg["chains"]:
            data["chains"].append(chain(opt, n, cfg, tmp))
            data["elapsed_seconds"] = round(time.perf_counter() - started, 1)
            ck.write_json(output, data)
    ck.log(f"wrote {output} in {data['elapsed_seconds']} s")
    print_table(data)


if __name__ == "__main__":
    main()
