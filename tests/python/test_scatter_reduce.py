"""scatter_reduce / index_reduce / put / take / take_along_dim and
masked_fill's dtype against PyTorch: values and gradients, duplicate
indices, include_self both ways, negative flat indices, broadcasting."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch

RNG = np.random.default_rng(7)


def _pair(a, grad=False):
    t, g = torch.tensor(a), tg.tensor(a)
    if grad:
        t.requires_grad_(True)
        g.requires_grad_(True)
    return t, g


def _check(t_out, g_out, t_in=(), g_in=()):
    assert str(g_out.dtype).split('.')[-1] == str(t_out.dtype).split('.')[-1]
    np.testing.assert_allclose(g_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    if t_in:
        w = np.cos(np.arange(t_out.numel())).reshape(tuple(t_out.shape))
        (t_out * torch.tensor(w, dtype=t_out.dtype)).sum().backward()
        (g_out * tg.tensor(w, dtype=g_out.dtype)).sum().backward()
        for t, g in zip(t_in, g_in):
            np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-6)


@needs_torch
@pytest.mark.parametrize('reduce', ['sum', 'prod', 'mean', 'amax', 'amin'])
@pytest.mark.parametrize('include_self', [True, False])
def test_scatter_reduce_values_and_grads(reduce, include_self):
    x = RNG.uniform(0.5, 2, (4, 5)).astype(np.float32)
    src = RNG.uniform(0.5, 2, (6, 5)).astype(np.float32)
    idx = RNG.integers(0, 4, (6, 5))           # duplicates and untouched rows
    tx, gx = _pair(x, True)
    ts, gs = _pair(src, True)
    t = torch.scatter_reduce(tx, 0, torch.tensor(idx), ts, reduce, include_self=include_self)
    g = tg.scatter_reduce(gx, 0, tg.tensor(idx), gs, reduce, include_self=include_self)
    _check(t, g, (tx, ts), (gx, gs))


@needs_torch
@pytest.mark.parametrize('reduce', ['sum', 'prod', 'mean', 'amax', 'amin'])
def test_scatter_reduce_int64_keeps_extremes(reduce):
    x = RNG.integers(-9, 9, (4, 5))
    src = RNG.integers(-9, 9, (6, 5))
    idx = RNG.integers(0, 4, (6, 5))
    for inc in (True, False):
        t = torch.tensor(x).scatter_reduce(0, torch.tensor(idx), torch.tensor(src), reduce,
                                           include_self=inc)
        g = tg.tensor(x).scatter_reduce(0, tg.tensor(idx), tg.tensor(src), reduce,
                                        include_self=inc)
        assert g.tolist() == t.tolist()


@needs_torch
def test_scatter_multiply_compounds_duplicates():
    x = RNG.normal(size=(4, 5)).astype(np.float32)
    idx, src = np.array([[0, 1], [0, 1], [0, 3]]), RNG.normal(size=(3, 2)).astype(np.float32)
    t = torch.tensor(x).scatter_(1, torch.tensor(idx), torch.tensor(src), reduce='multiply')
    g = tg.tensor(x).scatter_(1, tg.tensor(idx), tg.tensor(src), reduce='multiply')
    _check(t, g)


@needs_torch
@pytest.mark.parametrize('reduce', ['prod', 'mean', 'amax', 'amin'])
def test_index_reduce(reduce):
    x = RNG.normal(size=(4, 5)).astype(np.float32)
    src = RNG.normal(size=(3, 5)).astype(np.float32)
    for inc in (True, False):
        tx, gx = _pair(x, True)
        ts, gs = _pair(src, True)
        t = tx.index_reduce(0, torch.tensor([0, 2, 0]), ts, reduce, include_self=inc)
        g = gx.index_reduce(0, tg.tensor([0, 2, 0]), gs, reduce, include_self=inc)
        _check(t, g, (tx, ts), (gx, gs))


@needs_torch
def test_put_take_negative_indices_and_grads():
    x = RNG.normal(size=(4, 5)).astype(np.float32)
    src = RNG.normal(size=3).astype(np.float32)
    idx = np.array([0, 0, -1])
    for acc in (True, False):
        tx, gx = _pair(x, True)
        ts, gs = _pair(src, True)
        i = idx if acc else np.array([1, 7, -1])
        _check(tx.put(torch.tensor(i), ts, accumulate=acc),
               gx.put(tg.tensor(i), gs, accumulate=acc), (tx, ts), (gx, gs))
    tx, gx = _pair(x, True)
    ti = np.array([[0, 19], [-1, -20]])
    _check(torch.take(tx, torch.tensor(ti)), tg.take(gx, tg.tensor(ti)), (tx,), (gx,))
    assert tg.take(tg.tensor(x), tg.tensor(3)).shape == ()
    with pytest.raises(IndexError, match="out of range"):
        tg.take(tg.tensor(x), tg.tensor([20]))
    with pytest.raises(RuntimeError, match="same number of elements"):
        tg.tensor(x).put(tg.tensor([1, 2]), tg.tensor([1.0]))


@needs_torch
def test_take_along_dim_broadcasts_other_dims():
    x = RNG.normal(size=(4, 1, 3)).astype(np.float32)
    idx = RNG.integers(0, 4, (2, 5, 1))
    tx, gx = _pair(x, True)
    _check(torch.take_along_dim(tx, torch.tensor(idx), dim=0),
           tg.take_along_dim(gx, tg.tensor(idx), dim=0), (tx,), (gx,))
    assert tg.gather(gx, 0, tg.tensor([[[1]]]), sparse_grad=False).shape == (1, 1, 1)


@needs_torch
def test_masked_fill_keeps_self_dtype():
    ints = RNG.integers(-5, 5, (4, 5))
    mask = RNG.random((4, 5)) > 0.5
    t = torch.tensor(ints).masked_fill(torch.tensor(mask), 1.5)
    g = tg.tensor(ints).masked_fill(tg.tensor(mask), 1.5)
    _check(t, g)
    x = RNG.normal(size=(4, 5)).astype(np.float32)
    tx, gx = _pair(x, True)
    tv, gv = _pair(np.array(2.5), True)    # float64 value, float32 result
    _check(tx.masked_fill(torch.tensor(mask), tv), gx.masked_fill(tg.tensor(mask), gv),
           (tx, tv), (gx, gv))
    with pytest.raises(RuntimeError, match="0-dimensional value"):
        gx.masked_fill(tg.tensor(mask), tg.tensor([1.0, 2.0]))
