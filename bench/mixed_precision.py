#!/usr/bin/env python3
"""Mixed precision (--memopt-mixed-precision) on the model suite: what FP16
and BF16 compute save in the SGD training step, alone and combined with
checkpointing and in-place ops, against the plain FP32 step.

Usage: bench/mixed_precision.py [--quick] [--build build | --memopt-opt PATH]
                                [--output bench/results/mixed_precision.json]

Every measurement is one memopt-opt run of

    builtin.module([memopt-mixed-precision{precision=P}], memopt-report{file=F},
                   memopt-autodiff, [memopt-checkpoint{strategy=S}],
                   [memopt-inplace], memopt-report{file=A}, memopt-schedule,
                   memopt-plan-memory, memopt-report{file=B})

in the order of --memopt-pipeline (mixed precision before autodiff,
checkpointing and in-place after it). Report B is the step as it runs:
parameters, gradient_bytes, optimizer_state_bytes, forward_allocated_bytes,
peak_bytes, arena_bytes. saved_for_backward_bytes comes from report A,
before the schedule, as in bench/checkpoint.py and bench/inplace.py (report
B's value is kept as saved_for_backward_bytes_report_after_schedule).
Report F, on the forward graph, gives forward_flops (for recompute_fraction)
and forward_cast_ops. cast_ops counts the memopt.cast ops of the final IR
(forward, backward and recomputed).

Variants: f32 (plain autodiff), fp16 (loss-scale=dynamic, the default),
bf16 (no loss scaling), each again with --memopt-partition after autodiff
(f32-partition, fp16-partition, bf16-partition), fp16 + inplace with and
without the partition (measure-inplace=true), f32 + checkpoint sqrt + inplace, fp16 + checkpoint
sqrt + inplace, and, in full runs only, fp16 and f32 + checkpoint optimal +
inplace (a run longer than optimal_timeout seconds is recorded as skipped).
Ratios are over the f32 row; the combined fp16 rows also over the f32 row
with the same checkpointing and in-place.

For f32, fp16 and bf16 the script also rebuilds saved_for_backward_bytes
from the generic IR after autodiff (forward buffers live when the first
backward op runs, as the report defines it) and splits it by producer and
element type: f16 copies of parameters, copies of the input data, and
activations by op and dtype. The split must add up to the report's number.

Writes JSON and prints Markdown tables (docs/benchmarks.md quotes them).
--quick runs tiny sizes in seconds, for smoke tests, and writes to a
temporary file unless --output is given.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no bench/__pycache__
import checkpoint  # noqa: E402  (machine, git and binary info, JSON writing)
import memory_plan  # noqa: E402  (the suite: models and sizes)

ROOT, GEN = memory_plan.ROOT, memory_plan.GEN
log, fmt = checkpoint.log, checkpoint.fmt_mib
MIB = 1024 ** 2

# The suite, and a deep stack of linear layers at a small batch (16 x
# Linear(512, 512) + ReLU, batch 64), where every weight gradient is much
# larger than the activations it is computed from.
LINEAR_STACK = ("mlp", ["--batch", "64", "--image-size", "16", "--hidden",
                        ",".join(["512"] * 16)], "linear-stack-16x512")
FULL = {"suite": memory_plan.SUITE + [LINEAR_STACK], "timeout": 300,
        "optimal_timeout": 120, "optimal": True}

QUICK = {
    "suite": [
        ("mlp", ["--batch", "8"]),
        ("cifar-resnet", ["--depth", "8", "--batch", "2"]),
        ("vgg16", ["--batch", "1", "--image-size", "32"]),
        ("gpt2", ["--batch", "1", "--seq", "16", "--layers", "2", "--dim", "64",
                  "--heads", "4", "--vocab", "100"]),
        ("lstm", ["--batch", "2", "--seq", "4"]),
        ("mlp", ["--batch", "8", "--image-size", "8", "--hidden",
                 "64,64,64,64"], "linear-stack-4x64"),
    ],
    "timeout": 60, "optimal_timeout": 60, "optimal": False,
}

# (label, precision or None, checkpoint options or None, in place
#  [, --memopt-partition])
VARIANTS = [
    ("f32", None, None, False),
    ("fp16", "fp16", None, False),
    ("bf16", "bf16", None, False),
    ("f32-partition", None, None, False, True),
    ("fp16-partition", "fp16", None, False, True),
    ("bf16-partition", "bf16", None, False, True),
    ("fp16-inplace", "fp16", None, True),
    ("fp16-partition-inplace", "fp16", None, True, True),
    ("f32-sqrt-inplace", None, "strategy=sqrt", True),
    ("fp16-sqrt-inplace", "fp16", "strategy=sqrt", True),
    ("fp16-optimal-inplace", "fp16", "strategy=optimal", True),
    ("f32-optimal-inplace", None, "strategy=optimal", True),
    # --memopt-pipeline's order: checkpoint, then partition, then in place.
    ("fp16-optimal-partition-inplace", "fp16", "strategy=optimal", True, True),
    ("f32-optimal-partition-inplace", None, "strategy=optimal", True, True),
]
OPTIMAL = ("fp16-optimal-inplace", "f32-optimal-inplace",
           "fp16-optimal-partition-inplace", "f32-optimal-partition-inplace")
# Ratios: variant -> the rows it is divided by.
RATIO_BASES = {
    "fp16": ["f32"], "bf16": ["f32"], "f32-sqrt-inplace": ["f32"],
    "fp16-sqrt-inplace": ["f32", "f32-sqrt-inplace"],
    "fp16-optimal-inplace": ["f32", "f32-optimal-inplace"],
    "f32-optimal-inplace": ["f32"],
    "f32-partition": ["f32"], "fp16-partition": ["f32", "fp16"],
    "bf16-partition": ["f32", "bf16"], "fp16-inplace": ["f32"],
    "fp16-partition-inplace": ["f32", "fp16-inplace"],
    "fp16-optimal-partition-inplace": ["f32", "f32-optimal-partition-inplace"],
    "f32-optimal-partition-inplace": ["f32"],
}
RATIO_KEYS = ("saved_for_backward_bytes", "forward_allocated_bytes", "peak_bytes",
              "arena_bytes")
BREAKDOWN_VARIANTS = ("f32", "fp16", "bf16")

DEFINITIONS = {
    "parameter_bytes": "report parameters.bytes: the f32 master weights",
    "gradient_bytes": "report gradient_bytes: the gradients the optimizer updates "
                      "consume (f32, unscaled, with mixed precision too)",
    "optimizer_state_bytes": "report optimizer_state_bytes (SGD has none; fp16 adds "
                             "the loss scale and its growth counter)",
    "forward_allocated_bytes": "report after the plan: forward op results that own "
                               "a buffer (views and in-place results do not), the "
                               "casts included",
    "saved_for_backward_bytes": "report before --memopt-schedule: forward buffers "
                                "live when the first backward op runs",
    "peak_bytes": "report after the plan: the most bytes live at any op, arguments "
                  "(f32 parameters, data, state) included",
    "arena_bytes": "the planned arena (intermediate buffers; arguments live outside "
                   "it)",
    "arguments_bytes": "the step's arguments after autodiff (parameters, state, data, "
                       "loss-scale state): live outside the arena, part of peak_bytes",
    "forward_flops": "total_flops of report F, the forward graph (after "
                     "--memopt-mixed-precision, before autodiff)",
    "recompute_fraction": "recompute_flops / forward_flops (1.0 = the whole forward "
                          "pass again)",
    "cast_ops": "memopt.cast ops in the final IR (forward, backward, recomputed)",
    "forward_cast_ops": "memopt.cast ops of the forward graph after "
                        "--memopt-mixed-precision",
    "saved_breakdown": "saved_for_backward_bytes rebuilt from the IR after autodiff, "
                       "by producer: param_copies (casts of memopt.param arguments), "
                       "data_copies (casts of data arguments), and by_op "
                       "'op:dtype' for everything else; by_dtype over all of them",
    "vs_<row>": "this row's value / the same value of row <row>",
}

_CAST_RE = re.compile(r"(?:\"memopt\.cast\"|\bmemopt\.cast\b)")


def pipeline(precision, ckpt, inplace, before, after, fwd=None, partition=False):
    passes = []
    if precision:
        passes.append(f"memopt-mixed-precision{{precision={precision}}}")
    if fwd:
        passes.append(f"memopt-report{{file={fwd}}}")
    passes.append("memopt-autodiff")
    # With the partition, as --memopt-pipeline runs them: checkpointing
    # measures its candidates as the partition and in place will leave them,
    # and strategy=optimal's one forward pass of recomputation is shared
    # with the partition's gradient rechecks (step-recompute=1).
    step = "step-recompute=1" if ckpt and "strategy=optimal" in ckpt else ""
    if ckpt:
        opts = [ckpt]
        if partition:
            opts += ["measure-partition=true", step]
            if inplace:
                opts.append("measure-inplace=true")
        passes.append("memopt-checkpoint{" + " ".join(o for o in opts if o) + "}")
    if partition:
        opts = (["measure-inplace=true"] if inplace else []) + ([step] if step else [])
        passes.append("memopt-partition" + ("{" + " ".join(opts) + "}" if opts else ""))
    if inplace:
        passes.append("memopt-inplace")
    if before:
        passes.append(f"memopt-report{{file={before}}}")
    passes += ["memopt-schedule", "memopt-plan-memory", f"memopt-report{{file={after}}}"]
    return "builtin.module(" + ",".join(passes) + ")"


def run_opt(cmd, timeout):
    """memopt-opt, retried a few times while the binary is being relinked."""
    for attempt in range(5):
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except OSError as e:  # ETXTBSY or a missing binary during a relink
            if attempt == 4:
                raise
            log(f"  ({e}; retrying)")
            time.sleep(3)
            continue
        if proc.returncode in (126, 127) or "Text file busy" in proc.stderr:
            time.sleep(3)
            continue
        return proc
    return proc


def measure(opt, path, precision, ckpt, inplace, tmp, timeout, partition=False):
    before = os.path.join(tmp, "before.json")
    after = os.path.join(tmp, "after.json")
    fwd = os.path.join(tmp, "forward.json")
    out = os.path.join(tmp, "out.mlir")
    for f in (before, after, fwd, out):
        if os.path.exists(f):
            os.unlink(f)
    passes = pipeline(precision, ckpt, inplace, before, after, fwd, partition)
    cmd = [opt, path, "--pass-pipeline=" + passes, "-o", out,
           "-mlir-print-op-on-diagnostic=false"]
    row = {"precision": precision or "f32", "checkpoint": ckpt, "inplace": inplace,
           "partition": partition,
           "command": "memopt-opt MODEL '--pass-pipeline="
           + pipeline(precision, ckpt, inplace, "A", "B", None, partition) + "'"}
    start = time.perf_counter()
    try:
        proc = run_opt(cmd, timeout)
    except subprocess.TimeoutExpired:
        row.update(ok=False, skipped=f"took more than {timeout} s")
        return row
    row["compile_seconds"] = round(time.perf_counter() - start, 3)
    if proc.returncode != 0:
        # The head holds the diagnostic or, for a crash, the stack dump's
        # innermost frames.
        row.update(ok=False, returncode=proc.returncode, error=proc.stderr[:4000])
        return row
    with open(out) as f:
        ir = f.read()
    with open(fwd) as f:
        forward = json.load(f)
    with open(after) as f:
        rep = json.load(f)
    with open(before) as f:
        early = json.load(f)
    if rep["arena_bytes"] != memory_plan.attr(ir, "memopt.arena_bytes"):
        sys.exit("mixed_precision: the report's arena_bytes differs from the IR's")
    args, _ = checkpoint.outside_arena_bytes(ir)
    row.update({
        "ok": True,
        "ops": sum(o["op"] != "memopt.free" for o in rep["ops"]),
        "parameter_count": rep["parameters"]["count"],
        "parameter_bytes": rep["parameters"]["bytes"],
        "gradient_bytes": rep["gradient_bytes"],
        "optimizer_state_bytes": rep["optimizer_state_bytes"],
        "forward_allocated_bytes": rep["forward_allocated_bytes"],
        "saved_for_backward_bytes": early["saved_for_backward_bytes"],
        "saved_for_backward_bytes_report_after_schedule": rep["saved_for_backward_bytes"],
        "peak_bytes": rep["peak_bytes"],
        "arena_bytes": rep["arena_bytes"],
        "arguments_bytes": args,
        "recompute_flops": rep["recompute_flops"],
        "total_flops": rep["total_flops"],
        "forward_flops": forward["total_flops"],
        "recompute_fraction": round(rep["recompute_flops"] / forward["total_flops"], 4)
        if forward["total_flops"] else None,
        "cast_ops": len(_CAST_RE.findall(ir)),
        "forward_cast_ops": sum(o["op"] == "memopt.cast" for o in forward["ops"]),
        "recomputed_ops": ir.count("memopt.recompute"),
        "inplace_ops": sum("inplace_operand" in o and not o["op"].endswith("_update")
                           for o in rep["ops"]),
        "remarks": [l for l in proc.stderr.splitlines() if ": remark: " in l][:20],
    })
    return row


# --- saved_for_backward, rebuilt from the generic IR -------------------------

_OP_RE = re.compile(r"^\s*(?:(%[\w.$-]+)(?::(\d+))? = )?\"([\w.]+)\"\(([^)]*)\)")
_ARG_RE = re.compile(r"(%arg\d+): (tensor<[^>]*>)")


def _types(text):
    return [(checkpoint.tensor_bytes(d, e), e) for d, e in
            checkpoint._TENSOR_RE.findall(text)]


def saved_breakdown(opt, path, precision, tmp, timeout):
    """The report's saved_for_backward_bytes, rebuilt from the IR after
    autodiff and split by producer. None if the IR has a form this parser
    does not follow (ops with regions)."""
    out = os.path.join(tmp, "generic.mlir")
    passes = (["memopt-mixed-precision{precision=" + precision + "}"] if precision
              else []) + ["memopt-autodiff"]
    proc = run_opt([opt, path, "--pass-pipeline=builtin.module(" + ",".join(passes)
                    + ")", "-mlir-print-op-generic", "-o", out], timeout)
    if proc.returncode != 0:
        return {"error": proc.stderr[-2000:]}
    with open(out) as f:
        lines = f.read().splitlines()
    body = next(i for i, l in enumerate(lines) if l.lstrip().startswith("^bb0("))
    arg_attrs = re.search(r"arg_attrs = \[(.*?)\]", lines[body - 1])
    attrs = re.findall(r"\{[^}]*\}", arg_attrs.group(1)) if arg_attrs else []
    args = _ARG_RE.findall(lines[body])
    arg_kind = {}
    for i, (name, _) in enumerate(args):
        a = attrs[i] if i < len(attrs) else "{}"
        arg_kind[name] = ("param" if "memopt.param" in a else
                          "state" if "memopt.state" in a else
                          "optimizer_state" if "memopt.optimizer_state" in a else "data")
    ops = []      # (name, operands, [result values])
    values = {}   # value -> dict(def, bytes, dtype, op, alias_of, cast_of)
    ret = None
    for line in lines[body + 1:]:
        if line.strip() == "}) : () -> ()":  # the end of the function
            break
        m = _OP_RE.match(line)
        if not m:
            return None  # a region or an unexpected form
        res, count, name, operands = m.groups()
        operands = [o.strip() for o in operands.split(",") if o.strip()]
        if name == "func.return":
            ret = operands
            break
        if line.rstrip().endswith("({") or line.rstrip().endswith("{"):
            return None
        index = len(ops)
        types = _types(line[line.rindex("->"):]) if res else []
        names = ([f"{res}#{k}" for k in range(int(count))] if count else
                 [res] if res else [])
        if len(names) != len(types):
            return None
        for v, (b, e) in zip(names, types):
            values[v] = {"def": index, "bytes": b, "dtype": e, "op": name,
                         "alias_of": operands[0] if name == "memopt.reshape" else None,
                         "cast_of": operands[0] if name == "memopt.cast" else None,
                         "last": index}
        ops.append((name, operands, names))
    if ret is None:
        return None
    n = len(ops)
    # Forward: the loss's transitive producers.
    forward = [False] * n
    work = [ret[0]]
    while work:
        v = work.pop()
        info = values.get(v)
        if not info or forward[info["def"]]:
            continue
        forward[info["def"]] = True
        work.extend(ops[info["def"]][1])
    first_backward = next((i for i, (name, _, _) in enumerate(ops)
                           if not forward[i] and name not in
                           ("arith.constant", "memopt.free", "memopt.reshape")), n)
    for i, (_, operands, _) in enumerate(ops):
        for v in operands:
            if v in values:
                values[v]["last"] = max(values[v]["last"], i)
    for v in ret:
        if v in values:
            values[v]["last"] = n

    def root(v):
        while values.get(v, {}).get("alias_of") in values:
            v = values[v]["alias_of"]
        return v

    end = {}
    for v, info in values.items():
        r = root(v)
        end[r] = max(end.get(r, -1), info["last"])
    by_op, by_dtype = {}, {}
    param_copies = data_copies = total = 0
    for v, info in values.items():
        if info["alias_of"] in values or not forward[info["def"]]:
            continue
        if not (info["def"] < first_backward <= end[v]):
            continue
        b = info["bytes"]
        total += b
        by_dtype[info["dtype"]] = by_dtype.get(info["dtype"], 0) + b
        src = info["cast_of"]
        if src and arg_kind.get(src) == "param":
            param_copies += b
        elif src and arg_kind.get(src) == "data":
            data_copies += b
        else:
            key = f"{info['op'].removeprefix('memopt.')}:{info['dtype']}"
            by_op[key] = by_op.get(key, 0) + b
    return {
        "saved_for_backward_bytes": total,
        "param_copies_bytes": param_copies,
        "data_copies_bytes": data_copies,
        "by_dtype": dict(sorted(by_dtype.items(), key=lambda kv: -kv[1])),
        "by_op": dict(sorted(by_op.items(), key=lambda kv: -kv[1])),
        "forward_cast_ops": sum(name == "memopt.cast" and forward[i]
                                for i, (name, _, _) in enumerate(ops)),
    }


# --- the suite ---------------------------------------------------------------

def ratios(rows):
    for label, bases in RATIO_BASES.items():
        row = rows.get(label)
        if not (row and row.get("ok")):
            continue
        for base_label in bases:
            base = rows.get(base_label)
            if not (base and base.get("ok")):
                continue
            row[f"vs_{base_label}"] = {
                key: round(row[key] / base[key], 4) if base[key] else None
                for key in RATIO_KEYS}


def model_rows(opt, path, cfg, tmp):
    rows = {}
    for label, precision, ckpt, inplace, *partition in VARIANTS:
        if label in OPTIMAL and not cfg["optimal"]:
            continue
        timeout = cfg["optimal_timeout"] if label in OPTIMAL else cfg["timeout"]
        row = measure(opt, path, precision, ckpt, inplace, tmp, timeout,
                      bool(partition and partition[0]))
        if row.get("ok") and label in BREAKDOWN_VARIANTS:
            split = saved_breakdown(opt, path, precision, tmp, cfg["timeout"])
            if split and "error" not in split:
                split.pop("forward_cast_ops")
                split["matches_report"] = (split["saved_for_backward_bytes"]
                                           == row["saved_for_backward_bytes"])
                if not split["matches_report"]:
                    log(f"  {label}: the saved split adds up to "
                        f"{split['saved_for_backward_bytes']}, the report says "
                        f"{row['saved_for_backward_bytes']}")
            row["saved_breakdown"] = split
        rows[label] = row
        log(f"  {label}: " + (
            f"saved {row['saved_for_backward_bytes'] / MIB:.1f} MiB, fwd "
            f"{row['forward_allocated_bytes'] / MIB:.1f} MiB, peak "
            f"{row['peak_bytes'] / MIB:.1f} MiB, arena {row['arena_bytes'] / MIB:.1f} "
            f"MiB, recompute {row['recompute_fraction']}, {row['cast_ops']} casts, "
            f"{row['compile_seconds']} s"
            if row["ok"] else (row.get("skipped") or
                               f"exit {row['returncode']}: {row['error'][:800]}")))
    ratios(rows)
    return rows


def suite(opt, cfg, tmp):
    results = []
    for model, options, *label in cfg["suite"]:
        log(f"{model} {' '.join(options)}")
        path = checkpoint.generate(model, options, tmp)
        results.append({"model": label[0] if label else model,
                        "generator": model, "options": " ".join(options),
                        "variants": model_rows(opt, path, cfg, tmp)})
    return results


def print_tables(data):
    print("Training step (SGD): f32 -> fp16 (ratio) and bf16 ratio; MiB")
    print()
    print("| model | options | saved for backward | forward allocated | peak | arena "
          "| bf16 saved / peak / arena | casts (fwd / all) |")
    print("|---|---|---|---|---|---|---|---|")
    for e in data["suite"]:
        v = e["variants"]
        a, b, c = v.get("f32", {}), v.get("fp16", {}), v.get("bf16", {})
        if not (a.get("ok") and b.get("ok")):
            print(f"| {e['model']} | `{e['options']}` | failed | | | | | |")
            continue
        cells = [f"{fmt(a[k])} → {fmt(b[k])} ({b['vs_f32'][k]:.2f})" for k in RATIO_KEYS]
        bf = (" / ".join(f"{c['vs_f32'][k]:.2f}" for k in
                         ("saved_for_backward_bytes", "peak_bytes", "arena_bytes"))
              if c.get("ok") else "failed")
        print(f"| {e['model']} | `{e['options']}` | " + " | ".join(cells)
              + f" | {bf} | {b['forward_cast_ops']} / {b['cast_ops']} |")
    print()
    print("Combined with checkpoint + in-place: peak / arena, MiB (ratios to f32); "
          "recompute / forward")
    print()
    labels = ["f32", "f32-sqrt-inplace", "fp16-sqrt-inplace", "f32-optimal-inplace",
              "fp16-optimal-inplace", "f32-optimal-partition-inplace",
              "fp16-optimal-partition-inplace"]
    print("| model | " + " | ".join(f"{l} peak / arena" for l in labels) + " |")
    print("|---|" + "---|" * len(labels))
    for e in data["suite"]:
        v = e["variants"]
        cells = []
        for l in labels:
            r = v.get(l)
            if r is None:
                cells.append("—")
            elif not r.get("ok"):
                cells.append(r.get("skipped") or f"failed (exit {r['returncode']})")
            elif l == "f32":
                cells.append(f"{fmt(r['peak_bytes'])} / {fmt(r['arena_bytes'])}")
            else:
                cells.append(f"{fmt(r['peak_bytes'])} / {fmt(r['arena_bytes'])} "
                             f"({r['vs_f32']['peak_bytes']:.2f} / "
                             f"{r['vs_f32']['arena_bytes']:.2f}); "
                             f"{r['recompute_fraction']:.2f}")
        print(f"| {e['model']} | " + " | ".join(cells) + " |")
    print()
    print("fp16 saved for backward, split (MiB): weight copies, data copies, "
          "largest activations by op:dtype")
    print()
    print("| model | saved | f16 | f32 | weight copies | data copies | largest |")
    print("|---|---|---|---|---|---|---|")
    for e in data["suite"]:
        r = e["variants"].get("fp16", {})
        s = r.get("saved_breakdown")
        if not (r.get("ok") and s and "by_op" in s):
            print(f"| {e['model']} | n/a | | | | | |")
            continue
        top = ", ".join(f"{k} {fmt(b)}" for k, b in list(s["by_op"].items())[:4])
        print(f"| {e['model']} | {fmt(s['saved_for_backward_bytes'])} | "
              f"{fmt(s['by_dtype'].get('f16', 0))} | {fmt(s['by_dtype'].get('f32', 0))} | "
              f"{fmt(s['param_copies_bytes'])} | {fmt(s['data_copies_bytes'])} | {top} |")


def print_partition_table(data):
    print()
    print("--memopt-partition: saved for backward / peak, MiB (ratio to the same "
          "precision without it); recompute / forward")
    print()
    pairs = [("f32", "f32-partition"), ("fp16", "fp16-partition"),
             ("bf16", "bf16-partition"), ("fp16-inplace", "fp16-partition-inplace")]
    print("| model | " + " | ".join(f"{b}: saved, peak" for _, b in pairs)
          + " | fp16 saved / f32 saved (partition, inplace) |")
    print("|---|" + "---|" * (len(pairs) + 1))
    for e in data["suite"]:
        v = e["variants"]
        cells = []
        for a, b in pairs:
            ra, rb = v.get(a, {}), v.get(b, {})
            if not (ra.get("ok") and rb.get("ok")):
                cells.append("failed")
                continue
            cells.append(
                f"{fmt(ra['saved_for_backward_bytes'])} → "
                f"{fmt(rb['saved_for_backward_bytes'])}, "
                f"{fmt(ra['peak_bytes'])} → {fmt(rb['peak_bytes'])} "
                f"({rb['peak_bytes'] / ra['peak_bytes']:.2f}); "
                f"{rb['recompute_fraction']:.3f}")
        f32, fp16 = v.get("f32", {}), v.get("fp16-partition-inplace", {})
        ratio = (f"{fp16['saved_for_backward_bytes'] / f32['saved_for_backward_bytes']:.2f}"
                 if f32.get("ok") and fp16.get("ok") and f32["saved_for_backward_bytes"]
                 else "n/a")
        print(f"| {e['model']} | " + " | ".join(cells) + f" | {ratio} |")


def main():
    args = checkpoint.bench_parser("mixed_precision", __doc__).parse_args()
    opt, output = checkpoint.bench_setup("mixed_precision", args)
    cfg = QUICK if args.quick else FULL
    data = {
        **checkpoint.bench_header("mixed_precision", args, opt),
        "pipeline": pipeline("<fp16 | bf16>", "<strategy=sqrt | strategy=optimal>",
                             True, "<saved-for-backward report>", "<report>",
                             "<forward report>"),
        "variants": {label: {"precision": p or "f32", "checkpoint": c, "inplace": i,
                             "partition": bool(rest and rest[0])}
                     for label, p, c, i, *rest in VARIANTS
                     if cfg["optimal"] or label not in OPTIMAL},
        "optimal_timeout_seconds": cfg["optimal_timeout"] if cfg["optimal"] else None,
        "definitions": DEFINITIONS,
    }
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        data["suite"] = suite(opt, cfg, tmp)
    data["elapsed_seconds"] = round(time.perf_counter() - started, 1)
    checkpoint.write_json(output, data)
    log(f"wrote {output} in {data['elapsed_seconds']} s")
    print_tables(data)
    print_partition_table(data)
    failed = [f"{e['model']} {k}" for e in data["suite"]
              for k, r in e["variants"].items()
              if not r.get("ok") and not r.get("skipped")]
    mismatched = [f"{e['model']} {k}" for e in data["suite"]
                  for k, r in e["variants"].items()
                  if (r.get("saved_breakdown") or {}).get("matches_report") is False]
    if mismatched:
        log("mixed_precision: saved split differs from the report: "
            + ", ".join(mismatched))
    if failed:
        log("mixed_precision: failed runs: " + ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
