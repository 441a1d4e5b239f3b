#!/usr/bin/env python3
"""Exports the models of families.py with both of PyTorch's exporters and
records PyTorch's first training step on a fixed batch, for the importer's
tests: regenerate the committed files here with

    python3 test/Target/ONNX/Inputs/torch/export.py [OUTDIR [FAMILY,...]]

(needs torch and onnxscript; nothing else in the suite does). For each
family F and export E (ts: dynamo=False, training=TrainingMode.TRAINING,
do_constant_folding=False; dyn: dynamo=True, optimize=False; dynopt:
dynamo=True with its default optimiser), writes

- F-E.onnx, the export as a user would get it;
- F.batch.safetensors: the inputs under the ONNX input names and `labels`;
- F.ref.safetensors: PyTorch's loss (`__loss__`) and every parameter's
  gradient by state_dict name, f32, from
  F.cross_entropy(out.reshape(-1, V), labels.reshape(-1));
- F.params.json: state_dict name -> shape of every parameter (what
  `memopt-translate --param-names` reads).

The exports, batches and parameter lists regenerate byte for byte; the
recorded gradients to within ~1e-6 relative (PyTorch's CPU reductions depend
on its thread count), far inside the tests' 1e-4.
"""
import json
import os
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "..", "bench"))
import families  # noqa: E402
from onnx_vs_torch import param_entries, write_safetensors  # noqa: E402


def cases():
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, 50, (2, 8), generator=g)
    mask = torch.ones(2, 8, dtype=torch.long)
    mask[1, 5:] = 0
    # Token ids with pad id 0 at the second sequence's last three places.
    padded = torch.where(ids == 0, torch.ones_like(ids), ids) * mask
    return {
        "llama": (families.Llama, {"ids": ids}, torch.randint(0, 50, (2, 8), generator=g)),
        "vit": (families.ViT, {"x": torch.randn(2, 3, 16, 16, generator=g)},
                torch.randint(0, 10, (2,), generator=g)),
        "bert": (families.Bert, {"input_ids": ids,
                                 "token_type_ids": torch.randint(0, 2, (2, 8), generator=g),
                                 "attention_mask": mask},
                 torch.randint(0, 3, (2,), generator=g)),
        "gpt": (families.GPT, {"idx": torch.randint(0, 40, (2, 8), generator=g)},
                torch.randint(0, 40, (2, 8), generator=g)),
        "pool": (families.Pool, {"ids": ids, "mask": mask.bool()},
                 torch.randint(0, 3, (2,), generator=g)),
        "mobilenet": (families.MobileNet, {"x": torch.randn(2, 3, 16, 16, generator=g)},
                      torch.randint(0, 10, (2,), generator=g)),
        "mlp": (families.Mlp, {"x": torch.randn(4, 12, generator=g)},
                torch.randint(0, 5, (4,), generator=g)),
        "padenc": (families.PadEnc, {"ids": ids, "mask": mask.bool()},
                   torch.randint(0, 3, (2,), generator=g)),
        "sdpamask": (families.SdpaMask, {"ids": ids, "mask": mask.bool()},
                     torch.randint(0, 3, (2,), generator=g)),
        "padids": (families.PadIds, {"ids": padded}, torch.randint(0, 3, (2,), generator=g)),
        "pademb": (families.PadEmb, {"ids": padded}, torch.randint(0, 3, (2,), generator=g)),
        "extrema": (families.Extrema, {"x": torch.randn(2, 3, 8, 8, generator=g)},
                    torch.randint(0, 10, (2,), generator=g)),
    }


# Exported by dynamo=True with its default external_data=True: the weights
# in NAME-dyn.onnx.data beside the model.
EXTERNAL_DATA = {"mlp"}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else HERE
    only = sys.argv[2].split(",") if len(sys.argv) > 2 else None
    for name, (cls, inputs, labels) in cases().items():
        if only and name not in only:
            continue
        torch.manual_seed(0)
        model = cls()
        args = tuple(inputs.values())
        names = list(inputs)
        for export in ("ts", "dyn", "dynopt"):
            path = os.path.join(out, f"{name}-{export}.onnx")
            if export == "ts":
                torch.onnx.export(model, args, path, dynamo=False, opset_version=17,
                                  training=torch.onnx.TrainingMode.TRAINING,
                                  do_constant_folding=False, input_names=names,
                                  output_names=["logits"])
            else:
                external = export == "dyn" and name in EXTERNAL_DATA
                torch.onnx.export(model, args, path, dynamo=True,
                                  optimize=export == "dynopt", input_names=names,
                                  output_names=["logits"], external_data=external)
        model.train()
        logits = model(*args)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))
        loss.backward()
        ref = {"__loss__": loss.detach().reshape(1)}
        for pname, p in model.named_parameters():
            ref[pname] = p.grad
        write_safetensors(torch, os.path.join(out, f"{name}.ref.safetensors"), ref)
        write_safetensors(torch, os.path.join(out, f"{name}.batch.safetensors"),
                          {**inputs, "labels": labels})
        with open(os.path.join(out, f"{name}.params.json"), "w") as f:
            json.dump(param_entries(torch, model), f, indent=0)
            f.write("\n")
        print(name, "loss", loss.item())


if __name__ == "__main__":
    main()
