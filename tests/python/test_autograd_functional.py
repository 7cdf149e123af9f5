"""tg.autograd.functional (vjp, jvp, jacobian, hessian, vhp, hvp) against
torch.autograd.functional, with one or several inputs and outputs, and
its errors."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch


def _flat(r):
    out = []
    for t in (r if isinstance(r, (tuple, list)) else [r]):
        out += _flat(t) if isinstance(t, (tuple, list)) else [t.detach().numpy()]
    return out


def _cases(L):
    AF = L.autograd.functional
    x = L.tensor(np.random.RandomState(0).randn(3))
    y = L.tensor(np.random.RandomState(1).randn(2))
    v3 = L.tensor(np.random.RandomState(2).randn(3))
    v2 = L.tensor(np.random.RandomState(3).randn(2))
    f = lambda a, b: (a.sin() * b.exp().sum(), (a * a).sum() * b)  # noqa: E731
    s = lambda a: (a ** 3).sum() + a.prod()  # noqa: E731
    return {
        'vjp': AF.vjp(f, (x, y), (v3, v2)),
        'jvp': AF.jvp(f, (x, y), (v3, v2)),
        'jacobian': AF.jacobian(f, (x, y)),
        'jacobian one': AF.jacobian(lambda a: a.sin() * 2, x),
        'hessian': AF.hessian(s, x),
        'hessian two inputs': AF.hessian(lambda a, b: (a * a).sum() * b.sum(), (x, y)),
        'hvp': AF.hvp(s, x, v3),
        'vhp': AF.vhp(s, x, v3),
        'vjp scalar': AF.vjp(s, x),
    }


@needs_torch
def test_matches_torch():
    want, got = _cases(torch), _cases(tg)
    for k in want:
        a, b = _flat(want[k]), _flat(got[k])
        assert len(a) == len(b), k
        for p, q in zip(a, b):
            assert p.shape == q.shape, k
            np.testing.assert_allclose(q, p, atol=1e-10, err_msg=k)


def test_create_graph_and_errors():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    _, g = tg.autograd.functional.vjp(lambda a: (a ** 3).sum(), x, create_graph=True)
    assert g.requires_grad
    with pytest.raises(RuntimeError, match="can only be None"):
        tg.autograd.functional.vjp(lambda a: a * 2, tg.ones(2))
    with pytest.raises(RuntimeError, match="v has invalid size"):
        tg.autograd.functional.jvp(lambda a: a * 2, tg.ones(2), tg.ones(3))
    with pytest.raises(RuntimeError, match="single element"):
        tg.autograd.functional.hessian(lambda a: a * 2, tg.ones(2))
