"""ONNX LRN and ScatterND imports: values against numpy references of the
ONNX definitions (the onnx node cases run in tests/onnx_conformance), and
every error the importers give."""
import numpy as np
import pytest

import tensorgraph as tg

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402


def _save(tmp_path, node, inputs, opset):
    g = helper.make_graph([node], "g", inputs,
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    path = str(tmp_path / "m.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]), path)
    return path


def _lrn_ref(x, size, alpha, beta, bias):
    c = x.shape[1]
    sq = np.zeros_like(x)
    for i in range(c):
        lo, hi = max(0, i - (size - 1) // 2), min(c, i + size // 2 + 1)
        sq[:, i] = (x[:, lo:hi] ** 2).sum(axis=1)
    return x / (bias + alpha / size * sq) ** beta


@pytest.mark.parametrize('size', [1, 2, 3, 4])
def test_lrn_values(tmp_path, size):
    x = np.random.RandomState(0).randn(2, 5, 3, 2).astype('float32')
    node = helper.make_node("LRN", ["x"], ["y"], size=size, alpha=0.01, beta=0.6, bias=2.0)
    path = _save(tmp_path, node, [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                 list(x.shape))], 13)
    got = tg.onnx.load(path)(tg.tensor(x)).numpy()
    np.testing.assert_allclose(got, _lrn_ref(x, size, 0.01, 0.6, 2.0), rtol=1e-5, atol=1e-6)


def test_lrn_errors(tmp_path):
    vi = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5, 3])]
    with pytest.raises(OSError, match="'size'"):  # the model is built at its first call
        tg.onnx.load(_save(tmp_path, helper.make_node("LRN", ["x"], ["y"]), vi, 13))(
            tg.ones(2, 5, 3))
    vi2 = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5])]
    with pytest.raises(Exception, match="rank 2"):
        tg.onnx.load(_save(tmp_path, helper.make_node("LRN", ["x"], ["y"], size=3), vi2, 13))(
            tg.ones(2, 5))


def _scatter_nd(tmp_path, data, idx, upd, reduction=None):
    kw = {"reduction": reduction} if reduction else {}
    node = helper.make_node("ScatterND", ["d", "i", "u"], ["y"], **kw)
    vi = [helper.make_tensor_value_info("d", TensorProto.FLOAT, list(data.shape)),
          helper.make_tensor_value_info("i", TensorProto.INT64, list(idx.shape)),
          helper.make_tensor_value_info("u", TensorProto.FLOAT, list(upd.shape))]
    path = _save(tmp_path, node, vi, 16 if reduction else 13)
    return tg.onnx.load(path)(tg.tensor(data), tg.tensor(idx), tg.tensor(upd)).numpy()


def test_scatter_nd_values(tmp_path):
    data = np.arange(24, dtype='float32').reshape(2, 3, 4)
    idx = np.array([[1, 2], [0, -1]], dtype='int64')  # a negative index counts from the end
    upd = -np.arange(8, dtype='float32').reshape(2, 4)
    want = data.copy()
    want[1, 2] = upd[0]
    want[0, 2] = upd[1]
    np.testing.assert_array_equal(_scatter_nd(tmp_path, data, idx, upd), want)
    # whole slices (k = 1) added, a repeated index adding twice
    idx1, upd1 = np.array([[0], [0]], dtype='int64'), np.ones((2, 3, 4), dtype='float32')
    want = data.copy()
    want[0] += 2
    np.testing.assert_array_equal(_scatter_nd(tmp_path, data, idx1, upd1, "add"), want)
    # repeated tuples all multiply, signs included
    idx2 = np.array([[0, 0, 1], [0, 0, 1], [1, 2, 3]], dtype='int64')
    upd2 = np.array([-2.0, 3.0, 0.5], dtype='float32')
    want = data.copy()
    want[0, 0, 1] *= -6
    want[1, 2, 3] *= 0.5
    np.testing.assert_allclose(_scatter_nd(tmp_path, data, idx2, upd2, "mul"), want, rtol=1e-6)


def test_scatter_nd_errors(tmp_path):
    data = np.zeros((2, 3), dtype='float32')
    with pytest.raises(Exception, match="updates should have the shape"):
        _scatter_nd(tmp_path, data, np.zeros((2, 1), dtype='int64'), np.zeros((2, 2), 'float32'))
    with pytest.raises(Exception, match="indices should end"):
        _scatter_nd(tmp_path, data, np.zeros((2, 3), dtype='int64'), np.zeros(2, 'float32'))
    with pytest.raises(Exception, match="reduction 'max'"):
        _scatter_nd(tmp_path, data, np.zeros((1, 2), dtype='int64'), np.zeros(1, 'float32'),
                    "max")


def _scatter_elements(tmp_path, data, idx, upd, axis, reduction, elem=TensorProto.FLOAT):
    node = helper.make_node("ScatterElements", ["d", "i", "u"], ["y"], axis=axis,
                            reduction=reduction)
    vi = [helper.make_tensor_value_info("d", elem, list(data.shape)),
          helper.make_tensor_value_info("i", TensorProto.INT64, list(idx.shape)),
          helper.make_tensor_value_info("u", elem, list(upd.shape))]
    g = helper.make_graph([node], "g", vi, [helper.make_tensor_value_info("y", elem, None)])
    path = str(tmp_path / "se.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 16)]), path)
    return tg.onnx.load(path)(tg.tensor(data), tg.tensor(idx), tg.tensor(upd)).numpy()


@pytest.mark.parametrize("dtype,elem", [("float32", TensorProto.FLOAT),
                                        ("int64", TensorProto.INT64)])
def test_scatter_elements_mul(tmp_path, dtype, elem):
    """reduction mul: every update landing on an element multiplies it
    (repeated indices too, negatives counted from the end); integers
    exactly, though the product is taken through logarithms"""
    data = np.arange(1, 13).reshape(3, 4).astype(dtype)
    idx = np.array([[0, -1, 1], [3, 3, 0], [2, 2, 2]], dtype="int64")
    upd = np.array([[3, -5, 7], [-1, 2, 11], [13, 3, 0]]).astype(dtype)
    want = data.copy()
    for r in range(3):
        for j in range(3):
            want[r, idx[r, j] % 4] *= upd[r, j]
    got = _scatter_elements(tmp_path, data, idx, upd, 1, "mul", elem)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    # the same along axis 0 for ScatterND's integer rows
    big = np.array([[3, 5], [7, 11]], dtype="int64")
    node_want = big.copy()
    node_want[1] *= np.array([7 * 13, 3 * 3])
    got = _scatter_elements(tmp_path, big, np.array([[1, 1], [1, 1]], dtype="int64"),
                            np.array([[7, 3], [13, 3]], dtype="int64"), 0, "mul",
                            TensorProto.INT64)
    np.testing.assert_array_equal(got, node_want)
