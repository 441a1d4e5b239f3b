#!/usr/bin/env python3
"""In-place ops (--memopt-inplace) and InPlace-ABN (abn=true) on the model
suite: forward allocations, bytes saved for the backward pass, peak and
arena, with and without them, in training steps and inference graphs.

Usage: bench/inplace.py [--quick] [--build build | --memopt-opt PATH]
                        [--output bench/results/inplace.json]

Every measurement is one memopt-opt run of

    builtin.module(STEP, [memopt-inplace | memopt-inplace{abn=true}],
                   memopt-report{file=A}, memopt-schedule, memopt-plan-memory,
                   memopt-report{file=B})

where STEP is memopt-autodiff (the SGD training step) or memopt-eval-mode
(the inference graph). Report B is the step as it runs: forward_allocated_bytes,
peak_bytes, arena_bytes and the op list. saved_for_backward_bytes comes from
report A, before the schedule, as in bench/checkpoint.py: after the schedule
the report agrees on every model but GPT-2, whose backward-only reshapes the
schedule hoists into the forward pass (report B's value is kept as
saved_for_backward_bytes_report_after_schedule).

Variants: every model's training step and inference graph without and with
--memopt-inplace; the conv nets again generated with --activation leaky_relu
(batch norm + leaky ReLU, which InPlace-ABN can fuse; vgg16 has no batch norm)
without in-place, with --memopt-inplace and with --memopt-inplace=abn=true.
inplace_ops counts the ops of report B with inplace_operand, optimizer updates
excluded (they always write over their parameter). For every memopt.relu the
JSON records whether it is in place and whether the plan gave it no buffer of
its own (memopt.offsets = -1); the VGG-16 check asks both of every ReLU, in
training and inference.

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

# The conv nets: generated again with --activation leaky_relu for ABN.
CONV_NETS = {"resnet18", "resnet50", "resnet", "cifar-resnet", "vgg16", "densenet121",
             "unet"}

FULL = {"suite": memory_plan.SUITE, "timeout": 300}

QUICK = {
    "suite": [
        ("mlp", ["--batch", "8"]),
        ("cifar-resnet", ["--depth", "8", "--batch", "2"]),
        ("vgg16", ["--batch", "1", "--image-size", "32"]),
        ("gpt2", ["--batch", "1", "--seq", "16", "--layers", "2", "--dim", "64",
                  "--heads", "4", "--vocab", "100"]),
        ("lstm", ["--batch", "2", "--seq", "4"]),
    ],
    "timeout": 60,
}

# (label, step pass, in-place pass or None)
RELU_VARIANTS = [
    ("train", "memopt-autodiff", None),
    ("train-inplace", "memopt-autodiff", "memopt-inplace"),
    ("eval", "memopt-eval-mode", None),
    ("eval-inplace", "memopt-eval-mode", "memopt-inplace"),
]
LEAKY_VARIANTS = [
    ("train", "memopt-autodiff", None),
    ("train-inplace", "memopt-autodiff", "memopt-inplace"),
    ("train-abn", "memopt-autodiff", "memopt-inplace{abn=true}"),
    ("eval", "memopt-eval-mode", None),
    ("eval-inplace", "memopt-eval-mode", "memopt-inplace"),
]

DEFINITIONS = {
    "forward_allocated_bytes": "report after the plan: forward op results that own a "
                               "buffer (views and in-place results do not)",
    "saved_for_backward_bytes": "report before --memopt-schedule: forward buffers live "
                                "when the first backward op runs (0 in inference graphs)",
    "peak_bytes": "report after the plan: the most bytes live at any op, arguments "
                  "included",
    "arena_bytes": "the planned arena (intermediate buffers; arguments live outside it)",
    "inplace_ops": "ops of the final report with inplace_operand, optimizer updates "
                   "excluded",
    "fused_abn": "memopt.batch_norm_act ops (InPlace-ABN) in the final report",
    "relu_ops / relu_inplace / relu_no_buffer": "memopt.relu ops; those with "
                                               "inplace_operand; those whose planned "
                                               "offset is -1 (no buffer of their own)",
    "relu_output_bytes": "the memopt.relu results' bytes",
}

_ELEM_BYTES = checkpoint._ELEM_BYTES
_RELU_RE = re.compile(r"= memopt\.relu %\S+(?: \{([^}]*)\})? : (tensor<[^>]*>)")


def pipeline(step, inplace, before, after):
    passes = [step] + ([inplace] if inplace else [])
    if before:
        passes.append(f"memopt-report{{file={before}}}")
    passes += ["memopt-schedule", "memopt-plan-memory", f"memopt-report{{file={after}}}"]
    return "builtin.module(" + ",".join(passes) + ")"


def relu_facts(ir):
    """memopt.relu ops of the planned IR: count, in place, without a buffer,
    and their results' bytes."""
    ops = inplace = no_buffer = out_bytes = 0
    for attrs, ty in _RELU_RE.findall(ir):
        ops += 1
        attrs = attrs or ""
        inplace += "memopt.inplace" in attrs
        no_buffer += "memopt.offsets = array<i64: -1>" in attrs
        m = checkpoint._TENSOR_RE.fullmatch(ty)
        out_bytes += checkpoint.tensor_bytes(m.group(1), m.group(2))
    return {"relu_ops": ops, "relu_inplace": inplace, "relu_no_buffer": no_buffer,
            "relu_output_bytes": out_bytes}


def measure(opt, path, step, inplace, tmp, timeout):
    before = os.path.join(tmp, "before.json")
    after = os.path.join(tmp, "after.json")
    out = os.path.join(tmp, "out.mlir")
    for f in (before, after, out):
        if os.path.exists(f):
            os.unlink(f)
    cmd = [opt, path, "--pass-pipeline=" + pipeline(step, inplace, before, after),
           "-o", out, "-mlir-print-op-on-diagnostic=false"]
    row = {"step": step, "inplace": inplace}
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        row.update(ok=False, skipped=f"took more than {timeout} s")
        return row
    row["compile_seconds"] = round(time.perf_counter() - start, 3)
    if proc.returncode != 0:
        row.update(ok=False, error=proc.stderr[-2000:])
        return row
    with open(out) as f:
        ir = f.read()
    with open(after) as f:
        rep = json.load(f)
    with open(before) as f:
        early = json.load(f)
    if rep["arena_bytes"] != memory_plan.attr(ir, "memopt.arena_bytes"):
        sys.exit("inplace: the report's arena_bytes differs from the IR's")
    ops = rep["ops"]
    row.update({
        "ok": True,
        "ops": sum(o["op"] != "memopt.free" for o in ops),
        "forward_allocated_bytes": rep["forward_allocated_bytes"],
        "saved_for_backward_bytes": early["saved_for_backward_bytes"],
        "saved_for_backward_bytes_report_after_schedule": rep["saved_for_backward_bytes"],
        "peak_bytes": rep["peak_bytes"],
        "arena_bytes": rep["arena_bytes"],
        "arena_lower_bound_bytes": memory_plan.attr(ir, "memopt.arena_lower_bound"),
        "parameter_bytes": rep["parameters"]["bytes"],
        "inplace_ops": sum("inplace_operand" in o and not o["op"].endswith("_update")
                           for o in ops),
        "inplace_by_op": {},
        "fused_abn": sum(o["op"] == "memopt.batch_norm_act" for o in ops),
        "remarks": [l for l in proc.stderr.splitlines() if ": remark: " in l][:20],
    })
    for o in ops:
        if "inplace_operand" in o and not o["op"].endswith("_update"):
            name = o["op"].removeprefix("memopt.")
            row["inplace_by_op"][name] = row["inplace_by_op"].get(name, 0) + 1
    row.update(relu_facts(ir))
    return row


def ratios(rows):
    """Each row's numbers over the variant without in-place of its step."""
    for label, row in rows.items():
        base = rows.get(label.split("-")[0])
        if not (row.get("ok") and base and base.get("ok")) or base is row:
            continue
        row["vs_no_inplace"] = {
            key: round(row[key] / base[key], 4) if base[key] else None
            for key in ("forward_allocated_bytes", "saved_for_backward_bytes",
                        "peak_bytes", "arena_bytes")}


def run_variants(opt, path, variants, tmp, timeout):
    rows = {}
    for label, step, inplace in variants:
        row = measure(opt, path, step, inplace, tmp, timeout)
        rows[label] = row
        log(f"  {label}: " + (
            f"fwd {row['forward_allocated_bytes'] / MIB:.1f} MiB, saved "
            f"{row['saved_for_backward_bytes'] / MIB:.1f} MiB, peak "
            f"{row['peak_bytes'] / MIB:.1f} MiB, arena {row['arena_bytes'] / MIB:.1f} "
            f"MiB, {row['inplace_ops']} in place, {row['fused_abn']} fused"
            if row["ok"] else (row.get("skipped") or row["error"][-300:])))
    ratios(rows)
    return rows


def suite(opt, cfg, tmp):
    results = []
    for model, options in cfg["suite"]:
        log(f"{model} {' '.join(options)}")
        path = checkpoint.generate(model, options, tmp)
        entry = {"model": model, "options": " ".join(options),
                 "relu": run_variants(opt, path, RELU_VARIANTS, tmp, cfg["timeout"])}
        if model in CONV_NETS:
            leaky = options + ["--activation", "leaky_relu"]
            log(f"{model} {' '.join(leaky)}")
            path = checkpoint.generate(model, leaky, tmp)
            entry["leaky_relu"] = run_variants(opt, path, LEAKY_VARIANTS, tmp,
                                               cfg["timeout"])
        results.append(entry)
    return results


def vgg16_check(results):
    """Every memopt.relu of VGG-16 is in place and owns no buffer, in the
    training step and the inference graph."""
    for entry in results:
        if entry["model"] != "vgg16":
            continue
        out = {}
        for label in ("train-inplace", "eval-inplace"):
            r = entry["relu"][label]
            base = entry["relu"][label.split("-")[0]]
            out[label] = {
                "relu_ops": r["relu_ops"], "relu_inplace": r["relu_inplace"],
                "relu_no_buffer": r["relu_no_buffer"],
                "relu_output_bytes": r["relu_output_bytes"],
                "forward_allocated_saved_bytes": base["forward_allocated_bytes"]
                - r["forward_allocated_bytes"],
                "every_relu_inplace": r["relu_ops"] > 0
                and r["relu_inplace"] == r["relu_ops"] == r["relu_no_buffer"],
            }
        out["holds"] = all(v["every_relu_inplace"] for v in out.values())
        return out
    return None


def print_tables(data):
    print("Training step (SGD), ReLU nets: no in-place -> --memopt-inplace "
          "(ratio); MiB")
    print()
    print("| model | options | forward allocated | saved for backward | peak | arena "
          "| ops in place |")
    print("|---|---|---|---|---|---|---|")
    for e in data["suite"]:
        a, b = e["relu"]["train"], e["relu"]["train-inplace"]
        if not (a["ok"] and b["ok"]):
            print(f"| {e['model']} | `{e['options']}` | failed | | | | |")
            continue
        cells = [f"{fmt(a[k])} → {fmt(b[k])} ({b['vs_no_inplace'][k]:.2f})"
                 if b["vs_no_inplace"][k] is not None else f"{fmt(a[k])} → {fmt(b[k])}"
                 for k in ("forward_allocated_bytes", "saved_for_backward_bytes",
                           "peak_bytes", "arena_bytes")]
        print(f"| {e['model']} | `{e['options']}` | " + " | ".join(cells)
              + f" | {b['inplace_ops']} |")
    print()
    print("Inference graph (--memopt-eval-mode): no in-place -> --memopt-inplace; MiB")
    print()
    print("| model | forward allocated | peak | arena | ops in place |")
    print("|---|---|---|---|---|")
    for e in data["suite"]:
        a, b = e["relu"]["eval"], e["relu"]["eval-inplace"]
        if not (a["ok"] and b["ok"]):
            print(f"| {e['model']} | failed | | | |")
            continue
        cells = [f"{fmt(a[k])} → {fmt(b[k])} ({b['vs_no_inplace'][k]:.2f})"
                 for k in ("forward_allocated_bytes", "peak_bytes", "arena_bytes")]
        print(f"| {e['model']} | " + " | ".join(cells) + f" | {b['inplace_ops']} |")
    print()
    print("Training step, conv nets with --activation leaky_relu: none / inplace / "
          "abn; MiB")
    print()
    print("| model | saved for backward | peak | arena | forward allocated | "
          "fused BN+act |")
    print("|---|---|---|---|---|---|")
    for e in data["suite"]:
        if "leaky_relu" not in e:
            continue
        r = [e["leaky_relu"][k] for k in ("train", "train-inplace", "train-abn")]
        if not all(x["ok"] for x in r):
            print(f"| {e['model']} | failed | | | | |")
            continue
        cells = [" / ".join(fmt(x[k]) for x in r) + f" ({r[2]['vs_no_inplace'][k]:.2f})"
                 for k in ("saved_for_backward_bytes", "peak_bytes", "arena_bytes",
                           "forward_allocated_bytes")]
        print(f"| {e['model']} | " + " | ".join(cells) + f" | {r[2]['fused_abn']} |")
    v = data.get("vgg16_relu_check")
    if v:
        print()
        for label in ("train-inplace", "eval-inplace"):
            x = v[label]
            print(f"VGG-16 {label}: {x['relu_inplace']}/{x['relu_ops']} ReLUs in place, "
                  f"{x['relu_no_buffer']} without a buffer; ReLU outputs "
                  f"{fmt(x['relu_output_bytes'])} MiB, forward allocations fall by "
                  f"{fmt(x['forward_allocated_saved_bytes'])} MiB")
        print(f"holds: {v['holds']}")


def main():
    args = checkpoint.bench_parser("inplace", __doc__).parse_args()
    opt, output = checkpoint.bench_setup("inplace", args)
    cfg = QUICK if args.quick else FULL
    data = {
        **checkpoint.bench_header("inplace", args, opt),
        "pipeline": pipeline("<memopt-autodiff | memopt-eval-mode>",
                             "<none | memopt-inplace | memopt-inplace{abn=true}>",
                             "<saved-for-backward report>", "<report>"),
        "definitions": DEFINITIONS,
    }
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        data["suite"] = suite(opt, cfg, tmp)
    data["vgg16_relu_check"] = vgg16_check(data["suite"])
    data["elapsed_seconds"] = round(time.perf_counter() - started, 1)
    checkpoint.write_json(output, data)
    log(f"wrote {output} in {data['elapsed_seconds']} s")
    print_tables(data)
    failed = [f"{e['model']} {k}" for e in data["suite"]
              for group in ("relu", "leaky_relu") for k, r in e.get(group, {}).items()
              if not r.get("ok")]
    if failed:
        log("inplace: failed runs: " + ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
