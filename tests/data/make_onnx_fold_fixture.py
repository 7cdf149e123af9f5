#!/usr/bin/env python3
"""Writes tests/data/onnx_fold/conv_bn.onnx for tests/test_onnx_fold.c:
x [2, 3, 9, 9] -> Conv c1 (bias) -> BatchNormalization -> Relu -> depthwise
Conv dw (no bias) -> BatchNormalization-9 -> Conv c3 (bias), whose output a
BatchNormalization and the final Add both read (not foldable) -> Add -> y.
Random weights and statistics (seed 0). Committed: the C test needs no Python.

    python3 tests/data/make_onnx_fold_fixture.py"""
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "onnx_fold")
rng = np.random.default_rng(0)
inits, nodes = [], []


def init(name, shape, lo, hi):
    inits.append(numpy_helper.from_array(rng.uniform(lo, hi, shape).astype(np.float32), name))
    return name


def conv_bn(name, x, o, cin, group, bias, bn_opset_attrs):
    ins = [x, init(name + "_w", (o, cin // group, 3, 3), -0.5, 0.5)]
    if bias:
        ins.append(init(name + "_b", (o,), -0.5, 0.5))
    nodes.append(helper.make_node("Conv", ins, [name + "_c"], pads=[1, 1, 1, 1], group=group))
    stats = [init(name + "_" + p, (o,), lo, hi) for p, lo, hi in
             (("scale", 0.5, 1.5), ("beta", -0.2, 0.2), ("mean", -0.3, 0.3), ("var", 0.4, 1.5))]
    nodes.append(helper.make_node("BatchNormalization", [name + "_c"] + stats, [name + "_y"],
                                  epsilon=1e-3, **bn_opset_attrs))
    return name + "_y"


def main():
    os.makedirs(OUT, exist_ok=True)
    h = conv_bn("c1", "x", 8, 3, 1, True, {})
    nodes.append(helper.make_node("Relu", [h], ["r1"]))
    h = conv_bn("dw", "r1", 8, 8, 8, False, {})
    h = conv_bn("c3", h, 4, 8, 1, True, {})
    nodes.append(helper.make_node("Add", [h, "c3_c"], ["y"]))
    g = helper.make_graph(nodes, "conv_bn",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 9, 9])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4, 9, 9])],
                          inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    save(model, os.path.join(OUT, "conv_bn.onnx"))


if __name__ == "__main__":
    main()
