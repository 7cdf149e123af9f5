"""The C ops added for ONNX's operators under PyTorch's names (tril/triu,
isnan/isinf/isfinite, prelu, pixel_shuffle/unshuffle) against torch:
values, dtypes, gradients and errors."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch


@needs_torch
@pytest.mark.parametrize("name", ["tril", "triu"])
@pytest.mark.parametrize("k", [-5, -1, 0, 2, 7])
@pytest.mark.parametrize("shape", [(4, 5), (2, 3, 4, 2), (0, 3), (3, 1, 5)])
def test_tril_triu_match_torch(name, k, shape):
    a = np.random.standard_normal(shape)
    x = tg.tensor(a, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)
    y, yt = getattr(tg, name)(x, k), getattr(torch, name)(t, k)
    np.testing.assert_array_equal(y.detach().numpy(), yt.detach().numpy())
    np.testing.assert_array_equal(getattr(x, name)(diagonal=k).detach().numpy(),
                                  yt.detach().numpy())
    g = np.random.standard_normal(shape)
    y.backward(tg.tensor(g))
    yt.backward(torch.tensor(g))
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())


@needs_torch
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "int64", "float32"])
def test_tril_triu_every_dtype(dtype):
    a = (np.arange(24).reshape(2, 3, 4) % 3).astype(dtype)
    for name in ("tril", "triu"):
        got = getattr(tg, name)(tg.tensor(a), 1)
        want = getattr(torch, name)(torch.tensor(a), 1)
        assert str(got.dtype).split('.')[-1] == dtype
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    x = tg.tensor(a)
    x.triu_(-1)  # in place, as Tensor.triu_
    np.testing.assert_array_equal(x.numpy(), np.triu(a, -1))


def test_tril_errors():
    # PyTorch's words: its dim -2 is out of range
    with pytest.raises(IndexError, match=r"expected to be in range of \[-1, 0\], but got -2"):
        tg.tril(tg.zeros(3))
    with pytest.raises(IndexError, match="Dimension specified as -2 but tensor has no dim"):
        tg.triu(tg.tensor(1.0))


VALUES = [0.0, -1.5, np.inf, -np.inf, np.nan, 3e38, -0.0, 1e-310]


@needs_torch
@pytest.mark.parametrize("name", ["isnan", "isinf", "isposinf", "isneginf", "isfinite"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "uint8", "bool"])
def test_value_tests_match_torch(name, dtype):
    with np.errstate(invalid="ignore", over="ignore"):
        a = np.array(VALUES, dtype=np.float64).astype(dtype).reshape(2, 4)
    x = tg.tensor(a)
    got, want = getattr(tg, name)(x), getattr(torch, name)(torch.tensor(a))
    assert got.dtype == tg.bool
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    np.testing.assert_array_equal(getattr(x, name)().numpy(), want.numpy())
    # a strided input
    np.testing.assert_array_equal(getattr(tg, name)(x.t()).numpy(), want.numpy().T)


def test_value_tests_have_no_gradient():
    x = tg.tensor([1.0, np.nan], requires_grad=True)
    for f in (tg.isnan, tg.isinf, tg.isfinite, tg.isposinf, tg.isneginf):
        assert not f(x).requires_grad


@needs_torch
@pytest.mark.parametrize("xshape,wshape", [((2, 3, 4), (3,)), ((2, 3), (1,)), ((5,), (1,)),
                                           ((), (1,)), ((2, 3, 2, 2), ())])
def test_prelu_matches_torch(xshape, wshape):
    a, b = np.random.standard_normal(xshape), np.random.uniform(0.1, 0.9, wshape)
    x, w = tg.tensor(a, requires_grad=True), tg.tensor(b, requires_grad=True)
    t, u = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    for y, yt in ((tg.prelu(x, w), torch.prelu(t, u)),
                  (tg.nn.functional.prelu(x, w), torch.nn.functional.prelu(t, u)),
                  (x.prelu(w), t.prelu(u))):
        np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-15)
    g = np.random.standard_normal(xshape)
    tg.prelu(x, w).backward(tg.tensor(g))
    torch.prelu(t, u).backward(torch.tensor(g))
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(w.grad.numpy(), u.grad.numpy(), rtol=1e-12)


@needs_torch
def test_prelu_module_and_errors():
    m = tg.nn.PReLU(3)
    x = np.random.standard_normal((2, 3, 4)).astype(np.float32)
    np.testing.assert_allclose(m(tg.tensor(x)).detach().numpy(),
                               torch.nn.PReLU(3)(torch.tensor(x)).detach().numpy(), rtol=1e-6)
    with pytest.raises(RuntimeError, match="Mismatch of parameter numbers and input channel "
                                           "size. Found parameter numbers = 2 and channel size = 3"):
        tg.prelu(tg.zeros(2, 3), tg.zeros(2))


@needs_torch
@pytest.mark.parametrize("shape,r", [((1, 8, 2, 3), 2), ((9, 2, 2), 3), ((2, 1, 4, 1, 1), 2),
                                     ((1, 2, 2, 2), 1)])
def test_pixel_shuffle_matches_torch(shape, r):
    a = np.random.standard_normal(shape)
    x, t = tg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    y, yt = tg.pixel_shuffle(x, r), torch.pixel_shuffle(t, r)
    np.testing.assert_array_equal(y.detach().numpy(), yt.detach().numpy())
    z, zt = tg.nn.functional.pixel_unshuffle(y, r), torch.nn.functional.pixel_unshuffle(yt, r)
    np.testing.assert_array_equal(z.detach().numpy(), zt.detach().numpy())
    np.testing.assert_array_equal(tg.nn.PixelShuffle(r)(x).detach().numpy(),
                                  yt.detach().numpy())
    g = np.random.standard_normal(zt.shape)
    z.backward(tg.tensor(g))
    zt.backward(torch.tensor(g))
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())


def test_pixel_shuffle_of_empty_batch():
    # (torch 1.13's pixel_unshuffle returns an empty input as it is)
    assert tg.pixel_shuffle(tg.zeros(0, 4, 2, 2), 2).shape == (0, 1, 4, 4)
    assert tg.pixel_unshuffle(tg.zeros(0, 1, 4, 4), 2).shape == (0, 4, 2, 2)


def test_pixel_shuffle_errors():
    with pytest.raises(RuntimeError, match="divisible by the square of upscale_factor"):
        tg.pixel_shuffle(tg.zeros(1, 3, 2, 2), 2)
    with pytest.raises(RuntimeError, match="at least 3 dimensions"):
        tg.nn.functional.pixel_unshuffle(tg.zeros(4, 4), 2)
    with pytest.raises((RuntimeError, ValueError), match="positive upscale_factor"):
        tg.pixel_shuffle(tg.zeros(1, 4, 2, 2), 0)


@needs_torch
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_scatter_matches_torch(dim):
    a, s = np.random.standard_normal((4, 5)), np.random.standard_normal((4, 5))
    n = a.shape[dim]
    # a permutation per column / row: no position written twice
    idx = np.argsort(np.random.standard_normal((4, 5)), axis=dim) % n
    idx = np.take(idx, range(3), axis=dim)  # smaller than src along dim
    x, src = tg.tensor(a, requires_grad=True), tg.tensor(s, requires_grad=True)
    t, u = torch.tensor(a, requires_grad=True), torch.tensor(s, requires_grad=True)
    y, yt = tg.scatter(x, dim, tg.tensor(idx), src), torch.scatter(t, dim, torch.tensor(idx), u)
    np.testing.assert_array_equal(y.detach().numpy(), yt.detach().numpy())
    np.testing.assert_array_equal(x.scatter(dim, tg.tensor(idx), src).detach().numpy(),
                                  yt.detach().numpy())
    g = np.random.standard_normal((4, 5))
    y.backward(tg.tensor(g))
    # PyTorch cannot give src a gradient when index is smaller than src
    # (it fails); tensorgraph's is zero there: compare on index's extent
    yt.backward(torch.tensor(g), inputs=[t])
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())
    want = np.zeros_like(s)
    np.put_along_axis(want, idx, 0, axis=dim)
    sl = [slice(None)] * 2
    sl[dim] = slice(0, 3)
    want[tuple(sl)] = np.take_along_axis(g, idx, axis=dim)
    np.testing.assert_array_equal(src.grad.numpy(), want)


@needs_torch
def test_scatter_value_and_errors():
    idx = np.array([[1], [0]])
    got = tg.scatter(tg.zeros(2, 3), 1, tg.tensor(idx), value=2.5)
    want = torch.scatter(torch.zeros(2, 3), 1, torch.tensor(idx), value=2.5)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    with pytest.raises((RuntimeError, IndexError), match="out of bounds"):
        tg.scatter(tg.zeros(2, 3), 1, tg.tensor([[3]]), tg.ones(1, 1))
