"""Tests of examples/generate_models.py (standard library only).

Run from the repository root with::

    python3 -m unittest examples/test_generate_models.py

The parameter counts are checked against published reference numbers and
against closed-form formulas written here independently of the generator.
If ``mlir-opt`` (LLVM 22) is installed, the generated text is also parsed.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "generate_models.py")


def _load_generator():
    spec = importlib.util.spec_from_file_location("generate_models", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


gm = _load_generator()


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True,
                          text=True, timeout=120)


def _find_mlir_opt() -> str | None:
    for candidate in ("/usr/lib/llvm-22/bin/mlir-opt", shutil.which("mlir-opt-22")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


# ---------------------------------------------------------------------------
# Closed forms, written independently of the generator.
# ---------------------------------------------------------------------------

def conv_params(cin: int, cout: int, k: int, bias: bool = False) -> int:
    return cin * cout * k * k + (cout if bias else 0)


def bn_params(c: int) -> int:
    return 2 * c  # gamma and beta; running stats are state, not parameters


def linear_params(i: int, o: int, bias: bool = True) -> int:
    return i * o + (o if bias else 0)


def cifar_resnet_params(depth: int, classes: int) -> int:
    """He et al. CIFAR ResNet with option-B (1x1 conv + BN) shortcuts."""
    n = (depth - 2) // 6
    total = conv_params(3, 16, 3) + bn_params(16)
    cin = 16
    for width in (16, 32, 64):
        block = 2 * (conv_params(width, width, 3) + bn_params(width))
        first = (conv_params(cin, width, 3) + conv_params(width, width, 3)
                 + 2 * bn_params(width))
        if cin != width:
            first += conv_params(cin, width, 1) + bn_params(width)
        total += first + (n - 1) * block
        cin = width
    return total + linear_params(64, classes)


def bottleneck_resnet_params(stage_blocks: tuple[int, ...], classes: int) -> int:
    """ImageNet bottleneck ResNet: 7x7 stem, stages of 1x1-3x3-1x1 (x4) blocks
    with a 1x1 conv + BN shortcut on each stage's first block, linear head."""
    total = conv_params(3, 64, 7) + bn_params(64)
    cin = 64
    for width, blocks in zip((64, 128, 256, 512), stage_blocks):
        out = 4 * width
        block = (conv_params(out, width, 1) + conv_params(width, width, 3)
                 + conv_params(width, out, 1) + 2 * bn_params(width) + bn_params(out))
        first = block - conv_params(out, width, 1) + conv_params(cin, width, 1)
        first += conv_params(cin, out, 1) + bn_params(out)  # downsample
        total += first + (blocks - 1) * block
        cin = out
    return total + linear_params(cin, classes)


def unet_params(classes: int, in_channels: int = 3) -> int:
    """U-Net with bias-free double convs + BN, biased up-convs and head."""
    def double_conv(cin, cout):
        return (conv_params(cin, cout, 3) + conv_params(cout, cout, 3)
                + 2 * bn_params(cout))

    widths = (64, 128, 256, 512, 1024)
    total, cin = 0, in_channels
    for w in widths:  # four encoder levels and the bottleneck
        total += double_conv(cin, w)
        cin = w
    for w in reversed(widths[:-1]):  # decoder: up-conv, concat, double conv
        total += conv_params(2 * w, w, 3, bias=True) + double_conv(2 * w, w)
    return total + conv_params(64, classes, 1, bias=True)


def gpt2_params(layers: int, dim: int, vocab: int, seq: int) -> int:
    """Tied embeddings: wte + wpe + L * (2 LN + qkv + proj + MLP) + ln_f."""
    per_block = (4 * dim                      # ln_1, ln_2
                 + dim * 3 * dim + 3 * dim    # c_attn
                 + dim * dim + dim            # attn c_proj
                 + dim * 4 * dim + 4 * dim    # mlp c_fc
                 + 4 * dim * dim + dim)       # mlp c_proj
    return vocab * dim + seq * dim + layers * per_block + 2 * dim


def lstm_params(inp: int, hidden: int, classes: int) -> int:
    return 4 * hidden * (inp + hidden) + 8 * hidden + hidden * classes + classes


def mlp_params(inp: int, hidden: list[int], classes: int) -> int:
    sizes = [inp] + hidden + [classes]
    return sum(a * b + b for a, b in zip(sizes, sizes[1:]))


REFERENCE_COUNTS = {
    "vgg16": 138_357_544,
    "resnet18": 11_689_512,
    "resnet50": 25_557_032,
    "resnet": 25_557_032,  # default depth 50 is resnet50
    "densenet121": 7_978_856,
    "gpt2": 124_439_808,
    "mlp": 535_818,
    "lstm": lstm_params(64, 256, 10),
    "cifar-resnet": cifar_resnet_params(20, 10),
    "unet": unet_params(2),
}


class ReferenceCountTest(unittest.TestCase):
    """Default configurations reproduce the published parameter counts."""

    def test_closed_forms_match_known_values(self):
        self.assertEqual(mlp_params(784, [512, 256], 10), 535_818)
        self.assertEqual(gpt2_params(12, 768, 50257, 1024), 124_439_808)

    def test_counts_via_import(self):
        for model, expected in REFERENCE_COUNTS.items():
            with self.subTest(model=model):
                self.assertEqual(gm.param_count(model), expected)

    def test_counts_via_cli(self):
        for model, expected in REFERENCE_COUNTS.items():
            with self.subTest(model=model):
                proc = run_cli(model, "--print-param-count")
                self.assertEqual(proc.returncode, 0, proc.stderr)
                self.assertEqual(proc.stdout, f"{expected}\n")

    def test_list(self):
        proc = run_cli("--list")
        self.assertEqual(proc.returncode, 0)
        self.assertEqual(proc.stdout.split(), list(gm.MODELS))
        self.assertEqual(set(REFERENCE_COUNTS), set(gm.MODELS))


class FormulaTest(unittest.TestCase):
    """Non-default options follow the closed forms."""

    def test_cifar_resnet(self):
        for depth in (8, 20, 32, 56, 110, 1202):
            for classes in (10, 100):
                with self.subTest(depth=depth, classes=classes):
                    self.assertEqual(gm.param_count("cifar-resnet", depth=depth, classes=classes),
                                     cifar_resnet_params(depth, classes))

    def test_unet_independent_of_image_size(self):
        for size, classes in ((16, 2), (128, 2), (96, 5)):
            with self.subTest(size=size, classes=classes):
                self.assertEqual(gm.param_count("unet", image_size=size, classes=classes),
                                 unet_params(classes))

    def test_gpt2(self):
        self.assertEqual(gm.param_count("gpt2", layers=2, dim=96, heads=4, vocab=1000, seq=64),
                         gpt2_params(2, 96, 1000, 64))

    def test_lstm(self):
        self.assertEqual(gm.param_count("lstm", input_size=7, hidden=13, classes=3, seq=5),
                         lstm_params(7, 13, 3))

    def test_mlp_hidden_list(self):
        self.assertEqual(gm.param_count("mlp", hidden="100,50,25", image_size=10, classes=4),
                         mlp_params(100, [100, 50, 25], 4))

    def test_vgg16_flatten_follows_image_size(self):
        at_224 = REFERENCE_COUNTS["vgg16"]
        for size in (32, 64, 100):
            side = size // 32
            expected = at_224 - 512 * 7 * 7 * 4096 + 512 * side * side * 4096
            with self.subTest(size=size):
                self.assertEqual(gm.param_count("vgg16", image_size=size), expected)

    def test_imagenet_classes(self):
        for model in ("resnet18", "resnet50", "resnet", "densenet121"):
            fc_in = {"resnet18": 512, "resnet50": 2048, "resnet": 2048,
                     "densenet121": 1024}[model]
            with self.subTest(model=model):
                self.assertEqual(gm.param_count(model, classes=10),
                                 REFERENCE_COUNTS[model] - (fc_in + 1) * (1000 - 10))


class DeepResnetTest(unittest.TestCase):
    """``resnet --depth D``: resnet50 at D = 50, any depth 3n+2 (n >= 4)."""

    def test_depth_50_is_resnet50(self):
        self.assertEqual(bottleneck_resnet_params((3, 4, 6, 3), 1000), 25_557_032)
        self.assertEqual(gm.param_count("resnet", depth=50), gm.param_count("resnet50"))
        proc = run_cli("resnet", "--depth", "50", "--print-param-count")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, "25557032\n")
        # The same graph as resnet50, up to the function name and the header.
        def body(model, **options):
            text = gm.generate(model, batch=2, image_size=64, **options)
            return text.split("func.func @", 1)[1].split("(", 1)[1]
        self.assertEqual(body("resnet", depth=50), body("resnet50"))

    def test_stage_blocks(self):
        self.assertEqual(gm.resnet_stage_blocks(50), (3, 4, 6, 3))
        self.assertEqual(gm.resnet_stage_blocks(14), (1, 1, 1, 1))
        self.assertEqual(gm.resnet_stage_blocks(1001), (63, 83, 125, 62))
        for depth in range(14, 1203, 3):
            blocks = gm.resnet_stage_blocks(depth)
            with self.subTest(depth=depth):
                self.assertEqual(3 * sum(blocks) + 2, depth)
                self.assertGreaterEqual(min(blocks), 1)
                # Each stage is within one block of its 3:4:6:3 share.
                for count, share in zip(blocks, (3, 4, 6, 3)):
                    self.assertLess(abs(count - sum(blocks) * share / 16), 1)

    def test_closed_form(self):
        for depth in (14, 50, 101, 1001):
            for classes in (10, 1000):
                with self.subTest(depth=depth, classes=classes):
                    self.assertEqual(
                        gm.param_count("resnet", depth=depth, classes=classes),
                        bottleneck_resnet_params(gm.resnet_stage_blocks(depth), classes))

    def test_layer_count(self):
        """D weighted layers: the stem, 3 convs per block and the classifier."""
        for depth in (14, 50, 203):
            text = gm.generate("resnet", depth=depth, batch=1, image_size=32)
            convs = text.count('"memopt.conv2d"')
            with self.subTest(depth=depth):
                self.assertEqual(convs - 4, depth - 1)  # 4 downsample shortcuts
                self.assertEqual(text.count('"memopt.linear"'), 1)

    def test_bad_depth(self):
        for depth in ("51", "11", "2", "19"):
            with self.subTest(depth=depth):
                proc = run_cli("resnet", "--depth", depth)
                self.assertEqual(proc.returncode, 2)
                self.assertIn("3n+2", proc.stderr)
                self.assertNotIn("Traceback", proc.stderr)
                self.assertEqual(proc.stdout, "")
        with self.assertRaises(gm.ModelError):
            gm.build("resnet", depth=49)
        proc = run_cli("resnet50", "--depth", "50")  # resnet50 has no depth
        self.assertEqual(proc.returncode, 2)
        self.assertIn("does not apply", proc.stderr)


class ShapeArithmeticTest(unittest.TestCase):
    def test_window_output(self):
        self.assertEqual(gm.window_output(224, 7, 2, 3, 1, "conv"), 112)
        self.assertEqual(gm.window_output(112, 3, 2, 1, 1, "pool"), 56)
        self.assertEqual(gm.window_output(7, 2, 2, 0, 1, "pool"), 3)  # floor
        self.assertEqual(gm.window_output(10, 3, 1, 2, 2, "conv"), 10)  # dilation
        with self.assertRaises(gm.ModelError):
            gm.window_output(1, 2, 2, 0, 1, "pool")

    def test_broadcast(self):
        self.assertEqual(gm.broadcast_shapes((8, 4, 16, 16), ()), (8, 4, 16, 16))
        self.assertEqual(gm.broadcast_shapes((8, 16, 64), (16, 64)), (8, 16, 64))
        with self.assertRaises(gm.ModelError):
            gm.broadcast_shapes((3, 4), (5, 4))


class ErrorTest(unittest.TestCase):
    def assert_cli_error(self, *args: str, mentions: str) -> None:
        proc = run_cli(*args)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn(mentions, proc.stderr)
        self.assertNotIn("Traceback", proc.stderr)
        self.assertEqual(proc.stdout, "")

    def test_bad_cifar_depth(self):
        for depth in ("21", "2", "0"):
            with self.subTest(depth=depth):
                proc = run_cli("cifar-resnet", "--depth", depth)
                self.assertEqual(proc.returncode, 2)
                self.assertNotIn("Traceback", proc.stderr)
        self.assert_cli_error("cifar-resnet", "--depth", "21", mentions="6n+2")
        with self.assertRaises(gm.ModelError):
            gm.build("cifar-resnet", depth=22)

    def test_unet_image_size(self):
        self.assert_cli_error("unet", "--image-size", "100", mentions="divisible by 16")

    def test_image_too_small(self):
        self.assert_cli_error("vgg16", "--image-size", "16", mentions="--image-size")
        self.assert_cli_error("densenet121", "--image-size", "8", mentions="--image-size")

    def test_misc_errors(self):
        self.assert_cli_error("gpt2", "--heads", "5", mentions="divisible")
        self.assert_cli_error("gpt2", "--image-size", "32", mentions="does not apply")
        self.assert_cli_error("mlp", "--hidden", "1,x", mentions="--hidden")
        self.assert_cli_error("mlp", "--batch", "0", mentions="--batch")
        self.assert_cli_error("mlp", "--dtype", "f64", mentions="--dtype")
        self.assert_cli_error("nosuch", mentions="MODEL")
        self.assert_cli_error(mentions="MODEL")


class OutputFileTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.path = os.path.join(self.dir, "out.mlir")

    def tearDown(self):
        shutil.rmtree(self.dir)

    def test_writes_same_text_as_stdout(self):
        proc = run_cli("mlp", "-o", self.path)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, "")
        with open(self.path, encoding="utf-8") as f:
            self.assertEqual(f.read(), run_cli("mlp").stdout)
        self.assertEqual(os.listdir(self.dir), ["out.mlir"])

    def test_failed_generation_keeps_old_file(self):
        with open(self.path, "w", encoding="utf-8") as f:
            f.write("old")
        proc = run_cli("cifar-resnet", "--depth", "21", "-o", self.path)
        self.assertEqual(proc.returncode, 2)
        with open(self.path, encoding="utf-8") as f:
            self.assertEqual(f.read(), "old")
        self.assertEqual(os.listdir(self.dir), ["out.mlir"])

    def test_interrupted_write_is_not_visible(self):
        """If the final rename fails, the target is untouched, no temp remains."""
        with open(self.path, "w", encoding="utf-8") as f:
            f.write("old")
        renames = []

        def failing_replace(src, dst):
            renames.append((os.path.dirname(src), dst))
            raise OSError("simulated crash")

        with mock.patch.object(gm.os, "replace", failing_replace):
            with self.assertRaises(OSError):
                gm.write_atomically(self.path, "new text")
        self.assertEqual(renames, [(self.dir, self.path)])  # temp in same directory
        with open(self.path, encoding="utf-8") as f:
            self.assertEqual(f.read(), "old")
        self.assertEqual(os.listdir(self.dir), ["out.mlir"])


SMALL_OPTIONS = {
    "mlp": {},
    "resnet18": {"image_size": 64, "batch": 2},
    "resnet50": {"image_size": 64, "batch": 2},
    "resnet": {"image_size": 64, "batch": 2, "depth": 17},
    "cifar-resnet": {"depth": 8},
    "vgg16": {"image_size": 32},
    "densenet121": {"image_size": 32},
    "unet": {"image_size": 32, "batch": 1},
    "gpt2": {"layers": 2, "dim": 64, "heads": 4, "vocab": 100, "seq": 16},
    "lstm": {"seq": 3},
}

_ARG_RE = re.compile(r"^    %[A-Za-z0-9_$.]+: tensor<([0-9x]*)[a-z0-9]+>(?: \{memopt\.(\w+)\})?,?$",
                     re.M)


class IrStructureTest(unittest.TestCase):
    """The text matches the contract: header count, arg order, results."""

    def check_text(self, model: str, text: str) -> None:
        self.assertIn(f"func.func @{model.replace('-', '_')}_train(", text)
        args = _ARG_RE.findall(text)
        graph = gm.build(model, **SMALL_OPTIONS[model])
        self.assertEqual(len(args), sum(len(graph.args(k)) for k in gm.Graph.ARG_KINDS))
        kinds = [kind or "data" for _, kind in args]
        self.assertEqual(kinds, sorted(kinds, key=["param", "state", "data"].index))
        params = sum(math.prod(int(d) for d in dims.split("x") if d)
                     for dims, kind in args if kind == "param")
        header = re.search(r"^// trainable parameters: (\d+)$", text, re.M)
        self.assertEqual(int(header.group(1)), params)
        self.assertEqual(params, gm.param_count(model, **SMALL_OPTIONS[model]))
        ret = re.search(r"^  return (.*?) : ", text, re.M | re.S).group(1)
        self.assertEqual(len(ret.split(",")), 1 + kinds.count("state"))
        seeds = re.findall(r"seed = (\d+) : i64", text)
        self.assertEqual(len(seeds), len(set(seeds)))
        generic_ops = set(re.findall(r'= "([a-z_0-9.]+)"\(', text))
        self.assertTrue(generic_ops and all(op.startswith("memopt.") for op in generic_ops))
        custom_ops = set(re.findall(r"^  %\S+ = ([a-z_]+\.[a-z_]+) ", text, re.M))
        self.assertLessEqual(custom_ops, {"arith.constant"})

    def test_all_models(self):
        for model, options in SMALL_OPTIONS.items():
            with self.subTest(model=model):
                self.check_text(model, gm.generate(model, **options))

    def test_dtypes(self):
        text = gm.generate("gpt2", dtype="bf16", **SMALL_OPTIONS["gpt2"])
        self.assertNotIn("f32", text.split("func.func", 1)[1])
        self.assertIn("arith.constant dense<2.500000e-01> : tensor<bf16>", text)


CONV_NETS = ("resnet18", "resnet50", "resnet", "cifar-resnet", "vgg16", "densenet121",
             "unet")

# sha256 of the text written before --activation existed: the default (ReLU)
# output must not change by a byte.
DEFAULT_TEXT_SHA256 = {
    "cifar-resnet": "f9c335216377bfee7448d941528d6681d56e1f94504c363f7da3d4f0e533f704",
    "vgg16": "499c87a4b5581e66d45b35e24cd0a769e2b838c28cab8440f0374f8a28635911",
}

_ACT_ALPHA = {"leaky_relu": "1.000000e-02", "elu": "1.000000e+00"}
_OP_RE = re.compile(r'^  (%\d+)(?::\d+)? = "memopt\.(\w+)"\(([^)]*)\)', re.M)


def _producers(text: str) -> dict[str, str]:
    """SSA result name (without ``#i``) -> the memopt op that defines it."""
    return {name: op for name, op, _ in _OP_RE.findall(text)}


class ActivationTest(unittest.TestCase):
    """``--activation`` swaps the conv nets' post-batch-norm ReLUs."""

    def test_default_text_unchanged(self):
        for model, digest in DEFAULT_TEXT_SHA256.items():
            with self.subTest(model=model):
                text = gm.generate(model, **SMALL_OPTIONS[model])
                self.assertEqual(hashlib.sha256(text.encode()).hexdigest(), digest)
        for model in CONV_NETS:
            with self.subTest(model=model):
                text = gm.generate(model, **SMALL_OPTIONS[model])
                self.assertEqual(gm.generate(model, activation="relu",
                                             **SMALL_OPTIONS[model]), text)
                self.assertNotIn("leaky_relu", text)
                self.assertNotIn('"memopt.elu"', text)
                self.assertNotIn("--activation", text)

    def test_swaps_every_post_bn_relu(self):
        for model in CONV_NETS:
            default = gm.generate(model, **SMALL_OPTIONS[model])
            for act, alpha in _ACT_ALPHA.items():
                with self.subTest(model=model, activation=act):
                    text = gm.generate(model, activation=act, **SMALL_OPTIONS[model])
                    self.assertRegex(text.split("\n", 2)[1],
                                     rf"^// generated by: .* --activation {act}( |$)")
                    swap_re = (rf'"memopt\.{act}"\((\S+?)\) '
                               rf'<{{alpha = {re.escape(alpha)} : f64}}>')
                    swapped = re.findall(swap_re, text)
                    self.assertTrue(swapped)
                    # Every swapped op reads a batch norm (vgg16: a convolution).
                    source = "conv2d" if model == "vgg16" else "batch_norm"
                    producers = _producers(text)
                    self.assertEqual({producers[v.split("#")[0]] for v in swapped},
                                     {source})
                    # No ReLU is left on a batch norm's (vgg16: a conv's) output.
                    relu_inputs = re.findall(r'"memopt\.relu"\((\S+?)\)', text)
                    self.assertNotIn(source, {producers.get(v.split("#")[0])
                                              for v in relu_inputs})
                    # Nothing else changes: swapping back gives the default text.
                    back = re.sub(swap_re, r'"memopt.relu"(\1)', text)
                    self.assertTrue(back.replace(f" --activation {act}", "") == default)

    def test_param_counts_unchanged(self):
        for model in CONV_NETS:
            for act in gm.ACTIVATIONS:
                with self.subTest(model=model, activation=act):
                    self.assertEqual(gm.param_count(model, activation=act,
                                                    **SMALL_OPTIONS[model]),
                                     gm.param_count(model, **SMALL_OPTIONS[model]))
        proc = run_cli("resnet50", "--activation", "elu", "--print-param-count")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, f"{REFERENCE_COUNTS['resnet50']}\n")

    def test_structure(self):
        for model in CONV_NETS:
            with self.subTest(model=model):
                IrStructureTest.check_text(
                    self, model, gm.generate(model, activation="leaky_relu",
                                             **SMALL_OPTIONS[model]))

    def test_errors(self):
        for model in ("mlp", "gpt2", "lstm"):
            with self.subTest(model=model):
                proc = run_cli(model, "--activation", "elu")
                self.assertEqual(proc.returncode, 2)
                self.assertIn("does not apply", proc.stderr)
                self.assertNotIn("Traceback", proc.stderr)
                self.assertEqual(proc.stdout, "")
        proc = run_cli("vgg16", "--activation", "gelu")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--activation", proc.stderr)
        self.assertEqual(proc.stdout, "")
        with self.assertRaises(gm.ModelError):
            gm.build("unet", activation="tanh")


@unittest.skipUnless(_find_mlir_opt(), "mlir-opt (LLVM 22) is not installed")
class MlirParseTest(unittest.TestCase):
    """Generated files parse with mlir-opt (unregistered memopt ops allowed)."""

    def parse(self, *args: str) -> None:
        gen = run_cli(*args)
        self.assertEqual(gen.returncode, 0, gen.stderr)
        proc = subprocess.run([_find_mlir_opt(), "--allow-unregistered-dialect",
                               "-o", os.devnull], input=gen.stdout, capture_output=True,
                              text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr[:2000])

    def test_defaults(self):
        for model in gm.MODELS:
            with self.subTest(model=model):
                self.parse(model)

    def test_large_and_typed(self):
        self.parse("cifar-resnet", "--depth", "1202", "--batch", "32")
        self.parse("lstm", "--dtype", "f16")


if __name__ == "__main__":
    unittest.main()
