#!/usr/bin/env python3
"""Write training graphs of well-known neural networks as memopt MLIR.

Usage::

    python3 examples/generate_models.py MODEL [options] [-o FILE]
    python3 examples/generate_models.py --list
    python3 examples/generate_models.py resnet50 --print-param-count

Each output file holds one ``func.func @<model>_train`` written in MLIR's
generic op form using only the ``memopt`` dialect (plus ``arith.constant`` for
scalar constants).  The function contract is:

* arguments, in order: trainable parameters (``{memopt.param}``), batch-norm
  running statistics (``{memopt.state}``), then the data inputs and labels
  (no attribute).  Arguments carry readable SSA names such as ``%conv1_w``.
* results: the scalar loss first, then ``new_running_mean`` and
  ``new_running_var`` of every batch norm, in argument order.

Every op attribute is written explicitly, and every result type is computed by
the small :class:`Graph` builder below, which checks operand shapes the way
the dialect's verifier does.  The script uses only the standard library, so it
can also be imported: :func:`build` returns the graph, :func:`generate` the
text and :func:`param_count` the number of trainable parameters.

Errors (bad options, image sizes too small for a model, ...) are reported on
stderr with exit status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import re
import sys
import tempfile
import types
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

DTYPES = ("f32", "f16", "bf16")
INDEX_TYPE = "i64"
BN_EPSILON = 1e-5
BN_MOMENTUM = 0.1
LN_EPSILON = 1e-5
IMAGE_CHANNELS = 3
# --activation: the op and attributes of the conv nets' post-batch-norm
# activation (memopt.leaky_relu's slope and memopt.elu's alpha).
ACTIVATIONS = {"relu": {}, "leaky_relu": {"alpha": 0.01}, "elu": {"alpha": 1.0}}
DEFAULT_ACTIVATION = "relu"

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*\Z")


class ModelError(Exception):
    """A user-facing error: bad options or a shape that cannot be built."""


# --------------------------------------------------------------------------
# Text formatting
# --------------------------------------------------------------------------

def tensor_type(shape: Sequence[int], elem: str) -> str:
    """Return the MLIR ranked tensor type, e.g. ``tensor<8x3xf32>``."""
    return "tensor<" + "".join(f"{d}x" for d in shape) + elem + ">"


def format_float(value: float) -> str:
    """Format a float in MLIR's exponent style, exactly round-tripping."""
    text = f"{value:.6e}"
    return text if float(text) == value else f"{value:.17e}"


def format_attr(value) -> str:
    """Format a Python value as an MLIR attribute of the contract's kinds."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value} : i64"
    if isinstance(value, float):
        return f"{format_float(value)} : f64"
    if isinstance(value, (tuple, list)):
        return "array<i64: " + ", ".join(str(int(v)) for v in value) + ">"
    raise TypeError(f"unsupported attribute value {value!r}")


def wrap_items(items: Sequence[str], indent: str, width: int = 100) -> str:
    """Join ``items`` with commas, breaking lines before ``width`` columns."""
    lines: list[str] = []
    line = ""
    for i, item in enumerate(items):
        piece = item + ("," if i + 1 < len(items) else "")
        if line and len(indent) + len(line) + 1 + len(piece) > width:
            lines.append(line)
            line = piece
        else:
            line = f"{line} {piece}" if line else piece
    lines.append(line)
    return ("\n" + indent).join(lines)


def num_elements(shape: Sequence[int]) -> int:
    """Return the number of elements of a tensor of ``shape``."""
    return math.prod(shape)


# --------------------------------------------------------------------------
# Graph builder
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class Value:
    """An SSA value: its textual name, static shape and element type."""

    name: str
    shape: tuple[int, ...]
    elem: str

    @property
    def type(self) -> str:
        return tensor_type(self.shape, self.elem)

    @property
    def rank(self) -> int:
        return len(self.shape)


def broadcast_shapes(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...]:
    """Return the NumPy broadcast of two shapes or raise :class:`ModelError`."""
    rank = max(len(a), len(b))
    a = (1,) * (rank - len(a)) + tuple(a)
    b = (1,) * (rank - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            raise ModelError(f"shapes {a} and {b} do not broadcast")
        out.append(max(x, y) if 1 in (x, y) else x)
    return tuple(out)


def window_output(size: int, kernel: int, stride: int, pad: int,
                  dilation: int, what: str) -> int:
    """Output length of a convolution/pooling window along one axis."""
    span = size + 2 * pad - dilation * (kernel - 1) - 1
    if span < 0:
        raise ModelError(
            f"{what}: spatial size {size} is too small for kernel {kernel}, "
            f"stride {stride}, padding {pad} (the output would be empty); "
            f"use a larger --image-size")
    return span // stride + 1


class Graph:
    """Builds one ``func.func`` in memopt's generic form.

    The builder records arguments by kind (parameter, state, data), assigns
    numeric SSA names to op results, computes and checks result shapes, and
    collects the running-statistics outputs of batch norms as extra results.
    """

    ARG_KINDS = ("param", "state", "data")

    def __init__(self, func_name: str, dtype: str):
        self.func_name = func_name
        self.dtype = dtype
        self._args: dict[str, list[Value]] = {k: [] for k in self.ARG_KINDS}
        self._arg_names: set[str] = set()
        self._body: list[str] = []
        self._next_id = 0
        self._next_seed = 0
        self._constants: dict[float, Value] = {}
        self._extra_results: list[Value] = []
        self._loss: Value | None = None

    # -- arguments --------------------------------------------------------

    def _arg(self, kind: str, name: str, shape: Sequence[int],
             elem: str | None) -> Value:
        if not _NAME_RE.match(name):
            raise ValueError(f"invalid argument name {name!r}")
        if name in self._arg_names:
            raise ValueError(f"duplicate argument name {name!r}")
        self._arg_names.add(name)
        value = Value("%" + name, tuple(shape), elem or self.dtype)
        self._args[kind].append(value)
        return value

    def param(self, name: str, shape: Sequence[int]) -> Value:
        """Declare a trainable parameter argument."""
        return self._arg("param", name, shape, None)

    def state(self, name: str, shape: Sequence[int]) -> Value:
        """Declare a non-trainable state argument (BN running statistics)."""
        return self._arg("state", name, shape, None)

    def data(self, name: str, shape: Sequence[int],
             elem: str | None = None) -> Value:
        """Declare a data argument (input or labels)."""
        return self._arg("data", name, shape, elem)

    @property
    def param_count(self) -> int:
        """Total number of elements of all ``memopt.param`` arguments."""
        return sum(num_elements(v.shape) for v in self._args["param"])

    def args(self, kind: str) -> list[Value]:
        """The arguments of one kind, in declaration order."""
        return list(self._args[kind])

    # -- generic emission --------------------------------------------------

    def _fresh(self) -> str:
        name = f"%{self._next_id}"
        self._next_id += 1
        return name

    def _op(self, op: str, operands: Sequence[Value],
            result_shapes: Sequence[Sequence[int]], attrs: dict | None = None,
            result_elem: str | None = None) -> list[Value]:
        """Emit ``"memopt.<op>"`` and return its result values."""
        base = self._fresh()
        elem = result_elem or operands[0].elem
        multi = len(result_shapes) > 1
        results = [Value(f"{base}#{i}" if multi else base, tuple(s), elem)
                   for i, s in enumerate(result_shapes)]
        lhs = f"{base}:{len(results)}" if multi else base
        props = ""
        if attrs:
            props = " <{" + ", ".join(
                f"{k} = {format_attr(v)}" for k, v in attrs.items()) + "}>"
        in_types = ", ".join(v.type for v in operands)
        out_types = ", ".join(v.type for v in results)
        if multi:
            out_types = f"({out_types})"
        self._body.append(
            f'{lhs} = "memopt.{op}"({", ".join(v.name for v in operands)})'
            f"{props} : ({in_types}) -> {out_types}")
        return results

    def _op1(self, op: str, operands: Sequence[Value], shape: Sequence[int],
             attrs: dict | None = None) -> Value:
        return self._op(op, operands, [shape], attrs)[0]

    # -- ops --------------------------------------------------------------

    def conv2d(self, x: Value, w: Value, bias: Value | None = None,
               stride: int = 1, padding: int = 0, dilation: int = 1,
               groups: int = 1) -> Value:
        """NCHW convolution with a KxC/groupsxRxS weight."""
        n, c, h, wd = x.shape
        k, cg, r, s = w.shape
        if cg * groups != c or k % groups:
            raise ValueError(f"conv2d: weight {w.shape} does not fit input {x.shape}")
        if bias is not None and bias.shape != (k,):
            raise ValueError("conv2d: bias must have K elements")
        oh = window_output(h, r, stride, padding, dilation, "conv2d")
        ow = window_output(wd, s, stride, padding, dilation, "conv2d")
        operands = [x, w] + ([bias] if bias is not None else [])
        return self._op1("conv2d", operands, (n, k, oh, ow), {
            "strides": (stride, stride), "padding": (padding, padding),
            "dilations": (dilation, dilation), "groups": groups})

    def linear(self, x: Value, w: Value, bias: Value | None = None) -> Value:
        """``x @ w^T (+ bias)`` with an OxI weight."""
        out_f, in_f = w.shape
        if x.shape[-1] != in_f or (bias is not None and bias.shape != (out_f,)):
            raise ValueError(f"linear: weight {w.shape} does not fit input {x.shape}")
        operands = [x, w] + ([bias] if bias is not None else [])
        return self._op1("linear", operands, x.shape[:-1] + (out_f,))

    def matmul(self, a: Value, b: Value, transpose_a: bool = False,
               transpose_b: bool = False) -> Value:
        """Batched matrix product with broadcast batch dimensions."""
        m, ka = a.shape[-2:][::-1] if transpose_a else a.shape[-2:]
        kb, n = b.shape[-2:][::-1] if transpose_b else b.shape[-2:]
        if ka != kb:
            raise ValueError(f"matmul: {a.shape} and {b.shape} do not contract")
        batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
        return self._op1("matmul", [a, b], batch + (m, n), {
            "transpose_a": transpose_a, "transpose_b": transpose_b})

    def unary(self, op: str, x: Value, **attrs) -> Value:
        """An elementwise op (relu, gelu, sigmoid, tanh, leaky_relu, elu)."""
        return self._op1(op, [x], x.shape, attrs)

    def relu(self, x: Value) -> Value:
        return self.unary("relu", x)

    def add(self, a: Value, b: Value) -> Value:
        return self._op1("add", [a, b], broadcast_shapes(a.shape, b.shape))

    def mul(self, a: Value, b: Value) -> Value:
        return self._op1("mul", [a, b], broadcast_shapes(a.shape, b.shape))

    def batch_norm(self, x: Value, gamma: Value, beta: Value,
                   running_mean: Value, running_var: Value) -> Value:
        """Training-mode batch norm; the new running stats become results."""
        channels = (x.shape[1],)
        if any(v.shape != channels for v in (gamma, beta, running_mean, running_var)):
            raise ValueError("batch_norm: per-channel operands must have C elements")
        y, new_mean, new_var = self._op(
            "batch_norm", [x, gamma, beta, running_mean, running_var],
            [x.shape, channels, channels],
            {"epsilon": BN_EPSILON, "momentum": BN_MOMENTUM})
        self._extra_results += [new_mean, new_var]
        return y

    def layer_norm(self, x: Value, gamma: Value, beta: Value) -> Value:
        """Layer norm over the trailing dimensions of gamma's shape."""
        if gamma.shape != beta.shape or x.shape[x.rank - gamma.rank:] != gamma.shape:
            raise ValueError("layer_norm: gamma/beta do not match trailing dims")
        return self._op1("layer_norm", [x, gamma, beta], x.shape,
                         {"epsilon": LN_EPSILON})

    def pool2d(self, op: str, x: Value, kernel: int, stride: int,
               padding: int = 0) -> Value:
        """``max_pool2d`` or ``avg_pool2d`` with square windows."""
        n, c, h, w = x.shape
        oh = window_output(h, kernel, stride, padding, 1, op)
        ow = window_output(w, kernel, stride, padding, 1, op)
        return self._op1(op, [x], (n, c, oh, ow), {
            "kernel_size": (kernel, kernel), "strides": (stride, stride),
            "padding": (padding, padding)})

    def global_avg_pool2d(self, x: Value) -> Value:
        return self._op1("global_avg_pool2d", [x], x.shape[:2])

    def softmax(self, x: Value, axis: int = -1, causal: bool = False) -> Value:
        return self._op1("softmax", [x], x.shape, {"axis": axis, "causal": causal})

    def dropout(self, x: Value, p: float) -> Value:
        """Dropout with a seed distinct from every other dropout."""
        seed = self._next_seed
        self._next_seed += 1
        return self._op1("dropout", [x], x.shape, {"p": float(p), "seed": seed})

    def reshape(self, x: Value, shape: Sequence[int]) -> Value:
        shape = tuple(shape)
        if num_elements(shape) != num_elements(x.shape):
            raise ValueError(f"reshape: {x.shape} -> {shape} changes the size")
        return self._op1("reshape", [x], shape)

    def transpose(self, x: Value, permutation: Sequence[int]) -> Value:
        if sorted(permutation) != list(range(x.rank)):
            raise ValueError(f"transpose: bad permutation {permutation}")
        shape = tuple(x.shape[p] for p in permutation)
        return self._op1("transpose", [x], shape, {"permutation": tuple(permutation)})

    def slice(self, x: Value, offsets: Sequence[int], sizes: Sequence[int]) -> Value:
        """A unit-stride slice with one offset and size per dimension."""
        if len(offsets) != x.rank or len(sizes) != x.rank or any(
                o < 0 or s < 1 or o + s > d for o, s, d in zip(offsets, sizes, x.shape)):
            raise ValueError(f"slice: {offsets}/{sizes} out of bounds of {x.shape}")
        return self._op1("slice", [x], sizes, {
            "offsets": tuple(offsets), "sizes": tuple(sizes),
            "strides": (1,) * x.rank})

    def concat(self, xs: Sequence[Value], axis: int) -> Value:
        first = xs[0].shape
        for v in xs:
            if v.rank != len(first) or any(
                    d != e for i, (d, e) in enumerate(zip(v.shape, first)) if i != axis):
                raise ValueError("concat: operands differ off the concat axis")
        shape = list(first)
        shape[axis] = sum(v.shape[axis] for v in xs)
        return self._op1("concat", xs, shape, {"axis": axis})

    def upsample_nearest2d(self, x: Value, scale: int) -> Value:
        n, c, h, w = x.shape
        return self._op1("upsample_nearest2d", [x], (n, c, h * scale, w * scale),
                         {"scale": scale})

    def embedding(self, table: Value, ids: Value) -> Value:
        return self._op1("embedding", [table, ids], ids.shape + table.shape[1:])

    def cross_entropy(self, logits: Value, labels: Value) -> Value:
        """Mean cross-entropy of NxC logits against N integer labels."""
        if logits.rank != 2 or labels.shape != logits.shape[:1]:
            raise ValueError("cross_entropy: expects NxC logits and N labels")
        return self._op1("cross_entropy", [logits, labels], ())

    def scalar(self, value: float) -> Value:
        """A 0-d constant of the model's float type (emitted once per value)."""
        if value not in self._constants:
            name = self._fresh()
            self._body.append(f"{name} = arith.constant dense<{format_float(value)}> "
                              f": {tensor_type((), self.dtype)}")
            self._constants[value] = Value(name, (), self.dtype)
        return self._constants[value]

    # -- finishing --------------------------------------------------------

    def set_loss(self, loss: Value) -> None:
        """Make ``loss`` (a 0-d tensor) the function's first result."""
        if loss.shape != ():
            raise ValueError("the loss must be a 0-d tensor")
        self._loss = loss

    def results(self) -> list[Value]:
        """The function results: loss, then the BN running-stat outputs."""
        if self._loss is None:
            raise ValueError("set_loss() was not called")
        return [self._loss] + self._extra_results

    def render(self, header: Iterable[str] = ()) -> str:
        """Return the MLIR text, preceded by ``header`` as comment lines."""
        lines = [f"// {h}".rstrip() for h in header]
        args = [f"    {v.name}: {v.type}" + (f" {{memopt.{kind}}}" if kind != "data" else "")
                for kind in self.ARG_KINDS for v in self._args[kind]]
        results = self.results()
        result_types = [v.type for v in results]
        ret_sig = result_types[0] if len(results) == 1 else \
            "(" + wrap_items(result_types, "    ") + ")"
        lines.append(f"func.func @{self.func_name}(")
        lines.append(",\n".join(args))
        lines.append(f") -> {ret_sig} {{")
        lines.extend("  " + line for line in self._body)
        names = [v.name for v in results]
        ret = f"  return {', '.join(names)} : {', '.join(result_types)}"
        if len(ret) > 100:
            ret = ("  return " + wrap_items(names, " " * 9) + "\n         : "
                   + wrap_items(result_types, " " * 11))
        lines += [ret, "}"]
        return "\n".join(lines) + "\n"


class Net(Graph):
    """A :class:`Graph` with layers that declare their own parameters.

    Parameter names follow ``<layer>_w`` / ``<layer>_b`` for convolutions and
    linear layers and ``<layer>_gamma`` / ``<layer>_beta`` (plus state
    ``<layer>_running_mean`` / ``<layer>_running_var``) for normalisations.
    :meth:`act` emits :attr:`activation`, the conv nets' ``--activation``.
    """

    activation = DEFAULT_ACTIVATION

    def act(self, x: Value) -> Value:
        """The conv layer activation: ReLU, or ``--activation``'s op."""
        return self.unary(self.activation, x, **ACTIVATIONS[self.activation])

    def conv(self, x: Value, name: str, out_channels: int, kernel: int,
             stride: int = 1, padding: int = 0, bias: bool = False) -> Value:
        w = self.param(f"{name}_w", (out_channels, x.shape[1], kernel, kernel))
        b = self.param(f"{name}_b", (out_channels,)) if bias else None
        return self.conv2d(x, w, b, stride=stride, padding=padding)

    def bn(self, x: Value, name: str) -> Value:
        c = (x.shape[1],)
        gamma, beta = self.param(f"{name}_gamma", c), self.param(f"{name}_beta", c)
        mean = self.state(f"{name}_running_mean", c)
        var = self.state(f"{name}_running_var", c)
        return self.batch_norm(x, gamma, beta, mean, var)

    def conv_bn(self, x: Value, conv_name: str, bn_name: str, out_channels: int,
                kernel: int, stride: int = 1, padding: int = 0,
                relu: bool = True) -> Value:
        """Bias-free conv, batch norm and optionally the activation
        (:meth:`act`, ReLU by default)."""
        y = self.bn(self.conv(x, conv_name, out_channels, kernel, stride, padding),
                    bn_name)
        return self.act(y) if relu else y

    def bn_relu_conv(self, x: Value, bn_name: str, conv_name: str,
                     out_channels: int, kernel: int, padding: int = 0) -> Value:
        """Pre-activation ordering: batch norm, activation (:meth:`act`),
        bias-free conv."""
        y = self.act(self.bn(x, bn_name))
        return self.conv(y, conv_name, out_channels, kernel, padding=padding)

    def fc(self, x: Value, name: str, out_features: int, bias: bool = True) -> Value:
        w = self.param(f"{name}_w", (out_features, x.shape[-1]))
        b = self.param(f"{name}_b", (out_features,)) if bias else None
        return self.linear(x, w, b)

    def ln(self, x: Value, name: str) -> Value:
        d = (x.shape[-1],)
        return self.layer_norm(x, self.param(f"{name}_gamma", d),
                               self.param(f"{name}_beta", d))


# --------------------------------------------------------------------------
# Architectures
# --------------------------------------------------------------------------

def _image_net(o, model: str, label_shape: Sequence[int] | None = None
               ) -> tuple[Net, Value, Value]:
    """A :class:`Net` with NCHW image input and integer labels (default N)."""
    g = Net(f"{model.replace('-', '_')}_train", o.dtype)
    g.activation = getattr(o, "activation", DEFAULT_ACTIVATION)
    x = g.data("input", (o.batch, IMAGE_CHANNELS, o.image_size, o.image_size))
    labels = g.data("labels", label_shape or (o.batch,), INDEX_TYPE)
    return g, x, labels


def _classify(g: Net, x: Value, labels: Value, classes: int,
              name: str = "fc") -> Net:
    """Global average pool, linear classifier and cross-entropy loss."""
    logits = g.fc(g.global_avg_pool2d(x), name, classes)
    g.set_loss(g.cross_entropy(logits, labels))
    return g


def _downsample(g: Net, x: Value, prefix: str, out_channels: int,
                stride: int) -> Value:
    """The identity shortcut, or a 1x1 conv + BN where the shape changes."""
    if stride == 1 and x.shape[1] == out_channels:
        return x
    return g.conv_bn(x, f"{prefix}_downsample_0", f"{prefix}_downsample_1",
                     out_channels, 1, stride, relu=False)


def basic_block(g: Net, x: Value, prefix: str, width: int, stride: int) -> Value:
    """ResNet basic block: two 3x3 conv-BN, residual add, ReLU."""
    y = g.conv_bn(x, f"{prefix}_conv1", f"{prefix}_bn1", width, 3, stride, 1)
    y = g.conv_bn(y, f"{prefix}_conv2", f"{prefix}_bn2", width, 3, 1, 1, relu=False)
    return g.relu(g.add(y, _downsample(g, x, prefix, width, stride)))


def bottleneck_block(g: Net, x: Value, prefix: str, width: int, stride: int) -> Value:
    """ResNet v1.5 bottleneck: 1x1, strided 3x3, 1x1 (x4), residual, ReLU."""
    y = g.conv_bn(x, f"{prefix}_conv1", f"{prefix}_bn1", width, 1)
    y = g.conv_bn(y, f"{prefix}_conv2", f"{prefix}_bn2", width, 3, stride, 1)
    y = g.conv_bn(y, f"{prefix}_conv3", f"{prefix}_bn3", 4 * width, 1, relu=False)
    return g.relu(g.add(y, _downsample(g, x, prefix, 4 * width, stride)))


def _resnet_stages(g: Net, x: Value, block: Callable, widths: Sequence[int],
                   depths: Sequence[int]) -> Value:
    """Stages ``layer1..`` of blocks; every stage after the first halves H, W."""
    for stage, (width, depth) in enumerate(zip(widths, depths), 1):
        for i in range(depth):
            stride = 2 if stage > 1 and i == 0 else 1
            x = block(g, x, f"layer{stage}_{i}", width, stride)
    return x


def _imagenet_resnet(o, model: str, block: Callable, depths: Sequence[int]) -> Net:
    g, x, labels = _image_net(o, model)
    x = g.conv_bn(x, "conv1", "bn1", 64, 7, 2, 3)
    x = g.pool2d("max_pool2d", x, 3, 2, 1)
    x = _resnet_stages(g, x, block, (64, 128, 256, 512), depths)
    return _classify(g, x, labels, o.classes)


def build_resnet18(o) -> Net:
    """torchvision resnet18."""
    return _imagenet_resnet(o, "resnet18", basic_block, (2, 2, 2, 2))


def build_resnet50(o) -> Net:
    """torchvision resnet50 (v1.5: stride on the 3x3 conv)."""
    return _imagenet_resnet(o, "resnet50", bottleneck_block, (3, 4, 6, 3))


RESNET50_STAGE_BLOCKS = (3, 4, 6, 3)


def resnet_stage_blocks(depth: int) -> tuple[int, ...]:
    """Bottleneck blocks per stage of a ``resnet`` of ``depth`` = 3 * blocks + 2.

    The blocks are shared out over the four stages in resnet50's 3:4:6:3
    proportion by largest remainder (ties to the earlier stage), so depth 50
    gives (3, 4, 6, 3) and depth 1001 (333 blocks) gives (63, 83, 125, 62).
    Only depth 50 is a torchvision model: resnet101/152 weight stage 3 more.
    """
    if depth < 14 or (depth - 2) % 3:
        raise ModelError(f"--depth must be of the form 3n+2 with n >= 4 bottleneck "
                         f"blocks (14, 50, 101, 152, 1001, ...), got {depth}")
    blocks = (depth - 2) // 3
    total = sum(RESNET50_STAGE_BLOCKS)
    quotas = [blocks * share for share in RESNET50_STAGE_BLOCKS]
    counts = [q // total for q in quotas]
    by_remainder = sorted(range(len(quotas)), key=lambda i: (-(quotas[i] % total), i))
    for i in by_remainder[:blocks - sum(counts)]:
        counts[i] += 1
    return tuple(counts)


def build_resnet(o) -> Net:
    """ImageNet ResNet of any depth 3n+2: resnet50's stem, bottleneck blocks
    (v1.5) and 64/128/256/512 (x4) stages, blocks in the 3:4:6:3 proportion."""
    return _imagenet_resnet(o, "resnet", bottleneck_block, resnet_stage_blocks(o.depth))


def build_cifar_resnet(o) -> Net:
    """He et al. (2016) CIFAR ResNet of depth 6n+2 with option-B shortcuts."""
    if o.depth < 8 or (o.depth - 2) % 6:
        raise ModelError(f"--depth must be of the form 6n+2 with n >= 1 "
                         f"(8, 14, 20, 32, 44, 56, 110, 1202, ...), got {o.depth}")
    n = (o.depth - 2) // 6
    g, x, labels = _image_net(o, "cifar-resnet")
    x = g.conv_bn(x, "conv1", "bn1", 16, 3, 1, 1)
    x = _resnet_stages(g, x, basic_block, (16, 32, 64), (n, n, n))
    return _classify(g, x, labels, o.classes)


VGG16_CONFIG = (64, 64, "M", 128, 128, "M", 256, 256, 256, "M",
                512, 512, 512, "M", 512, 512, 512, "M")


def build_vgg16(o) -> Net:
    """torchvision vgg16 (no batch norm); names follow its state dict."""
    g, x, labels = _image_net(o, "vgg16")
    for index, item in enumerate(VGG16_CONFIG):
        if item == "M":
            x = g.pool2d("max_pool2d", x, 2, 2)
        else:
            x = g.act(g.conv(x, f"features_{index}", item, 3, padding=1, bias=True))
    x = g.reshape(x, (o.batch, num_elements(x.shape[1:])))
    x = g.dropout(g.relu(g.fc(x, "classifier_0", 4096)), 0.5)
    x = g.dropout(g.relu(g.fc(x, "classifier_3", 4096)), 0.5)
    g.set_loss(g.cross_entropy(g.fc(x, "classifier_6", o.classes), labels))
    return g


def _dense_block(g: Net, x: Value, prefix: str, layers: int, growth: int,
                 bn_size: int) -> Value:
    """DenseNet block; each layer sees the concat of all earlier features."""
    features = [x]
    for i in range(1, layers + 1):
        name = f"{prefix}_denselayer{i}"
        inp = g.concat(features, 1) if len(features) > 1 else features[0]
        y = g.bn_relu_conv(inp, f"{name}_norm1", f"{name}_conv1", bn_size * growth, 1)
        y = g.bn_relu_conv(y, f"{name}_norm2", f"{name}_conv2", growth, 3, 1)
        features.append(y)
    return g.concat(features, 1)


def build_densenet121(o) -> Net:
    """torchvision densenet121 (growth 32, blocks 6/12/24/16, bn_size 4)."""
    growth, bn_size, blocks = 32, 4, (6, 12, 24, 16)
    g, x, labels = _image_net(o, "densenet121")
    x = g.conv_bn(x, "features_conv0", "features_norm0", 64, 7, 2, 3)
    x = g.pool2d("max_pool2d", x, 3, 2, 1)
    for b, layers in enumerate(blocks, 1):
        x = _dense_block(g, x, f"features_denseblock{b}", layers, growth, bn_size)
        if b < len(blocks):
            name = f"features_transition{b}"
            x = g.bn_relu_conv(x, f"{name}_norm", f"{name}_conv", x.shape[1] // 2, 1)
            x = g.pool2d("avg_pool2d", x, 2, 2)
    x = g.act(g.bn(x, "features_norm5"))
    return _classify(g, x, labels, o.classes, "classifier")


UNET_WIDTHS = (64, 128, 256, 512, 1024)


def _double_conv(g: Net, x: Value, prefix: str, channels: int) -> Value:
    """Two padded 3x3 conv-BN-ReLU layers."""
    x = g.conv_bn(x, f"{prefix}_conv1", f"{prefix}_bn1", channels, 3, 1, 1)
    return g.conv_bn(x, f"{prefix}_conv2", f"{prefix}_bn2", channels, 3, 1, 1)


def build_unet(o) -> Net:
    """U-Net (Ronneberger et al. 2015) with padded convs and batch norm."""
    levels = len(UNET_WIDTHS) - 1
    if o.image_size % 2 ** levels:
        raise ModelError(f"unet needs --image-size divisible by {2 ** levels} "
                         f"({levels} 2x2 max-pools), got {o.image_size}")
    pixels = o.batch * o.image_size * o.image_size
    g, x, labels = _image_net(o, "unet", (pixels,))
    skips = []
    for level, width in enumerate(UNET_WIDTHS[:-1], 1):
        skips.append(_double_conv(g, x, f"enc{level}", width))
        x = g.pool2d("max_pool2d", skips[-1], 2, 2)
    x = _double_conv(g, x, "bottleneck", UNET_WIDTHS[-1])
    for level in range(levels, 0, -1):
        width = UNET_WIDTHS[level - 1]
        up = g.conv(g.upsample_nearest2d(x, 2), f"up{level}_conv", width, 3,
                    padding=1, bias=True)
        x = _double_conv(g, g.concat([skips[level - 1], up], 1), f"dec{level}", width)
    logits = g.conv(x, "final", o.classes, 1, bias=True)
    logits = g.reshape(g.transpose(logits, (0, 2, 3, 1)), (pixels, o.classes))
    g.set_loss(g.cross_entropy(logits, labels))
    return g


def _attention(g: Net, x: Value, prefix: str, heads: int) -> Value:
    """Causal multi-head self-attention (GPT-2 ``attn``), without residual."""
    b, t, d = x.shape
    hd = d // heads
    qkv = g.fc(x, f"{prefix}_c_attn", 3 * d)

    def head_split(i: int) -> Value:
        part = g.slice(qkv, (0, 0, i * d), (b, t, d))
        return g.transpose(g.reshape(part, (b, t, heads, hd)), (0, 2, 1, 3))

    q, k, v = head_split(0), head_split(1), head_split(2)
    scores = g.mul(g.matmul(q, k, transpose_b=True), g.scalar(1.0 / math.sqrt(hd)))
    probs = g.dropout(g.softmax(scores, axis=-1, causal=True), 0.1)
    y = g.transpose(g.matmul(probs, v), (0, 2, 1, 3))
    return g.fc(g.reshape(y, (b, t, d)), f"{prefix}_c_proj", d)


def _gpt2_block(g: Net, x: Value, prefix: str, heads: int) -> Value:
    """Pre-LN transformer block: attention and a 4x GELU MLP, both residual."""
    d = x.shape[-1]
    x = g.add(x, _attention(g, g.ln(x, f"{prefix}_ln_1"), f"{prefix}_attn", heads))
    y = g.unary("gelu", g.fc(g.ln(x, f"{prefix}_ln_2"), f"{prefix}_mlp_c_fc", 4 * d))
    return g.add(x, g.fc(y, f"{prefix}_mlp_c_proj", d))


def build_gpt2(o) -> Net:
    """GPT-2 language-model training step with tied input/output embeddings."""
    if o.dim % o.heads:
        raise ModelError(f"--dim ({o.dim}) must be divisible by --heads ({o.heads})")
    b, t, d = o.batch, o.seq, o.dim
    g = Net("gpt2_train", o.dtype)
    wte = g.param("wte", (o.vocab, d))
    wpe = g.param("wpe", (t, d))
    ids = g.data("input_ids", (b, t), INDEX_TYPE)
    labels = g.data("labels", (b * t,), INDEX_TYPE)
    x = g.add(g.embedding(wte, ids), wpe)
    for i in range(o.layers):
        x = _gpt2_block(g, x, f"h_{i}", o.heads)
    logits = g.linear(g.ln(x, "ln_f"), wte)
    g.set_loss(g.cross_entropy(g.reshape(logits, (b * t, o.vocab)), labels))
    return g


def build_lstm(o) -> Net:
    """Single-layer LSTM unrolled over --seq steps, classifying the last h."""
    (hidden,) = _sizes(o.hidden, "--hidden", count=1)
    b, n = o.batch, o.input_size
    g = Net("lstm_train", o.dtype)
    x = g.data("input", (b, o.seq, n))
    labels = g.data("labels", (b,), INDEX_TYPE)
    w_ih = g.param("weight_ih_l0", (4 * hidden, n))
    w_hh = g.param("weight_hh_l0", (4 * hidden, hidden))
    b_ih = g.param("bias_ih_l0", (4 * hidden,))
    b_hh = g.param("bias_hh_l0", (4 * hidden,))
    h = c = None
    for t in range(o.seq):
        x_t = g.reshape(g.slice(x, (0, t, 0), (b, 1, n)), (b, n))
        gates = g.linear(x_t, w_ih, b_ih)
        # With h0 = 0 the recurrent term W_hh·h + b_hh is just b_hh, which
        # PyTorch still adds (broadcast over the batch).
        recurrent = b_hh if h is None else g.linear(h, w_hh, b_hh)
        gates = g.add(gates, recurrent)

        def gate(k: int) -> Value:
            return g.slice(gates, (0, k * hidden), (b, hidden))

        i_g, o_g = g.unary("sigmoid", gate(0)), g.unary("sigmoid", gate(3))
        c_new = g.mul(i_g, g.unary("tanh", gate(2)))
        if c is not None:
            c_new = g.add(g.mul(g.unary("sigmoid", gate(1)), c), c_new)
        c = c_new
        h = g.mul(o_g, g.unary("tanh", c))
    g.set_loss(g.cross_entropy(g.fc(h, "fc", o.classes), labels))
    return g


def build_mlp(o) -> Net:
    """Multi-layer perceptron on flattened single-channel images."""
    g = Net("mlp_train", o.dtype)
    x = g.data("input", (o.batch, o.image_size * o.image_size))
    labels = g.data("labels", (o.batch,), INDEX_TYPE)
    for i, width in enumerate(_sizes(o.hidden, "--hidden"), 1):
        x = g.relu(g.fc(x, f"fc{i}", width))
    g.set_loss(g.cross_entropy(g.fc(x, "out", o.classes), labels))
    return g


# --------------------------------------------------------------------------
# Model registry and options
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class ModelSpec:
    """A model: its builder, the options it accepts (with defaults), notes."""

    build: Callable[[types.SimpleNamespace], Net]
    defaults: dict
    notes: tuple[str, ...] = ()


def _image_defaults(image_size: int, classes: int) -> dict:
    return {"batch": 8, "image_size": image_size, "classes": classes, "dtype": "f32"}


def _conv_defaults(image_size: int, classes: int) -> dict:
    """A conv net's defaults: an image model's, plus --activation."""
    return {**_image_defaults(image_size, classes), "activation": DEFAULT_ACTIVATION}


_TORCHVISION_NOTE = ("names follow torchvision's state dict with '.' written as '_'; "
                     "w = weight, b = bias, BN gamma/beta = weight/bias",)

MODELS: dict[str, ModelSpec] = {
    "mlp": ModelSpec(build_mlp, {**_image_defaults(28, 10), "hidden": "512,256"},
                     ("input is the flattened single-channel image (image_size^2 "
                      "features); --hidden lists the hidden layer widths",)),
    "resnet18": ModelSpec(build_resnet18, _conv_defaults(224, 1000), _TORCHVISION_NOTE),
    "resnet50": ModelSpec(build_resnet50, _conv_defaults(224, 1000),
                          _TORCHVISION_NOTE + ("v1.5: the stride is on the 3x3 conv",)),
    "resnet": ModelSpec(
        build_resnet, {**_conv_defaults(224, 1000), "depth": 50},
        _TORCHVISION_NOTE + (
            "ImageNet ResNet of depth 3n+2 (n bottleneck blocks of 3 convs, plus the "
            "stem conv and the classifier), blocks shared out over the four stages "
            "in resnet50's 3:4:6:3 proportion; depth 50 is resnet50 (v1.5), depth "
            "1001 the 1,000-layer setting of Chen et al. 2016",)),
    "cifar-resnet": ModelSpec(
        build_cifar_resnet, {**_conv_defaults(32, 10), "depth": 20},
        ("He et al. 2016 CIFAR ResNet (depth 6n+2, 16/32/64 channels)",
         "shortcuts use option B (1x1 conv stride 2 + BN) where the shape "
         "changes, since memopt has no pad op for option A")),
    "vgg16": ModelSpec(
        build_vgg16, _conv_defaults(224, 1000),
        _TORCHVISION_NOTE + (
            "torchvision's AdaptiveAvgPool2d((7, 7)) is the identity at 224x224 and "
            "is omitted: at other image sizes the last feature map is flattened as "
            "it is, so classifier_0's input size follows --image-size",)),
    "densenet121": ModelSpec(
        build_densenet121, _conv_defaults(224, 1000),
        _TORCHVISION_NOTE + ("as in torchvision, each dense layer concatenates all "
                             "earlier features of its block",)),
    "unet": ModelSpec(
        build_unet, _conv_defaults(128, 2),
        ("U-Net (Ronneberger et al. 2015) with padded 3x3 convs + BN + ReLU, "
         f"{IMAGE_CHANNELS}-channel input; up-conv = nearest upsample x2 + 3x3 "
         "conv with bias; labels are per pixel in NHW order",)),
    "gpt2": ModelSpec(
        build_gpt2, {"batch": 8, "dtype": "f32", "layers": 12, "dim": 768,
                     "heads": 12, "vocab": 50257, "seq": 1024},
        ("names follow Hugging Face GPT-2; linear weights are OxI; "
         "the LM head reuses %wte (tied)", "labels are per token in BT order")),
    "lstm": ModelSpec(
        build_lstm, {"batch": 8, "classes": 10, "dtype": "f32", "seq": 32,
                     "input_size": 64, "hidden": "256"},
        ("PyTorch gate order i, f, g, o; at t = 0, h = c = 0, so W_hh·h reduces to "
         "b_hh and the forget gate's term f·c vanishes",)),
}

_STRING_OPTIONS = {"dtype", "hidden", "activation"}


def _sizes(value, option: str, count: int | None = None) -> tuple[int, ...]:
    """Parse ``512,256`` (or an int or a sequence) as positive integers."""
    if isinstance(value, int):
        items = [value]
    elif isinstance(value, str):
        items = value.split(",")
    else:
        items = list(value)
    try:
        sizes = tuple(int(v) for v in items)
    except (TypeError, ValueError):
        sizes = ()
    if not sizes or min(sizes) < 1 or (count is not None and len(sizes) != count):
        what = "a positive integer" if count == 1 else "comma-separated positive integers"
        raise ModelError(f"{option} must be {what}, got {value!r}")
    return sizes


def resolve_options(model: str, **options) -> types.SimpleNamespace:
    """Merge ``options`` into the model's defaults, validating them."""
    if model not in MODELS:
        raise ModelError(f"unknown model {model!r}; choose from {', '.join(MODELS)}")
    defaults = MODELS[model].defaults
    for key, value in options.items():
        if key not in defaults:
            accepted = ", ".join("--" + k.replace("_", "-") for k in defaults)
            raise ModelError(f"option --{key.replace('_', '-')} does not apply to "
                             f"model {model} (it accepts {accepted})")
        if key not in _STRING_OPTIONS and (
                isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise ModelError(f"--{key.replace('_', '-')} must be a positive integer, "
                             f"got {value!r}")
    resolved = {**defaults, **options}
    if resolved["dtype"] not in DTYPES:
        raise ModelError(f"--dtype must be one of {', '.join(DTYPES)}")
    if resolved.get("activation", DEFAULT_ACTIVATION) not in ACTIVATIONS:
        raise ModelError(f"--activation must be one of {', '.join(ACTIVATIONS)}")
    return types.SimpleNamespace(**resolved)


def build(model: str, **options) -> Net:
    """Build the training graph of ``model`` with the given option overrides."""
    opts = resolve_options(model, **options)
    return MODELS[model].build(opts)


def param_count(model: str, **options) -> int:
    """Number of trainable parameters of ``model`` with these options."""
    return build(model, **options).param_count


def command_line(model: str, opts: types.SimpleNamespace) -> str:
    """The generator command line that reproduces ``opts``.

    ``--activation`` is left out at its default, so the text of a ReLU net is
    the same as before the option existed."""
    flags = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in vars(opts).items()
                     if not (k == "activation" and v == DEFAULT_ACTIVATION))
    return f"examples/generate_models.py {model} {flags}"


def generate(model: str, **options) -> str:
    """Return the MLIR text of ``model``'s training graph."""
    opts = resolve_options(model, **options)
    graph = MODELS[model].build(opts)
    n_bn = len(graph.args("state")) // 2
    header = [
        f"memopt training graph: {model}",
        f"generated by: {command_line(model, opts)}",
        f"trainable parameters: {graph.param_count}",
        f"arguments: {len(graph.args('param'))} parameters {{memopt.param}}, "
        f"{2 * n_bn} running statistics {{memopt.state}}, then data",
        "results: loss" + (f", then new running mean/var of {n_bn} batch norms"
                           if n_bn else ""),
    ] + [f"note: {n}" for n in MODELS[model].notes]
    return graph.render(header)


# --------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------

def write_atomically(path: str, text: str) -> None:
    """Write ``text`` to a temp file next to ``path``, then rename it over."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp",
                               dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, _new_file_mode(path))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _new_file_mode(path: str) -> int:
    """Keep an existing file's mode; otherwise 0666 minus the umask."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


_OPTION_HELP = {
    "batch": "batch size (default 8)",
    "image_size": "input height and width (default: model-dependent)",
    "classes": "number of classes (default: model-dependent)",
    "dtype": "float element type: " + ", ".join(DTYPES) + " (default f32)",
    "depth": "cifar-resnet depth 6n+2 (default 20); resnet depth 3n+2 (default 50)",
    "layers": "gpt2 transformer blocks (default 12)",
    "dim": "gpt2 model width (default 768)",
    "heads": "gpt2 attention heads (default 12)",
    "vocab": "gpt2 vocabulary size (default 50257)",
    "seq": "sequence length (gpt2 1024, lstm 32)",
    "input_size": "lstm input features (default 64)",
    "hidden": "mlp hidden widths, e.g. 512,256; lstm hidden size (default 256)",
    "activation": "conv nets only (resnet18, resnet50, resnet, cifar-resnet, vgg16, "
                  "densenet121, unet; an error for mlp, gpt2, lstm): the activation "
                  "after every batch norm, or after every convolution in vgg16, which "
                  "has no batch norm: relu (default), leaky_relu (slope alpha = 0.01) "
                  "or elu (alpha = 1.0); the ReLU after a residual add and vgg16's "
                  "classifier ReLUs stay ReLU",
}


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="generate_models.py",
        description="Write a memopt MLIR training graph of a well-known network.")
    parser.add_argument("model", nargs="?", choices=list(MODELS), metavar="MODEL",
                        help="one of: " + ", ".join(MODELS))
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="write to FILE (atomically) instead of stdout")
    parser.add_argument("--list", action="store_true", help="print the model names")
    parser.add_argument("--print-param-count", action="store_true",
                        help="print only the number of trainable parameters")
    for key, text in _OPTION_HELP.items():
        parser.add_argument("--" + key.replace("_", "-"), dest=key, default=None,
                            type=str if key in _STRING_OPTIONS else _positive_int,
                            choices=DTYPES if key == "dtype" else
                            list(ACTIVATIONS) if key == "activation" else None,
                            help=text)
    return parser


def run(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    parser = make_parser()
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(MODELS))
        return 0
    if args.model is None:
        parser.error("a MODEL is required (see --list)")
    options = {k: getattr(args, k) for k in _OPTION_HELP if getattr(args, k) is not None}
    if args.print_param_count:
        text = f"{param_count(args.model, **options)}\n"
    else:
        text = generate(args.model, **options)
    if args.output:
        try:
            write_atomically(args.output, text)
        except OSError as e:
            raise ModelError(f"cannot write {args.output}: {e.strerror or e}") from e
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI, turning every error into a message and exit status 2."""
    try:
        return run(argv)
    except ModelError as e:
        print(f"generate_models.py: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 2
    except Exception as e:  # noqa: BLE001 - never show a traceback
        print(f"generate_models.py: internal error: {type(e).__name__}: {e}",
              file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
