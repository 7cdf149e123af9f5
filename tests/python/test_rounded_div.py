"""torch.div's rounding modes and floor_divide (//): integers exactly in
their dtype, floats rounded as PyTorch rounds them, zero gradients, the
in-place forms and the errors. Against PyTorch where it is installed,
against Python's own integer and float arithmetic otherwise."""
import math

import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch

A_INT = [7, -7, 7, -7, 0, 2 ** 40 + 1, 5]
B_INT = [2, 2, -2, -2, 3, 1, -5]
A_FLT = [5.0, -5.0, 1.0, -0.5, 0.5, 7.5, 1e-300, 3.0]
B_FLT = [2.0, 2.0, 0.1, 2.0, -2.0, -2.5, 1.0, 1e300]


def test_integers_exact():
    a, b = tg.tensor(A_INT), tg.tensor(B_INT)
    assert (a // b).tolist() == [x // y for x, y in zip(A_INT, B_INT)]
    assert tg.div(a, b, rounding_mode='floor').tolist() == [x // y for x, y in zip(A_INT, B_INT)]
    assert tg.div(a, b, rounding_mode='trunc').tolist() == [
        int(x / y) if abs(x) < 2 ** 52 else x // y for x, y in zip(A_INT, B_INT)]
    assert (a // b).dtype == tg.int64
    small = tg.tensor([7, -7], dtype=tg.int32)
    assert (small // 2).dtype == tg.int32 and (small // 2).tolist() == [3, -4]


def test_floats_as_python():
    a, b = tg.tensor(A_FLT, dtype=tg.float64), tg.tensor(B_FLT, dtype=tg.float64)
    assert (a // b).tolist() == [x // y for x, y in zip(A_FLT, B_FLT)]
    assert tg.floor_divide(a, b).tolist() == [x // y for x, y in zip(A_FLT, B_FLT)]
    assert tg.div(a, b, rounding_mode='trunc').tolist() == [
        float(math.trunc(x / y)) for x, y in zip(A_FLT, B_FLT)]
    assert (tg.tensor([1.0]) // 0.1).tolist() == [9.0]


def test_methods_inplace_and_gradients():
    x = tg.tensor([5.0, -5.0])
    x.div_(2, rounding_mode='floor')
    assert x.tolist() == [2.0, -3.0]
    y = tg.tensor([5, -5])
    y.div_(2, rounding_mode='trunc')
    assert y.tolist() == [2, -2] and y.dtype == tg.int64
    assert tg.tensor([5, -5]).div(2, rounding_mode='floor').tolist() == [2, -3]
    assert tg.tensor([5, -5]).divide(2).tolist() == [2.5, -2.5]
    with pytest.raises(RuntimeError, match="can't be cast"):
        tg.tensor([5, -5]).div_(2)  # true division into an integer tensor
    a = tg.tensor([5.0, -5.0], requires_grad=True)
    b = tg.tensor([2.0, 3.0], requires_grad=True)
    (tg.div(a, b, rounding_mode='floor') + tg.div(a, b, rounding_mode='trunc')).sum().backward()
    assert a.grad.tolist() == [0.0, 0.0] and b.grad.tolist() == [0.0, 0.0]


def test_errors():
    with pytest.raises(RuntimeError, match="^ZeroDivisionError$"):  # PyTorch's type
        tg.tensor([5]) // 0
    with pytest.raises(RuntimeError, match="^ZeroDivisionError$"):
        tg.div(tg.tensor([5]), tg.tensor([0]), rounding_mode='trunc')
    with pytest.raises(RuntimeError, match="rounding_mode to be one of"):
        tg.div(tg.tensor([5.0]), 2, rounding_mode='round')
    inf = (tg.tensor([5.0, -5.0]) // 0.0).tolist()
    assert inf == [math.inf, -math.inf]


@needs_torch
@pytest.mark.parametrize("mode", [None, 'floor', 'trunc'])
@pytest.mark.parametrize("dtype", ['int32', 'int64', 'float32', 'float64'])
def test_against_torch(mode, dtype):
    rng = np.random.default_rng(5)
    if dtype.startswith('int'):
        a = rng.integers(-50, 50, 40).astype(dtype)
        b = rng.integers(1, 9, 40).astype(dtype) * rng.choice([-1, 1], 40).astype(dtype)
    else:
        a = (rng.standard_normal(40) * 10).astype(dtype)
        b = (rng.standard_normal(40) + 0.1).astype(dtype)
    got = tg.div(tg.tensor(a), tg.tensor(b), rounding_mode=mode)
    want = torch.div(torch.tensor(a), torch.tensor(b), rounding_mode=mode)
    assert str(got.dtype).split('.')[-1] == str(want.dtype).split('.')[-1]
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    if mode is not None:  # with a Python scalar divisor too
        np.testing.assert_array_equal(tg.div(tg.tensor(a), 3, rounding_mode=mode).numpy(),
                                      torch.div(torch.tensor(a), 3, rounding_mode=mode).numpy())
