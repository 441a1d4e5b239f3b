#!/usr/bin/env python3
"""Bad-input fuzzer: mutated inputs to memopt's tools, every outcome classified.

Usage: bench/fuzz/bad_inputs.py [--seed S] [--inputs N] [--time-limit SEC]
                                [--build build] [--out DIR] [--summary F.json]
                                [--kinds mlir,options,passopts,safetensors,onnx]
                                [--only INDEX] [--timeout SEC] [--memory-limit MiB]

The bad-input mode of the fuzzer (bench/fuzz/differential.py is the
differential mode). Every input is a seeded mutation of something valid, of
one of five kinds, taken in turn:

  mlir         MLIR text (examples/mlp.mlir, examples/cnn.mlir and small graphs
               written here, custom and generic form): tokens deleted or
               duplicated, lines swapped, deleted or duplicated, numbers set to
               0, -1, 2^40, 2^62, 2^63, 2^64, one tensor dimension changed,
               attribute values set to NaN, inf, -inf, 1e39, huge or
               out-of-range integers, array attributes shortened or lengthened,
               op names swapped for other memopt ops, deeply nested
               attributes, truncation at a random byte, byte flips, non-UTF-8
               bytes; run through `memopt-opt --memopt-pipeline[=...] -o OUT`
               and `memopt-run --device=cpu --steps=1` (sometimes with
               --precision, --inplace, --checkpoint, --budget, --save-weights).
  options      memopt-run's command-line options on a valid model, values
               drawn from nan, inf, -inf, -1, 0, 1e39, 1e-45, "abc", "", 2^63,
               2^64, "1.5GiB", "-0" and valid ones.
  passopts     memopt-opt pass options (--memopt-autodiff, -checkpoint,
               -partition, -plan-memory, -mixed-precision, -microbatch,
               -workspace-limit, -conv-workspace, -report, -pipeline, also as
               --pass-pipeline)
               with such values, unknown option names and malformed lists.
  safetensors  weights (--load-weights) and data (--inputs) files: truncated,
               header length past the end or huge, header not JSON or not an
               object, duplicate keys (also through \\u escapes), bad dtypes,
               shapes that do not match the model, data_offsets reversed,
               overlapping, out of range or of the wrong length, missing
               fields, labels outside the classes, deep nesting, non-UTF-8,
               an empty file, a directory, a missing file; an extra unknown
               tensor (accepted with a warning) and flipped data bytes.
  onnx         `memopt-translate --import-onnx` on a small Gemm-Relu-Gemm model
               built with the onnx package: byte flips, truncation, and
               protobuf edits (initializer dims that disagree with its data or
               with the graph, a missing initializer, unknown op types,
               negative dims, NaN attributes, an old opset, dangling names, a
               cycle, duplicate initializers, short raw_data); a model that
               imports is then run by memopt-run with the weights it wrote.

The tools' contract: exit 0 (ok) or exit 1 with a diagnostic naming the
error (clean error; the messages of LLVM's command-line parser and of MLIR's
pass-option parser, which carry no "error" word, count as one).
A FINDING is anything else: a signal or an exit status other than 0 and 1,
"internal error", "terminate called", "Assertion", "Stack dump", "LLVM
ERROR", "PLEASE submit a bug report" or a sanitizer report in the output, a
run that does not end within --timeout seconds, exit 1 without an error
diagnostic, an output file (-o, --save-weights, --weights) left behind by a
failed run, and "accepted garbage": exit 0 on a mutation that is invalid by
construction (a shape that breaks the op's rule, a non-finite attribute, a
NaN, negative or zero value where an option needs a positive finite one, a
non-power-of-two alignment, a truncated or self-contradicting safetensors
file, ...). Values are judged as the tools read them: an empty value of a
floating-point option is 0 to llvm::cl, so `--momentum=` is momentum 0.
Each run is confined to --memory-limit MiB of address space (a refused
allocation must be a clean error too) and gets no core dump.

Every input is reproducible from (seed, index, --kinds): --only INDEX
replays one.
With --out DIR, each finding's input files, command (command.sh, run from its
own folder) and output are written to DIR/finding-INDEX-KIND-RUN/. The run
ends with a JSON summary line (and --summary F.json gets the details).
Exit status: 0 when there was no finding, 1 otherwise, 2 on a usage or setup
error.
"""
import argparse
import copy
import json
import math
import os
import random
import re
import resource
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KINDS = ["mlir", "options", "passopts", "safetensors", "onnx"]
FORBIDDEN = ["internal error", "terminate called", "Assertion", "Stack dump",
             "LLVM ERROR", "PLEASE submit a bug report", "AddressSanitizer",
             "LeakSanitizer", "UndefinedBehaviorSanitizer", "ThreadSanitizer",
             "MemorySanitizer"]
UBSAN = re.compile(r"\.(?:cpp|cc|h|hpp|inc):\d+:\d+: runtime error:")
# llvm::cl's own diagnostics, and MLIR's for a pass pipeline's options, carry
# no "error" word; they are clean errors.
LLVM_CL = re.compile(r"for the -{1,2}[\w-]+ option:|Unknown command line argument|"
                     r"<Pass-Options-Parser>: |"
                     r"Too many positional arguments|Not enough positional|"
                     r"may only occur zero or one times|requires a value|"
                     r"does not allow a value|must have a value|"
                     r"Did you mean '|Cannot find option named")
F32_MAX = 3.4028234663852886e38
POW = {"2^40": 2 ** 40, "2^62": 2 ** 62, "2^63": 2 ** 63, "2^64": 2 ** 64}
# The values the brief of this fuzzer names for every option.
COMMON = ["nan", "inf", "-inf", "-1", "0", "1e39", "1e-45", "abc", "",
          str(2 ** 63), str(2 ** 64), "1.5GiB", "-0"]
NO_DIR = "/nonexistent-memopt-dir"

# --- seeds ---------------------------------------------------------------------

SEED_A = """\
func.func @small_mlp(%w1: tensor<16x8xf32> {memopt.param}, %b1: tensor<16xf32> {memopt.param},
    %g: tensor<16xf32> {memopt.param}, %be: tensor<16xf32> {memopt.param},
    %w2: tensor<4x16xf32> {memopt.param}, %x: tensor<6x8xf32>, %t: tensor<6x4xf32>) -> tensor<f32> {
  %h = memopt.linear %x, %w1, %b1 : tensor<6x8xf32>, tensor<16x8xf32>, tensor<16xf32>
  %a = memopt.leaky_relu %h {alpha = 2.000000e-01 : f64} : tensor<6x16xf32>
  %d = memopt.dropout %a {p = 2.500000e-01 : f64, seed = 7 : i64} : tensor<6x16xf32>
  %n = memopt.layer_norm %d, %g, %be {epsilon = 1.000000e-05 : f64} : tensor<6x16xf32>, tensor<16xf32>
  %e = memopt.elu %n {alpha = 1.000000e+00 : f64} : tensor<6x16xf32>
  %o = memopt.linear %e, %w2 : tensor<6x16xf32>, tensor<4x16xf32>
  %s = memopt.softmax %o {axis = -1 : i64} : tensor<6x4xf32>
  %loss = memopt.mse_loss %s, %t : tensor<6x4xf32>
  return %loss : tensor<f32>
}
"""

SEED_B = """\
func.func @small_cnn(%cw: tensor<4x2x3x3xf32> {memopt.param}, %cb: tensor<4xf32> {memopt.param},
    %g: tensor<4xf32> {memopt.param}, %b: tensor<4xf32> {memopt.param},
    %rm: tensor<4xf32> {memopt.state}, %rv: tensor<4xf32> {memopt.state},
    %fw: tensor<3x4xf32> {memopt.param}, %fb: tensor<3xf32> {memopt.param},
    %x: tensor<2x2x8x8xf32>, %labels: tensor<2xi64>) -> (tensor<f32>, tensor<4xf32>, tensor<4xf32>) {
  %c = memopt.conv2d %x, %cw, %cb {padding = array<i64: 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : tensor<2x2x8x8xf32>, tensor<4x2x3x3xf32>, tensor<4xf32>
  %n, %m, %v = memopt.batch_norm %c, %g, %b, %rm, %rv {epsilon = 1.000000e-05 : f64, momentum = 1.000000e-01 : f64} : tensor<2x4x8x8xf32>, tensor<4xf32>
  %r = memopt.relu %n : tensor<2x4x8x8xf32>
  %p = memopt.max_pool2d %r {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0>} : tensor<2x4x8x8xf32>
  %u = memopt.upsample_nearest2d %p {scale = 2 : i64} : tensor<2x4x4x4xf32>
  %q = memopt.avg_pool2d %u {kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, strides = array<i64: 2, 2>} : tensor<2x4x8x8xf32>
  %gp = memopt.global_avg_pool2d %q : tensor<2x4x4x4xf32>
  %l = memopt.linear %gp, %fw, %fb : tensor<2x4xf32>, tensor<3x4xf32>, tensor<3xf32>
  %loss = memopt.cross_entropy %l, %labels : tensor<2x3xf32>, tensor<2xi64>
  return %loss, %m, %v : tensor<f32>, tensor<4xf32>, tensor<4xf32>
}
"""

SEED_C = """\
func.func @small_lm(%wte: tensor<11x8xf32> {memopt.param}, %wq: tensor<8x8xf32> {memopt.param},
    %wo: tensor<11x16xf32> {memopt.param}, %ids: tensor<2x4xi64>, %labels: tensor<8xi64>) -> tensor<f32> {
  %e = memopt.embedding %wte, %ids : tensor<11x8xf32>, tensor<2x4xi64>
  %q = memopt.linear %e, %wq : tensor<2x4x8xf32>, tensor<8x8xf32>
  %s = memopt.matmul %q, %e {transpose_b = true} : tensor<2x4x8xf32>, tensor<2x4x8xf32>
  %p = memopt.softmax %s {causal = true} : tensor<2x4x4xf32>
  %v = memopt.matmul %p, %e : tensor<2x4x4xf32>, tensor<2x4x8xf32>
  %t = memopt.transpose %v {permutation = array<i64: 0, 2, 1>} : tensor<2x4x8xf32>
  %t2 = memopt.transpose %t {permutation = array<i64: 0, 2, 1>} : tensor<2x8x4xf32>
  %g = memopt.gelu %t2 : tensor<2x4x8xf32>
  %th = memopt.tanh %e : tensor<2x4x8xf32>
  %sg = memopt.sigmoid %th : tensor<2x4x8xf32>
  %m = memopt.mul %g, %sg : tensor<2x4x8xf32>, tensor<2x4x8xf32>
  %c = memopt.concat %m, %e {axis = 2 : i64} : tensor<2x4x8xf32>, tensor<2x4x8xf32>
  %sl = memopt.slice %c {offsets = array<i64: 0, 0, 0>, sizes = array<i64: 2, 4, 16>} : tensor<2x4x16xf32>
  %r = memopt.reshape %sl : tensor<2x4x16xf32> -> tensor<8x16xf32>
  %sub = memopt.sub %r, %r : tensor<8x16xf32>, tensor<8x16xf32>
  %ad = memopt.add %r, %sub : tensor<8x16xf32>, tensor<8x16xf32>
  %lo = memopt.linear %ad, %wo : tensor<8x16xf32>, tensor<11x16xf32>
  %loss = memopt.cross_entropy %lo, %labels : tensor<8x11xf32>, tensor<8xi64>
  return %loss : tensor<f32>
}
"""

SEED_D = """\
func.func @generic(%w: tensor<8x4xf32> {memopt.param}, %b: tensor<8xf32> {memopt.param}, %x: tensor<2x4xf32>, %t: tensor<2x4xf32>) -> tensor<f32> {
  %0 = "memopt.linear"(%x, %w, %b) : (tensor<2x4xf32>, tensor<8x4xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %1 = "memopt.dropout"(%0) <{p = 2.500000e-01 : f64, seed = 3 : i64}> : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %2 = "memopt.slice"(%1) <{offsets = array<i64: 0, 4>, sizes = array<i64: 2, 4>, strides = array<i64: 1, 1>}> : (tensor<2x8xf32>) -> tensor<2x4xf32>
  %3 = "memopt.transpose"(%2) <{permutation = array<i64: 1, 0>}> : (tensor<2x4xf32>) -> tensor<4x2xf32>
  %4 = "memopt.transpose"(%3) <{permutation = array<i64: 1, 0>}> : (tensor<4x2xf32>) -> tensor<2x4xf32>
  %5 = "memopt.mse_loss"(%4, %t) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<f32>
  return %5 : tensor<f32>
}
"""

# name -> (source, batch of the data arguments, weight in the draw)
SEEDS = {"small_mlp": (SEED_A, 6, 3), "small_cnn": (SEED_B, 2, 3),
         "small_lm": (SEED_C, 2, 2), "generic": (SEED_D, 2, 2),
         "mlp": ("examples/mlp.mlir", 64, 2), "cnn": ("examples/cnn.mlir", 32, 1)}


class SetupError(Exception):
    pass


# --- value rules -------------------------------------------------------------------

def as_float(text):
    """Python's reading of a number, or None (also for '', 'abc', '1.5GiB')."""
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def as_uint(text):
    return int(text) if re.fullmatch(r"[0-9]+", text) else None


def byte_size(text):
    """memopt's byte sizes (docs: bytes, or with a unit KiB, MiB, GiB, TiB,
    KB, MB, GB, TB): the byte count, or None when it is not one."""
    m = re.fullmatch(r"\s*([0-9.]+)\s*(B|KiB|MiB|GiB|TiB|KB|MB|GB|TB)?\s*", text)
    if not m or as_float(m.group(1)) is None:
        return None
    scale = {None: 1, "B": 1, "KiB": 2 ** 10, "MiB": 2 ** 20, "GiB": 2 ** 30,
             "TiB": 2 ** 40, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}[m.group(2)]
    value = math.floor(float(m.group(1)) * scale)
    return None if value > 9e18 else int(value)


def pos_finite(v):
    f = as_float(v)
    return f is not None and math.isfinite(f) and f > 0


def nonneg_finite(v):
    f = as_float(v)
    return f is not None and math.isfinite(f) and f >= 0


def in_unit(v, closed=False):
    f = as_float(v)
    return f is not None and 0 <= f and (f <= 1 if closed else f < 1)


def loss_scale_ok(v):
    if v in ("dynamic", "none"):
        return True
    f = as_float(v)
    return f is not None and math.isfinite(f) and 0 < f <= F32_MAX


def budget_rule(v):
    """True/False/None (either): a budget below 1 KiB fits no model here."""
    if v == "":
        return None
    b = byte_size(v)
    if b is None or b <= 0 or b < 1024:
        return False
    return None


def workspace_rule(v):
    if v == "":
        return None
    return None if byte_size(v) is not None else False


def one_of(valid, either=("",)):
    def rule(v):
        if v in valid:
            return True
        return None if v in either else False
    return rule


def pow2_alignment(v):
    n = as_uint(v)
    return n is not None and 1 <= n <= 4096 and n & (n - 1) == 0


def boolean(v):
    return v.lower() in ("true", "false", "1", "0") or v == ""


def positive_int(v):
    return re.fullmatch(r"[0-9]+", v) is not None and 1 <= int(v) < 2 ** 63


def neg_finite(v):
    f = as_float(v)
    return f is not None and math.isfinite(f) and f < 0


def must(pred):
    """A predicate as a rule: True (valid) or False (must be refused)."""
    return lambda v: bool(pred(v))


def double(rule):
    """A rule for an llvm::cl double option, which reads '' as 0."""
    return lambda v: rule("0" if v == "" else v)


# --- running -------------------------------------------------------------------

class Runner:
    def __init__(self, args):
        self.timeout = args.timeout
        self.memory = args.memory_limit
        self.env = dict(os.environ)
        # Crash reports name their frames when llvm-symbolizer is there.
        symbolizer = shutil.which("llvm-symbolizer")
        if symbolizer and "LLVM_SYMBOLIZER_PATH" not in self.env:
            self.env["LLVM_SYMBOLIZER_PATH"] = symbolizer
        self.env.pop("MEMOPT_DEVICE", None)

    def limits(self):
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if self.memory:
            size = self.memory * 2 ** 20
            resource.setrlimit(resource.RLIMIT_AS, (size, size))

    def run(self, cmd, cwd):
        start = time.time()
        proc = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                preexec_fn=self.limits, start_new_session=True,
                                env=self.env)
        timed_out = False
        try:
            out, err = proc.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            out, err = proc.communicate()
        return {"rc": proc.returncode, "stdout": out.decode("utf-8", "replace"),
                "stderr": err.decode("utf-8", "replace"), "timed_out": timed_out,
                "seconds": round(time.time() - start, 2)}


def classify(spec, res, cwd, timeout):
    """(outcome, reasons): outcome is ok, clean_error or finding."""
    rc, text = res["rc"], res["stdout"] + "\n" + res["stderr"]
    reasons = []
    if res["timed_out"]:
        reasons.append(f"hang: no exit within {timeout} s")
    elif rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = str(-rc)
        reasons.append(f"crash: killed by {name}")
    elif rc not in (0, 1):
        reasons.append(f"exit status {rc}")
    for word in FORBIDDEN:
        if word in text:
            reasons.append(f"output contains '{word}'")
    if UBSAN.search(text):
        reasons.append("output contains a sanitizer 'runtime error'")
    if rc != 0:
        for name in spec.get("outputs", []):
            if os.path.lexists(os.path.join(cwd, name)):
                reasons.append(f"output file '{name}' left behind by a failed run")
    if rc == 1 and not res["timed_out"]:
        err = res["stderr"]
        if "error" not in err.lower() and not LLVM_CL.search(err):
            reasons.append("exit 1 without an error diagnostic"
                           + (" (stderr empty)" if not err.strip() else ""))
    if rc == 0 and not res["timed_out"] and spec["expect"] == "fail":
        reasons.append("accepted garbage: exit 0 for " + spec["why"])
    if reasons:
        return "finding", reasons
    return ("ok" if rc == 0 else "clean_error"), []


FRAME = re.compile(r"#\d+ 0x[0-9a-fA-F]+ (.+) \(")
NOT_THE_CAUSE = re.compile(r"llvm::sys::|SignalHandler|__restore_rt|PrintStackTrace|"
                           r"^_start|__libc_start|^main$|libc\.so|raise$|abort$|"
                           r"^std::|^__gnu_cxx::|^operator new|^__cxa|^_Unwind|"
                           r"llvm::report_fatal_error|__assert_fail|function_ref|callback_fn")


def simplify(frame):
    """A C++ frame without template and call arguments."""
    while True:
        shorter = re.sub(r"<[^<>]*>", "", frame)
        if shorter == frame:
            break
        frame = shorter
    return re.sub(r"\([^()]*\)", "()", frame)


def normalise(text):
    text = re.sub(r"/[^\s:'\"]*/", "", text)             # paths
    return re.sub(r"0x[0-9a-fA-F]+|\d+", "N", text).strip()


def signature(reasons, res, why):
    """A grouping key: the first reason and what best shows its cause."""
    first = reasons[0]
    if first.startswith("accepted garbage"):
        # The mutation, without the seed's name and numbers.
        return "accepted garbage | " + normalise(why.split(": ", 1)[-1])[:160]
    text = res["stderr"] + "\n" + res["stdout"]
    if first.startswith(("crash", "exit status", "hang")) or "Stack dump" in text:
        frames = [simplify(f) for f in FRAME.findall(text) if not NOT_THE_CAUSE.search(f)]
        if len(frames) > 64:
            # A stack overflow: the top frame is wherever it ran out; the
            # recursion is the frame that repeats.
            top = max(sorted(set(frames)), key=frames.count)
            return first.split(":")[0] + " | recursion in " + normalise(top)[:160]
        if frames:
            return first.split(":")[0] + " | in " + normalise(frames[0])[:160]
    lines = [l for l in text.splitlines() if l.strip()]
    key = None
    for word in FORBIDDEN + ["error"]:
        key = next((l for l in lines if word in l), None)
        if key:
            break
    key = key or (lines[-1] if lines else "")
    return (first.split(":")[0] + " | " + normalise(key))[:200]


# --- helpers for the generators ---------------------------------------------------------

def read_seed(name):
    source = SEEDS[name][0]
    if source.startswith("examples/"):
        with open(os.path.join(ROOT, source)) as f:
            return f.read()
    return source


def write(work, name, data):
    with open(os.path.join(work, name), "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)


def spec(cmd, why, expect="either", outputs=()):
    return {"cmd": cmd, "why": why, "expect": expect, "outputs": list(outputs)}


# --- kind 1: MLIR text ------------------------------------------------------------------

TOKEN = re.compile(r'%[\w.$#-]+|@[\w.$-]+|0x[0-9A-Fa-f]+|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?'
                   r'|[A-Za-z_][\w.$]*|"[^"\n]*"|\S')
NUMBER = re.compile(r"(?<![\w%@.#])-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")
TENSOR = re.compile(r"tensor<([0-9x]*?)x?([a-z]\w*)>")
FLOAT_ATTR = re.compile(r"\b(\w+) = (-?[0-9][0-9.]*(?:e[+-]?\d+)?) : f64")
INT_ATTR = re.compile(r"\b(\w+) = (-?\d+) : i64")
ARRAY_ATTR = re.compile(r"\b(\w+) = array<i64: ([-\d, ]+)>")
BOOL_ATTR = re.compile(r"\b(transpose_a|transpose_b|causal) = (true|false)")

FLOAT_VALUES = [("0x7FF8000000000000", math.nan), ("0x7FF0000000000000", math.inf),
                ("0xFFF0000000000000", -math.inf), ("nan", None), ("inf", None),
                ("-inf", None), ("1.0e39", 1e39), ("-1.0", -1.0), ("0.0", 0.0),
                ("1.0", 1.0), ("1.0e308", 1e308), ("1.0e-320", 1e-320), ("0.5", 0.5)]
INT_VALUES = [0, -1, 1, 2, 3, 7, -5, 2 ** 31, 2 ** 40, 2 ** 62, 2 ** 63, -2 ** 63, 2 ** 64]


def float_attr_valid(name, value):
    if value is None or not math.isfinite(value):
        return False   # every memopt op refuses non-finite float attributes
    if name == "p":
        return 0 <= value < 1
    if name == "epsilon":
        return value > 0
    if name == "momentum":
        return 0 <= value <= 1
    return True


def line_rank(text, pos):
    """Rank of the first tensor type after `pos` on its line."""
    end = text.find("\n", pos)
    m = TENSOR.search(text, pos, end if end >= 0 else len(text))
    return len(m.group(1).split("x")) if m and m.group(1) else 0


class NoCandidate(Exception):
    pass


def pick(rng, seq):
    seq = list(seq)
    if not seq:
        raise NoCandidate()
    return rng.choice(seq)


def mutate_mlir(rng, text):
    """One mutation of the text: (new text or bytes, description, must_fail).
    A mutation with nothing to work on (an earlier one removed it) becomes
    an insertion of bytes."""
    try:
        return mutate_mlir_once(rng, text)
    except NoCandidate:
        data = text.encode("utf-8", "surrogateescape")
        where = rng.randrange(len(data) + 1)
        return data[:where] + b"\xff}" + data[where:], f"bytes ff 7d inserted at {where}", False


def mutate_mlir_once(rng, text):
    what = rng.choice(["delete_token", "duplicate_token", "swap_lines", "delete_line",
                       "duplicate_line", "number", "dim", "dim", "float_attr",
                       "float_attr", "int_attr", "array_attr", "array_len", "bool_attr",
                       "op_name", "nesting", "truncate", "byte_flip", "non_utf8"])
    lines = text.split("\n")
    if what in ("delete_token", "duplicate_token"):
        tokens = list(TOKEN.finditer(text))
        t = pick(rng, tokens)
        repl = "" if what == "delete_token" else t.group() + " " + t.group()
        return (text[:t.start()] + repl + text[t.end():],
                f"{what} '{t.group()[:40]}' at byte {t.start()}", False)
    if what in ("swap_lines", "delete_line", "duplicate_line"):
        i = rng.randrange(len(lines))
        j = rng.randrange(len(lines))
        if what == "swap_lines":
            lines[i], lines[j] = lines[j], lines[i]
            return "\n".join(lines), f"swap lines {i + 1} and {j + 1}", False
        if what == "delete_line":
            del lines[i]
            return "\n".join(lines), f"delete line {i + 1}", False
        lines.insert(i, lines[i])
        return "\n".join(lines), f"duplicate line {i + 1}", False
    if what == "number":
        nums = [m for m in NUMBER.finditer(text)]
        m = pick(rng, nums)
        value = rng.choice(["0", "-1", "1", str(2 ** 40), str(2 ** 62), str(2 ** 63),
                            str(2 ** 64), "-0", "3"])
        return (text[:m.start()] + value + text[m.end():],
                f"number '{m.group()}' at byte {m.start()} -> {value}", False)
    if what == "dim":
        # Every tensor type in the seeds is tied to another (a use, an
        # operand list, a result), so changing one dimension of one type is
        # invalid by construction.
        types = [m for m in TENSOR.finditer(text) if m.group(1)
                 and not text[text.rfind("\n", 0, m.start()) + 1:m.start()].lstrip().startswith("//")]
        m = pick(rng, types)
        dims = m.group(1).split("x")
        k = rng.randrange(len(dims))
        old = int(dims[k])
        value = rng.choice([0, 1, old + 1, 2 * old, 2 ** 40, 2 ** 62, 2 ** 63 - 1, 2 ** 63])
        if value == old:
            value = old + 1
        dims[k] = str(value)
        new = "tensor<" + "x".join(dims) + "x" + m.group(2) + ">"
        return (text[:m.start()] + new + text[m.end():],
                f"dimension {k} of '{m.group()}' at byte {m.start()} -> {value}", True)
    if what == "float_attr":
        attrs = list(FLOAT_ATTR.finditer(text))
        if attrs:
            m = rng.choice(attrs)
            lit, value = rng.choice(FLOAT_VALUES)
            return (text[:m.start(2)] + lit + text[m.end(2):],
                    f"attribute {m.group(1)} = {m.group(2)} -> {lit}",
                    not float_attr_valid(m.group(1), value))
        what = "int_attr"
    if what == "int_attr":
        attrs = list(INT_ATTR.finditer(text))
        if attrs:
            m = rng.choice(attrs)
            name, old = m.group(1), int(m.group(2))
            value = rng.choice([v for v in INT_VALUES if v != old])
            if not -2 ** 63 <= value < 2 ** 63:
                bad = True          # not an i64
            elif name == "axis":
                rank = line_rank(text, m.end())
                bad = not -rank <= value < rank
                if "concat" in text[text.rfind("\n", 0, m.start()):m.start()]:
                    bad = bad or (value % rank != old % rank)   # result shape changes
            elif name in ("scale", "groups"):
                bad = True          # the result or weight shape rule breaks
            else:
                bad = False
            return (text[:m.start(2)] + str(value) + text[m.end(2):],
                    f"attribute {name} = {old} -> {value}", bad)
        what = "array_attr"
    if what in ("array_attr", "array_len"):
        attrs = list(ARRAY_ATTR.finditer(text))
        if attrs:
            m = rng.choice(attrs)
            name = m.group(1)
            values = [int(v) for v in m.group(2).split(",")]
            if what == "array_len":
                if rng.random() < 0.5 and len(values) > 1:
                    values.pop(rng.randrange(len(values)))
                else:
                    values.append(rng.choice([0, 1, 2]))
                bad = True          # attribute arity is fixed by the rank
                desc = f"attribute {name} [{m.group(2)}] -> {values}"
            else:
                k = rng.randrange(len(values))
                old = values[k]
                value = rng.choice([v for v in [0, -1, 1, 2, 3, 5, 2 ** 40, 2 ** 62,
                                                2 ** 63, -2 ** 63] if v != old])
                values[k] = value
                lo = {"kernel_size": 1, "strides": 1, "dilations": 1, "sizes": 1,
                      "padding": 0, "offsets": 0}.get(name, -2 ** 63)
                bad = (value < lo or value >= 2 ** 40 or name == "permutation")
                desc = f"attribute {name} [{m.group(2)}] element {k} -> {value}"
            new = ", ".join(map(str, values))
            return text[:m.start(2)] + new + text[m.end(2):], desc, bad
        what = "bool_attr"
    if what == "bool_attr":
        attrs = list(BOOL_ATTR.finditer(text))
        if attrs:
            m = rng.choice(attrs)
            value = rng.choice(["false" if m.group(2) == "true" else "true", "2", "unit"])
            return (text[:m.start(2)] + value + text[m.end(2):],
                    f"attribute {m.group(1)} = {m.group(2)} -> {value}", False)
        what = "op_name"
    if what == "op_name":
        ops = [m for m in re.finditer(r"memopt\.([a-z_0-9]+)", text)
               if m.group(1) not in ("param", "state")]
        m = pick(rng, ops)
        other = rng.choice(OP_NAMES)
        return (text[:m.start()] + other + text[m.end():],
                f"op {m.group()} -> {other}", False)
    if what == "nesting":
        depth = rng.choice([100, 5000, 100000])
        m = pick(rng, list(FLOAT_ATTR.finditer(text)) + list(INT_ATTR.finditer(text))
                 or list(TENSOR.finditer(text)))
        nest = "[" * depth + "1" + "]" * depth
        return (text[:m.start()] + (m.group(1) + " = " + nest if m.re is not TENSOR
                                    else "tensor<" + "tensor<" * depth + "f32"
                                    + ">" * (depth + 1)) + text[m.end():],
                f"'{m.group()[:30]}' -> nesting {depth} deep", True)
    data = text.encode("utf-8", "surrogateescape")
    if not data:
        raise NoCandidate()
    if what == "truncate":
        cut = rng.randrange(len(data))
        return data[:cut], f"truncate at byte {cut} of {len(data)}", False
    if what == "byte_flip":
        data = bytearray(data)
        where = sorted(rng.randrange(len(data)) for _ in range(rng.randint(1, 8)))
        for w in where:
            data[w] ^= 1 << rng.randrange(8)
        return bytes(data), f"bit flips at bytes {where}", False
    where = rng.randrange(len(data))
    junk = rng.choice([b"\xff", b"\xfe\xff", b"\xc3\x28", b"\x80", b"\xed\xa0\x80",
                       b"\xf4\x90\x80\x80", b"\x00"])
    return data[:where] + junk + data[where:], f"bytes {junk!r} inserted at {where}", False


OP_NAMES = []   # filled from docs/generated/MemOptDialect.md, or this list


def load_op_names():
    names = set()
    try:
        with open(os.path.join(ROOT, "docs", "generated", "MemOptDialect.md")) as f:
            names = set(re.findall(r"memopt\.[a-z_0-9]+", f.read()))
    except OSError:
        pass
    names -= {"memopt.param", "memopt.state", "memopt.optimizer_state", "memopt.updates"}
    OP_NAMES[:] = sorted(names) or ["memopt.relu", "memopt.linear", "memopt.add",
                                    "memopt.conv2d", "memopt.free", "memopt.cast"]


def gen_mlir(rng, ctx, work):
    names = [n for n, (_, _, w) in SEEDS.items() for _ in range(w)]
    name = rng.choice(names)
    text = read_seed(name)
    count = rng.choice([1, 1, 1, 2, 3])
    descs, bad = [], False
    data = text
    for _ in range(count):
        if isinstance(data, bytes):
            data = data.decode("utf-8", "surrogateescape")
        data, desc, b = mutate_mlir(rng, data)
        descs.append(desc)
        bad = b if count == 1 else False   # only a lone mutation is known invalid
    write(work, "in.mlir", data if isinstance(data, bytes)
          else data.encode("utf-8", "surrogateescape"))
    why = f"{name}: " + "; ".join(descs)
    expect = "fail" if bad else "either"
    pipeline = rng.choice(["--memopt-pipeline", "--memopt-pipeline",
                           "--memopt-pipeline=precision=fp16",
                           "--memopt-pipeline=precision=bf16 inplace=true",
                           "--memopt-pipeline=checkpoint=optimal",
                           "--memopt-pipeline=budget=1MiB"])
    yield spec([ctx.tools["memopt-opt"], "in.mlir", pipeline, "-o", "out.mlir"],
               why, expect, ["out.mlir"])
    cmd = [ctx.tools["memopt-run"], "in.mlir", "--device=cpu", "--steps=1"]
    cmd += rng.sample(["--precision=fp16", "--precision=bf16", "--inplace",
                       "--checkpoint=optimal", "--checkpoint=sqrt", "--budget=1MiB"],
                      rng.choice([0, 0, 1, 2]))
    outputs = []
    if rng.random() < 0.5:
        cmd.append("--save-weights=out.safetensors")
        outputs.append("out.safetensors")
    yield spec(cmd, why, expect, outputs)


# --- kind 2: memopt-run's options -------------------------------------------------------

def run_options(model, batch, function):
    def microbatches(v):
        n = as_uint(v)
        return n is not None and 1 <= n < 2 ** 32 and batch % n == 0

    def function_rule(v):
        return True if v == function else (None if v in ("", "@" + function) else False)

    file_in = (["nope.safetensors", ".", ""], lambda v: None if v == "" else False)
    file_out = (["o.bin", ".", NO_DIR + "/o.bin", ""],
                lambda v: None if v in ("o.bin", "") else False)
    return {
        "lr": (COMMON + ["0.1", "1e-3"], double(must(pos_finite))),
        "momentum": (COMMON + ["0.9", "0.999999"], double(must(in_unit))),
        "weight-decay": (COMMON + ["1e-4"], double(must(nonneg_finite))),
        "loss-scale": (COMMON + ["dynamic", "none", "1024", "3.4e38", "3.5e38"],
                       lambda v: None if v == "" or loss_scale_ok(v) else False),
        "steps": (COMMON + ["1", "2"],
                  must(lambda v: as_uint(v) is not None and 1 <= as_uint(v) < 2 ** 32)),
        "microbatches": (COMMON + ["1", "2", "3", "4", "64", "128"], must(microbatches)),
        "budget": (COMMON + ["1", "1000", "64KiB", "1MiB", "100GiB", "9e18", "0.5"],
                   budget_rule),
        "workspace-limit": (COMMON + ["4KiB", "1MiB", "1 GiB", "1XiB"], workspace_rule),
        "conv-workspace": (COMMON + ["4KiB", "1MiB", "1XiB"], workspace_rule),
        # llvm::cl int: 0 keeps OpenMP's choice, negatives are refused;
        # "-0" reads as 0, "" is refused.
        "cpu-threads": (COMMON + ["1", "2", "3"],
                        lambda v: v == "-0" or
                        (re.fullmatch(r"[0-9]+", v) is not None and int(v) < 2 ** 31)),
        "precision": (COMMON + ["fp32", "fp16", "bf16", "FP16", "fp8"],
                      one_of({"fp32", "fp16", "bf16"})),
        "checkpoint": (COMMON + ["none", "sqrt", "budget", "optimal", "revolve"],
                       lambda v: None if v in ("", "budget") else
                       (v in ("none", "sqrt", "optimal"))),
        "optimizer": (COMMON + ["sgd", "momentum", "adam", "adamw", "adam8bit",
                                "adamw8bit", "adafactor", "none", "lamb"],
                      one_of({"sgd", "momentum", "adam", "adamw", "adam8bit",
                              "adamw8bit", "adafactor"}, ("", "none"))),
        "clip-norm": (COMMON + ["1", "0.5"], double(must(pos_finite))),
        # bf16 state is for momentum, adam and adamw only.
        "state-dtype": (["param", "bf16", "fp8", ""],
                        lambda v: True if v == "param" else
                        (None if v == "bf16" else False)),
        # Whether a name matches depends on the model; a rank or alpha
        # without --lora-targets is refused.
        "lora-targets": (["", "fc1_w", "w1", "nope", "("],
                         lambda v: None if v in ("", "fc1_w", "w1") else False),
        "lora-rank": (COMMON + ["4"], lambda v: None if positive_int(v) else False),
        "lora-alpha": (COMMON + ["16"], double(lambda v: None if pos_finite(v)
                                               else False)),
        "seed": (COMMON + ["1", str(2 ** 64 - 1)],
                 must(lambda v: as_uint(v) is not None and as_uint(v) < 2 ** 64)),
        "device": (["cpu", "", "abc", "nan", "CPU", "cuda:0", "-1"], one_of({"cpu"})),
        "data": (["synthetic", "", "abc", "mnist:" + NO_DIR, "cifar10:", "mnist:"],
                 lambda v: None if v in ("", "synthetic") else False),
        "function": ([function, "", "nope", "nan", "@" + function], function_rule),
        "load-weights": file_in,
        "inputs": file_in,
        "save-weights": file_out,
        "emit-plan": file_out,
        "report": (["-", "r.json", ".", NO_DIR + "/r.json", ""],
                   lambda v: None if v in ("-", "r.json", "") else False),
        "trace": file_out,
        "fuse-loss-gradient": (["true", "false", "1", "0", "abc", "2", ""],
                               must(boolean)),
        # Without mpirun there is one process: only --ranks=1 runs, and
        # --zero, --bucket, --divide and --overlap-collectives need more
        # ranks.
        "ranks": (COMMON + ["1", "2", "4"], lambda v: None if v == "1" else False),
        "zero": (COMMON + ["0", "1", "2", "3"], lambda v: False),
        "bucket": (COMMON + ["25MiB", "0"], lambda v: False),
        "divide": (COMMON + ["auto", "all", "none", "1MiB"], lambda v: False),
        "overlap-collectives": (["true", "false", "1", "abc", ""], lambda v: False),
    }


def gen_options(rng, ctx, work):
    name = rng.choice(["small_mlp", "small_mlp", "small_cnn", "mlp"])
    text = read_seed(name)
    write(work, "model.mlir", text)
    function = re.search(r"func\.func @(\w+)", text).group(1)
    table = run_options("model.mlir", SEEDS[name][1], function)
    chosen = rng.sample(sorted(table), rng.choice([1, 1, 2, 3]))
    args, descs, bad, outputs = [], [], False, []
    for opt in chosen:
        pool, rule = table[opt]
        value = rng.choice(pool)
        verdict = rule(value)
        if verdict is False:
            bad = True
        if opt == "save-weights" and verdict is not False and value:
            outputs.append(value)
        if rng.random() < 0.15 and value:
            args += [f"--{opt}", value]          # the two-argument form
        else:
            args.append(f"--{opt}={value}")
        descs.append(f"--{opt}={value!r}" + (" (invalid)" if verdict is False else ""))
    if "precision" not in chosen and "loss-scale" in chosen and rng.random() < 0.7:
        args.append("--precision=fp16")
    flags = rng.sample(["--inplace", "--no-optimize", "--verbose", "--partition=false",
                        "--compare", "--abn", "--step-times", "--tf32"], rng.choice([0, 0, 0, 1]))
    cmd = [ctx.tools["memopt-run"], "model.mlir"]
    if "device" not in chosen:
        cmd.append("--device=cpu")
    if "steps" not in chosen:
        cmd.append("--steps=1")
    if "save-weights" not in chosen and rng.random() < 0.3:
        cmd.append("--save-weights=out.safetensors")
        outputs.append("out.safetensors")
    cmd += args + flags
    why = f"{name}: " + " ".join(descs)
    yield spec(cmd, why, "fail" if bad else "either", outputs)


# --- kind 3: memopt-opt pass options ------------------------------------------------------

def pass_table(batch):
    def count_rule(v):
        n = as_uint(v)
        return n is not None and n >= 1 and batch % n == 0

    def signed_count(v):
        # -1: slots' default; -0 is the integer 0 (segments' default).
        return bool(re.fullmatch(r"-1|-0|[0-9]+", v))

    # A string option: empty is the optimizer's default.
    lr = (COMMON + ["0.1"], must(lambda v: v == "" or pos_finite(v)))
    budget = (COMMON + ["1", "64KiB", "1MiB", "9e18", "0.5", "2GiB"], budget_rule)
    partition_budget = (budget[0], lambda v: None if v == "" or byte_size(v) else False)
    alignment = (COMMON + ["1", "3", "64", "4096", "8192"], must(pow2_alignment))
    flag = (["true", "false", "1", "0", "abc", "2", ""], must(boolean))
    loss_scale = (COMMON + ["dynamic", "none", "128", "3.5e38"],
                  lambda v: None if v == "" or loss_scale_ok(v) else False)
    growth_interval = (COMMON + ["1", "2000"],
                       must(lambda v: re.fullmatch(r"[0-9]+", v) and int(v) >= 1
                            and int(v) < 2 ** 63))
    mp = {"loss-scale": loss_scale,
          "init-scale": (COMMON + ["65536"], double(must(pos_finite))),
          "growth-factor": (COMMON + ["2", "1"],
                            double(must(lambda v: pos_finite(v) and float(v) > 1))),
          "backoff-factor": (COMMON + ["0.5", "1"],
                             double(must(lambda v: pos_finite(v) and float(v) < 1))),
          "growth-interval": growth_interval}
    autodiff = {"optimizer": (["sgd", "momentum", "adam", "adamw", "adam8bit",
                               "adamw8bit", "adafactor", "none", "abc", "nan", ""],
                              one_of({"sgd", "momentum", "adam", "adamw", "adam8bit",
                                      "adamw8bit", "adafactor", "none"})),
                # Refused with optimizer=none: combination-dependent.
                "clip-norm": (COMMON + ["1"], lambda v: None if v == "" or
                              pos_finite(v) else False),
                "state-dtype": (["param", "bf16", "fp8", ""],
                                lambda v: True if v == "param" else
                                (None if v == "bf16" else False)),
                "clip-threshold": (COMMON + ["1"], double(must(pos_finite))),
                "decay-rate": (COMMON + ["-0.8"], double(must(neg_finite))),
                "scale-parameter": flag,
                "lr": lr,
                "momentum": (COMMON + ["0.9"], double(must(in_unit))),
                "weight-decay": (COMMON + ["1e-4"], double(must(nonneg_finite))),
                "dampening": (COMMON + ["0.5", "1"],
                              double(must(lambda v: in_unit(v, True)))),
                "beta1": (COMMON + ["0.9"], double(must(in_unit))),
                "beta2": (COMMON + ["0.999"], double(must(in_unit))),
                "eps": (COMMON + ["1e-8"], double(must(pos_finite))),
                "nesterov": flag}
    return {
        "autodiff": (lambda o: [f"--memopt-autodiff={o}"], autodiff),
        "checkpoint": (lambda o: ["--memopt-autodiff", f"--memopt-checkpoint={o}"], {
            "strategy": (["sqrt", "budget", "optimal", "none", "abc", ""],
                         lambda v: (v in ("sqrt", "optimal")) or
                         (None if v in ("budget", "", "none") else False)),
            "budget": budget,
            "segments": (COMMON + ["1", "3"], must(signed_count)),
            "slots": (COMMON + ["1", "2"], must(signed_count)),
            "solver": (["auto", "dp", "ilp", "abc", ""], one_of({"auto", "dp", "ilp"})),
            "time-limit": (COMMON + ["5"], double(
                lambda v: None if v in ("inf", "1e39") else pos_finite(v))),
            "alignment": alignment,
            "measure-inplace": flag}),
        "partition": (lambda o: ["--memopt-autodiff", f"--memopt-partition={o}"], {
            "max-recompute": (COMMON + ["0.5", "2"], double(must(nonneg_finite))),
            "alignment": alignment,
            "budget": partition_budget,
            "measure-inplace": flag,
            "remarks": flag}),
        "fuse-loss-gradient": (lambda o: ["--memopt-autodiff",
                                          f"--memopt-fuse-loss-gradient={o}"], {
            "remarks": flag}),
        "data-parallel": (lambda o: ["--memopt-autodiff",
                                     f"--memopt-data-parallel={o}"], {
            "ranks": (COMMON + ["1", "2", "4"], must(positive_int)),
            # Stages 1 to 3 need rank= when ranks > 1 (an option alone
            # leaves ranks=1, where they change nothing); "-0" reads as 0.
            "zero": (COMMON + ["0", "1", "2", "3", "4"],
                     lambda v: None if v in ("1", "2", "3") else v in ("0", "-0")),
            # Read only with zero >= 1 and ranks > 1; a non-integer is a
            # parse error whatever the other options.
            "rank": (COMMON + ["0", "1"],
                     lambda v: None if re.fullmatch(r"-?[0-9]+", v) and
                     -2 ** 63 <= int(v) < 2 ** 63 else False),
            "bucket": (COMMON + ["0", "1KiB", "25MiB"],
                       lambda v: None if byte_size(v) is not None else False),
            "divide": (COMMON + ["auto", "all", "none", "1KiB"],
                       lambda v: None if v in ("auto", "all", "none") or
                       byte_size(v) is not None else False)}),
        "plan-memory": (lambda o: ["--memopt-autodiff", "--memopt-schedule",
                                   f"--memopt-plan-memory={o}"], {
            "alignment": alignment, "budget": budget}),
        "mixed-precision": (lambda o: [f"--memopt-mixed-precision={o}", "--memopt-autodiff"],
                            dict(mp, precision=(["fp16", "bf16", "fp32", "abc", ""],
                                                lambda v: v in ("fp16", "bf16") or
                                                (None if v in ("fp32", "") else False)))),
        "microbatch": (lambda o: [f"--memopt-microbatch={o}", "--memopt-autodiff"], {
            "count": (COMMON + ["1", "2", "3", "5"], must(count_rule))}),
        "workspace-limit": (lambda o: ["--memopt-autodiff", f"--memopt-workspace-limit={o}",
                                       "--memopt-schedule", "--memopt-plan-memory"], {
            "bytes": (COMMON + ["4KiB"], lambda v: None if byte_size(v) is not None
                      else False)}),
        "conv-workspace": (lambda o: ["--memopt-autodiff", f"--memopt-conv-workspace={o}",
                                      "--memopt-schedule", "--memopt-plan-memory"], {
            "bytes": (COMMON + ["4KiB"], lambda v: None if byte_size(v) is not None
                      else False)}),
        "lora": (lambda o: [f"--memopt-lora={o}"], {
            # Required; the seeds' names differ, biases are not 2-D.
            "targets": (["w1", "w1|w2", "nope", "(", ""],
                        lambda v: None if v in ("w1", "w1|w2") else False),
            "rank": (COMMON + ["1", "8"], must(positive_int)),
            "alpha": (COMMON + ["16"], double(must(pos_finite))),
            "trainable": (["", "b1", "nope", "("],
                          lambda v: True if v == "" else
                          (None if v == "b1" else False))}),
        "report": (lambda o: ["--memopt-autodiff", f"--memopt-report={o}"], {
            "file": (["-", "r.json", NO_DIR + "/r.json", "."],
                     lambda v: v in ("-", "r.json"))}),
        "pipeline": (lambda o: [f"--memopt-pipeline={o}"], dict(
            mp, optimizer=autodiff["optimizer"], lr=lr, momentum=autodiff["momentum"],
            **{"weight-decay": autodiff["weight-decay"],
               "workspace-limit": (COMMON + ["4KiB"], workspace_rule),
               "conv-workspace": (COMMON + ["4KiB"], workspace_rule)},
            precision=(["fp32", "fp16", "bf16", "abc", ""],
                       one_of({"fp32", "fp16", "bf16"})),
            checkpoint=(["none", "sqrt", "budget", "optimal", "abc", ""],
                        lambda v: v in ("none", "sqrt", "optimal") or
                        (None if v in ("budget", "") else False)),
            budget=budget,
            microbatches=(COMMON + ["1", "2", "3", "5"], must(count_rule)),
            alignment=alignment, inplace=flag, abn=flag, partition=flag,
            **{"fuse-loss-gradient": flag})),
    }


def gen_passopts(rng, ctx, work):
    name = rng.choice(["small_mlp", "small_mlp", "small_cnn"])
    write(work, "in.mlir", read_seed(name))
    table = pass_table(SEEDS[name][1])
    which = rng.choice(sorted(table))
    build, options = table[which]
    chosen = rng.sample(sorted(options), min(len(options), rng.choice([1, 1, 2, 3])))
    parts, descs, bad = [], [], False
    for opt in chosen:
        pool, rule = options[opt]
        value = rng.choice(pool)
        verdict = rule(value)
        bad = bad or verdict is False
        parts.append(f"{opt}={value}")
        descs.append(f"{opt}={value!r}" + (" (invalid)" if verdict is False else ""))
    if which == "checkpoint" and "strategy" not in chosen:
        parts.insert(0, "strategy=" + rng.choice(["sqrt", "optimal"]))
    if which == "lora" and "targets" not in chosen:
        parts.insert(0, "targets=" + rng.choice(["w1", "w1|w2"]))
    if which == "mixed-precision" and "precision" not in chosen:
        parts.insert(0, "precision=" + rng.choice(["fp16", "bf16"]))
    malformed = rng.random()
    if malformed < 0.06:
        parts.append("frobnicate=1")
        descs.append("unknown option frobnicate")
        bad = True
    elif malformed < 0.10:
        parts.append("{")
        descs.append("unbalanced '{'")
        bad = True
    elif malformed < 0.13 and parts:
        parts.append(parts[0])
        descs.append("an option given twice")
    options_text = " ".join(parts)
    passes = build(options_text)
    if which == "pipeline" and rng.random() < 0.3:
        passes = [f"--pass-pipeline=builtin.module(memopt-pipeline{{{options_text}}})"]
    outputs = ["out.mlir"]
    cmd = [ctx.tools["memopt-opt"], "in.mlir"] + passes + ["-o", "out.mlir"]
    why = f"{name}: {which} " + " ".join(descs)
    yield spec(cmd, why, "fail" if bad else "either", outputs)


# --- kind 4: safetensors ---------------------------------------------------------------

def st_parse(blob):
    n = struct.unpack("<Q", blob[:8])[0]
    return json.loads(blob[8:8 + n]), blob[8 + n:]


def st_pack(header, data, hlen=None):
    text = header if isinstance(header, (bytes, str)) else json.dumps(header)
    hb = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text
    return struct.pack("<Q", len(hb) if hlen is None else hlen) + hb + data


def mutate_safetensors(rng, blob, labels=None):
    """(bytes, or 'dir' / 'missing'; description; must_fail)."""
    header, data = st_parse(blob)
    names = [k for k in header if k != "__metadata__"]
    name = rng.choice(names)
    entry = header[name]
    numel = math.prod(entry["shape"])
    what = rng.choice(["truncate", "hlen", "hlen", "not_json", "not_object", "duplicate",
                       "duplicate_escaped", "dtype", "dtype", "shape", "shape", "offsets",
                       "offsets", "overlap", "missing_field", "extra", "extra_bad",
                       "missing_tensor", "metadata", "trailing", "non_utf8", "deep",
                       "empty", "dir", "missing", "data_flip", "gap"]
                      + (["labels"] * 3 if labels else []))
    h = copy.deepcopy(header)
    if what == "truncate":
        cut = rng.randrange(len(blob))
        return blob[:cut], f"truncated at byte {cut} of {len(blob)}", True
    if what == "hlen":
        size = len(blob) - 8
        hlen = rng.choice([size + 1, size + 4096, 2 ** 63, 2 ** 64 - 1, 0, 1,
                           len(json.dumps(header)) // 2])
        return st_pack(header, data, hlen), f"header length field {hlen}", True
    if what == "not_json":
        junk = rng.choice([b"{\"a\": ", b"\x00" * 16, b"not json at all",
                           bytes(rng.randrange(256) for _ in range(64)), b"{}}", b"{,}"])
        return st_pack(junk, data), f"header {junk[:20]!r}... is not JSON", True
    if what == "not_object":
        value = rng.choice(["[1, 2]", "\"F32\"", "5", "null", "true", "[]"])
        return st_pack(value, data), f"header {value} is not an object", True
    if what in ("duplicate", "duplicate_escaped"):
        text = json.dumps(header)
        key = name if what == "duplicate" else name[:-1] + "\\u%04x" % ord(name[-1])
        text = text[:-1] + ', "' + key + '": ' + json.dumps(entry) + "}"
        return st_pack(text, data), f"key '{name}' twice ({what})", True
    if what == "dtype":
        value = rng.choice(["F33", "f32", "float32", "", 5, None, ["F32"], "F16", "BF16",
                            "F64", "I64", "I32", "U8", "BOOL", "F8_E4M3"])
        h[name]["dtype"] = value
        return st_pack(h, data), f"'{name}' dtype -> {value!r}", True
    if what == "shape":
        shape = entry["shape"]
        choices = [[numel], [1] + shape, shape[::-1] if len(shape) > 1 else [1, numel],
                   [-1] + shape[1:], [2 ** 62] + shape[1:], [2 ** 64] + shape[1:],
                   shape[:-1] + [shape[-1] + 1], [], ["a"], [1.5], None]
        value = rng.choice([c for c in choices if c != shape])
        h[name]["shape"] = value
        # A reshape of the same element count is still the model's argument
        # only when it is the same shape; every other shape is refused
        # against the model (or by the header's own arithmetic).
        return st_pack(h, data), f"'{name}' shape {shape} -> {value}", True
    if what == "offsets":
        b, e = entry["data_offsets"]
        value = rng.choice([[e, b], [b, e + 4], [b, e - 4], [b, len(data) + 4],
                            [-4, e], [b, 2 ** 64], [b], [b, e, e], [float(b), float(e)],
                            ["0", str(e)], None, [b + 1, e + 1] if e + 1 <= len(data)
                            else [b, e - 1]])
        h[name]["data_offsets"] = value
        return st_pack(h, data), f"'{name}' data_offsets [{b}, {e}] -> {value}", True
    if what == "overlap":
        other = rng.choice(names)
        if other == name or len(names) == 1:
            h[name]["data_offsets"] = [0, 0] if numel else [0, 4]
        else:
            ob, oe = header[other]["data_offsets"]
            size = entry["data_offsets"][1] - entry["data_offsets"][0]
            if size > len(data) - ob:
                return st_pack(h, data[:len(data) - 1]), "data shortened by 1 byte", True
            h[name]["data_offsets"] = [ob, ob + size]
        return st_pack(h, data), f"'{name}' data_offsets overlap another tensor's", True
    if what == "missing_field":
        field = rng.choice(["dtype", "shape", "data_offsets"])
        del h[name][field]
        return st_pack(h, data), f"'{name}' without {field}", True
    if what == "extra":
        h["zz_extra"] = {"dtype": "F32", "shape": [2], "data_offsets": [len(data), len(data) + 8]}
        return st_pack(h, data + bytes(8)), "an extra unknown tensor", False
    if what == "extra_bad":
        h["zz_extra"] = rng.choice([{"dtype": "X", "shape": [2], "data_offsets": [0, 8]},
                                    {"dtype": "F32", "shape": [2],
                                     "data_offsets": [len(data), len(data) + 8]},
                                    {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]},
                                    "not an object"])
        return st_pack(h, data), "an extra tensor with a broken entry", True
    if what == "missing_tensor":
        del h[name]
        return st_pack(h, data), f"'{name}' removed", False
    if what == "metadata":
        value = rng.choice([{"a": 5}, [1], "text", {"a": {"b": "c"}}, None])
        h["__metadata__"] = value
        return st_pack(h, data), f"__metadata__ -> {value!r} (not string to string)", True
    if what == "trailing":
        text = json.dumps(header) + rng.choice(["xyz", "}", ",", "{}"])
        return st_pack(text, data), "characters after the header's JSON object", True
    if what == "non_utf8":
        text = json.dumps(header).encode()
        where = text.find(name.encode()) + 1
        junk = rng.choice([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\x80"])
        return (st_pack(text[:where] + junk + text[where:], data),
                f"bytes {junk!r} inside key '{name}'", True)
    if what == "deep":
        depth = rng.choice([1000, 100000, 1000000])
        h[name]["shape"] = "@"
        text = json.dumps(h).replace('"@"', "[" * depth + "]" * depth)
        return st_pack(text, data), f"'{name}' shape nested {depth} deep", True
    if what == "empty":
        if rng.random() < 0.2:
            # A header without tensors is a valid file: data arguments keep
            # their synthetic values, parameters are missing.
            return struct.pack("<Q", 2) + b"{}", "a header without tensors", False
        value = rng.choice([b"", b"\x00" * 7, b"\x00" * 8, struct.pack("<Q", 8) + b"{}"])
        return value, f"a {len(value)}-byte file", True
    if what == "dir":
        return "dir", "a directory", True
    if what == "missing":
        return "missing", "a file that does not exist", True
    if what == "data_flip":
        d = bytearray(data)
        for _ in range(rng.randint(1, 16)):
            d[rng.randrange(len(d))] = rng.choice([0xff, 0x7f, 0x80, 0x00])
        return st_pack(header, bytes(d)), "data bytes changed (NaN, inf, denormals)", False
    if what == "gap":
        return st_pack(header, data + bytes(16)), "16 bytes after the last tensor", False
    # labels outside [0, classes)
    b, e = header["labels"]["data_offsets"]
    count = (e - b) // 8
    row = rng.randrange(count)
    value = rng.choice([labels, labels + 1, -1, 2 ** 62, -2 ** 63])
    d = bytearray(data)
    d[b + 8 * row:b + 8 * row + 8] = struct.pack("<q", value)
    return st_pack(header, bytes(d)), f"label {value} in row {row} (classes: {labels})", True


def gen_safetensors(rng, ctx, work):
    target = rng.choice(["small_mlp weights", "small_mlp weights", "mlp weights",
                         "small_cnn weights", "mlp inputs", "small_mlp inputs"])
    model, what = target.split()
    blob = ctx.files[target]
    labels = 10 if target == "mlp inputs" else None
    data, desc, bad = mutate_safetensors(rng, blob, labels)
    write(work, "model.mlir", read_seed(model))
    if data == "dir":
        os.mkdir(os.path.join(work, "w.safetensors"))
    elif data != "missing":
        write(work, "w.safetensors", data)
    flag = "--load-weights" if what == "weights" else "--inputs"
    cmd = [ctx.tools["memopt-run"], "model.mlir", "--device=cpu", "--steps=1",
           f"{flag}=w.safetensors"]
    outputs = []
    if rng.random() < 0.6:
        cmd.append("--save-weights=out.safetensors")
        outputs.append("out.safetensors")
    yield spec(cmd, f"{target}: {desc}", "fail" if bad else "either", outputs)


# --- kind 5: ONNX ------------------------------------------------------------------

def onnx_model():
    import onnx
    from onnx import TensorProto, helper
    r = random.Random(0)

    def init(name, dims):
        n = math.prod(dims)
        return helper.make_tensor(name, TensorProto.FLOAT, dims,
                                  [r.uniform(-0.5, 0.5) for _ in range(n)])

    nodes = [helper.make_node("Gemm", ["x", "fc1.weight", "fc1.bias"], ["h"],
                              name="/fc1/Gemm", transB=1),
             helper.make_node("Relu", ["h"], ["a"], name="/relu/Relu"),
             helper.make_node("Gemm", ["a", "fc2.weight", "fc2.bias"], ["logits"],
                              name="/fc2/Gemm", transB=1)]
    graph = helper.make_graph(
        nodes, "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [4, 3])],
        [init("fc1.weight", [16, 8]), init("fc1.bias", [16]),
         init("fc2.weight", [3, 16]), init("fc2.bias", [3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="bad_inputs.py")
    onnx.checker.check_model(model)
    return model


def mutate_onnx(rng, model):
    """(bytes, description, must_fail, extra translate options)."""
    import onnx
    from onnx import TensorProto, helper
    blob = model.SerializeToString()
    m = copy.deepcopy(model)
    g = m.graph
    what = rng.choice(["byte_flip", "byte_flip", "truncate", "truncate", "random",
                       "init_dims", "init_mismatch", "drop_init", "unknown_op",
                       "negative_dim", "dynamic_dim", "alpha_nan", "leaky_nan", "opset",
                       "dangling_input", "dangling_output", "cycle", "duplicate_init",
                       "raw_short", "bad_dtype", "gemm_arity", "no_nodes", "options",
                       "options", "huge_dim"])
    opts = []
    if what == "byte_flip":
        d = bytearray(blob)
        where = sorted(rng.randrange(len(d)) for _ in range(rng.randint(1, 8)))
        for w in where:
            d[w] ^= 1 << rng.randrange(8)
        return bytes(d), f"bit flips at bytes {where}", False, opts
    if what == "truncate":
        cut = rng.randrange(len(blob))
        return blob[:cut], f"truncated at byte {cut} of {len(blob)}", False, opts
    if what == "random":
        n = rng.choice([0, 1, 16, 1024])
        d = bytes(rng.randrange(256) for _ in range(n))
        # An empty message is a ModelProto without a graph.
        return d, f"{n} random bytes", n == 0, opts
    t = rng.choice(list(g.initializer))
    bad = True
    if what == "init_dims":
        t.dims[0] += rng.choice([1, -1, 100])
        desc = f"initializer {t.name} dims -> {list(t.dims)} (its data disagrees)"
    elif what == "init_mismatch":
        w = next(i for i in g.initializer if i.name == "fc1.weight")
        w.dims[:] = [16, 7]
        del w.float_data[112:]
        desc = "fc1.weight 16x7 against an 8-wide input"
    elif what == "drop_init":
        g.initializer.remove(t)
        desc = f"initializer {t.name} removed"
    elif what == "unknown_op":
        node = rng.choice(list(g.node))
        node.op_type = rng.choice(["Det", "FooBar", "", "relu", "Loop"])
        desc = f"node {node.name} op_type -> {node.op_type!r}"
    elif what == "negative_dim":
        g.input[0].type.tensor_type.shape.dim[rng.randrange(2)].dim_value = \
            rng.choice([-1, -3, -2 ** 62])
        desc = "a negative input dimension"
    elif what == "dynamic_dim":
        dim = g.input[0].type.tensor_type.shape.dim[1]
        dim.dim_param = "features"
        desc = "input dimension 1 dynamic, no --input-shape"
    elif what == "alpha_nan":
        node = g.node[rng.choice([0, 2])]
        node.attribute.append(helper.make_attribute(rng.choice(["alpha", "beta"]),
                                                    rng.choice([math.nan, math.inf])))
        desc = f"{node.name} {node.attribute[-1].name} = {node.attribute[-1].f}"
        bad = False   # what Gemm makes of it is the importer's call
    elif what == "leaky_nan":
        node = g.node[1]
        node.op_type = "LeakyRelu"
        node.attribute.append(helper.make_attribute("alpha",
                                                    rng.choice([math.nan, math.inf, -math.inf])))
        desc = f"LeakyRelu alpha = {node.attribute[-1].f} (memopt refuses non-finite)"
    elif what == "opset":
        m.opset_import[0].version = rng.choice([1, 11, 12])
        desc = f"opset {m.opset_import[0].version}"
    elif what == "dangling_input":
        g.node[rng.randrange(3)].input[0] = "nowhere"
        desc = "a node input that nothing defines"
    elif what == "dangling_output":
        g.output[0].name = "nothing"
        desc = "a graph output that no node produces"
    elif what == "cycle":
        g.node[0].input[0] = "logits"
        desc = "a cycle: /fc1/Gemm reads logits"
    elif what == "duplicate_init":
        dup = copy.deepcopy(t)
        g.initializer.append(dup)
        desc = f"initializer {t.name} twice"
    elif what == "raw_short":
        values = list(t.float_data)
        t.ClearField("float_data")
        t.raw_data = struct.pack(f"<{len(values)}f", *values)[:-4]
        desc = f"initializer {t.name} raw_data 4 bytes short"
    elif what == "bad_dtype":
        t.data_type = rng.choice([TensorProto.UNDEFINED, TensorProto.STRING, 99])
        desc = f"initializer {t.name} data_type {t.data_type}"
    elif what == "gemm_arity":
        del g.node[rng.choice([0, 2])].input[1:]
        desc = "a Gemm with one input"
    elif what == "no_nodes":
        del g.node[:]
        desc = "no nodes (the output is never produced)"
    elif what == "huge_dim":
        g.input[0].type.tensor_type.shape.dim[0].dim_value = rng.choice([2 ** 31, 2 ** 62])
        desc = f"batch dimension {g.input[0].type.tensor_type.shape.dim[0].dim_value}"
        bad = False
    else:
        opt, value, bad = rng.choice([
            ("--batch", "0", True), ("--batch", "-1", True), ("--batch", "2", False),
            ("--batch", str(2 ** 63), True), ("--input-shape", "x=abc", True),
            ("--input-shape", "x=4x8", False), ("--input-shape", "nope=4x8", True),
            ("--input-shape", "x=4x9", True), ("--input-shape", "x=4x8x1", True),
            ("--input-shape", "x=-4x8", True), ("--input-shape", "x=", True),
            ("--loss", "foo", True), ("--loss", "mse", False), ("--loss", "none", False),
            ("--function", "", False), ("--function", "bad name", False)])
        opts = [f"{opt}={value}"]
        return blob, f"option {opt}={value!r}", bad, opts
    return m.SerializeToString(), desc, bad, opts


def gen_onnx(rng, ctx, work):
    data, desc, bad, opts = mutate_onnx(rng, ctx.onnx)
    write(work, "model.onnx", data)
    loss = [] if any(o.startswith("--loss") for o in opts) else ["--loss=cross_entropy"]
    cmd = [ctx.tools["memopt-translate"], "--import-onnx", "model.onnx"] + loss + opts \
        + ["--weights=out.safetensors", "-o", "out.mlir"]
    result = yield spec(cmd, desc, "fail" if bad else "either",
                        ["out.mlir", "out.safetensors"])
    if result["rc"] == 0 and os.path.exists(os.path.join(work, "out.mlir")):
        yield spec([ctx.tools["memopt-run"], "out.mlir", "--device=cpu", "--steps=1",
                    "--load-weights=out.safetensors"], desc + " (imported, then run)")


GENERATORS = {"mlir": gen_mlir, "options": gen_options, "passopts": gen_passopts,
              "safetensors": gen_safetensors, "onnx": gen_onnx}


# --- setup ----------------------------------------------------------------------------

class Context:
    pass


def safetensors_file(tensors):
    header, data = {}, b""
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    return st_pack(header, data)


def setup(args, kinds, tmp, runner):
    ctx = Context()
    ctx.tools = {t: os.path.join(args.build, "bin", t)
                 for t in ("memopt-opt", "memopt-run", "memopt-translate")}
    for tool in ctx.tools.values():
        if not os.access(tool, os.X_OK):
            raise SetupError(f"{tool} not found; build first")
    load_op_names()
    base = os.path.join(tmp, "base")
    os.makedirs(base)
    ctx.files = {}
    # Every seed must be valid: compiled and run, its weights saved.
    for name in SEEDS:
        write(base, f"{name}.mlir", read_seed(name))
        res = runner.run([ctx.tools["memopt-run"], f"{name}.mlir", "--device=cpu",
                          "--steps=1", f"--save-weights={name}.safetensors"], base)
        if res["rc"] != 0:
            raise SetupError(f"seed {name} does not run: "
                             + (res["stderr"] or res["stdout"]).strip()[-500:])
        with open(os.path.join(base, f"{name}.safetensors"), "rb") as f:
            ctx.files[f"{name} weights"] = f.read()
    r = random.Random(0)
    ctx.files["mlp inputs"] = safetensors_file([
        ("images", "F32", [64, 784], struct.pack("<50176f", *(r.random() for _ in range(50176)))),
        ("labels", "I64", [64], struct.pack("<64q", *(r.randrange(10) for _ in range(64))))])
    ctx.files["small_mlp inputs"] = safetensors_file([
        ("x", "F32", [6, 8], struct.pack("<48f", *(r.gauss(0, 1) for _ in range(48)))),
        ("t", "F32", [6, 4], struct.pack("<24f", *(r.random() for _ in range(24))))])
    for target in ("mlp inputs", "small_mlp inputs"):
        model = target.split()[0]
        write(base, "in.safetensors", ctx.files[target])
        res = runner.run([ctx.tools["memopt-run"], f"{model}.mlir", "--device=cpu",
                          "--steps=1", "--inputs=in.safetensors"], base)
        if res["rc"] != 0:
            raise SetupError(f"the valid {target} file is refused: "
                             + res["stderr"].strip()[-500:])
    ctx.onnx = None
    if "onnx" in kinds:
        try:
            ctx.onnx = onnx_model()
        except ImportError as e:
            if args.kinds_given:
                raise SetupError(f"kind onnx needs the onnx Python package: {e}")
            kinds.remove("onnx")
            print("bad_inputs: the onnx Python package is missing; kind onnx skipped",
                  file=sys.stderr)
        if ctx.onnx is not None:
            write(base, "tiny.onnx", ctx.onnx.SerializeToString())
            res = runner.run([ctx.tools["memopt-translate"], "--import-onnx", "tiny.onnx",
                              "--loss=cross_entropy", "-o", "tiny.mlir"], base)
            if res["rc"] != 0:
                raise SetupError("the valid ONNX model is refused: "
                                 + res["stderr"].strip()[-500:])
    return ctx


# --- main -------------------------------------------------------------------------------

def save_finding(out, entry, work, inputs, res):
    name = os.path.join(out, f"finding-{entry['index']:05d}-{entry['kind']}-{entry['run']}")
    os.makedirs(name, exist_ok=True)
    for f in inputs:
        src = os.path.join(work, f)
        if os.path.isdir(src):
            shutil.copytree(src, os.path.join(name, f), dirs_exist_ok=True)
        elif os.path.exists(src):
            shutil.copy(src, os.path.join(name, f))
    with open(os.path.join(name, "command.sh"), "w") as f:
        f.write("#!/bin/sh\n# " + entry["why"].replace("\n", " ") + "\n# "
                + "; ".join(entry["reasons"]) + "\ncd \"$(dirname \"$0\")\" && "
                + entry["command"] + "\n")
    with open(os.path.join(name, "output.txt"), "w") as f:
        f.write(f"exit status {res['rc']}\n--- stdout\n{res['stdout'][-20000:]}"
                f"\n--- stderr\n{res['stderr'][-20000:]}")
    with open(os.path.join(name, "finding.json"), "w") as f:
        json.dump(entry, f, indent=1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--inputs", type=int, default=1000, help="mutated inputs, in all")
    parser.add_argument("--time-limit", type=float, default=0,
                        help="stop starting new inputs after this many seconds")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--out", default=None, help="directory for the findings")
    parser.add_argument("--summary", default=None, help="write the JSON summary here")
    parser.add_argument("--kinds", default=None,
                        help="comma-separated subset of " + ",".join(KINDS))
    parser.add_argument("--only", type=int, default=None,
                        help="run input INDEX alone (replays a finding)")
    parser.add_argument("--timeout", type=float, default=60,
                        help="seconds a run may take before it counts as a hang")
    parser.add_argument("--memory-limit", type=int, default=4096,
                        help="address space of each run in MiB (0: no limit)")
    args = parser.parse_args()
    args.kinds_given = args.kinds is not None
    kinds = (args.kinds or ",".join(KINDS)).split(",")
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or not kinds:
        print(f"bad_inputs: unknown kind(s) {unknown}; choose from {','.join(KINDS)}",
              file=sys.stderr)
        return 2
    runner = Runner(args)
    start = time.time()
    counts = {k: {"inputs": 0, "runs": 0, "ok": 0, "clean_error": 0, "findings": 0}
              for k in kinds}
    findings = []
    with tempfile.TemporaryDirectory(prefix="memopt-bad-inputs-") as tmp:
        try:
            ctx = setup(args, kinds, tmp, runner)
        except SetupError as e:
            print(f"bad_inputs: {e}", file=sys.stderr)
            return 2
        for k in list(counts):
            if k not in kinds:
                del counts[k]
        indices = [args.only] if args.only is not None else range(args.inputs)
        for index in indices:
            if args.time_limit and time.time() - start > args.time_limit:
                break
            kind = kinds[index % len(kinds)]
            rng = random.Random(f"{args.seed}:{index}")
            work = os.path.join(tmp, f"in{index}")
            os.makedirs(work)
            gen = GENERATORS[kind](rng, ctx, work)
            counts[kind]["inputs"] += 1
            result, run_no = None, 0
            while True:
                try:
                    s = gen.send(result)
                except StopIteration:
                    break
                for name in s["outputs"]:
                    path = os.path.join(work, name)
                    if os.path.isdir(path) and not os.path.islink(path):
                        shutil.rmtree(path)
                    elif os.path.lexists(path):
                        os.unlink(path)
                inputs = sorted(os.listdir(work))
                result = runner.run(s["cmd"], work)
                outcome, reasons = classify(s, result, work, args.timeout)
                counts[kind]["runs"] += 1
                counts[kind]["findings" if outcome == "finding" else outcome] += 1
                if outcome == "finding":
                    err = result["stderr"].rstrip().splitlines()
                    if "Stack dump" in result["stderr"]:
                        # The top of the stack says where; the tail is the
                        # recursion, or main.
                        at = next(i for i, l in enumerate(err) if "Stack dump" in l)
                        err = err[max(0, at - 4):at + 16] + ["..."] + err[-3:]
                    tail = result["stdout"].rstrip().splitlines()[-5:] + err[-24:]
                    entry = {"index": index, "kind": kind, "run": run_no,
                             "why": s["why"], "expect": s["expect"],
                             "command": shlex.join(s["cmd"]), "exit_status": result["rc"],
                             "seconds": result["seconds"], "reasons": reasons,
                             "cause": kind + ": " + signature(reasons, result, s["why"]),
                             "output_tail": [l[:400] for l in tail]}
                    findings.append(entry)
                    print(f"finding: input {index} ({kind}) run {run_no}: "
                          f"{'; '.join(reasons)}", file=sys.stderr)
                    if args.out:
                        save_finding(args.out, entry, work, inputs, result)
                run_no += 1
            shutil.rmtree(work, ignore_errors=True)
    causes = {}
    for f in findings:
        causes.setdefault(f["cause"], []).append(f["index"])
    totals = {o: sum(c[o] for c in counts.values())
              for o in ("inputs", "runs", "ok", "clean_error", "findings")}
    summary = {"seed": args.seed, "inputs": totals["inputs"], "runs": totals["runs"],
               "ok": totals["ok"], "clean_error": totals["clean_error"],
               "findings": totals["findings"], "distinct_causes": len(causes),
               "per_kind": counts, "elapsed_seconds": round(time.time() - start, 1),
               "causes": {c: {"count": len(ix), "inputs": ix[:20]}
                          for c, ix in sorted(causes.items())},
               "details": findings}
    if args.summary:
        with open(args.summary, "w") as f:
            json.dump(summary, f, indent=1)
    print(json.dumps({k: v for k, v in summary.items() if k not in ("details", "causes")}))
    shown = set()
    for f in findings:
        if f["cause"] in shown:
            continue
        shown.add(f["cause"])
        print(f"\nfinding ({len(causes[f['cause']])}x) {f['cause']}\n"
              f"  input {f['index']} ({f['why']}): {'; '.join(f['reasons'])}\n"
              f"  replay: {sys.argv[0]} --seed {args.seed} --only {f['index']} "
              f"--kinds {','.join(kinds)}\n  $ {f['command']}\n    "
              + "\n    ".join(f["output_tail"]))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
