"""Tensor.unfold, masked_scatter(_), split_with_sizes, unique_consecutive,
Tensor.bernoulli(_), get_device: against PyTorch."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch


@needs_torch
@pytest.mark.parametrize('dim,size,step', [(2, 2, 1), (1, 2, 2), (-1, 4, 3), (0, 1, 1),
                                           (2, 3, 2)])
def test_unfold_values_and_gradient(dim, size, step):
    x = np.random.RandomState(0).randn(2, 3, 4)
    a, b = torch.tensor(x, requires_grad=True), tg.tensor(x, requires_grad=True)
    ya, yb = a.unfold(dim, size, step), b.unfold(dim, size, step)
    assert tuple(yb.shape) == tuple(ya.shape)
    np.testing.assert_array_equal(yb.detach().numpy(), ya.detach().numpy())
    w = np.random.RandomState(1).randn(*ya.shape)
    ya.backward(torch.tensor(w))
    yb.backward(tg.tensor(w))
    np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), atol=1e-12)


def test_unfold_errors_and_0d():
    assert tg.tensor(5.0).unfold(0, 1, 1).tolist() == [5.0]
    with pytest.raises(RuntimeError, match="maximum size"):
        tg.ones(3).unfold(0, 4, 1)
    with pytest.raises(RuntimeError, match="step"):
        tg.ones(3).unfold(0, 2, 0)
    with pytest.raises(IndexError):
        tg.ones(3).unfold(1, 1, 1)


@needs_torch
def test_masked_scatter():
    for mask in ([[True, False, True], [False, True, False]], [True, False, True]):
        want = torch.zeros(2, 3).masked_scatter(torch.tensor(mask), torch.arange(10., 16.))
        got = tg.zeros(2, 3).masked_scatter(tg.tensor(mask), tg.arange(10., 16.))
        assert got.tolist() == want.tolist()
    z = tg.zeros(2, 3)
    z.masked_scatter_(tg.tensor([[True, False, True], [False, True, False]]), tg.arange(10., 16.))
    assert z.tolist() == [[10.0, 0.0, 11.0], [0.0, 12.0, 0.0]]
    src = tg.arange(10., 16., requires_grad=True)
    tg.zeros(2, 3).masked_scatter(tg.tensor([True, False, True]), src).sum().backward()
    assert src.grad.tolist() == [1, 1, 1, 1, 0, 0]
    with pytest.raises(RuntimeError, match="at least 2 elements"):
        tg.zeros(2).masked_scatter(tg.tensor([True, True]), tg.ones(1))
    with pytest.raises(RuntimeError, match="boolean"):
        tg.zeros(2).masked_scatter(tg.tensor([1, 0]), tg.ones(2))


@needs_torch
def test_split_with_sizes_and_unique_consecutive():
    assert [t.tolist() for t in tg.arange(6).split_with_sizes([2, 4])] == [[0, 1], [2, 3, 4, 5]]
    with pytest.raises(RuntimeError, match="sum exactly"):
        tg.arange(6).split_with_sizes([2, 3])
    v = [1, 1, 2, 2, 3, 1, 1, 2]
    want = torch.unique_consecutive(torch.tensor(v), return_inverse=True, return_counts=True)
    got = tg.unique_consecutive(tg.tensor(v), return_inverse=True, return_counts=True)
    assert [t.tolist() for t in got] == [t.tolist() for t in want]
    m = [[1, 2], [1, 2], [3, 4]]
    want = torch.unique_consecutive(torch.tensor(m), dim=0, return_counts=True)
    got = tg.tensor(m).unique_consecutive(dim=0, return_counts=True)
    assert [t.tolist() for t in got] == [t.tolist() for t in want]


def test_bernoulli_method_and_device_queries():
    x = tg.full((1000,), 0.25)
    draws = x.bernoulli()
    assert draws.dtype == tg.float32 and 150 < draws.sum().item() < 350
    assert tg.zeros(3).bernoulli_(1.0).tolist() == [1.0, 1.0, 1.0]
    assert x.get_device() == -1 and x.is_inference() is False


@needs_torch
def test_scatters_combinations_mode():
    x = np.random.RandomState(0).randn(4, 5)
    outs = []
    for L in (torch, tg):
        X = L.tensor(x, requires_grad=True)
        S = L.tensor(np.ones((2, 5)), requires_grad=True)
        y = L.slice_scatter(X, S, 0, 1, 4, 2)
        y.sum().backward()
        D = L.zeros(3, 4)
        m = L.mode(L.tensor([[1, 2, 2, 3, 3], [5, 5, 1, 1, 0]]), 1)
        outs.append([y.detach().numpy().tolist(), X.grad.numpy().tolist(), S.grad.numpy().tolist(),
                     L.select_scatter(X.detach(), L.zeros(5, dtype=L.float64), 0, 2).tolist(),
                     L.diagonal_scatter(D, L.ones(3), 1).tolist(),
                     L.diagonal_scatter(D, L.ones(2), -1).tolist(),
                     L.combinations(L.tensor([1, 2, 3])).tolist(),
                     L.combinations(L.tensor([1., 2.]), 2, with_replacement=True).tolist(),
                     list(L.combinations(L.tensor([1, 2]), 3).shape),
                     m.values.tolist(), m.indices.tolist(),
                     list(L.tensor([[1, 2, 2]]).mode(keepdim=True).values.shape)])
    assert outs[1] == outs[0]
