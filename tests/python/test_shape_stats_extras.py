"""flip of a 0-d tensor, mT's refusal below 2 dims, renorm (values and
gradients) and histogram (equal-width bins, given edges, range, weights,
density, a one-valued input) against PyTorch."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import SANITIZED, needs_torch, torch


@needs_torch
def test_flip_0d_and_mT():
    for dims in ([0], [-1], []):
        assert tg.tensor(3.).flip(dims).item() == torch.tensor(3.).flip(dims).item()
    with pytest.raises(IndexError):
        tg.tensor(3.).flip([1])
    with pytest.raises(RuntimeError, match="only supported on matrices"):
        tg.ones(3).mT
    assert tg.ones(2, 3, 4).mT.shape == (2, 4, 3)


@needs_torch
@pytest.mark.parametrize('p,dim,maxnorm', [(2, 0, 1.), (1, 1, 2.), (3, -1, 0.5), (2, 1, 100.)])
def test_renorm_values_and_gradients(p, dim, maxnorm):
    a = np.random.RandomState(2).uniform(-2, 2, (3, 4))
    out = []
    for L in (tg, torch):
        x = L.tensor(a, requires_grad=True)
        y = L.renorm(x, p, dim, maxnorm)
        (y * L.tensor(np.cos(np.arange(12.)).reshape(3, 4))).sum().backward()
        out.append((y.detach().numpy(), x.grad.numpy(), x.detach().renorm(p, dim, maxnorm).numpy()))
    for g, t in zip(*out):
        np.testing.assert_allclose(g, t, rtol=1e-10, atol=1e-12)


CASES = [
    (lambda L: L.tensor([1., 2., 1., 4.]), dict(bins=3)),
    (lambda L: L.tensor([1., 1.]), dict(bins=2)),
    (lambda L: L.tensor([1., 2., 3., 4.]), dict(bins=3, range=(0., 3.), density=True)),
    (lambda L: L.tensor([1., 2., 3., 4.]), dict(bins=None, weight=True)),
    (lambda L: L.tensor(np.random.RandomState(0).normal(size=200)), dict(bins=7)),
    (lambda L: L.tensor(np.random.RandomState(1).normal(size=50).astype(np.float32)),
     dict(bins=5, density=True)),
]


@needs_torch
@pytest.mark.parametrize('case', range(len(CASES)))
def test_histogram_as_torch(case):
    make, kw = CASES[case]
    res = []
    for L in (tg, torch):
        kw2 = dict(kw)
        if kw2.get('bins') is None:
            kw2['bins'] = L.tensor([0., 1.5, 4.])
        if kw2.get('weight'):
            kw2['weight'] = L.tensor([1., 2., 3., 4.])
        h, e = L.histogram(make(L), **kw2)
        res.append((h.numpy(), e.numpy(), str(h.dtype).split('.')[-1]))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-6)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-6)
    assert res[0][2] == res[1][2]


@pytest.mark.skipif(SANITIZED, reason="PyTorch's errors abort under the sanitizers")
@needs_torch
def test_histogram_refuses_integers():
    for L in (tg, torch):
        with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
            L.histogram(L.tensor([1, 2]), 2)
