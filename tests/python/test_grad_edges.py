"""Gradients at the edges of ops' domains, against PyTorch: where a naive
chain rule gives 0 * inf or NaN, PyTorch has a rule (pow with exponent 0,
sqrt/norm at 0, ties, infinite logits, zeros in products)."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch

INF = float('inf')
CASES = [
    ('pow exponent 0 at 0', [0.0, 2.0], lambda L, x: (x ** 0).sum()),
    ('pow tensor exponent 0 at 0', [0.0, 2.0],
     lambda L, x: L.pow(x, L.tensor([0.0, 0.0])).sum()),
    ('pow 0.5 at 0', [0.0, 2.0], lambda L, x: (x ** 0.5).sum()),
    ('pow 2 at 0', [0.0, -2.0], lambda L, x: (x ** 2).sum()),
    ('sqrt at 0', [0.0, 4.0], lambda L, x: x.sqrt().sum()),
    ('norm at 0', [0.0, 0.0], lambda L, x: x.norm()),
    ('abs at 0', [0.0, -1.0], lambda L, x: x.abs().sum()),
    ('relu at 0', [0.0, 1.0], lambda L, x: L.relu(x).sum()),
    ('clamp at its bounds', [0.0, 1.0, 2.0], lambda L, x: x.clamp(0.0, 1.0).sum()),
    ('max ties', [1.0, 3.0, 3.0], lambda L, x: x.max()),
    ('amax ties', [1.0, 3.0, 3.0], lambda L, x: x.amax()),
    ('where over log of negatives', [-1.0, 0.0, 2.0],
     lambda L, x: L.where(x > 0, x.log(), x).sum()),
    ('cumprod with a zero', [2.0, 0.0, 3.0], lambda L, x: x.cumprod(0).sum()),
    ('prod with a zero', [2.0, 0.0, 3.0], lambda L, x: x.prod()),
    ('logsumexp of -inf', [-INF, -INF], lambda L, x: L.logsumexp(x, 0)),
    ('softmax with -inf', [-INF, 0.0, 1.0], lambda L, x: L.softmax(x, 0)[1]),
    ('median', [3.0, 1.0, 2.0, 5.0], lambda L, x: x.median()),
]


@needs_torch
@pytest.mark.parametrize('name,values,fn', CASES, ids=[c[0] for c in CASES])
def test_gradient_edges_match_torch(name, values, fn):
    grads = []
    for L in (torch, tg):
        x = L.tensor(values, requires_grad=True)
        fn(L, x).backward()
        grads.append(np.asarray(x.grad.tolist()))
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6, atol=1e-7, equal_nan=True)


def test_pow_exponent_zero_gradient_in_graphs():
    f = tg.function(lambda x: (x ** 0).sum())
    x = tg.tensor([0.0, 2.0], requires_grad=True)
    f(x).backward()
    assert x.grad.tolist() == [0.0, 0.0]


@needs_torch
@pytest.mark.parametrize('decimals', [0, 1, 2, -2])
def test_round_decimals(decimals):
    v = [1.2345, -2.5, 1234.5678, 0.5, 1.5, -0.051]
    want = torch.round(torch.tensor(v), decimals=decimals).tolist()
    assert tg.round(tg.tensor(v), decimals=decimals).tolist() == want
    assert tg.tensor(v).round(decimals=decimals).tolist() == want
    y = tg.tensor(v)
    y.round_(decimals=decimals)
    assert y.tolist() == want


@pytest.mark.parametrize("traced", [False, True])
def test_cumprod_gradient_through_nan_is_nan_as_pytorch(traced):
    # PyTorch: reversed cumsum of grad * output / input, so a NaN taints the
    # whole slice (the product composition gave finite values beside it)
    nan = float('nan')
    x = [[2.0, nan, 3.0], [2.0, 3.0, nan], [1.0, 2.0, 4.0], [3.0, 0.0, 5.0]]
    a = tg.tensor(x, dtype=tg.float64, requires_grad=True)
    f = tg.function(lambda v: tg.cumprod(v, 1)) if traced else (lambda v: tg.cumprod(v, 1))
    y = f(a)
    y.sum().backward()
    g = a.grad.numpy()
    assert np.isnan(g[:2]).all()
    np.testing.assert_allclose(g[2], [1 + 2 + 8, 1 + 4, 2])
    np.testing.assert_allclose(g[3], [1, 3 + 15, 0])
    np.testing.assert_allclose(y.detach().numpy()[2], [1, 2, 8])
    assert np.isnan(y.detach().numpy()[0, 1:]).all() and y.detach().numpy()[0, 0] == 2
    if torch is not None:
        t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
        torch.cumprod(t, 1).sum().backward()
        np.testing.assert_allclose(g, t.grad.numpy())
