#!/usr/bin/env python3
"""Data-parallel training's per-rank memory and CPU step time.

Usage: bench/data_parallel.py [--build DIR] [--output FILE] [--quick]

For GPT-2 small (global batch 8 x 512 tokens) and ResNet-50 (global batch
32 x 224^2), Adam: compiles the step for N = 1, 2, 4, 8 ranks at the per-rank
batch (global / N) with `--memopt-pipeline="ranks=N optimizer=adam"` and
reads each rank's report: the plan's peak, and parameters + gradients +
optimizer state against ZeRO stage 0's replicated (4 + 4 + 8) bytes per
parameter (Rajbhandari et al. 2020: 2Psi + 2Psi + K*Psi in their fp16
mixed-precision terms; here all f32), plus the gradient buckets. With
zero=1, 2 and 3 (N = 2, 4, 8) it compiles every rank's step and records
the rank with the most model states against the stage's formula
(stage 1: 8Psi + 8Psi/N bytes, stage 2: 4Psi + 12Psi/N, stage 3: 16Psi/N).
Then the
MLP's CPU step at one process (batch 64) and at 2 ranks under mpirun (32
each), median of the steps after the first, and a one-layer GPT-2's step
at 2 ranks with 2 KiB buckets, blocking and with --overlap-collectives. Writes
bench/results/data_parallel.json. `--quick` uses small models (tests).
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GEN = os.path.join(ROOT, "examples", "generate_models.py")
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--mca", "btl", "self,vader"]


def models(quick):
    if quick:
        return {"gpt2": (["gpt2", "--layers", "1", "--dim", "32", "--heads", "2",
                          "--vocab", "256", "--seq", "8"], 8),
                "resnet50": (["cifar-resnet", "--depth", "8", "--image-size", "8"], 8)}
    return {"gpt2": (["gpt2", "--seq", "512"], 8),
            "resnet50": (["resnet50", "--image-size", "224"], 32)}


def report(build, args, batch, ranks, tmp, zero=0, rank=0):
    model = os.path.join(tmp, "m.mlir")
    subprocess.run([sys.executable, GEN] + args + ["--batch", str(batch), "-o", model],
                   check=True)
    out = os.path.join(tmp, "r.json")
    plan = subprocess.run([os.path.join(build, "bin", "memopt-opt"), model,
                           f"--memopt-pipeline=ranks={ranks} zero={zero} rank={rank} "
                           "optimizer=adam",
                           f"--memopt-report=file={out}"],
                          check=True, capture_output=True, text=True).stdout
    r = json.load(open(out))
    return {"ranks": ranks, "zero": zero, "rank": rank, "per_rank_batch": batch,
            "peak_bytes": r["peak_bytes"], "arena_bytes": r["arena_bytes"],
            "parameter_bytes": r["parameters"]["bytes"],
            "gradient_bytes": r["gradient_bytes"],
            "optimizer_state_bytes": r["optimizer_state_bytes"],
            "model_states_bytes": r["parameters"]["bytes"] + r["gradient_bytes"] +
            r["optimizer_state_bytes"],
            "zero0_formula_bytes": 16 * r["parameters"]["count"],
            # Gradient buckets; not stage 2's sums of flags and norms.
            "all_reduce_buckets": len([line for line in plan.splitlines()
                                       if "memopt.all_reduce" in line and
                                       "sum = true" not in line]),
            "reduce_scatter_buckets": plan.count("memopt.reduce_scatter"),
            "largest_bucket_bytes": r.get("collectives", {}).get("largest_bucket_bytes", 0),
            "collective_workspace_bytes":
            r.get("collectives", {}).get("largest_workspace_bytes", 0)}


def median_step_ms(log):
    m = re.search(r"median after the first ([0-9.]+)", log)
    return float(m.group(1)) if m else None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--output", default=os.path.join(HERE, "results", "data_parallel.json"))
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    build = os.path.abspath(args.build)
    result = {"date": datetime.date.today().isoformat(), "memory": {}, "cpu_step": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for name, (gen, global_batch) in models(args.quick).items():
            rows = []
            for ranks in (1, 2, 4, 8):
                rows.append(report(build, gen, global_batch // ranks, ranks, tmp))
                print(name, rows[-1], flush=True)
            # ZeRO stages 1 and 2: every rank's step (each owns other
            # parameters). Stage 1 computes and averages every gradient on
            # every rank (a rank's report counts only those its own updates
            # read); stage 2 keeps only the averages of its own.
            full = rows[0]
            psi_bytes = full["parameter_bytes"]  # 4 bytes per parameter
            for zero in (1, 2, 3):
                for ranks in (2, 4, 8):
                    per_rank = [report(build, gen, global_batch // ranks, ranks, tmp,
                                       zero=zero, rank=r) for r in range(ranks)]
                    states = [row["optimizer_state_bytes"] for row in per_rank]
                    grads = [row["gradient_bytes"] for row in per_rank]
                    params = [row["parameter_bytes"] for row in per_rank]
                    peaks = [row["peak_bytes"] for row in per_rank]
                    worst = max(range(ranks),
                                key=lambda r: params[r] + states[r] + grads[r])
                    gradient_bytes = grads[worst] if zero >= 2 else full["gradient_bytes"]
                    # Rajbhandari et al.: stage 1 2Psi + 2Psi + K*Psi/N,
                    # stage 2 2Psi + (2Psi + K*Psi)/N, stage 3
                    # (2Psi + 2Psi + K*Psi)/N; here f32 weights and
                    # gradients (4 bytes each) and Adam's two f32 moments.
                    formula = {1: 2 * psi_bytes + 2 * psi_bytes // ranks,
                               2: psi_bytes + 3 * psi_bytes // ranks,
                               3: 4 * psi_bytes // ranks}[zero]
                    rows.append(dict(per_rank[worst], rank="max",
                                     optimizer_state_bytes=states[worst],
                                     optimizer_state_min_bytes=min(states),
                                     peak_bytes=max(peaks),
                                     gradient_bytes=gradient_bytes,
                                     parameter_bytes=params[worst],
                                     zero0_formula_bytes=full["zero0_formula_bytes"],
                                     model_states_bytes=params[worst] + gradient_bytes +
                                     states[worst],
                                     ideal_state_bytes=full["optimizer_state_bytes"] // ranks,
                                     formula_bytes=formula))
                    print(name, rows[-1], flush=True)
            result["memory"][name] = {"global_batch": global_batch, "rows": rows}
        run = os.path.join(build, "bin", "memopt-run")
        mlp = os.path.join(ROOT, "examples", "mlp.mlir")
        half = os.path.join(tmp, "mlp32.mlir")
        with open(mlp) as f, open(half, "w") as g:
            g.write(f.read().replace("tensor<64x", "tensor<32x")
                    .replace("tensor<64xi64>", "tensor<32xi64>"))
        steps = ["--device=cpu", "--steps=30", "--step-times"]
        one = subprocess.run([run, mlp] + steps, check=True, capture_output=True,
                             text=True).stdout
        two = subprocess.run(MPIRUN + ["-np", "2", run, half, "--ranks=2"] + steps,
                             check=True, capture_output=True, text=True).stdout
        result["cpu_step"] = {"model": "mlp", "global_batch": 64,
                              "one_process_ms": median_step_ms(one),
                              "two_ranks_ms": median_step_ms(two)}
        print(result["cpu_step"])
        # --overlap-collectives on a one-layer GPT-2 with 2 KiB buckets (ten
        # collectives), two ranks, blocking and overlapped alternately.
        gpt = os.path.join(tmp, "gpt2.mlir")
        subprocess.run([sys.executable, GEN, "gpt2", "--layers", "1", "--dim", "32",
                        "--heads", "2", "--vocab", "256", "--seq", "8", "--batch", "2",
                        "-o", gpt], check=True)
        runs = {"blocking_ms": [], "overlapped_ms": [], "overlapped_steps": None}
        for _ in range(1 if args.quick else 3):
            for overlap in ("false", "true"):
                log = subprocess.run(
                    MPIRUN + ["-np", "2", run, gpt, "--ranks=2", "--optimizer=adam",
                              "--bucket=2KiB", f"--overlap-collectives={overlap}"] + steps,
                    check=True, capture_output=True, text=True).stdout
                key = "overlapped_ms" if overlap == "true" else "blocking_ms"
                runs[key].append(median_step_ms(log))
                m = re.search(r"overlap: ([0-9]+) steps", log)
                if m:
                    runs["overlapped_steps"] = int(m.group(1))
        result["overlap"] = dict(runs, model="gpt2 1 layer, dim 32, batch 2 per rank",
                                 ranks=2, bucket="2KiB")
        print(result["overlap"])
    if not args.quick:
        with open(args.output, "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
