#!/usr/bin/env python3
"""Imports a PyTorch export and checks memopt's first training step against
PyTorch's, recorded by torch/export.py: the loss and every parameter's
gradient, by state_dict name.

    torch_step.py MODEL.onnx FAMILY WORKPREFIX [--lr LR] [--tol TOL]
                  [--translate MEMOPT_TRANSLATE] [--run MEMOPT_RUN]
                  [--opt MEMOPT_OPT --passes PIPELINE]

Runs `memopt-translate --import-onnx MODEL.onnx --loss=cross_entropy
--param-names=FAMILY.params.json --weights=W0` and `memopt-run --steps=1
--optimizer=sgd --lr=LR --inputs=BATCH --load-weights=W0 --save-weights=W1`
(from PATH unless --translate/--run name them; with --passes, memopt-opt
runs that pass pipeline on the import first, with the pass's remarks
printed), rebuilds each gradient as
(W0 - W1) / LR and compares it with PyTorch's (relative error of the whole
tensor, ||a - b|| / ||b||). A gradient under 1% of the largest parameter
gradient's norm is measured against that 1% instead: some are zero in exact
arithmetic and only rounding noise in either framework (the bias of a batch
norm whose output reaches the loss only through another batch norm, which
subtracts any shift: MobileNetV2's projection layers), where a relative
error means nothing.
Prints one line per parameter and a summary; exits 1 when anything is over
TOL or missing. Needs numpy only.
"""
import argparse
import json
import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DTYPES = {"F32": np.float32, "F64": np.float64, "I64": np.int64, "I32": np.int32,
          "BOOL": np.bool_}
NAMES = {np.dtype(v): k for k, v in DTYPES.items()}


def read_safetensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    n = int.from_bytes(blob[:8], "little")
    header = json.loads(blob[8:8 + n])
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        start, end = (8 + n + o for o in e["data_offsets"])
        out[name] = np.frombuffer(blob[start:end], DTYPES[e["dtype"]]).reshape(e["shape"])
    return out


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, a in tensors.items():
        b = np.ascontiguousarray(a).tobytes()
        header[name] = {"dtype": NAMES[a.dtype], "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(len(h).to_bytes(8, "little") + h + b"".join(blobs))


def sanitize(name):
    """The importer's argument name for an ONNX name (ONNXImporter.cpp)."""
    out = "".join(c if c.isalnum() or c in "_.$-" else "_" for c in name)
    if not out or out[0].isdigit() or out[0] in "-.$":
        out = "_" + out
    return out


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"{os.path.basename(cmd[0])} failed ({proc.returncode}):\n"
                 + proc.stderr + proc.stdout)
    return proc.stdout


def main():
    p = argparse.ArgumentParser()
    p.add_argument("onnx")
    p.add_argument("family")
    p.add_argument("prefix")
    p.add_argument("--lr", type=float, default=1e4)
    p.add_argument("--tol", type=float, default=1e-4)
    p.add_argument("--translate", default="memopt-translate")
    p.add_argument("--run", default="memopt-run")
    p.add_argument("--opt", default="memopt-opt")
    p.add_argument("--passes", default=None)
    a = p.parse_args()
    data = os.path.join(HERE, "torch")
    params_json = os.path.join(data, a.family + ".params.json")
    mlir, w0p, w1p, batchp = (a.prefix + s for s in
                              (".mlir", ".w0.safetensors", ".w1.safetensors",
                               ".batch.safetensors"))
    run([a.translate, "--import-onnx", a.onnx, "--loss=cross_entropy",
         "--param-names=" + params_json, "--weights=" + w0p, "-o", mlir])
    # Inputs as the imported function declares them (an integer mask read
    # only as floats is a float argument).
    text = open(mlir).read()
    batch = read_safetensors(os.path.join(data, a.family + ".batch.safetensors"))
    for name in list(batch):
        m = re.search(r"%" + re.escape(sanitize(name)) + r": tensor<[0-9x]*x(f32|i64)>", text)
        if m and m.group(1) == "f32":
            batch[name] = batch[name].astype(np.float32)
    step_mlir, step_w0, rename = mlir, w0p, {}
    if a.passes:
        # memopt-opt prints arguments as %arg0, %arg1, ...: the weights and
        # inputs go in under those names and come back under the import's.
        step_mlir, step_w0 = a.prefix + ".opt.mlir", a.prefix + ".w0opt.safetensors"
        proc = subprocess.run([a.opt, mlir, "--" + a.passes, "-o", step_mlir],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit(f"{a.opt} failed:\n" + proc.stderr)
        for line in proc.stderr.splitlines():
            if "remark:" in line:
                print(line[line.index("remark:"):])
        header = text[text.index("func.func"):]
        header = header[:header.index("{\n")]
        rename = {n: f"arg{i}" for i, n in
                  enumerate(re.findall(r"%([^\s:,()]+): tensor", header))}
        w0 = read_safetensors(w0p)
        write_safetensors(step_w0, {rename[k]: v for k, v in w0.items()})
        batch = {rename[sanitize(k)]: v for k, v in batch.items()}
    write_safetensors(batchp, batch)
    out = run([a.run, step_mlir, "--device=cpu", "--steps=1", "--optimizer=sgd",
               f"--lr={a.lr}", "--load-weights=" + step_w0, "--inputs=" + batchp,
               "--save-weights=" + w1p])
    if rename:
        back = {v: k for k, v in rename.items()}
        write_safetensors(w1p, {back[k]: v for k, v in read_safetensors(w1p).items()})
    m = re.search(r"step 1/1 loss (\S+)", out)
    if not m:
        sys.exit("memopt-run printed no loss:\n" + out)
    ref = read_safetensors(os.path.join(data, a.family + ".ref.safetensors"))
    w0, w1 = read_safetensors(w0p), read_safetensors(w1p)
    worst, bad = 0.0, []
    loss, ref_loss = float(m.group(1)), float(ref["__loss__"][0])
    loss_rel = abs(loss - ref_loss) / abs(ref_loss)
    # memopt-run prints the loss to 6 significant digits.
    if loss_rel > max(a.tol, 1e-5):
        bad.append(f"loss {loss} vs PyTorch's {ref_loss}")
    names = json.load(open(params_json))
    floor = 0.01 * max((float(np.linalg.norm(ref[n].astype(np.float64)))
                        for n in names if n in ref), default=0.0)
    for name, shape in names.items():
        if isinstance(shape, dict):  # {"shape": [...], "padding_idx": p}
            shape = shape["shape"]
        arg = sanitize(name)
        if arg not in w0 or arg not in w1:
            bad.append(f"{name}: not a parameter of the import")
            continue
        g = (w0[arg].astype(np.float64) - w1[arg].astype(np.float64)) / a.lr
        r = ref[name].astype(np.float64)
        den = max(np.linalg.norm(r), floor)
        rel = np.linalg.norm(g - r) / den if den else float(np.linalg.norm(g) != 0)
        worst = max(worst, rel)
        note = " (against 1% of the largest gradient)" if den > np.linalg.norm(r) else ""
        print(f"{name:50s} {'x'.join(map(str, shape)):>10s} rel {rel:.2e}{note}")
        if not rel <= a.tol:
            bad.append(f"{name}: gradient relative error {rel:.3e}")
    print(f"{os.path.basename(a.onnx)}: loss {loss} (PyTorch {ref_loss:.6g}), "
          f"{len(names)} parameters, worst gradient relative error {worst:.2e}")
    if bad:
        print("FAIL: " + "; ".join(bad))
        return 1
    print("matches PyTorch's step")
    return 0


if __name__ == "__main__":
    sys.exit(main())
