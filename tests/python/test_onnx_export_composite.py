"""ONNX export of the ops written as several ONNX nodes
(src/onnx/export_composite.c): GELU in its erf and tanh forms (ONNX's Gelu
is opset 20, past the export opset), var and std over any axes with any
correction and keepdim, and the unary chains. Each model passes onnx's
checker and, imported back, gives eager mode's values. Skipped without
onnx."""
import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.nn.functional as F

onnx = pytest.importorskip("onnx")


class Fn(tg.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


def round_trip(tmp_path, fn, x):
    path = str(tmp_path / "m.onnx")
    tg.onnx.export(Fn(fn), (tg.tensor(x),), path)
    model = onnx.load(path)
    onnx.checker.check_model(model)
    got = tg.onnx.load(path)(tg.tensor(x)).numpy()
    with tg.no_grad():
        want = fn(tg.tensor(x)).numpy()
    return model, got, want


@pytest.mark.parametrize("approximate,ops", [("none", {"Erf"}), ("tanh", {"Tanh"})])
def test_gelu(tmp_path, approximate, ops):
    x = np.random.RandomState(0).randn(3, 7).astype(np.float32) * 3
    model, got, want = round_trip(tmp_path, lambda t: F.gelu(t, approximate=approximate), x)
    assert ops <= {n.op_type for n in model.graph.node}
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize("dim,correction,keepdim", [
    (None, 1, False), (1, 0, True), ((0, 2), 1, False), (-1, 2, True), (0, 3, False)])
def test_var_std(tmp_path, name, dim, correction, keepdim):
    """correction up to the count and past it (PyTorch's division by
    max(0, N - correction): infinities and NaN)"""
    x = np.random.RandomState(1).randn(3, 4, 5)
    kw = dict(correction=correction, keepdim=keepdim)
    if dim is not None:
        kw["dim"] = dim
    model, got, want = round_trip(tmp_path, lambda t: getattr(tg, name)(t, **kw), x)
    assert "ReduceSumSquare" in {n.op_type for n in model.graph.node}
    np.testing.assert_allclose(got, want, rtol=1e-10, equal_nan=True)


@pytest.mark.parametrize("fn", [tg.rsqrt, F.silu, F.mish, F.logsigmoid, tg.square, tg.log1p,
                                tg.expm1, tg.log2, tg.log10])
def test_unary_chains(tmp_path, fn):
    x = np.random.RandomState(2).rand(2, 5) + 0.5
    _, got, want = round_trip(tmp_path, fn, x)
    np.testing.assert_allclose(got, want, rtol=1e-9)
