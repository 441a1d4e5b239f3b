#!/usr/bin/env python3
"""Compile time of memopt-opt's training pipeline as graphs grow.

Usage: bench/compile_time.py [--quick] [--repeat N]
                             [--build build | --memopt-opt PATH]
                             [--output bench/results/compile_time.json]

For each family of graphs (CIFAR ResNets by depth, chains of linear + ReLU
layers by length, GPT-2 by layers, an LSTM by sequence length) at sizes of
about 10k, 40k and 100k ops after autodiff, runs

    memopt-opt MODEL --memopt-pipeline=checkpoint=C -o /dev/null --mlir-timing

for C in none, sqrt and optimal (the default pipeline otherwise: partition,
schedule, plan), one process each, --repeat times (3 by default), and
records the fastest run's whole-process wall time, peak RSS (os.wait4) and
the seconds --mlir-timing gives each pass, with every run's time. The op count is that of the step after --memopt-autodiff (one line
per op of the printed IR). Per family and strategy, the growth exponent is
the least-squares slope of log(time) over log(ops).

A run longer than the timeout is recorded as such (and the larger sizes of
that family and strategy are not tried). Writes JSON and prints a Markdown
table (docs/benchmarks.md quotes it). --quick runs three small sizes of two
families in seconds, for a smoke test, and writes to a temporary file unless
--output is given.
"""
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
import checkpoint  # noqa: E402  (machine, git and binary info, JSON writing)

ROOT = checkpoint.ROOT
GEN = os.path.join(ROOT, "examples", "generate_models.py")
log = checkpoint.log


def chain(layers):
    return ("mlp", ["--image-size", "8", "--batch", "32", "--classes", "64",
                    "--hidden", ",".join(["64"] * layers)])


# (family, [(size label, generator model, options)]): about 10k, 40k and
# 100k ops after autodiff.
FULL = {
    "families": [
        ("cifar-resnet", [(d, "cifar-resnet", ["--depth", str(d), "--batch", "32"])
                          for d in (908, 3602, 9002)]),
        ("chain", [(n, *chain(n)) for n in (1250, 5000, 12500)]),
        ("gpt2", [(n, "gpt2", ["--layers", str(n), "--dim", "64", "--heads", "4",
                               "--vocab", "256", "--seq", "64", "--batch", "4"])
                  for n in (120, 480, 1200)]),
        ("lstm", [(n, "lstm", ["--seq", str(n), "--batch", "8", "--input-size", "32",
                               "--hidden", "64"])
                  for n in (220, 870, 2170)]),
    ],
    "strategies": ["none", "sqrt", "optimal"],
    "timeout": 240,
}
QUICK = {
    "families": [
        ("cifar-resnet", [(d, "cifar-resnet", ["--depth", str(d), "--batch", "2",
                                               "--image-size", "8"])
                          for d in (20, 38, 74)]),
        ("chain", [(n, *chain(n)) for n in (25, 50, 100)]),
    ],
    "strategies": ["none", "optimal"],
    "timeout": 60,
}

_TIMING_RE = re.compile(r"^\s+([0-9.]+) \(\s*[0-9.]+%\)\s+(\S.*?)\s*$")


def parse_timing(text):
    """Seconds per pass name from --mlir-timing's report (a pass that runs
    more than once is summed; the Total line and nesting headers are left
    out)."""
    passes = {}
    for line in text.splitlines():
        m = _TIMING_RE.match(line)
        if not m:
            continue
        name = m.group(2)
        if name in ("Total",) or name.startswith("'"):
            continue
        passes[name] = round(passes.get(name, 0.0) + float(m.group(1)), 4)
    return passes


def run_measured(cmd, timeout):
    """(returncode or None on timeout, wall seconds, peak RSS in KiB, stderr)."""
    start = time.monotonic()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        waited = checkpoint.wait_with_usage(proc, timeout)
        if waited is None:
            return None, time.monotonic() - start, None, ""
        status, usage = waited
        wall = time.monotonic() - start
        err.seek(0)
        text = err.read().decode(errors="replace")
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, wall, usage.ru_maxrss, text


def count_ops(opt, path, tmp):
    out = os.path.join(tmp, "autodiff.mlir")
    subprocess.run([opt, path, "--memopt-autodiff", "-o", out], check=True)
    with open(out) as f:
        return sum(1 for line in f
                   if re.match(r"^\s+(%[^=]+= )?\"?memopt\.", line))


def exponent(points):
    """Least-squares slope of log(seconds) over log(ops)."""
    pts = [(math.log(o), math.log(s)) for o, s in points if s > 0]
    if len(pts) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    den = sum((x - mx) ** 2 for x, _ in pts)
    return round(sum((x - mx) * (y - my) for x, y in pts) / den, 2) if den else None


def bench(opt, cfg, tmp):
    results = []
    for family, sizes in cfg["families"]:
        entry = {"family": family, "runs": [], "exponents": {}}
        given_up = set()
        for size, model, options in sizes:
            path = os.path.join(tmp, f"{family}-{size}.mlir")
            subprocess.run([sys.executable, GEN, model, *options, "-o", path],
                           check=True)
            ops = count_ops(opt, path, tmp)
            for strategy in cfg["strategies"]:
                run = {"size": size, "generator": f"{model} {' '.join(options)}"
                       if len(options) < 12 else f"{model} ({size} layers)",
                       "ops": ops, "strategy": strategy}
                if strategy in given_up:
                    run["skipped"] = "a smaller size timed out"
                    entry["runs"].append(run)
                    continue
                cmd = [opt, path, f"--memopt-pipeline=checkpoint={strategy}",
                       "-o", os.devnull, "--mlir-timing"]
                # The fastest of `repeat` runs, with its passes' times: on a
                # shared machine the slower runs measure the neighbours.
                walls = []
                for _ in range(cfg["repeat"]):
                    rc, wall, rss, err = run_measured(cmd, cfg["timeout"])
                    if rc is None:
                        run["timeout"] = cfg["timeout"]
                        given_up.add(strategy)
                        break
                    if rc != 0:
                        run["error"] = err[-2000:]
                        break
                    walls.append(round(wall, 3))
                    if walls[-1] == min(walls):
                        run.update({"seconds": round(wall, 3),
                                    "peak_rss_mib": round(rss / 1024, 1),
                                    "passes": parse_timing(err)})
                if walls and "seconds" in run and len(walls) > 1:
                    run["all_seconds"] = walls
                if "timeout" in run or "error" in run:
                    for key in ("seconds", "peak_rss_mib", "passes"):
                        run.pop(key, None)
                log(f"  {family} {size} ({ops} ops) {strategy}: " +
                    (f"{run['seconds']} s, {run['peak_rss_mib']} MiB"
                     if "seconds" in run else
                     run.get("skipped") or ("timeout" if "timeout" in run
                                            else "error: " + run["error"][-300:])))
                entry["runs"].append(run)
        for strategy in cfg["strategies"]:
            entry["exponents"][strategy] = exponent(
                [(r["ops"], r["seconds"]) for r in entry["runs"]
                 if r["strategy"] == strategy and "seconds" in r])
        results.append(entry)
    return results


def print_table(data):
    print("| family | size | ops | strategy | seconds | peak RSS (MiB) | "
          "slowest passes (s) |")
    print("|---|---|---|---|---|---|---|")
    for entry in data["families"]:
        for r in entry["runs"]:
            if "seconds" in r:
                top = sorted(r["passes"].items(), key=lambda kv: -kv[1])[:3]
                cells = [f"{r['seconds']:.2f}", f"{r['peak_rss_mib']:.0f}",
                         ", ".join(f"{k} {v:.2f}" for k, v in top)]
            else:
                cells = [("timeout " + str(r["timeout"]) + " s") if "timeout" in r
                         else r.get("skipped", "error"), "", ""]
            print(f"| {entry['family']} | {r['size']} | {r['ops']} | "
                  f"{r['strategy']} | " + " | ".join(cells) + " |")
    print()
    print("| family | " + " | ".join(f"exponent ({s})" for s in data["strategies"])
          + " |")
    print("|---|" + "---|" * len(data["strategies"]))
    for entry in data["families"]:
        print(f"| {entry['family']} | " + " | ".join(
            str(entry["exponents"].get(s)) for s in data["strategies"]) + " |")


def main():
    parser = checkpoint.bench_parser("compile_time", __doc__)
    parser.add_argument("--repeat", type=int, default=None,
                        help="runs per point, the fastest kept (default 3; "
                             "1 with --quick)")
    args = parser.parse_args()
    if args.repeat is not None and args.repeat < 1:
        parser.error(f"--repeat must be at least 1, got {args.repeat}")
    opt, output = checkpoint.bench_setup("compile_time", args)
    cfg = dict(QUICK if args.quick else FULL)
    cfg["repeat"] = args.repeat or (1 if args.quick else 3)
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        data = {**checkpoint.bench_header("compile_time", args, opt),
                "command": "memopt-opt MODEL --memopt-pipeline=checkpoint=C "
                           "-o /dev/null --mlir-timing",
                "strategies": cfg["strategies"], "timeout_s": cfg["timeout"],
                "repeat": cfg["repeat"],
                "families": bench(opt, cfg, tmp)}
    checkpoint.write_json(output, data)
    log(f"wrote {output} in {time.monotonic() - start:.1f} s")
    print_table(data)
    failed = [f"{e['family']} {r['size']} {r['strategy']}"
              for e in data["families"] for r in e["runs"] if "error" in r]
    if failed:
        sys.exit("compile_time: memopt-opt failed on " + ", ".join(failed))


if __name__ == "__main__":
    main()
