"""In-place Tensor methods added to match PyTorch's (eq_ ... ge_, fmod_,
remainder_, multiply_, subtract_, true_divide_, logical_*_, addmm_,
cumsum_, negative_, absolute_, arctan2_, mvlgamma_, fill_diagonal_) and
is_cpu: values against PyTorch, gradients through the recorded update."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import close, needs_torch, torch

X = np.array([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]])
Y = np.array([[1.5, 2.0, -3.0], [0.25, 4.0, 2.0]])


@needs_torch
@pytest.mark.parametrize("name", ["eq_", "ne_", "lt_", "le_", "gt_", "ge_", "fmod_",
                                  "remainder_", "multiply_", "subtract_", "true_divide_",
                                  "logical_and_", "logical_or_", "logical_xor_", "arctan2_"])
def test_binary_inplace_against_torch(name):
    a, t = tg.tensor(X), torch.tensor(X)
    r = getattr(a, name)(tg.tensor(Y))
    getattr(t, name)(torch.tensor(Y))
    assert r is a and a.dtype == tg.float64
    close(a, t.numpy(), 1e-12)


@needs_torch
@pytest.mark.parametrize("name", ["logical_not_", "negative_", "absolute_"])
def test_unary_inplace_against_torch(name):
    a, t = tg.tensor(X), torch.tensor(X)
    getattr(a, name)()
    getattr(t, name)()
    close(a, t.numpy())


@needs_torch
def test_inplace_with_arguments_and_gradients():
    a, t = tg.tensor(X), torch.tensor(X)
    a.cumsum_(1), t.cumsum_(1)
    close(a, t.numpy())
    m = np.random.RandomState(0).normal(size=(2, 4))
    a, t = tg.tensor(m), torch.tensor(m)
    b, c = np.random.RandomState(1).normal(size=(2, 3)), np.random.RandomState(2).normal(
        size=(3, 4))
    a.addmm_(tg.tensor(b), tg.tensor(c), beta=0.5, alpha=2.0)
    t.addmm_(torch.tensor(b), torch.tensor(c), beta=0.5, alpha=2.0)
    close(a, t.numpy(), 1e-12)
    a, t = tg.tensor([2.5, 3.0]), torch.tensor([2.5, 3.0])
    a.mvlgamma_(2), t.mvlgamma_(2)
    close(a, t.numpy(), 1e-6)
    # recorded: the gradient flows through the in-place update
    x = tg.tensor(X, requires_grad=True)
    tx = torch.tensor(X, requires_grad=True)
    y, ty = x * 2, tx * 2
    y.subtract_(tg.tensor(Y) * x), ty.subtract_(torch.tensor(Y) * tx)
    y.sum().backward(), ty.sum().backward()
    close(x.grad, tx.grad.numpy())


@needs_torch
@pytest.mark.parametrize("shape,wrap", [((3, 3), False), ((7, 3), True), ((7, 3), False),
                                        ((3, 5), True), ((3, 3, 3), False), ((0, 2), False)])
def test_fill_diagonal_against_torch(shape, wrap):
    a, t = tg.zeros(*shape), torch.zeros(*shape)
    assert a.fill_diagonal_(2.0, wrap) is a
    t.fill_diagonal_(2.0, wrap)
    close(a, t.numpy())


def test_fill_diagonal_errors_and_is_cpu():
    with pytest.raises(RuntimeError, match="larger than 1"):
        tg.zeros(3).fill_diagonal_(1.0)
    with pytest.raises(RuntimeError, match="equal length"):
        tg.zeros(2, 3, 3).fill_diagonal_(1.0)
    assert tg.zeros(2).is_cpu
