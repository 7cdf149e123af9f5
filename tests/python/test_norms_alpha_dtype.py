"""linalg.vector_norm (every ord), matrix_norm, norm; sum/mean/prod with
dtype; add/sub with alpha: against PyTorch, values and gradients."""
import math

import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch


def _data():
    a = np.random.RandomState(0).randn(3, 4, 5).astype('float32')
    a[0, 0, 0] = 0
    a[:, 1, :] = 0  # whole zero slices: norms of 0 and gradients at zeros
    return a


def _check(f, x, atol=1e-5):
    xa, xb = torch.tensor(x, requires_grad=True), tg.tensor(x, requires_grad=True)
    ya, yb = f(torch, xa), f(tg, xb)
    assert tuple(yb.shape) == tuple(ya.shape)
    np.testing.assert_allclose(yb.detach().numpy(), ya.detach().numpy(), rtol=1e-5, atol=atol)
    ya.sum().backward()
    yb.sum().backward()
    if xa.grad is None:  # PyTorch's undefined gradient (ord 0): zeros here
        assert xb.grad is None or not xb.grad.numpy().any()
        return
    np.testing.assert_allclose(xb.grad.numpy(), xa.grad.numpy(), rtol=1e-5, atol=atol)


@needs_torch
@pytest.mark.parametrize('ord', [1, 2, 3, 0.5, math.inf, -math.inf, 0, -1, -2.5])
def test_vector_norm(ord):
    _check(lambda L, x: L.linalg.vector_norm(x, ord, dim=(0, 2), keepdim=ord == 3), _data(),
           atol=1e-4)


@needs_torch
@pytest.mark.parametrize('ord', ['fro', 1, -1, math.inf, -math.inf])
def test_matrix_norm_and_norm(ord):
    a = _data()
    _check(lambda L, x: L.linalg.matrix_norm(x, ord), a)
    _check(lambda L, x: L.linalg.matrix_norm(x, ord, dim=(2, 0), keepdim=True), a)
    _check(lambda L, x: L.linalg.norm(x, ord), a[0] + 1)


@needs_torch
@pytest.mark.parametrize('kw', [{}, {'dim': 1}, {'dim': (1, 2)}, {'ord': 3, 'dim': 1}])
def test_norm_dims(kw):
    _check(lambda L, x: L.linalg.norm(x, **kw), _data())


def test_norm_errors():
    with pytest.raises(RuntimeError, match="1D or 2D"):
        tg.linalg.norm(tg.ones(2, 2, 2), 1)
    assert abs(float(tg.linalg.matrix_norm(tg.ones(2, 2), 'nuc')) - 2) < 1e-6  # now computed
    with pytest.raises(RuntimeError, match="inf norm on an empty"):
        tg.linalg.vector_norm(tg.ones(0), math.inf)


@needs_torch
def test_reduction_dtype_and_alpha():
    for L in (torch, tg):
        x = L.arange(12.).reshape(3, 4)
        i = L.tensor([1, 2])
        got = [x.mean(dtype=L.float64), i.sum(dtype=L.float32), i.mean(dtype=L.float32),
               L.prod(i, dtype=L.float64), x.sum(1, dtype=L.int32),
               L.sum(x, dim=0, keepdim=True, dtype=L.float64),
               L.sub(x, L.ones(3, 4), alpha=3), L.add(x, 2, alpha=2), x.add(x, alpha=-1),
               L.add(i, i, alpha=3)]
        if L is torch:
            want = got
        else:
            for w, g in zip(want, got):
                assert str(g.dtype).split('.')[-1] == str(w.dtype).split('.')[-1]
                assert g.tolist() == w.tolist()
    with pytest.raises(RuntimeError, match="alpha must not be a floating point"):
        tg.add(tg.tensor([1]), tg.tensor([1]), alpha=0.5)
    y = tg.tensor([1.0, 2.0], requires_grad=True)
    tg.sub(tg.ones(2), y, alpha=3).sum().backward()
    assert y.grad.tolist() == [-3.0, -3.0]
