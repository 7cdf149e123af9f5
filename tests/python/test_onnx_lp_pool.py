"""ONNX's Lp ops against numpy from their definitions: LpPool (window sums
of |x|^p to the power 1/p, padding adding 0), GlobalLpPool and
LpNormalization; and ceil_mode pooling,
whose last window is dropped when it would start past the input and its
left padding (onnx's later spec text, onnxruntime and PyTorch). Skipped
without onnx."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import onnx_model_file

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402


def run(tmp_path, node, x, opset):
    path = onnx_model_file(tmp_path, [node],
                           [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                           [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                           opset=opset)
    return tg.onnx.load(path)(tg.tensor(x)).numpy()


def lp_pool_reference(x, k, s, pads, p):
    """2-D LpPool from its definition, pads as ONNX's [h0, w0, h1, w1]"""
    xp = np.pad(np.abs(x.astype(np.float64)) ** p,
                ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (xp.shape[2] - k[0]) // s[0] + 1
    ow = (xp.shape[3] - k[1]) // s[1] + 1
    y = np.zeros(x.shape[:2] + (oh, ow))
    for i in range(oh):
        for j in range(ow):
            window = xp[:, :, i * s[0]:i * s[0] + k[0], j * s[1]:j * s[1] + k[1]]
            y[:, :, i, j] = window.sum(axis=(2, 3))
    return y ** (1.0 / p)


@pytest.mark.parametrize("k,s,pads,p,opset", [
    ((2, 2), (2, 2), (0, 0, 0, 0), 2, 11),
    ((3, 2), (1, 2), (1, 0, 1, 1), 3, 11),
    ((2, 3), (2, 1), (0, 1, 1, 0), 1, 7),
    ((3, 3), (2, 2), (1, 1, 1, 1), 2, 17)])
def test_lp_pool(tmp_path, k, s, pads, p, opset):
    x = np.random.RandomState(0).randn(2, 3, 7, 6).astype(np.float32)
    node = helper.make_node("LpPool", ["x"], ["y"], kernel_shape=k, strides=s, pads=pads, p=p)
    np.testing.assert_allclose(run(tmp_path, node, x, opset),
                               lp_pool_reference(x, k, s, pads, float(p)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("p,opset", [(2, 7), (3, 13), (1, 17)])
def test_global_lp_pool(tmp_path, p, opset):
    x = np.random.RandomState(1).randn(2, 3, 4, 5).astype(np.float32)
    node = helper.make_node("GlobalLpPool", ["x"], ["y"], p=p)
    want = (np.abs(x.astype(np.float64)) ** p).sum(axis=(2, 3), keepdims=True) ** (1.0 / p)
    np.testing.assert_allclose(run(tmp_path, node, x, opset), want, rtol=1e-5)


@pytest.mark.parametrize("axis,p", [(-1, 2), (1, 1), (0, 2)])
def test_lp_normalization(tmp_path, axis, p):
    x = np.random.RandomState(2).randn(3, 4, 5).astype(np.float32)
    node = helper.make_node("LpNormalization", ["x"], ["y"], axis=axis, p=p)
    norm = np.linalg.norm(x.astype(np.float64), ord=p, axis=axis, keepdims=True)
    np.testing.assert_allclose(run(tmp_path, node, x, 13), x / norm, rtol=1e-5)


def test_lp_errors(tmp_path):
    x = np.ones((1, 1, 4, 4), np.float32)
    with pytest.raises(Exception, match="p must be 1 or 2"):
        run(tmp_path, helper.make_node("LpNormalization", ["x"], ["y"], p=3), x, 13)
    with pytest.raises(Exception, match="p must be positive"):
        run(tmp_path, helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[2, 2], p=0), x, 11)


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
def test_ceil_mode_drops_a_window_past_the_input(tmp_path, op):
    """onnx's maxpool_2d_ceil_output_size_reduce_by_one: a 1x1 window of
    stride 2 over 2x2 with ceil_mode has one output, not a second window
    that would start at the edge"""
    x = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)
    node = helper.make_node(op, ["x"], ["y"], kernel_shape=[1, 1], strides=[2, 2], ceil_mode=1)
    np.testing.assert_array_equal(run(tmp_path, node, x, 12 if op == "MaxPool" else 11),
                                  [[[[0.0]]]])
    # a window that starts inside the input still counts
    x = np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3)
    node = helper.make_node(op, ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)
    assert run(tmp_path, node, x, 12 if op == "MaxPool" else 11).shape == (1, 1, 2, 2)
