"""ConstantFill, ONNX's experimental op that torch.onnx writes below opset 9
for the zero initial states of LSTM, GRU and RNN: the shape from the
input's values (input_as_shape), from the input's shape, or from the
shape attribute, extra_shape appended, value and dtype; eagerly and inside
tg.function, and the errors naming the node. (The exported LSTM/GRU at
opsets 7 and 8 run in tests/onnx_conformance/test_arch_opsets.py.) Hand-made
models; skipped without onnx."""
import os

import numpy as np
import pytest

import tensorgraph as tg

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402


def model(tmp_path, inputs, x_info, **attrs):
    node = helper.make_node("ConstantFill", inputs, ["y"], name="fill", **attrs)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, x_info)
    dt = attrs.get("dtype", TensorProto.FLOAT)
    out = helper.make_tensor_value_info("y", dt if dt != TensorProto.COMPLEX64 else
                                        TensorProto.FLOAT, None)
    inits = [helper.make_tensor("s", TensorProto.INT64, [3], [2, 1, 3])]
    g = helper.make_graph([node], "g", [x], [out], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 8)])
    path = os.fspath(tmp_path / "fill.onnx")
    onnx.save(m, path)
    return path


CASES = [
    # inputs, attributes, the expected shape, dtype and value
    (["s"], dict(input_as_shape=1, value=1.5), (2, 1, 3), np.float32, 1.5),
    (["x"], dict(value=-2.0, extra_shape=[2]), (4, 5, 2), np.float32, -2.0),
    ([], dict(shape=[3, 2], dtype=TensorProto.INT64, value=7.0), (3, 2), np.int64, 7),
    (["s"], dict(input_as_shape=1), (2, 1, 3), np.float32, 0.0),
    ([], dict(dtype=TensorProto.BOOL, value=1.0, extra_shape=[4]), (4,), np.bool_, True),
]


@pytest.mark.parametrize("inputs,attrs,shape,dtype,value", CASES)
def test_constant_fill(tmp_path, inputs, attrs, shape, dtype, value):
    m = tg.onnx.load(model(tmp_path, inputs, [4, 5], **attrs))
    x = tg.tensor(np.ones((4, 5), np.float32))
    with tg.no_grad():
        eager = m(x).numpy()
        graph = tg.function(lambda a: m(a))(x).numpy()
    for y in (eager, graph):
        assert y.shape == shape and y.dtype == dtype
        np.testing.assert_array_equal(y, np.full(shape, value, dtype))


@pytest.mark.parametrize("inputs,attrs,exc,msg", [
    (["x"], dict(input_as_shape=1), OSError, r"with input_as_shape the input should be 1-D, is 2-D"),
    (["s"], dict(shape=[2]), OSError, r"an input and a shape attribute"),
    ([], dict(input_as_shape=1), OSError, r"input_as_shape is set but there is no input"),
    ([], dict(shape=[2, -1]), OSError, r"dim 1 of the shape is negative \(-1\)"),
    ([], dict(shape=[2], dtype=TensorProto.COMPLEX64), NotImplementedError,
     r"dtype COMPLEX64 \(14\) is not supported"),
])
def test_constant_fill_errors(tmp_path, inputs, attrs, exc, msg):
    m = tg.onnx.load(model(tmp_path, inputs, [4, 5], **attrs))
    with pytest.raises(exc, match=r"ONNX node 'fill' \(ConstantFill\): " + msg):
        m(tg.tensor(np.ones((4, 5), np.float32)))
