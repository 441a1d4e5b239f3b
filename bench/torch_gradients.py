#!/usr/bin/env python3
"""memopt's training step against PyTorch's, gradient by gradient: one SGD
step of the same network from the same weights on the same batch, every
parameter's gradient, the loss and the batch-norm running statistics compared.

Usage: bench/torch_gradients.py [--model resnet50|gpt2] [--image-size S]
                                [--batch B] [--f64] [--lr LR]
                                [--memopt-run PATH] [--device cpu|cuda]
                                [--workdir DIR] [--tolerance T] [--output FILE]
                                [--seq S --layers L --dim D --heads H --vocab V]

Needs PyTorch (CPU is enough) and a built memopt-run; without torch it says
so and exits with 2. Exits with 1 when a checked error is over the tolerance
or memopt-run fails, 0 otherwise.

How (the models and the export are bench/gpu_compare_torch.py's, the graph
generation, name check and output parsing bench/gpu_compare.py's):

1. examples/generate_models.py writes the memopt graph; with --f64 every f32
   tensor type in it is rewritten to f64 (generate_models.py has no f64
   --dtype). The PyTorch mirror is built with the same seed and its parameter
   count, names and shapes are checked against the graph.
2. The mirror's initial weights and running statistics and one synthetic batch
   are written as .safetensors (f64 with --f64).
3. PyTorch runs one training-mode forward and backward on the CPU (in double
   with --f64) and updates every parameter by w - lr * grad.
4. `memopt-run MODEL.mlir --device=D --steps=1 --optimizer=sgd --lr=LR
   --load-weights W --inputs I --save-weights OUT` runs the same step.
5. memopt's gradient is recovered from the saved weights as (w0 - w1) / lr
   and compared with PyTorch's gradient recovered the same way from its own
   update (so the update's rounding is on both sides); relative error =
   ||g_memopt - g_torch|| / ||g_torch|| per parameter. PyTorch's .grad itself
   is compared too (rel_error_vs_grad). Running statistics are compared after
   the step the same way, and the loss memopt-run prints (6 decimals) with
   PyTorch's.

Without --f64 the step runs in f32 on both sides; PyTorch is then also run in
f64 as a reference, and each side's f32 gradient, rebuilt from the weights as
above, is compared with it (torch_f32_vs_f64, memopt_f32_vs_torch_f64), as is
PyTorch's raw .grad (torch_f32_grad_vs_f64). A rebuilt f32 gradient has a
floor of about ulp(w) / (sqrt(12) * lr * |g|) (w1 is stored in f32), the same
on both sides; a large --lr (e.g. 1e4) removes it.

Models: resnet50 (batch norm, no dropout). gpt2 has dropout (p 0.1 on the
attention probabilities) whose masks memopt draws from its own generator, so
the two steps could never agree; for gpt2 this script sets every dropout's p
to 0 in the generated graph and runs PyTorch's mirror in eval mode (which only
turns its dropout off: GPT-2 has no batch norm). GPT-2 is then checked without
dropout.

Tolerance: --tolerance (default 1e-9 with --f64) bounds every parameter's and
running statistic's relative error and the relative loss difference (the loss
at least to memopt-run's printed precision, 5e-7 absolute). Without --f64 the
errors are only printed unless --tolerance is given.

Prints Markdown tables; --output writes JSON (per-parameter errors, losses,
running-statistics errors, machine, git and binary metadata).
"""
import argparse
import datetime
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no bench/__pycache__
import checkpoint  # noqa: E402  (machine, git and binary info, JSON writing)
import gpu_compare  # noqa: E402  (generation, mirror check, memopt-run output parser)

# memopt-run prints the loss with "%.6f".
LOSS_PRINT_RESOLUTION = 5e-7


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="resnet50", choices=("resnet50", "gpt2"),
                   help="network (default resnet50; gpt2 runs with dropout off)")
    p.add_argument("--image-size", type=int, default=32,
                   help="ResNet-50 input height and width (default 32)")
    p.add_argument("--batch", type=int, default=4, help="batch size (default 4)")
    p.add_argument("--classes", type=int, default=1000,
                   help="ResNet-50 classes (default 1000)")
    p.add_argument("--seq", type=int, default=32, help="GPT-2 sequence (default 32)")
    p.add_argument("--layers", type=int, default=2, help="GPT-2 blocks (default 2)")
    p.add_argument("--dim", type=int, default=128, help="GPT-2 width (default 128)")
    p.add_argument("--heads", type=int, default=4, help="GPT-2 heads (default 4)")
    p.add_argument("--vocab", type=int, default=1000,
                   help="GPT-2 vocabulary (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="weights and data seed")
    p.add_argument("--f64", action="store_true",
                   help="rewrite the graph's f32 tensors to f64 and run PyTorch in double")
    p.add_argument("--lr", type=float, default=0.01, help="SGD learning rate (default 0.01)")
    p.add_argument("--memopt-run", default=os.path.join(ROOT, "build", "bin", "memopt-run"),
                   help="memopt-run binary (default build/bin/memopt-run)")
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda"),
                   help="where memopt-run runs (default cpu); PyTorch always runs on the CPU")
    p.add_argument("--workdir",
                   help="keep the graph, weights and batch here (default: a temporary "
                        "directory, removed afterwards)")
    p.add_argument("--tolerance", type=float,
                   help="largest relative error that passes (default 1e-9 with --f64; "
                        "without --f64 nothing is checked unless this is given)")
    p.add_argument("--output", help="write the results as JSON to this file")
    p.add_argument("--timeout", type=int, default=1800,
                   help="seconds memopt-run may take (default 1800)")
    return p.parse_args(argv)


def model_spec(args):
    spec = {"model": args.model, "seed": args.seed, "batch": args.batch}
    if args.model == "resnet50":
        spec.update(image_size=args.image_size, classes=args.classes)
    else:
        spec.update(seq=args.seq, layers=args.layers, dim=args.dim, heads=args.heads,
                    vocab=args.vocab)
    return spec


def rewrite_graph(text, f64, no_dropout):
    """The graph as this comparison runs it: f64 tensors, dropout off."""
    if f64:
        text = text.replace("xf32>", "xf64>").replace("tensor<f32>", "tensor<f64>")
    if no_dropout:
        text = text.replace("p = 1.000000e-01 : f64", "p = 0.000000e+00 : f64")
        if '"memopt.dropout"' in text and "p = 0.000000e+00" not in text:
            sys.exit("torch_gradients: could not turn the graph's dropout off")
    return text


def read_safetensors(torch, path):
    """``{name: tensor}`` of a .safetensors file (no extra package)."""
    dtypes = {"F64": torch.float64, "F32": torch.float32, "I64": torch.int64,
              "I32": torch.int32}
    with open(path, "rb") as f:
        blob = f.read()
    n = int.from_bytes(blob[:8], "little")
    header = json.loads(blob[8:8 + n])
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        start, end = (8 + n + o for o in entry["data_offsets"])
        out[name] = torch.frombuffer(bytearray(blob[start:end]),
                                     dtype=dtypes[entry["dtype"]]).reshape(entry["shape"])
    return out


def torch_step(torch, gt, spec, dtype, lr):
    """One PyTorch SGD step of the mirror in ``dtype``: the initial state, the
    batch, the loss, the gradients and the state after the step."""
    model = gt.build_model(spec).to(dtype)
    # GPT-2's mirror has no batch norm: eval mode only turns its dropout off.
    model.train(spec["model"] == "resnet50")
    state = gt.memopt_state(model)
    w0 = {n: t.detach().clone() for n, (t, _) in state.items()}
    inputs = gt.make_inputs(spec)
    if spec["model"] == "resnet50":
        inputs["input"] = inputs["input"].to(dtype)
        data = inputs["input"]
    else:
        data = inputs["input_ids"]
    loss = model(data, inputs["labels"])
    loss.backward()
    grads = {n: t.grad.detach().clone() for n, (t, k) in state.items() if k == "param"}
    with torch.no_grad():
        for n, (t, k) in state.items():
            if k == "param":
                t -= lr * t.grad
    w1 = {n: t.detach().clone() for n, (t, _) in state.items()}
    kinds = {n: k for n, (_, k) in state.items()}
    mirror = {"param_count": sum(p.numel() for p in model.parameters()),
              "arguments": {n: [k, list(t.shape)] for n, (t, k) in state.items()}}
    return {"model": model, "kinds": kinds, "w0": w0, "inputs": inputs,
            "loss": loss.item(), "grads": grads, "w1": w1, "mirror": mirror}


def rel(torch, a, b):
    a, b = a.double(), b.double()
    den = torch.linalg.vector_norm(b).item()
    num = torch.linalg.vector_norm(a - b).item()
    return num / den if den else (0.0 if num == 0 else float("inf"))


def run_memopt(args, mlir, weights, inputs, saved):
    cmd = [os.path.abspath(args.memopt_run), mlir, f"--device={args.device}", "--steps=1",
           "--optimizer=sgd", f"--lr={args.lr!r}", f"--load-weights={weights}",
           f"--inputs={inputs}", f"--save-weights={saved}"]
    record = {"command": " ".join(shlex.quote(c) for c in cmd)}
    log("   " + record["command"])
    started = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {**record, "status": "timeout"}
    record["wall_seconds"] = round(time.perf_counter() - started, 1)
    parsed = gpu_compare.parse_memopt_run(proc.stdout)
    record.update({k: v for k, v in parsed.items()
                   if k in ("losses", "function", "device", "kernels", "peak_bytes")})
    if proc.returncode != 0 or not parsed["losses"] or not os.path.exists(saved):
        err = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-5:]
        return {**record, "status": "error",
                "error": f"exit {proc.returncode}: " + " | ".join(err)}
    record["status"] = "ok"
    return record


def compare(torch, args, ref, saved, ref64):
    """Per-parameter and per-statistic rows."""
    params, stats = [], []
    for name, kind in ref["kinds"].items():
        w0 = ref["w0"][name].double()
        m1 = saved[name].double()
        t1 = ref["w1"][name].double()
        if kind == "param":
            g_m = (w0 - m1) / args.lr
            g_t = (w0 - t1) / args.lr
            grad = ref["grads"][name]
            row = {"name": name, "shape": list(grad.shape),
                   "rel_error": rel(torch, g_m, g_t),
                   "rel_error_vs_grad": rel(torch, g_m, grad),
                   "grad_norm": torch.linalg.vector_norm(grad.double()).item()}
            if ref64 is not None:
                # Both f32 sides are rebuilt from the updated weights, so
                # both carry the same rounding floor of about
                # ulp(w) / (sqrt(12) * lr * |g|): w1 = w0 - lr*g is stored
                # in f32. (PyTorch's raw .grad is kept for reference; a small
                # lr makes the floor dominate, a large one removes it.)
                row["torch_f32_vs_f64"] = rel(torch, g_t, ref64["grads"][name])
                row["torch_f32_grad_vs_f64"] = rel(torch, grad,
                                                   ref64["grads"][name])
                row["memopt_f32_vs_torch_f64"] = rel(torch, g_m, ref64["grads"][name])
            params.append(row)
        else:
            row = {"name": name, "rel_error": rel(torch, m1, t1)}
            if ref64 is not None:
                row["torch_f32_vs_f64"] = rel(torch, t1, ref64["w1"][name])
            stats.append(row)
    return params, stats


def summarise(rows, key):
    vals = [r[key] for r in rows]
    return {"max": max(vals), "median": statistics.median(vals)} if vals else {}


def print_tables(data):
    res = data["results"]
    p, s = res["parameters"], res["running_statistics"]
    cols = [("rel_error", "memopt vs PyTorch")]
    if p and "torch_f32_vs_f64" in p[0]:
        cols += [("torch_f32_vs_f64", "PyTorch f32 vs PyTorch f64"),
                 ("memopt_f32_vs_torch_f64", "memopt f32 vs PyTorch f64"),
                 ("torch_f32_grad_vs_f64", "PyTorch f32 .grad vs f64")]
    opts = data["options"]
    print(f"\n### {data['model']} ({', '.join(f'{k} {v}' for k, v in opts.items())}), "
          f"{data['precision']}, memopt-run on {data['memopt_device']}\n")
    print("| relative error | " + " | ".join(c[1] for c in cols) + " |")
    print("|---|" + "---:|" * len(cols))
    for stat in ("max", "median"):
        print(f"| parameter gradients ({len(p)}), {stat} | "
              + " | ".join(f"{summarise(p, c)[stat]:.2e}" for c, _ in cols) + " |")
    if s:
        print(f"| running statistics ({len(s)}), max | {summarise(s, 'rel_error')['max']:.2e}"
              + (f" | {summarise(s, 'torch_f32_vs_f64')['max']:.2e} | | |"
                 if len(cols) > 1 else " |"))
    loss = res["loss"]
    print(f"\nloss: PyTorch {loss['torch']:.10f}, memopt {loss['memopt']:.6f} "
          f"(printed to 6 decimals), difference {loss['abs_diff']:.1e}")
    print("\nworst parameters:\n")
    print("| parameter | shape | grad norm | " + " | ".join(c[1] for c in cols) + " |")
    print("|---|---|---:|" + "---:|" * len(cols))
    for r in sorted(p, key=lambda r: -r["rel_error"])[:5]:
        print(f"| {r['name']} | {'x'.join(map(str, r['shape']))} | {r['grad_norm']:.2e} | "
              + " | ".join(f"{r[c]:.2e}" for c, _ in cols) + " |")
    chk = data["check"]
    if chk["tolerance"] is None:
        print("\nnot checked (f32 without --tolerance)")
    else:
        print(f"\ntolerance {chk['tolerance']:g}: "
              + ("PASS" if chk["passed"] else "FAIL: " + "; ".join(chk["failures"][:10])))


def check(res, tolerance):
    failures = []
    if tolerance is None:
        return {"tolerance": None, "passed": None, "failures": []}
    for group in ("parameters", "running_statistics"):
        for r in res[group]:
            if not r["rel_error"] <= tolerance:
                failures.append(f"{r['name']} {r['rel_error']:.2e}")
    loss = res["loss"]
    allowed = max(tolerance * abs(loss["torch"]), LOSS_PRINT_RESOLUTION)
    if not loss["abs_diff"] <= allowed:
        failures.append(f"loss differs by {loss['abs_diff']:.2e} (allowed {allowed:.1e})")
    return {"tolerance": tolerance, "loss_abs_allowed": allowed,
            "passed": not failures, "failures": failures}


def run(args, torch, gt, work):
    spec = model_spec(args)
    dtype = torch.float64 if args.f64 else torch.float32
    mlir = os.path.join(work, f"{args.model}.mlir")
    log(f"== {args.model}: " + " ".join(gpu_compare.generator_args(spec)))
    text, count = gpu_compare.generate(spec, mlir)
    text = rewrite_graph(text, args.f64, args.model == "gpt2")
    with open(mlir, "w") as f:
        f.write(text)

    started = time.perf_counter()
    ref = torch_step(torch, gt, spec, dtype, args.lr)
    torch_seconds = time.perf_counter() - started
    gpu_compare.check_mirror(args.model, ref["mirror"], count,
                             gpu_compare.mlir_arguments(text))
    log(f"   PyTorch mirror checked: {count:,} parameters; loss {ref['loss']:.10f} "
        f"({torch_seconds:.1f} s)")
    ref64 = None if args.f64 else torch_step(torch, gt, spec, torch.float64, args.lr)

    weights = os.path.join(work, "weights.safetensors")
    inputs = os.path.join(work, "inputs.safetensors")
    saved = os.path.join(work, "memopt-after-step.safetensors")
    # gpu_compare_torch's writer knows no f64; its dtype table is a plain dict.
    gt._ST_DTYPES.setdefault(torch.float64, "F64")
    gt.write_safetensors(weights, ref["w0"])
    gt.write_safetensors(inputs, ref["inputs"])
    memopt = run_memopt(args, mlir, weights, inputs, saved)
    if memopt["status"] != "ok":
        return memopt, None
    params, stats = compare(torch, args, ref, read_safetensors(torch, saved), ref64)
    loss_m = memopt["losses"][0]
    res = {"parameters": params, "running_statistics": stats,
           "loss": {"torch": ref["loss"], "memopt": loss_m,
                    "abs_diff": abs(loss_m - ref["loss"]),
                    "torch_f64": ref64["loss"] if ref64 else None},
           "summary": {"parameters": summarise(params, "rel_error"),
                       "running_statistics": summarise(stats, "rel_error")}}
    if ref64 is not None:
        res["summary"]["parameters_torch_f32_vs_f64"] = summarise(params, "torch_f32_vs_f64")
    return memopt, res


def main(argv=None):
    args = parse_args(argv)
    try:
        import torch
        import gpu_compare_torch as gt
    except ImportError as e:
        log(f"torch_gradients: needs PyTorch ({e}); run it with a Python that has "
            "torch installed (CPU-only is enough), e.g. a virtual environment with "
            "`pip install torch`")
        return 2
    if not os.access(args.memopt_run, os.X_OK):
        log(f"torch_gradients: {args.memopt_run} is not an executable memopt-run")
        return 2
    tolerance = args.tolerance if args.tolerance is not None else (
        1e-9 if args.f64 else None)
    work = args.workdir or tempfile.mkdtemp(prefix="torch_gradients.")
    os.makedirs(work, exist_ok=True)
    started = time.perf_counter()
    try:
        memopt, res = run(args, torch, gt, work)
    finally:
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)
    data = {
        "benchmark": "torch_gradients",
        "model": args.model,
        "options": {k: v for k, v in model_spec(args).items() if k != "model"},
        "precision": "f64" if args.f64 else "f32",
        "lr": args.lr,
        "memopt_device": args.device,
        "torch_device": "cpu",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": checkpoint.machine(),
        "git": checkpoint.git_info(),
        "memopt_run": checkpoint.binary_info(os.path.abspath(args.memopt_run)),
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "memopt": memopt,
        "definitions": {
            "rel_error": "||g_memopt - g_torch|| / ||g_torch||, both gradients recovered "
                         "as (w0 - w1) / lr from the weights after one SGD step",
            "rel_error_vs_grad": "the same against PyTorch's .grad",
            "torch_f32_vs_f64": "(f32 runs) PyTorch's f32 .grad against its f64 .grad",
            "memopt_f32_vs_torch_f64": "(f32 runs) memopt's recovered f32 gradient "
                                       "against PyTorch's f64 .grad",
            "running_statistics.rel_error": "relative error of the batch-norm running "
                                            "mean/variance after the step",
        },
    }
    if res is None:
        data["check"] = {"tolerance": tolerance, "passed": False,
                         "failures": [f"memopt-run: {memopt.get('error', memopt['status'])}"]}
        log(f"torch_gradients: memopt-run failed: {memopt.get('error', memopt['status'])}")
    else:
        data["results"] = res
        data["check"] = check(res, tolerance)
    data["elapsed_seconds"] = round(time.perf_counter() - started, 1)
    if args.output:
        checkpoint.write_json(args.output, data)
        log(f"wrote {args.output}")
    if res is not None:
        print_tables(data)
    return 1 if data["check"]["passed"] is False else 0


if __name__ == "__main__":
    sys.exit(main())
