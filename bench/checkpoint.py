#!/usr/bin/env python3
"""Checkpointing (--memopt-checkpoint) on the model suite: memory saved,
recomputation paid and compile time, per strategy.

Usage: bench/checkpoint.py [--quick] [--build build | --memopt-opt PATH]
                           [--output bench/results/checkpoint.json]

Every measurement is one memopt-opt run of

    builtin.module(memopt-autodiff, memopt-checkpoint{...},
                   memopt-report{file=A}, memopt-schedule, memopt-plan-memory,
                   memopt-report{file=B})

(no memopt-checkpoint for the "none" rows). Report B is the step as it runs:
peak_bytes, arena_bytes, recompute_flops. Report A, before the schedule,
gives saved_for_backward_bytes. The report takes neither the schedule's
memopt.free ops nor the views it hoists into the forward pass (reshapes that
only the backward pass reads, as on GPT-2) for backward ops, so report B
agrees with report A on every model. Report B's value is kept in the JSON as
saved_for_backward_bytes_report_after_schedule.

Sections: (a) the suite under none, sqrt, optimal (auto), optimal solver=dp
and budget = 50% of the none step; (b) CIFAR ResNets of growing depth, none
vs sqrt; (c) the 1,000-layer ImageNet ResNet of Chen et al. 2016; (d)
optimal with solver=dp, ilp and auto on small graphs; (e) compile time of
each strategy on a ~10,000-op step. Definitions are written into the JSON.
Writes JSON (after every section, so a partial run keeps what it measured)
and prints Markdown tables (docs/benchmarks.md quotes them). --quick runs
tiny sizes in seconds, for smoke tests, and writes to a temporary file
unless --output is given.
"""
import argparse
import datetime
import hashlib
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no bench/__pycache__
import memory_plan  # noqa: E402  (the suite's conventions: ROOT, GEN, attr)

ROOT, GEN = memory_plan.ROOT, memory_plan.GEN
MIB, GIB = 1024 ** 2, 1024 ** 3

# Strategies of the suite; "budget" is filled in from the none row.
STRATEGIES = [
    ("none", None),
    ("sqrt", "strategy=sqrt"),
    ("optimal", "strategy=optimal"),
    ("optimal-dp", "strategy=optimal solver=dp"),
    ("budget-50%", "budget"),
]

# Sizes. Full: each memopt-opt run takes seconds on 2 cores.
FULL = {
    "suite": [
        ("mlp", ["--batch", "64"]),
        ("resnet18", ["--batch", "8"]),
        ("resnet50", ["--batch", "8"]),
        ("cifar-resnet", ["--depth", "110", "--batch", "32"]),
        ("vgg16", ["--batch", "8"]),
        ("densenet121", ["--batch", "8"]),
        ("unet", ["--batch", "2", "--image-size", "128"]),
        ("gpt2", ["--batch", "4", "--seq", "512", "--layers", "12"]),
        ("lstm", ["--batch", "32", "--seq", "32"]),
    ],
    "sweep_depths": [20, 56, 110, 218, 434, 866, 1202],
    "sweep_batch": 128,
    "deep": ("resnet", ["--depth", "1001", "--batch", "32", "--image-size", "224"]),
    "deep_timeout": 180,
    "ilp": [
        ("mlp", ["--batch", "64"]),
        ("examples/cnn.mlir", None),
        ("cifar-resnet", ["--depth", "8", "--batch", "8"]),
        ("cifar-resnet", ["--depth", "14", "--batch", "8"]),
        ("gpt2", ["--layers", "2", "--dim", "256", "--heads", "4", "--seq", "128",
                  "--batch", "4"]),
        ("lstm", ["--seq", "8", "--batch", "32"]),
    ],
    # 11 * depth + 14 ops after autodiff: depth 908 gives 10,002.
    "compile": ("cifar-resnet", ["--depth", "908", "--batch", "32"]),
    "compile_repeats": 3,
    "timeout": 300,
}

QUICK = {
    "suite": [
        ("mlp", ["--batch", "8"]),
        ("cifar-resnet", ["--depth", "8", "--batch", "2"]),
        ("gpt2", ["--batch", "1", "--seq", "16", "--layers", "2", "--dim", "64",
                  "--heads", "4", "--vocab", "100"]),
        ("lstm", ["--batch", "2", "--seq", "4"]),
    ],
    "sweep_depths": [8, 14, 20],
    "sweep_batch": 2,
    "deep": ("resnet", ["--depth", "14", "--batch", "1", "--image-size", "64"]),
    "deep_timeout": 60,
    "ilp": [
        ("mlp", ["--batch", "8"]),
        ("cifar-resnet", ["--depth", "8", "--batch", "2"]),
    ],
    "compile": ("cifar-resnet", ["--depth", "20", "--batch", "2"]),
    "compile_repeats": 1,
    "timeout": 60,
}

CHEN_2016 = {
    "source": "Chen, Xu, Zhang, Guestrin 2016, Training Deep Nets with Sublinear "
              "Memory Cost, 1,000-layer ImageNet ResNet, batch 32",
    "baseline_gb": 48, "sqrt_gb": 7, "ratio": round(48 / 7, 2),
    "extra_time": "about 30% (one extra forward pass at most)",
}

DEFINITIONS = {
    "arguments_bytes": "the training step's arguments after autodiff: parameters, "
                       "batch-norm state, data, optimizer state",
    "constants_bytes": "arith.constant results (materialised once by the runtime)",
    "whole_step_bytes": "arguments + constants + planned arena (memopt.arena_bytes): "
                        "what strategy=budget measures",
    "activation_peak_bytes": "report peak_bytes (after schedule) minus arguments_bytes: "
                             "activations, gradients and temporaries at the peak",
    "saved_for_backward_bytes": "report before --memopt-schedule: forward buffers live "
                                "when the first backward op runs (checkpoints plus "
                                "what the un-recomputed tail keeps); the report after "
                                "the schedule gives the same value",
    "forward_flops": "total_flops of --memopt-report on the forward graph (no autodiff)",
    "recompute_fraction": "recompute_flops / forward_flops (1.0 = one extra forward pass)",
    "compile_seconds": "wall time of the whole memopt-opt run (parse, autodiff, "
                       "checkpoint, reports, schedule, plan, print)",
    "checkpoint_seconds": "MemOptCheckpoint's wall time from -mlir-timing",
}

_ELEM_BYTES = {"f64": 8, "f32": 4, "f16": 2, "bf16": 2, "i64": 8, "i32": 4,
               "i16": 2, "i8": 1, "i1": 1}
_TENSOR_RE = re.compile(r"tensor<((?:\d+x)*)([a-z]+\d*)>")
_TIMING_RE = re.compile(r"^\s+([\d.]+) \(\s*[\d.]+%\)\s+(\S+)\s*$", re.M)


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def tensor_bytes(dims: str, elem: str) -> int:
    return math.prod(int(d) for d in dims.split("x") if d) * _ELEM_BYTES[elem]


def outside_arena_bytes(ir: str):
    """(arguments, constants) bytes of the one function in ``ir``."""
    start = ir.index("func.func @")
    signature = ir[ir.index("(", start):ir.index(")", start)]
    args = sum(tensor_bytes(d, e) for d, e in _TENSOR_RE.findall(signature))
    consts = 0
    for line in ir.splitlines():
        if " = arith.constant " in line:
            m = _TENSOR_RE.findall(line.rsplit(":", 1)[-1])
            consts += sum(tensor_bytes(d, e) for d, e in m)
    return args, consts


def generate(model, options, tmp):
    """Path of the model file: an .mlir under examples/ or a generated one."""
    if options is None:
        return os.path.join(ROOT, model)
    name = model + "".join(o.strip("-") for o in options) + ".mlir"
    path = os.path.join(tmp, name.replace("/", "_"))
    if not os.path.exists(path):
        subprocess.run([sys.executable, GEN, model, *options, "-o", path], check=True)
    return path


_FORWARD_FLOPS = {}


def forward_flops(opt, path, tmp):
    """total_flops of the report on the forward graph (no autodiff)."""
    if path not in _FORWARD_FLOPS:
        report = os.path.join(tmp, "forward.json")
        subprocess.run([opt, path, "--pass-pipeline=builtin.module("
                        f"memopt-report{{file={report}}})", "-o", os.devnull],
                       check=True, capture_output=True)
        with open(report) as f:
            _FORWARD_FLOPS[path] = json.load(f)["total_flops"]
    return _FORWARD_FLOPS[path]


def pipeline(checkpoint, before, after):
    passes = ["memopt-autodiff"]
    if checkpoint:
        passes.append(f"memopt-checkpoint{{{checkpoint}}}")
    if before:
        passes.append(f"memopt-report{{file={before}}}")
    passes += ["memopt-schedule", "memopt-plan-memory", f"memopt-report{{file={after}}}"]
    return "builtin.module(" + ",".join(passes) + ")"


def measure(opt, path, checkpoint, tmp, timeout, fwd_flops, saved_report=True):
    """One memopt-opt run of the pipeline; returns a row of measurements."""
    before = os.path.join(tmp, "before.json") if saved_report else None
    after = os.path.join(tmp, "after.json")
    out = os.path.join(tmp, "out.mlir")
    for f in (before, after, out):
        if f and os.path.exists(f):
            os.unlink(f)
    cmd = [opt, path, "--pass-pipeline=" + pipeline(checkpoint, before, after),
           "-o", out, "-mlir-timing", "-mlir-print-op-on-diagnostic=false"]
    row = {"checkpoint": checkpoint}
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        row.update(ok=False, skipped=f"took more than {timeout} s",
                   compile_seconds=None)
        return row
    seconds = time.perf_counter() - start
    diagnostics = [l for l in proc.stderr.splitlines()
                   if re.search(r": (error|warning|remark): ", l)]
    row["compile_seconds"] = round(seconds, 3)
    timing = {name: float(t) for t, name in _TIMING_RE.findall(proc.stderr)}
    if "MemOptCheckpoint" in timing:
        row["checkpoint_seconds"] = timing["MemOptCheckpoint"]
    row["remarks"] = [re.sub(r"^.*?: remark: ", "", l) for l in diagnostics
                      if ": remark: " in l]
    if proc.returncode != 0:
        errors = [re.sub(r"^.*?: error: ", "", l) for l in diagnostics if ": error: " in l]
        row.update(ok=False, error=errors[0] if errors else proc.stderr[-2000:])
        m = re.search(r"use budget=(\d+) or more", row["error"])
        if m:
            row["minimum_budget_bytes"] = int(m.group(1))
        return row
    with open(out) as f:
        ir = f.read()
    with open(after) as f:
        rep = json.load(f)
    args, consts = outside_arena_bytes(ir)
    arena = rep["arena_bytes"]
    if arena != memory_plan.attr(ir, "memopt.arena_bytes"):
        sys.exit("checkpoint: the report's arena_bytes differs from the IR's")
    row.update({
        "ok": True,
        "ops": len(rep["ops"]),
        "recomputed_ops": ir.count("memopt.recompute"),
        "peak_bytes": rep["peak_bytes"],
        "arena_bytes": arena,
        "arguments_bytes": args,
        "constants_bytes": consts,
        "whole_step_bytes": args + consts + arena,
        "activation_peak_bytes": rep["peak_bytes"] - args,
        "parameter_bytes": rep["parameters"]["bytes"],
        "gradient_bytes": rep["gradient_bytes"],
        "forward_allocated_bytes": rep["forward_allocated_bytes"],
        "saved_for_backward_bytes_report_after_schedule": rep["saved_for_backward_bytes"],
        "recompute_flops": rep["recompute_flops"],
        "total_flops": rep["total_flops"],
        "forward_flops": fwd_flops,
        "recompute_fraction": round(rep["recompute_flops"] / fwd_flops, 4),
    })
    if before:
        with open(before) as f:
            early = json.load(f)
        row["saved_for_backward_bytes"] = early["saved_for_backward_bytes"]
        row["ops_before_schedule"] = len(early["ops"])
    return row


def strategy_rows(opt, path, tmp, timeout, strategies, fwd):
    rows, none = [], None
    for label, checkpoint in strategies:
        if checkpoint == "budget":
            if none is None or not none["ok"]:
                continue
            checkpoint = f"strategy=budget budget={none['whole_step_bytes'] // 2}"
        row = measure(opt, path, checkpoint, tmp, timeout, fwd)
        row["strategy"] = label
        if label == "none":
            none = row
        if none and none.get("ok") and row.get("ok"):
            row["whole_step_vs_none"] = round(row["whole_step_bytes"] /
                                              none["whole_step_bytes"], 4)
        if row.get("minimum_budget_bytes") and none and none.get("ok"):
            row["minimum_budget_vs_none"] = round(
                row["minimum_budget_bytes"] / none["whole_step_bytes"], 4)
        rows.append(row)
        log(f"  {label}: " + (f"whole step {row['whole_step_bytes'] / MIB:.1f} MiB, "
                              f"recompute {row['recompute_fraction']:.2f}, "
                              f"{row['compile_seconds']} s" if row.get("ok") else
                              row.get("error") or row.get("skipped")))
    return rows


def suite(opt, cfg, tmp):
    results = []
    for model, options in cfg["suite"]:
        log(f"suite: {model} {' '.join(options)}")
        path = generate(model, options, tmp)
        fwd = forward_flops(opt, path, tmp)
        results.append({"model": model, "options": " ".join(options),
                        "forward_flops": fwd,
                        "strategies": strategy_rows(opt, path, tmp, cfg["timeout"],
                                                    STRATEGIES, fwd)})
    return results


def sqrt_sweep(opt, cfg, tmp):
    rows = []
    for depth in cfg["sweep_depths"]:
        options = ["--depth", str(depth), "--batch", str(cfg["sweep_batch"])]
        log(f"sweep: cifar-resnet {' '.join(options)}")
        path = generate("cifar-resnet", options, tmp)
        fwd = forward_flops(opt, path, tmp)
        none, sq = strategy_rows(opt, path, tmp, cfg["timeout"],
                                 STRATEGIES[:2], fwd)
        row = {"depth": depth, "forward_flops": fwd, "none": none, "sqrt": sq}
        if none["ok"] and sq["ok"]:
            for key in ("saved_for_backward_bytes", "activation_peak_bytes"):
                row[f"none_{key}_per_depth"] = round(none[key] / depth)
                row[f"sqrt_{key}_per_sqrt_depth"] = round(sq[key] / math.sqrt(depth))
                row[f"{key}_reduction"] = round(none[key] / sq[key], 2)
        rows.append(row)
    return {"model": "cifar-resnet", "batch": cfg["sweep_batch"], "rows": rows}


def deep_resnet(opt, cfg, tmp):
    model, options = cfg["deep"]
    log(f"deep: {model} {' '.join(options)}")
    path = generate(model, options, tmp)
    fwd = forward_flops(opt, path, tmp)
    rows = strategy_rows(opt, path, tmp, cfg["deep_timeout"], STRATEGIES[:3], fwd)
    none = rows[0]
    for row in rows[1:]:
        if none["ok"] and row["ok"]:
            row["whole_step_reduction"] = round(none["whole_step_bytes"] /
                                                row["whole_step_bytes"], 2)
            row["activation_peak_reduction"] = round(
                none["activation_peak_bytes"] / row["activation_peak_bytes"], 2)
    return {"model": model, "options": " ".join(options), "forward_flops": fwd,
            "timeout_seconds": cfg["deep_timeout"], "chen_2016": CHEN_2016,
            "strategies": rows}


def optimal_vs_ilp(opt, cfg, tmp):
    results = []
    for model, options in cfg["ilp"]:
        label = model if options is None else f"{model} {' '.join(options)}"
        log(f"ilp: {label}")
        path = generate(model, options, tmp)
        fwd = forward_flops(opt, path, tmp)
        rows = strategy_rows(opt, path, tmp, cfg["timeout"], [
            ("none", None), ("dp", "strategy=optimal solver=dp"),
            ("ilp", "strategy=optimal solver=ilp"), ("auto", "strategy=optimal")], fwd)
        by = {r["strategy"]: r for r in rows}
        entry = {"model": label, "forward_flops": fwd, "strategies": rows}
        if all(by[s].get("ok") for s in ("dp", "ilp", "auto")):
            ilp = by["ilp"]["whole_step_bytes"]
            entry["dp_vs_ilp_percent"] = round(
                100 * (by["dp"]["whole_step_bytes"] - ilp) / ilp, 2)
            entry["auto_vs_ilp_percent"] = round(
                100 * (by["auto"]["whole_step_bytes"] - ilp) / ilp, 2)
            entry["ilp_hit_time_limit"] = any("time limit" in r
                                              for r in by["ilp"]["remarks"])
        results.append(entry)
    return results


def compile_time(opt, cfg, tmp):
    model, options = cfg["compile"]
    log(f"compile: {model} {' '.join(options)}")
    path = generate(model, options, tmp)
    fwd = forward_flops(opt, path, tmp)
    # Ops after autodiff, before any checkpointing.
    ops = measure(opt, path, None, tmp, cfg["timeout"], fwd)["ops_before_schedule"]
    rows, none_bytes = [], None
    for label, checkpoint in [("none", None), ("sqrt", "strategy=sqrt"),
                              ("optimal", "strategy=optimal"), ("budget-50%", "budget")]:
        if checkpoint == "budget":
            checkpoint = f"strategy=budget budget={none_bytes // 2}"
        runs = [measure(opt, path, checkpoint, tmp, cfg["timeout"], fwd,
                        saved_report=False) for _ in range(cfg["compile_repeats"])]
        best = min(runs, key=lambda r: r["compile_seconds"] or math.inf)
        row = {"strategy": label, "checkpoint": checkpoint,
               "compile_seconds": best["compile_seconds"],
               "all_seconds": [r["compile_seconds"] for r in runs],
               "checkpoint_seconds": best.get("checkpoint_seconds"),
               "ok": best["ok"], "remarks": best.get("remarks", [])}
        for key in ("whole_step_bytes", "recompute_fraction", "error",
                    "minimum_budget_bytes", "skipped"):
            if key in best:
                row[key] = best[key]
        if label == "none":
            none_bytes = best["whole_step_bytes"]
        rows.append(row)
        log(f"  {label}: {row['compile_seconds']} s")
    return {"model": model, "options": " ".join(options), "ops_after_autodiff": ops,
            "repeats": cfg["compile_repeats"], "pipeline": pipeline(
                "<checkpoint>", None, "<file>"), "strategies": rows}


def machine():
    model = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    nproc = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
    return {"nproc": int(nproc) if nproc.isdigit() else os.cpu_count(),
            "cpu_model": model, "load_average_at_start": os.getloadavg()}


def git_info():
    # The GPU machine's copy of the tree says the commit its binaries were
    # built from in MEMOPT_GIT_COMMIT (scripts/gpu/bundle.sh records it; the
    # copy's own .git, where there is one, can be stale).
    if os.environ.get("MEMOPT_GIT_COMMIT"):
        return {"commit": os.environ["MEMOPT_GIT_COMMIT"],
                "dirty": os.environ.get("MEMOPT_GIT_DIRTY") == "1"}

    def git(*args):
        try:
            return subprocess.run(["git", "-C", ROOT, *args], capture_output=True,
                                  text=True).stdout.strip()
        except OSError:
            return ""
    return {"commit": git("rev-parse", "HEAD"),
            "dirty": bool(git("status", "--porcelain", "--untracked-files=no"))}


def binary_info(opt):
    with open(opt, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    mtime = datetime.datetime.fromtimestamp(os.stat(opt).st_mtime, datetime.timezone.utc)
    return {"path": opt, "sha256": digest, "mtime": mtime.isoformat(timespec="seconds")}


def bench_parser(name, doc):
    """The options every memory benchmark takes; its results go to
    bench/results/<name>.json."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"),
                        help="build directory holding bin/memopt-opt")
    parser.add_argument("--memopt-opt", help="memopt-opt binary (overrides --build)")
    parser.add_argument("--quick", action="store_true",
                        help="tiny sizes, a few seconds (smoke test)")
    parser.add_argument("--output", help="JSON file (default: "
                        f"bench/results/{name}.json; with --quick a temporary file)")
    return parser


def add_step_time_options(parser):
    """--memopt-run and --no-time, for benchmarks that also time steps."""
    parser.add_argument("--memopt-run", help="memopt-run binary (default: "
                        "next to memopt-opt)")
    parser.add_argument("--no-time", action="store_true",
                        help="skip the CPU step-time runs")


def memopt_run_binary(args, opt):
    """The memopt-run to time: --memopt-run, or the one next to memopt-opt."""
    return args.memopt_run or os.path.join(os.path.dirname(opt), "memopt-run")


def bench_setup(name, args):
    """The memopt-opt binary to measure (waiting a few seconds while it is
    being relinked) and the JSON file to write."""
    opt = os.path.abspath(args.memopt_opt or os.path.join(args.build, "bin", "memopt-opt"))
    for _ in range(5):
        if os.access(opt, os.X_OK):
            break
        time.sleep(3)
    else:
        sys.exit(f"{name}: {opt} is not an executable memopt-opt")
    output = args.output or (
        os.path.join(tempfile.gettempdir(), name.replace("_", "-") + "-quick.json")
        if args.quick else os.path.join(ROOT, "bench", "results", name + ".json"))
    return opt, output


def bench_header(name, args, opt):
    """What every result file starts with: the run, machine, commit and binary."""
    return {
        "benchmark": name,
        "mode": "quick" if args.quick else "full",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(),
        "git": git_info(),
        "memopt_opt": binary_info(opt),
    }


def run_steps(run, path, flags):
    """Runs `memopt-run PATH --device=cpu FLAGS...` and returns the ms per
    step it prints and its first and last losses."""
    proc = subprocess.run([run, path, "--device=cpu", *flags],
                          capture_output=True, text=True, check=True)
    ms = re.search(r"([0-9.]+) ms per step", proc.stdout)
    loss = re.search(r"loss ([0-9.]+) -> ([0-9.]+)", proc.stdout)
    return float(ms.group(1)), [float(loss.group(1)), float(loss.group(2))]


def wait_with_usage(proc, timeout, poll=0.005):
    """Waits for a subprocess.Popen for at most `timeout` seconds: (wait
    status, resource usage), or None after killing it at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            return status, usage
        if time.monotonic() > deadline:
            proc.kill()
            os.wait4(proc.pid, 0)
            return None
        time.sleep(poll)


def write_json(path, data):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)),
                               prefix=".checkpoint.", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(data, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


def fmt_mib(b):
    return f"{b / MIB:.1f}"


def print_tables(data):
    print("| model | options | strategy | saved for backward (MiB) | peak (MiB) | "
          "arena (MiB) | whole step (MiB) | vs none | recompute / forward | "
          "compile (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for m in data.get("suite", []):
        for r in m["strategies"]:
            head = f"| {m['model']} | `{m['options']}` | {r['strategy']} |"
            if not r["ok"]:
                why = r.get("skipped") or (
                    f"refused: minimum {fmt_mib(r['minimum_budget_bytes'])} MiB "
                    f"({r['minimum_budget_vs_none']:.2f} of none)"
                    if "minimum_budget_bytes" in r else r.get("error", "")[:80])
                print(f"{head} {why} | | | | | | {r['compile_seconds']} |")
                continue
            print(f"{head} {fmt_mib(r['saved_for_backward_bytes'])} | "
                  f"{fmt_mib(r['peak_bytes'])} | {fmt_mib(r['arena_bytes'])} | "
                  f"{fmt_mib(r['whole_step_bytes'])} | {r['whole_step_vs_none']:.3f} | "
                  f"{r['recompute_fraction']:.2f} | {r['compile_seconds']:.2f} |")
    if "sqrt_sweep" in data:
        s = data["sqrt_sweep"]
        print()
        print(f"CIFAR ResNet, batch {s['batch']}, none vs strategy=sqrt:")
        print()
        print("| depth | saved, none (MiB) | saved, sqrt (MiB) | none / depth (MiB) | "
              "sqrt / sqrt(depth) (MiB) | activation peak, none (MiB) | "
              "activation peak, sqrt (MiB) | sqrt / sqrt(depth) (MiB) | "
              "recompute / forward | compile sqrt (s) |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for r in s["rows"]:
            n, q = r["none"], r["sqrt"]
            if not (n["ok"] and q["ok"]):
                print(f"| {r['depth']} | failed | | | | | | | | |")
                continue
            print(f"| {r['depth']} | {fmt_mib(n['saved_for_backward_bytes'])} | "
                  f"{fmt_mib(q['saved_for_backward_bytes'])} | "
                  f"{r['none_saved_for_backward_bytes_per_depth'] / MIB:.2f} | "
                  f"{r['sqrt_saved_for_backward_bytes_per_sqrt_depth'] / MIB:.2f} | "
                  f"{fmt_mib(n['activation_peak_bytes'])} | "
                  f"{fmt_mib(q['activation_peak_bytes'])} | "
                  f"{r['sqrt_activation_peak_bytes_per_sqrt_depth'] / MIB:.2f} | "
                  f"{q['recompute_fraction']:.3f} | {q['compile_seconds']:.2f} |")
    if "deep_resnet" in data:
        d = data["deep_resnet"]
        print()
        print(f"{d['model']} `{d['options']}`:")
        print()
        print("| strategy | whole step (GiB) | activation peak (GiB) | saved for "
              "backward (GiB) | whole step reduction | recompute / forward | "
              "compile (s) |")
        print("|---|---|---|---|---|---|---|")
        for r in d["strategies"]:
            if not r["ok"]:
                print(f"| {r['strategy']} | {r.get('skipped') or r.get('error')} "
                      f"| | | | | |")
                continue
            print(f"| {r['strategy']} | {r['whole_step_bytes'] / GIB:.2f} | "
                  f"{r['activation_peak_bytes'] / GIB:.2f} | "
                  f"{r['saved_for_backward_bytes'] / GIB:.2f} | "
                  f"{r.get('whole_step_reduction', 1.0):.2f}x | "
                  f"{r['recompute_fraction']:.2f} | {r['compile_seconds']:.2f} |")
        c = d["chen_2016"]
        print(f"| Chen et al. 2016 | {c['baseline_gb']} GB -> {c['sqrt_gb']} GB | | | "
              f"{c['ratio']}x | | |")
    if "optimal_vs_ilp" in data:
        print()
        print("| model | none (MiB) | dp (MiB) | ilp (MiB) | auto (MiB) | "
              "dp vs ilp | auto vs ilp | recompute / forward dp, ilp, auto |")
        print("|---|---|---|---|---|---|---|---|")
        for e in data["optimal_vs_ilp"]:
            by = {r["strategy"]: r for r in e["strategies"]}
            if "dp_vs_ilp_percent" not in e:
                print(f"| {e['model']} | failed | | | | | | |")
                continue
            print(f"| {e['model']} | "
                  + " | ".join(fmt_mib(by[s]["whole_step_bytes"])
                               for s in ("none", "dp", "ilp", "auto"))
                  + f" | {e['dp_vs_ilp_percent']:+.1f}% | {e['auto_vs_ilp_percent']:+.1f}% | "
                  + ", ".join(f"{by[s]['recompute_fraction']:.2f}"
                              for s in ("dp", "ilp", "auto")) + " |")
    if "compile_time_10k" in data:
        c = data["compile_time_10k"]
        print()
        print(f"Compile time, {c['model']} `{c['options']}` "
              f"({c['ops_after_autodiff']} ops after autodiff), best of {c['repeats']}:")
        print()
        print("| strategy | compile (s) | of which memopt-checkpoint (s) | whole step (MiB) |")
        print("|---|---|---|---|")
        for r in c["strategies"]:
            whole = fmt_mib(r["whole_step_bytes"]) if r["ok"] else (
                r.get("skipped") or "refused: minimum "
                f"{fmt_mib(r.get('minimum_budget_bytes', 0))} MiB")
            ck = r.get("checkpoint_seconds")
            print(f"| {r['strategy']} | {r['compile_seconds']} | "
                  f"{'' if ck is None else f'{ck:.2f}'} | {whole} |")


def main():
    parser = bench_parser("checkpoint", __doc__)
    parser.add_argument("--sections", default="suite,sweep,deep,ilp,compile",
                        help="comma-separated subset of suite,sweep,deep,ilp,compile")
    args = parser.parse_args()
    opt, output = bench_setup("checkpoint", args)
    cfg = QUICK if args.quick else FULL
    sections = args.sections.split(",")
    data = {
        **bench_header("checkpoint", args, opt),
        "pipeline": pipeline("<checkpoint>", "<saved-for-backward report>", "<report>"),
        "definitions": DEFINITIONS,
    }
    started = time.perf_counter()
    steps = [("suite", "suite", suite), ("sweep", "sqrt_sweep", sqrt_sweep),
             ("deep", "deep_resnet", deep_resnet), ("ilp", "optimal_vs_ilp", optimal_vs_ilp),
             ("compile", "compile_time_10k", compile_time)]
    with tempfile.TemporaryDirectory() as tmp:
        for name, key, fn in steps:
            if name not in sections:
                continue
            data[key] = fn(opt, cfg, tmp)
            data["elapsed_seconds"] = round(time.perf_counter() - started, 1)
            write_json(output, data)
    log(f"wrote {output} in {data.get('elapsed_seconds')} s")
    print_tables(data)


if __name__ == "__main__":
    main()
