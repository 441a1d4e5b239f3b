#!/usr/bin/env python3
"""Models in through ONNX: PyTorch exports, memopt imports and trains, and the
first training step is compared with PyTorch's, gradient by gradient.

Usage: bench/onnx_vs_torch.py [--models resnet18,mobilenet_v2,gpt,bert,vit,gptmask,llama,pool,mobilenet,mlp,padenc,sdpamask,padids,pademb,extrema]
                              [--exporters ts,dyn,dynopt] [--batch B]
                              [--image-size S] [--dtypes f32,f64] [--lr LR]
                              [--build DIR] [--workdir DIR] [--output FILE]
                              [--quick]

Needs PyTorch and torchvision (CPU is enough) and a built memopt
(build/bin/memopt-translate, memopt-run); without torch it says so and exits
with 2. Exits 1 when an error is over its tolerance (f32 1e-5, f64 1e-10) or
a tool fails.

For every model, exporter and dtype:

1. The PyTorch model is built with a fixed seed (torchvision's ResNet-18 and
   MobileNetV2 with weights=None, MobileNetV2's classifier dropout 0 since
   no two RNGs draw the same mask; a GPT-2-style stack of pre-norm blocks: fused QKV linear
   split three ways, x.view(B, T, heads, d).transpose(1, 2) from x.size(),
   scaled attention with an additive causal mask buffer, erf GELU MLP,
   learned positions sliced to T, LM head; and the models of the importer's
   tests, test/Target/ONNX/Inputs/torch/families.py, on their batches: a
   BERT-style encoder with input_ids, token_type_ids and an attention_mask,
   a ViT of nn.TransformerEncoderLayer, a GPT decoder with a boolean causal
   mask and a biased LM head, a LLaMA-style decoder, masked mean pooling over
   a boolean padding mask, a scaled-down MobileNetV2, an MLP with SiLU and
   tanh GELU, encoders with a boolean key-padding mask applied by
   masked_fill and torch.where, and by SDPA's attn_mask, one that computes
   that mask from its ids, and an nn.Embedding with a padding_idx) and, for
   f64, converted
   with .double().
2. torch.onnx.export writes it, exactly as a user would, nothing edited
   afterwards: `ts` is dynamo=False (opset 17, training=TrainingMode.TRAINING
   so batch norm stays batch norm, do_constant_folding=False), `dyn` is
   dynamo=True, optimize=False, and `dynopt` dynamo=True with its default
   optimiser, which folds parameters into new initializers: the importer
   must refuse it, naming the flags to use (counted right when it does),
   unless it changed no parameter (the MLP), when it must train as PyTorch
   does like the other exports.
3. `memopt-translate --import-onnx model.onnx --loss=cross_entropy
   --param-names=params.json --weights=w0.safetensors -o model.mlir`
   imports it (params.json: every named_parameters() name and shape; the
   ts exports of resnet18, mobilenet_v2 and gpt are imported without it, the
   transposed MatMul weights of gpt matched below).
4. `memopt-run model.mlir --device=cpu --steps=1 --optimizer=sgd --lr=LR
   --load-weights=w0 --inputs=batch --save-weights=w1 --report=R` runs one
   step on the same batch.
5. PyTorch runs the same step (train mode, cross-entropy, SGD). Each side's
   gradient is rebuilt from its own update as (w0 - w1) / lr, so both carry
   the same rounding; PyTorch's .grad is compared too. The error of a
   gradient is ||memopt - PyTorch|| / ||PyTorch||, with the denominator at
   least 1% of the largest gradient's norm: some gradients are zero in exact
   arithmetic and rounding noise in both frameworks (MobileNetV2's
   projection batch norms feed only further batch norms, which cancel any
   shift, so their biases' gradients are noise), where a plain relative
   error means nothing (`below_floor` marks them); running statistics
   likewise, against 1% of the largest of their kind. Parameters are matched
   by name; an initializer the exporter made (a Linear's weight transposed for
   MatMul, named onnx::MatMul_N) is matched to the parameter it equals
   (transposed). Running statistics are compared after the step.
6. Memory on the CPU: memopt's report (peak_bytes, saved_for_backward_bytes)
   against PyTorch's bytes saved for backward, counted with
   torch.autograd.graph.saved_tensors_hooks over distinct storages.
7. For f32, the conditioning of the step: PyTorch's step in f64 on the same
   (exactly widened) weights and batch, and each f32 gradient's distance
   from it, memopt's and PyTorch's own (`max_rel_error_vs_f64`).

Writes JSON (bench/results/onnx_vs_torch.json; --quick: a temporary file) and
prints the tables docs/benchmarks.md shows.
"""

import argparse
import datetime
import json
import math
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import checkpoint  # noqa: E402  (machine and git info, JSON writing)
import gpu_compare  # noqa: E402  (memopt-run output parser)

TOLERANCE = {"f32": 1e-5, "f64": 1e-10}


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default="resnet18,mobilenet_v2,gpt,bert,vit,gptmask,llama,pool,mobilenet,mlp,padenc,sdpamask,padids,pademb,extrema")
    p.add_argument("--exporters", default="ts,dyn,dynopt")
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--image-size", type=int, default=64)
    p.add_argument("--dtypes", default="f32,f64")
    p.add_argument("--lr", type=float, default=1e4,
                   help="SGD learning rate of the compared step; a large one "
                        "keeps the rebuilt gradient's rounding floor low")
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--workdir")
    p.add_argument("--output")
    p.add_argument("--quick", action="store_true",
                   help="ResNet-18 at 64x64, batch 2, f32 only")
    p.add_argument("--timeout", type=int, default=1200)
    args = p.parse_args(argv)
    if args.quick:
        args.models, args.batch, args.image_size, args.dtypes = "resnet18", 2, 64, "f32"
        args.exporters = "ts"
    return args


def gpt_module(torch):
    nn, F = torch.nn, torch.nn.functional

    class Block(nn.Module):
        def __init__(self, dim, heads, seq):
            super().__init__()
            self.heads = heads
            self.ln1 = nn.LayerNorm(dim)
            self.qkv = nn.Linear(dim, 3 * dim)
            self.proj = nn.Linear(dim, dim)
            self.ln2 = nn.LayerNorm(dim)
            self.fc = nn.Linear(dim, 4 * dim)
            self.out = nn.Linear(4 * dim, dim)
            mask = torch.full((seq, seq), float("-inf")).triu(1)
            self.register_buffer("mask", mask)

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
            q = q.view(B, T, self.heads, C // self.heads).transpose(1, 2)
            k = k.view(B, T, self.heads, C // self.heads).transpose(1, 2)
            v = v.view(B, T, self.heads, C // self.heads).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) / math.sqrt(C // self.heads)
            att = F.softmax(att + self.mask[:T, :T], dim=-1)
            y = (att @ v).transpose(1, 2).reshape(B, T, C)
            x = x + self.proj(y)
            return x + self.out(F.gelu(self.fc(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self, vocab=512, seq=32, dim=64, heads=4, layers=2):
            super().__init__()
            self.wte = nn.Embedding(vocab, dim)
            self.wpe = nn.Parameter(torch.randn(seq, dim) * 0.02)
            self.blocks = nn.ModuleList(Block(dim, heads, seq) for _ in range(layers))
            self.ln_f = nn.LayerNorm(dim)
            self.head = nn.Linear(dim, vocab, bias=False)

        def forward(self, idx):
            T = idx.size(1)
            x = self.wte(idx) + self.wpe[:T]
            for b in self.blocks:
                x = b(x)
            return self.head(self.ln_f(x))

    return GPT


FAMILIES = {"bert": "bert", "vit": "vit", "gptmask": "gpt", "llama": "llama",
            "pool": "pool", "mobilenet": "mobilenet", "mlp": "mlp", "padenc": "padenc",
            "sdpamask": "sdpamask", "padids": "padids",
            "pademb": "pademb", "extrema": "extrema"}
IMAGE_MODELS = ("resnet18", "mobilenet_v2")


def build(torch, name, dtype, args):
    """The model, its inputs by ONNX input name, and labels, in `dtype`."""
    if name in FAMILIES:
        sys.path.insert(0, os.path.join(ROOT, "test", "Target", "ONNX", "Inputs", "torch"))
        import export as families_export
        cls, inputs, y = families_export.cases()[FAMILIES[name]]
        torch.manual_seed(0)
        model = cls().to(dtype).train()
        return model, {k: v.to(dtype) if v.is_floating_point() else v
                       for k, v in inputs.items()}, y
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    if name in IMAGE_MODELS:
        import torchvision
        if name == "resnet18":
            model = torchvision.models.resnet18(weights=None, num_classes=10)
        else:
            model = torchvision.models.mobilenet_v2(weights=None, num_classes=10, dropout=0.0)
        x = torch.randn(args.batch, 3, args.image_size, args.image_size, generator=g)
        y = torch.randint(0, 10, (args.batch,), generator=g)
    else:
        model = gpt_module(torch)()
        x = torch.randint(0, 512, (args.batch, 32), generator=g)
        y = torch.randint(0, 512, (args.batch, 32), generator=g)
    model = model.to(dtype).train()
    if x.is_floating_point():
        x = x.to(dtype)
    return model, {"input" if name in IMAGE_MODELS else "idx": x}, y


def param_entries(torch, model):
    """--param-names' JSON: every parameter's shape by state_dict name, and
    for an nn.Embedding with a padding_idx its weight's padding_idx (which
    no exporter records)."""
    entries = {n: list(p.shape) for n, p in model.named_parameters()}
    for name, m in model.named_modules():
        if isinstance(m, torch.nn.Embedding) and m.padding_idx is not None:
            key = (name + "." if name else "") + "weight"
            entries[key] = {"shape": entries[key], "padding_idx": m.padding_idx}
    return entries


def write_safetensors(torch, path, tensors):
    names = {torch.float32: "F32", torch.float64: "F64", torch.int64: "I64",
             torch.bool: "BOOL"}
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        b = t.detach().contiguous().numpy().tobytes()
        header[name] = {"dtype": names[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(len(h).to_bytes(8, "little") + h + b"".join(blobs))


def run(cmd, timeout):
    log("   " + " ".join(shlex.quote(c) for c in cmd))
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[0]} exit {proc.returncode}: "
                           + " | ".join((proc.stderr or proc.stdout).strip().splitlines()[-5:]))
    return proc, round(time.perf_counter() - t, 2)


def saved_bytes(torch, model, x, y):
    """Bytes PyTorch keeps for the backward pass: distinct storages the
    autograd graph saves, less parameters, buffers and the input (memopt's
    saved_for_backward_bytes counts op results only)."""
    seen = {}
    arguments = {t.untyped_storage().data_ptr()
                 for t in [*model.parameters(), *model.buffers(), *x.values()]}

    def pack(t):
        s = t.untyped_storage()
        if s.data_ptr() not in arguments:
            seen[s.data_ptr()] = s.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(*x.values())
        loss = torch.nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
    loss.backward()
    model.zero_grad(set_to_none=True)
    return sum(seen.values())


def rel(torch, a, b, floor=0.0):
    """||a - b|| / max(||b||, floor)."""
    a, b = a.double(), b.double()
    den = max(torch.linalg.vector_norm(b).item(), floor)
    num = torch.linalg.vector_norm(a - b).item()
    return num / den if den else (0.0 if num == 0 else float("inf"))


def match(torch, name, value, params):
    """The PyTorch parameter or buffer an imported tensor is, and whether it
    is stored transposed."""
    if name in params:
        return name, False
    for pname, p in params.items():
        if p.dim() == 2 and p.shape[::-1] == value.shape and torch.equal(p.t(), value):
            return pname, True
        if p.shape == value.shape and torch.equal(p, value):
            return pname, False
    return None, False


REFUSAL = "dynamo=True, optimize=False"


def export(torch, model, inputs, path, exporter):
    names = list(inputs)
    if exporter == "ts":
        torch.onnx.export(model, tuple(inputs.values()), path, opset_version=17,
                          dynamo=False, training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False, input_names=names,
                          output_names=["logits"])
    else:
        torch.onnx.export(model, tuple(inputs.values()), path, dynamo=True,
                          optimize=exporter == "dynopt", input_names=names,
                          output_names=["logits"], external_data=False)


def argument_types(mlir):
    """The element type of each argument of the imported function."""
    with open(mlir) as f:
        text = f.read()
    return {m.group(1): m.group(2) for m in
            re.finditer(r"%([\w.$-]+): tensor<(?:[0-9]+x)*(\w+)>", text)}


def one(torch, name, exporter, dtype_name, args, work):
    dtype = {"f32": torch.float32, "f64": torch.float64}[dtype_name]
    tag = f"{name}-{exporter}-{dtype_name}"
    tools = os.path.join(args.build, "bin")
    model, inputs, y = build(torch, name, dtype, args)
    onnx_path = os.path.join(work, tag + ".onnx")
    t = time.perf_counter()
    export(torch, model, inputs, onnx_path, exporter)
    export_s = round(time.perf_counter() - t, 2)
    mlir, w0p, w1p = (os.path.join(work, tag + s) for s in (".mlir", "-w0.safetensors", "-w1.safetensors"))
    batch, report = os.path.join(work, tag + "-batch.safetensors"), os.path.join(work, tag + "-report.json")
    params = os.path.join(work, tag + "-params.json")
    with open(params, "w") as f:
        json.dump(param_entries(torch, model), f)
    cmd = [os.path.join(tools, "memopt-translate"), "--import-onnx", onnx_path,
           "--loss=cross_entropy", f"--weights={w0p}", "-o", mlir]
    if name in FAMILIES or exporter != "ts":
        cmd.append(f"--param-names={params}")
    base = {"model": name, "exporter": exporter, "dtype": dtype_name,
            "parameters": sum(p.numel() for p in model.parameters())}
    try:
        _, import_s = run(cmd, args.timeout)
    except RuntimeError as e:
        # The optimised dynamo export must be refused, naming the flags.
        return {**base, "refused": str(e), "ok": exporter == "dynopt" and REFUSAL in str(e)}
    types = argument_types(mlir)
    write_safetensors(torch, batch, {
        **{k: v.to({"f32": torch.float32, "f64": torch.float64}[types[k]])
           if types.get(k) in ("f32", "f64") else v for k, v in inputs.items()},
        "labels": y})
    proc, run_s = run([os.path.join(tools, "memopt-run"), mlir, "--device=cpu", "--steps=1",
                       "--optimizer=sgd", f"--lr={args.lr!r}", f"--load-weights={w0p}",
                       f"--inputs={batch}", f"--save-weights={w1p}", f"--report={report}"],
                      args.timeout)
    parsed = gpu_compare.parse_memopt_run(proc.stdout)
    with open(report) as f:
        rep = json.load(f)
    rep = rep[0] if isinstance(rep, list) else rep

    sys.path.insert(0, HERE)
    import torch_gradients
    w0 = torch_gradients.read_safetensors(torch, w0p)
    w1 = torch_gradients.read_safetensors(torch, w1p)

    # PyTorch's step.
    state = dict(model.named_parameters())
    buffers = dict(model.named_buffers())
    everything = {**state, **buffers}
    before = {n: t.detach().clone() for n, t in everything.items()}
    out = model(*inputs.values())
    loss = torch.nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
    loss.backward()
    grads = {n: p.grad.detach().clone() for n, p in state.items()}
    with torch.no_grad():
        for p in state.values():
            p -= args.lr * p.grad
    after = {n: t.detach().clone() for n, t in everything.items()}

    # The f32 rows' conditioning: the same step in f64 (the f32 weights and
    # batch widened exactly), against which PyTorch's own f32 step and
    # memopt's are both measured. Where memopt's f32 gradient is as far from
    # PyTorch's as PyTorch's own f32 gradient is from the f64 one, the
    # difference is f32 rounding in an ill-conditioned step, not a wrong one.
    grads64 = None
    if dtype == torch.float32:
        ref, ref_inputs, _ = build(torch, name, torch.float64, args)
        ref_out = ref(*ref_inputs.values())
        torch.nn.functional.cross_entropy(ref_out.reshape(-1, ref_out.shape[-1]),
                                          y.reshape(-1)).backward()
        grads64 = {n: p.grad.detach().clone() for n, p in ref.named_parameters()}

    rows, stats, unmatched = [], [], []
    # Gradients under 1% of the largest one's norm are measured against that
    # 1%: some are zero in exact arithmetic, rounding noise on both sides.
    floor = 0.01 * max((torch.linalg.vector_norm(g.double()).item()
                        for g in grads.values()), default=0.0)
    for n, v0 in w0.items():
        pname, transposed = match(torch, n, v0, before)
        if pname is None:
            unmatched.append(n)
            continue
        fix = (lambda t: t.t()) if transposed else (lambda t: t)
        m1 = fix(w1[n])
        if pname in state:
            g_m = (before[pname].double() - m1.double()) / args.lr
            g_t = (before[pname].double() - after[pname].double()) / args.lr
            rows.append({"name": pname, "imported_as": n, "shape": list(before[pname].shape),
                         "rel_error": rel(torch, g_m, g_t, floor),
                         "rel_error_vs_grad": rel(torch, g_m, grads[pname], floor),
                         "below_floor": torch.linalg.vector_norm(g_t).item() < floor})
            if grads64 is not None:
                floor64 = 0.01 * max(torch.linalg.vector_norm(g).item()
                                     for g in grads64.values())
                rows[-1]["memopt_rel_error_vs_f64"] = rel(torch, g_m, grads64[pname], floor64)
                rows[-1]["torch_rel_error_vs_f64"] = rel(torch, g_t, grads64[pname], floor64)
        else:
            stats.append({"name": pname, "m1": m1})
    # Running statistics likewise, against 1% of the largest of their kind
    # (running_mean, running_var): a batch norm after a 1x1 convolution of
    # another batch norm's output sees a batch mean that is zero in exact
    # arithmetic.
    kinds = {}
    for st in stats:
        kind = st["name"].rsplit(".", 1)[-1]
        norm = torch.linalg.vector_norm(after[st["name"]].double()).item()
        kinds[kind] = max(kinds.get(kind, 0.0), norm)
    for st in stats:
        m1, target = st.pop("m1"), after[st["name"]]
        sfloor = 0.01 * kinds[st["name"].rsplit(".", 1)[-1]]
        st["rel_error"] = rel(torch, m1, target, sfloor)
        st["below_floor"] = torch.linalg.vector_norm(target.double()).item() < sfloor
    missing = sorted(set(state) - {r["name"] for r in rows})
    torch_saved = saved_bytes(torch, build(torch, name, dtype, args)[0], inputs, y)
    memopt_loss = parsed["losses"][0] if parsed["losses"] else None
    res = {
        **base, "batch": next(iter(inputs.values())).shape[0],
        "input_shapes": {k: list(v.shape) for k, v in inputs.items()}, "onnx_nodes": None,
        "seconds": {"export": export_s, "import": import_s, "memopt_run": run_s},
        "loss": {"torch": loss.item(), "memopt": memopt_loss,
                 "rel_error": abs(memopt_loss - loss.item()) / abs(loss.item())
                 if memopt_loss is not None else None},
        "gradients": rows, "running_statistics": stats,
        "unmatched_imported": unmatched, "parameters_without_gradient": missing,
        "max_rel_error": max([r["rel_error"] for r in rows] + [s["rel_error"] for s in stats]),
        "max_rel_error_vs_grad": max(r["rel_error_vs_grad"] for r in rows),
        **({"max_rel_error_vs_f64": {
            "memopt": max(r["memopt_rel_error_vs_f64"] for r in rows),
            "torch": max(r["torch_rel_error_vs_f64"] for r in rows)}}
           if grads64 is not None else {}),
        "memory": {"memopt_peak_bytes": rep.get("peak_bytes"),
                   "memopt_saved_for_backward_bytes": rep.get("saved_for_backward_bytes"),
                   "torch_saved_for_backward_bytes": torch_saved},
    }
    import onnx
    res["onnx_nodes"] = len(onnx.load(onnx_path, load_external_data=False).graph.node)
    res["ok"] = (not unmatched and not missing
                 and res["max_rel_error"] <= TOLERANCE[dtype_name])
    # Whether memopt's f32 gradient is no farther from the f64 step than
    # PyTorch's own f32 gradient is (within a factor of 2). Reported beside
    # `ok`, which stays the plain tolerance.
    vs64 = res.get("max_rel_error_vs_f64")
    if vs64:
        res["within_f32_conditioning"] = vs64["memopt"] <= 2 * vs64["torch"]
    return res


def print_tables(data):
    print("| model | export | dtype | ONNX nodes | parameters | loss (PyTorch) | loss rel. error "
          "| max gradient rel. error | median | running stats max | "
          "memopt saved for backward | PyTorch saved for backward | "
          "max vs f64 step: memopt / PyTorch |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    refused = []
    for r in data["results"]:
        if "refused" in r:
            refused.append(r)
            continue
        errs = sorted(g["rel_error"] for g in r["gradients"])
        med = errs[len(errs) // 2]
        st = max((s["rel_error"] for s in r["running_statistics"]), default=None)
        m = r["memory"]
        print(f"| {r['model']} | {r['exporter']} | {r['dtype']} | {r['onnx_nodes']} | {r['parameters']:,} "
              f"| {r['loss']['torch']:.6f} | {r['loss']['rel_error']:.1e} "
              f"| {max(errs):.1e} | {med:.1e} | "
              + (f"{st:.1e}" if st is not None else "–")
              + f" | {m['memopt_saved_for_backward_bytes'] / 2**20:.1f} MiB "
              f"| {m['torch_saved_for_backward_bytes'] / 2**20:.1f} MiB | "
              + (f"{r['max_rel_error_vs_f64']['memopt']:.1e} / "
                 f"{r['max_rel_error_vs_f64']['torch']:.1e}"
                 if "max_rel_error_vs_f64" in r else "–") + " |")
    if refused:
        print()
        print("| model | export | dtype | refused (first 160 characters) | as it should be |")
        print("|---|---|---|---|---|")
        for r in refused:
            msg = r["refused"].split("error: ", 1)[-1][:160].replace("|", "\\|")
            print(f"| {r['model']} | {r['exporter']} | {r['dtype']} | {msg} | "
                  + ("yes" if r["ok"] else "**no**") + " |")


def main(argv=None):
    args = parse_args(argv)
    try:
        import torch  # noqa: F401
    except ImportError:
        print("onnx_vs_torch: PyTorch is not installed (pip install torch torchvision onnx)",
              file=sys.stderr)
        return 2
    import torch
    torch.set_num_threads(os.cpu_count() or 1)
    work = args.workdir or tempfile.mkdtemp(prefix="onnx-vs-torch-")
    os.makedirs(work, exist_ok=True)
    output = args.output or (os.path.join(tempfile.gettempdir(), "onnx-vs-torch-quick.json")
                             if args.quick else os.path.join(ROOT, "bench", "results",
                                                             "onnx_vs_torch.json"))
    data = {"benchmark": "onnx_vs_torch",
            "mode": "quick" if args.quick else "full",
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "machine": checkpoint.machine(), "git": checkpoint.git_info(),
            "torch": torch.__version__, "lr": args.lr,
            "tolerance": TOLERANCE, "results": []}
    ok = True
    for name in args.models.split(","):
        for exporter in args.exporters.split(","):
            for dt in args.dtypes.split(","):
                log(f"== {name} {exporter} {dt}")
                try:
                    r = one(torch, name, exporter, dt, args, work)
                except (RuntimeError, subprocess.TimeoutExpired) as e:
                    log(f"   failed: {e}")
                    data["results"].append({"model": name, "exporter": exporter,
                                            "dtype": dt, "error": str(e)})
                    ok = False
                    continue
                if "refused" in r:
                    log("   refused" + ("" if r["ok"] else "  (SHOULD HAVE IMPORTED)"))
                else:
                    log(f"   loss {r['loss']}, max gradient rel. error {r['max_rel_error']:.2e}"
                        + ("" if r["ok"] else "  OVER TOLERANCE / UNMATCHED"))
                data["results"].append(r)
                ok &= r["ok"]
    checkpoint.write_json(output, data)
    log(f"wrote {output}")
    print_tables({"results": [r for r in data["results"] if "error" not in r]})
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
