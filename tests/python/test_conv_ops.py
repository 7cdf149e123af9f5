"""Transposed, 1-D and 3-D convolution and pooling: outputs and gradients
against PyTorch (skipped without it), modules, argument errors."""
import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.nn as nn
import tensorgraph.nn.functional as F
from conftest import needs_torch, torch


def _pair(rng, shape, dtype):
    a = rng.standard_normal(shape).astype(dtype)
    return tg.tensor(a, requires_grad=True), (torch.tensor(a, requires_grad=True)
                                              if torch is not None else None)


def _compare(fn_tg, fn_torch, shapes, dtype, rtol):
    """fn on tensors of the given shapes: outputs and all input gradients"""
    rng = np.random.default_rng(3)
    pairs = [_pair(rng, s, dtype) for s in shapes]
    y = fn_tg(*[p[0] for p in pairs])
    yt = fn_torch(*[p[1] for p in pairs])
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=rtol, atol=rtol)
    g = rng.standard_normal(tuple(yt.shape)).astype(dtype)
    y.backward(tg.tensor(g))
    yt.backward(torch.tensor(g))
    for a, at in pairs:
        np.testing.assert_allclose(a.grad.numpy(), at.grad.numpy(), rtol=rtol, atol=rtol)


CT_CASES = [
    # (x shape, w shape, kwargs)
    ((2, 4, 5, 6), (4, 3, 3, 3), dict()),
    ((2, 4, 5, 6), (4, 3, 3, 2), dict(stride=2, padding=1, output_padding=1)),
    ((1, 4, 4, 5), (4, 2, 2, 3), dict(stride=(3, 2), padding=(1, 0), output_padding=(2, 1),
                                      groups=2, dilation=(1, 2))),
    ((2, 6, 3, 3), (6, 1, 3, 3), dict(stride=2, groups=6, dilation=2)),
]


@needs_torch
@pytest.mark.parametrize("dtype,rtol", [(np.float32, 1e-4), (np.float64, 1e-10)])
@pytest.mark.parametrize("xs,ws,kw", CT_CASES)
@pytest.mark.parametrize("bias", [False, True])
def test_conv_transpose2d_matches_torch(xs, ws, kw, dtype, rtol, bias):
    shapes = [xs, ws] + ([(ws[1] * kw.get("groups", 1),)] if bias else [])
    _compare(lambda *a: F.conv_transpose2d(*a, **kw),
             lambda *a: torch.nn.functional.conv_transpose2d(*a, **kw), shapes, dtype, rtol)


@needs_torch
def test_conv_transpose2d_module_matches_torch():
    m = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2)
    mt = torch.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2)
    assert tuple(m.weight.shape) == tuple(mt.weight.shape) == (4, 3, 3, 3)
    with torch.no_grad():
        mt.weight.copy_(torch.tensor(m.weight.detach().numpy()))
        mt.bias.copy_(torch.tensor(m.bias.detach().numpy()))
    x = np.random.default_rng(0).standard_normal((2, 4, 5, 5)).astype(np.float32)
    y, yt = m(tg.tensor(x)), mt(torch.tensor(x))
    assert tuple(y.shape) == (2, 6, 10, 10)
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-4, atol=1e-5)
    # PyTorch's bound for the init: 1/sqrt(fan_in), fan_in = out/groups * k * k
    assert np.abs(m.bias.detach().numpy()).max() <= 1 / np.sqrt(3 * 9)


def test_conv_transpose2d_errors():
    x, w = tg.ones(1, 2, 3, 3), tg.ones(2, 1, 3, 3)
    with pytest.raises(RuntimeError, match="pair"):  # PyTorch's types
        F.conv_transpose2d(x, w, stride=(1, 2, 3))
    with pytest.raises(RuntimeError, match="output_padding"):
        F.conv_transpose2d(x, w, stride=2, output_padding=2)
    with pytest.raises(NotImplementedError):
        nn.ConvTranspose2d(2, 2, 3, padding='same')


CONV1_CASES = [
    ((2, 4, 9), (6, 4, 3), dict()),
    ((2, 4, 9), (6, 2, 2), dict(stride=2, padding=1, dilation=2, groups=2)),
    ((1, 3, 7), (3, 1, 3), dict(stride=(3,), padding=(2,), groups=3)),
]


@needs_torch
@pytest.mark.parametrize("dtype,rtol", [(np.float32, 1e-4), (np.float64, 1e-10)])
@pytest.mark.parametrize("xs,ws,kw", CONV1_CASES)
def test_conv1d_matches_torch(xs, ws, kw, dtype, rtol):
    _compare(lambda *a: F.conv1d(*a, **kw), lambda *a: torch.nn.functional.conv1d(*a, **kw),
             [xs, ws, (ws[0],)], dtype, rtol)


@needs_torch
@pytest.mark.parametrize("dtype,rtol", [(np.float32, 1e-4), (np.float64, 1e-10)])
def test_conv_transpose1d_matches_torch(dtype, rtol):
    kw = dict(stride=3, padding=1, output_padding=2, groups=2, dilation=1)
    _compare(lambda *a: F.conv_transpose1d(*a, **kw),
             lambda *a: torch.nn.functional.conv_transpose1d(*a, **kw),
             [(2, 4, 5), (4, 3, 3), (6,)], dtype, rtol)


POOL1_CASES = [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
               dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
               dict(kernel_size=4, stride=3, padding=2, ceil_mode=True)]


@needs_torch
@pytest.mark.parametrize("kw", POOL1_CASES)
@pytest.mark.parametrize("name", ["max_pool1d", "avg_pool1d", "avg_pool1d_nopad"])
def test_pool1d_matches_torch(kw, name):
    kw = dict(kw)
    if name == "avg_pool1d_nopad":
        name, kw["count_include_pad"] = "avg_pool1d", False
    _compare(lambda x: getattr(F, name)(x, **kw),
             lambda x: getattr(torch.nn.functional, name)(x, **kw), [(2, 3, 11)],
             np.float64, 1e-12)


@needs_torch
def test_1d_modules_match_torch():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 4, 12)).astype(np.float32)
    for m, mt in ((nn.Conv1d(4, 6, 3, stride=2, padding=1, groups=2),
                   torch.nn.Conv1d(4, 6, 3, stride=2, padding=1, groups=2)),
                  (nn.ConvTranspose1d(4, 2, 3, stride=2, output_padding=1),
                   torch.nn.ConvTranspose1d(4, 2, 3, stride=2, output_padding=1))):
        assert tuple(m.weight.shape) == tuple(mt.weight.shape)
        with torch.no_grad():
            mt.weight.copy_(torch.tensor(m.weight.detach().numpy()))
            mt.bias.copy_(torch.tensor(m.bias.detach().numpy()))
        np.testing.assert_allclose(m(tg.tensor(x)).detach().numpy(),
                                   mt(torch.tensor(x)).detach().numpy(), rtol=1e-4, atol=1e-5)
    for m, mt in ((nn.MaxPool1d(3, 2, 1), torch.nn.MaxPool1d(3, 2, 1)),
                  (nn.AvgPool1d(3, 2, 1, count_include_pad=False),
                   torch.nn.AvgPool1d(3, 2, 1, count_include_pad=False))):
        np.testing.assert_allclose(m(tg.tensor(x)).numpy(), mt(torch.tensor(x)).numpy(),
                                   rtol=1e-6)


def test_1d_errors():
    x = tg.ones(1, 2, 6)
    with pytest.raises(RuntimeError, match="1-tuple"):  # PyTorch's type
        F.conv1d(x, tg.ones(2, 2, 3), stride=(1, 2))
    # dilation != 1: the composed pooling (test_nn_cover.py compares it with PyTorch)
    assert F.max_pool1d(x, 2, dilation=2).shape == (1, 2, 2)
    with pytest.raises(RuntimeError, match="3-D"):  # [C, L] is one unbatched sample
        F.avg_pool1d(tg.ones(6), 2)


CONV3_CASES = [
    ((2, 4, 4, 5, 3), (6, 4, 2, 3, 2), dict()),
    ((1, 4, 5, 4, 6), (4, 2, 3, 2, 2), dict(stride=(2, 1, 2), padding=(1, 0, 1),
                                            dilation=(1, 2, 1), groups=2)),
]


@needs_torch
@pytest.mark.parametrize("dtype,rtol", [(np.float32, 1e-4), (np.float64, 1e-10)])
@pytest.mark.parametrize("xs,ws,kw", CONV3_CASES)
def test_conv3d_matches_torch(xs, ws, kw, dtype, rtol):
    _compare(lambda *a: F.conv3d(*a, **kw), lambda *a: torch.nn.functional.conv3d(*a, **kw),
             [xs, ws, (ws[0],)], dtype, rtol)


@needs_torch
@pytest.mark.parametrize("dtype,rtol", [(np.float32, 1e-4), (np.float64, 1e-10)])
def test_conv_transpose3d_matches_torch(dtype, rtol):
    kw = dict(stride=(2, 1, 3), padding=(1, 0, 1), output_padding=(1, 0, 2), groups=2,
              dilation=(1, 2, 1))
    _compare(lambda *a: F.conv_transpose3d(*a, **kw),
             lambda *a: torch.nn.functional.conv_transpose3d(*a, **kw),
             [(2, 4, 3, 3, 2), (4, 3, 2, 2, 3), (6,)], dtype, rtol)


POOL3_CASES = [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
               dict(kernel_size=(2, 3, 3), stride=(1, 2, 2), padding=(1, 1, 0), ceil_mode=True)]


@needs_torch
@pytest.mark.parametrize("kw", POOL3_CASES)
@pytest.mark.parametrize("name", ["max_pool3d", "avg_pool3d", "avg_pool3d_nopad"])
def test_pool3d_matches_torch(kw, name):
    kw = dict(kw)
    if name == "avg_pool3d_nopad":
        name, kw["count_include_pad"] = "avg_pool3d", False
    _compare(lambda x: getattr(F, name)(x, **kw),
             lambda x: getattr(torch.nn.functional, name)(x, **kw), [(2, 3, 5, 6, 7)],
             np.float64, 1e-12)


@needs_torch
def test_3d_modules_match_torch():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 4, 5, 6, 5)).astype(np.float32)
    for m, mt in ((nn.Conv3d(4, 6, 3, stride=2, padding=1, groups=2),
                   torch.nn.Conv3d(4, 6, 3, stride=2, padding=1, groups=2)),
                  (nn.ConvTranspose3d(4, 2, 2, stride=2, output_padding=1),
                   torch.nn.ConvTranspose3d(4, 2, 2, stride=2, output_padding=1))):
        assert tuple(m.weight.shape) == tuple(mt.weight.shape)
        with torch.no_grad():
            mt.weight.copy_(torch.tensor(m.weight.detach().numpy()))
            mt.bias.copy_(torch.tensor(m.bias.detach().numpy()))
        np.testing.assert_allclose(m(tg.tensor(x)).detach().numpy(),
                                   mt(torch.tensor(x)).detach().numpy(), rtol=1e-4, atol=1e-5)
    for m, mt in ((nn.MaxPool3d(3, 2, 1), torch.nn.MaxPool3d(3, 2, 1)),
                  (nn.AvgPool3d(2, ceil_mode=True), torch.nn.AvgPool3d(2, ceil_mode=True))):
        np.testing.assert_allclose(m(tg.tensor(x)).numpy(), mt(torch.tensor(x)).numpy(),
                                   rtol=1e-6, atol=1e-6)


def test_3d_errors():
    x = tg.ones(1, 2, 4, 4, 4)
    with pytest.raises(RuntimeError, match="triple"):  # PyTorch's type
        F.conv3d(x, tg.ones(2, 2, 3, 3, 3), stride=(1, 2))
    with pytest.raises(RuntimeError, match="divisor must be not zero"):
        F.avg_pool3d(x, 2, divisor_override=0)
    with pytest.raises(RuntimeError, match="5-D"):
        F.max_pool3d(tg.ones(4, 4, 4), 2)  # [C, D, H, W] is one unbatched sample


@needs_torch
def test_onnx_maxpool3d_indices_match_torch(tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import helper, TensorProto
    node = helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 3, 2],
                            strides=[1, 2, 2], pads=[1, 1, 0, 1, 1, 0])
    graph = helper.make_graph(
        [node], "mp3", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4, 5, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("i", TensorProto.INT64, None)])
    path = tmp_path / "mp3.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    x = np.random.default_rng(6).standard_normal((2, 3, 4, 5, 6)).astype(np.float32)
    y, i = tg.onnx.load(path)(tg.tensor(x))
    yt, it = torch.nn.functional.max_pool3d(torch.tensor(x), (2, 3, 2), (1, 2, 2), (1, 1, 0),
                                            return_indices=True)
    base = (np.arange(6) * 120).reshape(2, 3, 1, 1, 1)  # each volume's offset
    np.testing.assert_array_equal(y.numpy(), yt.numpy())
    np.testing.assert_array_equal(i.numpy(), it.numpy() + base)


@needs_torch
def test_conv_transpose_output_size_matches_torch():
    x = np.random.default_rng(7).standard_normal((1, 4, 3, 5)).astype(np.float32)
    m = nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1)
    mt = torch.nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1)
    with torch.no_grad():
        mt.weight.copy_(torch.tensor(m.weight.detach().numpy()))
        mt.bias.copy_(torch.tensor(m.bias.detach().numpy()))
    for size in [(5, 9), (6, 10), (1, 2, 6, 9)]:
        y, yt = m(tg.tensor(x), output_size=size), mt(torch.tensor(x), output_size=size)
        assert tuple(y.shape) == tuple(yt.shape)
        np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)
    with pytest.raises(ValueError, match="output size"):
        m(tg.tensor(x), output_size=(7, 9))


@needs_torch
def test_conv_transpose_output_padding_below_dilation():
    """PyTorch allows an output_padding of a stride or more while it is
    below the dilation (the output grows by rows no input reaches, so they
    hold the bias): every rank, values and all three gradients, eager and
    in a tg.function"""
    rs = np.random.RandomState(1)
    checked = 0
    for _ in range(60):
        nd = rs.randint(1, 4)
        s, d = tuple(rs.randint(1, 3, size=nd)), tuple(rs.randint(1, 4, size=nd))
        k, p = tuple(rs.randint(1, 4, size=nd)), tuple(rs.randint(0, 3, size=nd))
        op = tuple(rs.randint(0, max(ss, dd)) for ss, dd in zip(s, d))
        if all(o < ss for o, ss in zip(op, s)):
            continue  # the plain case: test_conv_transpose*_matches_torch
        arrays = [rs.randn(2, 2, *rs.randint(1, 5, size=nd)), rs.randn(2, 3, *k), rs.randn(3)]
        sizes = [(n - 1) * ss - 2 * pp + dd * (kk - 1) + oo + 1
                 for n, ss, pp, dd, kk, oo in zip(arrays[0].shape[2:], s, p, d, k, op)]
        if min(sizes) < 1:
            continue  # padding leaves no output (not asked of torch: its C++ exception
            # aborts under the sanitizers' preload)
        fn = f'conv_transpose{nd}d'
        ts = [torch.tensor(a, requires_grad=True) for a in arrays]
        yt = getattr(torch.nn.functional, fn)(*ts, s, p, op, 1, d)
        gs = [tg.tensor(a, requires_grad=True) for a in arrays]
        y = getattr(F, fn)(*gs, s, p, op, 1, d)
        np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), atol=1e-12)
        r = rs.randn(*yt.shape)
        (yt * torch.tensor(r)).sum().backward()
        (y * tg.tensor(r)).sum().backward()
        for a, b in zip(ts, gs):
            np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), atol=1e-12)
        compiled = tg.function(lambda x, w, b: getattr(F, fn)(x, w, b, s, p, op, 1, d))
        np.testing.assert_allclose(compiled(*[tg.tensor(a) for a in arrays]).numpy(),
                                   yt.detach().numpy(), atol=1e-12)
        checked += 1
    assert checked >= 10
    with pytest.raises(RuntimeError, match="either stride 1 or dilation 2"):
        F.conv_transpose2d(tg.ones(1, 1, 3, 3), tg.ones(1, 1, 3, 3), stride=1, dilation=2,
                           output_padding=2)


def _conv_transpose_reference(x, w, s, pads, op, d):
    """ONNX ConvTranspose from its definition (2-D, one group): every
    input scatters its kernel-weighted copy into the full output, whose
    last op rows and columns no input reaches; pads are cut after"""
    n, _, h, wd = x.shape
    o, kh, kw = w.shape[1], w.shape[2], w.shape[3]
    fh = (h - 1) * s[0] + (kh - 1) * d[0] + 1 + op[0]
    fw = (wd - 1) * s[1] + (kw - 1) * d[1] + 1 + op[1]
    y = np.zeros((n, o, fh, fw))
    for i in range(h):
        for j in range(wd):
            for a in range(kh):
                for b in range(kw):
                    contribution = x[:, :, i, j] @ w[:, :, a, b]
                    y[:, :, i * s[0] + a * d[0], j * s[1] + b * d[1]] += contribution
    return y[:, :, pads[0]:fh - pads[2], pads[1]:fw - pads[3]]


@pytest.mark.parametrize("s,pads,op,d", [
    ((1, 1), (1, 1, 1, 1), (1, 1), (1, 1)),  # output_padding past the stride, padded
    ((2, 2), (1, 1, 1, 1), (2, 2), (1, 1)),
    ((1, 1), (1, 1, 1, 1), (1, 1), (2, 2)),  # below the dilation: PyTorch's exports
    ((2, 2), (1, 0, 2, 1), (1, 1), (1, 1)),  # asymmetric pads
    ((1, 1), (0, 0, 0, 0), (1, 1), (1, 1))])
def test_onnx_conv_transpose_output_padding(tmp_path, s, pads, op, d):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper
    rs = np.random.RandomState(0)
    x, w = rs.randn(1, 2, 4, 4).astype(np.float32), rs.randn(2, 3, 3, 3).astype(np.float32)
    node = helper.make_node('ConvTranspose', ['x', 'w'], ['y'], strides=s, pads=pads,
                            output_padding=op, dilations=d)
    graph = helper.make_graph([node], 'g', [helper.make_tensor_value_info(
        'x', TensorProto.FLOAT, x.shape)], [helper.make_tensor_value_info(
            'y', TensorProto.FLOAT, None)], [numpy_helper.from_array(w, 'w')])
    path = str(tmp_path / 'ct.onnx')
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid('', 17)]), path)
    y = tg.onnx.load(path)(tg.tensor(x)).numpy()
    want = _conv_transpose_reference(x.astype(np.float64), w.astype(np.float64), s, pads, op, d)
    assert y.shape == want.shape
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
