"""Tensor.diagonal / torch.diagonal as PyTorch's: a view (writes through
it reach the tensor, strides and storage offset as PyTorch's), autograd
through in-place writes to it, and the errors for bad dims."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch

ARGS = [(), (1,), (-1,), (2, 1, 0), (-1, -1, 0), (0, 0, 2), (1, 2, 1), (7,), (-5,)]


def _pair(shape):
    a = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    return tg.tensor(a), torch.tensor(a)


@needs_torch
@pytest.mark.parametrize('args', ARGS)
def test_diagonal_layout_as_torch(args):
    shape = (3, 4) if len(args) < 2 else (3, 2, 4)
    a, b = _pair(shape)
    da, db = a.diagonal(*args), b.diagonal(*args)
    assert da.shape == tuple(db.shape)
    np.testing.assert_array_equal(da.numpy(), db.numpy())
    assert da.stride() == db.stride()
    if db.numel():
        assert da.storage_offset() == db.storage_offset()
    np.testing.assert_array_equal(tg.diagonal(a, *args).numpy(), torch.diagonal(b, *args).numpy())


@needs_torch
@pytest.mark.parametrize('write', ['mul_', 'fill_', 'setitem', 'add_'])
@pytest.mark.parametrize('offset', [0, 1, -1])
def test_write_through_diagonal(write, offset):
    a, b = _pair((3, 4))
    for m in (a, b):
        d = m.diagonal(offset)
        if write == 'mul_':
            d.mul_(3)
        elif write == 'fill_':
            d.fill_(0)
        elif write == 'setitem':
            d[0] = 5
        else:
            d.add_(d)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


@needs_torch
def test_write_through_transposed_and_batched_diagonal():
    a, b = _pair((2, 3, 4))
    for m in (a, b):
        m.transpose(0, 2).diagonal(1, 0, 1).mul_(-1)
        m.diagonal(0, -1, -2)[1] = 100
    np.testing.assert_array_equal(a.numpy(), b.numpy())


@needs_torch
@pytest.mark.parametrize('offset', [0, 1, -2])
def test_autograd_through_inplace_write_to_diagonal(offset):
    x = np.random.RandomState(3).uniform(-1, 1, (4, 3))
    grads = []
    for L in (tg, torch):
        p = L.tensor(x, requires_grad=True)
        y = p * 2
        y.diagonal(offset).mul_(p.diagonal(offset) + 1)
        z = (y * y).sum() + y.diagonal(offset).sum()
        z.backward()
        grads.append((z.item(), p.grad.numpy()))
    assert grads[0][0] == pytest.approx(grads[1][0])
    np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-12)


@needs_torch
def test_gradient_of_diagonal_of_strided_input():
    x = np.random.RandomState(4).uniform(-1, 1, (3, 5, 4))
    w = np.random.RandomState(5).uniform(-1, 1, (5, 3))
    grads = []
    for L in (tg, torch):
        p = L.tensor(x, requires_grad=True)
        d = p.permute(2, 1, 0).diagonal(-1, 0, 2)
        (d * L.tensor(w[:, :d.shape[1]])).sum().backward()
        grads.append(p.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1])


def test_diagonal_errors():
    with pytest.raises(IndexError):
        tg.ones(3).diagonal()
    with pytest.raises(RuntimeError, match="cannot be identical"):
        tg.ones(3, 3).diagonal(0, 0, 0)
    with pytest.raises(IndexError):
        tg.ones(3, 3).diagonal(0, 0, 2)
    assert tg.ones(3, 3).diagonal(5).shape == (0,)


def test_diagonal_in_a_traced_function():
    f = tg.function(lambda m: m.diagonal(1) * 2)
    m = tg.arange(12.).reshape(3, 4)
    np.testing.assert_array_equal(f(m).numpy(), [2., 12., 22.])
