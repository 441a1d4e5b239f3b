"""PyTorch side of bench/gpu_compare.py: the two models, written to mirror the
graphs examples/generate_models.py writes for memopt, and one training run.

Imported only by gpu_compare.py's worker processes (it needs torch); see that
script's docstring for how the comparison is run.

Mirroring the generated graphs:

* ``ResNet50``: ``generate_models.py resnet50`` (torchvision resnet50 v1.5:
  7x7/2 stem, 3x3/2 max pool, bottlenecks 3/4/6/3 with the stride on the 3x3
  conv, 1x1 conv + BN shortcut where the shape changes, global average pool,
  linear classifier with bias; BN eps 1e-5, momentum 0.1).
* ``CifarResNet``: ``generate_models.py cifar-resnet --depth 6n+2`` (He et
  al. 2016: 3x3 conv-BN-ReLU stem with 16 channels, no pool; n basic blocks
  in each of three stages of 16/32/64 channels, stride 2 on the first conv of
  stages 2 and 3, option-B shortcuts (1x1 conv + BN) where the shape changes;
  global average pool, linear classifier with bias).
* ``UNet``: ``generate_models.py unet`` (four levels of two padded 3x3
  conv-BN-ReLU and a 2x2 max pool, widths 64..512, a 1024-wide bottleneck;
  up-convs are a nearest 2x upsample then a 3x3 conv with bias, concatenated
  after the skip; a 1x1 conv with bias to the classes; cross-entropy over
  every pixel in NHW order).  Its skips make it no sequence, so its
  checkpointed variant checkpoints each double conv.
* ``GPT2``: ``generate_models.py gpt2`` (token + learned position embeddings,
  pre-LN blocks: LN, causal multi-head attention with a materialised score
  matrix scaled by 1/sqrt(head_dim), causal softmax, dropout 0.1 on the
  probabilities only, output projection, residual; LN, 4x MLP with the exact
  GELU, residual; final LN; LM head tied to ``wte``, no bias; mean
  cross-entropy over B*T tokens).  The scores are materialised, as memopt's
  graph writes them before its attention fusion; with ``sdpa`` the attention
  is ``F.scaled_dot_product_attention`` (PyTorch's fused kernels, the
  like-for-like peer of memopt's fused attention).

State-dict keys map to the generated argument names by replacing '.' with '_'
and naming conv/linear weight/bias ``w``/``b`` and norm weight/bias
``gamma``/``beta`` (:func:`memopt_state`); gpu_compare.py checks every name and
shape against the generated MLIR.
"""
import math
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint
from torch.utils.checkpoint import checkpoint_sequential

BN_EPS, BN_MOMENTUM, LN_EPS = 1e-5, 0.1, 1e-5
IMAGE_MODELS = ("resnet50", "cifar-resnet", "unet")


# --------------------------------------------------------------------------
# ResNet-50 and the CIFAR ResNet
# --------------------------------------------------------------------------

def _bn(channels):
    return nn.BatchNorm2d(channels, eps=BN_EPS, momentum=BN_MOMENTUM)


class _Residual(nn.Module):
    """A residual block's shortcut and closing add + ReLU.

    ``inplace`` gives what torchvision writes: ``ReLU(inplace=True)`` and
    ``out += identity``; without it every op makes a new tensor, as memopt's
    graph does before --inplace."""

    def __init__(self, cin, cout, stride, inplace):
        super().__init__()
        self.relu = nn.ReLU(inplace=inplace)
        self.inplace = inplace
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride, bias=False), _bn(cout))

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.body(x)
        if self.inplace:
            out += identity
        else:
            out = out + identity
        return self.relu(out)


class Bottleneck(_Residual):
    """1x1, 3x3 (strided), 1x1 (x4) conv-BN, residual add, ReLU."""

    def __init__(self, cin, width, stride, inplace):
        super().__init__(cin, 4 * width, stride, inplace)
        self.conv1 = nn.Conv2d(cin, width, 1, bias=False)
        self.bn1 = _bn(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride, 1, bias=False)
        self.bn2 = _bn(width)
        self.conv3 = nn.Conv2d(width, 4 * width, 1, bias=False)
        self.bn3 = _bn(4 * width)

    def body(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        return self.bn3(self.conv3(out))


class BasicBlock(_Residual):
    """Two 3x3 conv-BN (the first strided), residual add, ReLU."""

    def __init__(self, cin, width, stride, inplace):
        super().__init__(cin, width, stride, inplace)
        self.conv1 = nn.Conv2d(cin, width, 3, stride, 1, bias=False)
        self.bn1 = _bn(width)
        self.conv2 = nn.Conv2d(width, width, 3, 1, 1, bias=False)
        self.bn2 = _bn(width)

    def body(self, x):
        return self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x)))))


class _ResNet(nn.Module):
    """Stem, stages ``layer1..`` of ``block``s (stride 2 opening every stage
    after the first), global average pool, linear classifier."""

    def __init__(self, stem, block, stages, expansion, classes, inplace):
        super().__init__()
        self.relu = nn.ReLU(inplace=inplace)
        cin = stem
        for stage, (width, depth) in enumerate(stages, 1):
            blocks = []
            for i in range(depth):
                blocks.append(block(cin, width, 2 if stage > 1 and i == 0 else 1,
                                    inplace))
                cin = expansion * width
            setattr(self, f"layer{stage}", nn.Sequential(*blocks))
        self.stages = len(stages)
        self.fc = nn.Linear(cin, classes)

    def blocks(self):
        return [b for s in range(1, self.stages + 1) for b in getattr(self, f"layer{s}")]

    def forward(self, x, labels, segments=0):
        x = self.stem(x)
        if segments:
            x = checkpoint_sequential(self.blocks(), segments, x, use_reentrant=False)
        else:
            for block in self.blocks():
                x = block(x)
        logits = self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))
        return F.cross_entropy(logits, labels)


class ResNet50(_ResNet):
    def __init__(self, classes=1000, inplace=False):
        super().__init__(64, Bottleneck, ((64, 3), (128, 4), (256, 6), (512, 3)), 4,
                         classes, inplace)
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = _bn(64)
        self.maxpool = nn.MaxPool2d(3, 2, 1)

    def stem(self, x):
        return self.maxpool(self.relu(self.bn1(self.conv1(x))))


class CifarResNet(_ResNet):
    def __init__(self, depth=110, classes=10, inplace=False):
        n = (depth - 2) // 6
        super().__init__(16, BasicBlock, ((16, n), (32, n), (64, n)), 1, classes,
                         inplace)
        self.conv1 = nn.Conv2d(3, 16, 3, 1, 1, bias=False)
        self.bn1 = _bn(16)

    def stem(self, x):
        return self.relu(self.bn1(self.conv1(x)))


# --------------------------------------------------------------------------
# U-Net
# --------------------------------------------------------------------------

UNET_WIDTHS = (64, 128, 256, 512, 1024)


class DoubleConv(nn.Module):
    def __init__(self, cin, width, inplace):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, width, 3, 1, 1, bias=False)
        self.bn1 = _bn(width)
        self.conv2 = nn.Conv2d(width, width, 3, 1, 1, bias=False)
        self.bn2 = _bn(width)
        self.relu = nn.ReLU(inplace=inplace)

    def forward(self, x):
        return self.relu(self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x))))))


class UpConv(nn.Module):
    def __init__(self, cin, width):
        super().__init__()
        self.conv = nn.Conv2d(cin, width, 3, 1, 1, bias=True)

    def forward(self, x):
        return self.conv(F.interpolate(x, scale_factor=2, mode="nearest"))


class UNet(nn.Module):
    def __init__(self, classes=2, inplace=False):
        super().__init__()
        levels = len(UNET_WIDTHS) - 1
        self.levels = levels
        cin = 3
        for level, width in enumerate(UNET_WIDTHS[:-1], 1):
            setattr(self, f"enc{level}", DoubleConv(cin, width, inplace))
            cin = width
        self.bottleneck = DoubleConv(cin, UNET_WIDTHS[-1], inplace)
        cin = UNET_WIDTHS[-1]
        for level in range(levels, 0, -1):
            width = UNET_WIDTHS[level - 1]
            setattr(self, f"up{level}", UpConv(cin, width))
            setattr(self, f"dec{level}", DoubleConv(2 * width, width, inplace))
            cin = width
        self.final = nn.Conv2d(cin, classes, 1, bias=True)

    def blocks(self):
        return ([getattr(self, f"enc{i}") for i in range(1, self.levels + 1)]
                + [self.bottleneck]
                + [getattr(self, f"dec{i}") for i in range(self.levels, 0, -1)])

    def forward(self, x, labels, segments=0):
        def run(module, value):
            if segments:
                return torch.utils.checkpoint.checkpoint(module, value,
                                                         use_reentrant=False)
            return module(value)

        skips = []
        for level in range(1, self.levels + 1):
            skips.append(run(getattr(self, f"enc{level}"), x))
            x = F.max_pool2d(skips[-1], 2, 2)
        x = run(self.bottleneck, x)
        for level in range(self.levels, 0, -1):
            up = getattr(self, f"up{level}")(x)
            x = run(getattr(self, f"dec{level}"), torch.cat([skips[level - 1], up], 1))
        logits = self.final(x)
        logits = logits.permute(0, 2, 3, 1).reshape(-1, logits.shape[1])
        return F.cross_entropy(logits, labels)


# --------------------------------------------------------------------------
# GPT-2
# --------------------------------------------------------------------------

class Attention(nn.Module):
    def __init__(self, dim, heads, seq, sdpa=False):
        super().__init__()
        self.heads = heads
        self.sdpa = sdpa
        self.c_attn = nn.Linear(dim, 3 * dim)
        self.c_proj = nn.Linear(dim, dim)
        self.register_buffer(
            "mask", torch.ones(seq, seq, dtype=torch.bool).triu(1), persistent=False)

    def forward(self, x):
        b, t, d = x.shape
        hd = d // self.heads
        q, k, v = (part.reshape(b, t, self.heads, hd).transpose(1, 2)
                   for part in self.c_attn(x).split(d, dim=2))
        if self.sdpa:
            y = F.scaled_dot_product_attention(
                q, k, v, dropout_p=0.1 if self.training else 0.0, is_causal=True,
                scale=1.0 / math.sqrt(hd))
            return self.c_proj(y.transpose(1, 2).reshape(b, t, d))
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
        probs = F.dropout(torch.softmax(scores.masked_fill(self.mask, float("-inf")),
                                        dim=-1), 0.1, self.training)
        y = (probs @ v).transpose(1, 2).reshape(b, t, d)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.c_fc = nn.Linear(dim, 4 * dim)
        self.c_proj = nn.Linear(4 * dim, dim)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, dim, heads, seq, sdpa=False):
        super().__init__()
        self.ln_1 = nn.LayerNorm(dim, eps=LN_EPS)
        self.attn = Attention(dim, heads, seq, sdpa)
        self.ln_2 = nn.LayerNorm(dim, eps=LN_EPS)
        self.mlp = MLP(dim)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT2(nn.Module):
    def __init__(self, vocab=50257, seq=1024, dim=768, heads=12, layers=12, sdpa=False):
        super().__init__()
        # nn.Embedding's initialisation, N(0, 1); plain parameters so that the
        # state-dict keys are the generated names "wte" and "wpe".
        self.wte = nn.Parameter(torch.randn(vocab, dim))
        self.wpe = nn.Parameter(torch.randn(seq, dim))
        self.h = nn.ModuleList(Block(dim, heads, seq, sdpa) for _ in range(layers))
        self.ln_f = nn.LayerNorm(dim, eps=LN_EPS)

    def blocks(self):
        return list(self.h)

    def forward(self, ids, labels, segments=0):
        x = F.embedding(ids, self.wte) + self.wpe
        if segments:
            x = checkpoint_sequential(self.blocks(), segments, x, use_reentrant=False)
        else:
            for block in self.h:
                x = block(x)
        logits = F.linear(self.ln_f(x), self.wte)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels)


# --------------------------------------------------------------------------
# Building, names, data
# --------------------------------------------------------------------------

def build_model(spec, inplace=False, sdpa=False):
    """The model of ``spec`` (gpu_compare's model options), seeded, on the CPU."""
    torch.manual_seed(spec["seed"])
    if spec["model"] == "resnet50":
        return ResNet50(spec["classes"], inplace=inplace)
    if spec["model"] == "cifar-resnet":
        return CifarResNet(spec["depth"], spec["classes"], inplace=inplace)
    if spec["model"] == "unet":
        return UNet(spec["classes"], inplace=inplace)
    return GPT2(spec["vocab"], spec["seq"], spec["dim"], spec["heads"], spec["layers"],
                sdpa)


def make_inputs(spec):
    """The fixed batch every step trains on, by generated argument name."""
    g = torch.Generator().manual_seed(spec["seed"] + 1)
    b = spec["batch"]
    if spec["model"] in IMAGE_MODELS:
        s = spec["image_size"]
        labels = b * s * s if spec["model"] == "unet" else b  # per pixel, NHW
        return {"input": torch.randn(b, 3, s, s, generator=g),
                "labels": torch.randint(0, spec["classes"], (labels,), generator=g)}
    t, v = spec["seq"], spec["vocab"]
    return {"input_ids": torch.randint(0, v, (b, t), generator=g),
            "labels": torch.randint(0, v, (b * t,), generator=g)}


def memopt_state(model):
    """Parameters and BN running statistics under memopt's argument names,
    as ``{name: (tensor, "param" | "state")}`` in module order."""
    out = {}
    for mod_name, module in model.named_modules():
        norm = isinstance(module, (nn.BatchNorm2d, nn.LayerNorm))
        prefix = mod_name.replace(".", "_") + "_" if mod_name else ""
        for name, p in module.named_parameters(recurse=False):
            suffix = {"weight": "gamma" if norm else "w",
                      "bias": "beta" if norm else "b"}.get(name, name)
            out[prefix + suffix] = (p, "param")
        for name, buf in module.named_buffers(recurse=False):
            if name in ("running_mean", "running_var"):
                out[prefix + name] = (buf, "state")
    return out


_ST_DTYPES = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16",
              torch.int64: "I64", torch.int32: "I32"}


def _raw_bytes(t):
    t = t.detach().cpu().contiguous()
    try:
        return t.numpy().tobytes()
    except (RuntimeError, TypeError):  # torch built without NumPy
        return bytes(t.view(torch.uint8).flatten().tolist())


def write_safetensors(path, tensors):
    """Write ``{name: tensor}`` in the safetensors format (no extra package)."""
    import json
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        data = _raw_bytes(t)
        header[name] = {"dtype": _ST_DTYPES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    header["__metadata__"] = {"format": "pt", "producer": "bench/gpu_compare.py"}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little"))
        f.write(text)
        for data in blobs:
            f.write(data)


def export(spec, weights_path, inputs_path):
    """Write the initial weights and the batch for memopt-run; return the
    parameter count and ``{name: [kind, shape]}`` for the name check."""
    model = build_model(spec)
    state = memopt_state(model)
    write_safetensors(weights_path, {n: t for n, (t, _) in state.items()})
    write_safetensors(inputs_path, make_inputs(spec))
    return {"param_count": sum(p.numel() for p in model.parameters()),
            "arguments": {n: [kind, list(t.shape)] for n, (t, kind) in state.items()}}


# --------------------------------------------------------------------------
# One training run
# --------------------------------------------------------------------------

def train(spec, variant):
    """Train ``spec``'s model for ``spec["steps"]`` steps as ``variant`` says
    (``checkpoint``, ``amp``, ``inplace``: booleans) and measure it."""
    dev = torch.device(spec["device"])
    cuda = dev.type == "cuda"
    if cuda:
        torch.cuda.init()
        if spec.get("memory_cap_gib"):
            total = torch.cuda.get_device_properties(dev).total_memory
            torch.cuda.set_per_process_memory_fraction(
                min(1.0, spec["memory_cap_gib"] * 2 ** 30 / total), dev)
        torch.cuda.synchronize()
        free, total = torch.cuda.mem_get_info(dev)
        device_before = device_high = total - free
    model = build_model(spec, inplace=variant["inplace"],
                        sdpa=variant.get("sdpa", False)).to(dev).train()
    inputs = {k: v.to(dev) for k, v in make_inputs(spec).items()}
    data = inputs["input"] if spec["model"] in IMAGE_MODELS else inputs["input_ids"]
    labels = inputs["labels"]
    if spec["optimizer"] == "adam":
        opt = torch.optim.Adam(model.parameters(), lr=spec["lr"])
    else:
        opt = torch.optim.SGD(model.parameters(), lr=spec["lr"])
    segments = 0
    if variant["checkpoint"]:
        # checkpoint_sequential stores its last segment whole, so one
        # segment would checkpoint nothing: at least two.
        blocks = len(model.blocks())
        segments = min(blocks, max(2, round(math.sqrt(blocks))))
    scaler = torch.amp.GradScaler("cuda", enabled=variant["amp"]) if cuda else None
    initial_scale = scaler.get_scale() if scaler and variant["amp"] else None
    skipped = 0

    def step():
        nonlocal skipped
        opt.zero_grad(set_to_none=True)
        with torch.autocast(dev.type, dtype=torch.float16, enabled=variant["amp"]):
            loss = model(data, labels, segments)
        if scaler is not None and variant["amp"]:
            before = scaler.get_scale()
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            skipped += scaler.get_scale() < before
        else:
            loss.backward()
            opt.step()
        return loss

    losses, times = [], []
    persistent = torch.cuda.memory_allocated(dev) if cuda else None
    for i in range(spec["steps"]):
        if cuda:
            torch.cuda.synchronize()
        start = time.perf_counter()
        loss = step()
        if cuda:
            torch.cuda.synchronize()
        times.append(1000 * (time.perf_counter() - start))
        losses.append(loss.item())
        if cuda:
            free, total = torch.cuda.mem_get_info(dev)
            device_high = max(device_high, total - free)
            if i == 0:
                # Peak over steps 2..N: step 1 is warm-up (lazy optimizer
                # state, cuDNN/cuBLAS workspaces, allocator growth).
                after_warmup = torch.cuda.memory_allocated(dev)
                torch.cuda.reset_peak_memory_stats(dev)
    measured = times[1:] or times
    result = {
        "segments": segments,
        "losses": losses,
        "step_ms": [round(t, 3) for t in times],
        "step_ms_median": statistics.median(measured),
        "step_ms_mean_all": statistics.mean(times),
        "param_count": sum(p.numel() for p in model.parameters()),
    }
    if scaler is not None and variant["amp"]:
        result.update(loss_scale_initial=initial_scale,
                      loss_scale_final=scaler.get_scale(), skipped_steps=skipped)
    if cuda:
        result.update(
            peak_bytes=torch.cuda.max_memory_allocated(dev)
            if spec["steps"] > 1 else None,
            peak_reserved_bytes=torch.cuda.max_memory_reserved(dev),
            model_and_data_bytes=persistent,
            allocated_after_warmup_bytes=after_warmup,
            device_before_bytes=device_before,
            device_high_water_bytes=device_high,
            device_delta_bytes=device_high - device_before)
    return result
