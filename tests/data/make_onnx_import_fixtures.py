#!/usr/bin/env python3
"""Writes the ONNX models of tests/test_onnx_import.c and tests/onnx_conformance/cli.sh
into tests/data/onnx_import/: small models with inputs and expected outputs
(safetensors, computed with numpy), and hostile ones (structurally valid
protobufs with nonsense semantics). The files are committed: the C tests
do not need Python.

    python3 tests/data/make_onnx_import_fixtures.py"""
import json
import os
import struct

import numpy as np

for _alias, _type in (("float", float), ("int", int), ("bool", bool),
                      ("object", object)):
    if _alias not in np.__dict__:
        setattr(np, _alias, _type)

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "onnx_import")
F = TensorProto.FLOAT
I64 = TensorProto.INT64
DT = {np.float32: "F32", np.float64: "F64", np.int64: "I64", np.int32: "I32",
      np.uint8: "U8", np.bool_: "BOOL"}


def save_safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for name, a in tensors.items():
        shape = list(np.shape(a))  # ascontiguousarray makes 0-d arrays 1-d
        a = np.ascontiguousarray(a)
        b = a.tobytes()
        header[name] = {"dtype": DT[a.dtype.type], "shape": shape,
                        "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def save(model, name, opset=None):
    with open(os.path.join(OUT, name + ".onnx"), "wb") as f:
        f.write(model.SerializeToString())


def make(nodes, inputs, outputs, inits=(), opset=13, name="g", domains=()):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    ops = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, 1) for d in domains]
    return helper.make_model(g, opset_imports=ops, producer_name="tg-fixtures")


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def init(name, a):
    return numpy_helper.from_array(a, name)


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def mlp(rng):
    """Gemm-Relu-Gemm-Softmax at opset 11 with a symbolic batch"""
    w1 = rng.standard_normal((5, 4)).astype(np.float32)
    b1 = rng.standard_normal(5).astype(np.float32)
    w2 = rng.standard_normal((5, 3)).astype(np.float32)
    b2 = rng.standard_normal(3).astype(np.float32)
    nodes = [helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="fc1", transB=1),
             helper.make_node("Relu", ["h"], ["r"], name="relu"),
             helper.make_node("Gemm", ["r", "w2", "b2"], ["z"], name="fc2", alpha=0.5,
                              beta=2.0),
             helper.make_node("Softmax", ["z"], ["y"], name="softmax", axis=1)]
    m = make(nodes, [vi("x", F, ["N", 4])], [vi("y", F, ["N", 3])],
             [init("w1", w1), init("b1", b1), init("w2", w2), init("b2", b2)], opset=11)
    save(m, "mlp")
    x = rng.standard_normal((2, 4)).astype(np.float32)
    h = np.maximum(x @ w1.T + b1, 0)
    y = softmax(0.5 * (h @ w2) + 2.0 * b2, 1)
    save_safetensors(os.path.join(OUT, "mlp_in.safetensors"), {"x": x})
    save_safetensors(os.path.join(OUT, "mlp_out.safetensors"), {"y": y.astype(np.float32)})


def softmax11(rng):
    """opset 11 Softmax on 3-D: over the flattened dims from axis 1"""
    nodes = [helper.make_node("Softmax", ["x"], ["y"], axis=1),
             helper.make_node("LogSoftmax", ["x"], ["ly"])]  # default axis 1
    m = make(nodes, [vi("x", F, [2, 3, 4])], [vi("y", F, [2, 3, 4]), vi("ly", F, [2, 3, 4])],
             opset=11)
    save(m, "softmax11")
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    y = softmax(x.reshape(2, 12), 1).reshape(2, 3, 4)
    save_safetensors(os.path.join(OUT, "softmax11_in.safetensors"), {"x": x})
    save_safetensors(os.path.join(OUT, "softmax11_out.safetensors"),
                     {"y": y.astype(np.float32), "ly": np.log(y).astype(np.float32)})


def shape_chain(rng):
    """PyTorch-style dynamic reshape: Shape -> Gather -> Unsqueeze -> Concat"""
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Constant", [], ["zero"],
                              value=numpy_helper.from_array(np.array(0, np.int64))),
             helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
             helper.make_node("Unsqueeze", ["n", "axes0"], ["n1"]),
             helper.make_node("Concat", ["n1", "minus1"], ["shape"], axis=0),
             helper.make_node("Reshape", ["x", "shape"], ["flat"]),
             helper.make_node("ReduceSum", ["flat", "axes1"], ["y"], keepdims=0),
             helper.make_node("Mul", ["flat", "two"], ["z"])]
    m = make(nodes, [vi("x", F, ["B", 2, 3])], [vi("y", F, ["B"]), vi("z", F, ["B", 6])],
             [init("axes0", np.array([0], np.int64)), init("minus1", np.array([-1], np.int64)),
              init("axes1", np.array([1], np.int64)), init("two", np.array(2, np.float32))],
             opset=13)
    save(m, "shape_chain")
    x = rng.standard_normal((3, 2, 3)).astype(np.float32)
    save_safetensors(os.path.join(OUT, "shape_chain_in.safetensors"), {"x": x})
    save_safetensors(os.path.join(OUT, "shape_chain_out.safetensors"),
                     {"y": x.reshape(3, 6).sum(1), "z": 2 * x.reshape(3, 6)})


def opset11_forms(rng):
    """the attribute forms of opset 11: Squeeze/Unsqueeze axes, Split split,
    ReduceSum axes, Dropout-10's ratio, BatchNormalization-9, Clip-11 with
    min/max initializers, Pad-11, ArgMax-11, Softmax default axis 1"""
    x = rng.standard_normal((2, 1, 6)).astype(np.float32)
    scale = rng.uniform(0.5, 1.5, 6).astype(np.float32)
    bias = rng.standard_normal(6).astype(np.float32)
    mean = rng.standard_normal(6).astype(np.float32)
    var = rng.uniform(0.5, 2.0, 6).astype(np.float32)
    nodes = [helper.make_node("Squeeze", ["x"], ["sq"], axes=[1]),
             helper.make_node("Split", ["sq"], ["s1", "s2"], axis=1, split=[2, 4]),
             helper.make_node("ReduceSum", ["s2"], ["rs"], axes=[-1], keepdims=0),
             helper.make_node("Unsqueeze", ["rs"], ["us"], axes=[0, 2]),
             helper.make_node("Dropout", ["s1"], ["dr", "mask"], ratio=0.3),
             helper.make_node("Clip", ["dr", "lo", ""], ["cl"]),
             helper.make_node("Pad", ["cl", "pads", "pv"], ["pd"]),
             helper.make_node("ArgMax", ["pd"], ["am"], axis=1, keepdims=0),
             helper.make_node("Unsqueeze", ["sq"], ["x4"], axes=[2, 3]),
             helper.make_node("BatchNormalization", ["x4", "scale", "bias", "mean", "var"],
                              ["bn"], epsilon=1e-3),
             helper.make_node("Softmax", ["sq"], ["sm"])]
    outs = [vi("us", F, [1, 2, 1]), vi("mask", TensorProto.BOOL, [2, 2]),
            vi("pd", F, [2, 5]), vi("am", I64, [2]), vi("bn", F, [2, 6, 1, 1]),
            vi("sm", F, [2, 6])]
    m = make(nodes, [vi("x", F, [2, 1, 6])], outs,
             [init("lo", np.array(-0.2, np.float32)), init("pads", np.array([0, 1, 0, 2], np.int64)),
              init("pv", np.array(9.0, np.float32)), init("scale", scale), init("bias", bias),
              init("mean", mean), init("var", var)], opset=11)
    save(m, "opset11_forms")
    sq = x[:, 0, :]
    cl = np.maximum(sq[:, :2], -0.2)
    pd = np.pad(cl, ((0, 0), (1, 2)), constant_values=9.0)
    x4 = sq[:, :, None, None]
    bn = (x4 - mean[None, :, None, None]) / np.sqrt(var[None, :, None, None] + 1e-3)
    bn = bn * scale[None, :, None, None] + bias[None, :, None, None]
    save_safetensors(os.path.join(OUT, "opset11_forms_in.safetensors"), {"x": x})
    save_safetensors(os.path.join(OUT, "opset11_forms_out.safetensors"), {
        "us": sq[:, 2:].sum(-1)[None, :, None], "mask": np.ones((2, 2), bool),
        "pd": pd.astype(np.float32), "am": pd.argmax(1).astype(np.int64),
        "bn": bn.astype(np.float32), "sm": softmax(sq, 1).astype(np.float32)})


def opset9_forms(rng):
    """the op versions of opset 9 that differ from later ones, as the
    converters of that time wrote them: Constant-9, Conv-1, Clip-6 (min/max
    attributes), AveragePool-7, MaxPool-8, Slice-1 (attributes),
    Concat-4, ReduceMean-1, Softmax-1 (2-D coercion at axis 1),
    BatchNormalization-9, Pad-2 (attributes), TopK-1 (k attribute),
    Upsample-9 (scales input), Dropout-7 (ratio attribute, mask of the
    data's type), BatchNormalization-7 with spatial = 0 (at opset 7)"""
    x = rng.standard_normal((1, 2, 4, 4)).astype(np.float32)
    w = rng.standard_normal((3, 2, 3, 3)).astype(np.float32) * 0.5
    b = rng.standard_normal(3).astype(np.float32)
    scale = rng.uniform(0.5, 1.5, 3).astype(np.float32)
    bias = rng.standard_normal(3).astype(np.float32)
    mean = rng.standard_normal(3).astype(np.float32)
    var = rng.uniform(0.5, 2.0, 3).astype(np.float32)
    nodes = [helper.make_node("Constant", [], ["half"],
                              value=numpy_helper.from_array(np.array(0.5, np.float32))),
             helper.make_node("Conv", ["x", "w", "b"], ["cv"], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["cv", "scale", "bias", "mean", "var"],
                              ["bn"], epsilon=1e-3),
             helper.make_node("Clip", ["bn"], ["cl"], min=-1.0, max=1.5),
             helper.make_node("Mul", ["cl", "half"], ["hm"]),
             helper.make_node("AveragePool", ["hm"], ["ap"], kernel_shape=[2, 2],
                              strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1),
             helper.make_node("MaxPool", ["hm"], ["mp"], kernel_shape=[2, 2],
                              strides=[2, 2]),
             helper.make_node("Slice", ["ap"], ["sl"], starts=[0, 1], ends=[1000, 3],
                              axes=[1, 3]),
             helper.make_node("Concat", ["mp", "mp"], ["cc"], axis=1),
             helper.make_node("ReduceMean", ["cc"], ["rm"], axes=[2, 3], keepdims=0),
             helper.make_node("Softmax", ["cc"], ["sm"]),
             helper.make_node("Pad", ["sl"], ["pd"], pads=[0, 0, 1, 0, 0, 0, 0, 2],
                              value=3.0),
             helper.make_node("TopK", ["rm"], ["tv", "ti"], k=2, axis=1),
             helper.make_node("Upsample", ["mp", "ups"], ["up"], mode="nearest"),
             helper.make_node("Dropout", ["rm"], ["dr", "mask"], ratio=0.25)]
    outs = [vi("sm", F, [1, 6, 2, 2]), vi("pd", F, [1, 3, 4, 4]), vi("tv", F, [1, 2]),
            vi("ti", I64, [1, 2]), vi("up", F, [1, 3, 4, 6]), vi("dr", F, [1, 6]),
            vi("mask", F, [1, 6])]
    m = make(nodes, [vi("x", F, [1, 2, 4, 4])], outs,
             [init("w", w), init("b", b), init("scale", scale), init("bias", bias),
              init("mean", mean), init("var", var),
              init("ups", np.array([1, 1, 2, 3], np.float32))], opset=9)
    save(m, "opset9_forms")
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    cv = np.zeros((1, 3, 4, 4), np.float64)
    for i in range(4):
        for j in range(4):
            cv[0, :, i, j] = np.tensordot(w, xp[0, :, i:i + 3, j:j + 3], 3)
    cv += b[None, :, None, None]
    ch = (None, slice(None), None, None)
    bn = (cv - mean[ch]) / np.sqrt(var[ch] + 1e-3) * scale[ch] + bias[ch]
    hm = np.clip(bn, -1.0, 1.5) * 0.5
    hp = np.pad(hm, ((0, 0), (0, 0), (1, 1), (1, 1)))
    ap = hp.reshape(1, 3, 3, 2, 3, 2).mean((3, 5))
    mp = hm.reshape(1, 3, 2, 2, 2, 2).max((3, 5))
    cc = np.concatenate([mp, mp], 1)
    rm = cc.mean((2, 3))
    sm = softmax(cc.reshape(1, -1), 1).reshape(cc.shape)
    pd = np.pad(ap[:, 0:3, :, 1:3], ((0, 0), (0, 0), (1, 0), (0, 2)), constant_values=3.0)
    order = np.argsort(-rm, axis=1, kind="stable")[:, :2]
    up = mp.repeat(2, axis=2).repeat(3, axis=3)
    f = np.float32
    save_safetensors(os.path.join(OUT, "opset9_forms_in.safetensors"), {"x": x})
    save_safetensors(os.path.join(OUT, "opset9_forms_out.safetensors"), {
        "sm": sm.astype(f), "pd": pd.astype(f), "tv": np.take_along_axis(rm, order, 1).astype(f),
        "ti": order.astype(np.int64), "up": up.astype(f), "dr": rm.astype(f),
        "mask": np.ones((1, 6), f)})
    # BatchNormalization-7 with spatial = 0: statistics per (C, H, W)
    xs = rng.standard_normal((2, 2, 3)).astype(np.float32)
    st = [rng.uniform(0.5, 1.5, (2, 3)).astype(np.float32) for _ in range(4)]
    m = make([helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"],
                               spatial=0, epsilon=1e-2)],
             [vi("x", F, [2, 2, 3])], [vi("y", F, [2, 2, 3])],
             [init(n, a) for n, a in zip("sbmv", st)], opset=7)
    save(m, "bn7_spatial0")
    y = (xs - st[2]) / np.sqrt(st[3] + 1e-2) * st[0] + st[1]
    save_safetensors(os.path.join(OUT, "bn7_spatial0_in.safetensors"), {"x": xs})
    save_safetensors(os.path.join(OUT, "bn7_spatial0_out.safetensors"), {"y": y.astype(f)})
    # refused: Add-6 (the broadcast attribute) at opset 6; Slice-1 given inputs
    x1 = [vi("x", F, [2])]
    save(make([helper.make_node("Add", ["x", "x"], ["y"])], x1, [vi("y", F, [2])], opset=6),
         "bad_add6")
    save(make([helper.make_node("Slice", ["x", "x"], ["y"], starts=[0], ends=[1])], x1,
              [vi("y", F, [1])], opset=9), "bad_slice1_inputs")


def widened():
    """initializers of types tensorgraph holds wider: INT8, FLOAT16, UINT64"""
    i8 = helper.make_tensor("i8", TensorProto.INT8, [3], [-128, 5, 127])
    f16 = numpy_helper.from_array(np.array([1.5, -2.0, 65504.0], np.float16), "f16")
    u64 = helper.make_tensor("u64", TensorProto.UINT64, [2], [7, 2 ** 40])
    nodes = [helper.make_node("Cast", ["i8"], ["a"], to=F),
             helper.make_node("Cast", ["f16"], ["b"], to=F),
             helper.make_node("Add", ["a", "b"], ["y"]),
             helper.make_node("Identity", ["u64"], ["u"])]
    m = make(nodes, [], [vi("y", F, [3]), vi("u", TensorProto.UINT64, [2])],
             [i8, f16, u64])
    save(m, "widened")


def unsupported():
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="ok"),
             helper.make_node("LabelEncoder", ["a"], ["b"], name="labels_1", domain="ai.onnx.ml"),
             helper.make_node("LabelEncoder", ["b"], ["c"], name="labels_2", domain="ai.onnx.ml"),
             helper.make_node("StringNormalizer", ["c"], ["d"], name="strings"),
             helper.make_node("FusedConv", ["d"], ["e"], name="fused", domain="com.microsoft"),
             helper.make_node("Pad", ["e", "p"], ["f"], name="pad_reflect", mode="reflect")]
    m = make(nodes, [vi("x", F, [1, 2])], [vi("f", F, [1, 2])],
             [init("p", np.zeros(4, np.int64))], domains=["ai.onnx.ml", "com.microsoft"])
    save(m, "unsupported")
    m = make([helper.make_node("LayerNormalization", ["x", "s"], ["y"], name="ln")],
             [vi("x", F, [2, 3]), vi("s", F, [3])], [vi("y", F, [2, 3])], opset=16)
    save(m, "too_old_for_op")


def hostile():
    save_safetensors(os.path.join(OUT, "x23.safetensors"),
                     {"x": np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5})
    x = [vi("x", F, [2, 3])]
    y = [vi("y", F, [2, 3])]
    save(make([helper.make_node("Relu", ["nowhere"], ["y"], name="dangling")], x, y),
         "bad_dangling")
    save(make([helper.make_node("Add", ["x", "b"], ["a"], name="n1"),
               helper.make_node("Relu", ["a"], ["b"], name="n2"),
               helper.make_node("Relu", ["a"], ["y"], name="n3")], x, y), "bad_cycle")
    save(make([helper.make_node("Add", ["x", "x", "x"], ["y"], name="add3")], x, y),
         "bad_arity")
    save(make([helper.make_node("Relu", ["x"], ["y"], name="r1"),
               helper.make_node("Neg", ["x"], ["y"], name="r2")], x, y), "bad_dup_output")
    save(make([helper.make_node("Relu", ["x"], ["z"], name="r")], x, y), "bad_no_output")
    n = helper.make_node("LeakyRelu", ["x"], ["y"], name="lr")
    n.attribute.append(helper.make_attribute("alpha", [1, 2]))
    save(make([n], x, y), "bad_attr_type")
    n = helper.make_node("Softmax", ["x"], ["y"], name="sm")
    n.attribute.append(helper.make_attribute("axis", 1.5))
    save(make([n], x, y), "bad_attr_float")
    save(make([helper.make_node("Softmax", ["x"], ["y"], name="sm", axis=7)], x, y),
         "bad_axis")
    save(make([helper.make_node("Relu", ["x"], ["y"])], x, y, opset=18), "bad_opset18")
    m = make([helper.make_node("Relu", ["x"], ["y"])], x, y)
    del m.opset_import[:]
    save(m, "bad_no_opset")
    save(make([helper.make_node("Reshape", ["x", "x"], ["y"], name="rs")], x, y),
         "bad_reshape_input")
    save(make([helper.make_node("MatMul", ["x", "x"], ["y"], name="mm")], x, y),
         "bad_matmul_shapes")
    save(make([helper.make_node("Relu", ["x"], ["y"])], x, [vi("y", F, [3, 2])]),
         "bad_output_shape")
    save(make([helper.make_node("Slice", ["x", "s", "e", "a", "st"], ["y"], name="sl")], x, y,
              [init("s", np.array([0], np.int64)), init("e", np.array([2], np.int64)),
               init("a", np.array([0], np.int64)), init("st", np.array([0], np.int64))]),
         "bad_slice_step")
    recurrent_hostile(x, y)


def recurrent_hostile(x, y):
    """LSTM, GRU and RNN nodes with nonsense in them (x [2, 3] is X
    [seq 2, batch 1, input 3] after a Reshape)"""
    f32 = lambda *s: np.zeros(s, np.float32)  # noqa: E731
    to3 = [helper.make_node("Reshape", ["x", "s3"], ["x3"])]
    s3 = init("s3", np.array([2, 1, 3], np.int64))

    def rec(kind, inputs, inits, name, **attrs):
        node = helper.make_node(kind, inputs, ["", "y"], name=name, **attrs)
        save(make(to3 + [node], x, y, [s3] + inits), "bad_" + name)
    save(make([helper.make_node("LSTM", ["x", "w", "r"], ["", "y"], name="lstm_rank",
                                hidden_size=3)], x, y,
              [init("w", f32(1, 12, 3)), init("r", f32(1, 12, 3))]), "bad_lstm_rank")
    rec("LSTM", ["x3", "w", "r"], [init("w", f32(1, 16, 3)), init("r", f32(1, 16, 4))],
        "lstm_hidden", hidden_size=5)
    rec("LSTM", ["x3", "w", "r", "", "len"],
        [init("w", f32(1, 12, 3)), init("r", f32(1, 12, 3)),
         init("len", np.array([7], np.int32))], "lstm_seq_lens", hidden_size=3)
    rec("GRU", ["x3", "w", "r"], [init("w", f32(1, 9, 3)), init("r", f32(1, 9, 3))],
        "gru_activation", hidden_size=3, activations=["Sigmoid", "Bogus"])
    rec("GRU", ["x3", "w", "r"], [init("w", f32(1, 9, 3)), init("r", f32(1, 9, 3))],
        "gru_layout", hidden_size=3, layout=3)
    rec("RNN", ["x3", "w", "r"], [init("w", f32(1, 3, 3)), init("r", f32(1, 3, 3))],
        "rnn_hidden_size", hidden_size=1 << 40)
    rec("RNN", ["x3", "w", "r", "b"],
        [init("w", f32(1, 3, 3)), init("r", f32(1, 3, 3)), init("b", f32(2, 6))],
        "rnn_bias", hidden_size=3)


def hostile_quant():
    """quantization nodes with wrong types, shapes and axes (each must be
    refused naming the node and what was expected)"""
    x = [vi("x", F, [2, 3])]
    y = [vi("y", F, [2, 3])]
    f32, u8, i8, i32 = np.float32, np.uint8, np.int8, np.int32

    def q(name, op, ins, inits, opset=13, outs=("y",), **attrs):
        nodes = [helper.make_node(op, ins, list(outs), name=name, **attrs)]
        save(make(nodes, x, y, [init(k, v) for k, v in inits.items()], opset=opset),
             "bad_" + name)
    q("quant_zp_type", "QuantizeLinear", ["x", "s", "z"], {"s": np.array(1, f32),
                                                          "z": np.array(0, i32)})
    q("quant_scale_type", "QuantizeLinear", ["x", "s"], {"s": np.array(1, np.int64)})
    q("quant_axis", "QuantizeLinear", ["x", "s", "z"],
      {"s": np.ones(3, f32), "z": np.zeros(3, u8)}, axis=5)
    q("quant_scale_len", "QuantizeLinear", ["x", "s", "z"],
      {"s": np.ones(4, f32), "z": np.zeros(4, u8)})
    q("quant_zp_shape", "QuantizeLinear", ["x", "s", "z"],
      {"s": np.ones(3, f32), "z": np.zeros(2, u8)})
    q("quant_v10_axis", "QuantizeLinear", ["x", "s"], {"s": np.ones(3, f32)}, opset=10)
    q("dequant_int32_zp", "DequantizeLinear", ["xi", "s", "z"],
      {"xi": np.zeros((2, 3), i32), "s": np.array(1, f32), "z": np.array(5, i32)})
    q("dynquant_int", "DynamicQuantizeLinear", ["xi"], {"xi": np.zeros((2, 3), i32)},
      opset=11, outs=("y", "ys", "yz"))
    q("dynquant_empty", "DynamicQuantizeLinear", ["e"], {"e": np.zeros((0, 3), f32)},
      opset=11, outs=("y", "ys", "yz"))
    mm = {"a": np.zeros((2, 3), u8), "b": np.zeros((3, 2), u8)}
    q("mmint_zp_type", "MatMulInteger", ["a", "b", "az"], dict(mm, az=np.array(0, i8)),
      opset=10)
    q("mmint_zp_shape", "MatMulInteger", ["a", "b", "az"], dict(mm, az=np.zeros(3, u8)),
      opset=10)
    q("mmint_shapes", "MatMulInteger", ["a", "a"], mm, opset=10)
    conv = {"cx": np.zeros((1, 2, 4, 4), u8), "xs": np.array(1, f32), "xz": np.array(0, u8),
            "w": np.zeros((2, 2, 3, 3), u8), "ws": np.ones(2, f32), "wz": np.zeros(2, u8),
            "ys": np.array(1, f32), "yz": np.array(0, u8)}
    qc = ["cx", "xs", "xz", "w", "ws", "wz", "ys", "yz"]
    q("qconv_rank", "QLinearConv", qc, dict(conv, cx=np.zeros((2, 4), u8)), opset=10)
    q("qconv_wscale", "QLinearConv", qc, dict(conv, ws=np.ones(5, f32)), opset=10)
    q("qconv_bias", "QLinearConv", qc + ["B"], dict(conv, B=np.zeros(2, f32)), opset=10)
    q("qconv_yzp", "QLinearConv", qc, dict(conv, yz=np.zeros(2, u8)), opset=10)
    q("qconv_group", "QLinearConv", qc, conv, opset=10, group=3)
    q("convint_xzp", "ConvInteger", ["cx", "w", "xz"],
      {"cx": conv["cx"], "w": conv["w"], "xz": np.zeros(2, u8)}, opset=10)


def hostile_misc():
    """BitShift, Compress, ReverseSequence, Det, MaxUnpool, GridSample,
    RoiAlign, Unique with nonsense in them (src/onnx/ops_misc_*.c)"""
    x = [vi("x", F, [2, 3])]
    y = [vi("y", F, [2, 3])]
    u8 = init("u", np.ones((2, 3), np.uint8))
    save(make([helper.make_node("BitShift", ["u", "u"], ["y"], name="bs", direction="UP")],
              x, y, [u8], opset=11), "bad_bitshift_dir")
    save(make([helper.make_node("Compress", ["x", "c"], ["y"], name="cmp", axis=1)], x, y,
              [init("c", np.array([1, 0, 0, 1], bool))], opset=11), "bad_compress_cond")
    save(make([helper.make_node("ReverseSequence", ["x", "l"], ["y"], name="rev",
                                time_axis=0, batch_axis=1)], x, y,
              [init("l", np.array([5, 1, 1], np.int64))], opset=10), "bad_reverse_lens")
    save(make([helper.make_node("Det", ["x"], ["y"], name="det")], x, y, opset=11),
         "bad_det_shape")
    x4 = init("x4", np.ones((1, 1, 2, 2), np.float32))
    save(make([helper.make_node("MaxUnpool", ["x4", "i"], ["y"], name="unpool",
                                kernel_shape=[2, 2], strides=[2, 2])], x, y,
              [x4, init("i", np.array([[[[0, 1], [2, 99]]]], np.int64))], opset=11),
         "bad_unpool_index")
    save(make([helper.make_node("MaxUnpool", ["x4", "i"], ["y"], name="unpool",
                                kernel_shape=[2, 2], strides=[1 << 40, 1 << 40])], x, y,
              [x4, init("i", np.zeros((1, 1, 2, 2), np.int64))], opset=11),
         "bad_unpool_huge")
    save(make([helper.make_node("GridSample", ["x4", "g"], ["y"], name="gs", mode="cubic")],
              x, y, [x4, init("g", np.zeros((1, 2, 2, 2), np.float32))], opset=16),
         "bad_gridsample_mode")
    rois = init("r", np.array([[0, 0, 1, 1]], np.float32))
    save(make([helper.make_node("RoiAlign", ["x4", "r", "b"], ["y"], name="roi")], x, y,
              [x4, rois, init("b", np.array([5], np.int64))], opset=16),
         "bad_roialign_batch")
    save(make([helper.make_node("RoiAlign", ["x4", "r", "b"], ["y"], name="roi")], x, y,
              [x4, init("r", np.array([[0, 0, 1e30, 1e30]], np.float32)),
               init("b", np.array([0], np.int64))], opset=16), "bad_roialign_huge")
    save(make([helper.make_node("Unique", ["x"], ["y"], name="uq", axis=4)], x, y, opset=11),
         "bad_unique_axis")
    save(make([helper.make_node("NonMaxSuppression", ["x", "s"], ["y"], name="nms")], x, y,
              [init("s", np.ones((1, 1, 2), np.float32))], opset=11), "bad_nms_boxes")
    save(make([helper.make_node("DFT", ["x"], ["y"], name="dft", axis=1)], x, y, opset=17),
         "bad_dft_axis")
    save(make([helper.make_node("HannWindow", ["n"], ["y"], name="hann")], x, y,
              [init("n", np.array(-4, np.int64))], opset=17), "bad_window_size")
    mel = [init(k, np.array(v, t)) for k, v, t in (("m", 8, np.int64), ("l", 16, np.int64),
                                                  ("r", 8192, np.int64), ("lo", 0, np.float32),
                                                  ("hi", 9000, np.float32))]
    save(make([helper.make_node("Multinomial", ["x"], ["y"], name="multi", dtype=1)], x, y,
              opset=7), "bad_multinomial_dtype")
    save(make([helper.make_node("STFT", ["s", "st", "", "fl"], ["y"], name="stft")], x, y,
              [init("s", np.zeros((1, 8, 1), np.float32)), init("st", np.array(2, np.int64)),
               init("fl", np.array(16, np.int64))], opset=17), "bad_stft_frame")
    save(make([helper.make_node("MelWeightMatrix", ["m", "l", "r", "lo", "hi"], ["y"],
                                name="mel")], x, y, mel, opset=17), "bad_mel_edges")


def hostile_rest():
    """TfIdfVectorizer (src/onnx/ops_tfidf.c) and the optimizers of
    ai.onnx.preview.training (ops_training.c) with nonsense in them"""
    x = [vi("x", F, [2, 3])]
    y = [vi("y", F, [2, 3])]
    tokens = init("tok", np.array([[1, 2, 3], [3, 2, 1]], np.int32))
    good = dict(mode="TF", min_gram_length=1, max_gram_length=2, max_skip_count=0,
                ngram_counts=[0, 2], ngram_indexes=[0, 1, 2], pool_int64s=[1, 2, 2, 3])

    def tfidf(name, src="tok", **changes):
        attrs = dict(good, **changes)
        attrs = {k: v for k, v in attrs.items() if v is not None}
        n = helper.make_node("TfIdfVectorizer", [src], ["y"], name="tfidf", **attrs)
        save(make([n], x, y, [tokens], opset=9), name)

    # a symbolic batch (graph mode keeps it unknown): onnx's
    # tf_batch_uniandbigrams_skip5 pool, and a gram length no row fits
    xs = [vi("x", helper.TensorProto.INT64, ["N", 6])]
    pool = dict(mode="TF", min_gram_length=1, max_gram_length=2, max_skip_count=5,
                ngram_counts=[0, 4], ngram_indexes=list(range(7)),
                pool_int64s=[2, 3, 5, 4, 5, 6, 7, 8, 6, 7])
    save(make([helper.make_node("TfIdfVectorizer", ["x"], ["y"], name="tfidf", **pool)], xs,
              [vi("y", F, ["N", 7])], opset=9), "tfidf_symbolic")
    pool.update(min_gram_length=7, max_gram_length=7, ngram_counts=[0, 0, 0, 0, 0, 0, 0],
                ngram_indexes=[2], pool_int64s=[1] * 7)
    save(make([helper.make_node("TfIdfVectorizer", ["x"], ["y"], name="tfidf", **pool)], xs,
              [vi("y", F, ["N", 3])], opset=9), "tfidf_symbolic_short")
    # 20000 tokens and every skip: about 2 * 10^8 bigram windows
    long = [helper.make_node("ConstantOfShape", ["shape"], ["long"],
                             value=helper.make_tensor("v", helper.TensorProto.INT64, [1], [0])),
            helper.make_node("TfIdfVectorizer", ["long"], ["y"], name="tfidf", mode="TF",
                             min_gram_length=2, max_gram_length=2, max_skip_count=20000,
                             ngram_counts=[0, 0], ngram_indexes=[0], pool_int64s=[0, 0])]
    save(make(long, x, y, [init("shape", np.array([1, 20000], np.int64))], opset=9),
         "bad_tfidf_huge")
    tfidf("bad_tfidf_mode", mode="BM25")
    tfidf("bad_tfidf_indexes", ngram_indexes=[0, 1])
    tfidf("bad_tfidf_counts", ngram_counts=[0, 3])
    tfidf("bad_tfidf_lengths", min_gram_length=3)
    tfidf("bad_tfidf_required", max_skip_count=None)
    tfidf("bad_tfidf_dtype", src="x")
    tfidf("bad_tfidf_strings", pool_int64s=None, pool_strings=["a", "b", "b", "c"])

    def train(name, op, ins, inits, outs, domains=("ai.onnx.preview.training",), **attrs):
        n = helper.make_node(op, ins, outs, name="opt", domain="ai.onnx.preview.training",
                             **attrs)
        g = helper.make_graph([n], "g", x, [vi(o, F, None) for o in outs],
                              initializer=[init(k, v) for k, v in inits.items()])
        ops = [helper.make_opsetid("", 13)] + [helper.make_opsetid(d, 1) for d in domains]
        save(helper.make_model(g, opset_imports=ops, producer_name="tg-fixtures"), name)

    f2 = np.array([1.0, 2.0], np.float32)
    rt = {"R": np.array(0.1, np.float32), "T": np.array(1, np.int64)}
    state = dict(rt, X=f2, G=f2, V=f2, H=f2)
    train("bad_adam_arity", "Adam", ["R", "T", "X", "G", "V", "H", "X"], state,
          ["X2", "V2", "H2"])
    train("bad_adam_shape", "Adam", ["R", "T", "X", "G", "V", "H"],
          dict(state, G=np.ones(3, np.float32)), ["X2", "V2", "H2"])
    train("bad_adagrad_t", "Adagrad", ["R", "T", "X", "G", "H"],
          dict(state, T=np.array(1.0, np.float32)), ["X2", "H2"])
    train("bad_adagrad_attr", "Adagrad", ["R", "T", "X", "G", "H"], state, ["X2", "H2"],
          decay_factor=[1.0, 2.0])
    train("bad_momentum_mode", "Momentum", ["R", "T", "X", "G", "V"], state, ["X2", "V2"],
          alpha=0.9, beta=1.0, norm_coefficient=0.0, mode="heavy")
    train("bad_momentum_alpha", "Momentum", ["R", "T", "X", "G", "V"], state, ["X2", "V2"],
          beta=1.0, norm_coefficient=0.0, mode="standard")
    # refused at load: the domain not imported, an op of it not imported
    train("bad_adam_no_domain", "Adam", ["R", "T", "X", "G", "V", "H"], state,
          ["X2", "V2", "H2"], domains=())
    train("bad_training_gradient", "Gradient", ["X"], state, ["dX"], xs=["X"], y="X")


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(7)
    mlp(rng)
    softmax11(rng)
    shape_chain(rng)
    opset11_forms(rng)
    opset9_forms(np.random.default_rng(9))  # its own: the others keep their data
    widened()
    unsupported()
    hostile()
    hostile_misc()
    hostile_quant()
    hostile_rest()
    print("fixtures written to", OUT)


if __name__ == "__main__":
    main()
