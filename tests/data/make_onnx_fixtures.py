#!/usr/bin/env python3
"""Writes the ONNX fixtures of tests/test_onnx_format.c (tests/data/onnx/)
and the fuzzer's seed corpus (fuzz/corpus/). The generated files are
committed: the C tests do not need Python.

    python3 tests/data/make_onnx_fixtures.py            # (re)generate
    python3 tests/data/make_onnx_fixtures.py --check D  # check D/*.onnx

--check runs onnx.checker.check_model on every model in D (written by the
C test when TG_ONNX_OUT_DIR=D is set) and, for D/rt_<name>.onnx, checks
that it equals the fixture <name>.onnx message for message."""
import os
import sys

import numpy as np

# Debian's onnx 1.12 still uses aliases that numpy 1.24 removed
for _alias, _type in (("float", float), ("int", int), ("bool", bool),
                      ("object", object)):
    if _alias not in np.__dict__:
        setattr(np, _alias, _type)

import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "onnx")
CORPUS = os.path.join(HERE, "..", "..", "fuzz", "corpus")

# values the C test checks after conversion (keep in sync with it)
F32 = np.array([[1.5, -2.25, 3.0], [0.0, 1e-3, -7.0]], dtype=np.float32)
F64 = np.array([1.0 / 3.0, -2.5, 1e300], dtype=np.float64)
I32 = np.array([[-2147483648, 2147483647], [0, -5]], dtype=np.int32)
I64 = np.array([-9223372036854775808, 9223372036854775807, 12345678901234],
               dtype=np.int64)
U8 = np.array([0, 1, 128, 255], dtype=np.uint8)
BOOL = np.array([True, False, True, True, False])


def model(graph, opset, name, domains=()):
    imports = [helper.make_opsetid("", opset)]
    imports += [helper.make_opsetid(d, 1) for d in domains]
    m = helper.make_model(graph, opset_imports=imports,
                          producer_name="tensorgraph-fixtures",
                          producer_version="1")
    m.doc_string = "fixture " + name  # outside tensorgraph's subset
    meta = m.metadata_props.add()
    meta.key, meta.value = "fixture", name
    return m


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def gemm_relu():
    w = numpy_helper.from_array(
        np.arange(12, dtype=np.float32).reshape(3, 4) / 10, "W")
    b = numpy_helper.from_array(np.array([0.5, -1, 2], np.float32), "B")
    nodes = [
        helper.make_node("Gemm", ["X", "W", "B"], ["H"], name="gemm",
                         alpha=1.0, beta=1.0, transB=1),
        helper.make_node("Relu", ["H"], ["Y"], name="relu"),
    ]
    g = helper.make_graph(nodes, "gemm_relu", [vi("X", TensorProto.FLOAT, ["N", 4])],
                          [vi("Y", TensorProto.FLOAT, ["N", 3])], [w, b],
                          value_info=[vi("H", TensorProto.FLOAT, ["N", 3])])
    return model(g, 13, "gemm_relu")


def conv():
    w = numpy_helper.from_array(
        (np.arange(18, dtype=np.float32) * 0.1 - 0.9).reshape(2, 1, 3, 3), "W")
    b = numpy_helper.from_array(np.array([0.25, -0.25], np.float32), "B")
    node = helper.make_node("Conv", ["X", "W", "B"], ["Y"], name="conv",
                            kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                            strides=[1, 1], dilations=[1, 1], group=1)
    g = helper.make_graph([node], "conv", [vi("X", TensorProto.FLOAT, [1, 1, 5, 5])],
                          [vi("Y", TensorProto.FLOAT, [1, 2, 5, 5])], [w, b])
    return model(g, 11, "conv")


def small_graph(name, value):
    c = helper.make_node("Constant", [], [name + "_out"],
                         value=numpy_helper.from_array(
                             np.array([value], np.float32)))
    return helper.make_graph([c], name, [],
                             [vi(name + "_out", TensorProto.FLOAT, [1])])


def all_attrs():
    t = numpy_helper.from_array(np.array([1, 2, 3], np.int64), "t_attr")
    node = helper.make_node(
        "Custom", ["X"], ["Y", ""], name="custom", domain="test.domain",
        f=0.5, i=-7, zero=0, s="hello", t=t, g=small_graph("g_attr", 1.0),
        floats=[1.0, -2.5], ints=[1, -2, 3000000000], strings=["a", "bc", ""],
        tensors=[numpy_helper.from_array(np.array([1.5], np.float32), "t0"),
                 numpy_helper.from_array(np.array([True, False]), "t1")],
        graphs=[small_graph("g0", 2.0), small_graph("g1", 3.0)])
    node.doc_string = "a node with one attribute of every type"
    g = helper.make_graph([node], "all_attrs", [vi("X", TensorProto.FLOAT, [2])],
                          [vi("Y", TensorProto.FLOAT, [2])],
                          value_info=[vi("Z", TensorProto.FLOAT, None)])
    return model(g, 15, "all_attrs", domains=("test.domain",))


def if_subgraph():
    inner = helper.make_node("If", ["c2"], ["inner_out"], name="inner_if",
                             then_branch=small_graph("inner_then", 10.0),
                             else_branch=small_graph("inner_else", 20.0))
    else_g = helper.make_graph([inner], "else_branch", [],
                               [vi("inner_out", TensorProto.FLOAT, [1])])
    outer = helper.make_node("If", ["c1"], ["Y"], name="outer_if",
                             then_branch=small_graph("then_branch", 1.0),
                             else_branch=else_g)
    g = helper.make_graph([outer], "if_subgraph",
                          [vi("c1", TensorProto.BOOL, []),
                           vi("c2", TensorProto.BOOL, [])],
                          [vi("Y", TensorProto.FLOAT, [1])])
    return model(g, 16, "if_subgraph")


def int64_model():
    shape = numpy_helper.from_array(np.array([3, 2], np.int64), "shape")
    nodes = [
        helper.make_node("Reshape", ["X", "shape"], ["R"], name="reshape"),
        helper.make_node("Constant", [], ["K"], name="const",
                         value=numpy_helper.from_array(
                             np.array([[1, 2]], np.int64), "K")),
        helper.make_node("Add", ["R", "K"], ["Y"], name="add"),
    ]
    g = helper.make_graph(nodes, "int64", [vi("X", TensorProto.INT64, [2, 3])],
                          [vi("Y", TensorProto.INT64, [3, 2])], [shape])
    return model(g, 14, "int64")


def dtype_model(name, raw, opset):
    """one initializer per supported dtype (plus a scalar and an empty
    tensor), each passed through Identity"""
    def tensor(tname, elem, arr):
        if raw:
            return numpy_helper.from_array(arr, tname)
        return helper.make_tensor(tname, elem, arr.shape, arr.flatten().tolist())
    inits = [
        tensor("f32", TensorProto.FLOAT, F32),
        tensor("f64", TensorProto.DOUBLE, F64),
        tensor("i32", TensorProto.INT32, I32),
        tensor("i64", TensorProto.INT64, I64),
        tensor("u8", TensorProto.UINT8, U8),
        tensor("bool", TensorProto.BOOL, BOOL),
        tensor("scalar", TensorProto.FLOAT, np.array(42.5, np.float32)),
        tensor("empty", TensorProto.FLOAT, np.zeros((0, 3), np.float32)),
    ]
    nodes = [helper.make_node("Identity", [t.name], [t.name + "_out"])
             for t in inits]
    outs = [vi(t.name + "_out", t.data_type, list(t.dims)) for t in inits]
    g = helper.make_graph(nodes, name, [], outs, inits)
    return model(g, opset, name)


def unsupported():
    f16 = numpy_helper.from_array(np.array([1, 2], np.float16), "half")
    strings = helper.make_tensor("words", TensorProto.STRING, [2], [b"a", b"b"])
    nodes = [helper.make_node("Identity", ["half"], ["half_out"]),
             helper.make_node("Identity", ["words"], ["words_out"])]
    g = helper.make_graph(nodes, "unsupported", [],
                          [vi("half_out", TensorProto.FLOAT16, [2]),
                           vi("words_out", TensorProto.STRING, [2])],
                          [f16, strings])
    return model(g, 12, "unsupported")


FIXTURES = {
    "gemm_relu": gemm_relu,
    "conv": conv,
    "all_attrs": all_attrs,
    "if_subgraph": if_subgraph,
    "int64": int64_model,
    "dtypes_raw": lambda: dtype_model("dtypes_raw", True, 17),
    "dtypes_typed": lambda: dtype_model("dtypes_typed", False, 17),
    "unsupported": unsupported,
}


def varint(n):
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number, wire, payload):
    if wire == 2:
        payload = varint(len(payload)) + payload
    return varint(number << 3 | wire) + payload


def nested_subgraphs(k):
    g = b""
    for _ in range(k):  # graph.node.attribute.g, k times
        g = field(1, 2, field(5, 2, field(6, 2, g)))
    return field(1, 0, varint(8)) + field(7, 2, g)


# hand-made hostile inputs, replayed by the C test with the fuzzer's crash
# inputs (tests/data/onnx_crashes/) and seeding the fuzzer
HOSTILE = {
    "hand_nested_34": nested_subgraphs(34),  # one past the depth limit
    "hand_nested_33": nested_subgraphs(33),  # at the limit
    "hand_groups": field(7, 2, field(20, 3, field(1, 0, b"\x01") + b"\xa3\x01" +
                                     b"\xa4\x01") + b"\xa4\x01"),
    "hand_overlong_varint": b"\x08" + b"\xff" * 10 + b"\x01",
    "hand_raw_mismatch": field(7, 2, field(5, 2, field(1, 0, b"\x03") +
                                         field(2, 0, b"\x01") +
                                         field(9, 2, b"\0" * 11))),
    "hand_huge_dims": field(7, 2, field(5, 2, b"".join(
        field(1, 0, varint(1 << 40)) for _ in range(3)) + field(2, 0, b"\x01") +
        field(4, 2, b"\0" * 8))),
    "hand_negative_dim": field(7, 2, field(5, 2, field(1, 0, varint(2**64 - 3)) +
                                         field(2, 0, b"\x07") + field(7, 2, b"\x01"))),
    "hand_length_overflow": field(7, 2, b"")[:1] + varint(2**63) + b"\x0a",
}


def generate():
    os.makedirs(OUT, exist_ok=True)
    os.makedirs(CORPUS, exist_ok=True)
    for name, make in FIXTURES.items():
        m = make()
        onnx.checker.check_model(m, full_check=True)
        data = m.SerializeToString()
        for d in (OUT, CORPUS):
            with open(os.path.join(d, name + ".onnx"), "wb") as f:
                f.write(data)
        print("%-14s %5d bytes" % (name, len(data)))
    crashes = os.path.join(HERE, "onnx_crashes")
    for name, data in HOSTILE.items():
        for d in (crashes, CORPUS):
            with open(os.path.join(d, name + ".bin"), "wb") as f:
                f.write(data)


def check(directory):
    bad = 0
    for fn in sorted(os.listdir(directory)):
        if not fn.endswith(".onnx"):
            continue
        path = os.path.join(directory, fn)
        m = onnx.load(path)
        try:
            onnx.checker.check_model(m)
            status = "checker ok"
        except onnx.checker.ValidationError as e:
            status = "checker FAILED: %s" % str(e).splitlines()[0]
            bad += 1
        if fn.startswith("rt_"):
            orig = onnx.load(os.path.join(OUT, fn[3:]))
            if orig == m:
                status += ", equals the fixture"
            else:
                status += ", DIFFERS from the fixture"
                bad += 1
        print("%-24s %s" % (fn, status))
    print("%d files with problems" % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        sys.exit(check(sys.argv[2]))
    generate()
