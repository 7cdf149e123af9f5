"""unique(sorted=False) in PyTorch 1.13's CPU order (its hash set's
iteration order), with return_inverse / return_counts, over integer,
float (NaNs and signed zeros included) and bool inputs; sorted and dim
variants unchanged."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch


def _both(a, **kw):
    got = tg.unique(tg.tensor(a), **kw)
    want = torch.unique(torch.tensor(a), **kw)
    if not isinstance(got, tuple):
        got, want = (got,), (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert str(g.dtype).split('.')[-1] == str(w.dtype).split('.')[-1]
        np.testing.assert_array_equal(g.numpy(), w.numpy())


@needs_torch
@pytest.mark.parametrize('seed', range(6))
@pytest.mark.parametrize('kind', ['int64', 'negative', 'int32', 'uint8', 'float64', 'float32'])
def test_unsorted_order_inverse_counts(kind, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 3000))
    hi = int(rng.choice([3, 40, 1000, 10 ** 6]))
    a = {'int64': lambda: rng.integers(0, hi, n),
         'negative': lambda: rng.integers(-hi, hi, n),
         'int32': lambda: rng.integers(-hi, hi, n).astype(np.int32),
         'uint8': lambda: rng.integers(0, 256, n).astype(np.uint8),
         'float64': lambda: rng.integers(-hi, hi, n) / 8.0,
         'float32': lambda: (rng.integers(-hi, hi, n) / 8.0).astype(np.float32)}[kind]()
    _both(a, sorted=False)
    _both(a, sorted=False, return_inverse=True, return_counts=True)
    _both(a.reshape(1, -1), sorted=False, return_inverse=True)


@needs_torch
def test_unsorted_edges():
    _both(np.array([3, 1, 2, 3, 1, 5, 0, 2]), sorted=False, return_inverse=True,
          return_counts=True)
    _both(np.array([True, False, True]), sorted=False, return_inverse=True, return_counts=True)
    _both(np.array([0.0, -0.0, 1.5, -0.0]), sorted=False, return_counts=True)
    _both(np.zeros((0,), np.int64), sorted=False, return_inverse=True, return_counts=True)
    _both(np.array(5), sorted=False, return_inverse=True, return_counts=True)
    # NaNs: each its own element, counted 0, its inverse 0 (PyTorch's map lookups)
    _both(np.array([2.5, -1., 2.5, np.nan, 0., -1., np.nan]), sorted=False,
          return_inverse=True, return_counts=True)


@needs_torch
def test_sorted_and_dim_variants():
    a = np.array([[1, 2], [0, 1], [1, 2], [0, 0]])
    _both(a, sorted=True, return_inverse=True, return_counts=True)
    _both(a, dim=0, sorted=False, return_inverse=True, return_counts=True)
    _both(a, dim=1, return_inverse=True, return_counts=True)
