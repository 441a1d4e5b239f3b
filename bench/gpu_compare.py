#!/usr/bin/env python3
"""PyTorch against memopt on one GPU: peak memory, step time and loss of
ResNet-50, GPT-2, CIFAR ResNet-110 and U-Net training, plain and with each
memory-saving technique.

Usage: bench/gpu_compare.py [--quick] [--models resnet50,gpt2,cifar-resnet,unet]
                            [--batch-resnet B] [--batch-gpt2 B] [--seq S]
                            [--layers L] [--batch-cifar B] [--batch-unet B]
                            [--unet-image-size S] [--steps N] [--variants LIST]
                            [--memopt-run PATH] [--output FILE]
                            [--torch-memory-cap-gib G] [--timeout S]
       bench/gpu_compare.py --self-test

Needs a CUDA GPU, PyTorch with CUDA, and memopt built with the CUDA backend
(build/bin/memopt-run). Without torch or CUDA it says so and exits with 2.
--self-test needs neither: it checks the memopt-run output parser against
captured output and exits.

Both systems train the same network from the same start on the same batch:

1. examples/generate_models.py writes the memopt graph (resnet50 --batch B;
   gpt2 --batch B --seq S --layers L ...; cifar-resnet --depth 110 --batch B;
   unet --batch B --image-size S).
2. A worker builds the PyTorch mirror of that graph (gpu_compare_torch.py),
   checks its parameter count against generate_models.py --print-param-count
   and every parameter/state name and shape against the generated function's
   arguments (any difference skips that model, recorded as an error), and
   writes its seeded initial
   weights and one fixed synthetic batch as .safetensors files.
3. Every memopt variant runs `memopt-run MODEL.mlir --device=cuda --steps N
   --load-weights W --inputs I` (plus the variant's flags); every PyTorch
   variant runs in a fresh worker process, training on the same batch each
   step. With f32 and no dropout (ResNet-50) the first losses should agree
   closely; GPT-2's dropout masks differ between the systems.

Variants (PyTorch, eager, SGD lr 0.01 for ResNet-50 and Adam lr 0.001 for
GPT-2; memopt with the same optimizer and lr):

  plain               f32                          | memopt-run (no flags)
  checkpoint          checkpoint_sequential over   | --checkpoint=sqrt
                      the N blocks, round(sqrt N)
                      segments (at least 2; its
                      last segment is not
                      checkpointed), use_reentrant
                      =False; U-Net: every double
                      conv checkpointed
  checkpoint-optimal  (memopt only)                | --checkpoint=optimal
  amp                 autocast(float16)+GradScaler | --precision=fp16
  inplace             ReLU(inplace=True) and       | --inplace
                      `out += identity` (ResNet-50;
                      GPT-2 has no ReLU: skipped)
  all                 checkpoint + amp + inplace   | sqrt + fp16 + inplace
  all-optimal         (memopt only)                | optimal + fp16 + inplace
  tf32                (memopt only; PyTorch's      | --tf32 (TF32 convolutions
                      plain already runs its       |  and GEMMs)
                      convolutions in TF32)
  plain-ws1g          (memopt only)                | --conv-workspace=1GiB (every
  tf32-ws1g                                        |  convolution may use 1 GiB:
  amp-ws1g                                         |  cuDNN's faster algorithms)
                                                   |  with tf32 / amp's flags
  sdpa                (PyTorch only; GPT-2) plain  | (memopt's plain already
                      with scaled_dot_product_     |  fuses attention)
                      attention, PyTorch's fused
                      attention
  all-sdpa            (PyTorch only; GPT-2) all    |
                      with scaled_dot_product_
                      attention

Measurements (see "definitions" in the JSON): PyTorch's
torch.cuda.max_memory_allocated() over steps 2..N (reset after the warm-up
step 1) and the median of steps 2..N, each step timed between
torch.cuda.synchronize() calls, plus the mean over all N steps; memopt-run's
"measured high-water" (arena + arguments and constants + alignment), its
cudaMemGetInfo high-water minus the before-plan value, its mean step time
over all N steps and, from --step-times, each step's time and the median of
steps 2..N (each step timed until its updates are applied). Both report
the per-step loss. The driver-level view (cudaMemGetInfo high-water after any
step minus before the model) is recorded for PyTorch too.

Writes JSON (bench/results/gpu_compare.json; with --quick a temporary file
unless --output is given) and prints Markdown tables.
"""
import argparse
import datetime
import json
import os
import re
import shlex
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

MIB = 1024 ** 2
RESULT_TAG = "GPU_COMPARE_RESULT "

# variant -> (PyTorch switches or None for memopt-only, memopt-run flags or
# None for PyTorch-only)
VARIANTS = {
    "plain": ({"checkpoint": False, "amp": False, "inplace": False}, []),
    "checkpoint": ({"checkpoint": True, "amp": False, "inplace": False},
                   ["--checkpoint=sqrt"]),
    "checkpoint-optimal": (None, ["--checkpoint=optimal"]),
    "amp": ({"checkpoint": False, "amp": True, "inplace": False}, ["--precision=fp16"]),
    "inplace": ({"checkpoint": False, "amp": False, "inplace": True}, ["--inplace"]),
    "all": ({"checkpoint": True, "amp": True, "inplace": True},
            ["--checkpoint=sqrt", "--precision=fp16", "--inplace"]),
    "all-optimal": (None, ["--checkpoint=optimal", "--precision=fp16", "--inplace"]),
    "tf32": (None, ["--tf32"]),
    "plain-ws1g": (None, ["--conv-workspace=1GiB"]),
    "tf32-ws1g": (None, ["--tf32", "--conv-workspace=1GiB"]),
    "amp-ws1g": (None, ["--precision=fp16", "--conv-workspace=1GiB"]),
    "sdpa": ({"checkpoint": False, "amp": False, "inplace": False, "sdpa": True}, None),
    "all-sdpa": ({"checkpoint": True, "amp": True, "inplace": True, "sdpa": True}, None),
}

OPTIMIZER = {"resnet50": ("sgd", 0.01), "gpt2": ("adam", 0.001),
             "cifar-resnet": ("sgd", 0.01), "unet": ("sgd", 0.01)}

FULL = {"batch_resnet": 256, "batch_gpt2": 16, "seq": 1024, "layers": 12,
        "batch_cifar": 128, "batch_unet": 8, "unet_image_size": 256, "steps": 10}
QUICK = {"batch_resnet": 4, "batch_gpt2": 2, "seq": 128, "layers": 2,
         "batch_cifar": 4, "batch_unet": 1, "unet_image_size": 32, "steps": 3}

DEFINITIONS = {
    "peak_bytes": "PyTorch: torch.cuda.max_memory_allocated() over steps 2..N (peak "
                  "stats reset after step 1), everything the caching allocator handed "
                  "out: parameters, gradients, optimizer state, activations, "
                  "workspaces. memopt: memopt-run's 'measured high-water' = arena + "
                  "arguments and constants (parameters, state, data, optimizer "
                  "state) + alignment",
    "device_delta_bytes": "cudaMemGetInfo's used bytes: the high-water after any "
                          "step minus the value before the model (PyTorch: after "
                          "CUDA init; memopt: 'bytes in use before the plan'); "
                          "includes PyTorch's cached-but-free blocks and "
                          "library workspaces outside either allocator",
    "step_ms_median": "median of steps 2..N (PyTorch: each between "
                      "torch.cuda.synchronize() calls; memopt: memopt-run "
                      "--step-times, each from its start to its applied updates)",
    "step_ms_mean_all": "mean over all N steps, the warm-up step included "
                        "(memopt-run's 'ms per step'; PyTorch likewise)",
    "losses": "the loss of every step (PyTorch: unscaled; memopt: 'step i/N loss X')",
}


def log(*args):
    print(*args, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# memopt-run output
# --------------------------------------------------------------------------

_STEP_RE = re.compile(r"^(?:\[[# ]*\] )?step (\d+)/(\d+) loss (\S+)$")
_SUMMARY_RE = re.compile(
    r"^loss (\S+) -> (\S+) over (\d+) steps, ([\d.]+) ms per step$")
_KERNELS_RE = re.compile(r"^@(\S+) on (\S+): (\d+) kernels$")
_STEP_TIMES_RE = re.compile(
    r"^step times \(ms\): ([\d. ]+?)(?:; median after the first ([\d.]+))?$")
_ARENA_RE = re.compile(
    r"^arena: (\d+) bytes planned; arguments and constants: (\d+) bytes$")
_SCALE_RE = re.compile(
    r"^loss scale: (\S+) -> (\S+), (\d+) of (\d+) steps skipped")
_MEMORY_RE = re.compile(
    r"^memory: measured high-water (\d+) bytes = arena (\d+) \+ arguments and "
    r"constants (\d+) \+ alignment (\d+)$")
_DEVICE_RE = re.compile(
    r"^device memory \(cudaMemGetInfo\): (\d+) bytes in use before the plan.*?"
    r"high-water (\d+) after steps, (\d+) more$")


def parse_memopt_run(text):
    """The measurements in memopt-run's standard output (non-interactive
    form: one 'step i/N loss X' line per step; a terminal's '\\r' progress
    bar is split into its updates). Absent lines give absent keys."""
    out = {"losses": []}
    for line in re.split(r"[\r\n]+", text):
        line = line.strip()
        if m := _STEP_RE.match(line):
            out["losses"].append(float(m.group(3)))
            out["steps"] = int(m.group(2))
        elif m := _SUMMARY_RE.match(line):
            out.update(loss_first=float(m.group(1)), loss_last=float(m.group(2)),
                       step_ms_mean_all=float(m.group(4)))
        elif m := _STEP_TIMES_RE.match(line):
            out["step_ms"] = [float(t) for t in m.group(1).split()]
            if m.group(2):
                out["step_ms_median"] = float(m.group(2))
        elif m := _KERNELS_RE.match(line):
            out.update(function=m.group(1), device=m.group(2),
                       kernels=int(m.group(3)))
        elif m := _ARENA_RE.match(line):
            out.update(arena_planned_bytes=int(m.group(1)),
                       persistent_bytes=int(m.group(2)))
        elif m := _SCALE_RE.match(line):
            out.update(loss_scale_initial=float(m.group(1)),
                       loss_scale_final=float(m.group(2)),
                       skipped_steps=int(m.group(3)))
        elif m := _MEMORY_RE.match(line):
            out.update(peak_bytes=int(m.group(1)), arena_bytes=int(m.group(2)),
                       arguments_and_constants_bytes=int(m.group(3)),
                       alignment_bytes=int(m.group(4)))
        elif m := _DEVICE_RE.match(line):
            out.update(device_before_bytes=int(m.group(1)),
                       device_high_water_bytes=int(m.group(2)),
                       device_delta_bytes=int(m.group(3)))
    return out


# Real output of `build/bin/memopt-run examples/cnn.mlir --device=cpu --steps=3
# --precision=fp16 --step-times` (CPU: no cudaMemGetInfo line).
SAMPLE_CPU = """\
@cnn_train on cpu: 67 kernels
arena: 8917376 bytes planned; arguments and constants: 774320 bytes
step 1/3 loss 2.320480
step 2/3 loss 2.317322
step 3/3 loss 2.297581
loss 2.320480 -> 2.297581 over 3 steps, 245.7 ms per step
step times (ms): 254.4 236.5 239.5; median after the first 238.0
loss scale: 65536 -> 65536, 0 of 3 steps skipped (inf/NaN gradients)
memory: measured high-water 9691780 bytes = arena 8917376 + arguments and constants 774320 + alignment 84
"""

# FORMAT ONLY, not a measurement: the cudaMemGetInfo line as
# tools/memopt-run/memopt-run.cpp writes it, with made-up round numbers, and
# the progress bar a terminal gets.
SAMPLE_FORMAT = (
    "[###############               ] step 1/2 loss 1.500000\r"
    "[##############################] step 2/2 loss 1.250000\n"
    "device memory (cudaMemGetInfo): 1000 bytes in use before the plan (CUDA "
    "context, libraries), high-water 3000 after steps, 2000 more\n")


def self_test():
    got = parse_memopt_run(SAMPLE_CPU)
    want = {"losses": [2.32048, 2.317322, 2.297581], "steps": 3,
            "function": "cnn_train", "device": "cpu", "kernels": 67,
            "arena_planned_bytes": 8917376, "persistent_bytes": 774320,
            "loss_first": 2.32048, "loss_last": 2.297581, "step_ms_mean_all": 245.7,
            "step_ms": [254.4, 236.5, 239.5], "step_ms_median": 238.0,
            "loss_scale_initial": 65536.0, "loss_scale_final": 65536.0,
            "skipped_steps": 0, "peak_bytes": 9691780, "arena_bytes": 8917376,
            "arguments_and_constants_bytes": 774320, "alignment_bytes": 84}
    assert got == want, f"CPU sample: got {got}"
    assert got["peak_bytes"] == (got["arena_bytes"] + got["alignment_bytes"]
                                 + got["arguments_and_constants_bytes"])
    got = parse_memopt_run(SAMPLE_FORMAT)
    want = {"losses": [1.5, 1.25], "steps": 2, "device_before_bytes": 1000,
            "device_high_water_bytes": 3000, "device_delta_bytes": 2000}
    assert got == want, f"format sample: got {got}"
    print("gpu_compare: self-test passed (memopt-run output parser)")
    return 0


# --------------------------------------------------------------------------
# Workers (separate processes, so that every PyTorch run starts with an empty
# caching allocator and a fresh peak, and an OOM cannot leak into the next)
# --------------------------------------------------------------------------

def worker(request):
    """Run one request in this process and print its JSON result line."""
    req = json.loads(request)
    try:
        import torch
        import gpu_compare_torch as gt
        if req["kind"] == "probe":
            ok = torch.cuda.is_available()
            res = {"torch": torch.__version__, "cuda_available": ok,
                   "cuda": torch.version.cuda,
                   "cudnn": torch.backends.cudnn.version() if ok else None}
            if ok:
                props = torch.cuda.get_device_properties(0)
                res.update(gpu_name=props.name, gpu_total_memory_bytes=props.total_memory,
                           gpu_count=torch.cuda.device_count())
        elif req["kind"] == "export":
            res = gt.export(req["spec"], req["weights"], req["inputs"])
        else:
            try:
                res = gt.train(req["spec"], req["variant"])
                res["status"] = "ok"
            except torch.cuda.OutOfMemoryError as e:
                res = {"status": "oom", "error": str(e).splitlines()[0]}
    except Exception as e:  # noqa: BLE001 - reported in the JSON
        res = {"status": "error", "error": f"{type(e).__name__}: {e}"}
    print(RESULT_TAG + json.dumps(res), flush=True)
    return 0


def run_worker(request, timeout):
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", json.dumps(request)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "error": f"worker ran over {timeout} s"}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(RESULT_TAG):
            return json.loads(line[len(RESULT_TAG):])
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
    return {"status": "error",
            "error": f"worker exited {proc.returncode}: " + " | ".join(tail)}


# --------------------------------------------------------------------------
# The comparison
# --------------------------------------------------------------------------

_ARG_RE = re.compile(r"^\s+%([A-Za-z_][\w$.]*): tensor<((?:\d+x)*)(\w+)>"
                     r"(?: \{memopt\.(param|state)\})?,?$", re.M)


def mlir_arguments(text):
    """``{name: [kind, shape]}`` of the generated function's param/state args."""
    return {m.group(1): [m.group(4), [int(d) for d in m.group(2).split("x") if d]]
            for m in _ARG_RE.finditer(text) if m.group(4)}


def generator_args(spec):
    if spec["model"] in ("resnet50", "unet"):
        return [spec["model"], "--batch", str(spec["batch"]),
                "--image-size", str(spec["image_size"]), "--classes", str(spec["classes"])]
    if spec["model"] == "cifar-resnet":
        return ["cifar-resnet", "--depth", str(spec["depth"]), "--batch", str(spec["batch"]),
                "--image-size", str(spec["image_size"]), "--classes", str(spec["classes"])]
    return ["gpt2", "--batch", str(spec["batch"]), "--seq", str(spec["seq"]),
            "--layers", str(spec["layers"]), "--dim", str(spec["dim"]),
            "--heads", str(spec["heads"]), "--vocab", str(spec["vocab"])]


def generate(spec, path):
    """Write the memopt graph; return (its text, the generator's parameter count)."""
    args = [sys.executable, GEN] + generator_args(spec)
    subprocess.run(args + ["-o", path], check=True)
    count = int(subprocess.run(args + ["--print-param-count"], check=True,
                               capture_output=True, text=True).stdout)
    with open(path) as f:
        return f.read(), count


def check_mirror(model, exported, count, mlir_args):
    """What keeps the PyTorch model from being the generated graph (none: it is)."""
    problems = []
    if exported["param_count"] != count:
        problems.append(f"PyTorch has {exported['param_count']:,} parameters, "
                        f"generate_models.py --print-param-count says {count:,}")
    torch_args = exported["arguments"]
    for name in sorted(set(mlir_args) | set(torch_args)):
        if name not in torch_args:
            problems.append(f"{name}: in the MLIR, not in the PyTorch model")
        elif name not in mlir_args:
            problems.append(f"{name}: in the PyTorch model, not in the MLIR")
        elif torch_args[name] != mlir_args[name]:
            problems.append(f"{name}: PyTorch {torch_args[name]} vs MLIR {mlir_args[name]}")
    return problems


def run_memopt(memopt_run, mlir, spec, flags, weights, inputs, timeout):
    optimizer, lr = OPTIMIZER[spec["model"]]
    cmd = [memopt_run, mlir, f"--device={spec['device']}", f"--steps={spec['steps']}",
           f"--optimizer={optimizer}", f"--lr={lr}", f"--load-weights={weights}",
           f"--inputs={inputs}", "--step-times"] + flags
    record = {"command": " ".join(shlex.quote(c) for c in cmd)}
    started = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {**record, "status": "timeout", "error": f"ran over {timeout} s"}
    record["wall_seconds"] = round(time.perf_counter() - started, 1)
    record.update(parse_memopt_run(proc.stdout))
    if proc.returncode != 0 or "peak_bytes" not in record:
        err = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-3:]
        oom = "out of memory" in proc.stderr.lower()
        return {**record, "status": "oom" if oom else "error",
                "error": f"exit {proc.returncode}: " + " | ".join(err)}
    record["status"] = "ok"
    return record


def model_spec(model, args, cfg):
    optimizer, lr = OPTIMIZER[model]
    spec = {"model": model, "steps": cfg["steps"], "seed": args.seed,
            "optimizer": optimizer, "lr": lr, "device": args.device,
            "memory_cap_gib": args.torch_memory_cap_gib}
    if model == "resnet50":
        spec.update(batch=cfg["batch_resnet"], image_size=args.image_size, classes=1000)
    elif model == "cifar-resnet":
        spec.update(batch=cfg["batch_cifar"], image_size=32, classes=10, depth=110)
    elif model == "unet":
        spec.update(batch=cfg["batch_unet"], image_size=cfg["unet_image_size"], classes=2)
    else:
        spec.update(batch=cfg["batch_gpt2"], seq=cfg["seq"], layers=cfg["layers"],
                    dim=args.dim, heads=args.heads, vocab=args.vocab)
    return spec


def compare_model(model, spec, variants, args, tmp, add):
    """Runs every variant of one model; add(record) keeps each result."""
    mlir = os.path.join(tmp, f"{model}.mlir")
    weights = os.path.join(tmp, f"{model}.weights.safetensors")
    inputs = os.path.join(tmp, f"{model}.inputs.safetensors")
    log(f"== {model}: " + " ".join(generator_args(spec)))
    text, count = generate(spec, mlir)
    exported = run_worker({"kind": "export", "spec": spec, "weights": weights,
                           "inputs": inputs}, args.timeout)
    base = {"model": model, "param_count": count,
            "options": {k: v for k, v in spec.items() if k not in ("model",)}}
    problems = ([f"exporting the PyTorch model: {exported['error']}"]
                if "error" in exported else
                check_mirror(model, exported, count, mlir_arguments(text)))
    if problems:
        log(f"gpu_compare: the PyTorch {model} does not mirror the generated graph:\n  "
            + "\n  ".join(problems[:20]))
        add({**base, "system": "both", "variant": "mirror", "status": "error",
             "error": "; ".join(problems[:20])})
        return
    log(f"   PyTorch mirror checked: {count:,} parameters, "
        f"{len(exported['arguments'])} parameter/state tensors match the MLIR")
    for variant in variants:
        switches, flags = VARIANTS[variant]
        if "pytorch" in args.systems:
            if switches is None:
                pass  # memopt-only strategy
            elif model == "gpt2" and variant == "inplace":
                add({**base, "system": "pytorch", "variant": variant,
                     "status": "skipped", "note": "GPT-2 has no ReLU to make in place"})
            elif model != "gpt2" and switches.get("sdpa"):
                pass  # attention variants: GPT-2 only
            else:
                log(f"   pytorch {variant} ...")
                res = run_worker({"kind": "train", "spec": spec, "variant": switches},
                                 args.timeout)
                rec = {**base, "system": "pytorch", "variant": variant,
                       "switches": switches, **res}
                if model == "gpt2" and switches["inplace"]:
                    rec["note"] = "GPT-2 has no ReLU: in place changes nothing"
                add(rec)
                log(f"     {summary(rec)}")
        if "memopt" in args.systems and flags is not None:
            log(f"   memopt {variant} ...")
            res = run_memopt(args.memopt_run, mlir, spec, flags, weights, inputs,
                             args.timeout)
            rec = {**base, "system": "memopt", "variant": variant, "flags": flags, **res}
            add(rec)
            log(f"     {summary(rec)}")


# --------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------

def mib(b):
    return "–" if b is None else f"{b / MIB:,.0f}"


def ms(v):
    return "–" if v is None else f"{v:,.1f}"


def summary(rec):
    if rec.get("status") != "ok":
        return f"{rec.get('status')}: {rec.get('error', rec.get('note', ''))}"
    losses = rec.get("losses") or [None]
    return (f"peak {mib(rec.get('peak_bytes'))} MiB, "
            f"{ms(rec.get('step_ms_median', rec.get('step_ms_mean_all')))} ms/step, "
            f"loss {losses[0]} -> {losses[-1]}")


def print_tables(data):
    for model in data["config"]["models"]:
        rows = [r for r in data["results"] if r["model"] == model]
        ref = next((r.get("peak_bytes") for r in rows if r["system"] == "pytorch"
                    and r["variant"] == "plain" and r.get("status") == "ok"), None)
        if not rows:
            continue
        shown = ("depth", "batch", "image_size", "seq", "layers", "steps")
        opts = rows[0]["options"]
        print(f"\n### {model}: " + ", ".join(f"{k} {opts[k]}" for k in shown if k in opts)
              + "\n")
        print("| system | variant | status | peak MiB | vs PyTorch plain | "
              "cudaMemGetInfo Δ MiB | median ms (2..N) | mean ms (1..N) | "
              "loss first → last |")
        print("|---|---|---|---:|---:|---:|---:|---:|---|")
        for r in rows:
            ok = r.get("status") == "ok"
            peak = r.get("peak_bytes") if ok else None
            ratio = f"{peak / ref:.2f}×" if peak and ref else "–"
            losses = r.get("losses") or []
            loss = f"{losses[0]:.4f} → {losses[-1]:.4f}" if ok and losses else "–"
            status = r.get("status", "?")
            print(f"| {r['system']} | {r['variant']} | {status} | {mib(peak)} | {ratio} | "
                  f"{mib(r.get('device_delta_bytes') if ok else None)} | "
                  f"{ms(r.get('step_ms_median') if ok else None)} | "
                  f"{ms(r.get('step_ms_mean_all') if ok else None)} | {loss} |")


# --------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------

def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="small batches and sequence, 2 GPT-2 layers, 3 steps "
                        "(checks that the script works)")
    p.add_argument("--self-test", action="store_true",
                   help="check the memopt-run output parser and exit")
    p.add_argument("--models", default="resnet50,gpt2,cifar-resnet,unet",
                   help="comma-separated: resnet50, gpt2, cifar-resnet (depth 110), "
                        "unet (default all four)")
    p.add_argument("--variants", default=",".join(VARIANTS),
                   help="comma-separated subset of: " + ", ".join(VARIANTS))
    p.add_argument("--systems", default="pytorch,memopt",
                   help="comma-separated: pytorch, memopt (default both)")
    p.add_argument("--batch-resnet", type=int,
                   help=f"ResNet-50 batch (default {FULL['batch_resnet']}, "
                        f"quick {QUICK['batch_resnet']})")
    p.add_argument("--batch-gpt2", type=int,
                   help=f"GPT-2 batch (default {FULL['batch_gpt2']}, "
                        f"quick {QUICK['batch_gpt2']})")
    p.add_argument("--seq", type=int,
                   help=f"GPT-2 sequence length (default {FULL['seq']}, quick {QUICK['seq']})")
    p.add_argument("--layers", type=int,
                   help=f"GPT-2 blocks (default {FULL['layers']}, quick {QUICK['layers']})")
    p.add_argument("--batch-cifar", type=int,
                   help=f"CIFAR ResNet-110 batch (default {FULL['batch_cifar']}, "
                        f"quick {QUICK['batch_cifar']})")
    p.add_argument("--batch-unet", type=int,
                   help=f"U-Net batch (default {FULL['batch_unet']}, "
                        f"quick {QUICK['batch_unet']})")
    p.add_argument("--unet-image-size", type=int,
                   help=f"U-Net input height and width, a multiple of 16 (default "
                        f"{FULL['unet_image_size']}, quick {QUICK['unet_image_size']})")
    p.add_argument("--dim", type=int, default=768, help="GPT-2 width (default 768)")
    p.add_argument("--heads", type=int, default=12, help="GPT-2 heads (default 12)")
    p.add_argument("--vocab", type=int, default=50257,
                   help="GPT-2 vocabulary (default 50257)")
    p.add_argument("--image-size", type=int, default=224,
                   help="ResNet-50 input height and width (default 224)")
    p.add_argument("--steps", type=int,
                   help=f"training steps, at least 2; step 1 is warm-up "
                        f"(default {FULL['steps']}, quick {QUICK['steps']})")
    p.add_argument("--seed", type=int, default=0, help="weights and data seed")
    p.add_argument("--memopt-run", default=os.path.join(ROOT, "build", "bin", "memopt-run"),
                   help="memopt-run binary (default build/bin/memopt-run)")
    p.add_argument("--torch-memory-cap-gib", type=float,
                   help="limit each PyTorch run to this much GPU memory "
                        "(set_per_process_memory_fraction), to see which variants fit "
                        "a smaller GPU; memopt is not capped")
    p.add_argument("--timeout", type=int, default=900,
                   help="seconds per run before it is recorded as a timeout")
    p.add_argument("--output", help="JSON file (default bench/results/gpu_compare.json; "
                                     "with --quick a temporary file)")
    p.add_argument("--device", default="cuda", choices=("cuda", "cpu"),
                   help=argparse.SUPPRESS)  # cpu: developer smoke test only
    p.add_argument("--worker", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.models = [m.strip() for m in args.models.split(",") if m.strip()]
    args.variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    args.systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    for what, given, allowed in (("model", args.models, OPTIMIZER),
                                 ("variant", args.variants, VARIANTS),
                                 ("system", args.systems, ("pytorch", "memopt"))):
        bad = [g for g in given if g not in allowed]
        if bad or not given:
            p.error(f"unknown {what} {', '.join(bad) or '(none given)'}; "
                    f"choose from {', '.join(allowed)}")
    cfg = dict(QUICK if args.quick else FULL)
    for key in cfg:
        if getattr(args, key) is not None:
            cfg[key] = getattr(args, key)
    if cfg["steps"] < 2:
        p.error("--steps must be at least 2 (step 1 is warm-up)")
    if cfg["unet_image_size"] % 16:
        p.error("--unet-image-size must be a multiple of 16 (four 2x2 max pools)")
    if min(cfg.values()) < 1:
        p.error("batches, --seq and --layers must be positive")
    if args.dim % args.heads:
        p.error("--dim must be divisible by --heads")
    return args, cfg


def check_environment(args):
    """(probe result) or exit 2 with a message saying what is missing."""
    try:
        import torch  # noqa: F401  (imported here only to see that it is there)
    except ImportError:
        print("gpu_compare: PyTorch is not installed here (import torch failed); "
              "run this on the GPU machine, where torch with CUDA is installed. "
              "`bench/gpu_compare.py --self-test` checks the memopt-run parser "
              "without it.", file=sys.stderr)
        sys.exit(2)
    # CUDA is queried in a worker so that this process never holds a context
    # (memopt-run's cudaMemGetInfo figures are device-wide).
    probe = run_worker({"kind": "probe"}, 300)
    if "error" in probe:
        print(f"gpu_compare: cannot query PyTorch: {probe['error']}", file=sys.stderr)
        sys.exit(2)
    if args.device == "cuda" and not probe["cuda_available"]:
        print(f"gpu_compare: PyTorch {probe['torch']} sees no CUDA device "
              "(torch.cuda.is_available() is False); run this on the GPU machine.",
              file=sys.stderr)
        sys.exit(2)
    if "memopt" in args.systems and not os.access(args.memopt_run, os.X_OK):
        print(f"gpu_compare: {args.memopt_run} is not an executable memopt-run; "
              "build memopt with CUDA first (or pass --memopt-run)", file=sys.stderr)
        sys.exit(2)
    return probe


def main(argv=None):
    args, cfg = parse_args(argv)
    if args.worker:
        return worker(args.worker)
    if args.self_test:
        return self_test()
    args.memopt_run = os.path.abspath(args.memopt_run)
    probe = check_environment(args)
    output = args.output or (
        os.path.join(tempfile.gettempdir(), "gpu_compare-quick.json") if args.quick
        else os.path.join(ROOT, "bench", "results", "gpu_compare.json"))
    data = {
        "benchmark": "gpu_compare",
        "mode": "quick" if args.quick else "full",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": {**checkpoint.machine(),
                    "gpu_name": probe.get("gpu_name"),
                    "gpu_total_memory_bytes": probe.get("gpu_total_memory_bytes"),
                    "gpu_count": probe.get("gpu_count")},
        "git": checkpoint.git_info(),
        "torch": {"version": probe["torch"], "cuda": probe["cuda"],
                  "cudnn": probe["cudnn"]},
        "memopt_run": (checkpoint.binary_info(args.memopt_run)
                       if os.access(args.memopt_run, os.X_OK) else None),
        "config": {**cfg, "models": args.models, "variants": args.variants,
                   "systems": args.systems, "device": args.device,
                   "torch_memory_cap_gib": args.torch_memory_cap_gib,
                   "seed": args.seed},
        "definitions": DEFINITIONS,
        "results": [],
    }
    started = time.perf_counter()

    def add(record):
        # Written after every run, so that a run cut short keeps what it measured.
        data["results"].append(record)
        data["elapsed_seconds"] = round(time.perf_counter() - started, 1)
        checkpoint.write_json(output, data)

    with tempfile.TemporaryDirectory(prefix="gpu_compare.") as tmp:
        for model in args.models:
            spec = model_spec(model, args, cfg)
            compare_model(model, spec, args.variants, args, tmp, add)
    data["elapsed_seconds"] = round(time.perf_counter() - started, 1)
    checkpoint.write_json(output, data)
    log(f"wrote {output} in {data['elapsed_seconds']} s")
    print_tables(data)
    failed = [f"{r['model']} {r['system']} {r['variant']}" for r in data["results"]
              if r.get("status") not in ("ok", "skipped", "oom")]
    if failed:
        log("gpu_compare: failed runs: " + ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
