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
    with pytest.raises((RuntimeError, ValueError), match="division by zero"):
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
