"""Gradients at the edges PyTorch defines by its backward formulas:
nansum's grad * (x == x) (NaN at a NaN position when the incoming
gradient is inf or NaN), smooth_l1_loss (beta 0 included: -1 at a zero
difference) and huber_loss at 0, at the branch points, at +-inf and NaN."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch

NAN, INF = float('nan'), float('inf')
X = [0., 1., -1., 0.5, -0.5, 2., -2., 1e-3, NAN, INF, -INF]


def _grad(L, fn, x, dtype, gy=None):
    p = L.tensor(x, dtype=getattr(L, dtype), requires_grad=True)
    y = fn(L, p)
    y.backward(L.ones_like(y) if gy is None else L.tensor(gy, dtype=y.dtype))
    return y.detach().numpy(), p.grad.numpy()


def _same(fn, x, dtype='float64', gy=None):
    (ya, ga), (yb, gb) = _grad(tg, fn, x, dtype, gy), _grad(torch, fn, x, dtype, gy)
    np.testing.assert_array_equal(ya, yb)
    np.testing.assert_array_equal(np.signbit(ya), np.signbit(yb))
    np.testing.assert_allclose(ga, gb, rtol=1e-6, atol=0, equal_nan=True)


@needs_torch
@pytest.mark.parametrize('gy', [INF, NAN, -INF, 2.])
@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_nansum_gradient_at_nan_positions(gy, dtype):
    _same(lambda L, x: L.nansum(x), [1., NAN, 3.], dtype, gy)


@needs_torch
@pytest.mark.parametrize('dim,keepdim', [(1, False), (0, True), ((0, 1), False), (-1, True)])
def test_nansum_gradient_along_dims(dim, keepdim):
    x = [[1., NAN, 2.], [NAN, NAN, 3.]]
    gshape = np.asarray(torch.nansum(torch.tensor(x), dim, keepdim).shape)
    gy = np.full(tuple(gshape), INF)
    if gy.size > 1:
        gy.reshape(-1)[1] = 2.
    _same(lambda L, t: L.nansum(t, dim, keepdim), x, 'float64', gy)


@needs_torch
def test_nansum_double_backward():
    out = []
    for L in (tg, torch):
        x = L.tensor([1., NAN, 3.], dtype=L.float64, requires_grad=True)
        g, = L.autograd.grad(L.nansum(x * x), x, create_graph=True)
        g.sum().backward()
        out.append((g.detach().numpy(), x.grad.numpy()))
    np.testing.assert_array_equal(out[0][0], out[1][0])
    np.testing.assert_array_equal(out[0][1], out[1][1])


@needs_torch
@pytest.mark.parametrize('reduction', ['none', 'sum', 'mean'])
@pytest.mark.parametrize('dtype', ['float32', 'float64'])
@pytest.mark.parametrize('loss,kw', [('smooth_l1_loss', dict(beta=0.)),
                                     ('smooth_l1_loss', dict(beta=1.)),
                                     ('smooth_l1_loss', dict(beta=0.5)),
                                     ('huber_loss', dict(delta=1.)),
                                     ('huber_loss', dict(delta=0.5)),
                                     ('huber_loss', dict(delta=2.))])
def test_smooth_l1_and_huber_gradients(loss, kw, reduction, dtype):
    _same(lambda L, x: getattr(L.nn.functional, loss)(x, L.zeros_like(x), reduction=reduction,
                                                       **kw), X, dtype)


@needs_torch
def test_smooth_l1_beta0_target_gradient():
    out = []
    for L in (tg, torch):
        x = L.tensor([0., 1., 2.], dtype=L.float64, requires_grad=True)
        t = L.tensor([0., 1., 3.], dtype=L.float64, requires_grad=True)
        L.nn.functional.smooth_l1_loss(x, t, beta=0.0, reduction='sum').backward()
        out.append((x.grad.numpy(), t.grad.numpy()))
    np.testing.assert_array_equal(out[0][0], out[1][0])
    np.testing.assert_array_equal(out[0][1], out[1][1])
