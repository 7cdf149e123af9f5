"""kthvalue as PyTorch's CPU kernel: NaN ordered above every number, and
among equal values (ties, several NaNs) the element its quickselect
leaves at k, values, indices and the gradient's position alike; the
named tuples' type names and printing as torch.return_types'."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch

SHAPES = [((3, 7), 1), ((5, 4, 6), 0), ((5, 4, 6), -1), ((40,), 0), ((2, 3, 50), 2),
          ((1,), 0), ((), 0)]


def _run(L, a, k, dim, keepdim):
    x = L.tensor(a, dtype=L.float64, requires_grad=True)
    v, i = L.kthvalue(x, k, dim, keepdim)
    (v * 1.5).sum().backward()
    return v.detach().numpy(), i.numpy(), x.grad.numpy()


@needs_torch
@pytest.mark.parametrize('shape,dim', SHAPES)
@pytest.mark.parametrize('keepdim', [False, True])
@pytest.mark.parametrize('seed', [0, 1, 2])
def test_kthvalue_with_ties_and_nans_as_torch(shape, dim, keepdim, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, shape).astype(float)
    if a.ndim:
        a[rng.random(shape) < 0.2] = np.nan
    n = a.shape[dim] if a.ndim else 1
    for k in sorted({1, n, (n + 1) // 2, max(1, n - 1)}):
        got, want = _run(tg, a, k, dim, keepdim), _run(torch, a, k, dim, keepdim)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
        np.testing.assert_array_equal(got[2], want[2])


@needs_torch
def test_kthvalue_rows_with_nan_documented_case():
    a = [[3., np.nan, 1., 2.], [np.nan, np.nan, 1., 0.], [5., 4., 3., 2.]]
    for k in range(1, 5):
        v, i = tg.kthvalue(tg.tensor(a), k, 1)
        tv, ti = torch.kthvalue(torch.tensor(a), k, 1)
        np.testing.assert_array_equal(v.numpy(), tv.numpy())
        assert i.tolist() == ti.tolist()


@needs_torch
def test_kthvalue_integer_ties():
    a = [[3, 1, 3, 2, 3], [5, 5, 5, 5, 5]]
    for k in range(1, 6):
        v, i = tg.kthvalue(tg.tensor(a), k, 1)
        tv, ti = torch.kthvalue(torch.tensor(a), k, 1)
        assert v.tolist() == tv.tolist() and i.tolist() == ti.tolist()


def test_return_type_names_and_repr():
    x = tg.tensor([[1., 2.], [3., 0.]])
    assert type(x.max(1)).__name__ == 'max' and type(x.min(0)).__name__ == 'min'
    assert type(tg.cummax(x, 0)).__name__ == 'cummax'
    assert repr(tg.kthvalue(x, 1, 1)) == ("tensorgraph.return_types.kthvalue(\n"
                                          "values=tensor([1., 0.]),\n"
                                          "indices=tensor([0, 1]))")
    v, i = x.max(1)
    assert v.tolist() == [2., 3.] and x.max(1).indices.tolist() == [1, 0]
