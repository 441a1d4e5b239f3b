#!/usr/bin/env python3
"""Builds the small ONNX models the importer's tests read.

    make_onnx.py NAME OUT.onnx

Models are built with the `onnx` package's helpers, as an exporter would
write them (node names like torch.onnx.export's, initializers for weights,
Constant nodes for scalars), with fixed-seed weights.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)


def init(name, shape, scale=0.1, positive=False):
    a = rng.standard_normal(shape).astype(np.float32) * scale
    if positive:
        a = np.abs(a) + 0.5
    return numpy_helper.from_array(a, name)


def const(name, value, dtype=np.float32):
    return helper.make_node(
        "Constant", [], [name], name=name,
        value=numpy_helper.from_array(np.array(value, dtype=dtype)))


def model(nodes, inputs, outputs, inits=(), opset=17, name="test_graph"):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="memopt-tests")
    return m


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def cnn():
    """Conv + BatchNorm + ReLU + MaxPool, twice, then global average
    pooling, Flatten and a Linear layer (Gemm, transB=1): a small
    torchvision-style classifier exported in eval mode, dynamic batch."""
    nodes = [
        helper.make_node("Conv", ["input", "conv1.weight", "conv1.bias"],
                         ["c1"], name="/conv1/Conv", kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1], strides=[1, 1]),
        helper.make_node("BatchNormalization",
                         ["c1", "bn1.weight", "bn1.bias", "bn1.running_mean",
                          "bn1.running_var"], ["n1"], name="/bn1/BatchNormalization",
                         epsilon=1e-5, momentum=0.9),
        helper.make_node("Relu", ["n1"], ["r1"], name="/relu1/Relu"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="/pool/MaxPool",
                         kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "conv2.weight"], ["c2"],
                         name="/conv2/Conv", kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("BatchNormalization",
                         ["c2", "bn2.weight", "bn2.bias", "bn2.running_mean",
                          "bn2.running_var"], ["n2"], name="/bn2/BatchNormalization",
                         epsilon=1e-5, momentum=0.9),
        helper.make_node("Relu", ["n2"], ["r2"], name="/relu2/Relu"),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"],
                         name="/avgpool/GlobalAveragePool"),
        helper.make_node("Flatten", ["g"], ["f"], name="/Flatten", axis=1),
        helper.make_node("Gemm", ["f", "fc.weight", "fc.bias"], ["output"],
                         name="/fc/Gemm", alpha=1.0, beta=1.0, transB=1),
    ]
    inits = [
        init("conv1.weight", [8, 3, 3, 3], 0.3), init("conv1.bias", [8]),
        init("bn1.weight", [8], 0.1, positive=True), init("bn1.bias", [8]),
        init("bn1.running_mean", [8]),
        init("bn1.running_var", [8], 0.1, positive=True),
        init("conv2.weight", [16, 8, 3, 3], 0.2),
        init("bn2.weight", [16], 0.1, positive=True), init("bn2.bias", [16]),
        init("bn2.running_mean", [16]),
        init("bn2.running_var", [16], 0.1, positive=True),
        init("fc.weight", [10, 16], 0.3), init("fc.bias", [10]),
    ]
    return model(nodes, [f32("input", ["batch", 3, 16, 16])],
                 [f32("output", ["batch", 10])], inits, name="main_graph")


def elementwise():
    """Broadcasting arithmetic with constants, activations, the erf GELU
    pattern exporters write, softmax and dropout."""
    nodes = [
        const("half", 0.5), const("one", 1.0), const("sqrt2", 1.4142135381698608),
        const("three", 3.0),
        helper.make_node("Add", ["x", "bias"], ["a"], name="/Add"),
        helper.make_node("Sub", ["a", "three"], ["s"], name="/Sub"),
        helper.make_node("Sigmoid", ["s"], ["sg"], name="/Sigmoid"),
        helper.make_node("Add", ["sg", "one"], ["den"], name="/Add_1"),
        helper.make_node("Div", ["s", "den"], ["d"], name="/Div"),
        helper.make_node("Mul", ["d", "half"], ["m"], name="/Mul"),
        helper.make_node("LeakyRelu", ["m"], ["lr"], name="/LeakyRelu", alpha=0.2),
        helper.make_node("Elu", ["lr"], ["el"], name="/Elu", alpha=0.5),
        helper.make_node("Tanh", ["el"], ["t"], name="/Tanh"),
        # GELU as torch.onnx.export writes it below opset 20.
        helper.make_node("Div", ["t", "sqrt2"], ["g0"], name="/act/Div"),
        helper.make_node("Erf", ["g0"], ["g1"], name="/act/Erf"),
        helper.make_node("Add", ["g1", "one"], ["g2"], name="/act/Add"),
        helper.make_node("Mul", ["t", "g2"], ["g3"], name="/act/Mul"),
        helper.make_node("Mul", ["g3", "half"], ["g4"], name="/act/Mul_1"),
        helper.make_node("Relu", ["g4"], ["r"], name="/Relu"),
        helper.make_node("Softmax", ["r"], ["sm"], name="/Softmax", axis=-1),
        helper.make_node("Dropout", ["sm"], ["output"], name="/Dropout"),
    ]
    return model(nodes, [f32("x", [4, 8])], [f32("output", [4, 8])],
                 [init("bias", [8])])


def unarymath():
    """Abs, Sqrt, Log and Exp on computed tensors (not folded); SiLU as
    Mul(x, Sigmoid(x)), and a sigmoid read twice, which stays unfused."""
    nodes = [
        const("half", 0.5),
        helper.make_node("Abs", ["x"], ["a"], name="/Abs"),
        helper.make_node("Add", ["a", "half"], ["b"], name="/Add"),
        helper.make_node("Sqrt", ["b"], ["s"], name="/Sqrt"),
        helper.make_node("Log", ["s"], ["l"], name="/Log"),
        helper.make_node("Exp", ["l"], ["e"], name="/Exp"),
        helper.make_node("Sigmoid", ["e"], ["sg"], name="/act/Sigmoid"),
        helper.make_node("Mul", ["sg", "e"], ["silu"], name="/act/Mul"),
        helper.make_node("Sigmoid", ["silu"], ["sg2"], name="/Sigmoid_1"),
        helper.make_node("Mul", ["silu", "sg2"], ["m2"], name="/Mul_1"),
        helper.make_node("Add", ["m2", "sg2"], ["output"], name="/Add_1"),
    ]
    return model(nodes, [f32("x", [4, 8])], [f32("output", [4, 8])])


def shapes():
    """A reshape computed from Shape like `x.view(x.size(0), -1)`, then
    Transpose, Slice, Split, Concat, Unsqueeze/Squeeze, Resize, pools."""
    i64 = np.int64
    nodes = [
        helper.make_node("Shape", ["x"], ["shp"], name="/Shape"),
        const("zero", 0, i64),
        helper.make_node("Gather", ["shp", "zero"], ["n"], name="/Gather", axis=0),
        helper.make_node("Unsqueeze", ["n", "axes0"], ["n1"], name="/Unsqueeze"),
        const("minus1", [-1], i64),
        helper.make_node("Concat", ["n1", "minus1"], ["newshape"],
                         name="/Concat", axis=0),
        helper.make_node("Resize", ["x", "", "scales"], ["up"], name="/Resize",
                         mode="nearest", coordinate_transformation_mode="asymmetric",
                         nearest_mode="floor"),
        helper.make_node("AveragePool", ["up"], ["ap"], name="/AveragePool",
                         kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Reshape", ["ap", "newshape"], ["flat"], name="/Reshape"),
        helper.make_node("Slice", ["flat", "starts", "ends", "axes1"], ["sl"],
                         name="/Slice"),
        helper.make_node("Split", ["sl", "split"], ["sp0", "sp1"], name="/Split",
                         axis=1),
        helper.make_node("Concat", ["sp1", "sp0"], ["cat"], name="/Concat_1", axis=1),
        helper.make_node("Unsqueeze", ["cat", "axes0"], ["u"], name="/Unsqueeze_1"),
        helper.make_node("Transpose", ["u"], ["tr"], name="/Transpose", perm=[1, 2, 0]),
        helper.make_node("Squeeze", ["tr", "axes2"], ["sq"], name="/Squeeze"),
        helper.make_node("ReduceMean", ["x"], ["rm"], name="/ReduceMean",
                         axes=[2, 3], keepdims=0),
        helper.make_node("Concat", ["sq", "rm"], ["output"], name="/Concat_2", axis=1),
    ]
    inits = [
        numpy_helper.from_array(np.array([0], i64), "axes0"),
        numpy_helper.from_array(np.array([1], i64), "axes1"),
        numpy_helper.from_array(np.array([2], i64), "axes2"),
        numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales"),
        numpy_helper.from_array(np.array([4], i64), "starts"),
        numpy_helper.from_array(np.array([i64(2**63 - 1)], i64), "ends"),
        numpy_helper.from_array(np.array([20, 24], i64), "split"),
    ]
    return model(nodes, [f32("x", [2, 3, 4, 4])], [f32("output", [2, 47])],
                 inits, opset=13)


def transformer():
    """Token and position embeddings, LayerNormalization, a fused QKV
    projection split three ways, scaled attention, MatMul with a weight."""
    i64 = np.int64
    nodes = [
        helper.make_node("Gather", ["wte.weight", "idx"], ["tok"], name="/wte/Gather"),
        helper.make_node("Add", ["tok", "wpe"], ["h"], name="/Add"),
        helper.make_node("LayerNormalization", ["h", "ln.weight", "ln.bias"],
                         ["hn"], name="/ln/LayerNormalization", axis=-1,
                         epsilon=1e-5),
        helper.make_node("MatMul", ["hn", "attn.weight"], ["qkv0"], name="/attn/MatMul"),
        helper.make_node("Add", ["qkv0", "attn.bias"], ["qkv"], name="/attn/Add"),
        helper.make_node("Split", ["qkv", "split"], ["q", "k", "v"], name="/Split",
                         axis=2),
        helper.make_node("Transpose", ["k"], ["kt"], name="/Transpose", perm=[0, 2, 1]),
        helper.make_node("MatMul", ["q", "kt"], ["att0"], name="/MatMul"),
        const("scale", 4.0),
        helper.make_node("Div", ["att0", "scale"], ["att1"], name="/Div"),
        helper.make_node("Add", ["att1", "mask"], ["att2"], name="/Add_1"),
        helper.make_node("Softmax", ["att2"], ["att"], name="/Softmax", axis=-1),
        helper.make_node("MatMul", ["att", "v"], ["y"], name="/MatMul_1"),
        helper.make_node("MatMul", ["y", "head.weight"], ["logits"],
                         name="/head/MatMul"),
    ]
    T, C, V = 5, 16, 11
    mask = np.triu(np.full((T, T), -np.inf, np.float32), 1)
    inits = [
        init("wte.weight", [V, C], 0.5), init("wpe", [T, C], 0.5),
        init("ln.weight", [C], 0.1, positive=True), init("ln.bias", [C]),
        init("attn.weight", [C, 3 * C], 0.3), init("attn.bias", [3 * C]),
        numpy_helper.from_array(np.array([C, C, C], i64), "split"),
        numpy_helper.from_array(mask, "mask"),
        init("head.weight", [C, V], 0.3),
    ]
    return model(nodes, [helper.make_tensor_value_info("idx", TensorProto.INT64,
                                                       [2, T])],
                 [f32("logits", [2, T, V])], inits)


def unsupported():
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Det", ["r"], ["d"], name="det_1"),
        helper.make_node("NonZero", ["r"], ["nz"], name="weird_nonzero"),
        helper.make_node("Det", ["r"], ["d2"], name="det_2"),
        helper.make_node("Custom", ["r"], ["c"], name="custom", domain="com.example"),
    ]
    return model(nodes, [f32("x", [3, 3])], [f32("d", []), f32("d2", [])])


def dynamic():
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="relu")]
    return model(nodes, [f32("x", ["batch", "seq", 8])], [f32("y", ["batch", "seq", 8])])


def opset11():
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="relu")]
    return model(nodes, [f32("x", [2, 8])], [f32("y", [2, 8])], opset=11)


def dupinit():
    """Two initializers called 'w' (onnx.checker refuses the model): which
    value is meant cannot be told."""
    nodes = [helper.make_node("Gemm", ["x", "w"], ["y"], name="fc", transB=1)]
    return model(nodes, [f32("x", [2, 3])], [f32("y", [2, 4])],
                 [init("w", [4, 3]), init("w", [4, 3], scale=0.5)])


def asympads():
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], name="/conv/Conv",
                              kernel_shape=[3, 3], pads=[0, 0, 1, 1])]
    return model(nodes, [f32("x", [1, 2, 5, 5])], [f32("y", [1, 4, 4, 4])],
                 [init("w", [4, 2, 3, 3])])


def badshape():
    """A Gemm whose weight does not fit its input: the op's shape check
    reports it at the ONNX node."""
    nodes = [helper.make_node("Gemm", ["x", "w"], ["y"], name="/fc/Gemm", transB=1)]
    return model(nodes, [f32("x", [2, 8])], [f32("y", [2, 4])], [init("w", [4, 6])])


def regression():
    """A Linear(8, 1) head (its one-element bias is a parameter) scaled by a
    one-element initializer (a constant) and an eval-mode-export-style
    initializer shared by two layers (trained tied, with a warning)."""
    nodes = [
        helper.make_node("Gemm", ["x", "head.weight", "head.bias"], ["h"],
                         name="/head/Gemm", transB=1),
        helper.make_node("Mul", ["h", "scale"], ["s"], name="/Mul"),
        helper.make_node("Add", ["s", "onnx::Add_7"], ["a"], name="/Add"),
        helper.make_node("Mul", ["a", "onnx::Add_7"], ["y"], name="/Mul_1"),
    ]
    return model(nodes, [f32("x", [2, 8])], [f32("y", [2, 1])],
                 [init("head.weight", [1, 8]), init("head.bias", [1]),
                  numpy_helper.from_array(np.array([0.5], np.float32), "scale"),
                  init("onnx::Add_7", [2, 1])])


def typed():
    """Values in ONNX's typed fields instead of raw_data: f16 weights in
    int32_data, f32 in float_data, int64 in int64_data, f64 in double_data,
    and Constant nodes with value_floats / value_ints."""
    w = rng.standard_normal((4, 8)).astype(np.float16)
    nodes = [
        helper.make_node("Constant", [], ["shape"], name="shape", value_ints=[3, 8]),
        helper.make_node("Reshape", ["x", "shape"], ["x2"], name="/Reshape"),
        helper.make_node("Gemm", ["x2", "w", "b"], ["h"], name="/fc/Gemm", transB=1),
        helper.make_node("Constant", [], ["k"], name="k", value_floats=[2.0, 3.0, 4.0, 5.0]),
        helper.make_node("Mul", ["h", "k"], ["y"], name="/Mul"),
        helper.make_node("Reshape", ["wide", "wshape"], ["wide2"], name="/Reshape_1"),
        helper.make_node("Add", ["wide2", "wide2"], ["z"], name="/Add"),
        helper.make_node("Cast", ["scale"], ["scale64"], name="/Cast", to=TensorProto.DOUBLE),
        helper.make_node("Mul", ["z", "scale64"], ["z2"], name="/Mul_1"),
    ]
    inits = [
        helper.make_tensor("w", TensorProto.FLOAT16, [4, 8], w.flatten().tolist()),
        helper.make_tensor("b", TensorProto.FLOAT16, [4], [0.5, -0.25, 1.0, 2.0]),
        helper.make_tensor("wide", TensorProto.DOUBLE, [2, 3], [1, 2, 3, 4, 5, 6]),
        helper.make_tensor("scale", TensorProto.FLOAT, [6], [0.5, 1, 1.5, 2, 2.5, 3]),
        helper.make_tensor("wshape", TensorProto.INT64, [1], [6]),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT16, [2, 12])
    return model(nodes, [x],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [3, 4]),
                  helper.make_tensor_value_info("z2", TensorProto.DOUBLE, [6])], inits)


def folding():
    """Shape and mask arithmetic as exporters write it, all on constants
    (folded at import): the sequence length from Shape/Gather, Range,
    ConstantOfShape, Trilu, Equal, Not, Where, Mod, CastLike, Expand, Sqrt,
    Reciprocal, Pow. And the ops that also compute on the step's tensors:
    masked_fill(mask, -inf) before a Softmax, Neg, Reciprocal, Pow with
    exponents 2, 3 and -2, Expand and Tile of a computed tensor,
    SplitToSequence/SequenceAt."""
    i64 = lambda name, v: const(name, v, np.int64)
    nodes = [
        i64("one_i", 1), i64("zero_i", 0), i64("idx1", 1), i64("big", 100),
        const("zero_f", 0.0), const("minf", -np.inf, np.float64), const("d", 16.0),
        const("two", 2.0), const("three", 3.0), const("mtwo", -2.0), const("onef", 1.0),
        helper.make_node("Shape", ["x"], ["shape"], name="/Shape"),
        helper.make_node("Gather", ["shape", "idx1"], ["t"], name="/Gather", axis=0),
        helper.make_node("Range", ["zero_i", "t", "one_i"], ["r"], name="/Range"),
        helper.make_node("Unsqueeze", ["t", "zero_ax"], ["t1"], name="/Unsqueeze"),
        helper.make_node("Concat", ["t1", "t1"], ["tt"], name="/Concat", axis=0),
        helper.make_node("ConstantOfShape", ["tt"], ["ones"], name="/ConstantOfShape",
                         value=numpy_helper.from_array(np.array([1.0], np.float32))),
        helper.make_node("Trilu", ["ones"], ["tril"], name="/Trilu", upper=0),
        helper.make_node("Equal", ["tril", "zero_f"], ["above"], name="/Equal"),
        helper.make_node("CastLike", ["minf", "x"], ["minf32"], name="/CastLike"),
        helper.make_node("Where", ["above", "minf32", "zero_f"], ["mask"], name="/Where"),
        helper.make_node("Expand", ["mask", "mshape"], ["mask3"], name="/Expand"),
        helper.make_node("Mod", ["shape", "big"], ["shape2"], name="/Mod"),
        helper.make_node("Reshape", ["x", "shape2"], ["xr"], name="/Reshape"),
        helper.make_node("Sqrt", ["d"], ["sd"], name="/Sqrt"),
        helper.make_node("Reciprocal", ["sd"], ["scale"], name="/Reciprocal"),
        helper.make_node("Pow", ["sd", "two"], ["d2"], name="/Pow_c"),
        helper.make_node("Div", ["scale", "d2"], ["scale2"], name="/Div_c"),
        helper.make_node("Transpose", ["xr"], ["xt"], name="/Transpose", perm=[0, 2, 1]),
        helper.make_node("MatMul", ["xr", "xt"], ["s0"], name="/MatMul"),
        helper.make_node("Mul", ["s0", "scale2"], ["scores"], name="/Mul"),
        # An additive -inf mask (folded), and masked_fill(~tril, -inf).
        helper.make_node("Add", ["scores", "mask3"], ["sa"], name="/Add_mask"),
        helper.make_node("Softmax", ["sa"], ["pa"], name="/Softmax", axis=-1),
        helper.make_node("MatMul", ["pa", "xr"], ["a1"], name="/MatMul_1"),
        helper.make_node("Cast", ["tril"], ["trilb"], name="/Cast", to=TensorProto.BOOL),
        helper.make_node("Not", ["trilb"], ["notb"], name="/Not"),
        helper.make_node("Where", ["notb", "minf32", "scores"], ["sb"], name="/masked_fill"),
        helper.make_node("Softmax", ["sb"], ["pb"], name="/Softmax_1", axis=-1),
        helper.make_node("MatMul", ["pb", "xr"], ["a2"], name="/MatMul_2"),
        # Arithmetic on the step's tensors.
        helper.make_node("Neg", ["xr"], ["n"], name="/Neg"),
        helper.make_node("Pow", ["xr", "two"], ["p2"], name="/Pow"),
        helper.make_node("Add", ["p2", "onef"], ["p2a"], name="/Add_1"),
        helper.make_node("Reciprocal", ["p2a"], ["rc"], name="/Reciprocal_1"),
        helper.make_node("Pow", ["xr", "three"], ["p3"], name="/Pow_1"),
        helper.make_node("Pow", ["p2a", "mtwo"], ["pm2"], name="/Pow_2"),
        helper.make_node("Expand", ["bias", "xshape"], ["eb"], name="/Expand_1"),
        helper.make_node("Tile", ["xr", "reps"], ["tl"], name="/Tile"),
        helper.make_node("SplitToSequence", ["tl", "splits"], ["seq"], name="/SplitToSequence", axis=2),
        helper.make_node("SequenceAt", ["seq", "zero_i"], ["q0"], name="/SequenceAt"),
        helper.make_node("SequenceAt", ["seq", "one_i"], ["q1"], name="/SequenceAt_1"),
        helper.make_node("Add", ["a1", "a2"], ["u0"], name="/Add_2"),
        helper.make_node("Add", ["u0", "n"], ["u1"], name="/Add_3"),
        helper.make_node("Add", ["u1", "rc"], ["u2"], name="/Add_4"),
        helper.make_node("Add", ["u2", "p3"], ["u3"], name="/Add_5"),
        helper.make_node("Add", ["u3", "pm2"], ["u4"], name="/Add_6"),
        helper.make_node("Add", ["u4", "eb"], ["u5"], name="/Add_7"),
        helper.make_node("Add", ["u5", "q0"], ["u6"], name="/Add_8"),
        helper.make_node("Mul", ["u6", "q1"], ["output"], name="/Mul_1"),
    ]
    inits = [init("bias", [6]),
             numpy_helper.from_array(np.array([0], np.int64), "zero_ax"),
             numpy_helper.from_array(np.array([2, 4, 4], np.int64), "mshape"),
             numpy_helper.from_array(np.array([2, 4, 6], np.int64), "xshape"),
             numpy_helper.from_array(np.array([1, 1, 2], np.int64), "reps"),
             numpy_helper.from_array(np.array([6, 6], np.int64), "splits")]
    return model(nodes, [f32("x", [2, 4, 6])], [f32("output", [2, 4, 6])], inits)


def foldbad(case):
    """One node the importer refuses: a Where on a computed condition, a Pow
    with an exponent it does not compute, a Range with delta 0, a Tile that
    would fold to too many elements, a Clip with a NaN, crossed, wrong-side
    infinite or computed bound, a Gelu approximation other than none/tanh."""
    i64 = lambda name, v: const(name, v, np.int64)
    nodes = {
        "where": [helper.make_node("Greater", ["x", "zero"], ["c"], name="/Greater"),
                  helper.make_node("Where", ["c", "x", "zero"], ["output"], name="/Where")],
        "pow": [helper.make_node("Pow", ["x", "e"], ["output"], name="/Pow")],
        "range": [i64("a", 0), i64("b", 4), i64("z", 0),
                  helper.make_node("Range", ["a", "b", "z"], ["r"], name="/Range"),
                  helper.make_node("Reshape", ["x", "r"], ["output"], name="/Reshape")],
        "tile": [helper.make_node("Tile", ["big", "reps"], ["tb"], name="/Tile"),
                 helper.make_node("Add", ["x", "tb"], ["output"], name="/Add")],
        "clipnan": [helper.make_node("Clip", ["x", "nan"], ["output"], name="/Clip")],
        "clipcrossed": [helper.make_node("Clip", ["x", "e", "zero"], ["output"], name="/Clip")],
        "clipinf": [helper.make_node("Clip", ["x", "zero", "minf"], ["output"], name="/Clip")],
        "clipcomputed": [helper.make_node("Relu", ["x"], ["r"], name="/Relu"),
                         helper.make_node("Clip", ["x", "", "r"], ["output"], name="/Clip")],
        "gelu": [helper.make_node("Gelu", ["x"], ["output"], name="/Gelu",
                                  approximate="sigmoid")],
    }[case]
    nodes = [const("zero", 0.0), const("e", 0.7), const("nan", np.nan),
             const("minf", -np.inf)] + nodes
    inits = [numpy_helper.from_array(np.ones((1, 4), np.float32), "big"),
             numpy_helper.from_array(np.array([1 << 20, 1 << 10], np.int64), "reps")]
    return model(nodes, [f32("x", [2, 4])], [f32("output", [2, 4])], inits,
                 opset=20 if case == "gelu" else 17)


def mulinf():
    """(1 - mask) * -inf, as the dynamo exporter writes BERT's
    (1 - mask) * torch.finfo(torch.float64).min when it stores the minimum
    as float32: NaN wherever the mask is 1."""
    nodes = [const("onef", 1.0), const("minf", -np.inf),
             helper.make_node("Sub", ["onef", "x"], ["inv"], name="/Sub"),
             helper.make_node("Mul", ["inv", "minf"], ["output"], name="/Mul")]
    return model(nodes, [f32("x", [2, 4])], [f32("output", [2, 4])], [])


def rmsbad():
    """RMSNorm's chain with the mean over axis 1 instead of the last."""
    nodes = [const("two", 2.0), const("eps", 1e-6),
             helper.make_node("Pow", ["x", "two"], ["p"], name="/Pow"),
             helper.make_node("ReduceMean", ["p"], ["m"], name="/ReduceMean", axes=[1],
                              keepdims=1),
             helper.make_node("Add", ["m", "eps"], ["a"], name="/Add"),
             helper.make_node("Sqrt", ["a"], ["s"], name="/Sqrt"),
             helper.make_node("Reciprocal", ["s"], ["r"], name="/Reciprocal"),
             helper.make_node("Mul", ["x", "r"], ["output"], name="/Mul")]
    return model(nodes, [f32("x", [2, 4, 6])], [f32("output", [2, 4, 6])], [])


def reduce():
    """ReduceMean and ReduceSum over axes other than H and W (opset 13:
    ReduceSum's axes an input, ReduceMean's an attribute): a mean over axis
    1 dropped, a sum over the last axis kept, a mean over everything. The
    output is their sum, 2 x 1 after broadcasting, of x0 * w (w is
    [0.5, 1, 1.5, 2], so that the step has a parameter)."""
    nodes = [helper.make_node("Mul", ["x0", "w"], ["x"], name="/Mul"),
             helper.make_node("ReduceMean", ["x"], ["m1"], name="/ReduceMean",
                              axes=[1], keepdims=0),
             helper.make_node("ReduceSum", ["m1", "last"], ["s"], name="/ReduceSum",
                              keepdims=1),
             helper.make_node("ReduceMean", ["x"], ["all"], name="/ReduceMean_all",
                              keepdims=0),
             helper.make_node("Add", ["s", "all"], ["output"], name="/Add")]
    inits = [numpy_helper.from_array(np.array([-1], np.int64), "last"),
             numpy_helper.from_array(np.array([0.5, 1.0, 1.5, 2.0], np.float32), "w")]
    return model(nodes, [f32("x0", [2, 3, 4])], [f32("output", [2, 1])], inits, opset=13)


def boolmask(cast_to=TensorProto.FLOAT):
    """A boolean key-padding mask input, unsqueezed and cast to float (as
    `mask[:, None, :].float()` exports), multiplying x; with
    cast_to=INT64 the cast is not to a float type."""
    nodes = [helper.make_node("Unsqueeze", ["mask", "ax"], ["m1"], name="/Unsqueeze"),
             helper.make_node("Cast", ["m1"], ["mf"], name="/Cast", to=cast_to),
             helper.make_node("Mul", ["x", "mf"], ["output"], name="/Mul")]
    if cast_to != TensorProto.FLOAT:
        nodes[-1:] = [helper.make_node("Cast", ["mf"], ["mf2"], name="/Cast_1",
                                       to=TensorProto.FLOAT),
                      helper.make_node("Mul", ["x", "mf2"], ["output"], name="/Mul")]
    mask = helper.make_tensor_value_info("mask", TensorProto.BOOL, [2, 4])
    inits = [numpy_helper.from_array(np.array([1], np.int64), "ax")]
    return model(nodes, [f32("x", [2, 1, 4]), mask], [f32("output", [2, 1, 4])], inits)


def boolfill(case):
    """masked_fill with a computed boolean condition: `ok` fills -inf before
    a Softmax (imports); `value` fills -1e4 (refused); `notfloat` negates a
    computed float (refused)."""
    fill = -1e4 if case == "value" else -np.inf
    nodes = [helper.make_node("Unsqueeze", ["mask", "ax"], ["m1"], name="/Unsqueeze"),
             helper.make_node("Not", ["m1"], ["nm"], name="/Not"),
             const("fill", fill),
             helper.make_node("Where", ["nm", "fill", "x"], ["w"], name="/Where"),
             helper.make_node("Softmax", ["w"], ["output"], name="/Softmax", axis=-1)]
    inputs = [f32("x", [2, 3, 4]), helper.make_tensor_value_info("mask", TensorProto.BOOL, [2, 4])]
    if case == "notfloat":
        nodes = [helper.make_node("Sigmoid", ["x"], ["s"], name="/Sigmoid"),
                 helper.make_node("Cast", ["s"], ["b"], name="/Cast", to=TensorProto.BOOL),
                 helper.make_node("Not", ["b"], ["nb"], name="/Not"),
                 helper.make_node("Cast", ["nb"], ["output"], name="/Cast_1", to=TensorProto.FLOAT)]
        inputs = [f32("x", [2, 3, 4])]
    inits = [numpy_helper.from_array(np.array([1], np.int64), "ax")]
    return model(nodes, inputs, [f32("output", [2, 3, 4])], inits)


def boolselect(case):
    """Where(mask, a, b) with a computed boolean condition and constant
    scalar branches, added to scores before a Softmax: `sdpa` is SDPA's
    boolean attn_mask (0, -inf) with its Where(IsNaN(P), 0, P) guard
    (imports: a safe softmax); `finite` selects 2.5 or -1e4 (imports);
    `twoinf` selects inf or -inf (refused); `isnan` applies IsNaN to a
    computed tensor outside the guard (refused)."""
    a, b = {"sdpa": (0.0, -np.inf), "finite": (2.5, -1e4), "twoinf": (np.inf, -np.inf),
            "isnan": (0.0, -np.inf)}[case]
    nodes = [helper.make_node("Unsqueeze", ["mask", "ax"], ["m1"], name="/Unsqueeze"),
             const("a", a), const("b", b),
             helper.make_node("Where", ["m1", "a", "b"], ["bias"], name="/Where"),
             helper.make_node("Add", ["x", "bias"], ["s"], name="/Add"),
             helper.make_node("Softmax", ["s"], ["p"], name="/Softmax", axis=-1),
             const("zero", 0.0),
             helper.make_node("IsNaN", ["p" if case != "isnan" else "x"], ["nan"], name="/IsNaN"),
             helper.make_node("Where", ["nan", "zero", "p"], ["output"], name="/Where_1")]
    if case in ("finite", "twoinf"):
        nodes[-4:] = [helper.make_node("Softmax", ["s"], ["output"], name="/Softmax", axis=-1)]
    inputs = [f32("x", [2, 3, 4]), helper.make_tensor_value_info("mask", TensorProto.BOOL, [2, 4])]
    inits = [numpy_helper.from_array(np.array([1], np.int64), "ax")]
    return model(nodes, inputs, [f32("output", [2, 3, 4])], inits)


def compare(case):
    """Comparisons of a computed tensor with a constant, and And/Or/Xor of
    their booleans: `ok` computes (x > 0.5) & (0.5 >= x) | (x == 1) ^ (x <
    -1) and casts it to float (imports); `two` compares two computed tensors
    and `notbool` ands a float (both refused)."""
    half, one, m1 = const("half", 0.5), const("one", 1.0), const("m1", -1.0)
    nodes = [half, one, m1,
             helper.make_node("Greater", ["x", "half"], ["a"], name="/Greater"),
             helper.make_node("GreaterOrEqual", ["half", "x"], ["b"], name="/GreaterOrEqual"),
             helper.make_node("Equal", ["x", "one"], ["c"], name="/Equal"),
             helper.make_node("Less", ["x", "m1"], ["d"], name="/Less"),
             helper.make_node("And", ["a", "b"], ["ab"], name="/And"),
             helper.make_node("Xor", ["c", "d"], ["cd"], name="/Xor"),
             helper.make_node("Or", ["ab", "cd"], ["o"], name="/Or"),
             helper.make_node("Cast", ["o"], ["output"], name="/Cast", to=TensorProto.FLOAT)]
    if case == "two":
        nodes[3] = helper.make_node("Greater", ["x", "x"], ["a"], name="/Greater")
    if case == "notbool":
        nodes[7] = helper.make_node("And", ["x", "b"], ["ab"], name="/And")
    return model(nodes, [f32("x", [2, 3])], [f32("output", [2, 3])], [])


MODELS = {f.__name__: f for f in [cnn, elementwise, unarymath, shapes, transformer, regression, typed, dupinit,
                                   unsupported, dynamic, opset11, asympads,
                                   badshape, folding, mulinf, rmsbad, reduce, boolmask]}
MODELS["boolmask_int"] = lambda: boolmask(TensorProto.INT64)
for _case in ("ok", "value", "notfloat"):
    MODELS["boolfill_" + _case] = (lambda c: lambda: boolfill(c))(_case)
for _case in ("ok", "two", "notbool"):
    MODELS["compare_" + _case] = (lambda c: lambda: compare(c))(_case)
for _case in ("sdpa", "finite", "twoinf", "isnan"):
    MODELS["boolselect_" + _case] = (lambda c: lambda: boolselect(c))(_case)
for _case in ("where", "pow", "range", "tile", "clipnan", "clipcrossed", "clipinf",
              "clipcomputed", "gelu"):
    MODELS["foldbad_" + _case] = (lambda c: lambda: foldbad(c))(_case)

if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in MODELS:
        sys.exit("usage: make_onnx.py {%s} OUT.onnx" % "|".join(MODELS))
    m = MODELS[sys.argv[1]]()
    if sys.argv[1] not in ("unsupported", "dupinit") and not sys.argv[1].startswith("foldbad"):
        onnx.checker.check_model(m)
    onnx.save(m, sys.argv[2])
