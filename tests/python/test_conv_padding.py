"""PyTorch's padding arguments of convolutions: padding='same' | 'valid' in
F.conv1d/2d/3d and torch-level tg.conv2d, the Conv modules' padding modes
(zeros, reflect, replicate, circular), pad's circular mode, and the
errors PyTorch raises. Values against numpy references, and against
PyTorch where it is installed (outputs and gradients)."""
import warnings

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.nn as nn
import tensorgraph.nn.functional as F
from conftest import needs_torch, torch


def _conv_ref(x, w, dilation):
    """valid stride-1 2-D convolution (cross-correlation) in numpy"""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    oh, ow = h - dilation * (kh - 1), wd - dilation * (kw - 1)
    y = np.zeros((n, o, oh, ow), dtype=np.float64)
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i * dilation:i * dilation + oh, j * dilation:j * dilation + ow]
            y += np.einsum('nchw,oc->nohw', patch, w[:, :, i, j])
    return y


@pytest.mark.parametrize("k,dilation", [(3, 1), (4, 1), (2, 3), (3, 2), (1, 1)])
def test_same_and_valid_against_numpy(k, dilation):
    rng = np.random.default_rng(k * 10 + dilation)
    x = rng.standard_normal((2, 3, 7, 6))
    w = rng.standard_normal((4, 3, k, k))
    same = F.conv2d(tg.tensor(x), tg.tensor(w), padding='same', dilation=dilation).numpy()
    total = dilation * (k - 1)  # PyTorch: the odd one on the right / bottom
    lo, hi = total // 2, total - total // 2
    padded = np.pad(x, ((0, 0), (0, 0), (lo, hi), (lo, hi)))
    np.testing.assert_allclose(same, _conv_ref(padded, w, dilation), rtol=1e-10, atol=1e-10)
    assert same.shape == (2, 4, 7, 6)
    valid = F.conv2d(tg.tensor(x), tg.tensor(w), padding='valid', dilation=dilation).numpy()
    np.testing.assert_allclose(valid, _conv_ref(x, w, dilation), rtol=1e-10, atol=1e-10)


@needs_torch
@pytest.mark.parametrize("n,k,dilation", [(1, 4, 1), (2, 4, 1), (2, 3, 2), (3, 2, 1), (1, 3, 3)])
@pytest.mark.parametrize("padding", ['same', 'valid'])
def test_functional_against_torch(n, k, dilation, padding):
    rng = np.random.default_rng(n * 100 + k * 10 + dilation)
    x = rng.standard_normal((2, 3) + (8,) * n)
    w = rng.standard_normal((4, 3) + (k,) * n)
    b = rng.standard_normal(4)
    fn = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[n]
    fnt = {1: torch.nn.functional.conv1d, 2: torch.nn.functional.conv2d,
           3: torch.nn.functional.conv3d}[n]
    xs = [tg.tensor(x, requires_grad=True), tg.tensor(w, requires_grad=True),
          tg.tensor(b, requires_grad=True)]
    ts = [torch.tensor(v, requires_grad=True) for v in (x, w, b)]
    y = fn(*xs, padding=padding, dilation=dilation)
    with warnings.catch_warnings():  # PyTorch warns about its zero-padded copy
        warnings.simplefilter("ignore")
        yt = fnt(*ts, padding=padding, dilation=dilation)
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-10, atol=1e-10)
    g = rng.standard_normal(tuple(yt.shape))
    y.backward(tg.tensor(g))
    yt.backward(torch.tensor(g))
    for a, at in zip(xs, ts):
        np.testing.assert_allclose(a.grad.numpy(), at.grad.numpy(), rtol=1e-10, atol=1e-10)


def test_torch_level_names_take_strings():
    x, w = tg.ones(1, 2, 5, 5), tg.ones(3, 2, 4, 4)
    assert tg.conv2d(x, w, padding='same').shape == (1, 3, 5, 5)
    assert tg.conv1d(tg.ones(1, 2, 5), tg.ones(3, 2, 2), padding='same').shape == (1, 3, 5)
    assert tg.conv3d(tg.ones(1, 1, 3, 3, 3), tg.ones(1, 1, 2, 2, 2),
                     padding='valid').shape == (1, 1, 2, 2, 2)


@needs_torch
@pytest.mark.parametrize("mode", ['zeros', 'reflect', 'replicate', 'circular'])
@pytest.mark.parametrize("padding", [1, (1, 2), 'same', 'valid'])
def test_conv2d_module_padding_modes(mode, padding):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 7, 6)).astype(np.float32)
    torch.manual_seed(0)
    mt = torch.nn.Conv2d(3, 4, (3, 4), padding=padding, padding_mode=mode)
    m = nn.Conv2d(3, 4, (3, 4), padding=padding, padding_mode=mode)
    m.weight.data.copy_(tg.tensor(mt.weight.detach().numpy()))
    m.bias.data.copy_(tg.tensor(mt.bias.detach().numpy()))
    xg, xt = tg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    y, yt = m(xg), mt(xt)
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-4, atol=1e-4)
    y.sum().backward()
    yt.sum().backward()
    np.testing.assert_allclose(xg.grad.numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(m.weight.grad.numpy(), mt.weight.grad.numpy(), rtol=1e-4,
                               atol=1e-3)
    assert repr(m) == repr(mt)
    assert list(m._reversed_padding_repeated_twice) == list(mt._reversed_padding_repeated_twice)


@needs_torch
@pytest.mark.parametrize("mode", ['reflect', 'replicate', 'circular'])
def test_conv1d_and_conv3d_modules_padding_modes(mode):
    rng = np.random.default_rng(8)
    for n, cls, tcls in ((1, nn.Conv1d, torch.nn.Conv1d), (3, nn.Conv3d, torch.nn.Conv3d)):
        x = rng.standard_normal((1, 2) + (5,) * n).astype(np.float32)
        torch.manual_seed(1)
        mt = tcls(2, 3, 3, padding=1, padding_mode=mode)
        m = cls(2, 3, 3, padding=1, padding_mode=mode)
        m.weight.data.copy_(tg.tensor(mt.weight.detach().numpy()))
        m.bias.data.copy_(tg.tensor(mt.bias.detach().numpy()))
        np.testing.assert_allclose(m(tg.tensor(x)).detach().numpy(), mt(torch.tensor(x)).detach().numpy(),
                                   rtol=1e-4, atol=1e-4)
        assert repr(m) == repr(mt)


def test_circular_pad_against_numpy():
    x = np.arange(20, dtype=np.float32).reshape(1, 1, 4, 5)
    got = F.pad(tg.tensor(x), (2, 3, 1, 0), mode='circular').numpy()
    np.testing.assert_array_equal(got, np.pad(x, ((0, 0), (0, 0), (1, 0), (2, 3)), mode='wrap'))
    x3 = np.arange(10, dtype=np.float32).reshape(1, 2, 5)
    np.testing.assert_array_equal(F.pad(tg.tensor(x3), (-1, 2), mode='circular').numpy(),
                                  np.pad(x3[:, :, 1:], ((0, 0), (0, 0), (0, 2)), mode='wrap'))
    xs = tg.tensor(x3, requires_grad=True)  # the gradient folds the wrapped copies back
    F.pad(xs, (5, 0), mode='circular').sum().backward()
    np.testing.assert_array_equal(xs.grad.numpy(), np.full(x3.shape, 2.0, np.float32))


@needs_torch
@pytest.mark.parametrize("pad", [(2, 3), (1, 1, 1, 0), (-1, 2), (0, -2, 1, 1), (1, 1, 2, 2, 1, 0)])
def test_circular_pad_against_torch(pad):
    shape = {2: (1, 3, 5), 4: (1, 2, 4, 5), 6: (1, 1, 3, 4, 5)}[len(pad)]
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    got = F.pad(tg.tensor(x), pad, mode='circular').numpy()
    want = torch.nn.functional.pad(torch.tensor(x), pad, mode='circular').numpy()
    np.testing.assert_array_equal(got, want)


def test_pad_five_dims():
    """pad lists of up to 2 * 8 entries reach the C op (a shape's 8 was once
    the binding's limit for them too)"""
    x = np.arange(2 * 3 * 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 2, 3, 4)
    for mode, np_mode in (('constant', 'constant'), ('replicate', 'edge'),
                          ('reflect', 'reflect'), ('circular', 'wrap')):
        got = F.pad(tg.tensor(x), (1, 2, 1, 0, 1, 1), mode=mode).numpy()
        want = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 0), (1, 2)), mode=np_mode)
        np.testing.assert_array_equal(got, want)
    assert F.pad(tg.zeros(0, 3, 2, 2, 2), (1, 1, 1, 1, 1, 1)).shape == (0, 3, 4, 4, 4)
    got = F.pad(tg.tensor(x), (1, 0, 0, 1, 2, 0, 0, 1, 1, 1)).numpy()  # all five dims
    np.testing.assert_array_equal(got, np.pad(x, ((1, 1), (0, 1), (2, 0), (0, 1), (1, 0))))
    xs = tg.tensor(x, requires_grad=True)
    F.pad(xs, (1, 1, 1, 1, 1, 1), mode='replicate').sum().backward()
    assert xs.grad.numpy().sum() == 4 * 5 * 6 * 2 * 3


def test_errors_as_pytorch():
    x, w = tg.ones(1, 2, 5, 5), tg.ones(3, 2, 3, 3)
    with pytest.raises(RuntimeError, match="not supported for strided convolutions"):
        F.conv2d(x, w, stride=2, padding='same')
    with pytest.raises(RuntimeError, match="Invalid padding string: 'foo'"):
        F.conv2d(x, w, padding='foo')
    with pytest.raises(ValueError, match="not supported for strided convolutions"):
        nn.Conv2d(2, 3, 3, stride=2, padding='same')
    with pytest.raises(ValueError, match="Invalid padding string 'foo'"):
        nn.Conv1d(2, 3, 3, padding='foo')
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        nn.Conv2d(2, 3, 3, padding_mode='mirror')
    with pytest.raises(ValueError, match='Only "zeros" padding mode'):
        nn.ConvTranspose2d(2, 3, 3, padding_mode='reflect')
    with pytest.raises(ValueError, match="wrapping around more than once"):
        F.pad(tg.ones(1, 2, 3), (4, 0), mode='circular')
    assert nn.Conv2d(2, 3, 3, stride=2, padding='valid')(x).shape == (1, 3, 2, 2)
