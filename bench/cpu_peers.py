#!/usr/bin/env python3
"""The CPU training step against PyTorch's: ms per step of memopt-run and of
PyTorch eager on the same networks, batches and optimizer (issue 27's
models), in alternating rounds in one sitting.

Usage: bench/cpu_peers.py [--rounds R] [--steps N] [--models LIST]
                          [--memopt-run PATH] [--output FILE] [--quick]

Needs PyTorch (CPU is enough) in the Python that runs it; it is not one of
the project's dependencies and not installed by the README's commands:

    python3 -m pip install torch --index-url https://download.pytorch.org/whl/cpu

(or `pip install torch` from PyPI, whose build also runs on a CPU). Without
it the script says so and exits with 2.

Models (SGD, lr 0.01, f32; PyTorch's modules are written to match the graphs,
each side with its own seeded initialisation, since only time is compared):

  mlp       generate_models.py mlp --hidden 256,128 --batch 32
            (784-256-128-10, ReLU, cross-entropy)
  mlp-deep  generate_models.py mlp --hidden 512 x16 --batch 64
            (784-512, 15 x 512-512, 512-10, ReLU)
  cnn       issue 27's plain CNN, batch 16, 32x32: 3x3 conv 3 -> 32 (bias) +
            ReLU, 2x2 max pool, 3x3 conv 32 -> 64 + ReLU, 2x2 max pool,
            linear 4096 -> 10 (the graph is CNN_MLIR below)
  cnn-bn    examples/cnn.mlir, batch 32, 32x32: three 3x3 conv + batch norm
            + ReLU stages (32, 64, 128 channels), two 2x2 max pools, global
            average pool, linear
  decoder   generate_models.py gpt2 --layers 2 --dim 256 --heads 4 --seq 256
            --batch 4 --vocab 4096 (PyTorch: bench/gpu_compare_torch.py's
            GPT-2 with materialised attention, and again with
            scaled_dot_product_attention; memopt fuses attention and the
            LM-head loss by default)

Every run is its own process and trains for N steps (default 8) on one fixed
batch (memopt-run reads the classifiers' batch with --inputs; the decoder's
token batch is fixed already); the time is the median of steps 2..N (memopt-run --step-times;
PyTorch: each step between perf_counter calls). A round runs every model on
both systems; the JSON keeps every round, and the table the median over the
rounds of each time and of the per-round ratio. Peak RSS (the whole process,
os.wait4) is recorded too, with memopt-run's planned high-water.

Writes bench/results/cpu_peers.json (with --quick a temporary file) and prints
a Markdown table.
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GEN = os.path.join(ROOT, "examples", "generate_models.py")
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no bench/__pycache__
import checkpoint  # noqa: E402  (machine, git and binary info, JSON writing)
from checkpoint import log  # noqa: E402
from gpu_compare import parse_memopt_run  # noqa: E402  (memopt-run's output)

# Issue 27's plain CNN (no batch norm), written out: generate_models.py has
# no model of this shape.
CNN_MLIR = """\
func.func @cnn_plain_train(
    %c1_w: tensor<32x3x3x3xf32> {memopt.param}, %c1_b: tensor<32xf32> {memopt.param},
    %c2_w: tensor<64x32x3x3xf32> {memopt.param}, %c2_b: tensor<64xf32> {memopt.param},
    %fc_w: tensor<10x4096xf32> {memopt.param}, %fc_b: tensor<10xf32> {memopt.param},
    %images: tensor<16x3x32x32xf32>, %labels: tensor<16xi64>) -> tensor<f32> {
  %c1 = memopt.conv2d %images, %c1_w, %c1_b {padding = array<i64: 1, 1>} : tensor<16x3x32x32xf32>, tensor<32x3x3x3xf32>, tensor<32xf32>
  %r1 = memopt.relu %c1 : tensor<16x32x32x32xf32>
  %p1 = memopt.max_pool2d %r1 {kernel_size = array<i64: 2, 2>} : tensor<16x32x32x32xf32>
  %c2 = memopt.conv2d %p1, %c2_w, %c2_b {padding = array<i64: 1, 1>} : tensor<16x32x16x16xf32>, tensor<64x32x3x3xf32>, tensor<64xf32>
  %r2 = memopt.relu %c2 : tensor<16x64x16x16xf32>
  %p2 = memopt.max_pool2d %r2 {kernel_size = array<i64: 2, 2>} : tensor<16x64x16x16xf32>
  %f = memopt.reshape %p2 : tensor<16x64x8x8xf32> -> tensor<16x4096xf32>
  %logits = memopt.linear %f, %fc_w, %fc_b : tensor<16x4096xf32>, tensor<10x4096xf32>, tensor<10xf32>
  %loss = memopt.cross_entropy %logits, %labels : tensor<16x10xf32>, tensor<16xi64>
  return %loss : tensor<f32>
}
"""

MODELS = {
    "mlp": {"gen": ["mlp", "--hidden", "256,128", "--batch", "32"],
            "torch": {"kind": "mlp", "widths": [784, 256, 128, 10], "batch": 32},
            "inputs": {"input": [32, 784], "labels": [32, 10]}},
    "mlp-deep": {"gen": ["mlp", "--hidden", ",".join(["512"] * 16), "--batch", "64"],
                 "torch": {"kind": "mlp", "widths": [784] + [512] * 16 + [10],
                           "batch": 64},
                 "inputs": {"input": [64, 784], "labels": [64, 10]}},
    "cnn": {"text": CNN_MLIR, "torch": {"kind": "cnn-plain", "batch": 16},
            "inputs": {"images": [16, 3, 32, 32], "labels": [16, 10]}},
    "cnn-bn": {"file": os.path.join(ROOT, "examples", "cnn.mlir"),
               "torch": {"kind": "cnn", "batch": 32},
               "inputs": {"images": [32, 3, 32, 32], "labels": [32, 10]}},
    "decoder": {"gen": ["gpt2", "--layers", "2", "--dim", "256", "--heads", "4",
                        "--seq", "256", "--batch", "4", "--vocab", "4096"],
                "torch": {"kind": "gpt2", "layers": 2, "dim": 256, "heads": 4,
                          "seq": 256, "batch": 4, "vocab": 4096}},
}
QUICK_MODELS = ("mlp", "cnn-bn")
LR = 0.01
RESULT_TAG = "CPU_PEERS_RESULT "


# --------------------------------------------------------------------------
# PyTorch side (a worker process per run)
# --------------------------------------------------------------------------

def torch_worker(request):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    spec = request["torch"]
    steps, variant = request["steps"], request["variant"]
    torch.manual_seed(0)
    if spec["kind"] == "mlp":
        layers = []
        widths = spec["widths"]
        for i in range(len(widths) - 1):
            layers.append(nn.Linear(widths[i], widths[i + 1]))
            if i + 2 < len(widths):
                layers.append(nn.ReLU())
        model = nn.Sequential(*layers)
        data = torch.randn(spec["batch"], widths[0])
        labels = torch.randint(0, widths[-1], (spec["batch"],))

        def loss_fn():
            return F.cross_entropy(model(data), labels)
    elif spec["kind"] == "cnn-plain":
        model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Flatten(), nn.Linear(4096, 10))
        data = torch.randn(spec["batch"], 3, 32, 32)
        labels = torch.randint(0, 10, (spec["batch"],))

        def loss_fn():
            return F.cross_entropy(model(data), labels)
    elif spec["kind"] == "cnn":
        def stage(cin, cout):
            return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout),
                    nn.ReLU()]
        model = nn.Sequential(*stage(3, 32), nn.MaxPool2d(2), *stage(32, 64),
                              nn.MaxPool2d(2), *stage(64, 128),
                              nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 10))
        data = torch.randn(spec["batch"], 3, 32, 32)
        labels = torch.randint(0, 10, (spec["batch"],))

        def loss_fn():
            return F.cross_entropy(model(data), labels)
    else:
        import gpu_compare_torch as gt
        model = gt.GPT2(spec["vocab"], spec["seq"], spec["dim"], spec["heads"],
                        spec["layers"], sdpa=variant == "sdpa")
        data = torch.randint(0, spec["vocab"], (spec["batch"], spec["seq"]))
        labels = torch.randint(0, spec["vocab"], (spec["batch"] * spec["seq"],))

        def loss_fn():
            return model(data, labels)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = loss_fn()
        loss.backward()
        opt.step()
        loss.item()
        times.append(1000 * (time.perf_counter() - start))
    return {"step_ms": [round(t, 3) for t in times],
            "step_ms_median": statistics.median(times[1:] or times),
            "threads": torch.get_num_threads(), "torch": torch.__version__}


def run_torch(model, variant, steps, timeout):
    request = {"torch": MODELS[model]["torch"], "steps": steps, "variant": variant}
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", json.dumps(request)]
    return run_measured(cmd, timeout, parse=lambda out: json.loads(
        next(line[len(RESULT_TAG):] for line in out.splitlines()
             if line.startswith(RESULT_TAG))))


# --------------------------------------------------------------------------
# memopt side
# --------------------------------------------------------------------------

def write_inputs(model, path):
    """A fixed batch for a classifier graph, so that memopt-run trains on one
    batch as the PyTorch side does (its synthetic classifier data is drawn
    anew each step, on the step's thread: about 2 of the small MLP's 2.8 ms).
    Labels: [batch, classes] gives their count and range."""
    import torch
    import gpu_compare_torch as gt
    g = torch.Generator().manual_seed(1)
    tensors = {}
    for name, shape in MODELS[model]["inputs"].items():
        tensors[name] = (torch.randint(0, shape[1], (shape[0],), generator=g)
                         if name == "labels" else torch.randn(*shape, generator=g))
    gt.write_safetensors(path, tensors)


def run_memopt(memopt_run, mlir, steps, timeout, inputs=None):
    cmd = [memopt_run, mlir, "--device=cpu", f"--steps={steps}", "--optimizer=sgd",
           f"--lr={LR}", "--step-times"] + ([f"--inputs={inputs}"] if inputs else [])

    def parse(out):
        got = parse_memopt_run(out)
        if "step_ms_median" not in got:
            raise ValueError("no 'step times' line with a median")
        return {"step_ms": got["step_ms"], "step_ms_median": got["step_ms_median"],
                "planned_high_water_bytes": got.get("peak_bytes")}
    return run_measured(cmd, timeout, parse)


def run_measured(cmd, timeout, parse):
    """Runs cmd; its parsed output plus peak RSS, or status and error."""
    record = {"command": " ".join(cmd[:2] + ["..."] if "--worker" in cmd else cmd)}
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, text=True)
        waited = checkpoint.wait_with_usage(proc, timeout, poll=0.05)
        if waited is None:
            return {**record, "status": "timeout"}
        status, usage = waited
        out.seek(0)
        text = out.read()
    record["peak_rss_bytes"] = usage.ru_maxrss * 1024
    if os.waitstatus_to_exitcode(status) != 0:
        return {**record, "status": "error", "error": text.strip().splitlines()[-1:]}
    try:
        return {**record, "status": "ok", **parse(text)}
    except (ValueError, StopIteration, json.JSONDecodeError) as e:
        return {**record, "status": "error", "error": f"{e}: {text[-300:]}"}


# --------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------

def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--steps", type=int, default=8, help="steps per run (at least 3)")
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--memopt-run", default=os.path.join(ROOT, "build", "bin", "memopt-run"))
    p.add_argument("--output")
    p.add_argument("--timeout", type=int, default=600, help="seconds per run")
    p.add_argument("--quick", action="store_true",
                   help=f"{', '.join(QUICK_MODELS)}, one round of 3 steps")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        result = torch_worker(json.loads(args.worker))
        print(RESULT_TAG + json.dumps(result), flush=True)
        return 0
    models = list(QUICK_MODELS) if args.quick else [
        m.strip() for m in args.models.split(",") if m.strip()]
    bad = [m for m in models if m not in MODELS]
    if bad or not models:
        p.error(f"unknown model {', '.join(bad) or '(none)'}; choose from {', '.join(MODELS)}")
    if args.quick:
        args.rounds, args.steps = 1, 3
    if args.steps < 3 or args.rounds < 1:
        p.error("--steps must be at least 3 and --rounds at least 1")
    try:
        import torch
    except ImportError:
        print("cpu_peers: PyTorch is not installed here (import torch failed); "
              "install it as the docstring says", file=sys.stderr)
        return 2
    memopt_run = os.path.abspath(args.memopt_run)
    if not os.access(memopt_run, os.X_OK):
        print(f"cpu_peers: {memopt_run} is not an executable memopt-run; build "
              "memopt first (or pass --memopt-run)", file=sys.stderr)
        return 2
    output = args.output or (os.path.join(tempfile.gettempdir(), "cpu_peers-quick.json")
                             if args.quick else
                             os.path.join(ROOT, "bench", "results", "cpu_peers.json"))
    data = {"benchmark": "cpu_peers",
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "machine": checkpoint.machine(), "git": checkpoint.git_info(),
            "memopt_run": checkpoint.binary_info(memopt_run),
            "torch": torch.__version__,
            "config": {"rounds": args.rounds, "steps": args.steps, "models": models,
                       "optimizer": "sgd", "lr": LR},
            "rounds": []}
    with tempfile.TemporaryDirectory(prefix="cpu_peers.") as tmp:
        graphs, inputs = {}, {}
        for m in models:
            spec = MODELS[m]
            if "inputs" in spec:
                inputs[m] = os.path.join(tmp, f"{m}.inputs.safetensors")
                write_inputs(m, inputs[m])
            if "file" in spec:
                graphs[m] = spec["file"]
            elif "text" in spec:
                graphs[m] = os.path.join(tmp, f"{m}.mlir")
                with open(graphs[m], "w") as f:
                    f.write(spec["text"])
            else:
                graphs[m] = os.path.join(tmp, f"{m}.mlir")
                subprocess.run([sys.executable, GEN] + spec["gen"] + ["-o", graphs[m]],
                               check=True)
        for r in range(args.rounds):
            runs = []
            for m in models:
                variants = ["plain", "sdpa"] if MODELS[m]["torch"]["kind"] == "gpt2" else ["plain"]
                for v in variants:
                    log(f"round {r + 1} {m} pytorch {v} ...")
                    runs.append({"model": m, "system": "pytorch", "variant": v,
                                 **run_torch(m, v, args.steps, args.timeout)})
                log(f"round {r + 1} {m} memopt ...")
                runs.append({"model": m, "system": "memopt", "variant": "plain",
                             **run_memopt(memopt_run, graphs[m], args.steps, args.timeout,
                                          inputs.get(m))})
            data["rounds"].append(runs)
            checkpoint.write_json(output, data)
    log(f"wrote {output}")
    print_table(data)
    failed = [f"{x['model']} {x['system']}" for rnd in data["rounds"] for x in rnd
              if x["status"] != "ok"]
    if failed:
        log("cpu_peers: failed runs: " + ", ".join(failed))
        return 1
    return 0


def print_table(data):
    print("| model | memopt ms | PyTorch ms | memopt / PyTorch | PyTorch SDPA ms | "
          "memopt planned MiB | memopt / PyTorch peak RSS MiB |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for m in data["config"]["models"]:
        def times(system, variant="plain"):
            return [x["step_ms_median"] for rnd in data["rounds"] for x in rnd
                    if x["model"] == m and x["system"] == system
                    and x["variant"] == variant and x["status"] == "ok"]
        mem, pt, sdpa = times("memopt"), times("pytorch"), times("pytorch", "sdpa")
        ratios = [a / b for a, b in zip(mem, pt)]
        planned = [x.get("planned_high_water_bytes") for rnd in data["rounds"] for x in rnd
                   if x["model"] == m and x["system"] == "memopt" and x["status"] == "ok"]
        rss = {s: [x["peak_rss_bytes"] for rnd in data["rounds"] for x in rnd
                   if x["model"] == m and x["system"] == s and x["variant"] == "plain"
                   and x["status"] == "ok"] for s in ("memopt", "pytorch")}

        def med(v, f="{:.1f}"):
            return f.format(statistics.median(v)) if v else "–"
        print(f"| {m} | {med(mem)} | {med(pt)} | {med(ratios, '{:.2f}×')} | {med(sdpa)} | "
              f"{med([b / 2**20 for b in planned if b], '{:.1f}')} | "
              f"{med([b / 2**20 for b in rss['memopt']], '{:.0f}')} / "
              f"{med([b / 2**20 for b in rss['pytorch']], '{:.0f}')} |")


if __name__ == "__main__":
    sys.exit(main())
