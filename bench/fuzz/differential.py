#!/usr/bin/env python3
"""Differential fuzzer: random valid training graphs, every pass combination,
compared with the unoptimised step.

Usage: bench/fuzz/differential.py [--seed S] [--graphs N] [--time-limit SEC]
                                  [--build build] [--out DIR] [--summary F.json]
                                  [--precisions fp32,fp16,bf16] [--configs K]
                                  [--budget-checks 0|1]

Each graph is a random DAG over memopt's op set (linear with and without
bias, matmul, relu, leaky_relu, elu, sigmoid, tanh, gelu, add, sub, mul,
layer_norm, softmax, dropout, concat, slice, transpose, attention, conv2d,
conv2d + batch_norm (running statistics as state) + relu or leaky_relu +
max, average or global average pooling, embedding lookups by i64 ids;
fan-out and residual edges by reusing earlier values) ending in an mse or
cross-entropy loss, trained with an optimizer drawn per graph (SGD,
momentum, Adam, AdamW with bf16 state, 8-bit Adam, Adafactor, Adam and
momentum with gradient clipping). For every precision it is trained for two steps by
`memopt-run --no-optimize` (the baseline: autodiff and mixed precision only,
no schedule, no arena plan) and by every combination (or a seeded sample of
K) of --checkpoint (none, sqrt, optimal), in place (none, --inplace, --abn)
and --partition. Those only change order, storage or recomputation, so each
must print the same losses and save the same parameter bytes as the
baseline, to the bit, in every precision (InPlace-ABN, which rebuilds the
normalised input from the output, within ABN_TOLERANCE); a run that fails
where the
baseline ran is a finding too (a plan the runtime refuses, an internal
error). With budget checks on, --budget=1 must be refused naming the
smallest budget that fits, and that budget must run, match the baseline to
the bit and measure a high-water of at most the budget. A graph with a
softmax (the attention kind fuses into memopt.attention, in the baseline
too) also runs with --fuse-attention=false, which must agree with the
baseline within ABN_TOLERANCE: the fused kernels round in another order.

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
import re
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

UNARY = ["relu", "sigmoid", "tanh", "gelu", "leaky_relu", "elu", "dropout",
         "layer_norm", "softmax", "transpose2"]
BINARY = ["add", "sub", "mul", "concat"]
OTHER = ["linear", "linear_nobias", "matmul", "slice", "attention", "conv",
         "conv_bn", "embedding"]


class Graph:
    """A training graph as a list of ops over 2-D f32 tensors (convolution,
    batch norm and pooling work on a row seen as a small image)."""

    def __init__(self, batch, width):
        self.batch = batch
        self.width = width
        self.params = []   # (name, shape): f32 parameters
        self.states = []   # (name, shape): batch-norm running statistics
        self.ids = []      # (name, shape): i64 data (embedding ids)
        self.ops = []      # dicts: result, op, operands, attrs, shape or shapes
        self.returns = []  # extra results: new running statistics
        self.loss = None   # ("mse" | "ce", value)

    def copy(self):
        g = Graph(self.batch, self.width)
        g.params, g.states, g.ids = list(self.params), list(self.states), list(self.ids)
        g.ops, g.returns, g.loss = list(self.ops), list(self.returns), self.loss
        return g

    def shape(self, value):
        if value == "%x":
            return (self.batch, self.width)
        for n, s in self.params + self.states:
            if value == f"%{n}":
                return s
        base, _, index = value.partition("#")
        for op in self.ops:
            if op["result"] == base:
                return op["shapes"][int(index)] if "shapes" in op else op["shape"]
        raise KeyError(value)

    def type_of(self, value):
        for n, s in self.ids:
            if value == f"%{n}":
                return "tensor<" + "x".join(map(str, s)) + "xi64>"
        return ty(self.shape(value))

    def text(self):
        args = [f"%{n}: {ty(s)} {{memopt.param}}" for n, s in self.params]
        args += [f"%{n}: {ty(s)} {{memopt.state}}" for n, s in self.states]
        args.append(f"%x: {ty((self.batch, self.width))}")
        args += [f"%{n}: tensor<{'x'.join(map(str, s))}xi64>" for n, s in self.ids]
        kind, value = self.loss
        out_shape = self.shape(value)
        if kind == "mse":
            args.append(f"%t: {ty(out_shape)}")
        else:
            args.append(f"%labels: tensor<{out_shape[0]}xi64>")
        results = ["tensor<f32>"] + [ty(self.shape(v)) for v in self.returns]
        lines = [f"func.func @fuzz({', '.join(args)}) -> ({', '.join(results)}) {{"]
        for op in self.ops:
            operands = ", ".join(op["operands"])
            types = ", ".join(self.type_of(v) for v in op["operands"])
            attrs = op.get("attrs", "")
            attrs = f" <{{{attrs}}}>" if attrs else ""
            if "shapes" in op:
                result = f"{op['result']}:{len(op['shapes'])}"
                out = "(" + ", ".join(ty(x) for x in op["shapes"]) + ")"
            else:
                result, out = op["result"], ty(op["shape"])
            lines.append(f"  {result} = \"memopt.{op['op']}\"({operands}){attrs}"
                         f" : ({types}) -> {out}")
        if kind == "mse":
            lines.append(f"  %loss = \"memopt.mse_loss\"({value}, %t) : "
                         f"({ty(out_shape)}, {ty(out_shape)}) -> tensor<f32>")
        else:
            lines.append(f"  %loss = \"memopt.cross_entropy\"({value}, %labels) : "
                         f"({ty(out_shape)}, tensor<{out_shape[0]}xi64>) -> tensor<f32>")
        values = ", ".join(["%loss"] + self.returns)
        lines.append(f"  return {values} : {', '.join(results)}")
        lines.append("}")
        return "\n".join(lines) + "\n"


def ty(shape):
    return "tensor<" + "x".join(map(str, shape)) + "xf32>"


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

    def emit_multi(op, operands, shapes, attrs=""):
        result = f"%v{next(counter)}"
        g.ops.append({"result": result, "op": op, "operands": operands,
                      "shapes": shapes, "attrs": attrs})
        return [f"{result}#{k}" for k in range(len(shapes))]

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
        elif kind == "conv_bn" and sa[1] % 4 == 0:
            # Convolution, batch norm (running statistics as state) and a
            # ReLU or leaky ReLU (what --abn fuses), then max, average or
            # global average pooling, back to a row.
            image = (sa[0], 1, 2, sa[1] // 2)
            r = emit("reshape", [a], image)
            conv = (sa[0], 2, 2, sa[1] // 2)
            c = emit("conv2d", [r, param((2, 1, 3, 3))], conv,
                     "strides = array<i64: 1, 1>, padding = array<i64: 1, 1>, "
                     "dilations = array<i64: 1, 1>, groups = 1 : i64")
            mean, var = f"%s{len(g.states)}", f"%s{len(g.states) + 1}"
            g.states += [(mean[1:], (2,)), (var[1:], (2,))]
            y, new_mean, new_var = emit_multi(
                "batch_norm", [c, param((2,)), param((2,)), mean, var],
                [conv, (2,), (2,)], "epsilon = 1.0e-05 : f64, momentum = 0.1 : f64")
            g.returns += [new_mean, new_var]
            if rng.random() < 0.5:
                act = emit("leaky_relu", [y], conv, "alpha = 0.01 : f64")
            else:
                act = emit("relu", [y], conv)
            pool = rng.choice(["max", "avg", "global"])
            if pool == "global":
                p = emit("global_avg_pool2d", [act], (sa[0], 2))
                emit("linear", [p, param((sa[1], 2)), param((sa[1],))], sa)
            else:
                pooled = (sa[0], 2, 1, sa[1] // 4)
                p = emit(f"{pool}_pool2d", [act], pooled,
                         "kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, "
                         "padding = array<i64: 0, 0>")
                flat = emit("reshape", [p], (sa[0], sa[1] // 2))
                emit("linear", [flat, param((sa[1], sa[1] // 2))], sa)
        elif kind == "embedding":
            # Rows looked up by i64 ids, added to the running value.
            ids = f"ids{len(g.ids)}"
            g.ids.append((ids, (sa[0],)))
            e = emit("embedding", [param((5, sa[1])), f"%{ids}"], sa)
            emit("add", [a, e], sa)
        elif kind == "slice" and sa[1] > 2:
            half = sa[1] // 2
            emit("slice", [a], (sa[0], half),
                 f"offsets = array<i64: 0, {rng.choice([0, sa[1] - half])}>, "
                 f"sizes = array<i64: {sa[0]}, {half}>, strides = array<i64: 1, 1>")
    g.loss = (rng.choice(["mse", "ce"]), values[-1])
    return g


# --- running -------------------------------------------------------------------

CONFIGS = [(c, i, p) for c in ("none", "sqrt", "optimal")
           for i in (False, True, "abn") for p in (True, False)]

# The optimizer every run of a graph uses, drawn per graph from a stream of
# its own (so the graphs a seed generates do not depend on it): its update
# ops, state and scratch go through every pass combination too.
OPTIMIZERS = [[], ["--optimizer=momentum"], ["--optimizer=adam"],
              ["--optimizer=adamw", "--state-dtype=bf16"],
              ["--optimizer=adam8bit"], ["--optimizer=adafactor"],
              ["--optimizer=adam", "--clip-norm=0.5"],
              ["--optimizer=momentum", "--clip-norm=1e6"]]
graph_flags = []  # the current graph's optimizer flags, for every run


def run(tool, path, precision, config, tmp, tag, budget=None, extra=()):
    weights = os.path.join(tmp, f"{tag}.safetensors")
    if os.path.exists(weights):
        os.unlink(weights)
    cmd = [tool, path, "--device=cpu", "--steps=2", f"--precision={precision}",
           f"--save-weights={weights}", *graph_flags, *extra]
    if budget is not None:
        cmd.append(f"--budget={budget}")
    elif config is None:
        cmd.append("--no-optimize")
    else:
        ckpt, inplace, partition = config
        cmd.append(f"--checkpoint={ckpt}")
        if inplace == "abn":
            cmd.append("--abn")
        elif inplace:
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
        data = f.read()
    digest = hashlib.sha256(data).hexdigest()
    high = re.search(r"measured high-water (\d+) bytes", proc.stdout)
    return {"cmd": cmd, "ok": True, "losses": losses, "weights": digest,
            "tensors": data, "high_water": int(high.group(1)) if high else None}


def read_safetensors(data):
    """{name: float64 array} of a safetensors file's float tensors."""
    import numpy as np
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    body = data[8 + size:]
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        raw = body[begin:end]
        if entry["dtype"] == "F32":
            values = np.frombuffer(raw, np.float32)
        elif entry["dtype"] == "F16":
            values = np.frombuffer(raw, np.float16)
        elif entry["dtype"] == "BF16":
            bits = np.frombuffer(raw, np.uint16).astype(np.uint32) << 16
            values = bits.view(np.float32)
        else:
            continue
        out[name] = values.astype(np.float64)
    return out


# InPlace-ABN rebuilds the normalised input from the output, which is not
# bit-exact: the parameters agree within atol + rtol*|p| (f32: the bound
# docs/training-step.md states; half precision: its rounding of that rebuild).
ABN_TOLERANCE = {"fp32": (1e-5, 1e-4), "fp16": (1e-3, 1e-2), "bf16": (1e-2, 5e-2)}


def close_enough(base, got, precision):
    """None when `got` matches `base` within ABN_TOLERANCE, else what not."""
    import numpy as np
    atol, rtol = ABN_TOLERANCE[precision]
    value = lambda line: float(line.split()[-1])
    for a, b in zip(base["losses"], got["losses"]):
        if not abs(value(a) - value(b)) <= atol + rtol * abs(value(a)):
            return f"losses differ beyond {atol} + {rtol}*|loss|: {a} vs {b}"
    if len(base["losses"]) != len(got["losses"]):
        return "a different number of steps ran"
    want, have = read_safetensors(base["tensors"]), read_safetensors(got["tensors"])
    if want.keys() != have.keys():
        return "different parameters saved"
    for name in want:
        if not np.all(np.abs(want[name] - have[name]) <= atol + rtol * np.abs(want[name])):
            return f"parameter {name} differs beyond {atol} + {rtol}*|p|"
    return None


def budget_check(tool, path, precision, tmp, base):
    """A budget is met or refused: --budget=1 must be refused naming the
    smallest budget that fits; that budget must run, match the baseline to
    the bit, and measure a high-water of at most the budget. Returns the
    finding, or None, and the runs made."""
    cmd = [tool, path, "--device=cpu", "--steps=2", f"--precision={precision}",
           *graph_flags, "--budget=1"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return "budget=1: timed out after 120 s", 1
    least = (re.search(r"use budget=(\d+) or more", proc.stderr)
             or re.search(r"op needs (\d+) bytes", proc.stderr))
    if proc.returncode != 1 or not least:
        return (f"budget=1 not refused with a minimum (exit {proc.returncode}): "
                + (proc.stderr.strip().splitlines() or [""])[-1][:300]), 1
    least = int(least.group(1))
    got = run(tool, path, precision, None, tmp, "budget", budget=least)
    finding = compare(base, got)
    if finding:
        return f"at the named minimum budget={least}: {finding}", 2
    if got["high_water"] is None or got["high_water"] > least:
        return (f"budget={least}: measured high-water {got['high_water']} "
                f"above the budget"), 2
    return None, 2


def compare(base, got, config=None, precision=None):
    """None when `got` matches the baseline, else what differs: to the bit,
    or within ABN_TOLERANCE for InPlace-ABN."""
    if not got["ok"]:
        return "failed: " + got["error"].strip().splitlines()[-1][:300] \
            if got["error"].strip() else "failed"
    if config is not None and config[1] == "abn":
        return close_enough(base, got, precision)
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
    return compare(base, run(tool, path, precision, config, tmp, "variant"),
                   config, precision)


def minimise(tool, graph, precision, config, tmp, deadline):
    """Removes ops while the same kind of finding remains."""
    finding = check(tool, graph, precision, config, tmp)
    kind = finding.split(":")[0] if finding else None
    progress = True
    while progress and time.time() < deadline:
        progress = False
        for k in reversed(range(len(graph.ops))):
            op = graph.ops[k]
            if graph.loss[1] == op["result"] or "shapes" in op:
                continue  # the loss's operand; batch norm (several results)
            same = [v for v in op["operands"]
                    if v[1] not in "psi" and graph.shape(v) == op["shape"]]
            if not same:
                continue
            trial = graph.copy()
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
            trial.ids = [(n, s) for n, s in trial.ids if f"%{n}" in used]
            got = check(tool, trial, precision, config, tmp)
            if got and got.split(":")[0] == kind:
                graph, finding, progress = trial, got, True
                break
    return graph, finding


def describe(config):
    ckpt, inplace, partition = config
    return (f"--checkpoint={ckpt}"
            + (" --abn" if inplace == "abn" else " --inplace" if inplace else "")
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
    parser.add_argument("--budget-checks", type=int, default=1,
                        help="1: per graph and precision, check that the "
                             "smallest budget --budget=1 names runs within "
                             "it and matches the baseline; 0: skip")
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
    findings, graphs, runs, skipped, budget_checks = [], 0, 0, 0, 0
    fusion_checks = 0
    with tempfile.TemporaryDirectory() as tmp:
        for index in range(args.graphs):
            if args.time_limit and time.time() - start > args.time_limit:
                break
            graph = generate(rng, rng.randint(2, args.size))
            graph_flags[:] = random.Random(args.seed * 7919 + index).choice(
                OPTIMIZERS)
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
                if "memopt.softmax" in graph.text():
                    # The baseline fuses attention (as every run does); the
                    # chain computed unfused must agree to rounding.
                    unfused = run(tool, path, precision, None, tmp, "unfused",
                                  extra=["--fuse-attention=false"])
                    runs += 1
                    fusion_checks += 1
                    finding = (close_enough(base, unfused, precision)
                               if unfused["ok"] else "unfused run failed: "
                               + unfused["error"].strip()[-300:])
                    if finding:
                        findings.append({"graph": index, "precision": precision,
                                         "config": "--fuse-attention=false",
                                         "finding": finding, "mlir": graph.text()})
                        print(f"graph {index} {precision} fused vs unfused "
                              f"attention: {finding}", file=sys.stderr)
                configs = (CONFIGS if args.configs >= len(CONFIGS)
                           else rng.sample(CONFIGS, args.configs))
                for config in configs:
                    got = run(tool, path, precision, config, tmp, "variant")
                    runs += 1
                    finding = compare(base, got, config, precision)
                    if not finding:
                        continue
                    small, small_finding = minimise(
                        tool, graph, precision, config, tmp, time.time() + 120)
                    entry = {"graph": index, "precision": precision,
                             "config": " ".join(graph_flags + [describe(config)]),
                             "finding": finding,
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
                                    f"{' '.join(graph_flags)} "
                                    f"{describe(config)}\n// differs from the same with "
                                    f"--no-optimize: {small_finding}\n" + small.text())
                    break  # one finding per graph and precision
                if args.budget_checks:
                    finding, made = budget_check(tool, path, precision, tmp, base)
                    runs += made
                    budget_checks += 1
                    if finding:
                        findings.append({"graph": index, "precision": precision,
                                         "config": "--budget", "finding": finding,
                                         "mlir": graph.text()})
                        print(f"graph {index} {precision} --budget: {finding}",
                              file=sys.stderr)
    summary = {"seed": args.seed, "graphs": graphs, "memopt_run_runs": runs,
               "precisions": precisions,
               "configs_per_precision": min(args.configs, len(CONFIGS)),
               "baselines_refused": skipped, "budget_checks": budget_checks,
               "attention_fusion_checks": fusion_checks,
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
