#!/usr/bin/env python3
"""The transformer fusions on GPT-2: memory-efficient attention
(--memopt-fuse-attention) and the chunked LM-head loss
(--memopt-fuse-linear-cross-entropy). What the training step keeps for the
backward pass and its peak, with and without them, over the sequence
length; and the CPU step time.

Usage: bench/transformer.py [--quick] [--build build | --memopt-opt PATH]
                            [--memopt-run PATH] [--no-time]
                            [--output bench/results/transformer.json]

Memory: GPT-2 small (12 layers, width 768, 12 heads, vocabulary 50257,
`generate_models.py gpt2`), batch 4, Adam, at sequence lengths 512, 1024
and 2048, compiled by

    memopt-opt --memopt-pipeline="optimizer=adam partition=P
               fuse-attention=A fuse-linear-cross-entropy=L" --memopt-report=file=R

in three variants: unfused (A and L false), attention (A true, L false)
and fused (both true, the default), each with P true (the default) and
false (the configuration issue 19 quoted: 8.1 GB saved, 10.4 GB peak at
1024). From the report: saved_for_backward_bytes, peak_bytes, arena_bytes
and total_flops. The attention variant's extra FLOPs (over unfused) are
compared with one attention forward pass (q·kᵀ and P·v over every score,
4·B·H·S²·d, plus the softmax and dropout, 3·B·H·S², in all layers); the
fused variant's extra over attention is the LM head's logits computed
again in the backward pass. The growth exponent of saved-for-backward over
the sequence length is fitted (log-log least squares): the probabilities
make the unfused step's grow faster than linearly; the fused steps' grow
linearly.

Time (unless --no-time): `memopt-run --steps 2 --optimizer=adam` on the CPU
for GPT-2 small at batch 1, sequence 512 and 1024, the three variants
alternately in one sitting (two runs each; these machines are noisy), the
ms per step memopt-run prints.

Writes JSON and prints Markdown tables (docs/benchmarks.md quotes them).
--quick runs a 2-layer GPT-2 of width 64 at short sequences in seconds, for
smoke tests, and writes to a temporary file unless --output is given.
"""
import json
import math
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no bench/__pycache__
import checkpoint  # noqa: E402  (machine, git and binary info, JSON writing)

ROOT = os.path.dirname(HERE)
GEN = os.path.join(ROOT, "examples", "generate_models.py")
log = checkpoint.log
GIB = 1e9

FULL = {"model": {"layers": 12, "dim": 768, "heads": 12, "vocab": 50257},
        "batch": 4, "seqs": [512, 1024, 2048],
        "time": {"batch": 1, "seqs": [512, 1024], "steps": 2, "repeats": 2}}
QUICK = {"model": {"layers": 2, "dim": 64, "heads": 4, "vocab": 4096},
         "batch": 2, "seqs": [32, 64, 128],
         "time": {"batch": 1, "seqs": [64], "steps": 2, "repeats": 1}}


def generate(model, batch, seq, tmp):
    path = os.path.join(tmp, f"gpt2-b{batch}-s{seq}.mlir")
    if not os.path.exists(path):
        subprocess.run([sys.executable, GEN, "gpt2", "--batch", str(batch),
                        "--seq", str(seq), "--layers", str(model["layers"]),
                        "--dim", str(model["dim"]), "--heads", str(model["heads"]),
                        "--vocab", str(model["vocab"]), "-o", path], check=True)
    return path


# name: (fuse-attention, fuse-linear-cross-entropy)
VARIANTS = {"unfused": (False, False), "attention": (True, False),
            "fused": (True, True)}


def flags(variant):
    attention, loss = VARIANTS[variant]
    return (f"fuse-attention={str(attention).lower()} "
            f"fuse-linear-cross-entropy={str(loss).lower()}")


def report(opt, path, variant, partition, tmp):
    out = os.path.join(tmp, "report.json")
    options = (f"optimizer=adam partition={str(partition).lower()} "
               + flags(variant))
    started = time.perf_counter()
    subprocess.run([opt, f"--memopt-pipeline={options}",
                    f"--memopt-report=file={out}", path, "-o", os.devnull],
                   check=True)
    seconds = time.perf_counter() - started
    with open(out) as f:
        r = json.load(f)
    r = r[0] if isinstance(r, list) else r
    return {"saved_for_backward_bytes": r["saved_for_backward_bytes"],
            "peak_bytes": r["peak_bytes"], "arena_bytes": r["arena_bytes"],
            "total_flops": r["total_flops"], "compile_seconds": round(seconds, 2)}


def attention_forward_flops(model, batch, seq):
    """One attention forward pass in every layer: q·kᵀ and P·v (2·S²·d
    each per head) and the scale, softmax and dropout (3 per score)."""
    d = model["dim"] // model["heads"]
    scores = model["layers"] * batch * model["heads"] * seq * seq
    return scores * (4 * d + 3)


def exponent(xs, ys):
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    return (sum((a - mx) * (b - my) for a, b in zip(lx, ly))
            / sum((a - mx) ** 2 for a in lx))


def memory(opt, cfg, tmp):
    rows = []
    for seq in cfg["seqs"]:
        path = generate(cfg["model"], cfg["batch"], seq, tmp)
        row = {"seq": seq, "attention_forward_flops":
               attention_forward_flops(cfg["model"], cfg["batch"], seq)}
        for partition in (True, False):
            for variant in VARIANTS:
                key = variant + ("" if partition else "_no_partition")
                row[key] = report(opt, path, variant, partition, tmp)
                log(f"seq {seq} {key}: saved "
                    f"{row[key]['saved_for_backward_bytes'] / GIB:.2f} GB, "
                    f"peak {row[key]['peak_bytes'] / GIB:.2f} GB")
        extra = row["attention"]["total_flops"] - row["unfused"]["total_flops"]
        row["extra_flops_fraction_of_attention_forward"] = round(
            extra / row["attention_forward_flops"], 3)
        row["extra_flops_fraction_fused"] = round(
            (row["fused"]["total_flops"] - row["unfused"]["total_flops"])
            / row["unfused"]["total_flops"], 3)
        rows.append(row)
    growth = {}
    seqs = [r["seq"] for r in rows]
    for key in [v + p for p in ("", "_no_partition") for v in VARIANTS]:
        growth[key] = round(exponent(
            seqs, [r[key]["saved_for_backward_bytes"] for r in rows]), 3)
    return rows, growth


def step_time(run, path, variant, steps):
    attention, loss = VARIANTS[variant]
    return checkpoint.run_steps(
        run, path, [f"--steps={steps}", "--optimizer=adam",
                    f"--fuse-attention={str(attention).lower()}",
                    f"--fuse-linear-cross-entropy={str(loss).lower()}"])


def timing(run, cfg, tmp):
    t = cfg["time"]
    rows = []
    for seq in t["seqs"]:
        path = generate(cfg["model"], t["batch"], seq, tmp)
        runs = {v: [] for v in VARIANTS}
        losses = {}
        for _ in range(t["repeats"]):
            for variant in VARIANTS:
                ms, loss = step_time(run, path, variant, t["steps"])
                runs[variant].append(ms)
                losses[variant] = loss
                log(f"seq {seq} {variant}: {ms:.0f} ms per step")
        rows.append({"seq": seq, "batch": t["batch"], "steps": t["steps"],
                     "ms_per_step": runs, "losses": losses,
                     "over_unfused": {v: round(min(runs[v]) / min(runs["unfused"]), 3)
                                      for v in VARIANTS}})
    return rows


def print_tables(data):
    def gb(r, key, what):
        return f"{r[key][what] / GIB:.2f}"
    for suffix, title in (("", "The default pipeline (partition on):"),
                          ("_no_partition", "Without the partition (partition=false):")):
        print(title)
        print()
        print("| seq | saved: unfused / attention / fused (GB) "
              "| peak: unfused / attention / fused (GB) |")
        print("|---|---|---|")
        for r in data["memory"]:
            keys = [v + suffix for v in VARIANTS]
            print(f"| {r['seq']} | "
                  + " / ".join(gb(r, k, "saved_for_backward_bytes") for k in keys)
                  + " | " + " / ".join(gb(r, k, "peak_bytes") for k in keys) + " |")
        print()
    print("| seq | attention's extra FLOPs / one attention forward "
          "| fused step's extra FLOPs / unfused step's |")
    print("|---|---|---|")
    for r in data["memory"]:
        print(f"| {r['seq']} | {r['extra_flops_fraction_of_attention_forward']} "
              f"| {r['extra_flops_fraction_fused']} |")
    print()
    print("Growth exponent of saved-for-backward over the sequence length: "
          + ", ".join(f"{k} {v}" for k, v in data["saved_growth_exponent"].items()))
    if data.get("time"):
        print()
        print("| seq | batch | unfused (ms per step) | attention | fused "
              "| attention / unfused | fused / unfused |")
        print("|---|---|---|---|---|---|---|")
        for r in data["time"]:
            ms = r["ms_per_step"]
            cells = [", ".join(f"{x:.0f}" for x in ms[v]) for v in VARIANTS]
            print(f"| {r['seq']} | {r['batch']} | " + " | ".join(cells)
                  + f" | {r['over_unfused']['attention']} | {r['over_unfused']['fused']} |")


def main():
    parser = checkpoint.bench_parser("transformer", __doc__)
    checkpoint.add_step_time_options(parser)
    args = parser.parse_args()
    opt, output = checkpoint.bench_setup("transformer", args)
    run = checkpoint.memopt_run_binary(args, opt)
    cfg = QUICK if args.quick else FULL
    data = {**checkpoint.bench_header("transformer", args, opt),
            "model": cfg["model"], "batch": cfg["batch"]}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        data["memory"], data["saved_growth_exponent"] = memory(opt, cfg, tmp)
        if not args.no_time:
            data["time"] = timing(run, cfg, tmp)
    data["elapsed_seconds"] = round(time.perf_counter() - started, 1)
    checkpoint.write_json(output, data)
    log(f"wrote {output} in {data['elapsed_seconds']} s")
    print_tables(data)


if __name__ == "__main__":
    main()
