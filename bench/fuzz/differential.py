#!/usr/bin/env python3
"""Differential fuzzer: random valid training graphs, every pass combination,
compared with the unoptimised step.

Usage: bench/fuzz/differential.py [--seed S] [--graphs N] [--time-limit SEC]
                                  [--build build] [--out DIR] [--summary F.json]
                                  [--precisions fp32,fp16,bf16] [--quick]

Each graph is a random DAG over memopt's op set (linear with and without
bias, matmul, relu, leaky_relu, elu, sigmoid, tanh, gelu, add, sub, mul,
layer_norm, softmax, dropout, concat, slice, transpose; fan-out and residual
edges by reusing earlier values) ending in an mse or cross-entropy loss. For
every precision it is trained for two steps by `memopt-run --no-optimize`
(the baseline: autodiff and mixed precision only, no schedule, no arena plan)
and by every combination of --checkpoint (none, sqrt, optimal), --inplace
and --partition. Those only change order, storage or recomputation, so each
must print the same losses and save the same parameter bytes as the
baseline, to the bit, in every precision; a run that fails where the
baseline ran is a finding too (a plan the runtime refuses, an internal
error).

A finding is minimised (ops are removed, their uses rewired to an operand of
the same type, while the finding stays) and written to DIR with the command
that shows it. The run ends with a JSON summary. Exit status: 0 when there
was no finding, 1 otherwise, 2 on a usage or setup error.
"""
import argparse
import hashlib
import itertools
import json
import os
import random
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

UNARY = ["relu", "sigmoid", "tanh", "gelu", "leaky_relu", "elu", "dropout",
         "layer_norm", "softmax", "transpose2"]
BINARY = ["add", "sub", "mul", "concat"]
OTHER = ["linear", "linear_nobias", "matmul", "slice", "attention", "conv"]


class Graph:
    """A training graph as a list of ops over 2-D f32 tensors."""

    def __init__(self, batch, width):
        self.batch = batch
        self.width = width
        self.params = []   # (name, shape)
        self.ops = []      # dicts: result, op, operands, attrs, shape
        self.loss = None   # ("mse" | "ce", value)

    def shape(self, value):
        if value == "%x":
            return (self.batch, self.width)
        for op in self.ops:
            if op["result"] == value:
                return op["shape"]
        raise KeyError(value)

    def text(self):
        def ty(shape):
            return "tensor<" + "x".join(map(str, shape)) + "xf32>"
        args = [f"%{n}: {ty(s)} {{memopt.param}}" for n, s in self.params]
        args.append(f"%x: {ty((self.batch, self.width))}")
        kind, value = self.loss
        out_shape = self.shape(value)
        if kind == "mse":
            args.append(f"%t: {ty(out_shape)}")
        else:
            args.append(f"%labels: tensor<{out_shape[0]}xi64>")
        lines = [f"func.func @fuzz({', '.join(args)}) -> tensor<f32> {{"]
        for op in self.ops:
            operands = ", ".join(op["operands"])
            types = ", ".join(ty(self.param_or_value_shape(v)) for v in op["operands"])
            attrs = op.get("attrs", "")
            attrs = f" <{{{attrs}}}>" if attrs else ""
            lines.append(f"  {op['result']} = \"memopt.{op['op']}\"({operands}){attrs}"
                         f" : ({types}) -> {ty(op['shape'])}")
        if kind == "mse":
            lines.append(f"  %loss = \"memopt.mse_loss\"({value}, %t) : "
                         f"({ty(out_shape)}, {ty(out_shape)}) -> tensor<f32>")
        else:
            lines.append(f"  %loss = \"memopt.cross_entropy\"({value}, %labels) : "
                         f"({ty(out_shape)}, tensor<{out_shape[0]}xi64>) -> tensor<f32>")
        lines.append("  return %loss : tensor<f32>")
        lines.append("}")
        return "\n".join(lines) + "\n"

    def param_or_value_shape(self, v):
        for n, s in self.params:
            if v == f"%{n}":
                return s
        return self.shape(v)


def generate(rng, size):
    g = Graph(batch=rng.choice([2, 4]), width=rng.choice([4, 8]))
    values = ["%x"]
    counter = itertools.count()

    def param(shape):
        name = f"p{len(g.params)}"
        g.params.append((name, shape))
        return f"%{name}"

    def emit(op, operands, shape, attrs=""):
        result = f"%v{next(counter)}"
        g.ops.append({"result": result, "op": op, "operands": operands,
                      "shape": shape, "attrs": attrs})
        if len(shape) == 2:  # ops build on rows of features
            values.append(result)
        return result

    # Start with a linear layer, and build only on what it computes, so a
    # parameter always reaches the loss.
    emit("linear", ["%x", param((g.width, g.width)), param((g.width,))],
         (g.batch, g.width))
    values.remove("%x")
    for _ in range(size):
        # Prefer recent values (chains), sometimes older ones (residuals,
        # fan-out).
        a = values[-1] if rng.random() < 0.6 else rng.choice(values)
        sa = g.shape(a)
        kind = rng.choice(UNARY + BINARY + OTHER)
        if kind in ("relu", "sigmoid", "tanh", "gelu"):
            emit(kind, [a], sa)
        elif kind == "leaky_relu":
            emit(kind, [a], sa, f"alpha = {rng.choice([0.01, 0.2])} : f64")
        elif kind == "elu":
            emit(kind, [a], sa, "alpha = 1.0 : f64")
        elif kind == "dropout":
            emit(kind, [a], sa, f"p = 0.25 : f64, seed = {rng.randrange(100)} : i64")
        elif kind == "layer_norm":
            emit(kind, [a, param((sa[1],)), param((sa[1],))], sa,
                 "epsilon = 1.0e-05 : f64")
        elif kind == "softmax":
            emit(kind, [a], sa, "axis = -1 : i64")
        elif kind == "transpose2":
            t = emit("transpose", [a], (sa[1], sa[0]), "permutation = array<i64: 1, 0>")
            emit("transpose", [t], sa, "permutation = array<i64: 1, 0>")
        elif kind in ("add", "sub", "mul"):
            same = [v for v in values if g.shape(v) == sa]
            emit(kind, [a, rng.choice(same)], sa)
        elif kind == "concat":
            same = [v for v in values if g.shape(v)[0] == sa[0]]
            b = rng.choice(same)
            c = emit("concat", [a, b], (sa[0], sa[1] + g.shape(b)[1]), "axis = 1 : i64")
            # Back to a usual width.
            width = rng.choice([4, 8])
            emit("linear", [c, param((width, sa[1] + g.shape(b)[1]))], (sa[0], width))
        elif kind == "linear":
            width = rng.choice([4, 8])
            emit("linear", [a, param((width, sa[1])), param((width,))], (sa[0], width))
        elif kind == "linear_nobias":
            width = rng.choice([4, 8])
            emit("linear", [a, param((width, sa[1]))], (sa[0], width))
        elif kind == "matmul":
            # (B x D) x (D x W) with a parameter.
            width = rng.choice([4, 8])
            emit("matmul", [a, param((sa[1], width))], (sa[0], width),
                 "transpose_a = false, transpose_b = false")
        elif kind == "attention":
            # softmax(q k^T) v over the batch rows, from one input.
            width = sa[1]
            q = emit("linear", [a, param((width, width))], sa)
            k = emit("linear", [a, param((width, width))], sa)
            v = emit("linear", [a, param((width, width))], sa)
            scores = emit("matmul", [q, k], (sa[0], sa[0]),
                          "transpose_a = false, transpose_b = true")
            probs = emit("softmax", [scores], (sa[0], sa[0]), "axis = -1 : i64")
            emit("matmul", [probs, v], sa, "transpose_a = false, transpose_b = false")
        elif kind == "conv" and sa[1] % 2 == 0:
            # A 3x3 convolution over the row seen as a 1x2x(D/2) image.
            image = (sa[0], 1, 2, sa[1] // 2)
            r = emit("reshape", [a], image)
            c = emit("conv2d", [r, param((1, 1, 3, 3))], image,
                     "strides = array<i64: 1, 1>, padding = array<i64: 1, 1>, "
                     "dilations = array<i64: 1, 1>, groups = 1 : i64")
            emit("reshape", [c], sa)
        elif kind == "slice" and sa[1] > 2:
            half = sa[1] // 2
            emit("slice", [a], (sa[0], half),
                 f"offsets = array<i64: 0, {rng.choice([0, sa[1] - half])}>, "
                 f"sizes = array<i64: {sa[0]}, {half}>, strides = array<i64: 1, 1>")
    g.loss = (rng.choice(["mse", "ce"]), values[-1])
    return g


# --- running -------------------------------------------------------------------

CONFIGS = [(c, i, p) for c in ("none", "sqrt", "optimal") for i in (False, True)
           for p in (True, False)]


def run(tool, path, precision, config, tmp, tag):
    weights = os.path.join(tmp, f"{tag}.safetensors")
    if os.path.exists(weights):
        os.unlink(weights)
    cmd = [tool, path, "--device=cpu", "--steps=2", f"--precision={precision}",
           f"--save-weights={weights}"]
    if config is None:
        cmd.append("--no-optimize")
    else:
        ckpt, inplace, partition = config
        cmd.append(f"--checkpoint={ckpt}")
        if inplace:
            cmd.append("--inplace")
        if not partition:
            cmd.append("--partition=false")
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return {"cmd": cmd, "ok": False, "error": "timed out after 120 s"}
    if proc.returncode != 0:
        return {"cmd": cmd, "ok": False,
                "error": (proc.stderr or proc.stdout)[-1500:]}
    losses = [l for l in proc.stdout.splitlines() if l.startswith("step ")]
    with open(weights, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    return {"cmd": cmd, "ok": True, "losses": losses, "weights": digest}


def compare(base, got):
    """None when `got` matches the baseline, else what differs."""
    if not got["ok"]:
        return "failed: " + got["error"].strip().splitlines()[-1][:300] \
            if got["error"].strip() else "failed"
    if got["losses"] != base["losses"]:
        return f"losses differ: {base['losses']} vs {got['losses']}"
    if got["weights"] != base["weights"]:
        return "parameters after the steps differ"
    return None


def check(tool, graph, precision, config, tmp):
    """The finding for (graph, precision, config), or None."""
    path = os.path.join(tmp, "check.mlir")
    with open(path, "w") as f:
        f.write(graph.text())
    base = run(tool, path, precision, None, tmp, "base")
    if not base["ok"]:
        return None  # not a valid case (the baseline is refused)
    return compare(base, run(tool, path, precision, config, tmp, "variant"))


def minimise(tool, graph, precision, config, tmp, deadline):
    """Removes ops while the same kind of finding remains."""
    finding = check(tool, graph, precision, config, tmp)
    kind = finding.split(":")[0] if finding else None
    progress = True
    while progress and time.time() < deadline:
        progress = False
        for k in reversed(range(len(graph.ops))):
            op = graph.ops[k]
            if graph.loss[1] == op["result"]:
                continue
            same = [v for v in op["operands"]
                    if not v.startswith("%p") and graph.shape(v) == op["shape"]]
            if not same:
                continue
            trial = Graph(graph.batch, graph.width)
            trial.params = list(graph.params)
            trial.loss = graph.loss
            trial.ops = []
            for other in graph.ops:
                if other is op:
                    continue
                other = dict(other)
                other["operands"] = [same[0] if v == op["result"] else v
                                     for v in other["operands"]]
                trial.ops.append(other)
            used = {v for o in trial.ops for v in o["operands"]}
            trial.params = [(n, s) for n, s in trial.params if f"%{n}" in used]
            got = check(tool, trial, precision, config, tmp)
            if got and got.split(":")[0] == kind:
                graph, finding, progress = trial, got, True
                break
    return graph, finding


def describe(config):
    ckpt, inplace, partition = config
    return (f"--checkpoint={ckpt}" + (" --inplace" if inplace else "")
            + ("" if partition else " --partition=false"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--graphs", type=int, default=1000)
    parser.add_argument("--time-limit", type=float, default=0,
                        help="stop starting new graphs after this many seconds")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--out", default=None,
                        help="directory for minimised reproducers")
    parser.add_argument("--summary", default=None, help="write the JSON summary here")
    parser.add_argument("--precisions", default="fp32,fp16,bf16")
    parser.add_argument("--size", type=int, default=8, help="ops per graph, at most")
    parser.add_argument("--configs", type=int, default=len(CONFIGS),
                        help="pass combinations tried per graph and precision "
                             f"(a seeded sample; all {len(CONFIGS)} by default)")
    args = parser.parse_args()
    tool = os.path.join(args.build, "bin", "memopt-run")
    if not os.access(tool, os.X_OK):
        print(f"differential: {tool} not found; build first", file=sys.stderr)
        return 2
    precisions = args.precisions.split(",")
    rng = random.Random(args.seed)
    start = time.time()
    findings, graphs, runs, skipped = [], 0, 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        for index in range(args.graphs):
            if args.time_limit and time.time() - start > args.time_limit:
                break
            graph = generate(rng, rng.randint(2, args.size))
            graphs += 1
            path = os.path.join(tmp, "graph.mlir")
            with open(path, "w") as f:
                f.write(graph.text())
            for precision in precisions:
                base = run(tool, path, precision, None, tmp, "base")
                runs += 1
                if not base["ok"]:
                    skipped += 1
                    findings.append({"graph": index, "precision": precision,
                                     "config": "--no-optimize",
                                     "finding": "baseline failed: "
                                     + base["error"].strip()[-300:],
                                     "mlir": graph.text()})
                    continue
                configs = (CONFIGS if args.configs >= len(CONFIGS)
                           else rng.sample(CONFIGS, args.configs))
                for config in configs:
                    got = run(tool, path, precision, config, tmp, "variant")
                    runs += 1
                    finding = compare(base, got)
                    if not finding:
                        continue
                    small, small_finding = minimise(
                        tool, graph, precision, config, tmp, time.time() + 120)
                    entry = {"graph": index, "precision": precision,
                             "config": describe(config), "finding": finding,
                             "minimised_finding": small_finding,
                             "mlir": small.text()}
                    findings.append(entry)
                    print(f"graph {index} {precision} {describe(config)}: {finding}",
                          file=sys.stderr)
                    if args.out:
                        os.makedirs(args.out, exist_ok=True)
                        name = os.path.join(args.out, f"finding-{index}-{precision}.mlir")
                        with open(name, "w") as f:
                            f.write(f"// memopt-run {os.path.basename(name)} --device=cpu "
                                    f"--steps=2 --precision={precision} "
                                    f"{describe(config)}\n// differs from the same with "
                                    f"--no-optimize: {small_finding}\n" + small.text())
                    break  # one finding per graph and precision
    summary = {"seed": args.seed, "graphs": graphs, "memopt_run_runs": runs,
               "precisions": precisions,
               "configs_per_precision": min(args.configs, len(CONFIGS)),
               "baselines_refused": skipped,
               "findings": len(findings), "elapsed_seconds": round(time.time() - start, 1),
               "details": findings}
    if args.summary:
        with open(args.summary, "w") as f:
            json.dump(summary, f, indent=1)
    print(json.dumps({k: v for k, v in summary.items() if k != "details"}))
    for f in findings:
        print(f"finding: graph {f['graph']} {f['precision']} {f['config']}: "
              f"{f.get('minimised_finding') or f['finding']}\n{f['mlir']}")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
