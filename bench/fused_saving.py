#!/usr/bin/env python3
"""What memopt's fused forms save on an imported LLaMA-style decoder.

The decoder of the importer's tests (test/Target/ONNX/Inputs/torch/
families.py: RMSNorm, SwiGLU, rotary embeddings, 4 query heads over 2
key/value heads through F.scaled_dot_product_attention(is_causal=True)),
widened to --dim and run at --tokens tokens, is exported by both of
PyTorch's trainable exporters and imported. Its first SGD step then runs
twice on the CPU, on the same batch:

- fused: memopt-run's default pipeline, where --memopt-fuse-attention turns
  each attention (SDPA's causal mask, the exporters' kᵀ, K and V repeated by
  repeat_interleave) into one memopt.attention reading the 2 key/value heads
  in place; RMSNorm is memopt.rms_norm in both runs (the importer's
  pattern);
- unfused: the same with --fuse-attention=false: the import node by node,
  which keeps the Sq×Sk probabilities and the repeated K and V.

Reported: memopt's saved_for_backward_bytes (op results the backward pass
reads), the plan's peak, and the loss (equal to rounding), with PyTorch's
own saved-for-backward bytes (eager, its CPU SDPA) beside them.

    python3 bench/fused_saving.py [--tokens 1024] [--dim 128]

Results: bench/results/fused_saving.json and docs/benchmarks.md.
"""
import argparse
import json
import os
import platform
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import onnx_vs_torch as ovt  # noqa: E402  (export, run, safetensors helpers)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--tokens", type=int, default=1024)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--vocab", type=int, default=512)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "fused_saving.json"))
    args = ap.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("fused_saving: PyTorch is not installed (pip install torch onnx "
              "onnxscript); nothing measured")
        return 0
    sys.path.insert(0, os.path.join(ROOT, "test", "Target", "ONNX", "Inputs", "torch"))
    import families

    tools = os.path.join(args.build, "bin")
    torch.manual_seed(0)
    model = families.Llama(V=args.vocab, d=args.dim, L=args.layers, T=args.tokens).train()
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, args.vocab, (args.batch, args.tokens), generator=g)
    labels = torch.randint(0, args.vocab, (args.batch, args.tokens), generator=g)
    torch_saved = ovt.saved_bytes(torch, model, {"ids": ids}, labels)

    rows = []
    with tempfile.TemporaryDirectory() as work:
        batch = os.path.join(work, "batch.safetensors")
        ovt.write_safetensors(torch, batch, {"ids": ids, "labels": labels})
        for exporter in ("ts", "dyn"):
            onnx_path = os.path.join(work, f"llama-{exporter}.onnx")
            ovt.export(torch, model, {"ids": ids}, onnx_path, exporter)
            mlir = os.path.join(work, f"llama-{exporter}.mlir")
            w0 = os.path.join(work, f"llama-{exporter}-w0.safetensors")
            ovt.run([os.path.join(tools, "memopt-translate"), "--import-onnx", onnx_path,
                     "--loss=cross_entropy", f"--weights={w0}", "-o", mlir], args.timeout)
            for fused in (True, False):
                report = os.path.join(work, f"report-{exporter}-{fused}.json")
                proc, seconds = ovt.run(
                    [os.path.join(tools, "memopt-run"), mlir, "--device=cpu", "--steps=1",
                     "--optimizer=sgd", "--lr=0.01", f"--load-weights={w0}",
                     f"--inputs={batch}", f"--report={report}",
                     f"--fuse-attention={'true' if fused else 'false'}"], args.timeout)
                with open(report) as f:
                    rep = json.load(f)
                rep = rep[0] if isinstance(rep, list) else rep
                parsed = ovt.gpu_compare.parse_memopt_run(proc.stdout)
                loss = (parsed.get("losses") or [parsed.get("loss_first")])[0]
                rows.append({"exporter": exporter, "fused": fused,
                             "saved_for_backward_bytes": rep["saved_for_backward_bytes"],
                             "peak_bytes": rep["peak_bytes"], "loss": loss,
                             "run_s": seconds})
                ovt.log(f"{exporter} fused={fused}: saved "
                        f"{rep['saved_for_backward_bytes'] / 2**20:.2f} MiB, peak "
                        f"{rep['peak_bytes'] / 2**20:.2f} MiB, loss {loss}")

    by = {(r["exporter"], r["fused"]): r for r in rows}
    ratios = {e: by[(e, True)]["saved_for_backward_bytes"] / by[(e, False)]["saved_for_backward_bytes"]
              for e in ("ts", "dyn")}
    data = {"date": time.strftime("%Y-%m-%d"), "machine": platform.machine(),
            "cpus": os.cpu_count(), "torch": torch.__version__,
            "model": {"tokens": args.tokens, "dim": args.dim, "layers": args.layers,
                      "vocab": args.vocab, "batch": args.batch, "heads": 4, "kv_heads": 2,
                      "parameters": sum(p.numel() for p in model.parameters())},
            "torch_saved_for_backward_bytes": torch_saved,
            "rows": rows, "fused_over_unfused_saved": ratios}
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(data, f, indent=1)
    print("| export | attention | memopt saved for backward | peak (plan) | loss |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['exporter']} | {'fused' if r['fused'] else 'unfused'} "
              f"| {r['saved_for_backward_bytes'] / 2**20:.2f} MiB "
              f"| {r['peak_bytes'] / 2**20:.2f} MiB | {r['loss']} |")
    print(f"PyTorch eager saves {torch_saved / 2**20:.2f} MiB; fused / unfused: "
          + ", ".join(f"{e} {v:.3f}" for e, v in ratios.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
