"""ONNX's misc ops (src/onnx/ops_misc_*.c) against PyTorch: modules
exported by torch.onnx (GridSample, RoiAlign, Det, NonZero, Unique,
BitShift) and hand-made models where torch writes no such node (MaxPool's
indices into MaxUnpool, Compress, ReverseSequence): outputs, and the
gradients of the differentiable ones, equal to torch's. The ONNX node
cases of these ops run in tests/onnx_conformance. Skipped without torch
or onnx (torchvision for roi_align)."""
import os

import numpy as np
import pytest

import tensorgraph as tg

from conftest import SANITIZED, onnx_model_file

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

pytestmark = pytest.mark.skipif(SANITIZED, reason="torch.onnx.export aborts under the "
                                "ASan preload (C++ exceptions inside torch)")
F = torch.nn.functional


class Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return self.fn(*xs)


def export(tmp_path, fn, args, opset, name="m"):
    path = os.fspath(tmp_path / f"{name}.onnx")
    names = [f"in{i}" for i in range(len(args))]
    torch.onnx.export(Fn(fn), tuple(args), path, opset_version=opset, input_names=names)
    return path


def op_types(path):
    return {n.op_type for n in onnx.load(path).graph.node}


def grads_match(path, fn, args, which, rtol=1e-4, atol=1e-5):
    """the output and the gradients of inputs `which` of sum(y * w),
    tensorgraph (eager) against torch"""
    tins = [torch.tensor(a, requires_grad=i in which) for i, a in enumerate(args)]
    want = fn(*tins)
    w = np.random.RandomState(3).randn(*want.shape).astype(want.detach().numpy().dtype)
    (want * torch.from_numpy(w)).sum().backward()
    gins = [tg.tensor(a, requires_grad=i in which) for i, a in enumerate(args)]
    got = tg.onnx.load(path)(*gins)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=rtol,
                               atol=atol)
    (got * tg.tensor(w)).sum().backward()
    for i in which:
        np.testing.assert_allclose(gins[i].grad.numpy(), tins[i].grad.numpy(), rtol=rtol,
                                   atol=atol)


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("pad", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample(tmp_path, mode, pad, align):
    rs = np.random.RandomState(0)
    x = rs.randn(2, 3, 5, 7).astype(np.float32)
    grid = (rs.rand(2, 4, 6, 2).astype(np.float32) * 2.6 - 1.3)  # some samples outside

    def fn(a, g):
        return F.grid_sample(a, g, mode=mode, padding_mode=pad, align_corners=align)
    path = export(tmp_path, fn, [torch.from_numpy(x), torch.from_numpy(grid)], 16)
    assert "GridSample" in op_types(path)
    # nearest: the grid has no gradient (torch's is zero)
    grads_match(path, fn, [x, grid], [0] if mode == "nearest" else [0, 1], rtol=2e-4,
                atol=2e-4)


@pytest.mark.parametrize("aligned", [False, True])
@pytest.mark.parametrize("ratio", [-1, 2])
def test_roi_align(tmp_path, aligned, ratio):
    tv = pytest.importorskip("torchvision")
    rs = np.random.RandomState(1)
    x = rs.randn(2, 3, 10, 12).astype(np.float32)
    boxes = np.array([[0, 1.2, 0.5, 7.7, 6.1], [1, 0.0, 2.3, 11.5, 9.9],
                      [1, 4.4, 4.4, 4.9, 4.6], [0, -2.0, -1.0, 3.0, 13.0]], np.float32)

    def fn(a, b):
        return tv.ops.roi_align(a, b, (3, 2), spatial_scale=0.9, sampling_ratio=ratio,
                                aligned=aligned)
    # torchvision writes aligned=False at opset 16 without the attribute
    # (so half_pixel, ONNX's default): RoiAlign-10 (output_half_pixel) for it
    path = export(tmp_path, fn, [torch.from_numpy(x), torch.from_numpy(boxes)],
                  16 if aligned else 11)
    assert "RoiAlign" in op_types(path)
    grads_match(path, fn, [x, boxes], [0])


def test_roi_align_graph_mode(tmp_path):
    """a fixed sampling ratio works in a traced graph; the adaptive one
    needs the boxes' values, which a graph computes when it runs"""
    tv = pytest.importorskip("torchvision")
    x = np.random.RandomState(2).randn(1, 2, 8, 8).astype(np.float32)
    boxes = np.array([[0, 1.0, 1.0, 6.0, 5.0]], np.float32)
    for ratio in (2, -1):
        def fn(a, b):
            return tv.ops.roi_align(a, b, (2, 2), sampling_ratio=ratio, aligned=True)
        path = export(tmp_path, fn, [torch.from_numpy(x), torch.from_numpy(boxes)], 16,
                      name=f"r{ratio}")
        m = tg.onnx.load(path)
        f = tg.function(lambda a, b: m(a, b))
        if ratio > 0:
            got = f(tg.tensor(x), tg.tensor(boxes)).numpy()
            want = fn(torch.from_numpy(x), torch.from_numpy(boxes)).numpy()
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        else:
            with pytest.raises(Exception, match="rois.*sampling_ratio 0"):
                f(tg.tensor(x), tg.tensor(boxes))


def test_det(tmp_path):
    rs = np.random.RandomState(4)
    x = rs.randn(3, 2, 5, 5).astype(np.float64)
    x[0, 1, 0, 0] = 0  # a zero in the first pivot's place: a row swap
    path = export(tmp_path, torch.det, [torch.from_numpy(x)], 11)
    assert "Det" in op_types(path)
    grads_match(path, torch.det, [x], [0], rtol=1e-8, atol=1e-10)
    x[0, 0, :, 0] = 0  # singular: 0 (the gradient there is not the adjugate's)
    got = tg.onnx.load(path)(tg.tensor(x)).numpy()
    assert got[0, 0] == 0
    np.testing.assert_allclose(got, torch.det(torch.from_numpy(x)).numpy(), rtol=1e-10,
                               atol=1e-12)
    # graph mode too
    m = tg.onnx.load(path)
    got = tg.function(lambda a: m(a))(tg.tensor(x)).numpy()
    np.testing.assert_allclose(got, torch.det(torch.from_numpy(x)).numpy(), rtol=1e-10,
                               atol=1e-12)


def test_nonzero_and_unique(tmp_path):
    x = np.array([[0, 3, 0, -1], [2, 0, 0, 3], [0, 3, 0, -1]], np.float32)
    path = export(tmp_path, torch.nonzero, [torch.from_numpy(x)], 13, name="nz")
    assert "NonZero" in op_types(path)
    got = tg.onnx.load(path)(tg.tensor(x)).numpy()
    np.testing.assert_array_equal(got, torch.nonzero(torch.from_numpy(x)).numpy())

    def uniq(a):
        return torch.unique(a, sorted=True, return_inverse=True, return_counts=True)
    path = export(tmp_path, uniq, [torch.from_numpy(x)], 11, name="uq")
    assert "Unique" in op_types(path)
    got = tg.onnx.load(path)(tg.tensor(x))
    # ONNX's inverse_indices are over X flattened (torch's keep X's shape)
    for g, w in zip(got, uniq(torch.from_numpy(x))):
        np.testing.assert_array_equal(g.numpy(), w.numpy().reshape(g.numpy().shape))

    def uniq_dim(a):
        return torch.unique(a, dim=0, return_inverse=True, return_counts=True)
    path = export(tmp_path, uniq_dim, [torch.from_numpy(x)], 11, name="uqd")
    got = tg.onnx.load(path)(tg.tensor(x))
    for g, w in zip(got, uniq_dim(torch.from_numpy(x))):
        np.testing.assert_array_equal(g.numpy(), w.numpy())


def test_nms(tmp_path):
    """torchvision's nms (one class, one batch as ONNX sees it): the kept
    boxes, in descending score, equal torchvision's"""
    tv = pytest.importorskip("torchvision")
    rs = np.random.RandomState(7)
    xy = rs.rand(40, 2).astype(np.float32) * 20
    boxes = np.concatenate([xy, xy + 2 + rs.rand(40, 2).astype(np.float32) * 6], 1)
    scores = rs.rand(40).astype(np.float32)
    scores[5] = scores[9]  # a tie: the lower index first, as torchvision's stable sort

    def fn(b, s):
        return tv.ops.nms(b, s, 0.3)
    path = export(tmp_path, fn, [torch.from_numpy(boxes), torch.from_numpy(scores)], 11)
    assert "NonMaxSuppression" in op_types(path)
    got = tg.onnx.load(path)(tg.tensor(boxes), tg.tensor(scores)).numpy()
    want = fn(torch.from_numpy(boxes), torch.from_numpy(scores)).numpy()
    assert len(want) > 3
    np.testing.assert_array_equal(got, want)


def test_nms_in_graph_mode(tmp_path):
    """boxes computed in the model (scaled and shifted): in graph mode the
    kept count is known when the graph runs; one function for every set
    of boxes, each equal to torchvision's selection"""
    tv = pytest.importorskip("torchvision")
    rs = np.random.RandomState(11)

    def fn(b, s):
        return tv.ops.nms(b * 2.0 + 1.0, s, 0.3)

    def boxes(n):
        xy = rs.rand(n, 2).astype(np.float32) * 10
        return np.concatenate([xy, xy + 1 + rs.rand(n, 2).astype(np.float32) * 4], 1)
    b0, s0 = boxes(30), rs.rand(30).astype(np.float32)
    path = export(tmp_path, fn, [torch.from_numpy(b0), torch.from_numpy(s0)], 11)
    m = tg.onnx.load(path)
    f = tg.function(lambda b, s: m(b, s))
    for b, sc in ((b0, s0), (boxes(30), rs.rand(30).astype(np.float32)),
                  (np.tile(b0[:1], (30, 1)), s0)):  # all the same box: one kept
        want = fn(torch.from_numpy(b), torch.from_numpy(sc)).numpy()
        got = f(tg.tensor(b), tg.tensor(sc)).numpy()
        np.testing.assert_array_equal(got, want)
    assert f.trace_count == 1


def test_nonzero_in_graph_mode(tmp_path):
    """over a value the graph computes, NonZero's length is known only when
    the graph runs: an unknown dim until then, and the same function gives
    each input its own count"""
    x = np.array([1.0, -2.0, 3.0], np.float32)
    path = export(tmp_path, lambda a: torch.nonzero(torch.relu(a)), [torch.from_numpy(x)],
                  13)
    m = tg.onnx.load(path)
    np.testing.assert_array_equal(m(tg.tensor(x)).numpy(), [[0], [2]])  # eager
    fn = tg.function(lambda a: m(a))
    for v in (x, np.array([-1.0, -2.0, 3.0], np.float32), -x):
        want = torch.nonzero(torch.relu(torch.from_numpy(v))).numpy()
        got = fn(tg.tensor(v)).numpy()
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_bitshift_uint8(tmp_path):
    x = np.array([1, 7, 200, 255], np.uint8)
    y = np.array([1, 2, 3, 0], np.uint8)
    for name, fn in (("l", lambda a, b: a << b), ("r", lambda a, b: a >> b)):
        try:
            path = export(tmp_path, fn, [torch.from_numpy(x), torch.from_numpy(y)], 11,
                          name=name)
        except Exception as e:  # pragma: no cover - depends on torch's symbolics
            pytest.skip(f"torch does not export uint8 shifts: {e}")
        if "BitShift" not in op_types(path):
            pytest.skip("torch writes these shifts without BitShift")
        got = tg.onnx.load(path)(tg.tensor(x), tg.tensor(y)).numpy()
        np.testing.assert_array_equal(got, fn(torch.from_numpy(x), torch.from_numpy(y)))


def _model(tmp_path, nodes, inputs, outputs, inits=(), opset=13, name="h"):
    return onnx_model_file(tmp_path, nodes, inputs, outputs, inits, opset, name)


def _vi(name, t, shape):
    return helper.make_tensor_value_info(name, t, shape)


def test_max_unpool_after_max_pool(tmp_path):
    """MaxPool's Indices (over the whole tensor) into MaxUnpool equal
    torch's max_pool2d / max_unpool2d (indices per plane), and the
    gradient reaches the pooled values"""
    x = np.random.RandomState(5).randn(2, 3, 6, 8).astype(np.float32)
    nodes = [helper.make_node("MaxPool", ["x"], ["p", "i"], kernel_shape=[2, 2],
                              strides=[2, 2]),
             helper.make_node("MaxUnpool", ["p", "i"], ["y"], kernel_shape=[2, 2],
                              strides=[2, 2])]
    path = _model(tmp_path, nodes, [_vi("x", TensorProto.FLOAT, [2, 3, 6, 8])],
                  [_vi("y", TensorProto.FLOAT, [2, 3, 6, 8])], opset=11)

    def fn(a):
        p, i = F.max_pool2d(a, 2, 2, return_indices=True)
        return F.max_unpool2d(p, i, 2, 2)
    grads_match(path, fn, [x], [0])


def test_compress_and_reverse_sequence(tmp_path):
    rs = np.random.RandomState(6)
    x = rs.randn(4, 3, 2).astype(np.float32)
    cond = helper.make_tensor("c", TensorProto.BOOL, [3], [True, False, True])
    path = _model(tmp_path, [helper.make_node("Compress", ["x", "c"], ["y"], axis=1)],
                  [_vi("x", TensorProto.FLOAT, [4, 3, 2])],
                  [_vi("y", TensorProto.FLOAT, [4, 2, 2])], [cond], name="cmp")
    grads_match(path, lambda a: a[:, [0, 2]], [x], [0])
    lens = helper.make_tensor("l", TensorProto.INT64, [3], [4, 1, 2])
    path = _model(tmp_path, [helper.make_node("ReverseSequence", ["x", "l"], ["y"],
                                              time_axis=0, batch_axis=1)],
                  [_vi("x", TensorProto.FLOAT, [4, 3, 2])],
                  [_vi("y", TensorProto.FLOAT, [4, 3, 2])], [lens], opset=10, name="rev")

    def rev(a):
        cols = [torch.cat([a[:n, b].flip(0), a[n:, b]]) for b, n in enumerate((4, 1, 2))]
        return torch.stack(cols, 1)
    grads_match(path, rev, [x], [0])


def test_compress_over_a_computed_condition_in_graph_mode(tmp_path):
    """the condition computed from the input (x[:, 0] > 0): in graph mode
    the output's length is known when the graph runs, one trace for every
    count; values and gradients as eager's"""
    zero = helper.make_tensor("z", TensorProto.FLOAT, [], [0.0])
    i0 = helper.make_tensor("i0", TensorProto.INT64, [], [0])
    nodes = [helper.make_node("Gather", ["x", "i0"], ["col"], axis=1),
             helper.make_node("Greater", ["col", "z"], ["c"]),
             helper.make_node("Compress", ["x", "c"], ["y"], axis=0)]
    path = _model(tmp_path, nodes, [_vi("x", TensorProto.FLOAT, [5, 3])],
                  [_vi("y", TensorProto.FLOAT, [None, 3])], [zero, i0], name="cmpg")
    m = tg.onnx.load(path)
    fn = tg.function(lambda a: m(a))
    rs = np.random.RandomState(2)
    for v in (rs.randn(5, 3), -np.abs(rs.randn(5, 3)), np.abs(rs.randn(5, 3))):
        v = v.astype(np.float32)
        want = v[v[:, 0] > 0]
        np.testing.assert_array_equal(fn(tg.tensor(v)).numpy(), want)
        np.testing.assert_array_equal(m(tg.tensor(v)).numpy(), want)
        xa = tg.tensor(v, requires_grad=True)
        (fn(xa) * 3).sum().backward()
        np.testing.assert_array_equal(xa.grad.numpy(), np.where(v[:, :1] > 0, 3.0, 0.0) *
                                      np.ones_like(v))
    assert fn.trace_count == 1


@pytest.mark.parametrize("periodic", [0, 1])
def test_windows(tmp_path, periodic):
    # ONNX's Hamming window takes alpha = 25/46 (torch's default is 0.54)
    def hamming(n, periodic, dtype):
        return torch.hamming_window(n, periodic, alpha=25 / 46, beta=21 / 46, dtype=dtype)
    for op, fn in (("HannWindow", torch.hann_window), ("HammingWindow", hamming),
                   ("BlackmanWindow", torch.blackman_window)):
        size = helper.make_tensor("n", TensorProto.INT64, [], [11])
        path = _model(tmp_path, [helper.make_node(op, ["n"], ["y"], periodic=periodic)], [],
                      [_vi("y", TensorProto.FLOAT, [11])], [size], opset=17, name=op)
        got = tg.onnx.load(path)().numpy()
        want = fn(11, bool(periodic), dtype=torch.float64).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("inverse,onesided,length", [(0, 0, None), (1, 0, None),
                                                     (0, 1, None), (0, 0, 12), (1, 0, 5)])
def test_dft(tmp_path, inverse, onesided, length):
    """against numpy's fft, with the gradient of a real input against
    torch.fft's"""
    rs = np.random.RandomState(8)
    complex_in = inverse == 1
    x = rs.randn(2, 9, 3, 2 if complex_in else 1).astype(np.float32)
    inits = [helper.make_tensor("L", TensorProto.INT64, [], [length])] if length else []
    node = helper.make_node("DFT", ["x", "L"] if length else ["x"], ["y"], axis=1,
                            inverse=inverse, onesided=onesided)
    path = _model(tmp_path, [node], [_vi("x", TensorProto.FLOAT, list(x.shape))],
                  [_vi("y", TensorProto.FLOAT, None)], inits, opset=17)
    sig = x[..., 0] + 1j * x[..., 1] if complex_in else x[..., 0]
    f = np.fft.ifft if inverse else (np.fft.rfft if onesided else np.fft.fft)
    want = f(sig, n=length, axis=1)
    want = np.stack([want.real, want.imag], -1)
    xt = tg.tensor(x, requires_grad=True)
    got = tg.onnx.load(path)(xt)
    np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-4, atol=1e-5)
    if not complex_in:
        w = rs.randn(*want.shape)
        (got * tg.tensor(w.astype(np.float32))).sum().backward()
        xtt = torch.tensor(x[..., 0].astype(np.float64), requires_grad=True)
        tf = torch.fft.rfft if onesided else torch.fft.fft
        yt = torch.view_as_real(tf(xtt, n=length, dim=1))
        (yt * torch.from_numpy(w)).sum().backward()
        np.testing.assert_allclose(xt.grad.numpy()[..., 0], xtt.grad.numpy(), rtol=1e-4,
                                   atol=1e-4)


def _random_model(tmp_path, op, inputs=(), vis=(), inits=(), opset=15, **attrs):
    node = helper.make_node(op, list(inputs), ["y"], **attrs)
    out = attrs.get("dtype", TensorProto.INT32 if op == "Multinomial" else TensorProto.FLOAT)
    return _model(tmp_path, [node], list(vis), [_vi("y", out, None)],
                  list(inits), opset=opset, name=op)


def test_random_ops(tmp_path):
    """draws from tensorgraph's generator: ranges, moments, seeds, the
    certain cases exactly"""
    u = tg.onnx.load(_random_model(tmp_path, "RandomUniform", shape=[200, 50], low=2.0,
                                   high=5.0, seed=3.0))().numpy()
    assert u.shape == (200, 50) and u.min() >= 2 and u.max() < 5
    assert abs(u.mean() - 3.5) < 0.05 and abs(u.std() - 3 / 12 ** 0.5) < 0.05
    again = tg.onnx.load(_random_model(tmp_path, "RandomUniform", shape=[200, 50], low=2.0,
                                       high=5.0, seed=3.0))().numpy()
    np.testing.assert_array_equal(u, again)  # the same seed, the same draws
    n = tg.onnx.load(_random_model(tmp_path, "RandomNormal", shape=[20000], mean=1.0,
                                   scale=2.0, dtype=TensorProto.DOUBLE))().numpy()
    assert n.dtype == np.float64 and abs(n.mean() - 1) < 0.06 and abs(n.std() - 2) < 0.06
    x = np.zeros((3, 4), np.float32)
    like = tg.onnx.load(_random_model(tmp_path, "RandomNormalLike", ["x"],
                                      [_vi("x", TensorProto.FLOAT, [3, 4])]))(tg.tensor(x))
    assert like.numpy().shape == (3, 4) and like.numpy().std() > 0
    p = np.array([0, 1, 1, 0, 1], np.float32)
    b = tg.onnx.load(_random_model(tmp_path, "Bernoulli", ["p"],
                                   [_vi("p", TensorProto.FLOAT, [5])]))(tg.tensor(p))
    np.testing.assert_array_equal(b.numpy(), p)
    logits = np.log(np.array([[1e-30, 1, 1e-30], [0.25, 0.25, 0.5]], np.float32))
    m = tg.onnx.load(_random_model(tmp_path, "Multinomial", ["l"],
                                   [_vi("l", TensorProto.FLOAT, [2, 3])], opset=7,
                                   sample_size=4000, dtype=TensorProto.INT64))(
        tg.tensor(logits)).numpy()
    assert m.shape == (2, 4000) and (m[0] == 1).all()
    freq = np.bincount(m[1], minlength=3) / 4000
    np.testing.assert_allclose(freq, [0.25, 0.25, 0.5], atol=0.03)
    # graph mode (random nodes drawing at every call): test_onnx_random_graph.py


def test_stft(tmp_path):
    """against torch.stft (center off, the window applied), with the
    gradient of the signal"""
    rs = np.random.RandomState(9)
    sig = rs.randn(2, 50, 1).astype(np.float32)
    win = np.hanning(12).astype(np.float32)
    inits = [helper.make_tensor("st", TensorProto.INT64, [], [5]),
             helper.make_tensor("w", TensorProto.FLOAT, [12], win)]
    node = helper.make_node("STFT", ["x", "st", "w"], ["y"])
    path = _model(tmp_path, [node], [_vi("x", TensorProto.FLOAT, [2, 50, 1])],
                  [_vi("y", TensorProto.FLOAT, None)], inits, opset=17)
    xt = tg.tensor(sig, requires_grad=True)
    got = tg.onnx.load(path)(xt)
    st = torch.tensor(sig[..., 0].astype(np.float64), requires_grad=True)
    want = torch.view_as_real(torch.stft(st, 12, hop_length=5, window=torch.from_numpy(
        win.astype(np.float64)), center=False, onesided=True, return_complex=True))
    want = want.transpose(1, 2)  # torch: [B, bins, frames]; ONNX: [B, frames, bins]
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-4,
                               atol=1e-5)
    w = rs.randn(*want.shape)
    (got * tg.tensor(w.astype(np.float32))).sum().backward()
    (want * torch.from_numpy(w)).sum().backward()
    np.testing.assert_allclose(xt.grad.numpy()[..., 0], st.grad.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("pad", ["zeros", "border", "reflection"])
def test_grid_sample_non_finite_grid(tmp_path, pad):
    """infinite and NaN grid positions give a result (torch's NaN or 0
    there), never an index error; the finite positions keep torch's values"""
    rs = np.random.RandomState(10)
    x = rs.randn(1, 2, 4, 5).astype(np.float32)
    grid = rs.uniform(-1, 1, (1, 2, 3, 2)).astype(np.float32)
    grid[0, 0, 0] = [np.inf, 0.2]
    grid[0, 0, 1] = [np.nan, -np.inf]
    node = helper.make_node("GridSample", ["x", "g"], ["y"], padding_mode=pad)
    path = _model(tmp_path, [node], [_vi("x", TensorProto.FLOAT, [1, 2, 4, 5]),
                                     _vi("g", TensorProto.FLOAT, [1, 2, 3, 2])],
                  [_vi("y", TensorProto.FLOAT, [1, 2, 2, 3])], opset=16)
    got = tg.onnx.load(path)(tg.tensor(x), tg.tensor(grid)).numpy()
    want = F.grid_sample(torch.from_numpy(x), torch.from_numpy(grid), padding_mode=pad,
                         align_corners=False).numpy()
    np.testing.assert_allclose(got[:, :, 1], want[:, :, 1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[:, :, 0, 2], want[:, :, 0, 2], rtol=1e-5, atol=1e-6)
