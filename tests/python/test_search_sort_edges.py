"""Against PyTorch: sort/argsort of bools, searchsorted of NaN queries
(after everything), unique keeping NaNs distinct, cdist's gradient at
equal rows (0, not NaN), bmm's shape checks (no broadcasting)."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch


@needs_torch
def test_sort_bools():
    b = np.array([[True, False, True, False], [False, False, True, True]])
    for desc in (False, True):
        t = torch.sort(torch.tensor(b), descending=desc, stable=True)
        g = tg.sort(tg.tensor(b), descending=desc, stable=True)
        assert g.values.dtype == tg.bool
        assert g.values.tolist() == t.values.tolist()
        assert g.indices.tolist() == t.indices.tolist()
        assert tg.argsort(tg.tensor(b), descending=desc).tolist() == \
            torch.argsort(torch.tensor(b), descending=desc, stable=True).tolist()


@needs_torch
def test_searchsorted_nan_query():
    b = [0., 1., 2., float('inf')]
    v = [float('nan'), float('inf'), -float('inf'), 1.0]
    for right in (False, True):
        t = torch.searchsorted(torch.tensor(b), torch.tensor(v), right=right)
        g = tg.searchsorted(tg.tensor(b), tg.tensor(v), right=right)
        assert g.tolist() == t.tolist()


def test_unique_keeps_nans_distinct():
    u = tg.unique(tg.tensor([3.0, float('nan'), 1.0, float('nan'), 3.0]))
    assert u.shape == (4,)
    assert u[:2].tolist() == [1.0, 3.0] and bool(u[2:].isnan().all())


@needs_torch
@pytest.mark.parametrize('p', [1, 1.5, 2, 3, float('inf')])
def test_cdist_gradient_at_equal_rows(p):
    rng = np.random.default_rng(2)
    a = rng.normal(size=(2, 4, 3)).astype(np.float32)
    b = rng.normal(size=(2, 5, 3)).astype(np.float32)
    b[0, 1] = a[0, 2]
    b[1, 0] = a[1, 0]
    grads = []
    for L in (torch, tg):
        x, y = L.tensor(a), L.tensor(b)
        x.requires_grad_(True)
        y.requires_grad_(True)
        d = L.cdist(x, y, p=p)
        w = L.tensor(np.cos(np.arange(d.numel())).reshape(tuple(d.shape)).astype(np.float32))
        (d * w).sum().backward()
        grads.append((d.detach().numpy(), x.grad.numpy(), y.grad.numpy()))
    for t, g in zip(*grads):
        assert np.isfinite(g).all()
        np.testing.assert_allclose(g, t, rtol=1e-4, atol=1e-5)


def test_bmm_does_not_broadcast():
    with pytest.raises(RuntimeError, match="first two dimensions of batch2"):
        tg.bmm(tg.ones(2, 2, 3), tg.ones(1, 3, 2))
    with pytest.raises(RuntimeError, match="batch1 must be a 3D tensor"):
        tg.ones(2, 3).bmm(tg.ones(2, 3, 2))
    assert tg.bmm(tg.ones(2, 2, 3), tg.ones(2, 3, 4)).shape == (2, 2, 4)


@needs_torch
def test_cat_skips_legacy_empty_1d():
    cases = [([np.zeros(0, np.float32), np.ones((2, 3), np.int64)], 0),
             ([np.ones((2, 3), np.int64), np.zeros(0, np.int32)], 1),
             ([np.zeros(0, np.float32), np.arange(3, dtype=np.float32)], 0)]
    for arrays, dim in cases:
        t = torch.cat([torch.tensor(a) for a in arrays], dim)
        g = tg.cat([tg.tensor(a) for a in arrays], dim)
        assert str(g.dtype).split('.')[-1] == str(t.dtype).split('.')[-1]
        assert g.tolist() == t.tolist()
    x = tg.ones(2, 3, requires_grad=True)
    tg.concat([tg.tensor([]), x * 2]).sum().backward()
    assert x.grad.tolist() == [[2.0] * 3] * 2
    assert tg.concatenate is tg.cat
