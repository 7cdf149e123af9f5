#!/usr/bin/env python3
"""Writes the control-flow ONNX models of tests/test_onnx_control.c into
tests/data/onnx_import/ (If, Loop and Scan with outer-scope reads and
nesting, float64, with inputs and the outputs numpy computes by running
the same control flow in Python), and malformed ones. The files are
committed: the C test does not need Python.

    python3 tests/data/make_onnx_control_fixtures.py"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_onnx_import_fixtures import OUT, save_safetensors  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

D = TensorProto.DOUBLE
I64 = TensorProto.INT64
B = TensorProto.BOOL


def vi(name, t, shape):
    return helper.make_tensor_value_info(name, t, shape)


def model(name, nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="tensorgraph-tests")
    with open(os.path.join(OUT, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())


def fixture(name, nodes, inputs, outputs, inits, feeds, want, opset=13):
    model(name, nodes, inputs, outputs, inits, opset)
    save_safetensors(os.path.join(OUT, name + "_in.safetensors"), feeds)
    save_safetensors(os.path.join(OUT, name + "_out.safetensors"), want)


W = np.array([[0.5, -0.3], [0.2, 0.8]])


def cf_if():
    """y = If(c): x * w + z  else: sin(x) - z, with z = x + 1 and w read from
    the enclosing graph (an initializer and a node output)"""
    then = helper.make_graph(
        [helper.make_node("Mul", ["x", "w"], ["xw"]), helper.make_node("Add", ["xw", "z"], ["t"])],
        "then", [], [vi("t", D, [3])])
    other = helper.make_graph(
        [helper.make_node("Sin", ["x"], ["sx"]), helper.make_node("Sub", ["sx", "z"], ["e"])],
        "else", [], [vi("e", D, [3])])
    nodes = [helper.make_node("Add", ["x", "one"], ["z"]),
             helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)]
    inits = [numpy_helper.from_array(np.array([2.0, -1.0, 0.5]), "w"),
             numpy_helper.from_array(np.array(1.0), "one")]
    x = np.array([0.3, -1.2, 0.8])
    for c, tag in ((True, "t"), (False, "f")):
        z = x + 1
        y = x * np.array([2.0, -1.0, 0.5]) + z if c else np.sin(x) - z
        fixture("cf_if_" + tag, nodes, [vi("x", D, [3]), vi("c", B, [])], [vi("y", D, [3])],
                inits, {"x": x, "c": np.array(c)}, {"y": y})


def cf_loop():
    """v = x; for i < n while sum(v) < 50: v = If(i even): tanh(v @ W) + x
    else: v * 1.5 (x and W from outside: nested outer-scope reads)"""
    even = helper.make_graph(
        [helper.make_node("MatMul", ["v_in", "W"], ["vw"]), helper.make_node("Tanh", ["vw"], ["th"]),
         helper.make_node("Add", ["th", "x"], ["ev"])], "even", [], [vi("ev", D, [2])])
    odd = helper.make_graph(
        [helper.make_node("Mul", ["v_in", "k"], ["od"])], "odd", [], [vi("od", D, [2])])
    body = helper.make_graph(
        [helper.make_node("Mod", ["i", "two"], ["r"]),
         helper.make_node("Equal", ["r", "zero"], ["is_even"]),
         helper.make_node("If", ["is_even"], ["v_out"], then_branch=even, else_branch=odd),
         helper.make_node("ReduceSum", ["v_out"], ["s"], keepdims=0),
         helper.make_node("Less", ["s", "limit"], ["go"])],
        "body", [vi("i", I64, []), vi("c_in", B, []), vi("v_in", D, [2])],
        [vi("go", B, []), vi("v_out", D, [2])])
    nodes = [helper.make_node("Loop", ["n", "", "x"], ["v"], body=body)]
    inits = [numpy_helper.from_array(W, "W"), numpy_helper.from_array(np.array(1.5), "k"),
             numpy_helper.from_array(np.array(2, np.int64), "two"),
             numpy_helper.from_array(np.array(0, np.int64), "zero"),
             numpy_helper.from_array(np.array(50.0), "limit")]
    x = np.array([0.7, 0.4])
    for n, tag in ((5, "5"), (40, "40")):
        v = x.copy()
        for i in range(n):
            v = np.tanh(v @ W) + x if i % 2 == 0 else v * 1.5
            if not v.sum() < 50:
                break
        fixture("cf_loop_" + tag, nodes, [vi("n", I64, []), vi("x", D, [2])],
                [vi("v", D, [2])], inits, {"n": np.array(n, np.int64), "x": x}, {"v": v})


def cf_scan():
    """an RNN cell over the rows of xs: h = tanh(h @ W + x_t), every h
    stacked; once forward, once reversed with the outputs on axis 1"""
    body = helper.make_graph(
        [helper.make_node("MatMul", ["h", "W"], ["hw"]), helper.make_node("Add", ["hw", "xt"], ["a"]),
         helper.make_node("Tanh", ["a"], ["h2"]), helper.make_node("Identity", ["h2"], ["y"])],
        "cell", [vi("h", D, [2]), vi("xt", D, [2])], [vi("h2", D, [2]), vi("y", D, [2])])
    xs = np.array([[0.1, 0.2], [-0.3, 0.5], [0.9, -0.4], [0.0, 0.3]])
    h0 = np.array([0.2, -0.1])
    for rev, tag in ((0, "fwd"), (1, "rev")):
        nodes = [helper.make_node("Scan", ["h0", "xs"], ["hT", "ys"], body=body, num_scan_inputs=1,
                                  scan_input_directions=[rev], scan_output_directions=[rev],
                                  scan_output_axes=[rev])]
        h, ys = h0.copy(), [None] * 4
        for t in range(4):
            row = 3 - t if rev else t
            h = np.tanh(h @ W + xs[row])
            ys[row] = h
        ys = np.stack(ys, axis=rev)
        fixture("cf_scan_" + tag, nodes, [vi("h0", D, [2]), vi("xs", D, [4, 2])],
                [vi("hT", D, [2]), vi("ys", D, [4, 2] if not rev else [2, 4])],
                [numpy_helper.from_array(W, "W")], {"h0": h0, "xs": xs}, {"hT": h, "ys": ys},
                opset=11)


def cf_loop_scan():
    """a Loop with a scan output (the running sums): eager mode only"""
    body = helper.make_graph(
        [helper.make_node("Add", ["acc", "x"], ["acc2"]), helper.make_node("Identity", ["c"], ["c2"]),
         helper.make_node("Identity", ["acc2"], ["each"])],
        "body", [vi("i", I64, []), vi("c", B, []), vi("acc", D, [2])],
        [vi("c2", B, []), vi("acc2", D, [2]), vi("each", D, [2])])
    nodes = [helper.make_node("Loop", ["n", "t", "x"], ["acc_out", "sums"], body=body)]
    x = np.array([1.0, -2.0])
    acc, sums = x.copy(), []
    for _ in range(3):
        acc = acc + x
        sums.append(acc)
    fixture("cf_loop_scan", nodes, [vi("n", I64, []), vi("t", B, []), vi("x", D, [2])],
            [vi("acc_out", D, [2]), vi("sums", D, [3, 2])], [],
            {"n": np.array(3, np.int64), "t": np.array(True), "x": x},
            {"acc_out": acc, "sums": np.stack(sums)})


def malformed():
    one = helper.make_graph([helper.make_node("Identity", ["x"], ["a"])], "one", [],
                            [vi("a", D, [3])])
    two = helper.make_graph([helper.make_node("Identity", ["x"], ["b"]),
                             helper.make_node("Neg", ["x"], ["b2"])], "two", [],
                            [vi("b", D, [3]), vi("b2", D, [3])])
    io = [vi("x", D, [3]), vi("c", B, [])]
    model("cf_bad_branches", [helper.make_node("If", ["c"], ["y"], then_branch=one,
                                               else_branch=two)], io, [vi("y", D, [3])])
    model("cf_no_else", [helper.make_node("If", ["c"], ["y"], then_branch=one)], io,
          [vi("y", D, [3])])
    ghost = helper.make_graph([helper.make_node("Neg", ["nowhere"], ["g"])], "ghost", [],
                              [vi("g", D, [3])])
    model("cf_unknown_outer", [helper.make_node("If", ["c"], ["y"], then_branch=ghost,
                                                else_branch=one)], io, [vi("y", D, [3])])
    body = helper.make_graph([helper.make_node("Identity", ["v"], ["v2"])], "body",
                             [vi("v", D, [3])], [vi("v2", D, [3])])
    model("cf_bad_loop_body", [helper.make_node("Loop", ["", "", "x"], ["y"], body=body)],
          [vi("x", D, [3])], [vi("y", D, [3])])


def cf_random():
    """a Loop whose body draws U(0, 1) [3] per iteration (scan output
    [3, 3]) and a RandomNormal [4] outside it: the draws of the build's
    generator (tg_onnx_opts.generator), body included"""
    F = TensorProto.FLOAT
    body = helper.make_graph(
        [helper.make_node("RandomUniform", [], ["u"], shape=[3]),
         helper.make_node("Identity", ["c"], ["c2"])], "draw",
        [vi("i", I64, []), vi("c", B, [])], [vi("c2", B, []), vi("u", F, [3])])
    nodes = [helper.make_node("Loop", ["n", "t"], ["rows"], body=body),
             helper.make_node("RandomNormal", [], ["z"], shape=[4])]
    model("cf_random", nodes, [vi("n", I64, [])], [vi("rows", F, [3, 3]), vi("z", F, [4])],
          [helper.make_tensor("t", B, [], [True])])


if __name__ == "__main__":
    cf_if()
    cf_loop()
    cf_scan()
    cf_loop_scan()
    malformed()
    cf_random()
    print("written to", OUT)
