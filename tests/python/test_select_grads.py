"""Gradients of the value-picking reductions against PyTorch: max/min with
dim send the gradient to the returned index alone (ties, NaNs), the full
max/min/median spread it over the tied elements (over the NaNs when the
result is NaN), mode's values carry a gradient; var/std(input, unbiased)
and the argmax of bools."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch

TIES = np.array([[1, 3, 3, 0], [2, 2, 2, 2]], dtype=np.float32)
NANS = np.array([[1, np.nan, 3, np.nan], [2, 5, 5, 0]], dtype=np.float32)


def _grads(fn, a):
    out = []
    for L in (torch, tg):
        x = L.tensor(a)
        x.requires_grad_(True)
        r = fn(L, x)
        v = r[0] if isinstance(r, tuple) else r
        w = np.cos(np.arange(v.numel())).reshape(tuple(v.shape)).astype(np.float32)
        (v * L.tensor(w)).sum().backward()
        out.append((v.detach().numpy(), x.grad.numpy()))
    (tv, tgr), (gv, ggr) = out
    np.testing.assert_allclose(gv, tv, equal_nan=True)
    np.testing.assert_allclose(ggr, tgr, rtol=1e-6, equal_nan=True)


CASES = {
    'max dim': lambda L, x: L.max(x, 1),
    'min dim keepdim': lambda L, x: L.min(x, 1, keepdim=True),
    'max method dim0': lambda L, x: x.max(0),
    'max full': lambda L, x: L.max(x),
    'min full': lambda L, x: x.min(),
    'median full': lambda L, x: L.median(x),
    'mode': lambda L, x: L.mode(x, 1),
}


@needs_torch
@pytest.mark.parametrize('name', sorted(CASES))
@pytest.mark.parametrize('data', ['ties', 'nans'])
def test_picking_reduction_grads(name, data):
    if name == 'mode' and data == 'nans':
        pytest.skip("mode's index among NaNs is PyTorch's implementation detail")
    _grads(CASES[name], TIES if data == 'ties' else NANS)


def test_full_max_value_is_exact():
    x = tg.tensor([0.1, 0.1, 0.1, -3.0], requires_grad=True)
    assert tg.max(x).item() == tg.tensor(0.1).item()
    tg.max(x).backward()
    assert x.grad.tolist() == pytest.approx([1 / 3, 1 / 3, 1 / 3, 0])
    inf = tg.tensor([float('inf'), 1.0, float('inf')], requires_grad=True)
    inf.max().backward()
    assert inf.grad.tolist() == [0.5, 0.0, 0.5]


@needs_torch
@pytest.mark.parametrize('fn', ['var', 'std', 'var_mean', 'std_mean'])
def test_unbiased_as_second_positional(fn):
    a = np.random.default_rng(0).normal(size=(3, 4)).astype(np.float32)
    t = getattr(torch, fn)(torch.tensor(a), False)
    g = getattr(tg, fn)(tg.tensor(a), False)
    for tt, gg in zip(t if isinstance(t, tuple) else (t,), g if isinstance(g, tuple) else (g,)):
        assert gg.shape == tuple(tt.shape) == ()
        assert gg.item() == pytest.approx(tt.item(), rel=1e-5)
    assert tg.tensor(a).var(False).item() == pytest.approx(torch.tensor(a).var(False).item())


@needs_torch
def test_max_of_bools_along_dim():
    b = np.array([[False, True, True], [False, False, False]])
    t, g = torch.tensor(b).max(1), tg.tensor(b).max(1)
    assert g.values.tolist() == t.values.tolist()
    assert g.indices.tolist() == t.indices.tolist()
