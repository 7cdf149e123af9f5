"""nn.utils.weight_norm / remove_weight_norm against PyTorch: parameter
names and shapes, outputs and the gradients of g and v, removal."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch


@needs_torch
@pytest.mark.parametrize('dim', [0, 1, None])
def test_weight_norm_matches_torch(dim):
    w = np.random.RandomState(0).randn(4, 3).astype('float32')
    x = np.random.RandomState(1).randn(2, 3).astype('float32')
    res = []
    for L in (torch, tg):
        m = L.nn.Linear(3, 4)
        with L.no_grad():
            m.weight.copy_(L.tensor(w))
            m.bias.zero_()
        m = L.nn.utils.weight_norm(m, dim=dim)
        names = [n for n, _ in m.named_parameters()]
        y = m(L.tensor(x))
        (y * y).sum().backward()
        res.append((names, y.detach().numpy(), m.weight_g.grad.numpy(), m.weight_v.grad.numpy()))
        L.nn.utils.remove_weight_norm(m)
        res[-1] += ([n for n, _ in m.named_parameters()], m.weight.detach().numpy())
    (tn, ty, tgg, tgv, tafter, tw), (gn, gy, ggg, ggv, gafter, gw) = res
    assert gn == tn and gafter == tafter
    np.testing.assert_allclose(gy, ty, atol=1e-6)
    np.testing.assert_allclose(ggg, tgg, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ggv, tgv, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(gw, tw, atol=1e-6)


def test_weight_norm_errors():
    m = tg.nn.utils.weight_norm(tg.nn.Linear(2, 2))
    with pytest.raises(RuntimeError, match="two weight_norm"):
        tg.nn.utils.weight_norm(m)
    with pytest.raises(ValueError, match="not found"):
        tg.nn.utils.remove_weight_norm(tg.nn.Linear(2, 2))
