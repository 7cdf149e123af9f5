"""fmod/remainder, cumsum, arange, vector norms and F.normalize, topk/sort,
F.pad modes: values and gradients against PyTorch (skipped without it),
and the checks PyTorch makes."""
import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.nn.functional as F
from conftest import close, needs_torch, torch


def pair(x, requires_grad=True):
    """the same float64 data as a tensorgraph and a torch tensor"""
    a = tg.tensor(x, dtype=tg.float64, requires_grad=requires_grad)
    b = torch.tensor(x, dtype=torch.float64, requires_grad=requires_grad)
    return a, b


def grads_match(out_tg, out_torch, ins_tg, ins_torch, rtol=1e-10, atol=1e-12):
    """forward values equal; gradients of sum(out * w) for a fixed w equal"""
    close(out_tg, out_torch.detach().numpy(), rtol, atol)
    w = np.random.RandomState(1).uniform(-1, 1, out_torch.shape)
    (out_tg * tg.tensor(w, dtype=out_tg.dtype)).sum().backward()
    (out_torch * torch.tensor(w, dtype=out_torch.dtype)).sum().backward()
    for a, b in zip(ins_tg, ins_torch):
        close(a.grad, b.grad.numpy(), rtol, atol)


# ---- fmod / remainder --------------------------------------------------------------
@needs_torch
@pytest.mark.parametrize("name", ["fmod", "remainder"])
def test_fmod_remainder_float_against_torch(name):
    x = np.random.uniform(-5, 5, (3, 4))
    y = np.random.uniform(0.5, 2, (4,)) * np.array([1, -1, 1, -1])
    a, ta = pair(x)
    b, tb = pair(y)
    grads_match(getattr(tg, name)(a, b), getattr(torch, name)(ta, tb), [a, b], [ta, tb])
    close(getattr(a.detach(), name)(b.detach()), getattr(torch, name)(ta, tb).detach().numpy())


@needs_torch
@pytest.mark.parametrize("name", ["fmod", "remainder"])
def test_fmod_remainder_integers_against_torch(name):
    x = np.array([[7, -7, 7, -7, 0, 5]], dtype=np.int64)
    y = np.array([[3], [-3], [2]], dtype=np.int64)
    got = getattr(tg, name)(tg.tensor(x), tg.tensor(y))
    want = getattr(torch, name)(torch.tensor(x), torch.tensor(y))
    assert got.dtype == tg.int64
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    # a Python number as the divisor, and the % operator (remainder)
    np.testing.assert_array_equal(getattr(tg, name)(tg.tensor(x), 4).numpy(),
                                  getattr(torch, name)(torch.tensor(x), 4).numpy())
    np.testing.assert_array_equal((tg.tensor(x) % -4).numpy(), (torch.tensor(x) % -4).numpy())
    with pytest.raises((RuntimeError, ValueError), match="^ZeroDivisionError$"):
        getattr(tg, name)(tg.tensor(x), 0)


def test_mod_operator_gradient():
    a = tg.tensor([5.5, -5.5], requires_grad=True)
    b = tg.tensor([2.0, 2.0], requires_grad=True)
    (a % b).sum().backward()
    close(a.grad, [1, 1])
    close(b.grad, [-2, 3])  # -floor(a / b)


# ---- cumsum -------------------------------------------------------------------------
@needs_torch
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumsum_against_torch(dim):
    a, ta = pair(np.random.uniform(-1, 1, (3, 4, 2)))
    grads_match(tg.cumsum(a, dim), torch.cumsum(ta, dim), [a], [ta])
    close(a.detach().cumsum(dim), ta.detach().cumsum(dim).numpy())


@needs_torch
def test_cumsum_dtypes_against_torch():
    x = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int32)
    got, want = tg.cumsum(tg.tensor(x), 1), torch.cumsum(torch.tensor(x), 1)
    assert got.dtype == tg.int64 and want.dtype == torch.int64
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    got = tg.cumsum(tg.tensor(x), 0, dtype=tg.float64)
    assert got.dtype == tg.float64
    close(got, torch.cumsum(torch.tensor(x), 0, dtype=torch.float64).numpy())
    b = [True, False, True]
    np.testing.assert_array_equal(tg.cumsum(tg.tensor(b), 0).numpy(),
                                  torch.cumsum(torch.tensor(b), 0).numpy())
    with pytest.raises((IndexError, ValueError, RuntimeError)):
        tg.cumsum(tg.tensor(x), 2)


# ---- arange (the range op) ------------------------------------------------------------
@needs_torch
@pytest.mark.parametrize("args,kw", [((5,), {}), ((0, 1, 0.1), {}), ((10, 0, -3), {}),
                                     ((-1.0, 1.0, 0.3), {"dtype": "float64"}), ((3, 3), {}),
                                     ((1, 2.5, 0.5), {})])
def test_arange_against_torch(args, kw):
    got = tg.arange(*args, **{k: getattr(tg, v) for k, v in kw.items()})
    want = torch.arange(*args, **{k: getattr(torch, v) for k, v in kw.items()})
    assert str(got.dtype).split('.')[-1] == str(want.dtype).split('.')[-1]
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_arange_checks():
    with pytest.raises(RuntimeError, match="inconsistent with step sign"):
        tg.arange(5, 0, 1)
    with pytest.raises(RuntimeError, match="nonzero"):
        tg.arange(0, 5, 0)


# ---- vector norms, Tensor.norm, F.normalize ----------------------------------------------
@needs_torch
@pytest.mark.parametrize("ord,dim,keepdim", [(2, None, False), (2, 1, True), (1, (0, 2), False),
                                             (1, -1, True), (2, (1, 2), False)])
def test_vector_norm_against_torch(ord, dim, keepdim):
    a, ta = pair(np.random.uniform(-1, 1, (2, 3, 4)))
    grads_match(tg.linalg.vector_norm(a, ord, dim, keepdim),
                torch.linalg.vector_norm(ta, ord, dim, keepdim), [a], [ta])


@needs_torch
def test_norm_method_and_zero_gradient_against_torch():
    x = np.array([[3.0, -4.0, 0.0], [0.0, 0.0, 0.0]])
    for p in ('fro', 1, 2):
        a, ta = pair(x)
        grads_match(a.norm(p, 1), ta.norm(p, 1), [a], [ta])  # zero row: 0, not NaN
    a, ta = pair(x)
    grads_match(tg.norm(a), torch.norm(ta), [a], [ta])
    a, ta = pair(x)  # other orders: composed (tests/python/test_norms_alpha_dtype.py)
    grads_match(tg.linalg.vector_norm(a, 3), torch.linalg.vector_norm(ta, 3), [a], [ta])
    with pytest.raises(RuntimeError, match="floating point"):
        tg.linalg.vector_norm(tg.tensor([1, 2]))


def test_legacy_norm_of_no_elements_is_zero_and_nuclear_norms():
    # PyTorch's torch.norm gives 0 over no elements for every p (linalg's
    # vector_norm refuses negative and infinite ones there)
    for p in (-1, -2, 0.5, 2, float('inf'), float('-inf'), 0, 'fro', 'nuc'):
        assert tg.zeros(0, 0).norm(p).tolist() == 0.0
        assert tg.zeros(0, 0).norm(p, keepdim=True).tolist() == [[0.0]]
    assert tg.zeros(0, 3).norm(-1, dim=0).tolist() == [0.0] * 3
    assert tg.zeros(2, 0).norm(-1, dim=0).tolist() == []
    with pytest.raises(RuntimeError, match="no elements|identity"):
        tg.linalg.vector_norm(tg.zeros(0), -1)
    a = np.array([[3.0, 0.0], [4.0, 5.0], [0.0, 1.0]])
    want = np.linalg.norm(a, 'nuc')
    assert abs(tg.tensor(a).norm('nuc').item() - want) < 1e-12
    got = tg.norm(tg.tensor(np.stack([a, 2 * a])), 'nuc', dim=(1, 2), keepdim=True)
    assert tuple(got.shape) == (2, 1, 1) and abs(got[1].item() - 2 * want) < 1e-12
    with pytest.raises(RuntimeError, match="size 2"):
        tg.norm(tg.tensor(a), 'nuc', dim=1)
    with pytest.raises(RuntimeError, match="2 dimensions"):
        tg.norm(tg.tensor(a[0]), 'nuc')


@needs_torch
@pytest.mark.parametrize("p,dim", [(2.0, 1), (1.0, 0), (2.0, -1)])
def test_normalize_against_torch(p, dim):
    x = np.random.uniform(-1, 1, (3, 4))
    x[1] = 0  # a zero vector: divided by eps, as PyTorch
    a, ta = pair(x)
    grads_match(F.normalize(a, p, dim), torch.nn.functional.normalize(ta, p, dim), [a], [ta],
                rtol=1e-9, atol=1e-6)


# ---- topk, sort, argsort ------------------------------------------------------------------
@needs_torch
@pytest.mark.parametrize("k,dim,largest", [(3, 1, True), (2, -1, False), (1, 0, True), (4, 0, False)])
def test_topk_against_torch(k, dim, largest):
    a, ta = pair(np.random.uniform(-1, 1, (4, 5)))
    got, want = tg.topk(a, k, dim, largest), torch.topk(ta, k, dim, largest)
    np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
    assert got.indices.dtype == tg.int64
    grads_match(got.values, want.values, [a], [ta])
    v, i = a.detach().topk(k, dim, largest)  # the method, unpacked
    np.testing.assert_array_equal(i.numpy(), want.indices.numpy())


@needs_torch
def test_sort_argsort_against_torch():
    x = np.array([[2, 1, 2, 0, 1], [5, 5, 4, 4, 9]], dtype=np.int64)
    for desc in (False, True):
        got = tg.sort(tg.tensor(x), 1, desc)
        want = torch.sort(torch.tensor(x), dim=1, descending=desc, stable=True)
        np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
        np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
        np.testing.assert_array_equal(tg.tensor(x).argsort(0, desc).numpy(),
                                      torch.argsort(torch.tensor(x), 0, desc).numpy())
    a, ta = pair(np.random.uniform(-1, 1, (3, 4)))
    grads_match(a.sort(0).values, ta.sort(0).values, [a], [ta])
    n = [1.0, float('nan'), 3.0, float('nan')]
    np.testing.assert_array_equal(tg.topk(tg.tensor(n), 2).indices.numpy(),
                                  torch.topk(torch.tensor(n), 2).indices.numpy())
    with pytest.raises((RuntimeError, ValueError), match="k"):
        tg.topk(tg.tensor(x), 6)


# ---- F.pad modes ----------------------------------------------------------------------------
@needs_torch
@pytest.mark.parametrize("mode,pad,shape", [("reflect", (2, 1), (1, 2, 3)),
                                            ("reflect", (1, 2, 2, 1), (2, 1, 3, 4)),
                                            ("replicate", (2, 1, 1, 0), (1, 2, 3)),
                                            ("replicate", (1, 1, 0, 2, 3, 0), (1, 2, 3, 2)),
                                            ("constant", (1, 2), (2, 3))])
def test_pad_modes_against_torch(mode, pad, shape):
    a, ta = pair(np.random.uniform(-1, 1, shape))
    grads_match(F.pad(a, pad, mode), torch.nn.functional.pad(ta, pad, mode), [a], [ta])


def test_pad_mode_checks():
    x = tg.zeros(1, 2, 3)
    with pytest.raises((RuntimeError, ValueError), match="less than"):
        F.pad(x, (3, 0), mode='reflect')  # PyTorch: pad must be < the dim
    with pytest.raises(ValueError, match="wrapping around more than once"):
        F.pad(x, (4, 0), mode='circular')  # PyTorch: at most the dim's size
    with pytest.raises(NotImplementedError, match="2D, 3D, 4D, 5D"):
        F.pad(tg.zeros(3), (1, 1), mode='replicate')
